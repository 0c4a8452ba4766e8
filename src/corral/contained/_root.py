"""``Root``: an open directory, and every path resolved beneath it.

Every operation parses its path once (:mod:`._paths`), resolves it with the
one resolver (:mod:`._resolve`: the openat2 fast path or the walk, which
agree on every path), and acts on what resolution reached through the open
parent fd (:mod:`._acts`).  Nothing here does path algebra on a spelling.
"""

from __future__ import annotations

import errno
import os
import stat as st
import sys
from collections import deque
from collections.abc import Callable, Iterator
from typing import Any, NoReturn, TypeVar

from . import _acts, _paths
from ._acts import CREATE_MASK, SAFE, End, name_of
from ._backend import (FAKE_FS_REFUSAL, RENAME_EXCHANGE, RENAME_NOREPLACE, Backend, OpenBeneath,
                       OpenStatBeneath, OpenTextBeneath, _under_pyfakefs, fd_capabilities)
from ._closing import Closing
from ._errors import (ContainedError, EscapeError, InvalidPathError, RootVanishedError,
                      SymlinkError, contained_error, refuse_hard_linked)
from ._fwalk import fwalk as _fwalk
from ._handle import DirEntry, Handle, entries
from ._linux import RESOLVE_BENEATH, RESOLVE_NO_MAGICLINKS, RESOLVE_NO_SYMLINKS
from ._ops.methods import RootSurface
from ._ops.resolve import named_error
from ._paths import ParsedPath
from ._replace import HeldParent, replace_in
from ._select import default_backend
from ._resolve import (MAX_STEPS, MAX_SYMLINKS, Anchor, Create, Resolved, Walk, mapped,
                       openat2_retry, spelled_path, still_beneath, walk_open,
                       walk_open_text)
from ._target import Target

__all__ = ["Root", "DirEntry", "Handle", "Target", "MAX_SYMLINKS", "MAX_STEPS"]

_T = TypeVar("_T")
_O_PATH = getattr(os, "O_PATH", 0)
_O_TMPFILE = getattr(os, "O_TMPFILE", 0)  # it includes the O_DIRECTORY bit
_LIST_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC
# the directory a Target holds, opened so that flock may be taken on it
_HELD_LOCKABLE = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_new_resolved = tuple.__new__
_CHANGES = os.O_WRONLY | os.O_RDWR | os.O_APPEND | os.O_TRUNC  # what can change a file in place


def _acts_on_open(flags: int) -> bool:
    """Whether an open with ``flags`` changes something before its result
    can be checked (creates a name or a file, truncates): its parent must
    be shown beneath the root first (:meth:`Walk.parent`)."""
    return bool(flags & (os.O_CREAT | os.O_TRUNC)) or \
        bool(_O_TMPFILE and flags & _O_TMPFILE == _O_TMPFILE)


#: Root.open's fast path: the backend's call, the root fd, the resolve bits,
#: the anchor and its count of calls holding the fd.
_NativeCall = tuple[OpenTextBeneath, int, int, Anchor, "deque[None]"]


class Root(RootSurface, Closing):
    """A directory opened once; every path below it resolved beneath it.

    ``Root(path)`` opens ``path`` with ``O_DIRECTORY|O_CLOEXEC``.  The root
    path is the host's and trusted: symlinks in it, its last component
    included, are followed when it is opened (macOS ``/tmp`` is one);
    everything beneath it is resolved by the rules below.  The Root keeps
    the fd, never the path: renamed, it keeps working on the same directory.

    Methods mirror ``os`` and take root-relative paths (``str``, ``bytes`` or
    ``os.PathLike``).  Resolution is BENEATH, as Go's ``os.Root`` and
    ``openat2(RESOLVE_BENEATH)``: absolute paths and ``..`` past the root are
    escapes; symlinks are followed only while they stay inside (at most 40 a
    call); ``follow_symlinks=False`` is the strict mode, following none.
    Methods raise ``OSError``: the built-in subclass for the kernel's errno
    with the root-relative path as ``filename`` and the failing canonical
    prefix as ``component``, or one of the ``ContainedError`` subclasses:
    :class:`EscapeError` (``..`` past the root, an absolute path, a symlink
    leading out), :class:`SymlinkError` (any symlink, in the strict mode),
    :class:`InvalidPathError` (NUL, too long, wrong type),
    :class:`SpecialFileError` (FIFO, socket or device given to a file
    operation), :class:`HardLinkError` (a hard-linked file changed in
    place, below), :class:`RootVanishedError` (the root was removed) and
    :class:`StaleError` (a :class:`Target`'s plan no longer holds).

    Lifetime: :meth:`close` is immediate for new calls (``EBADF``, naming the
    path) while calls in flight finish on the fd, which is closed when the
    last one is done, so its number is never reused under them.
    ``copy.copy`` and ``copy.deepcopy`` give an independent Root on a new fd
    of the same directory; pickling is refused (``TypeError``).

    Hard links: a change made in place (``chmod``, ``chown``, ``utime``,
    ``truncate``, :meth:`open` / ``open_file`` for writing) of a regular
    file with more than one link raises :class:`HardLinkError` unless
    ``allow_hardlinks=True``: its other names may be outside.  Replacing
    the name (``write_bytes``, ``copyfile``, ``rename``) stays allowed.

    One difference from the kernel: ``.`` and ``..`` after a directory that
    may not be searched (``stat("dir/..")``, ``open("dir/../x")``) answer
    where the kernel says ``EACCES``: the walk pops its stack of open
    directory fds for ``..`` rather than hand it to the kernel (a rename
    could carry it out) and looks nothing up in ``dir``; the fast path falls
    back to the walk, so every backend answers alike.

    ``fast_path=False`` turns off ``openat2``; ``backend`` is for tests and
    tools (default :func:`corral.contained.default_backend`).  Thread-safe.
    """

    #: The published guarantee, as ``shutil.rmtree.avoids_symlink_attacks``:
    #: computed from what this Python and platform give (``fd_capabilities``);
    #: where it is False no Root can be made (``OSError``, ``ENOSYS``).
    avoids_symlink_attacks = fd_capabilities()

    path: str  # the host path it was opened by (informational: never used again)
    follow_symlinks: bool
    allow_hardlinks: bool

    def __init__(self, path: str | os.PathLike[str], *, follow_symlinks: bool = True,
                 backend: Backend | None = None, fast_path: bool = True,
                 allow_hardlinks: bool = False) -> None:
        chosen = backend if backend is not None else default_backend()
        given = _paths.as_text(path)
        if not given:  # abspath would make it the working directory: no directory, as os says
            raise FileNotFoundError(errno.ENOENT, os.strerror(errno.ENOENT), given)
        host = os.path.abspath(given)
        fd = os.open(host, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
        self._setup(fd, host, chosen, follow_symlinks=follow_symlinks, fast_path=fast_path,
                    owned=True)
        self.allow_hardlinks = allow_hardlinks

    @classmethod
    def from_fd(cls, fd: int, *, borrow: bool = False, follow_symlinks: bool = True,
                backend: Backend | None = None, fast_path: bool = True,
                allow_hardlinks: bool = False) -> Root:
        """A Root on the open directory ``fd``.  By default the Root uses a
        duplicate (the caller keeps and closes ``fd``); ``borrow=True`` uses
        ``fd`` itself and never closes it (the caller must keep it open while
        the Root is in use).  ``NotADirectoryError`` if ``fd`` is not a
        directory."""
        chosen = backend if backend is not None else default_backend()
        if not st.S_ISDIR(os.fstat(fd).st_mode):
            raise NotADirectoryError(errno.ENOTDIR, "not a directory", f"<fd {fd}>")
        own = fd if borrow else os.open(".", _LIST_FLAGS, dir_fd=fd)
        root = cls.__new__(cls)
        root._setup(own, _fd_path(own), chosen, follow_symlinks=follow_symlinks,
                    fast_path=fast_path, owned=not borrow)
        root.allow_hardlinks = allow_hardlinks
        return root

    def _setup(self, fd: int, path: str, backend: Backend, *, follow_symlinks: bool,
               fast_path: bool, owned: bool) -> None:
        fast = fast_path and backend.has_openat2
        refusal = None
        if not backend.avoids_symlink_attacks:
            refusal = OSError(errno.ENOSYS, "this platform cannot resolve paths beneath a "
                                            "directory fd (see fd_capabilities)")
        elif _under_pyfakefs() and not backend.fake_fs_safe:
            refusal = OSError(errno.EINVAL, FAKE_FS_REFUSAL)  # fake fds collide with real ones
        if refusal is not None:
            if owned:
                os.close(fd)
            raise refusal
        resolve = RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS
        if not follow_symlinks:
            resolve |= RESOLVE_NO_SYMLINKS
        self.path = path
        self.follow_symlinks = follow_symlinks
        self._anchor = Anchor(fd, backend, strict=not follow_symlinks, fast=fast,
                              resolve=resolve, owned=owned)
        # openat2 also refuses a ".." that a rename raced (EAGAIN): a result
        # opened without following links is where its spelling says
        self._spelled_fast = fast and backend.openat2_checks_dotdot
        native = backend.open_beneath if fast else None
        anchor = self._anchor
        self._native_open = None if native is None else _native_opener(anchor, native, resolve)
        # open's: what its one native call needs, in one attribute
        native_text = backend.open_text_beneath if fast else None
        self._native_call: _NativeCall | None = None if native_text is None else \
            (native_text, anchor.fd, resolve, anchor, anchor.users)
        # open_handle's: no link followed, so the canonical path is the spelling's
        self._native_spelled = None if native is None or not self._spelled_fast else \
            _native_opener(anchor, native, resolve | RESOLVE_NO_SYMLINKS)
        # open_handle's for a read: the same open, and the fstat it took
        native_stat = backend.open_stat_beneath if fast else None
        self._native_read = None if native_stat is None or self._native_spelled is None else \
            _native_stat_opener(anchor, native_stat, resolve | RESOLVE_NO_SYMLINKS)
        # stat's: the O_PATH open and its fstat in one C call
        self._native_stat = None if native_stat is None else \
            _native_stat_opener(anchor, native_stat, resolve)
        # open's walk in one backend call, the fast path off (walk_open_text)
        self._walk_text = not fast and backend.has_walk_open

    # -- lifecycle ------------------------------------------------------
    def close(self) -> None:
        """Refuse every later call (``EBADF``); the fd is closed once no call
        is using it.  Idempotent."""
        self._anchor.close()

    @property
    def closed(self) -> bool:
        return self._anchor.closed

    def fileno(self) -> int:
        """The root fd (``EBADF`` once closed).  It stays the Root's: valid
        only while the Root is open."""
        anchor = self._anchor
        fd = anchor.acquire(None)
        anchor.release()
        return fd

    @property
    def backend(self) -> Backend:
        return self._anchor.backend

    @property
    def stats(self) -> dict[str, int]:
        """Fast-path counters: ``openat2_eagain`` answers seen, fast paths
        ``openat2_exhausted`` by retries, and ``walk_fallbacks`` run."""
        return self._anchor.stats

    def info(self) -> dict[str, Any]:
        """Which backend and fast path this root uses, and why."""
        data = self._anchor.backend.info()
        data["fast_path"] = self._anchor.fast
        data["follow_symlinks"] = self.follow_symlinks
        return data

    def __copy__(self) -> Root:
        anchor = self._anchor
        fd = anchor.acquire(None)
        try:
            new = anchor.backend.open_at(fd, ".", _LIST_FLAGS)
        finally:
            anchor.release()
        other = type(self).__new__(type(self))
        other._setup(new, self.path, anchor.backend, follow_symlinks=self.follow_symlinks,
                     fast_path=anchor.fast, owned=True)
        other.allow_hardlinks = self.allow_hardlinks
        return other

    def __deepcopy__(self, memo: dict[int, Any]) -> Root:
        return self.__copy__()

    def __reduce_ex__(self, protocol: Any) -> NoReturn:
        raise TypeError("a corral Root is an open directory fd and cannot be pickled; "
                        "pickle its path and open a new Root from it")

    def __repr__(self) -> str:
        state = "closed" if self.closed else f"fd={self._anchor.fd}"
        return f"<corral.Root {state} backend={self._anchor.backend.name}>"

    # -- opening ----------------------------------------------------------
    def open(self, path: object, flags: int = os.O_RDONLY, mode: int = 0o666, *,
             dir_fd: int | None = None) -> int:
        """Open ``path`` beneath the root and return a new fd (``O_CLOEXEC``).

        Symlinks are followed while they stay inside (not at all with
        ``O_NOFOLLOW`` in ``flags`` for the final component, unless the path
        ends in ``/``).  FIFOs, sockets and devices raise
        :class:`SpecialFileError` unless ``O_PATH`` is given.  ``mode`` may
        carry permission bits only (0o777).  The fd may carry ``O_NONBLOCK``,
        which regular files and directories ignore.

        Opening for writing (``O_WRONLY``, ``O_RDWR``, ``O_APPEND``,
        ``O_TRUNC``) a regular file with more than one hard link raises
        :class:`HardLinkError` unless the Root allows hard links
        (``allow_hardlinks=True``): the change would reach its other names,
        which may be outside.  ``O_TRUNC`` is then applied once the file
        was checked.

        ``dir_fd``: a directory fd that a :meth:`fwalk` of this Root is
        yielding right now; ``path`` must then be one plain name, which is
        opened without following a symlink.  Any other fd (one from a walk
        that has moved on, whose number may now be another directory's, or
        one that never came from this Root) is ``OSError(EBADF)``: the fd's
        device and inode are checked against what the walk opened.
        """
        if flags & _CHANGES and not flags & _O_PATH and not self.allow_hardlinks:
            return self._open_unlinked(path, flags, mode, dir_fd)
        # the hot path of every read: _native_opener's body, in this frame
        fast = self._native_call
        if fast is None or dir_fd is not None or flags & os.O_CREAT:
            if self._walk_text and dir_fd is None and type(path) is str and \
                    type(mode) is int and not mode & ~CREATE_MASK:
                # the walk's hot path: the path's checks and the walk in one call
                fd = walk_open_text(self._anchor, path, flags | os.O_CLOEXEC)
                if fd >= 0:
                    return fd
                if fd == -1:
                    return self._open(path, flags, mode, dir_fd, fast=False, walked=True)
            return self._open(path, flags, mode, dir_fd, fast=self._anchor.fast)
        call, root_fd, resolve, anchor, users = fast
        fd = -1
        users.append(None)  # the root fd held (see Anchor)
        try:
            if not anchor.closed:
                # the path's bytes, checks, openat2 and fstat in one C call
                # (-1 for a path that is not a str: bytes, PathLike)
                fd = call(root_fd, path, flags, mode, resolve)
        except (TypeError, OverflowError):  # flags or a mode C cannot hold
            pass
        finally:
            users.pop()
            if anchor.closed and not users:
                anchor.release_last()
        if fd >= 0:
            return fd
        anchor.stats["walk_fallbacks"] += 1
        return self._open(path, flags, mode, dir_fd, fast=False)

    def _open_unlinked(self, path: object, flags: int, mode: int, dir_fd: int | None) -> int:
        """:meth:`open` for writing where hard-linked files are refused:
        opened without ``O_TRUNC``, refused on the open fd, then truncated."""
        fd = self._open_any(path, flags & ~os.O_TRUNC, mode, dir_fd)
        try:
            self._check_unlinked(fd, flags, _paths.as_text(path))
        except BaseException:
            self._anchor.backend.close(fd)
            raise
        return fd

    def _check_unlinked(self, fd: int, flags: int, text: str) -> None:
        """:class:`HardLinkError` for a hard-linked regular file open as
        ``fd``; else the ``O_TRUNC`` of ``flags``, left out of the open."""
        info = self._anchor.backend.fstat(fd)
        refuse_hard_linked(info, text)
        if flags & os.O_TRUNC and st.S_ISREG(info.st_mode):
            os.ftruncate(fd, 0)

    def _open_any(self, path: object, flags: int, mode: int, dir_fd: int | None) -> int:
        native = self._native_open
        if native is not None and dir_fd is None and not flags & os.O_CREAT:
            fd = native(path, flags, mode)  # checks, openat2 and fstat in one C call
            if fd >= 0:
                return fd
            self._anchor.stats["walk_fallbacks"] += 1
            return self._open(path, flags, mode, dir_fd, fast=False)
        return self._open(path, flags, mode, dir_fd, fast=self._anchor.fast)

    def _open(self, path: object, flags: int, mode: int, dir_fd: int | None, *,
              fast: bool, walked: bool = False) -> int:
        parsed = _paths.parse(path)
        if type(mode) is not int or mode & ~CREATE_MASK:  # (a negative mode has such bits)
            _check_mode(mode, parsed.text)
        flags |= os.O_CLOEXEC
        if dir_fd is not None:
            return self._open_child(dir_fd, parsed, flags, mode)
        anchor = self._anchor
        if fast:
            fast_fd = self._fast_open(parsed, flags, mode, anchor.resolve)
            if fast_fd is not None:
                return fast_fd
        elif not walked and (fd := walk_open(anchor, parsed, flags)) >= 0:
            return fd  # the walk and its check in one backend call (walked: made already)
        with Walk(anchor, parsed, result_checked=not _acts_on_open(flags)) as walk:
            return _acts.open_final(walk, walk.parent(), flags, mode)[0]

    def open_handle(self, path: object, flags: int = os.O_RDONLY, mode: int = 0o666) -> Handle:
        """:meth:`open`, as a :class:`Handle`: the fd and the canonical path of
        what was opened.  Raises as :meth:`open` (a hard-linked file opened
        for writing included)."""
        parsed = _paths.parse(path)
        if type(mode) is not int or mode & ~CREATE_MASK:
            _check_mode(mode, parsed.text)
        checked = bool(flags & _CHANGES and not flags & _O_PATH and not self.allow_hardlinks)
        wanted = flags
        if checked:
            flags &= ~os.O_TRUNC  # applied once the file was checked
        native = self._native_spelled
        handle = None
        read = self._native_read
        if read is not None and not flags & (_CHANGES | os.O_CREAT):
            # checks, openat2 and fstat in one C call, the fstat given back:
            # what a reader decides on before reading (Handle.opened_stat)
            opened = read(parsed.text, flags, mode)
            if opened is not None:
                handle = Handle(self, self._anchor.backend, opened[0], spelled_path(parsed),
                                opened[1])
            else:
                self._anchor.stats["walk_fallbacks"] += 1
        elif native is not None and not flags & os.O_CREAT:
            fd = native(parsed.text, flags, mode)  # checks, openat2 and fstat in one C call
            if fd >= 0:
                handle = Handle(self, self._anchor.backend, fd, spelled_path(parsed))
            else:
                self._anchor.stats["walk_fallbacks"] += 1
        if handle is None:
            fd, where = self._open_located(parsed, flags | os.O_CLOEXEC, mode,
                                           fast=native is None)
            handle = Handle(self, self._anchor.backend, fd, where)
        if checked:
            try:
                self._check_unlinked(handle.fd, wanted, parsed.text)
            except BaseException:
                handle.close()
                raise
        return handle

    def _dir_beneath(self, fd: int, path: str) -> bool:
        """Whether ``fd``, a directory this root's resolution handed out at
        the canonical ``path`` and kept open since (an extraction's held
        parent), is beneath the root now (:func:`._resolve.still_beneath`)."""
        anchor = self._anchor
        root_fd = anchor.acquire(path)
        try:
            return still_beneath(anchor, root_fd, fd, path)
        finally:
            anchor.release()

    def target(self, path: object, *, follow_final: bool = False,
               create_parents: bool = False, lockable: bool = False,
               look_at_final: bool = True, identify: bool = True) -> Target:
        """Resolve ``path`` for a mutation: see :class:`Target`.

        The parent must exist, unless ``create_parents``: then missing
        directories on the way are planned (:attr:`Target.creates`), not
        made, until :meth:`Target.make_parents`.  ``follow_final`` follows a
        final symlink (beneath the root).  ``lockable`` opens the directory
        held for reading where the resolution can (see
        :attr:`Target.held_lockable`), so ``flock`` may be taken on it
        without opening it again.  ``look_at_final=False`` (with
        ``follow_final``) leaves out the ``lstat`` that looks for a final
        link: the caller opens the entry ``O_NOFOLLOW`` next and, on
        ``ELOOP``, resolves again with it (the Target's other facts are
        those of a final name that is not a link).  ``identify=False``
        leaves out the ``fstat`` of the directory held: its identity is
        looked at when :meth:`Target.held_identity` asks, and a removed
        directory is found by the operation (the kernel creates nothing
        in one).  Raises as :meth:`open` does for the
        directories on the way (``ENOENT`` for a missing one without
        ``create_parents``)."""
        parsed = _paths.parse(path)
        held_flags = _HELD_LOCKABLE if lockable else None
        anchor = self._anchor
        probed = 0
        names = parsed.names
        if anchor.fast and len(names) > 1 and not (follow_final and look_at_final) and \
                not parsed.absolute and not parsed.final_is_dot and ".." not in names:
            # the common mutation: the parent opened with the walk's own one
            # openat2 (no link followed, so its canonical path is the
            # spelling), without a walk around it
            fd = self._open_parent(parsed.text, "/".join(names[:-1]), held_flags)
            if fd >= 0:
                if not identify:  # the common step's: its Target made here at once
                    # (tuple.__new__: the NamedTuple's own __new__ is a Python frame)
                    at = _new_resolved(Resolved, (fd, names[-1], parsed.must_be_dir,
                                                  tuple(names[:-1])))
                    return Target(self, anchor, parsed, at, fd, (), passed=(),
                                  follow_final=follow_final, ends_dotdot=False,
                                  readable=lockable, vouched=True)
                return self._parent_target(parsed, fd, follow_final=follow_final,
                                           identify=identify, readable=lockable)
            probed = -fd  # the walk's first probe, made: it goes on from there
        with Walk(anchor, parsed, create=Create.PLAN if create_parents else Create.NEVER,
                  held_flags=held_flags, probed=probed) as walk:
            at = walk.parent()
            if follow_final and look_at_final:
                at = _acts.follow_links(walk, at)
            identity = None
            if identify and not at.planned:
                try:
                    info = walk.backend.fstat(at.dir_fd)
                except OSError as exc:  # a security module refusing the look: typed
                    walk.fail(exc)
                if info.st_nlink == 0:
                    # the parent was removed (the root itself, or while resolving)
                    walk.fail(FileNotFoundError(errno.ENOENT, "removed"))
                identity = (info.st_dev, info.st_ino)
            passed = walk.passed
            fd, tail = walk.detach()
            return Target(self, self._anchor, parsed, at, fd, tail, passed=passed,
                          follow_final=follow_final, ends_dotdot=walk.ends_dotdot,
                          identity=identity if not tail else None,
                          readable=lockable and fd == walk.held_fd,
                          vouched=fd == walk.held_fd)

    def hold_parent(self, path: object) -> HeldParent | None:
        """The directory holding the file ``path``, opened by one
        ``openat2`` that follows no link (its canonical path is then the
        spelling), held for one replace of that file: see
        :class:`HeldParent`.  ``None`` where that one call cannot answer
        (the openat2 fast path not in use, a path that is not two or more
        plain names, a link or a missing directory on the way, any
        failure): nothing is raised, and the caller takes :meth:`target`,
        which says what is wrong."""
        anchor = self._anchor
        if not anchor.fast:
            return None
        if type(path) is str and len(path) <= _paths.NAME_MAX and path.isascii() and \
                "\x00" not in path:
            # the common spelling, a tool's clean path: short ASCII plain
            # names, which parse would take as they are (no length to check)
            names = path.split("/")
            if len(names) >= 2 and "" not in names and "." not in names and ".." not in names:
                name = names[-1]
                try:
                    fd = self._open_parent(path, path[:len(path) - len(name) - 1],
                                           _HELD_LOCKABLE)
                except OSError:  # the Root closed, or its directory gone: as target() says it
                    return None
                return HeldParent(anchor, fd, path, path, name) if fd >= 0 else None
        try:
            parsed = _paths.parse(path)
        except OSError:
            return None
        names = parsed.names
        if len(names) < 2 or parsed.absolute or parsed.must_be_dir or ".." in names:
            return None
        try:
            fd = self._open_parent(parsed.text, "/".join(names[:-1]), _HELD_LOCKABLE)
        except OSError:  # the Root closed, or its directory gone: as target() says it
            return None
        if fd < 0:
            return None
        return HeldParent(anchor, fd, parsed.text, "/".join(names), names[-1])

    def _open_parent(self, spelled: str, parent: str, held_flags: int | None) -> int:
        """The directory ``parent`` (plain names) holding the file ``spelled``
        names, opened by one ``openat2`` with no link followed (as
        :meth:`Walk._fast_parent` opens it): an fd, or minus the errno."""
        anchor = self._anchor
        backend = anchor.backend
        root_fd = anchor.acquire(spelled)
        try:
            return backend.openat2_or_errno(
                root_fd, parent,
                backend.dir_flags if held_flags is None else held_flags, 0,
                anchor.resolve | RESOLVE_NO_SYMLINKS)
        except OSError:  # a wrapper's fault: the walk says what is wrong
            return -errno.EIO
        finally:
            anchor.release()

    def _parent_target(self, parsed: ParsedPath, fd: int, *, follow_final: bool,
                       identify: bool, readable: bool) -> Target:
        """:meth:`target` of ``parsed`` once :meth:`_open_parent` opened
        its parent as ``fd`` (the Target's from here on)."""
        names = parsed.names
        parts = tuple(names[:-1])
        identity = None
        if identify:
            anchor = self._anchor
            try:
                info = anchor.backend.fstat(fd)
                if info.st_nlink == 0:
                    # the parent was removed (the root itself, or while resolving)
                    raise FileNotFoundError(errno.ENOENT, "removed")
            except OSError as exc:
                anchor.backend.close(fd)
                root_fd = anchor.acquire(parsed.text)
                try:
                    raise mapped(anchor, root_fd, exc, parsed.text, "/".join(parts)) from None
                finally:
                    anchor.release()
            identity = (info.st_dev, info.st_ino)
        at = Resolved(fd, names[-1], parsed.must_be_dir, parts)
        return Target(self, self._anchor, parsed, at, fd, (), passed=(),
                      follow_final=follow_final, ends_dotdot=False, identity=identity,
                      readable=readable, vouched=True)

    def _fast_open(self, parsed: ParsedPath, flags: int, mode: int, resolve: int) -> int | None:
        """The openat2 fast path: a checked fd, or ``None`` to walk instead
        (which names the failing component).  Never for ``O_CREAT``: the
        kernel checks an openat2 result beneath the root at the end of its
        lookup, but not a file it has just created, which a directory
        renamed out meanwhile puts outside; the walk opens the parent with
        openat2 (checked so) and creates in it."""
        if flags & os.O_CREAT:
            return None
        anchor = self._anchor
        # openat2 refuses O_PATH with anything but a few flags
        extra = 0 if _O_PATH and flags & _O_PATH else os.O_NONBLOCK | os.O_NOCTTY
        # openat2 refuses (EINVAL) a mode without O_CREAT/O_TMPFILE
        creating = flags & os.O_CREAT or (_O_TMPFILE and flags & _O_TMPFILE == _O_TMPFILE)
        rootfd = anchor.acquire(parsed.text)
        try:
            fd = openat2_retry(anchor, rootfd, parsed.text, flags | extra,
                               mode if creating else 0, resolve)
            if fd is None:
                return None
            try:
                _acts.checked_info(anchor.backend, fd, flags, parsed.text, parsed.text,
                                   must_be_dir=False)
                return fd
            except OSError:
                return None  # refused either way; the walk says where
        finally:
            anchor.release()

    def _open_located(self, parsed: ParsedPath, flags: int, mode: int, *,
                      fast: bool = True) -> tuple[int, str]:
        """Open as :meth:`open` and also say where: (fd, canonical path)."""
        anchor = self._anchor
        if fast and self._spelled_fast:
            fd = self._fast_open(parsed, flags, mode, anchor.resolve | RESOLVE_NO_SYMLINKS)
            if fd is not None:
                return fd, spelled_path(parsed)
        elif (fd := walk_open(anchor, parsed, flags)) >= 0:
            return fd, spelled_path(parsed)  # plain names, no link followed
        with Walk(anchor, parsed, result_checked=not _acts_on_open(flags)) as walk:
            fd, at = _acts.open_final(walk, walk.parent(), flags, mode)
            return fd, at.path

    def _open_child(self, dir_fd: int, parsed: ParsedPath, flags: int, mode: int) -> int:
        text = parsed.text
        if not _paths.is_name(text):
            raise InvalidPathError("with dir_fd, the path must be one name", text)
        anchor = self._anchor
        anchor.acquire(text)
        anchor.release()
        backend = anchor.backend
        _check_vouched(anchor, dir_fd, text)
        try:
            fd = backend.open_at(dir_fd, text, flags | SAFE, mode)
        except OSError as exc:
            if exc.errno in (errno.ENXIO, errno.ENODEV):
                _acts.refuse_special(backend, dir_fd, text, text, text)
            raise contained_error(exc.errno, text, text) from None
        _acts.checked_info(backend, fd, flags, text, text, must_be_dir=False)
        return fd

    # -- looking ------------------------------------------------------------
    def stat(self, path: object, *, follow_symlinks: bool = True) -> os.stat_result:
        """``os.stat`` beneath the root; ``follow_symlinks=False`` is ``lstat``
        (a path ending in ``/`` follows anyway, as the kernel does)."""
        parsed = _paths.parse(path)
        follow = follow_symlinks or parsed.must_be_dir
        anchor = self._anchor
        if anchor.fast and len(parsed.names) > 1 and not parsed.absolute:
            info = self._fast_stat(parsed, follow)
            if info is not None:
                return info
        return _acts.answered(anchor, parsed,
                              lambda walk, at: _acts.stat_final(walk, at, follow=follow))

    def _fast_stat(self, parsed: ParsedPath, follow: bool) -> os.stat_result | None:
        flags = _O_PATH | os.O_CLOEXEC | (0 if follow else os.O_NOFOLLOW)
        if parsed.must_be_dir:
            flags |= os.O_DIRECTORY
        anchor = self._anchor
        native = self._native_stat
        if native is not None:
            # openat2 and fstat in one C call, which refuses what the code
            # below turns away (a removed directory): the walk then answers
            opened = native(parsed.text, flags, 0)
            if opened is None:
                anchor.stats["walk_fallbacks"] += 1
                return None
            anchor.backend.close(opened[0])
            return opened[1]
        rootfd = anchor.acquire(parsed.text)
        try:
            fd = openat2_retry(anchor, rootfd, parsed.text, flags, 0, anchor.resolve)
            if fd is None:
                return None
            try:
                info = anchor.backend.fstat(fd)
            finally:
                anchor.backend.close(fd)
        finally:
            anchor.release()
        if info.st_nlink == 0 and st.S_ISDIR(info.st_mode):  # "a/.." of a removed root
            return None
        return info

    def lstat(self, path: object) -> os.stat_result:
        """``os.lstat`` beneath the root (a final symlink is not followed)."""
        return self.stat(path, follow_symlinks=False)

    def exists(self, path: object) -> bool:
        """Whether ``path`` resolves beneath the root (``False`` for escapes)."""
        try:
            self.stat(path)
        except (FileNotFoundError, NotADirectoryError, EscapeError, SymlinkError):
            return False
        except OSError as exc:
            if exc.errno == errno.ELOOP:
                return False
            raise
        return True

    def realpath(self, path: object, *, strict: bool = True) -> str:
        """The canonical root-relative path ``path`` resolves to, in-root
        symlinks and ``..`` followed (``"."`` for the root).  The final
        component must exist unless ``strict=False``, where a missing final
        name is kept as written (its parent must exist).  Escapes raise as
        for :meth:`open`."""
        parsed = _paths.parse(path)
        if self._anchor.fast and _plain_below(parsed) and self._fast_real(parsed):
            return spelled_path(parsed)
        return _acts.answered(self._anchor, parsed,
                              lambda walk, at: _acts.real_final(walk, at, strict=strict))

    def _fast_real(self, parsed: ParsedPath) -> bool:
        """Whether one ``openat2`` of the whole path, no link followed,
        reaches an entry that is not a link: its canonical path is then the
        spelling.  ``False`` to walk instead (a link on the way or at the
        end, a missing name: the walk says what is wrong)."""
        return bool(self._fast_look(parsed, lambda backend, fd:
                                    not st.S_ISLNK(backend.fstat(fd).st_mode), no_links=True))

    def _fast_look(self, parsed: ParsedPath, look: Callable[[Backend, int], _T], *,
                   no_links: bool) -> _T | None:
        """``look`` at the entry pinned by one ``openat2`` of the whole path
        (``O_PATH|O_NOFOLLOW``; the kernel shows it beneath the root at the
        end of the lookup; with ``no_links`` no link on the way either).
        ``None`` where the open or the look fails: the caller walks instead,
        and the walk says what is wrong."""
        anchor = self._anchor
        backend = anchor.backend
        root_fd = anchor.acquire(parsed.text)
        try:
            fd = backend.openat2_or_errno(root_fd, parsed.text,
                                          _O_PATH | os.O_NOFOLLOW | os.O_CLOEXEC, 0,
                                          anchor.resolve | (RESOLVE_NO_SYMLINKS if no_links else 0))
            if fd < 0:
                return None
            try:
                return look(backend, fd)
            finally:
                backend.close(fd)
        except OSError:  # a look refused (not a link...), a wrapper's fault
            return None
        finally:
            anchor.release()

    def listdir(self, path: object = ".") -> list[str]:
        """Names in the directory ``path`` (unsorted, like ``os.listdir``)."""
        fd = self.open(path, os.O_RDONLY | os.O_DIRECTORY)
        backend = self._anchor.backend
        try:
            with backend.scandir(fd) as it:
                return [entry.name for entry in it]
        finally:
            backend.close(fd)

    def scandir(self, path: object = ".", *, stat: bool = False) -> list[DirEntry]:
        """Entries of the directory ``path``, as detached :class:`DirEntry`
        objects (unsorted) whose paths are beneath its canonical path.
        Nothing is followed to classify an entry.

        ``stat=True`` also takes each entry's ``lstat`` relative to the open
        directory (one ``fstatat`` each, no re-resolution); an entry removed
        meanwhile is left out."""
        fd, where = self._open_located(_paths.parse(path), _LIST_FLAGS, 0)
        backend = self._anchor.backend
        try:
            return entries(self, backend, fd, where, stat=stat)
        finally:
            backend.close(fd)

    def readlink(self, path: object) -> str:
        """The text of the symlink ``path`` (whatever it points at)."""
        parsed = _paths.parse(path)
        if self._anchor.fast and _plain_below(parsed):
            text = self._fast_readlink(parsed)
            if text is not None:
                return text
        return _acts.answered(self._anchor, parsed, _read_link)

    def _fast_readlink(self, parsed: ParsedPath) -> str | None:
        """The text of the link pinned by one ``openat2`` of the whole path;
        ``None`` to walk instead (not a link, missing...)."""
        return self._fast_look(parsed, lambda backend, fd: backend.readlink_at(fd, ""),
                               no_links=False)

    def read_bytes(self, path: object) -> bytes:
        """The whole content of the regular file ``path``."""
        fd = self.open(path, os.O_RDONLY)
        backend = self._anchor.backend
        try:
            info = backend.fstat(fd)
            if st.S_ISDIR(info.st_mode):
                text = _paths.as_text(path)
                raise contained_error(errno.EISDIR, text, text)
            chunks = []
            while True:
                chunk = backend.read(fd, max(info.st_size, 65536))
                if not chunk:
                    break
                chunks.append(chunk)
            return b"".join(chunks)
        finally:
            backend.close(fd)

    # -- changing ------------------------------------------------------------
    def mkdir(self, path: object, mode: int = 0o777) -> None:
        """``os.mkdir`` beneath the root; never follows a final symlink."""
        parsed = _paths.parse(path)
        _check_mode(mode, parsed.text)
        with Walk(self._anchor, parsed) as walk:
            at = walk.parent()
            name = name_of(walk, at, _acts.MKDIR)
            try:
                walk.backend.mkdir_at(at.dir_fd, name, mode)
            except OSError as exc:
                _acts.acted(walk, at)
                walk.fail(exc, name)
            _acts.acted(walk, at)

    def makedirs(self, path: object, mode: int = 0o777, exist_ok: bool = False, *,
                 dry_run: bool = False) -> list[str]:
        """Create ``path`` and its missing parents; return the canonical
        root-relative directories created, outermost first (as
        ``os.makedirs``, a directory made only to be left by a later ``..``
        is among them).

        ``dry_run=True`` creates nothing and returns what would be created
        (raising what a real run would raise for what already exists): the
        same resolution, so a host can authorize the list first.  Without
        ``exist_ok`` an existing leaf is ``FileExistsError``, as
        ``os.makedirs``.
        """
        parsed = _paths.parse(path)
        _check_mode(mode, parsed.text)
        with Walk(self._anchor, parsed, create=Create.PLAN if dry_run else Create.MAKE,
                  mode=mode) as walk:
            at = walk.parent()
            if at.name is not None:
                self._make_leaf(walk, at, mode, exist_ok=exist_ok)
            created = list(walk.created)
            if not created and not exist_ok:
                # "d/.", "a/..": the leaf is a directory that exists
                raise contained_error(errno.EEXIST, walk.text, at.path)
        return created

    def _make_leaf(self, walk: Walk, at: Resolved, mode: int, *, exist_ok: bool) -> None:
        """makedirs' last directory: made, or there already (a link followed
        only with ``exist_ok``, and then it must lead to a directory)."""
        assert at.name is not None
        backend = walk.backend
        if at.planned:
            walk.plan_leaf(at)
            return
        info: os.stat_result | None
        if walk.create is Create.MAKE:
            try:
                # nothing is resolved beneath the leaf, so it needs no
                # O_NOFOLLOW reopen (as os.makedirs: one mkdirat)
                backend.mkdir_at(at.dir_fd, at.name, mode)
            except OSError as exc:
                _acts.acted(walk, at)
                if exc.errno != errno.EEXIST:
                    walk.fail(exc, at.name)
            else:
                # checked after, in a directory this walk made too: that one
                # may have left the root since it was shown
                _acts.acted(walk, at)
                walk.created[at.path] = None
                return
            info = _acts.lstat_or_none(backend, at.dir_fd, at.name)
        else:
            try:
                info = backend.lstat_at(at.dir_fd, at.name)
            except FileNotFoundError:
                walk.plan_leaf(at)
                return
            except OSError as exc:
                walk.fail(exc, at.name)
        if walk.created and info is not None and st.S_ISDIR(info.st_mode):
            return  # a directory this call made on the way, as in "x/y/../y"
        if not exist_ok:
            raise contained_error(errno.EEXIST, walk.text, at.path)
        _leaf_is_dir(walk, at)

    def remove(self, path: object) -> None:
        """``os.remove``: unlink a non-directory (a symlink itself, never its target)."""
        self._unlink(path, directory=False)

    unlink = remove

    def rmdir(self, path: object) -> None:
        """``os.rmdir``: remove an empty directory (a symlink is ``ENOTDIR``)."""
        self._unlink(path, directory=True)

    def _unlink(self, path: object, *, directory: bool) -> None:
        with Walk(self._anchor, _paths.parse(path)) as walk:
            at = walk.parent()
            name = name_of(walk, at, _acts.RMDIR if directory else _acts.REMOVE)
            try:
                if directory:
                    walk.backend.rmdir_at(at.dir_fd, name)
                else:
                    walk.backend.unlink_at(at.dir_fd, name)
            except OSError as exc:
                _acts.acted(walk, at)
                walk.fail(exc, name)
            _acts.acted(walk, at)

    def symlink(self, target: str, path: object) -> None:
        """Create symlink ``path`` with text ``target``.  Nothing is resolved
        through it here; later resolution keeps it beneath the root."""
        text = _paths.as_text(target)
        if "\x00" in text:
            raise InvalidPathError("symlink target contains a NUL byte", None)
        if not text.isascii():
            try:
                text.encode("utf-8", "surrogateescape")
            except UnicodeEncodeError:  # a lone surrogate no escape stands for: no bytes
                raise InvalidPathError("symlink target cannot be encoded", None) from None
        with Walk(self._anchor, _paths.parse(path)) as walk:
            at = walk.parent()
            name = name_of(walk, at, _acts.SYMLINK)
            try:
                walk.backend.symlink_at(text, at.dir_fd, name)
            except OSError as exc:
                _acts.acted(walk, at)
                walk.fail(exc, name)
            _acts.acted(walk, at)

    def rename(self, src: object, dst: object, *, replace: bool = True,
               exchange: bool = False) -> None:
        """Rename ``src`` to ``dst``, both beneath the root.

        ``replace=False`` refuses an existing ``dst`` atomically
        (``FileExistsError``; ``renameat2(RENAME_NOREPLACE)`` on Linux,
        ``renameatx_np(RENAME_EXCL)`` on Darwin).  ``exchange=True`` swaps
        the two atomically (both must exist; a ``dst/`` must be a directory).
        Neither end's final symlink is followed.
        """
        sparsed, dparsed = _paths.parse(src), _paths.parse(dst)
        flags = RENAME_EXCHANGE if exchange else (0 if replace else RENAME_NOREPLACE)
        anchor = self._anchor
        with Walk(anchor, sparsed) as swalk:
            sat = swalk.parent()  # as the kernel: the source first, then the destination
            with Walk(anchor, dparsed) as dwalk:
                dat = dwalk.parent()
                self._rename_at(swalk, sat, dwalk, dat, flags)

    def link(self, src: object, dst: object) -> None:
        """``os.link(src, dst, follow_symlinks=False)``, both ends beneath
        the root: ``linkat`` on the two resolved names without
        ``AT_SYMLINK_FOLLOW``, so a final symlink at ``src`` is linked itself
        (a second name for the link), never its target: an in-root symlink
        to an outside file cannot become an in-root hard link to that file.

        Raises what the root raises for either path (escapes, missing
        parents), and the kernel's answers: ``EPERM`` for a directory,
        ``EEXIST`` for an existing ``dst``, ``ENOENT`` for a missing ``src``
        (errors name the end that failed)."""
        sparsed, dparsed = _paths.parse(src), _paths.parse(dst)
        anchor = self._anchor
        backend = anchor.backend
        with Walk(anchor, sparsed) as swalk:
            sat = swalk.parent()
            if sat.name is None:
                raise contained_error(errno.EPERM, sparsed.text, sat.path)
            if sat.must_be_dir:  # "src/" names what src leads to, as the kernel does
                is_dir = st.S_ISDIR(self.stat(src).st_mode)
                raise contained_error(errno.EPERM if is_dir else errno.ENOTDIR, sparsed.text,
                                      sparsed.text)
            with Walk(anchor, dparsed) as dwalk:
                dat = dwalk.parent()
                if dat.name is None:
                    raise contained_error(errno.EEXIST, dparsed.text, dat.path)
                if dat.must_be_dir:
                    present = _acts.lstat_or_none(backend, dat.dir_fd, dat.name) is not None
                    raise contained_error(errno.EEXIST if present else errno.ENOENT,
                                          dparsed.text, dparsed.text)
                try:
                    backend.link_at(sat.dir_fd, sat.name, dat.dir_fd, dat.name)
                except OSError as exc:
                    _acts.acted(swalk, sat)
                    _acts.acted(dwalk, dat)
                    blame = dparsed.text if exc.errno == errno.EEXIST or \
                        _acts.lstat_or_none(backend, sat.dir_fd, sat.name) is not None \
                        else sparsed.text
                    raise named_error(exc, blame) from None
                # an outside file linked in, or one of the root's linked out
                _acts.acted(swalk, sat)
                _acts.acted(dwalk, dat)

    def _rename_at(self, swalk: Walk, sat: Resolved, dwalk: Walk, dat: Resolved,
                   flags: int) -> None:
        anchor = self._anchor
        dst_op = _acts.RENAME_DST_NOREPLACE if flags & RENAME_NOREPLACE else _acts.RENAME_END
        dname = name_of(dwalk, dat, dst_op)  # as the kernel: both ends resolved first
        sname = name_of(swalk, sat, _acts.RENAME_END)
        try:
            _acts.rename_names(anchor.backend,
                               End(sat.dir_fd, sname, sat.must_be_dir, swalk.text, sat.path),
                               End(dat.dir_fd, dname, dat.must_be_dir, dwalk.text, dat.path),
                               flags)
        except OSError as exc:
            _acts.acted(swalk, sat)
            _acts.acted(dwalk, dat)
            if isinstance(exc, FileNotFoundError) and anchor.root_gone(swalk.fds[0]):
                raise RootVanishedError("the root directory no longer exists") from None
            raise
        # either end moved out meanwhile: an outside entry pulled in, or one
        # of the root's moved out
        _acts.acted(swalk, sat)
        _acts.acted(dwalk, dat)

    def write_bytes(self, path: object, data: bytes | bytearray | memoryview, *,
                    mode: int | None = None, fsync: bool = True, exclusive: bool = False,
                    follow_symlinks: bool = True) -> None:
        """Replace (or create) the file ``path`` with ``data``, atomically.

        The bytes go to a temporary file in the same directory, which is
        flushed (``fsync``) and renamed over the target: a reader sees the
        old content or the new, and a failure (``ENOSPC``...) leaves the old
        content as it was.  A replaced file's permission bits, owner and
        group (where permitted) and extended attributes are kept, and the
        temporary file is 0600 until then (``_replace.replace_in`` says what
        is not kept); a new file gets ``mode`` (default 0o666 less the
        umask).  ``exclusive=True``
        refuses an existing target (``FileExistsError``) atomically.  With
        ``follow_symlinks=False`` a final symlink is replaced itself rather
        than followed (inside the root) to its target.  A hard link is
        replaced, never written through.
        """
        parsed = _paths.parse(path)
        if mode is not None:
            _check_mode(mode, parsed.text)
        # bytes go as they are; another buffer is checked (and cast to bytes) here
        view = data if type(data) is bytes else memoryview(data).cast("B")
        op = _acts.WRITE_EXCL if exclusive else _acts.WRITE
        follow = follow_symlinks and not exclusive
        backend = self._anchor.backend
        with Walk(self._anchor, parsed) as walk:
            at = walk.parent()
            while True:
                name = name_of(walk, at, op)
                acting = False
                try:
                    current = _acts.lstat_or_none(backend, at.dir_fd, name)
                    if current is not None and follow and st.S_ISLNK(current.st_mode):
                        at = walk.follow(at)
                        continue
                    _acts.write_checks(current, exclusive=exclusive, text=walk.text,
                                       where=at.path)
                    acting = True
                    replace_in(backend, at.dir_fd, name, view, current=current, mode=mode,
                               fsync=fsync, exclusive=exclusive)
                except OSError as exc:
                    if acting:
                        _acts.acted(walk, at)
                    walk.fail(exc, name)
                _acts.acted(walk, at)
                return

    # -- trees ----------------------------------------------------------------
    def walk(self, top: object = ".", topdown: bool = True,
             onerror: Callable[[OSError], None] | None = None
             ) -> Iterator[tuple[str, list[str], list[str]]]:
        """``os.walk`` beneath the root, on fds: ``(dirpath, dirnames,
        filenames)`` with canonical root-relative ``dirpath``.

        Symlinks are never followed and always listed in ``filenames`` (even
        one that points at a directory: classifying it would mean following
        it).  With ``topdown`` the caller may prune ``dirnames`` in place.
        """
        for dirpath, dirnames, filenames, _fd in self.fwalk(top, topdown, onerror):
            yield dirpath, dirnames, filenames

    def fwalk(self, top: object = ".", topdown: bool = True,
              onerror: Callable[[OSError], None] | None = None
              ) -> Iterator[tuple[str, list[str], list[str], int]]:
        """:meth:`walk` plus each directory's fd, as ``os.fwalk``.  The fd is
        valid until the next iteration; pass it to :meth:`open` as ``dir_fd``."""
        try:
            fd, top_text = self._open_located(_paths.parse(top), _LIST_FLAGS, 0)
        except OSError as exc:
            if onerror is not None:
                onerror(exc)
                return
            raise
        yield from _fwalk(self._anchor, fd, top_text, topdown, onerror)


def _check_vouched(anchor: Anchor, dir_fd: int, text: str) -> None:
    """``EBADF`` unless ``dir_fd`` is a directory a walk of this root is
    yielding now, still the same directory (``fstat``: a number closed and
    reused meanwhile is someone else's)."""
    expected = anchor.walking.get(dir_fd)
    if expected is not None:
        try:
            info = anchor.backend.fstat(dir_fd)
        except OSError:
            expected = None
        else:
            if (info.st_dev, info.st_ino) != expected:
                expected = None
    if expected is None:
        raise OSError(errno.EBADF, "dir_fd is not a directory this Root's fwalk is yielding",
                      text)


def _native_opener(anchor: Anchor, call: OpenBeneath, resolve: int
                   ) -> Callable[[object, int, int], int]:
    """Root.open's fast path around the backend's one native call, with
    the ``resolve`` bits given: the fd, or -1 to take the slow way (which
    raises what is wrong, EBADF included).  The root fd is held across the
    call (see :class:`Anchor`); its number can be kept here, since it only
    changes once no call holds it."""
    users = anchor.users
    hold, drop = users.append, users.pop
    root_fd = anchor.fd
    encoding, errors = sys.getfilesystemencoding(), "surrogateescape"

    def open_fast(path: object, flags: int, mode: int) -> int:
        try:
            data = path.encode(encoding, errors)  # type: ignore[attr-defined]
        except (AttributeError, UnicodeError):  # bytes, PathLike, lone surrogates
            return -1
        hold(None)
        try:
            if anchor.closed:
                return -1
            fd: int = call(root_fd, data, len(data), flags, mode, resolve)
            return fd
        except (TypeError, OverflowError):  # flags or a mode C cannot hold: the slow way says so
            return -1
        finally:
            drop()
            if anchor.closed and not users:
                anchor.release_last()

    return open_fast


def _native_stat_opener(anchor: Anchor, call: OpenStatBeneath, resolve: int
                        ) -> Callable[[str, int, int], tuple[int, os.stat_result] | None]:
    """:func:`_native_opener` around the backend's ``open_stat_beneath``:
    the fd and the fstat the open took, or ``None`` to take the slow way."""
    users = anchor.users
    hold, drop = users.append, users.pop
    root_fd = anchor.fd

    def open_read(path: str, flags: int, mode: int) -> tuple[int, os.stat_result] | None:
        hold(None)
        try:
            if anchor.closed:
                return None
            opened = call(root_fd, path, flags, mode, resolve)
            return None if isinstance(opened, int) else opened  # -1: the slow way
        except (TypeError, OverflowError):  # flags or a mode C cannot hold: the slow way says so
            return None
        finally:
            drop()
            if anchor.closed and not users:
                anchor.release_last()

    return open_read


def _leaf_is_dir(walk: Walk, at: Resolved) -> None:
    """makedirs(exist_ok=True) of an existing leaf: it must be a directory,
    a link followed beneath the root.  What is there and is not one (a file,
    a dangling link, a loop) is ``EEXIST``, as ``os.makedirs`` says; an
    escape or a link in the strict mode is refused as such."""
    backend = walk.backend
    first = at
    try:
        while at.name is not None:
            fd = -1
            try:
                fd = backend.open_at(at.dir_fd, at.name, backend.dir_flags)
            except OSError as exc:
                if exc.errno in (errno.ENOTDIR, errno.ELOOP) and walk.is_link(at):
                    at = walk.follow(at)
                    continue
                raise
            backend.close(fd)
            return
    except ContainedError:
        raise
    except OSError:
        raise contained_error(errno.EEXIST, walk.text, first.path) from None


def _fd_path(fd: int) -> str:
    """Where the kernel says the directory ``fd`` is, for display only."""
    try:
        if sys.platform == "darwin":
            import fcntl
            return os.fsdecode(fcntl.fcntl(fd, fcntl.F_GETPATH, bytes(1024)).rstrip(b"\0"))
        return os.readlink(f"/proc/self/fd/{fd}")
    except OSError:
        return f"<fd {fd}>"


def _check_mode(mode: int, text: str) -> None:
    if not isinstance(mode, int) or mode < 0 or mode & ~CREATE_MASK:
        raise OSError(errno.EINVAL, "mode may carry permission bits (0o777) only", text)



def _read_link(walk: Walk, at: Resolved) -> str:
    """:meth:`Root.readlink`'s look at the resolved name, decided on the
    parent (:func:`._acts.decided`)."""
    name = name_of(walk, at, _acts.READLINK)
    try:
        text = walk.backend.readlink_at(at.dir_fd, name)
    except OSError as exc:
        _acts.decided(walk, at, failed=True)
        walk.fail(exc, name)
    _acts.decided(walk, at)
    return text


def _plain_below(parsed: ParsedPath) -> bool:
    """Whether ``parsed`` is two or more plain names without a trailing
    ``/``: the paths whose look a whole-path ``openat2`` answers in one step
    (one name is looked at in the root's own fd, which needs no check)."""
    names = parsed.names
    return len(names) > 1 and not parsed.must_be_dir and not parsed.absolute and \
        not parsed.final_is_dot and "." not in names and ".." not in names
