"""``copyfile`` beneath a root (``link`` is :meth:`Root.link`, which
checks both parents after the act as the other acts by name do).

``copyfile(src, dst)`` is ``shutil.copyfile``: the content of ``src`` (a
final in-root symlink followed) is copied fd to fd (``copy_file_range``,
else ``sendfile``, else read/write) into a temporary file beside ``dst``,
which is then renamed over ``dst`` (``_replace.replace_in``: atomic, and an
existing ``dst`` keeps its mode, owner and xattrs as an in-place copy
would).  A final in-root symlink at ``dst`` is followed, as ``shutil``
writes through it; the destination is a ``Root.target``, so ``dst`` is
resolved once and answered as ``Root.write_bytes`` answers.
"""

from __future__ import annotations

import errno
import os
import stat as st

from .. import _paths
from .._backend import _under_pyfakefs
from .._errors import contained_error
from .resolve import RootAPI
from .syscalls import copy_stream

__all__ = ["copyfile"]

_CHUNK = 1 << 20
# copy_file_range / sendfile cannot do this pair of fds: use the next way
_NO_FAST_COPY = frozenset({errno.EXDEV, errno.ENOSYS, errno.EINVAL, errno.EOPNOTSUPP,
                           errno.ENOTSUP, errno.EBADF, errno.EPERM})


def _copy_fd(src: int, dst: int) -> None:
    """Copy all of ``src`` (from its offset) to ``dst``: copy_file_range,
    sendfile, read/write, each tried while the previous says it cannot."""
    if not _under_pyfakefs():  # fake fds must never reach a real system call
        for fast in (_copy_range, _send):
            try:
                fast(src, dst)
                return
            except OSError as exc:
                if exc.errno not in _NO_FAST_COPY:
                    raise
    copy_stream(lambda size: os.read(src, size), dst)


def _copy_range(src: int, dst: int) -> None:
    if not hasattr(os, "copy_file_range"):
        raise OSError(errno.ENOSYS, "no copy_file_range")
    while os.copy_file_range(src, dst, _CHUNK):
        pass


def _send(src: int, dst: int) -> None:
    if not hasattr(os, "sendfile"):
        raise OSError(errno.ENOSYS, "no sendfile")
    while os.sendfile(dst, src, None, _CHUNK):
        pass


def copyfile(root: RootAPI, src: object, dst: object, *, follow_symlinks: bool = True,
             fsync: bool = True) -> object:
    """Copy the content of ``src`` to ``dst``; return ``dst`` (module
    docstring).  ``follow_symlinks=False`` with a symlink at ``src`` makes
    ``dst`` a symlink with the same text (``FileExistsError`` if ``dst``
    exists, as ``shutil``).

    Raises ``shutil.SameFileError`` when both name one file,
    ``IsADirectoryError`` for a directory at either end,
    :class:`SpecialFileError` for a FIFO, socket or device at either end,
    and what the root raises for either path."""
    src_text, dst_text = _paths.as_text(src), _paths.as_text(dst)
    if not follow_symlinks and st.S_ISLNK(root.lstat(src).st_mode):
        root.symlink(root.readlink(src), dst)
        return dst
    backend = root.backend
    sfd = root.open(src, os.O_RDONLY)
    try:
        source = backend.fstat(sfd)
        if st.S_ISDIR(source.st_mode):
            raise contained_error(errno.EISDIR, src_text, src_text)
        _write_copy(root, sfd, source, src_text, dst_text, fsync)
    finally:
        backend.close(sfd)
    return dst


def _write_copy(root: RootAPI, sfd: int, source: os.stat_result, src_text: str, dst_text: str,
                fsync: bool) -> None:
    """Replace ``dst`` (its in-root final link followed) with what ``sfd``
    holds: ``Target.write_bytes`` with the content streamed fd to fd."""
    target = root.target(dst_text, follow_final=True)
    try:
        current = target.lstat()
        if current is not None and (current.st_dev, current.st_ino) == (source.st_dev,
                                                                        source.st_ino):
            import shutil  # here: its error only, for the rare copy onto itself

            raise shutil.SameFileError(f"{src_text!r} and {dst_text!r} are the same file")

        def fill(fd: int) -> None:
            _copy_fd(sfd, fd)

        target.write_bytes(fill, fsync=fsync)  # dirs, specials, "/" and ".": the Target's answers
    finally:
        target.close()
