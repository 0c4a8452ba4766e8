"""What edit_file remembers between calls of one Toolbox (bounded, thread-safe).

* Texts by sha256: the base and the result of every edit made through the
  Toolbox, within a character budget (least recently used go first).  A
  ``STALE`` refusal uses them to say *which lines* changed since the version
  the caller expected; a digest cannot be turned back into content, so when
  the expected version was never seen here the range is simply not given.
* Failed calls by (arguments, file digest): the same failing call sent again
  against the same content gets a sharper hint (anchors catalogue row 21).
* Edits made, by call (path and edits, whatever the digest or dryRun): the
  same call repeated is told it was already made, with where it landed.
* The bytes the last edit wrote, their sha256 and, when the quick step
  wrote them, what it knew of them as text: the next edit of a file that
  still holds exactly those bytes (an agent's edits follow one another)
  takes its base digest and those facts from there instead of hashing and
  scanning the file again.
* Paths whose file edit_file's plain step read and found in a form it
  does not edit (CRLF, a byte order mark, a NUL): their next edit goes to
  the general step at once rather than reading the file twice, until an
  edit of them is made the quick way again.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Iterable, Sequence
from hashlib import sha256
from typing import NamedTuple

__all__ = ["Applied", "CallKey", "EditMemory", "Keys", "KEY_TEXT", "TextFacts"]

TEXT_BUDGET = 8 * 1024 * 1024  # characters kept per Toolbox
FAILURES_KEPT = 256
NOT_PLAIN_KEPT = 256  # paths remembered as not plain (then forgotten at once)


class Applied(NamedTuple):
    """An edit made through this Toolbox: the file's digest it left and the
    lines ``(first, last)`` of its first change."""

    result_sha256: str
    lines: tuple[int, int]


#: a call as an edit: its path and edits (old, new, replaceAll), or their digest
CallKey = tuple[str, tuple[tuple[str, str, bool], ...]] | str
KEY_TEXT = 4096  # characters of edits kept as their own key (more: a digest)


def fields_digest(fields: Iterable[str | bool | None]) -> str:
    """The sha256 of ``fields``, each written as its kind, a text also as
    its length and its UTF-8 bytes (a lone surrogate too): one digest for
    one sequence and another for any other (no field's bytes can be read
    as another's), made from the texts as they are rather than from a
    ``repr`` (which escapes a text character by character)."""
    digest = sha256()
    for field in fields:
        if field is None:
            digest.update(b"n")
        elif field is True:
            digest.update(b"t")
        elif field is False:
            digest.update(b"f")
        else:
            data = field.encode("utf-8", "surrogatepass")
            digest.update(b"s%d:" % len(data))
            digest.update(data)
    return digest.hexdigest()


class Keys:
    """What one call is remembered by: as an edit (its path and edits:
    :meth:`call`) and as a failure (its arguments and the file's digest:
    :meth:`failure`), the digest of its edits' texts made at most once
    for both."""

    __slots__ = ("_edits", "_digest")

    def __init__(self, edits: Sequence[tuple[str, str, bool]]) -> None:
        self._edits = edits
        self._digest = ""

    def _edits_digest(self) -> str:
        if not self._digest:
            self._digest = fields_digest(field for edit in self._edits for field in edit)
        return self._digest

    def call(self, path: str) -> CallKey:
        """The call as an edit of the file at ``path``: its path and edits,
        themselves while they are small, else a digest of them."""
        edits = self._edits
        size = len(edits[0][0]) + len(edits[0][1]) if len(edits) == 1 else \
            sum(len(old) + len(new) for old, new, _ in edits)
        if size <= KEY_TEXT:
            return path, tuple(edits)
        return fields_digest((path, self._edits_digest()))

    def failure(self, path: str, multi: bool, expected: str | None, dry_run: bool,
                base_sha: str) -> str:
        """The call as a failure: its arguments as checked (the path as
        spelled, the edits and whether they came as ``edits``,
        expectedSha256, dryRun) and the file's digest ``base_sha``."""
        return fields_digest((path, multi, self._edits_digest(), expected, dry_run, base_sha))

#: a sha256 of no bytes yet, copied for each digest of a file read: a copy
#: skips the algorithm's look-up in OpenSSL that a new hash object makes
_EMPTY_SHA256 = sha256()

#: bytes edit_file's quick step takes as they are (UTF-8 text without a NUL,
#: a ``\r``, a byte order mark or many control characters) and the two
#: facts it works from: whether they are all ASCII, and how many control
#: characters their first ``HEAD`` bytes hold
TextFacts = tuple[bool, int]


class EditMemory:
    def __init__(self, budget: int = TEXT_BUDGET) -> None:  # one per Toolbox (ctx.store)
        self._lock = threading.Lock()
        self._budget = budget
        # texts by digest, or the UTF-8 bytes they are (decoded when recalled)
        self._texts: OrderedDict[str, str | bytes] = OrderedDict()
        self._size = 0
        self._failures: OrderedDict[str, int] = OrderedDict()
        self._applied: OrderedDict[CallKey, tuple[str, tuple[int, int]]] = OrderedDict()
        self._written: tuple[bytes, str, TextFacts | None] = (b"", sha256(b"").hexdigest(),
                                                                  None)
        self._not_plain: dict[str, None] = {}  # (one dict operation each: no lock)

    def plain_form(self, path: str) -> bool:
        """Whether the file at ``path`` may be in a form the plain step
        edits (it was not found otherwise since an edit of it was last made
        the quick way)."""
        return path not in self._not_plain

    def not_plain(self, path: str) -> None:
        """The plain step read the file at ``path`` and found it in a form
        it does not edit."""
        not_plain = self._not_plain
        if len(not_plain) >= NOT_PLAIN_KEPT:
            not_plain.clear()
        not_plain[path] = None

    def plain_again(self, path: str) -> None:
        """An edit of the file at ``path`` was made the quick way."""
        if self._not_plain:
            self._not_plain.pop(path, None)

    def digest(self, data: bytes) -> tuple[str, TextFacts | None]:
        """The sha256 of ``data`` and what the quick step knew of them:
        remembered when they are the bytes the last edit wrote (compared
        whole: equal bytes, equal digest and facts), else the digest
        computed and no facts."""
        written, digest, facts = self._written  # one tuple, replaced whole: no lock
        if data == written:
            return digest, facts
        made = _EMPTY_SHA256.copy()  # (see _EMPTY_SHA256)
        made.update(data)
        return made.hexdigest(), None

    def wrote(self, data: bytes, digest: str, facts: TextFacts | None = None) -> None:
        """Remember the bytes an edit wrote, their sha256 (``digest``) and
        what the quick step knew of them (``facts``), if they are at most
        as large as a text this memory keeps."""
        if len(data) <= self._budget // 4:
            self._written = (data, digest, facts)

    def _keep(self, sha: str, text: str | bytes) -> None:
        """Keep ``text`` by its digest (the lock held)."""
        if len(text) > self._budget // 4:
            return  # one large file would push out everything else
        if sha in self._texts:  # the same digest: the same text, now the latest
            self._texts.move_to_end(sha)
            return
        self._texts[sha] = text
        self._size += len(text)
        while self._size > self._budget:
            _, dropped = self._texts.popitem(last=False)
            self._size -= len(dropped)

    def made(self, call: CallKey, lines: tuple[int, int], base_sha: str, base: str | bytes,
             result_sha: str, result: str | bytes, wrote: bool = False,
             facts: TextFacts | None = None) -> None:
        """Remember an edit made: its base and its result (each a digest
        and its text), that ``call`` (its path and edits) was made, with
        the ``lines`` of its first change, under one taking of the lock;
        and, if it ``wrote`` the bytes ``result``, those (:meth:`wrote`)."""
        kept = len(result) <= self._budget // 4  # one large file would push out everything else
        if wrote and kept and isinstance(result, bytes):
            self._written = (result, result_sha, facts)
        with self._lock:
            texts = self._texts
            if base_sha in texts:  # the same digest: the same text, now the latest
                texts.move_to_end(base_sha)
            else:
                self._keep(base_sha, base)
            if result_sha in texts:
                texts.move_to_end(result_sha)
            elif kept:  # (what _keep does, its tests made above)
                texts[result_sha] = result
                self._size += len(result)
                while self._size > self._budget:
                    _, dropped = texts.popitem(last=False)
                    self._size -= len(dropped)
            applied = self._applied
            applied.pop(call, None)
            applied[call] = result_sha, lines  # an Applied when looked up
            if len(applied) > FAILURES_KEPT:
                applied.popitem(last=False)

    def recall(self, sha: str) -> str | None:
        """The text whose sha256 is ``sha`` or starts with it (a short digest)."""
        with self._lock:
            if sha not in self._texts and len(sha) < 64:
                sha = next((full for full in self._texts if full.startswith(sha)), sha)
            text = self._texts.get(sha)
            if text is None:
                return None
            self._texts.move_to_end(sha)
        return text.decode("utf-8") if isinstance(text, bytes) else text

    def has_failures(self) -> bool:
        """Whether any failed call is remembered."""
        return bool(self._failures)

    def failures(self, key: str) -> int:
        """How often call ``key`` failed so far."""
        with self._lock:
            return self._failures.get(key, 0)

    def failed(self, key: str) -> int:
        """Record a failure of call ``key``; returns how often it failed before."""
        with self._lock:
            before = self._failures.pop(key, 0)
            self._failures[key] = before + 1
            while len(self._failures) > FAILURES_KEPT:
                self._failures.popitem(last=False)
            return before

    def succeeded(self, key: str) -> None:
        with self._lock:
            self._failures.pop(key, None)

    def earlier(self, call: CallKey) -> Applied | None:
        with self._lock:
            found = self._applied.get(call)
        return None if found is None else Applied(*found)
