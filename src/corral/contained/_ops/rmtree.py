"""``rmtree`` beneath a root: fd-based, like ``shutil.rmtree``'s safe variant.

The directory named by the path is opened ``O_DIRECTORY|O_NOFOLLOW`` in its
resolved parent; from there everything is relative to open directory fds:
each entry is listed, a subdirectory is opened ``O_NOFOLLOW`` in the fd that
listed it (so an entry swapped for a symlink is never entered: the open
fails and the link itself is unlinked), everything else is ``unlinkat``-ed
in that fd, and each directory is ``rmdir``-ed in its parent's fd once
empty.  Each directory it opens (the top included) is shown beneath the root
before anything in it is removed (``_resolve.open_dir_below``: a directory
it holds may have been moved out meanwhile and a name in it swapped for one
never beneath), so renames and symlink swaps during the call cannot make it
remove anything outside: at worst it removes what was moved into the tree
meanwhile, which is inside.

A symlink given as the path is refused (as ``shutil``: "Cannot call rmtree
on a symbolic link"), and so is a path ending in ``.`` or ``..`` (the root
itself cannot be removed through itself).  Open fds grow with the depth of
the tree (one per level), as in ``shutil``.
"""

from __future__ import annotations

import errno
import os
import stat as st
from collections.abc import Callable
from contextlib import ExitStack
from dataclasses import dataclass, field

from .._backend import Backend
from .._errors import EscapeError, contained_error
from .._resolve import MOVED_RETRIES
from .resolve import Parent, RootAPI, TargetAPI, open_parent
from .._paths import as_text

__all__ = ["rmtree", "OnExc"]

#: ``onexc(function, path, exc)`` as in ``shutil.rmtree`` (3.12): the ``os``
#: function that failed, the root-relative path, the exception.
OnExc = Callable[[Callable[..., object], str, BaseException], object]

_OPEN_DIR = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC


@dataclass
class _Frame:
    """One open directory being emptied."""

    fd: int
    path: str  # root-relative, for errors
    name: str  # its name in the parent frame's fd
    entries: list[tuple[str, bool]] = field(default_factory=list)  # (name, is a directory)


def _child(path: str, name: str) -> str:
    return f"{path}/{name}"


def _list(backend: Backend, fd: int) -> list[tuple[str, bool]]:
    # consumed to the end, the scandir iterator closes itself
    return [(entry.name, entry.is_dir(follow_symlinks=False)) for entry in backend.scandir(fd)]


class _Remover:
    """The walk: a stack of frames, errors to ``onexc`` (or raised)."""

    def __init__(self, backend: Backend, onexc: OnExc | None, ignore: bool,
                 target: TargetAPI) -> None:
        self.backend = backend
        self.target = target  # what checks a directory opened below the top
        self.onexc = onexc
        self.ignore = ignore

    def failed(self, function: Callable[..., object], path: str, exc: OSError) -> None:
        if self.ignore:
            return
        if isinstance(exc.filename, int) or exc.filename is None:
            exc = contained_error(exc.errno or errno.EIO, path, path)
        if self.onexc is None:
            raise exc
        self.onexc(function, path, exc)

    def run(self, top: _Frame, parent_fd: int) -> None:
        stack = [top]
        try:
            while stack:
                frame = stack[-1]
                if not frame.entries:
                    stack.pop()
                    self.backend.close(frame.fd)
                    self.remove_dir(stack[-1].fd if stack else parent_fd, frame)
                    continue
                name, is_dir = frame.entries.pop()
                child = self.enter(frame, name) if is_dir else self.unlink(frame, name)
                if child is not None:
                    stack.append(child)
        finally:
            for frame in stack:
                try:
                    self.backend.close(frame.fd)
                except OSError:
                    pass

    def remove_dir(self, parent_fd: int, frame: _Frame) -> None:
        try:
            self.backend.rmdir_at(parent_fd, frame.name)
        except FileNotFoundError:
            pass
        except OSError as exc:
            self.failed(os.rmdir, frame.path, exc)

    def enter(self, frame: _Frame, name: str) -> _Frame | None:
        """Open the subdirectory ``name`` of ``frame`` (never following a
        link) and list it; a non-directory there now is unlinked."""
        path = _child(frame.path, name)
        try:
            # shown beneath the root: the frame's directory may have been
            # moved out since it was listed, and the name swapped for one
            # never beneath
            fd = self.target.open_below(frame.fd, name, path, _OPEN_DIR)
        except FileNotFoundError:
            return None
        except OSError as exc:
            if exc.errno in (errno.ENOTDIR, errno.ELOOP):  # swapped since listed
                return self.unlink(frame, name)
            self.failed(os.open, path, exc)
            return None
        try:
            entries = _list(self.backend, fd)
        except OSError as exc:
            self.backend.close(fd)
            self.failed(os.scandir, path, exc)
            return None
        return _Frame(fd, path, name, entries)

    def unlink(self, frame: _Frame, name: str) -> _Frame | None:
        path = _child(frame.path, name)
        try:
            self.backend.unlink_at(frame.fd, name)
        except FileNotFoundError:
            pass
        except OSError as exc:
            if exc.errno in (errno.EISDIR, errno.EPERM) and self._is_dir(frame.fd, name):
                return self.enter(frame, name)  # a directory now: empty it too
            self.failed(os.unlink, path, exc)
        return None

    def _is_dir(self, fd: int, name: str) -> bool:
        try:
            return st.S_ISDIR(self.backend.lstat_at(fd, name).st_mode)
        except OSError:
            return False


def _open_top(backend: Backend, parent: Parent) -> _Frame:
    """Open and list the directory to remove (``parent.name`` in ``parent``)."""
    info = backend.lstat_at(parent.fd, parent.name)
    if st.S_ISLNK(info.st_mode):
        raise OSError(errno.ENOTDIR, "Cannot call rmtree on a symbolic link", parent.text)
    for _ in range(MOVED_RETRIES):
        try:
            fd = backend.open_at(parent.fd, parent.name, _OPEN_DIR)
        except OSError as exc:
            raise contained_error(exc.errno or errno.EIO, parent.text, parent.text) from None
        # the parent may have been moved out since it was resolved, and the
        # name in it swapped for a directory never beneath: none is emptied
        try:
            beneath = parent.target.opened_beneath(fd)
        except BaseException:
            backend.close(fd)
            raise
        if beneath:
            break
        backend.close(fd)
    else:
        raise EscapeError("the directory is no longer inside the root", parent.text,
                          component=parent.path, reason="moved")
    try:
        return _Frame(fd, parent.path, parent.name, _list(backend, fd))
    except OSError:
        backend.close(fd)
        raise


def rmtree(root: RootAPI, path: object, ignore_errors: bool = False,
           onexc: OnExc | None = None) -> None:
    """Remove the directory ``path`` and everything in it (module docstring).

    Errors (root-relative names) go to ``onexc(function, path, exc)`` if
    given, are skipped with ``ignore_errors``, else raised.  Before anything
    is removed it raises what the root raises for ``path``,
    ``NotADirectoryError`` for a non-directory, ``OSError`` (``ENOTDIR``) for
    a symlink, and ``EINVAL`` for a path ending in ``.`` or ``..``.
    """
    backend = root.backend
    with ExitStack() as stack:
        try:
            parent = stack.enter_context(open_parent(root, path, errno.EINVAL))
            top = _open_top(backend, parent)
        except OSError as exc:
            if ignore_errors:
                return
            if onexc is None:
                raise
            onexc(os.lstat, as_text(path), exc)
            return
        _Remover(backend, onexc, ignore_errors, parent.target).run(top, parent.fd)
