"""What read_file learns from a whole file, kept while the file is unchanged.

A window of a large file needs facts about all of it (the sha256, the line
count, line endings, byte order mark, that it is valid UTF-8 text) but only
the bytes of its own lines.  One full pass learns those facts and a sparse
line index (a line number and its byte offset about every CHUNK bytes); a
later window of the same unchanged file then reads only from the indexed
line before it.

An entry is keyed by the file's (device, inode) and trusted only while its
size, ``mtime_ns`` and ``ctime_ns`` are those seen, and only if those stamps
were already older than the moment the pass began by more than a timestamp
granule (git's racy-index rule: a change within the same granule as the
pass could keep the stamps).  An entry that was racy when made is not used;
the next full pass makes a trusted one.  Bounded (least recently used go
first); corral's own writes drop the entry of the file they replace.

A small file (read in one call) is read whole every time, since its window
needs its bytes anyway; only its sha256 is kept (:func:`digest` /
:func:`remember_digest`), under the same key and the same rules, in a
table of its own bounded to :data:`MAX_DIGESTS` entries (each a key, three
stamps and a 64-character digest: about 300 bytes, so well under 2 MB in
all).  Only a trusted digest is kept: a racy one would never be used.

An entry is served for the stamps the file had when read_file stat'ed it,
and the bytes are read just after; read_file stats the file again once they
are read and hashes them itself if a stamp moved meanwhile, so the sha256
answered is that of the content shown.  Besides, write_file and edit_file
compute the digest they compare ``expectedSha256`` with from the bytes they
act on, never from here: the worst a wrong entry could do is make them
refuse a write as stale; it can never let one through.
"""

from __future__ import annotations

import os
import threading
import time
from bisect import bisect_right
from collections import OrderedDict
from typing import NamedTuple

__all__ = ["Whole", "lookup", "store", "digest", "remember_digest", "forget", "started",
           "MAX_ENTRIES", "MAX_DIGESTS"]

MAX_ENTRIES = 128
MAX_DIGESTS = 4096
RACY_NS = 2_000_000_000  # a timestamp granule on the coarsest filesystems we run on


class Whole(NamedTuple):
    """The facts of one whole file and its sparse line index."""

    size: int
    mtime_ns: int
    ctime_ns: int
    trusted: bool
    sha256: str
    endings: str
    bom: bool
    total: int
    crlf: bool
    lines: tuple[int, ...] = ()  # line numbers of index points, ascending
    offsets: tuple[int, ...] = ()  # the byte offset where each starts

    def start_before(self, line: int, first_offset: int) -> tuple[int, int]:
        """The indexed (line number, byte offset) at or before ``line``."""
        at = bisect_right(self.lines, line) - 1
        return (1, first_offset) if at < 0 else (self.lines[at], self.offsets[at])


_guard = threading.Lock()
_entries: OrderedDict[tuple[int, int], Whole] = OrderedDict()
# (device, inode) -> (size, mtime_ns, ctime_ns, sha256) of a small file
_digests: OrderedDict[tuple[int, int], tuple[int, int, int, str]] = OrderedDict()


def started() -> int:
    """The wall-clock time a full pass begins (for the racy rule)."""
    return time.time_ns()


def _stamps(info: os.stat_result) -> tuple[int, int, int]:
    return info.st_size, info.st_mtime_ns, info.st_ctime_ns


def lookup(info: os.stat_result) -> Whole | None:
    """The trusted entry for the file ``info`` describes, if it is unchanged."""
    with _guard:
        entry = _entries.get((info.st_dev, info.st_ino))
        if entry is None:
            return None
        if not entry.trusted or (entry.size, entry.mtime_ns, entry.ctime_ns) != _stamps(info):
            return None
        _entries.move_to_end((info.st_dev, info.st_ino))
        return entry


def store(info: os.stat_result, began_ns: int, *, sha256: str, endings: str, bom: bool,
          total: int, crlf: bool, lines: list[int], offsets: list[int]) -> None:
    """Remember a full pass that began at ``began_ns`` over the file ``info``
    describes (stat'ed before the pass)."""
    size, mtime_ns, ctime_ns = _stamps(info)
    trusted = max(mtime_ns, ctime_ns) < began_ns - RACY_NS
    entry = Whole(size, mtime_ns, ctime_ns, trusted, sha256, endings, bom, total, crlf,
                  tuple(lines), tuple(offsets))
    with _guard:
        _entries[(info.st_dev, info.st_ino)] = entry
        _entries.move_to_end((info.st_dev, info.st_ino))
        while len(_entries) > MAX_ENTRIES:
            _entries.popitem(last=False)


def digest(info: os.stat_result) -> str | None:
    """The sha256 remembered for the small file ``info`` describes, if its
    stamps are those it had when the digest was taken."""
    key = (info.st_dev, info.st_ino)
    # no lock (the commonest read asks): one get of an immutable entry is
    # whole, and an entry another thread dropped meanwhile is only not
    # moved to the end (it is not used less for that)
    entry = _digests.get(key)
    if entry is None or entry[:3] != (info.st_size, info.st_mtime_ns, info.st_ctime_ns):
        return None
    try:
        _digests.move_to_end(key)
    except KeyError:
        pass  # dropped (forgotten, or pushed out) since the get: the digest was the bytes' then
    return entry[3]


def remember_digest(info: os.stat_result, began_ns: int, sha256: str) -> None:
    """Remember the sha256 of the bytes of a small file read after
    ``began_ns`` (``info``: its fstat before the read), if its stamps are
    old enough to be trusted."""
    if max(info.st_mtime_ns, info.st_ctime_ns) >= began_ns - RACY_NS:
        return  # racy: a change within the stamps' granule could keep them
    key = (info.st_dev, info.st_ino)
    with _guard:
        _digests[key] = (info.st_size, info.st_mtime_ns, info.st_ctime_ns, sha256)
        _digests.move_to_end(key)
        while len(_digests) > MAX_DIGESTS:
            _digests.popitem(last=False)


def forget(dev: int, ino: int) -> None:
    """Drop what is known of a file corral is about to replace or remove."""
    key = (dev, ino)
    if key in _entries or key in _digests:  # the lock only when there is something to drop
        with _guard:
            _entries.pop(key, None)
            _digests.pop(key, None)
