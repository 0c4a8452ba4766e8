"""edit_file: replace text in one existing file, in one call.

The read, the occurrence count, the construction of the new content and the
write all happen under the per-path lock, so concurrent edits of different
snippets of one file never lose one another.  The host is asked (an
:class:`EditRequest` with both digests, the count and the diff) before
anything is written; afterwards the file's identity *and* content are
checked again, so a swap or a change during authorization fails closed.
The write is atomic (temporary file, fsync, rename in the pinned directory)
and keeps the permission bits.

Decisions a host can rely on:

* **Bytes the model cannot see survive.**  The UTF-8 BOM, every untouched
  line's own terminator (CRLF, CR, LF, mixed), tabs, and a missing final
  newline.  newText's line breaks are written in the style of the line they
  land in, so an LF newText goes into a CRLF file as CRLF.
* **Matching** is exact first (line endings normalized, reported as
  ``line_endings``), then ignoring trailing whitespace, then indentation
  (newText re-indented the same way); a tolerant match is applied only when
  it is unique and the result says ``matchStrategy``.  See
  :mod:`corral.tools._edit.match`.
* **A final symlink** is followed when it stays inside the root (the core
  refuses one leading out).  Authorization names the file actually changed,
  its real root-relative path, and the result gives it as ``resolvedPath``.
* **Empty oldText** is accepted only for an empty file (no bytes, or only a
  BOM): newText becomes its content.  edit_file never creates a file; a
  missing path is ``NOT_FOUND`` from the boundary (with ``didYouMean``), and
  when oldText was empty and no close name exists its hint names write_file.
* **expectedSha256** that does not match is ``STALE`` with both digests.
  The changed lines are given when the expected version's text is known to
  this Toolbox (it was the base or result of an edit made through it, kept
  in a bounded cache); otherwise they are left out: a digest cannot be
  turned back into content, and a guess would mislead.
* **Hard links** are refused unless the Toolbox allows them; then the edited
  name gets a new inode (atomic replace) and the other names keep the old
  content: an edit never writes through a link.
* A failing call repeated unchanged against the same content gets a hint
  saying so (``details.repeated``); the same call repeated after it was
  made is told so (``already_applied``).
* **Bounded**: matching, diagnosis and the diff are linear (or ``n log n``)
  in the file and the arguments, with caps proportional to them; past a cap
  the answer is coarser and says so (``details.limited``, ``diffComplete:
  false``).  The call's deadline and cancellation are checked in every
  loop, and only before anything is written.
"""

from __future__ import annotations

import json
import os
from hashlib import sha256
import posixpath
import stat as st
from dataclasses import dataclass
from typing import Any, Literal, NotRequired, TypedDict

from ...contained import PathError
from .._read import cache as read_cache
from .._refusals.locator import close_paths
from .._runtime.context import PlainCall, ToolContext, clean_path, sha256_hex
from .._edit.budget import Work
from .._edit.digest import EXPECTED_DIGEST, digest_matches, expected_digest
from .._edit.diff import (Diff, block_diff_of_bytes, changed_lines, one_line_diff_of_bytes,
                          unified_diff, window_diff)
from .._edit.failures import (Attempt, Memory, ambiguous, applied_inside, empty_old_text,
                              missing_old_text, numbered_new_text, placeholder_in_new_text,
                              refusal, too_many, unclear_indentation)
from .._edit.match import (MAX_LISTED, has_space_indented_line, normalize_breaks, search,
                           tab_indented)
from .._edit.spans import Region, Span, apply_regions, compose, remap
from .._edit.state import KEY_TEXT, Applied, CallKey, EditMemory, Keys, TextFacts
from .._edit.text import Lines, Undecodable, decode, encode
from .._read.textform import HEAD, controls
from .._policy.rules import Op
from .._refusals.catalogue import (Code, Kind, Refusal, binary_file, directory_given,
                                   file_too_large, invalid_argument, not_found, sha256_mismatch,
                                   swapped)
from .._runtime.registry import Suggests, ToolSpec, success_schema
from .._runtime.request_types import EditRequest, ReadRequest
from .._runtime.schema import cut_off
from .._runtime.answer import AnswerPath
from .._runtime.answer import sentence_path as _said
from .._runtime.view import Pinned, edit_plain

DESCRIPTION = (
    "Replace text in a file. oldText is copied exactly from the file (indentation included,"
    " without read_file's margin) and must occur once: add neighbouring lines to make it "
    "unique, or pass replaceAll: true. newText replaces it (\"\" deletes). Several changes: "
    "edits: [{oldText, newText}], in order, all or nothing. dryRun: true only shows the "
    "diff. The answer gives the lines changed and the new sha256 (for expectedSha256; no "
    "need to read the file back)."
)

_TEXT_LIMIT = 16 * 1024 * 1024
_EDIT_ITEM: dict[str, Any] = {
    "type": "object",
    "properties": {
        "oldText": {"type": "string", "maxLength": _TEXT_LIMIT},
        "newText": {"type": "string", "maxLength": _TEXT_LIMIT},
        "replaceAll": {"type": "boolean", "default": False},
    },
    "required": ["oldText", "newText"],
    "additionalProperties": False,
}
SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "path": {"type": "string", "minLength": 1, "maxLength": 4096},
        "oldText": {"type": "string", "maxLength": _TEXT_LIMIT},
        "newText": {"type": "string", "maxLength": _TEXT_LIMIT},
        "replaceAll": {"type": "boolean", "default": False},
        "expectedSha256": EXPECTED_DIGEST,
        "dryRun": {"type": "boolean", "default": False},
        "edits": {"type": "array", "minItems": 1, "maxItems": 100, "items": _EDIT_ITEM},
    },
    "required": ["path"],
    "additionalProperties": False,
}

MAX_REPLACEMENTS = 100_000  # in one call, all edits together
_SIBLING_FILES = 32  # files looked at for "oldText is in another file"
_SIBLING_BYTES = 256 * 1024

Edit = tuple[str, str, bool]  # oldText, newText, replaceAll


def _invalid(field: str, problem: str, hint: str) -> Refusal:
    return invalid_argument("edit_file", field, problem, hint)


def _edits(args: dict[str, Any]) -> tuple[list[Edit], bool]:
    """The edits of a call and whether it used the ``edits`` form."""
    edits = args.get("edits")
    old, new = args.get("oldText"), args.get("newText")
    if edits is None and old is not None and new is not None:  # the commonest call
        if old == new:
            raise _no_change(0, False)
        return [(old, new, args["replaceAll"])], False
    if edits is not None:
        if old is not None or new is not None:
            field = "oldText" if old is not None else "newText"
            raise _invalid(field, "cannot be combined with 'edits'",
                           "Put every change in edits, or pass one oldText/newText pair "
                           "without edits.")
        if args.get("replaceAll"):
            raise _invalid("replaceAll", "applies to oldText, not to 'edits'",
                           "Set replaceAll inside each item of edits instead.")
        items = [(e["oldText"], e["newText"], e["replaceAll"]) for e in edits]
    elif old is None:
        raise _invalid("oldText", "is required (or pass 'edits')",
                       "Pass oldText (the exact text to replace) and newText.")
    elif new is None:  # oldText came and newText did not: the call was cut off
        raise cut_off("edit_file", "argument 'newText' is missing after oldText",
                      {"field": "newText", "path": args["path"]})
    else:
        items = [(old, new, args["replaceAll"])]
    multi = edits is not None
    for i, (old, new, _) in enumerate(items):
        if old == new:
            raise _no_change(i, multi)
    return items, multi


def _no_change(i: int, multi: bool) -> Refusal:
    """The refusal of an edit whose oldText and newText are the same."""
    field = f"edits[{i}].newText" if multi else "newText"
    return Refusal(Code.INVALID_ARGUMENT, f"{_label(i, multi)}oldText and newText are the "
                   "same, so the edit would change nothing",
                   "Pass the changed text in newText; if the file is already right, no "
                   "edit is needed.", details={"field": field}, kind=Kind.NO_CHANGE)


def _label(i: int, multi: bool) -> str:
    return f"edits[{i}]: " if multi else ""


class Resolved(TypedDict):
    resolvedPath: NotRequired[str]  # where a symlink led


class Digests(TypedDict):
    sha256: str  # the file now (unchanged by a dry run)
    resultSha256: NotRequired[str]  # a dry run: what it would be
    dryRun: NotRequired[Literal[True]]


class EditItem(TypedDict):
    replacements: int
    lines: list[list[int]]  # [first, last] line of each change
    linesTruncated: NotRequired[Literal[True]]
    matchStrategy: NotRequired[str]


class Changes(TypedDict):
    """One edit's lines (and how it matched), or each edit's."""

    lines: NotRequired[list[list[int]]]
    linesTruncated: NotRequired[Literal[True]]
    matchStrategy: NotRequired[str]
    edits: NotRequired[list[EditItem]]


class Diffed(TypedDict):
    diff: str
    diffTruncated: NotRequired[Literal[True]]
    diffComplete: NotRequired[Literal[False]]


class FileStyle(TypedDict):
    lineEndings: NotRequired[str]
    encoding: NotRequired[str]  # a UTF-16/UTF-32 file's encoding
    bom: NotRequired[Literal[True]]
    warnings: NotRequired[list[str]]


class EditResult(Resolved, Digests, Changes, Diffed, FileStyle):
    path: str
    baseSha256: str
    replacements: int


def run(ctx: ToolContext, args: dict[str, Any]) -> EditResult:
    edits, multi = _edits(args)
    expected = expected_digest(args)
    rel = ctx.rel(args["path"])
    if len(edits) == 1 and not args["dryRun"] and not ctx.hears_requests and \
            not ctx.tried_plain and _may_be_quick(edits[0]):
        memory = ctx.store(EditMemory)
        if memory.plain_form(rel):
            done = _edit_plain(ctx, rel, edits, multi, expected, args, memory)
            if done is not None:
                return done
    try:
        # one step: resolved once (a final in-root link followed), decided,
        # read, asked about, re-checked and written on what was pinned
        with ctx.view.pin(rel, Op.EDIT, follow=True) as pinned:
            return _edit(ctx, pinned, rel, edits, multi, expected, args)
    except FileNotFoundError as exc:
        if exc.filename != rel or any(old for old, _, _ in edits):
            raise
        raise _to_create(ctx, rel, exc) from None


def _to_create(ctx: ToolContext, rel: str, exc: FileNotFoundError) -> Refusal:
    """An empty oldText on a missing file: the model wants to create it."""
    missing = str((exc.component if isinstance(exc, PathError) else None) or rel)
    hidden = ctx.hidden(missing, rel, "path")
    if hidden is not None:
        return hidden  # a denied name is never said to be missing
    candidates = close_paths(rel, missing, ctx.view)
    parent = posixpath.dirname(missing.rstrip("/")) or "."
    if candidates:
        return not_found(rel, missing, field="path", did_you_mean=candidates,
                         suggest=("read_file", {"path": candidates[0]}))
    return not_found(rel, missing, field="path",
                     hint=f"Create {_said(rel)} with write_file; edit_file changes existing files.",
                     suggest=None if ctx.is_denied(parent) else ("list_directory",
                                                                 {"path": parent}))


def run_plain(call: PlainCall, args: dict[str, Any]) -> EditResult | None:
    """:func:`run` of the commonest call, for a call nothing else hears
    (``ToolSpec.plain``): one edit (no ``edits`` list, no ``replaceAll``,
    not a dry run) that :func:`_may_be_quick` takes, of a clean path; made
    by :func:`_edit_plain` in the view's plain step.  ``None`` for any
    other call (nothing done), or where that step does not make it (what
    changed taken in: ``call.readied``)."""
    old, new = args.get("oldText"), args.get("newText")
    if old is None or new is None or args["dryRun"] or args["replaceAll"] or "edits" in args:
        return None  # as run() says it, or makes it
    rel: str = args["path"]
    # _may_be_quick's look (replaceAll is not set), written out
    if not old or "\r" in old or "\r" in new or old in new or not clean_path(rel, call.limits):
        return None
    memory = call.store(EditMemory)
    if not memory.plain_form(rel):
        return None
    call.ready()
    expected = args.get("expectedSha256")  # (expected_digest, without its call)
    return _edit_plain(call, rel, [(old, new, False)], False,
                       None if expected is None else str(expected).lower(), args, memory)


def _edit_plain(ctx: ToolContext | PlainCall, rel: str, edits: list[Edit], multi: bool,
                expected: str | None, args: dict[str, Any],
                memory: EditMemory) -> EditResult | None:
    """The commonest edit, made in the view's plain step
    (:meth:`CallView.edit_plain`; for a plain run, :func:`edit_plain`): one
    exact edit of a plain UTF-8 file no one is asked about, read, matched,
    answered and written as :func:`_quick` makes it in the general step,
    with the same locks, decisions and atomic replace.  ``None``, nothing
    written, where it is not such an edit (a file with other links, one
    over the limit, one the quick step does not take): the caller takes the
    general step (at once for the next edit of a file found in a form the
    quick step does not take, until an edit of it is made the quick way)."""
    made: list[tuple[_Quick, str, bytes]] = []

    def prepare(info: os.stat_result, data: bytes) -> bytes | None:
        base_sha, facts = memory.digest(data)
        # no Work yet: the read's steps are counted if a diff of lines needs one
        quick = _quick(ctx, rel, rel, data, edits, multi, expected, base_sha, facts, memory,
                       args, None)
        if quick is None:
            if data[:1] in _ODD_FIRST or 13 in data or 0 in data:  # (\r, NUL: ints, see _quick)
                memory.not_plain(rel)
            return None
        # no one hears of it: the lock was held throughout
        ctx.checkpoint()  # the last one: stopped now, nothing is written
        read_cache.forget(info.st_dev, info.st_ino)  # read_file's digest of it
        made.append((quick, base_sha, data))
        return quick[1]  # written on the condition that the name holds the file read

    limit = ctx.limits.max_edit_file_bytes
    if not (edit_plain(ctx.view, ctx.checkpoint, rel, limit, prepare)
            if isinstance(ctx, PlainCall) else ctx.view.edit_plain(rel, limit, prepare)):
        return None
    (result, new_data, key, lines, facts), base_sha, data = made[0]
    memory.made(key, lines, base_sha, data, result["sha256"], new_data, True, facts)
    return result


# -- reading ------------------------------------------------------------------------


def _read(ctx: ToolContext, pinned: Pinned, rel: str, work: Work | None,
          expect: os.stat_result | None = None) -> tuple[bytes, os.stat_result]:
    """The whole file and its identity, refusing what edit_file does not
    edit.  Without ``work`` no checkpoint is run (the re-read after
    authorization must not stop halfway to the write)."""
    limit = ctx.limits.max_edit_file_bytes

    def usable(info: os.stat_result) -> None:
        if st.S_ISDIR(info.st_mode):
            raise directory_given(rel.rstrip("/") or ".", "edit_file")
        ctx.check_hardlink(rel, info)
        if info.st_size > limit:
            raise file_too_large(rel, info.st_size, limit, "edit_file")

    data, info = pinned.read(limit, expect=expect, check=usable,
                             step=None if work is None else work.read)
    if len(data) > limit:
        raise file_too_large(rel, len(data), limit, "edit_file")
    return data, info


# -- the edit -----------------------------------------------------------------------


@dataclass(slots=True, eq=False)
class _Call:
    """One call: its edits, what the Toolbox remembers of it, and its work."""

    rel: str
    path: str  # where the file really is
    edits: list[Edit]
    multi: bool
    work: Work
    repeated: int = 0
    base_sha: str = ""
    memory: EditMemory | None = None
    key: CallKey = ""  # the call as an edit, by which the memory knows it

    def earlier(self) -> Applied | None:
        """This call as made before through the Toolbox (looked up only to
        explain an oldText that is not found)."""
        return None if self.memory is None else self.memory.earlier(self.key)

    def attempt(self, i: int) -> Attempt:
        old, new, replace_all = self.edits[i]
        return Attempt(self.rel, i, self.multi, old, new, replace_all, self.repeated)


def _failure_key(keys: Keys, args: dict[str, Any], multi: bool, base_sha: str) -> str:
    """The call as a failure (:meth:`Keys.failure`): its arguments as
    checked and the file's digest."""
    return keys.failure(args["path"], multi, expected_digest(args), bool(args["dryRun"]),
                        base_sha)


def _edit(ctx: ToolContext, pinned: Pinned, rel: str, edits: list[Edit], multi: bool,
          expected: str | None, args: dict[str, Any]) -> EditResult:
    work = Work(ctx.checkpoint)
    data, info = _read(ctx, pinned, rel, work)
    real = pinned.path  # where the file really is (a final in-root link followed)
    memory = ctx.store(EditMemory)
    base_sha, facts = memory.digest(data)
    if len(edits) == 1 and not args["dryRun"] and _may_be_quick(edits[0]):
        quick = _quick(ctx, rel, real, data, edits, multi, expected, base_sha, facts, memory,
                       args, work)
        if quick is not None:
            return _write_quick(ctx, pinned, rel, real, data, info, base_sha, quick, memory)
    keys = Keys(edits)
    call_key = keys.call(real)
    call = _Call(rel, real, edits, multi, work, 0, base_sha, memory, call_key)
    # the failure key is made only when a failure is remembered, or one happens
    failure_key = _failure_key(keys, args, multi, base_sha) if memory.has_failures() else None
    if failure_key is not None:
        call.repeated = memory.failures(failure_key)
    try:
        if expected is not None and not digest_matches(expected, base_sha):
            raise _stale(ctx, rel, expected, base_sha, data, work)
        try:
            decoded = decode(data)
        except Undecodable as exc:
            raise _undecodable(rel, exc, len(data)) from None
        outcome = _apply(ctx, call, decoded.text)
        _check_notebook(call, decoded.text, outcome)
        new_data = encode(outcome.text, decoded.bom, decoded.encoding)
        if len(new_data) > ctx.limits.max_write_bytes:
            raise _result_too_large(call, len(new_data), ctx.limits.max_write_bytes, "")
        if new_data == data:
            raise refusal(call.repeated, Code.INVALID_ARGUMENT, f"the edits leave {_said(rel)} "
                                                                f"unchanged",
                          "Check newText: it must differ from the file's text; if the file is "
                          "already right, no edit is needed.", kind=Kind.NO_CHANGE,
                          details={"path": rel})
        diff = unified_diff(rel, outcome.base, outcome.lines, outcome.spans, work)
    except Refusal as refused:
        if refused.kind not in (Kind.TIME_LIMIT, Kind.CANCELLED):  # stopped is not failed
            memory.failed(failure_key or _failure_key(keys, args, multi, base_sha))
        raise
    if failure_key is not None:  # a failure of this call is forgotten once it succeeds
        memory.succeeded(failure_key)
    new_sha = sha256(new_data).hexdigest()
    dry = bool(args["dryRun"])
    if ctx.hears_requests:  # otherwise nothing would read the request: it is not made
        ctx.view.ask(EditRequest(real, base_sha256=base_sha, result_sha256=new_sha,
                                 result_bytes=len(new_data), replacements=outcome.replacements,
                                 diff=diff.text, dry_run=dry), pinned)
    if not dry:
        # looked at again only after a host question: otherwise the lock was held
        # throughout, and the write checks right before its rename that the file
        # replaced is the one read
        if ctx.asks_host:
            pinned.same(info)
            if sha256_hex(_read(ctx, pinned, rel, None, info)[0]) != base_sha:
                raise swapped(rel)
        ctx.checkpoint()  # the last one: stopped now, nothing is written
        # from here on nothing may stop the call: the file is being written
        read_cache.forget(info.st_dev, info.st_ino)  # read_file's digest of it
        pinned.write(new_data, exclusive=False, expect=info)
        memory.wrote(new_data, new_sha)
    result = _result(ctx, rel, real, base_sha, new_sha, outcome, diff, dry, decoded.bom,
                     multi)
    if decoded.encoding:
        result["encoding"] = decoded.encoding
    if not dry:
        memory.made(call_key, _first_change(result), base_sha, decoded.text, new_sha,
                    outcome.text)
    return result


# first bytes of a file decode() reads otherwise than as plain UTF-8 (a byte
# order mark; a NUL): such a file takes the general path
_ODD_FIRST = frozenset((b"\xef", b"\xff", b"\xfe", b"\x00"))


#: a sha256 of no bytes yet, copied for each digest the quick step makes: a
#: copy skips the algorithm's look-up in OpenSSL that a new hash object
#: makes (about 1 µs of an edit's call, measured in the call)
_EMPTY_SHA256 = sha256()


def _may_be_quick(edit: Edit) -> bool:
    """Whether :func:`_quick` may make the call of ``edit`` (its file not
    looked at yet)."""
    old, new, replace_all = edit
    return not replace_all and bool(old) and "\r" not in old and "\r" not in new and \
        old not in new


#: what :func:`_quick` made of a call, to be written: the answer, the bytes
#: to write, and what the memory keeps of it (the call's key, the lines of
#: its change, what is known of the bytes)
_Quick = tuple[EditResult, bytes, CallKey, tuple[int, int], TextFacts | None]


def _quick(ctx: ToolContext | PlainCall, rel: str, real: str, data: bytes, edits: list[Edit],
           multi: bool, expected: str | None, base_sha: str, facts: TextFacts | None,
           memory: EditMemory, args: dict[str, Any], work: Work | None) -> _Quick | None:
    """The commonest call made whole, all but its write: one exact edit
    (not a dry run; alone or the one item of ``edits``) that
    :func:`_may_be_quick` takes, whose oldText occurs once in a UTF-8 text
    without ``\\r`` or a BOM (``data``, the file read), answered as the
    general path answers it (which a property test holds it to), for the
    step that read it to write (:func:`_write_quick`, or the plain step's).
    ``None``, with nothing done, for any other call or anything the
    general path would refuse or say more of: that path then runs on what
    was read.  ``facts``: what this step knew of the bytes when it wrote
    them (the last edit's), so they are not scanned again.  ``work``: the
    general step's, or ``None`` (the plain step's read is counted on one
    made here when a diff of lines needs it)."""
    old, new, _ = edits[0]
    if (expected is not None and not digest_matches(expected, base_sha)) \
            or (real[-6:-5] == "." and real[-5:].lower() == "ipynb"):
        return None
    size = len(data)
    text: str | None = None  # decoded only to know it is UTF-8, or when needed
    if facts is None:
        # a NUL, a \r: looked for as ints (a one-byte bytes needle is first
        # tried as an int by bytes.__contains__, raising and dropping a TypeError)
        if data[:1] in _ODD_FIRST or 0 in data or 13 in data:
            return None
        head_controls = controls(data[:HEAD])
        if head_controls * 10 > min(size, HEAD):
            return None
        ascii_text = data.isascii()
        if not ascii_text:
            try:
                text = data.decode("utf-8")  # it is UTF-8, as the general path requires
            except UnicodeError:
                return None
    else:
        ascii_text, head_controls = facts
    # found, cut and counted in the bytes: UTF-8 text and oldText match in
    # its bytes where they match in its characters (a character's bytes never
    # start inside another's), and a text that is not all ASCII is slow to
    # search, cut and encode as characters
    try:
        old_b, new_b = old.encode(), new.encode()  # (UTF-8, strict)
    except UnicodeError:
        return None
    # oldText looked for in the whole file (once, and not again after it)
    if size <= _FOUND_IN_C:  # by bytes.find as fast as a call to C takes
        at = data.find(old_b)
        if at < 0:
            return None
        end = at + len(old_b)
        if data.find(old_b, end) >= 0:
            return None
    else:  # by the backend: in C (memmem), three to thirteen times faster on source text
        find = ctx.view.backend.find
        at = find(data, old_b, 0)
        if at < 0:
            return None
        end = at + len(old_b)
        if find(data, old_b, end) >= 0:
            return None
    new_data = data[:at] + new_b + data[end:]
    limits = ctx.limits
    if len(new_data) > limits.max_write_bytes:  # (its characters are fewer)
        return None
    start = data.rfind(b"\n", 0, at) + 1
    line = data.count(b"\n", 0, start)  # the change's first line (0-based), before and after
    # what the warnings (an escaped break, an indented line), the placeholder
    # check and the line-number check look for first, by a few scans in C
    warned = "\\" in new or new[:1] in (" ", "\t") or "\n " in new or "\n\t" in new
    base: Lines | None = None
    if warned or "..." in new or "…" in new or "\t" in new:
        base = Lines(data.decode("utf-8") if text is None else text)
        attempt = Attempt(rel, 0, multi, old, new, False, 0)
        if placeholder_in_new_text(attempt, base) or numbered_new_text(attempt, base, line + 1):
            return None
    first = last = line + 1  # the change's lines in the new text (1-based)
    if "\n" not in old and "\n" not in new:
        shown = one_line_diff_of_bytes(rel, data, new_data, start, line, end)
    else:  # lines changed whole, or a change across lines
        last += new.count("\n", 0, len(new) - 1)  # the line of newText's last character
        shown = block_diff_of_bytes(rel, data, new_data, start, line, end, at + len(new_b))
    if shown is None:
        if work is None:
            work = Work(ctx.checkpoint)
            work.read(size)
        if ascii_text and size <= _WHOLE:  # its bytes are its characters (newText's need not be)
            shown = window_diff(rel, data.decode("ascii"), new_data.decode("utf-8"), at, end,
                                at + len(new), work, 0)
        else:
            shown = _window_diff(rel, data, new_data, at, end, line, start, len(old), len(new),
                                 work)
    if shown is None or len(shown) > limits.read_bytes:
        return None
    # made: what the general path does on success, in its order
    keys: Keys | None = None  # made where a key needs a digest of the edits
    if memory.has_failures():  # a failure of this call is forgotten once it succeeds
        keys = Keys(edits)
        memory.succeeded(_failure_key(keys, args, multi, base_sha))
    digest = _EMPTY_SHA256.copy()  # (see _EMPTY_SHA256)
    digest.update(new_data)
    new_sha = digest.hexdigest()
    # the answer, and what is remembered of the edit, made before the write,
    # so that after its fsync only the rename and the bookkeeping run
    result: EditResult = {"path": rel, "baseSha256": base_sha, "sha256": new_sha,
                          "replacements": 1, "lines": [[first, last]], "diff": shown}
    if real != rel or multi:  # the general answer's fields, in its order
        resolved: Resolved = {"resolvedPath": AnswerPath(real)} if real != rel else {}
        changes: Changes = ({"edits": [{"replacements": 1, "lines": [[first, last]]}]}
                            if multi else {"lines": [[first, last]]})
        digests: Digests = {"sha256": new_sha}
        diffed: Diffed = {"diff": shown}
        style: FileStyle = {}
        result = {"path": rel, **resolved, "baseSha256": base_sha, **digests, "replacements": 1,
                  **changes, **diffed, **style}
    if warned and base is not None:  # (a warned newText made base above)
        found = _warnings(Attempt(rel, 0, multi, old, new, False, 0), base, "exact")
        if found:
            result["warnings"] = found
    # the texts kept as the bytes they are (decoded if ever recalled), and
    # what this step knows of the bytes written, for the next edit of them
    key = (real, (edits[0],)) if len(old) + len(new) <= KEY_TEXT else \
        (keys or Keys(edits)).call(real)
    if at >= HEAD:  # _facts_after's commonest answer, without its call: the head is unchanged
        return result, new_data, key, (first, last), \
            None if "\x00" in new else (ascii_text and new.isascii(), head_controls)
    return result, new_data, key, (first, last), \
        _facts_after(data, new_data, at, old_b, new, new_b, ascii_text, head_controls)


def _write_quick(ctx: ToolContext, pinned: Pinned, rel: str, real: str, data: bytes,
                 info: os.stat_result, base_sha: str, quick: _Quick,
                 memory: EditMemory) -> EditResult:
    """Write what :func:`_quick` made of the call in the general step's
    pin (the file read: ``data``, its ``fstat`` ``info``), as the general
    path writes: the host asked (where one hears), the file looked at
    again after a question, then replaced on the identity read."""
    result, new_data, key, lines, facts = quick
    new_sha = result["sha256"]
    if ctx.hears_requests:  # otherwise nothing would read the request: it is not made
        ctx.view.ask(EditRequest(real, base_sha256=base_sha, result_sha256=new_sha,
                                 result_bytes=len(new_data), replacements=1,
                                 diff=result["diff"], dry_run=False), pinned)
    if ctx.asks_host:  # the lock was held throughout otherwise
        pinned.same(info)
        if sha256(_read(ctx, pinned, rel, None, info)[0]).hexdigest() != base_sha:
            raise swapped(rel)
    ctx.checkpoint()  # the last one: stopped now, nothing is written
    # from here on nothing may stop the call: the file is being written
    read_cache.forget(info.st_dev, info.st_ino)  # read_file's digest of it
    pinned.write(new_data, exclusive=False, expect=info)
    memory.made(key, lines, base_sha, data, new_sha, new_data, True, facts)
    memory.plain_again(rel)
    return result


def _facts_after(data: bytes, new_data: bytes, at: int, old_b: bytes, new: str, new_b: bytes,
                 ascii_text: bool, head_controls: int) -> TextFacts | None:
    """What the quick step knows of ``new_data`` (``data`` with ``old_b`` at
    ``at`` become ``new_b``, from ``new``) from what it knew of ``data``,
    without scanning it: ``None`` when a fact would take a scan, or the
    quick step would not take the bytes (a NUL, a byte order mark, many
    control characters: the next edit then looks at them itself)."""
    if at >= HEAD:  # the head is unchanged (and was taken: its first byte, its controls)
        if "\x00" in new:
            return None
        return ascii_text and new.isascii(), head_controls
    size = len(new_data)
    if len(data) > HEAD or size > HEAD:
        return None
    # the head is the whole text (oldText is in it: none of its bytes are
    # control characters if none are); a NUL is one
    added = controls(new_b)
    now = (head_controls and head_controls - controls(old_b)) + added
    if now * 10 > size or (added and "\x00" in new) or (not at and new_data[:1] in _ODD_FIRST):
        return None
    return ascii_text and new.isascii(), now


_WHOLE = 64 * 1024  # bytes of an ASCII file diffed as a whole (a larger one: a window)
_FOUND_IN_C = 4096  # bytes of a file from which oldText is looked for by the backend


def _window_diff(rel: str, data: bytes, new_data: bytes, at: int, end: int, line: int,
                 start: int, old_chars: int, new_chars: int, work: Work) -> str | None:
    """The diff of ``data[at:end]`` become what ``new_data`` holds there
    (``line``: the change's first line, 0-based, starting at ``start``),
    made on the lines around it only, decoded alone: from three lines
    before the change to three after (or the ends)."""
    above = line if line < 3 else 3
    for _ in range(above):
        start = data.rfind(b"\n", 0, start - 1) + 1
    stop, size = end, len(data)
    for _ in range(4):  # the end of the change's last line, and three lines more
        if stop >= size:
            break
        stop = data.find(b"\n", stop) + 1 or size
    before = data[start:stop].decode("utf-8")
    after = new_data[start:stop + len(new_data) - size].decode("utf-8")
    at_w = len(data[start:at].decode("utf-8"))
    return window_diff(rel, before, after, at_w, at_w + old_chars, at_w + new_chars, work,
                       line - above)


def _first_change(result: EditResult) -> tuple[int, int]:
    ranges = result["edits"][0]["lines"] if "edits" in result else result["lines"]
    first, last = ranges[0] if ranges else (1, 1)
    return first, last


@dataclass(slots=True, eq=False)
class _Outcome:
    """One edit_file call's edits applied: the new text and what each replacement made."""

    text: str
    base: Lines
    lines: Lines
    replacements: int
    ranges: list[tuple[int, int]]  # each replacement, in ``text``
    spans: list[Span]  # what changed: base range -> in ``text``
    owners: list[int]  # which edit made each replacement
    strategies: list[str]
    counts: list[int]
    warnings: list[str]
    # each edit's [first, last] lines, when the application knew them already
    listed: list[list[list[int]]] | None = None


def _apply(ctx: ToolContext, call: _Call, text: str) -> _Outcome:
    """All edits in order on ``text`` (all or nothing: a refusal leaves the
    caller's text as it was, and nothing has been written)."""
    base = Lines(text)
    quick = _apply_one(ctx, call, base)
    if quick is not None:
        return quick
    out = _Outcome(text, base, base, 0, [], [], [], [], [], [])
    lines = base
    earlier: list[Lines] = []  # the text each edit saw, while they are small enough to keep
    for i in range(len(call.edits)):
        attempt = call.attempt(i)
        try:
            regions, strategy, count = _locate(ctx, call, lines, attempt,
                                               MAX_REPLACEMENTS - out.replacements)
        except Refusal as missed:
            if i and missed.details.get("kind") == Kind.NO_MATCH.value:
                raise _changed_by_earlier(attempt, earlier, missed) from None
            raise
        if len(lines.text) * (len(earlier) + 1) <= _KEPT_TEXT:
            earlier.append(lines)
        placeholder = placeholder_in_new_text(attempt, lines) or numbered_new_text(
            attempt, lines, lines.line_index(regions[0].start) + 1 if regions else 1)
        if placeholder is not None:
            raise placeholder
        growth = sum(len(r.replacement) - (lines.to_original(r.end) - lines.to_original(r.start))
                     for r in regions)
        if len(lines.text) + growth > ctx.limits.max_write_bytes:
            raise _result_too_large(call, len(lines.text) + growth, ctx.limits.max_write_bytes,
                                    attempt.label)
        new_text, placements = apply_regions(lines, regions, call.work)
        # only the first MAX_LISTED + 1 places of each edit are ever named, so
        # only those are carried through the edits after it
        shown = placements[:MAX_LISTED + 1]
        out.ranges = remap(out.ranges, placements, call.work) + [(p[2], p[3]) for p in shown]
        out.owners += [i] * len(shown)
        out.spans = compose(_coarse(out.spans), placements, call.work)
        out.strategies.append(strategy)
        out.counts.append(count)
        out.replacements += count
        out.warnings += _warnings(attempt, lines, strategy)
        lines = lines.replaced(new_text, placements)
    out.text, out.lines = lines.text, lines
    return out


def _apply_one(ctx: ToolContext, call: _Call, base: Lines) -> _Outcome | None:
    """:func:`_apply` of the commonest call, one edit whose oldText occurs
    once, exactly, in a text without ``\\r`` and does not lie inside its
    newText: the text cut around it, and what the general path would
    answer (which a property test holds it to); ``None`` for any other call."""
    edits = call.edits
    if len(edits) != 1:
        return None
    old, new, replace_all = edits[0]
    text = base.text
    if replace_all or not old or base.has_cr or "\r" in old or "\r" in new or old in new:
        return None
    at = text.find(old)
    if at < 0:
        return None
    end = at + len(old)
    if text.find(old, end) >= 0:
        return None
    first = text.count("\n", 0, at) + 1  # the change's first line, before it and after
    attempt = None
    # what the placeholder and line-number checks look for first, by three scans in C
    if "..." in new or "…" in new or "\t" in new:
        attempt = call.attempt(0)
        refused = placeholder_in_new_text(attempt, base) or numbered_new_text(attempt, base,
                                                                              first)
        if refused is not None:
            raise refused
    size = len(new)
    if len(text) + size - len(old) > ctx.limits.max_write_bytes:
        raise _result_too_large(call, len(text) + size - len(old), ctx.limits.max_write_bytes,
                                _label(0, call.multi))
    call.work.step(3)  # the search, the replacement and the spans, as the general path counts
    new_end = at + size
    after = Lines(text[:at] + new + text[end:])  # its line breaks counted if ever needed
    last = first + new.count("\n", 0, size - 1)  # the line of newText's last character
    # what _warnings looks for (an escaped break, an indented line), by a few scans in C
    warnings = _warnings(attempt or call.attempt(0), base, "exact") \
        if "\\" in new or new[:1] in (" ", "\t") or "\n " in new or "\n\t" in new else []
    return _Outcome(after.text, base, after, 1, [(at, new_end)], [(at, end, at, new_end)], [0],
                    ["exact"], [1], warnings, [[[first, last]]])


_SPANS = 4096  # changed spans carried from one edit to the next, at most
_KEPT_TEXT = 32 * 1024 * 1024  # characters of earlier edits' texts kept to explain a miss


def _changed_by_earlier(attempt: Attempt, earlier: list[Lines], missed: Refusal) -> Refusal:
    """A later edit's oldText that was in the file until an earlier edit of
    the same call changed it: said so, rather than "copy it from the file"
    (where it still is)."""
    holder = next((k for k in range(len(earlier) - 1, -1, -1)
                   if earlier[k].normalize(attempt.old) in earlier[k].normalized), None)
    if holder is None or holder >= attempt.index:
        return missed
    seen = earlier[holder]
    line = seen.line_index(seen.normalized.find(seen.normalize(attempt.old))) + 1
    message = (f"edits[{attempt.index}]: oldText is not in the text the edits before it left: "
               f"it is at line {line} of {_said(attempt.rel)} as edits[{holder}] saw it, and "
               f"edits[{holder}] changed it; edits apply in order, each to the text the one "
               "before it left")
    return refusal(attempt.repeated, Code.NOT_FOUND, message,
                   f"Write edits[{attempt.index}].oldText as edits[{holder}] leaves that text, or "
                   f"make the two one edit.", kind=Kind.CHANGED_BY_EARLIER_EDIT,
                   details={"path": attempt.rel, "field": attempt.field, "edit": attempt.index,
                            "changedBy": holder, "line": line})


def _coarse(spans: list[Span]) -> list[Span]:
    """``spans``, or when there are too many to carry through every later
    edit of the call, one span around them all (still true: outside it the
    base and the text agree; the diff then aligns inside it)."""
    if len(spans) <= _SPANS:
        return spans
    return [(spans[0][0], spans[-1][1], spans[0][2], spans[-1][3])]


def _locate(ctx: ToolContext, call: _Call, lines: Lines, attempt: Attempt,
            allowed: int) -> tuple[list[Region], str, int]:
    if attempt.old == "":
        if lines.text == "":
            return [Region(0, 0, lines.normalize(attempt.new))], "exact", 1
        raise empty_old_text(attempt)
    limit = min(allowed, MAX_REPLACEMENTS) + 1 if attempt.replace_all else MAX_LISTED
    found = search(lines, attempt.old, attempt.new, limit, call.work,
                   every=attempt.replace_all)
    if found is None or not found.count:
        raise missing_old_text(attempt, lines, call.work, Memory(call.earlier(), call.base_sha),
                               lambda old_n: _other_file(ctx, call.path, old_n, call.work),
                               found.note if found is not None else None)
    if found.count == 1 or (attempt.replace_all and found.uniform):
        if found.unclear_indent:
            raise unclear_indentation(attempt, lines, found)
        if found.count > allowed:
            raise too_many(attempt, found.count, MAX_REPLACEMENTS)
        if found.strategy in ("exact", "line_endings"):
            inside = applied_inside(attempt, lines, found)
            if inside is not None:
                raise inside
        return found.regions, found.strategy, found.count
    raise ambiguous(attempt, lines, found)


def _warnings(attempt: Attempt, lines: Lines, strategy: str) -> list[str]:
    out = []
    label, rel = attempt.label, attempt.rel
    old_n, new_n = lines.normalize(attempt.old), lines.normalize(attempt.new)
    if "\n" in old_n and "\n" not in new_n and attempt.new.count("\\n") >= 2:
        out.append(f"{label}newText has no line breaks but {attempt.new.count(chr(92) + 'n')} "
                   "'\\n' escape sequences, where oldText spanned lines; if you meant line breaks, "
                   "send real ones")
    # a newText line indented starts the text or follows a break
    spaces = new_n[:2] == "  " or "\n  " in new_n
    tabs = new_n[:1] == "\t" or "\n\t" in new_n
    if strategy != "indentation" and (spaces or tabs):
        # the file's style first (counted in C for a file indented one way):
        # only lines of the other way warn, and only those newText adds,
        # found a line at a time
        by_tabs = tab_indented(lines)
        if by_tabs and spaces and _adds_indented(old_n, new_n, "  "):
            out.append(f"{label}newText indents with spaces, but {_said(rel)} indents with tabs")
        elif not by_tabs and tabs and has_space_indented_line(lines) and \
                _adds_indented(old_n, new_n, "\t"):
            out.append(f"{label}newText indents with tabs, but {_said(rel)} indents with spaces")
    return out


def _adds_indented(old_n: str, new_n: str, indent: str) -> bool:
    """Whether ``new_n`` has a line starting with ``indent`` that is not
    blank and is none of ``old_n``'s."""
    known = set(old_n.split("\n"))
    return any(line.startswith(indent) and line.strip() and line not in known
               for line in new_n.split("\n"))


_NOTEBOOK_BYTES = 16 * 1024 * 1024  # notebooks parsed to check an edit keeps them JSON


def _check_notebook(call: _Call, before: str, outcome: _Outcome) -> None:
    """A notebook is JSON: an edit that leaves JSON broken would make it
    unopenable, so it is refused (a notebook that was not JSON before is
    left to the model)."""
    if not call.path.lower().endswith(".ipynb") or len(before) > _NOTEBOOK_BYTES:
        return
    try:
        json.loads(outcome.text)
        return
    except json.JSONDecodeError as broken:
        error = broken
    except (ValueError, RecursionError):  # JSON past what Python's reader takes: not broken
        return
    try:
        json.loads(before)
    except (ValueError, RecursionError):
        return
    line = getattr(error, "lineno", 1)
    first = max(1, line - 3)
    raise refusal(call.repeated, Code.INVALID_ARGUMENT,
                  f"the edit would leave {_said(call.rel)} invalid JSON "
                  f"({getattr(error, 'msg', error)} "
                  f"at line {line} of the result), and a notebook that is not JSON no longer "
                  "opens; nothing was written",
                  "Edit the notebook so that it stays JSON: keep the quotes, commas and "
                  "'\\n' escapes of each source line, or change one cell's source list whole.",
                  kind=Kind.NOTEBOOK, details={"path": call.rel, "line": line},
                  suggested_tool="read_file",
                  suggested_args={"path": call.rel, "offset": first, "limit": 8})


def _result_too_large(call: _Call, size: int, limit: int, label: str) -> Refusal:
    return refusal(call.repeated, Code.TOO_LARGE, f"{label}the edit would make {_said(call.rel)} "
                   f"at least {size} bytes, over the limit of {limit}", "Make a smaller change.",
                   kind=Kind.RESULT_TOO_LARGE, details={"path": call.rel, "size": size,
                                                        "limit": limit})


def _undecodable(rel: str, exc: Undecodable, size: int) -> Refusal:
    if exc.kind == "binary":
        return binary_file(rel, size, "edit_file", "Edit only text files; leave this one as it is.")
    facts = exc.facts
    if "encoding" in facts:
        message = (f"{_said(rel)} is {str(facts['encoding']).upper()} text, which edit_file does "
                   "not change (it edits UTF-8)")
    else:
        message = (f"{_said(rel)} is not valid UTF-8 text (the first bad byte is on line "
                   f"{facts['line']}), which edit_file does not change")
    return Refusal(Code.UNSUPPORTED, message, "Leave this file as it is, or ask the user to "
                   "convert it to UTF-8.", details={"path": rel, "size": size, **facts},
                   kind=Kind.ENCODING)


def _stale(ctx: ToolContext, rel: str, expected: str, current: str, data: bytes,
           work: Work) -> Refusal:
    details: dict[str, Any] = {}
    message = (f"{_said(rel)} is not the version you expected: expectedSha256 is "
               f"{expected[:12]}..., "
               f"the file's sha256 is {current[:12]}...")
    suggested: dict[str, Any] = {"path": rel}
    before = ctx.store(EditMemory).recall(expected)
    if before is not None:
        try:
            now = decode(data).text
        except Undecodable:
            now = None
        if now is not None:
            ranges = changed_lines(Lines(before), Lines(now), work)
            if ranges:
                details["changedLines"] = ranges
                shown = ", ".join(f"{a}" if a == b else f"{a}-{b}" for a, b in ranges[:5])
                message += f"; since then lines {shown} changed"
                first, last = ranges[0][0], ranges[min(len(ranges), 5) - 1][1]
                suggested = {"path": rel, "offset": max(1, first - 3),
                             "limit": last - max(1, first - 3) + 4}
    return sha256_mismatch(rel, expected, current, message=message,
                           hint=f"Read {_said(rel)} again and redo the edit against what it says "
                                f"now.",
                           suggest=("read_file", suggested), **details)


def _other_file(ctx: ToolContext, real: str, old_n: str, work: Work) -> str | None:
    """A file beside ``real`` (where the file edited really is) that
    contains oldText exactly (cheap and
    bounded: a few small files of the same directory, deny rules and the
    host's read permission honoured; the text is named only if the host
    would let the model read it)."""
    if len(old_n.strip()) < 8 or len(old_n) > _SIBLING_BYTES:
        return None
    parent = posixpath.dirname(real) or "."
    try:
        entries = ctx.view.entries(parent)
    except OSError:
        return None
    ext = posixpath.splitext(real)[1]
    files = sorted((e for e in entries if e.kind == "file" and e.path != real),
                   key=lambda e: (posixpath.splitext(e.name)[1] != ext, e.name))
    for entry in files[:_SIBLING_FILES]:
        work.check()
        if not ctx.visible(entry.path, Op.SEARCH):
            continue
        try:
            info = entry.stat(follow_symlinks=False)
            if info.st_size > _SIBLING_BYTES or (info.st_nlink > 1 and not ctx.allow_hardlinks):
                continue
            data = ctx.view.read_small(entry.path, _SIBLING_BYTES)
            if data is None:
                continue
            text = decode(data).text
        except (OSError, Undecodable):
            continue
        if old_n not in normalize_breaks(text):
            continue
        try:
            ctx.authorize(ReadRequest(entry.path))
        except Refusal:
            continue
        return entry.path
    return None


# -- success -------------------------------------------------------------------------


def _lines_per_edit(outcome: _Outcome) -> list[list[list[int]]]:
    if outcome.listed is not None:
        return outcome.listed
    after = outcome.lines
    per_edit: list[list[list[int]]] = [[] for _ in outcome.strategies]
    for owner, (x, y) in zip(outcome.owners, outcome.ranges):
        if len(per_edit[owner]) > MAX_LISTED:
            continue  # enough to say the list goes on
        first = after.line_of(x)
        last = after.line_of(y - 1) if y > x else first
        per_edit[owner].append([first, max(first, last)])
    return per_edit


def _result(ctx: ToolContext, rel: str, real: str, base_sha: str, new_sha: str,
            outcome: _Outcome, diff: Diff, dry: bool, bom: bool,
            multi: bool) -> EditResult:
    listed = outcome.listed
    if listed is not None and not (dry or multi or bom or outcome.lines.has_cr) and \
            real == rel and diff.complete and len(diff.text) <= ctx.limits.read_bytes and \
            len(listed[0]) <= MAX_LISTED and outcome.strategies[0] == "exact":
        # the commonest answer (one exact edit of an LF text, made), built
        # at once: the same fields in the same order as below
        made: EditResult = {"path": rel, "baseSha256": base_sha, "sha256": new_sha,
                            "replacements": outcome.replacements, "lines": listed[0],
                            "diff": diff.text}
        if outcome.warnings:
            made["warnings"] = outcome.warnings
        return made
    resolved: Resolved = {"resolvedPath": AnswerPath(real)} if real != rel else {}
    digests: Digests = ({"sha256": base_sha, "resultSha256": new_sha, "dryRun": True} if dry
                        else {"sha256": new_sha})  # a dry run: the file as it still is
    diffed = _diffed(diff, ctx.limits.read_bytes, outcome)  # may add a warning
    style: FileStyle = {}
    line_endings = outcome.lines.style()
    if line_endings in ("crlf", "cr", "mixed"):
        style["lineEndings"] = line_endings
    if bom:
        style["bom"] = True
    if outcome.warnings:
        style["warnings"] = outcome.warnings
    return {"path": rel, **resolved, "baseSha256": base_sha, **digests,
            "replacements": outcome.replacements, **_changes(outcome, multi), **diffed, **style}


def _changes(outcome: _Outcome, multi: bool) -> Changes:
    per_edit = _lines_per_edit(outcome)
    if multi:
        items = []
        for ranges, strategy, count in zip(per_edit, outcome.strategies, outcome.counts):
            item: EditItem = {"replacements": count, "lines": ranges[:MAX_LISTED]}
            if len(ranges) > MAX_LISTED:
                item["linesTruncated"] = True
            if strategy != "exact":
                item["matchStrategy"] = strategy
            items.append(item)
        return {"edits": items}
    changes: Changes = {"lines": per_edit[0][:MAX_LISTED]}
    if len(per_edit[0]) > MAX_LISTED:
        changes["linesTruncated"] = True
    if outcome.strategies[0] != "exact":
        changes["matchStrategy"] = outcome.strategies[0]
    return changes


def _diffed(diff: Diff, budget: int, outcome: _Outcome) -> Diffed:
    diffed: Diffed = ({"diff": diff.text[:budget], "diffTruncated": True}
                      if len(diff.text) > budget else {"diff": diff.text})
    if not diff.complete:
        diffed["diffComplete"] = False
        outcome.warnings.append("the diff shows some changed blocks whole (old lines removed, new "
                                "ones added): they were too large to compare line by line")
    return diffed


_LINES = {"type": "array", "items": {"type": "array", "items": {"type": "integer"},
                                     "minItems": 2, "maxItems": 2},
          "description": "[first, last] line of each change, in the new file"}
OUTPUT_SCHEMA = success_schema({
    "path": {"type": "string"},
    "resolvedPath": {"type": "string", "description": "where a symlink led"},
    "baseSha256": {"type": "string", "description": "the file's sha256 before the edit"},
    "sha256": {"type": "string", "description": "the file's sha256 now (unchanged by a dry run)"},
    "resultSha256": {"type": "string", "description": "a dry run: the sha256 it would have"},
    "dryRun": {"type": "boolean"},
    "replacements": {"type": "integer"},
    "lines": _LINES,
    "linesTruncated": {"type": "boolean"},
    "matchStrategy": {"type": "string", "enum": ["line_endings", "trailing_whitespace",
                                                 "indentation", "whitespace"]},
    "edits": {"type": "array", "items": {
        "type": "object", "properties": {
            "replacements": {"type": "integer"}, "lines": _LINES,
            "linesTruncated": {"type": "boolean"},
            "matchStrategy": {"type": "string"}},
        "required": ["replacements", "lines"]}},
    "diff": {"type": "string", "description": "unified diff of the change"},
    "diffTruncated": {"type": "boolean"},
    "diffComplete": {"type": "boolean",
                     "description": "false: some changed blocks are shown whole"},
    "lineEndings": {"type": "string", "enum": ["crlf", "cr", "mixed"]},
    "bom": {"type": "boolean"},
    "encoding": {"type": "string", "description": "a UTF-16 or UTF-32 file: kept, with its "
                                                  "byte order mark"},
    "warnings": {"type": "array", "items": {"type": "string"}},
}, ["path", "baseSha256", "sha256", "replacements", "diff"])

TOOL = ToolSpec(name="edit_file", title="Edit file", description=DESCRIPTION, schema=SCHEMA,
                output_schema=OUTPUT_SCHEMA, run=run, request=EditRequest, mutates=True,
                idempotent=False, destructive=True, suggests=Suggests(read_instead=True),
                plain=run_plain)
