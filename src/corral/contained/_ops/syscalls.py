"""What the surface operations share about system calls: whether this is
Linux, and copying a stream into an fd.

The fd calls for metadata (``fchown``, the xattr calls) are the backend's
(:class:`._backend.Backend`), so a test's wrapper sees every step.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable

__all__ = ["IS_LINUX", "copy_stream"]

CHUNK = 1 << 20

IS_LINUX = sys.platform.startswith("linux")



def copy_stream(read: Callable[[int], bytes], fd: int) -> None:
    """Write to ``fd`` everything ``read(n)`` gives until it gives ``b""``."""
    while chunk := read(CHUNK):
        view = memoryview(chunk)
        while view:
            view = view[os.write(fd, view):]
