"""``SizedListing``: one directory's names, kinds and file sizes, in one pass.

:meth:`Handle.sized_listing` lists the directory a handle holds: every name
(not ``.`` or ``..``; a name that is not UTF-8 decoded as ``os.fsdecode``
does, with surrogate escapes), its kind (``d_type``, never following a
link), and for a regular file its ``st_size`` from one ``fstatat``
(``AT_SYMLINK_NOFOLLOW``) relative to the open directory (no re-resolution).
An entry removed before its ``fstatat`` is left out; a file whose
``fstatat`` fails otherwise is kept, without a size, and so is a file with
more than one name (its size is its other names', one of which may be
denied or outside the root: a hard link is not read, nor its size told).  A regular file's kind
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
from typing import TYPE_CHECKING

from ._backend import makes_batches

if TYPE_CHECKING:
    from ._backend import Backend

__all__ = ["SizedListing", "list_sized"]

DIR, SYMLINK, OTHER, FILE = -1, -2, -3, -4  # the native module's CORRAL_LIST_* codes

_KINDS = {DIR: "dir", SYMLINK: "symlink", OTHER: "other", FILE: "file"}


class SizedListing:
    """A directory's entries as :meth:`Handle.sized_listing` gives them
    (module doc): two parallel lists, in the order the directory gave them
    (not sorted).  ``names[i]`` is a name; ``codes[i]`` its size in bytes
    when it is a regular file of one name (``>= 0``), else one of the
    negative codes :attr:`DIR`, :attr:`SYMLINK`, :attr:`OTHER`, or
    :attr:`FILE` (a regular file whose size could not be taken, or one with
    more than one name).  :attr:`KINDS` names each negative
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
    ``backend`` (in one C call where the backend lists in one)."""
    raw = backend.list_sized(fd) if makes_batches(backend) else None
    if raw is not None:
        return SizedListing(*raw)
    return _os_sized(backend, fd)


def _mode_code(info: os.stat_result) -> int:
    mode = info.st_mode
    if st.S_ISREG(mode):
        return FILE if info.st_nlink > 1 else info.st_size
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
