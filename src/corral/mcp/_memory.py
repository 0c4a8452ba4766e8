"""Give freed memory back to the system after a large message.

A message of several MiB is held three times while it is read (its bytes,
its text, its parsed strings), by whichever thread reads at the time.  Freed,
that memory stays in the C allocator's per-thread arenas (glibc trims an
arena only from its top), so after a few large calls on a few threads the
server would keep hundreds of MiB it no longer uses.  glibc's
``malloc_trim(0)`` returns the free pages of every arena; elsewhere this is
a no-op (other allocators return large blocks themselves).
"""

from __future__ import annotations

import ctypes
import ctypes.util
import sys
from collections.abc import Callable

__all__ = ["LARGE", "release"]

#: messages at least this long are followed by :func:`release`
LARGE = 1 << 20


def _trimmer() -> Callable[[], None]:
    if not sys.platform.startswith("linux"):
        return lambda: None
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        trim = libc.malloc_trim
    except (OSError, AttributeError):  # not glibc (musl has no malloc_trim)
        return lambda: None
    trim.argtypes, trim.restype = [ctypes.c_size_t], ctypes.c_int

    def release() -> None:
        trim(0)
    return release


release = _trimmer()
