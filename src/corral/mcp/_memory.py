"""What a large message costs in memory, and giving it back afterwards.

A large line is held once while it is read (a ``bytearray`` that grows in
place, emptied once decoded), then as its text while it is parsed, then as
its parsed strings, which the call keeps until it has run.  The server
counts what the queued and running large calls hold (:func:`footprint`, the
real size of their parsed arguments, not their line's length) and reads no
new large line while that is over its budget.

Freed, that memory could still stay with the process: glibc raises its mmap
threshold (to 32 MiB at most) after a large block is freed, so later blocks
of that size come from per-thread arenas, whose free top glibc keeps below
a trim threshold it raises too.  :func:`configure` fixes both thresholds
(large blocks are mapped, and unmapped when freed); :func:`release` (after
each large message) returns the free pages left in the arenas.  Elsewhere
both are no-ops (other allocators return large blocks themselves).
"""

from __future__ import annotations

import ctypes
import sys
from collections.abc import Callable
from typing import Any

__all__ = ["COUNTED", "LARGE", "configure", "footprint", "release", "weight"]

#: messages at least this long are read in place, counted, and followed by :func:`release`
LARGE = 1 << 20
#: calls at least this long are queued by their :func:`footprint`, not their length
COUNTED = 16 << 10

_M_TRIM_THRESHOLD, _M_MMAP_THRESHOLD = -1, -3  # mallopt's parameters (glibc's malloc.h)
_MMAP_THRESHOLD = 1 << 20
_TRIM_THRESHOLD = 1 << 20


def _libc() -> Any:
    if not sys.platform.startswith("linux"):
        return None
    try:
        # the process's own symbols hold its C library's: nothing is looked
        # up on disk (find_library runs ldconfig)
        libc = ctypes.CDLL(None)
        libc.malloc_trim.argtypes, libc.malloc_trim.restype = [ctypes.c_size_t], ctypes.c_int
        libc.mallopt.argtypes, libc.mallopt.restype = [ctypes.c_int, ctypes.c_int], ctypes.c_int
    except (OSError, AttributeError):  # not glibc (musl has no malloc_trim)
        return None
    return libc


_LIBC = _libc()


def _trimmer() -> Callable[[], None]:
    if _LIBC is None:
        return lambda: None
    trim = _LIBC.malloc_trim

    def release() -> None:
        trim(0)
    return release


release = _trimmer()


def configure() -> None:
    """Fix glibc's mmap and trim thresholds at 1 MiB for this process (for
    ``corral serve``, which owns its process; an embedder's allocator is
    left as it is)."""
    if _LIBC is not None:
        _LIBC.mallopt(_M_MMAP_THRESHOLD, _MMAP_THRESHOLD)
        _LIBC.mallopt(_M_TRIM_THRESHOLD, _TRIM_THRESHOLD)


def weight(size: int, arguments: Any) -> int:
    """What a call whose line is ``size`` bytes holds once parsed: its
    arguments' :func:`footprint` from :data:`COUNTED` bytes on (a line of
    ``{}`` parses into some 20 times its length), its length below."""
    return footprint(arguments) if size >= COUNTED else size


def footprint(value: Any) -> int:
    """Bytes ``value`` (parsed JSON) takes in memory: every string, number
    and container it holds, each counted once per occurrence."""
    total = 0
    stack = [value]
    while stack:
        item = stack.pop()
        total += sys.getsizeof(item)
        if isinstance(item, dict):
            stack.extend(item.keys())
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    return total
