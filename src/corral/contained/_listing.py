"""``SizedListing``: one directory's names, kinds and file sizes, in one pass.

:meth:`Handle.sized_listing` lists the directory a handle holds: every name
(not ``.`` or ``..``; a name that is not UTF-8 decoded as ``os.fsdecode``
does, with surrogate escapes), its kind (``d_type``, never following a
link), and for a regular file its ``st_size`` from one ``fstatat``
(``AT_SYMLINK_NOFOLLOW``) relative to the open directory (no re-resolution).
An entry removed before its ``fstatat`` is left out; a file whose
``fstatat`` fails otherwise is kept, without a size.  A regular file's kind
is the ``fstatat``'s (a name replaced since it was read shows as what it
is now).

With the native backend this is one C call (``corral_list_sized``,
``native/corral_list.h``: ``getdents64`` on the fd itself on Linux), and
Python only decodes and splits one buffer; any other backend (the ``os``
backend, the test backends of ``corral.testing``) is asked through its
``scandir`` and ``lstat_at``, with the same results.
"""

from __future__ import annotations

import os
import stat as st
import sys
import threading
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ._backend import Backend

try:
    from .._native import ffi as _ffi
    from .._native import lib as _lib
    from ._native_backend import NativeBackend
except ImportError:  # the module was not built: the os path only
    _lib = None

__all__ = ["SizedListing", "list_sized"]

_ENCODING = sys.getfilesystemencoding()
_DECODE_ERRORS = sys.getfilesystemencodeerrors()

DIR, SYMLINK, OTHER, FILE = -1, -2, -3, -4
if _lib is not None and (_lib.CORRAL_LIST_DIR, _lib.CORRAL_LIST_SYMLINK, _lib.CORRAL_LIST_OTHER,
                         _lib.CORRAL_LIST_FILE) != (DIR, SYMLINK, OTHER, FILE):
    raise ImportError("corral._native disagrees with corral on the CORRAL_LIST_* codes; "
                      "rebuild it")

_KINDS = {DIR: "dir", SYMLINK: "symlink", OTHER: "other", FILE: "file"}


class SizedListing:
    """A directory's entries as :meth:`Handle.sized_listing` gives them
    (module doc): two parallel lists, in the order the directory gave them
    (not sorted).  ``names[i]`` is a name; ``codes[i]`` its size in bytes
    when it is a regular file (``>= 0``), else one of the negative codes
    :attr:`DIR`, :attr:`SYMLINK`, :attr:`OTHER`, or :attr:`FILE` (a regular
    file whose size could not be taken).  :attr:`KINDS` names each negative
    code; :meth:`records` gives ``(name, kind, size or None)`` tuples."""

    __slots__ = ("names", "codes")

    DIR = DIR
    SYMLINK = SYMLINK
    OTHER = OTHER
    FILE = FILE
    #: the kind of each negative code: "dir", "symlink", "other", "file"
    KINDS = _KINDS

    def __init__(self, names: list[str], codes: list[int]) -> None:
        self.names = names
        self.codes = codes

    def __len__(self) -> int:
        return len(self.names)

    def records(self) -> list[tuple[str, str, int | None]]:
        """``(name, kind, size)`` per entry, in order; ``size`` is ``None``
        for anything but a regular file with a size."""
        kinds = _KINDS
        return [(name, "file", code) if code >= 0 else (name, kinds[code], None)
                for name, code in zip(self.names, self.codes)]

    def __repr__(self) -> str:
        return f"<corral SizedListing of {len(self.names)} entries>"


def list_sized(backend: Backend, fd: int) -> SizedListing:
    """The :class:`SizedListing` of the directory ``fd``, through
    ``backend`` (in one C call when it is the native backend itself)."""
    if _lib is not None and type(backend) is NativeBackend:
        return _native_sized(fd)
    return _os_sized(backend, fd)


def _mode_code(info: os.stat_result) -> int:
    mode = info.st_mode
    if st.S_ISREG(mode):
        return info.st_size
    if st.S_ISDIR(mode):
        return DIR
    return SYMLINK if st.S_ISLNK(mode) else OTHER


def _os_sized(backend: Backend, fd: int) -> SizedListing:
    """What the C does, through the backend's ``scandir`` and ``lstat_at``."""
    names: list[str] = []
    codes: list[int] = []
    try:  # from the start, as the C lists (os.scandir of an fd reads on from its offset)
        os.lseek(fd, 0, os.SEEK_SET)
    except OSError:
        pass  # scandir says what is wrong with the fd
    with backend.scandir(fd) as it:
        for entry in it:
            name = entry.name
            if entry.is_symlink():
                code = SYMLINK
            elif entry.is_dir(follow_symlinks=False):
                code = DIR
            elif entry.is_file(follow_symlinks=False):
                try:
                    code = _mode_code(backend.lstat_at(fd, name))
                except FileNotFoundError:
                    continue  # removed since it was listed
                except OSError:
                    code = FILE
            else:
                code = OTHER
            names.append(name)
            codes.append(code)
    return SizedListing(names, codes)


# Buffers are per thread: cffi releases the GIL around the call, so two
# threads' listings must not share one.  Grown for a large directory; kept
# only up to _KEEP bytes of names (a larger one is the call's alone).
_FIRST = 1 << 14  # bytes of names; room for _FIRST // 16 codes
_KEEP = 1 << 20


class _Buffers(threading.local):
    size = 0
    # cffi arrays (char[], int64_t[], int64_t *); cffi objects carry no static types
    names: Any = None
    codes: Any = None
    count: Any = None


_buffers = _Buffers()


def _native_sized(fd: int) -> SizedListing:
    bufs = _buffers
    if bufs.size == 0:
        bufs.size = _FIRST
        bufs.names = _ffi.new("char[]", _FIRST)
        bufs.codes = _ffi.new("int64_t[]", _FIRST // 16)
        bufs.count = _ffi.new("int64_t *")
    size, names, codes, count = bufs.size, bufs.names, bufs.codes, bufs.count
    while True:
        used = _lib.corral_list_sized(fd, names, size, codes, size // 16, count)
        if used != -2:
            break
        size *= 4  # a large directory: list it again into more room
        names = _ffi.new("char[]", size)
        codes = _ffi.new("int64_t[]", size // 16)
        if size <= _KEEP:
            bufs.size, bufs.names, bufs.codes = size, names, codes
    if used < 0:
        err = _ffi.errno
        raise OSError(err, os.strerror(err))
    text = _ffi.unpack(names, used).decode(_ENCODING, _DECODE_ERRORS).split("\0")
    text.pop()  # after the last NUL
    return SizedListing(text, _ffi.unpack(codes, count[0]))
