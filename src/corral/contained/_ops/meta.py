"""``chmod``, ``chown``, ``utime`` and ``truncate`` beneath a root.

The metadata calls act on a *pinned* inode: the path is resolved once by the
root into an ``O_PATH`` fd, and the change is made through that fd's
``/proc/self/fd/N`` magic link, which the kernel resolves to exactly the
pinned inode (a symlink itself, when the link was pinned).  Nothing is
looked up by name between the decision and the change, so swapping the
target or an ancestor for a symlink mid-call changes nothing outside (Go's
CVE-2026-32282 was a check-then-``fchmodat`` race).  The magic link is
checked to lead to the pinned inode before use, so a ``/proc`` that is not
the process's procfs is refused (``ENOTSUP``) rather than trusted.

Where there is no ``O_PATH`` or no ``/proc`` (macOS), the final name is
resolved (in-root symlinks followed when ``follow_symlinks``) and acted on in
its open parent directory with ``AT_SYMLINK_NOFOLLOW``: if the name is
swapped for a symlink in between, the symlink itself is changed, which is
inside the root.  On Linux ``chmod`` of a symlink itself is not possible
(no ``lchmod``): ``follow_symlinks=False`` on a symlink raises the kernel's
answer, ``OSError`` ``EOPNOTSUPP`` (where ``os.chmod`` raises
``NotImplementedError``: the core raises ``OSError`` only).

``truncate`` opens the file for writing through the root (``O_WRONLY``:
special files refused, a directory is ``EISDIR``) and ``ftruncate``-s that
fd.

Hard links: all four act on the inode, and a hard-linked file's inode is
shared by its other names, wherever they are (an outside name included):
the change would reach all of them, and corral cannot tell where they are.
So a regular file with more than one link is refused (:class:`HardLinkError`,
checked on the pinned fd, so a swap cannot slip one in) unless the Root
allows hard links (``Root(path, allow_hardlinks=True)``).  Writes that
replace (``write_bytes``, ``write_text``, ``copyfile``) replace the name and
never write through, so they stay allowed.  Where the name is acted on
(macOS), the link count is read on the name just before.
"""

from __future__ import annotations

import errno
import os
from collections.abc import Callable

from .. import _paths
from .._errors import contained_error, refuse_hard_linked
from .resolve import O_PATH, RootAPI, named_error, pin

__all__ = ["chmod", "chown", "utime", "truncate"]

_PROC_FD = "/proc/self/fd"
_MODE_MAX = 0o7777
Times = tuple[float, float] | None
Ns = tuple[int, int] | None


def _proc_available() -> bool:
    return bool(O_PATH) and os.path.isdir(_PROC_FD)


def _magic(fd: int, text: str) -> str:
    """``/proc/self/fd/<fd>`` after checking that it leads to ``fd``'s inode."""
    path = f"{_PROC_FD}/{fd}"
    try:
        via = os.stat(path)
    except OSError as exc:
        raise contained_error(errno.ENOTSUP, text, text) from exc
    mine = os.fstat(fd)
    if (via.st_dev, via.st_ino) != (mine.st_dev, mine.st_ino):
        raise contained_error(errno.ENOTSUP, text, text)
    return path


def _on_pinned(root: RootAPI, path: object, follow: bool, act: Callable[[str], None]) -> None:
    """``act(magic path)`` on the pinned inode of ``path``."""
    with pin(root, path, follow=follow) as fd:
        text = _paths.as_text(path)
        if not root.allow_hardlinks:
            refuse_hard_linked(os.fstat(fd), text)
        magic = _magic(fd, text)
        try:
            act(magic)
        except OSError as exc:
            raise named_error(exc, text) from None


def _on_name(root: RootAPI, path: object, follow: bool,
             act: Callable[[str, int], None]) -> None:
    """``act(name, parent fd)`` on the final name of ``path`` in its held
    parent (its in-root link target with ``follow``), never following that
    name; a path ending at a directory (``.``, ``d/..``) acts on ``"."`` in
    it.  A trailing ``/`` follows the final link, as the kernel does."""
    parsed = _paths.parse(path)
    follow = follow or parsed.must_be_dir
    root.stat(path, follow_symlinks=follow)  # the kernel's answer for "f/", "l/" first
    target = root.target(path, follow_final=follow)
    try:
        name = "." if target.name is None else target.name
        if not root.allow_hardlinks:
            refuse_hard_linked(os.stat(name, dir_fd=target.dir_fd, follow_symlinks=False),
                               parsed.text)
        act(name, target.dir_fd)
    except OSError as exc:
        raise named_error(exc, parsed.text) from None
    finally:
        target.close()


def chmod(root: RootAPI, path: object, mode: int, *, follow_symlinks: bool = True) -> None:
    """``os.chmod`` beneath the root (module docstring).  ``mode`` is 0 to
    0o7777 (``EINVAL`` beyond).  Raises what ``Root.open`` raises and the
    kernel's errno (``EOPNOTSUPP`` for a symlink itself on Linux)."""
    if not isinstance(mode, int) or isinstance(mode, bool) or not 0 <= mode <= _MODE_MAX:
        raise OSError(errno.EINVAL, "mode must be 0 to 0o7777", _paths.as_text(path))
    if _proc_available():
        # a pinned symlink: the kernel answers EOPNOTSUPP (no lchmod on Linux)
        _on_pinned(root, path, follow_symlinks, lambda magic: os.chmod(magic, mode))
        return
    _on_name(root, path, follow_symlinks, lambda name, dfd: _lchmod_at(name, mode, dfd))


def _lchmod_at(name: str, mode: int, dir_fd: int) -> None:
    """``fchmodat(AT_SYMLINK_NOFOLLOW)``; where the platform cannot change a
    symlink's mode, the kernel's ``EOPNOTSUPP`` (``os`` says so with
    ``NotImplementedError``, or ``ValueError`` when given a ``dir_fd``)."""
    try:
        os.chmod(name, mode, dir_fd=dir_fd, follow_symlinks=False)
    except (NotImplementedError, ValueError):
        raise OSError(errno.EOPNOTSUPP, os.strerror(errno.EOPNOTSUPP)) from None


def chown(root: RootAPI, path: object, uid: int, gid: int, *,
          follow_symlinks: bool = True) -> None:
    """``os.chown`` beneath the root (module docstring); ``-1`` leaves an id
    as it is.  Raises what ``Root.open`` raises and the kernel's errno
    (``EPERM`` where the caller may not give the file away)."""
    if _proc_available():
        _on_pinned(root, path, follow_symlinks, lambda magic: os.chown(magic, uid, gid))
        return
    _on_name(root, path, follow_symlinks,
             lambda name, dfd: os.chown(name, uid, gid, dir_fd=dfd, follow_symlinks=False))


def utime(root: RootAPI, path: object, times: Times = None, *, ns: Ns = None,
          follow_symlinks: bool = True) -> None:
    """``os.utime`` beneath the root (module docstring): ``times`` as
    ``(atime, mtime)`` seconds or ``ns`` as nanoseconds, not both
    (``ValueError``); neither sets both to now."""
    if times is not None and ns is not None:
        raise ValueError("utime: you may specify either 'times' or 'ns' but not both")
    if _proc_available():
        _on_pinned(root, path, follow_symlinks,
                   lambda magic: _set_times(magic, times, ns, None, True))
        return
    _on_name(root, path, follow_symlinks,
             lambda name, dfd: _set_times(name, times, ns, dfd, False))


def _set_times(target: str, times: Times, ns: Ns, dir_fd: int | None, follow: bool) -> None:
    if ns is None:
        os.utime(target, times, dir_fd=dir_fd, follow_symlinks=follow)
    else:
        os.utime(target, ns=ns, dir_fd=dir_fd, follow_symlinks=follow)


def truncate(root: RootAPI, path: object, length: int) -> None:
    """``os.truncate`` beneath the root (module docstring).  Raises what
    ``Root.open(path, O_WRONLY)`` raises and the kernel's errno (``EINVAL``
    for a negative length)."""
    if _paths.parse(path).must_be_dir:
        # "x/" names a directory: the kernel's ENOTDIR for anything else
        # first (Root.open refuses a FIFO there as a special file instead)
        root.stat(path)
    fd = root.open(path, os.O_WRONLY)  # a hard-linked file: refused there (Root.open)
    try:
        os.ftruncate(fd, length)
    except OSError as exc:
        raise named_error(exc, _paths.as_text(path)) from None
    finally:
        root.backend.close(fd)
