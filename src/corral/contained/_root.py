"""``Root``: an open directory, and every path resolved beneath it.

Theory of operation
-------------------
A path is parsed once (``_paths.parse``), then resolved one of two ways:

* the fast path, Linux ``openat2(RESOLVE_BENEATH|RESOLVE_NO_MAGICLINKS)``: one
  system call, the kernel enforces containment.  ``EAGAIN`` (a concurrent
  rename somewhere on the system) is retried at least 32 times within a
  deadline.  Any failure of the fast path re-runs the walk, which is secure
  by itself and also produces the precise error (which component failed,
  which kind of escape).  Nothing ever falls back to a plain ``openat``.
* the walk: one component at a time from a stack of open directory fds.
  Each component is opened with ``O_NOFOLLOW|O_DIRECTORY``; a symlink is
  read with ``readlinkat`` and its target spliced into the pending
  components (absolute targets are escapes; at most 40 links per call); ``..``
  pops the stack and is never handed to the kernel, so a directory moved out
  from under us cannot take the walk with it.

Final components are handled by the operation: opened with
``O_NOFOLLOW|O_NONBLOCK|O_NOCTTY|O_CLOEXEC`` and ``fstat``-ed before use (a
FIFO or device is refused, never waited on), created with
``O_CREAT|O_NOFOLLOW`` in the resolved parent, or acted on by name in the
resolved parent (``unlinkat``, ``mkdirat``, ``renameat``), which never
follows a final symlink.  A trailing ``/`` is stripped before any
``O_NOFOLLOW`` open and re-imposed as "must be a directory".
"""

from __future__ import annotations

import errno
import os
import stat as st
import threading
import time
from typing import Callable, Iterator, NoReturn

from . import _paths
from ._backend import (RENAME_EXCHANGE, RENAME_NOREPLACE, Backend, _under_pyfakefs,
                       default_backend)
from ._errors import (EscapeError, InvalidPathError, RootVanishedError, SpecialFileError,
                      SymlinkError, contained_error)
from ._paths import ParsedPath
from ._ops import RootSurface
from ._replace import replace_in
from ._linux import RESOLVE_BENEATH, RESOLVE_NO_MAGICLINKS, RESOLVE_NO_SYMLINKS

__all__ = ["Root", "DirEntry"]

MAX_SYMLINKS = 40  # the kernel's MAXSYMLINKS; the 41st link is ELOOP
MAX_STEPS = 4096  # components visited in one call, links included
OPENAT2_MIN_RETRIES = 32
OPENAT2_MAX_RETRIES = 256
OPENAT2_DEADLINE = 0.05  # seconds; after the minimum retries

_O_PATH = getattr(os, "O_PATH", 0)
_O_TMPFILE = getattr(os, "O_TMPFILE", 0)  # it includes the O_DIRECTORY bit
_SAFE = os.O_NOFOLLOW | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC
_CREATE_MASK = 0o777
_SPECIAL_KINDS = {st.S_IFIFO: "fifo", st.S_IFSOCK: "socket", st.S_IFCHR: "char_device",
                  st.S_IFBLK: "block_device"}
_FOLLOW = object()  # a final visit's answer: "this is a symlink, follow it"


class _Walk:
    """The fd stack of one resolution: ``fds[0]`` is the root (not owned)."""

    __slots__ = ("fds", "names", "backend", "must_be_dir")

    def __init__(self, root_fd: int, backend: Backend, must_be_dir: bool = False) -> None:
        self.fds = [root_fd]
        self.names: list[str] = []
        self.backend = backend
        # a trailing "/" on the path, or on the target of a final symlink
        self.must_be_dir = must_be_dir

    @property
    def top(self) -> int:
        return self.fds[-1]

    def push(self, fd: int, name: str) -> None:
        self.fds.append(fd)
        self.names.append(name)

    def pop(self) -> None:
        self.backend.close(self.fds.pop())
        self.names.pop()

    def where(self, name: str | None = None) -> str:
        """Root-relative text of the top directory (plus ``name``)."""
        parts = self.names if name is None else [*self.names, name]
        return _paths.join(parts)

    def close(self) -> None:
        fds = self.fds
        while len(fds) > 1:
            _close_quietly(self.backend, fds.pop())
        self.names.clear()

    def __enter__(self) -> "_Walk":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class DirEntry:
    """One entry of :meth:`Root.scandir`, detached from any fd.

    ``name`` is the entry's name and ``path`` its root-relative path.  The
    ``is_*`` methods answer without following symlinks unless asked; a link
    is followed only beneath the root (an outward link is not a directory).
    """

    __slots__ = ("name", "path", "_kind", "_root", "_lstat")

    def __init__(self, root: "Root", path: str, name: str, kind: str,
                 lstat: os.stat_result | None = None) -> None:
        self.name, self.path, self._kind, self._root = name, path, kind, root
        self._lstat = lstat

    @property
    def kind(self) -> str:
        """``"file"``, ``"dir"``, ``"symlink"`` or ``"other"`` (not following links)."""
        return self._kind

    def is_symlink(self) -> bool:
        return self._kind == "symlink"

    def is_dir(self, *, follow_symlinks: bool = True) -> bool:
        if self._kind == "symlink" and follow_symlinks:
            return self._followed_mode(st.S_ISDIR)
        return self._kind == "dir"

    def is_file(self, *, follow_symlinks: bool = True) -> bool:
        if self._kind == "symlink" and follow_symlinks:
            return self._followed_mode(st.S_ISREG)
        return self._kind == "file"

    def stat(self, *, follow_symlinks: bool = True) -> os.stat_result:
        """The entry's stat: taken while listing when ``scandir(stat=True)``
        (and not a link to follow), else resolved again beneath the root."""
        if self._lstat is not None and not (follow_symlinks and self._kind == "symlink"):
            return self._lstat
        return self._root.stat(self.path, follow_symlinks=follow_symlinks)

    def _followed_mode(self, test: Callable[[int], bool]) -> bool:
        try:
            return test(self._root.stat(self.path).st_mode)
        except OSError:
            return False

    def __repr__(self) -> str:
        return f"<corral DirEntry {self.path!r} {self._kind}>"


class Root(RootSurface):
    """A directory opened once; every path below it resolved beneath it.

    ``Root(path)`` opens ``path`` with ``O_DIRECTORY|O_NOFOLLOW|O_CLOEXEC``.
    Methods mirror ``os`` and take root-relative paths (``str``, ``bytes`` or
    ``os.PathLike``).  They raise ``OSError``: the built-in subclass for the
    kernel's errno with the root-relative path as ``filename`` and the
    failing prefix as ``component``, or one of the ``ContainedError``
    subclasses: :class:`EscapeError` (``..`` past the root, an absolute path,
    a symlink leading out), :class:`SymlinkError` (any symlink, when opened
    with ``follow_symlinks=False``), :class:`InvalidPathError` (NUL, too long,
    wrong type), :class:`SpecialFileError` (FIFO, socket or device given to a
    file operation) and :class:`RootVanishedError` (the root was removed).

    ``follow_symlinks=False`` is the strict mode: no symlink is followed
    anywhere in a path.  ``fast_path=False`` turns off ``openat2``.
    ``backend`` is for tests and tools; the default comes from
    :func:`corral.contained.default_backend`.

    Thread-safe: a Root holds no state but its fd.
    """

    #: The published guarantee, as ``shutil.rmtree.avoids_symlink_attacks``.
    avoids_symlink_attacks = True

    def __init__(self, path: str | os.PathLike[str], *, follow_symlinks: bool = True,
                 backend: Backend | None = None, fast_path: bool = True) -> None:
        self._backend = backend if backend is not None else default_backend()
        self.path = os.path.abspath(_paths.as_text(path))
        self._fd: int | None = os.open(self.path,
                                       os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC)
        self.follow_symlinks = follow_symlinks
        self._fast = fast_path and self._backend.has_openat2
        if _under_pyfakefs():
            # pyfakefs fds are small integers that collide with real ones: a
            # real system call on one would act on a real directory.
            if self._backend.name == "native":
                os.close(self._fd)
                self._fd = None
                raise OSError(errno.EINVAL, "the native backend cannot run under pyfakefs; "
                                            "pass backend=OsBackend(openat2=False)")
            self._fast = False
        resolve = RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS
        self._resolve_flags = resolve if follow_symlinks else resolve | RESOLVE_NO_SYMLINKS
        self._vanished = False
        self._stats_lock = threading.Lock()
        #: Fast-path counters: EAGAIN answers seen, and walks run after a failed fast path.
        self.stats = {"openat2_eagain": 0, "openat2_exhausted": 0, "walk_fallbacks": 0}

    # -- lifecycle ------------------------------------------------------
    def close(self) -> None:
        fd, self._fd = self._fd, None
        if fd is not None:
            os.close(fd)

    @property
    def closed(self) -> bool:
        return self._fd is None

    def fileno(self) -> int:
        return self._rootfd()

    @property
    def backend(self) -> Backend:
        return self._backend

    def info(self) -> dict:
        """Which backend and fast path this root uses, and why."""
        data = self._backend.info()
        data["fast_path"] = self._fast
        data["follow_symlinks"] = self.follow_symlinks
        return data

    def __enter__(self) -> "Root":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __del__(self) -> None:
        try:
            self.close()
        except Exception:
            pass

    def __repr__(self) -> str:
        state = "closed" if self._fd is None else f"fd={self._fd}"
        return f"<corral.Root {state} backend={self._backend.name}>"

    def _rootfd(self) -> int:
        fd = self._fd
        if fd is None:
            raise OSError(errno.EBADF, "the Root is closed")
        if self._vanished:
            raise RootVanishedError("the root directory no longer exists")
        return fd

    # -- public operations ---------------------------------------------
    def open(self, path: object, flags: int = os.O_RDONLY, mode: int = 0o666, *,
             dir_fd: int | None = None) -> int:
        """Open ``path`` beneath the root and return a new fd (``O_CLOEXEC``).

        Symlinks are followed while they stay inside (not at all with
        ``O_NOFOLLOW`` in ``flags`` for the final component).  FIFOs, sockets
        and devices raise :class:`SpecialFileError` unless ``O_PATH`` is
        given.  ``mode`` may carry permission bits only (0o777).  The fd may
        carry ``O_NONBLOCK``, which regular files and directories ignore.

        ``dir_fd``: a directory fd yielded by :meth:`fwalk`; ``path`` must
        then be one plain name, which is opened without following a symlink.
        """
        parsed = _paths.parse(path)
        if type(mode) is not int or mode & ~_CREATE_MASK:  # (a negative mode has such bits)
            _check_mode(mode, parsed.text)
        flags |= os.O_CLOEXEC
        if dir_fd is not None:
            return self._open_child(dir_fd, parsed, flags, mode)
        if flags & os.O_CREAT and parsed.final_is_dot:
            # "l/.": l is followed like any directory on the way (so an
            # outward l is an escape), then O_CREAT cannot make "." (and
            # O_EXCL says it exists, as the kernel does)
            self.stat(parsed.text)
            raise contained_error(errno.EEXIST if flags & os.O_EXCL else errno.EISDIR,
                                  parsed.text, parsed.text)
        final_nofollow = bool(flags & os.O_NOFOLLOW)
        if self._fast:
            # openat2 refuses (EINVAL) a mode without O_CREAT/O_TMPFILE, which
            # sent every plain open down the walk
            creating = flags & os.O_CREAT or (_O_TMPFILE and flags & _O_TMPFILE == _O_TMPFILE)
            fd = self._try_openat2(parsed.text, flags | os.O_NONBLOCK | os.O_NOCTTY,
                                   mode if creating else 0)
            if fd is not None:
                try:
                    return self._checked_fd(fd, flags, parsed.text, parsed.text)
                except SpecialFileError:
                    pass  # refused either way; the walk names where it is (component)
        rootfd = self._rootfd()
        backend = self._backend

        def final(walk: _Walk, name: str | None) -> object:
            if name is None:
                # "d/.", "a/..": the parent resolved (or the kernel's ENOTDIR
                # and escapes were raised); O_CREAT cannot make a directory
                if flags & os.O_CREAT:
                    raise contained_error(errno.EEXIST if flags & os.O_EXCL else errno.EISDIR,
                                          parsed.text, walk.where())
                fd = backend.open_at(walk.top, ".", flags | _SAFE)
                return self._checked_fd(fd, flags, parsed.text, walk.where())
            if walk.must_be_dir and flags & os.O_CREAT:
                raise contained_error(errno.EISDIR, parsed.text, walk.where(name))
            try:
                fd = backend.open_at(walk.top, name, flags | _SAFE, mode)
            except OSError as exc:
                if exc.errno in (errno.ELOOP, errno.ENOTDIR, errno.EMLINK) and not final_nofollow:
                    if self._is_symlink(walk.top, name):
                        return _FOLLOW
                if exc.errno in (errno.ENXIO, errno.ENODEV, errno.EOPNOTSUPP):
                    self._raise_if_special(walk.top, name, parsed.text, walk.where(name))
                raise
            if _O_PATH and flags & _O_PATH:
                # O_PATH|O_NOFOLLOW opens a symlink itself instead of failing
                if final_nofollow:
                    return fd
                if st.S_ISLNK(backend.fstat(fd).st_mode):
                    backend.close(fd)
                    return _FOLLOW
            return self._checked_fd(fd, flags, parsed.text, walk.where(name),
                                    must_be_dir=walk.must_be_dir)

        return self._walk(parsed, rootfd, final)

    def stat(self, path: object, *, follow_symlinks: bool = True) -> os.stat_result:
        """``os.stat`` beneath the root; ``follow_symlinks=False`` is ``lstat``."""
        parsed = _paths.parse(path)
        follow = follow_symlinks or parsed.must_be_dir
        rootfd = self._rootfd()
        backend = self._backend
        names = parsed.names
        if len(names) > 1 and self._fast and not parsed.absolute:
            flags = _O_PATH | os.O_CLOEXEC | (0 if follow else os.O_NOFOLLOW)
            if parsed.must_be_dir:
                flags |= os.O_DIRECTORY
            fd = self._try_openat2(parsed.text, flags, 0)
            if fd is not None:
                try:
                    info = backend.fstat(fd)
                finally:
                    backend.close(fd)
                if info.st_nlink == 0 and st.S_ISDIR(info.st_mode):  # "a/.." of a removed root
                    raise self._not_found(parsed.text, parsed.text)
                return info

        def final(walk: _Walk, name: str | None) -> object:
            if name is None:
                return backend.fstat(walk.top)
            result = backend.lstat_at(walk.top, name)
            if st.S_ISLNK(result.st_mode) and follow:
                return _FOLLOW
            if walk.must_be_dir and not st.S_ISDIR(result.st_mode):
                raise contained_error(errno.ENOTDIR, parsed.text, walk.where(name))
            return result

        return self._walk(parsed, rootfd, final)

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
        """The root-relative path ``path`` resolves to, in-root symlinks and
        ``..`` followed (``"."`` for the root).  The final component must
        exist unless ``strict=False``, where a missing final name is kept as
        written (its parent must exist).  Escapes raise as for :meth:`open`."""
        parsed = _paths.parse(path)
        backend = self._backend

        def final(walk: _Walk, name: str | None) -> object:
            if name is None:
                return walk.where()
            try:
                info = backend.lstat_at(walk.top, name)
            except FileNotFoundError:
                if strict:
                    raise
                return walk.where(name)
            if st.S_ISLNK(info.st_mode):
                return _FOLLOW
            if walk.must_be_dir and not st.S_ISDIR(info.st_mode):
                raise contained_error(errno.ENOTDIR, parsed.text, walk.where(name))
            return walk.where(name)

        return self._walk(parsed, self._rootfd(), final)  # type: ignore[return-value]

    def listdir(self, path: object = ".") -> list[str]:
        """Names in the directory ``path`` (unsorted, like ``os.listdir``)."""
        fd = self.open(path, os.O_RDONLY | os.O_DIRECTORY)
        try:
            with self._backend.scandir(fd) as it:
                return [entry.name for entry in it]
        finally:
            self._backend.close(fd)

    def scandir(self, path: object = ".", *, stat: bool = False) -> list[DirEntry]:
        """Entries of the directory ``path``, as detached :class:`DirEntry`
        objects (unsorted).  Nothing is followed to classify an entry.

        ``stat=True`` also takes each entry's ``lstat`` relative to the open
        directory (one ``fstatat`` each, no re-resolution); an entry removed
        meanwhile is left out."""
        fd, where = self._open_dir(path)
        prefix = "" if where == "." else where + "/"
        backend = self._backend
        try:
            if not stat:
                return [DirEntry(self, prefix + name, name, kind)
                        for name, kind in self._entries(fd)]
            entries = []
            for name, kind in self._entries(fd):
                try:
                    info = backend.lstat_at(fd, name)
                except FileNotFoundError:
                    continue
                entries.append(DirEntry(self, prefix + name, name, kind, info))
            return entries
        finally:
            backend.close(fd)

    def mkdir(self, path: object, mode: int = 0o777) -> None:
        """``os.mkdir`` beneath the root; never follows a final symlink."""
        parsed = _paths.parse(path)
        _check_mode(mode, parsed.text)
        self._named(parsed, "mkdir",
                    lambda walk, name: self._backend.mkdir_at(walk.top, name, mode))

    def makedirs(self, path: object, mode: int = 0o777, exist_ok: bool = False, *,
                 dry_run: bool = False) -> list[str]:
        """Create ``path`` and its missing parents; return the root-relative
        directories created, outermost first.

        ``dry_run=True`` creates nothing and returns what would be created
        (raising what a real run would raise for what already exists), so a
        host can authorize the list first.  Without ``exist_ok`` an existing
        leaf is ``FileExistsError``, as ``os.makedirs``.
        """
        parsed = _paths.parse(path)
        _check_mode(mode, parsed.text)
        if parsed.absolute:
            raise EscapeError("absolute paths are outside the root", parsed.text,
                              component="/", reason="absolute")
        if not parsed.text:  # names nothing, as for every other operation
            raise self._not_found(parsed.text, "")
        backend = self._backend
        created: list[str] = []
        text = parsed.text
        with _Walk(self._rootfd(), backend) as walk:
            pending = list(reversed(parsed.names))
            if parsed.final_is_dot:
                # "l/.": the leaf is the ".", so l is followed like any
                # directory on the way, not met as the leaf
                pending.insert(0, ".")
            links = steps = 0
            # pending[floor:] came from a symlink's target.  Those names are
            # resolved, never created (os.makedirs does not create through a
            # dangling link either); floor == 0 means the link was the last
            # component, where os.makedirs would have met the link itself.
            floor = len(pending)
            while pending:
                steps += 1
                if steps > MAX_STEPS:
                    raise contained_error(errno.ELOOP, text, walk.where())
                name = pending.pop()
                derived = len(pending) >= floor
                last = not pending
                if name == ".":
                    continue
                if name == "..":
                    if len(walk.fds) == 1:
                        raise EscapeError("'..' leads outside the root", text,
                                          component="..", reason="dotdot")
                    walk.pop()
                    continue
                try:
                    fd = backend.open_at(walk.top, name, backend.dir_flags)
                except OSError as exc:
                    if exc.errno == errno.ENOENT and not derived:
                        if dry_run:
                            if self._root_vanished():  # what the real run would meet
                                raise RootVanishedError("the root directory no longer exists")
                            return created + self._would_create(walk, name, pending, parsed)
                        try:
                            fd = backend.create_directory_at(walk.top, name, mode)
                        except OSError as cexc:
                            if cexc.errno != errno.EEXIST:
                                self._raise_mapped(cexc, text, walk.where(name))
                            pending.append(name)  # lost a race: resolve what is there now
                            continue
                        created.append(walk.where(name))
                        walk.push(fd, name)
                        continue
                    if exc.errno == errno.ENOENT and floor == 0:
                        # the last component is a dangling link: it exists, and
                        # is not a directory (os.makedirs says the same)
                        raise contained_error(errno.EEXIST, text, walk.where(name)) from None
                    if exc.errno in (errno.ENOTDIR, errno.ELOOP):
                        if last and not derived and not exist_ok:
                            # the leaf exists, as a file or a link: as os.makedirs,
                            # no need to follow a link to say so
                            raise contained_error(errno.EEXIST, text, walk.where(name)) from None
                        target = self._link_target(walk, name, text)
                        if target is None:
                            if last and (floor == 0 or not derived):
                                # the leaf exists and is not a directory
                                raise contained_error(errno.EEXIST, text,
                                                      walk.where(name)) from None
                        else:
                            links += 1
                            floor = min(floor, len(pending))
                            try:
                                self._splice(target, pending, links, text, walk.where(name))
                            except EscapeError:
                                raise
                            except OSError as lexc:
                                if floor == 0 and lexc.errno == errno.ELOOP:
                                    raise contained_error(errno.EEXIST, text,
                                                          walk.where(name)) from None
                                raise
                            continue
                    self._raise_mapped(exc, text, walk.where(name))
                walk.push(fd, name)
        if not created:
            if self._root_vanished():  # "." of a removed root
                raise RootVanishedError("the root directory no longer exists")
            if not exist_ok:
                raise contained_error(errno.EEXIST, text, text)
        return created

    def remove(self, path: object) -> None:
        """``os.remove``: unlink a non-directory (a symlink itself, never its target)."""
        parsed = _paths.parse(path)

        self._named(parsed, "remove",
                    lambda walk, name: self._backend.unlink_at(walk.top, name))

    unlink = remove

    def rmdir(self, path: object) -> None:
        """``os.rmdir``: remove an empty directory (a symlink is ``ENOTDIR``)."""
        parsed = _paths.parse(path)
        self._named(parsed, "rmdir", lambda walk, name: self._backend.rmdir_at(walk.top, name))

    def rename(self, src: object, dst: object, *, replace: bool = True,
               exchange: bool = False) -> None:
        """Rename ``src`` to ``dst``, both beneath the root.

        ``replace=False`` refuses an existing ``dst`` atomically
        (``FileExistsError``; ``renameat2(RENAME_NOREPLACE)`` on Linux,
        ``renameatx_np(RENAME_EXCL)`` on Darwin).  ``exchange=True`` swaps
        the two atomically.  Neither end's final symlink is followed.
        """
        sparsed, dparsed = _paths.parse(src), _paths.parse(dst)
        flags = RENAME_EXCHANGE if exchange else (0 if replace else RENAME_NOREPLACE)
        backend = self._backend
        dst_op = "rename_dst_excl" if flags & RENAME_NOREPLACE else "rename_dst"
        if sparsed.final_is_dot:
            # "." or "a/..": as the kernel, resolve both ends before refusing,
            # so that an escape in dst is reported as one
            self.stat(sparsed.text)
            self._named(dparsed, dst_op, lambda dwalk, dname: None)
            raise contained_error(errno.EBUSY, sparsed.text, sparsed.text)

        def act_src(swalk: _Walk, sname: str) -> None:
            def act_dst(dwalk: _Walk, dname: str) -> None:
                # both parents are resolved: the kernel's checks in its order
                # (src exists, dst in the way, a "/" on a non-directory),
                # never following either end
                if swalk.must_be_dir or dwalk.must_be_dir:
                    try:
                        sinfo = backend.lstat_at(swalk.top, sname)
                    except OSError as exc:
                        self._raise_mapped(exc, sparsed.text, swalk.where(sname))
                    dinfo = None
                    if dwalk.must_be_dir:
                        try:
                            dinfo = backend.lstat_at(dwalk.top, dname)
                        except FileNotFoundError:
                            pass
                        if dinfo is not None and flags & RENAME_NOREPLACE:
                            raise contained_error(errno.EEXIST, dparsed.text, dwalk.where(dname))
                    if not st.S_ISDIR(sinfo.st_mode):
                        if swalk.must_be_dir:
                            raise contained_error(errno.ENOTDIR, sparsed.text, swalk.where(sname))
                        raise contained_error(errno.ENOTDIR, dparsed.text, dwalk.where(dname))
                    # a directory onto a non-directory is the kernel's ENOTDIR,
                    # after its EINVAL for a directory moved into itself
                try:
                    backend.rename_at(swalk.top, sname, dwalk.top, dname, flags)
                except OSError as exc:
                    # name the end that failed: the destination when it is in
                    # the way, else the source
                    if exc.errno in (errno.EEXIST, errno.ENOTEMPTY, errno.EISDIR,
                                     errno.ENOTDIR) and self._exists_at(dwalk.top, dname):
                        self._raise_mapped(exc, dparsed.text, dwalk.where(dname))
                    self._raise_mapped(exc, sparsed.text, swalk.where(sname))
            self._named(dparsed, dst_op, act_dst)

        self._named(sparsed, "rename", act_src)

    def readlink(self, path: object) -> str:
        """The text of the symlink ``path`` (whatever it points at)."""
        parsed = _paths.parse(path)
        if parsed.must_be_dir:
            # "link/" names what the link points to (the kernel follows it
            # here): a directory, which is not a symlink
            self.stat(parsed.text)
            raise contained_error(errno.EINVAL, parsed.text, parsed.text)
        return self._named(parsed, "readlink",
                           lambda walk, name: self._backend.readlink_at(walk.top, name))

    def symlink(self, target: str, path: object) -> None:
        """Create symlink ``path`` with text ``target``.  Nothing is resolved
        through it here; later resolution keeps it beneath the root."""
        text = _paths.as_text(target)
        if "\x00" in text:
            raise InvalidPathError("symlink target contains a NUL byte", None)
        parsed = _paths.parse(path)
        self._named(parsed, "symlink",
                    lambda walk, name: self._backend.symlink_at(text, walk.top, name))

    def read_bytes(self, path: object) -> bytes:
        """The whole content of the regular file ``path``."""
        fd = self.open(path, os.O_RDONLY)
        backend = self._backend
        try:
            info = backend.fstat(fd)
            if st.S_ISDIR(info.st_mode):
                raise contained_error(errno.EISDIR, _paths.as_text(path), _paths.as_text(path))
            chunks = []
            while True:
                chunk = backend.read(fd, max(info.st_size, 65536))
                if not chunk:
                    break
                chunks.append(chunk)
            return b"".join(chunks)
        finally:
            backend.close(fd)

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
        is not kept); a new file gets ``mode`` (default 0o666 less the umask).  ``exclusive=True``
        refuses an existing target (``FileExistsError``) atomically.  With
        ``follow_symlinks=False`` a final symlink is replaced itself rather
        than followed (inside the root) to its target.  A hard link is
        replaced, never written through.
        """
        parsed = _paths.parse(path)
        if mode is not None:
            _check_mode(mode, parsed.text)
        backend = self._backend
        view = memoryview(data).cast("B")

        def act(walk: _Walk, name: str) -> object:
            try:
                current = backend.lstat_at(walk.top, name)
            except FileNotFoundError:
                current = None
            if current is not None:
                kind = st.S_IFMT(current.st_mode)
                if kind == st.S_IFLNK and follow_symlinks and not exclusive:
                    return _FOLLOW
                if exclusive:
                    raise contained_error(errno.EEXIST, parsed.text, walk.where(name))
                if kind == st.S_IFDIR:
                    raise contained_error(errno.EISDIR, parsed.text, walk.where(name))
                if kind in _SPECIAL_KINDS:
                    raise SpecialFileError("not a regular file", parsed.text,
                                           component=walk.where(name), kind=_SPECIAL_KINDS[kind])
            replace_in(backend, walk.top, name, view, current=current, mode=mode, fsync=fsync,
                       exclusive=exclusive)
            return None

        self._named(parsed, "write_excl" if exclusive else "write", act, follow_final=True)

    def walk(self, top: object = ".", topdown: bool = True,
             onerror: Callable[[OSError], None] | None = None
             ) -> Iterator[tuple[str, list[str], list[str]]]:
        """``os.walk`` beneath the root, on fds: ``(dirpath, dirnames,
        filenames)`` with root-relative ``dirpath``.

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
        backend = self._backend
        try:
            fd, top_text = self._open_dir(top)
        except OSError as exc:
            if onerror is not None:
                onerror(exc)
                return
            raise
        # frames: (fd, dirpath, remaining subdirectory names) - explicit stack,
        # no recursion limit, every fd closed in the finally
        stack: list[tuple[int, str, list[str]]] = []
        bottom_up: list[tuple[str, list[str], list[str], int]] = []
        try:
            pending: list[tuple[int, str]] = [(fd, top_text)]
            while pending or stack:
                if pending:
                    dfd, dpath = pending.pop()
                    try:
                        dirs, files = [], []
                        for name, kind in self._entries(dfd):
                            (dirs if kind == "dir" else files).append(name)
                    except OSError as exc:
                        backend.close(dfd)
                        if onerror is not None:
                            onerror(self._mapped(exc, dpath, dpath))
                            continue
                        raise self._mapped(exc, dpath, dpath) from None
                    if topdown:
                        yield dpath, dirs, files, dfd
                    else:
                        bottom_up.append((dpath, dirs, files, dfd))
                    stack.append((dfd, dpath, list(reversed(dirs))))
                frame_fd, frame_path, remaining = stack[-1]
                if not remaining:
                    stack.pop()
                    if not topdown:
                        dpath, dirs, files, _ = bottom_up.pop()
                        yield dpath, dirs, files, frame_fd
                    backend.close(frame_fd)
                    continue
                name = remaining.pop()
                child = name if frame_path == "." else f"{frame_path}/{name}"
                try:
                    cfd = backend.open_at(frame_fd, name, os.O_RDONLY | os.O_DIRECTORY | _SAFE)
                except OSError as exc:
                    # replaced by a symlink or removed since listing: not followed
                    if onerror is not None:
                        onerror(self._mapped(exc, child, child))
                    continue
                pending.append((cfd, child))
        finally:
            for frame_fd, _, _ in stack:
                _close_quietly(backend, frame_fd)
            for dfd, _ in pending:
                _close_quietly(backend, dfd)

    # -- resolution ------------------------------------------------------
    def _open_dir(self, path: object) -> tuple[int, str]:
        """Open the directory ``path`` for listing; return its fd and its
        real root-relative path (``..`` and symlinks resolved), by the walk."""
        parsed = _paths.parse(path)
        backend = self._backend

        def final(walk: _Walk, name: str | None) -> object:
            flags = os.O_RDONLY | os.O_DIRECTORY | _SAFE
            if name is None:
                return backend.open_at(walk.top, ".", flags), walk.where()
            try:
                fd = backend.open_at(walk.top, name, flags)
            except OSError as exc:
                if exc.errno in (errno.ELOOP, errno.ENOTDIR) and self._is_symlink(walk.top, name):
                    return _FOLLOW
                raise
            return fd, walk.where(name)

        return self._walk(parsed, self._rootfd(), final)  # type: ignore[return-value]

    def _walk(self, parsed: ParsedPath, rootfd: int,
              final: Callable[[_Walk, str | None], object]) -> object:
        """Resolve ``parsed`` and return ``final(walk, name)`` for its last
        component (``name`` is ``None`` when the path ends at a directory on
        the stack, as ``.`` or ``a/..``).  ``final`` may return ``_FOLLOW``
        to have a final symlink followed."""
        if parsed.absolute:
            raise EscapeError("absolute paths are outside the root", parsed.text,
                              component="/", reason="absolute")
        if not parsed.names and not parsed.final_is_dot and not parsed.text:
            raise self._not_found(parsed.text, "")
        backend = self._backend
        strict = not self.follow_symlinks
        with _Walk(rootfd, backend, parsed.must_be_dir) as walk:
            pending = list(reversed(parsed.names))
            links = steps = 0
            while True:
                steps += 1
                if steps > MAX_STEPS:
                    raise contained_error(errno.ELOOP, parsed.text, walk.where())
                if not pending:
                    if len(walk.fds) == 1 and self._root_vanished():
                        # the path names the root, which still answers by fd
                        # (empty listing, a stat): a dead capability, not a result
                        raise RootVanishedError("the root directory no longer exists")
                    try:
                        return final(walk, None)
                    except OSError as exc:
                        self._raise_mapped(exc, parsed.text, walk.where())
                name = pending.pop()
                if name == ".":  # a link target's final "." (see _splice)
                    continue
                if name == "..":
                    if len(walk.fds) == 1:
                        raise EscapeError("'..' leads outside the root", parsed.text,
                                          component=walk.where(".."), reason="dotdot")
                    walk.pop()
                    continue
                if pending:
                    try:
                        fd = backend.open_at(walk.top, name, backend.dir_flags)
                    except OSError as exc:
                        if exc.errno in (errno.ENOTDIR, errno.ELOOP):
                            target = self._link_target(walk, name, parsed.text)
                            if target is not None:
                                links += 1
                                self._splice(target, pending, links, parsed.text,
                                             walk.where(name))
                                continue
                        self._raise_mapped(exc, parsed.text, walk.where(name))
                    walk.push(fd, name)
                    continue
                try:
                    result = final(walk, name)
                except OSError as exc:
                    self._raise_mapped(exc, parsed.text, walk.where(name))
                if result is not _FOLLOW:
                    return result
                if strict:
                    raise SymlinkError("symlinks are not followed in this root", parsed.text,
                                       component=walk.where(name))
                try:
                    target = backend.readlink_at(walk.top, name)
                except OSError as exc:
                    if exc.errno == errno.EINVAL:
                        # no longer a symlink (renamed over since final()
                        # looked): look at the name again (MAX_STEPS bounds it)
                        pending.append(name)
                        continue
                    self._raise_mapped(exc, parsed.text, walk.where(name))
                links += 1
                if self._splice(target, pending, links, parsed.text, walk.where(name)):
                    walk.must_be_dir = True
                continue

    def _named(self, parsed: ParsedPath, op: str,
               act: Callable[[_Walk, str], object], *, follow_final: bool = False) -> object:
        """Resolve the parent of ``parsed`` and return ``act(walk, name)`` on
        its final name, which is never followed (unless ``act`` returns
        ``_FOLLOW`` and ``follow_final``)."""
        if parsed.final_is_dot:
            # "a/.", "a/..", "/": there is no name to act on.  Say what the
            # kernel says once the directory is known to exist.
            self.stat(parsed.text)
            raise contained_error(_dot_errno(op, parsed.text), parsed.text, parsed.text)
        if not parsed.names:
            if parsed.absolute:
                raise EscapeError("absolute paths are outside the root", parsed.text,
                                  component="/", reason="absolute")
            raise self._not_found(parsed.text, "")
        rootfd = self._rootfd()

        def final(walk: _Walk, name: str | None) -> object:
            if name is None:  # a followed link that ended at a directory
                raise contained_error(_dot_errno(op, "."), parsed.text, walk.where())
            if walk.must_be_dir:
                # "name/" (or a followed link whose text ends in "/"): the
                # kernel's answers, without ever following "name" itself
                if op in ("write", "write_excl"):  # O_CREAT with a trailing slash
                    raise contained_error(errno.EISDIR, parsed.text, walk.where(name))
                if op in ("remove", "rmdir", "symlink"):  # rename checks in act_dst
                    info = self._backend.lstat_at(walk.top, name)
                    if op == "symlink":
                        raise contained_error(errno.EEXIST, parsed.text, walk.where(name))
                    if not st.S_ISDIR(info.st_mode):
                        raise contained_error(errno.ENOTDIR, parsed.text, walk.where(name))
                # mkdir creates "name/"; rename checks both ends itself
            result = act(walk, name)
            if result is _FOLLOW and not follow_final:
                return None
            return result

        return self._walk(parsed, rootfd, final)

    def _try_openat2(self, text: str, flags: int, mode: int) -> int | None:
        """The fast path: an fd, or ``None`` to run the walk instead."""
        backend = self._backend
        rootfd = self._rootfd()
        started = 0.0
        # EAGAIN means a rename somewhere raced the lookup: retry at least
        # OPENAT2_MIN_RETRIES times, then until the deadline
        for attempt in range(OPENAT2_MAX_RETRIES):
            try:
                return backend.openat2(rootfd, text, flags, mode, self._resolve_flags)
            except OSError as exc:
                if exc.errno != errno.EAGAIN:
                    self._count("walk_fallbacks")
                    return None
            self._count("openat2_eagain")
            if attempt == OPENAT2_MIN_RETRIES:
                started = time.monotonic()
            elif attempt > OPENAT2_MIN_RETRIES and time.monotonic() - started > OPENAT2_DEADLINE:
                break
        self._count("openat2_exhausted")
        return None

    def _count(self, key: str) -> None:
        with self._stats_lock:
            self.stats[key] += 1

    def _link_target(self, walk: _Walk, name: str, text: str) -> str | None:
        """The target of ``name`` if it is a symlink (``None`` if not);
        :class:`SymlinkError` in strict mode."""
        try:
            target = self._backend.readlink_at(walk.top, name)
        except OSError as exc:
            if exc.errno == errno.EINVAL:
                return None
            self._raise_mapped(exc, text, walk.where(name))
        if not self.follow_symlinks:
            raise SymlinkError("symlinks are not followed in this root", text,
                               component=walk.where(name))
        return target

    def _splice(self, target: str, pending: list[str], links: int, text: str,
                where: str) -> bool:
        """Put a symlink's target in front of the pending components."""
        if links > MAX_SYMLINKS:
            raise contained_error(errno.ELOOP, text, where)
        if "\x00" in target:  # cannot happen with a real kernel; never trust it
            raise contained_error(errno.EINVAL, text, where)
        absolute, names, must_be_dir = _paths.split_link(target)
        if absolute:
            raise EscapeError("a symlink leads outside the root", text, component=where,
                              reason="symlink")
        if not names and not target:
            raise contained_error(errno.ENOENT, text, where)
        if names and target.rstrip("/").endswith("/."):
            # "d/.": d is opened as a directory on the way (ENOTDIR for a
            # file), as the kernel does, not treated as "d/"
            pending.append(".")
        pending.extend(reversed(names))
        return must_be_dir

    def _is_symlink(self, dir_fd: int, name: str) -> bool:
        try:
            return st.S_ISLNK(self._backend.lstat_at(dir_fd, name).st_mode)
        except OSError:
            return False

    def _exists_at(self, dir_fd: int, name: str) -> bool:
        try:
            self._backend.lstat_at(dir_fd, name)
        except OSError:
            return False
        return True

    # -- helpers for the final component ---------------------------------
    def _checked_fd(self, fd: int, flags: int, text: str, where: str, *,
                    must_be_dir: bool = False) -> int:
        """``fstat`` a freshly opened fd and refuse what must not be used."""
        backend = self._backend
        try:
            info = backend.fstat(fd)
            kind = st.S_IFMT(info.st_mode)
            if kind == st.S_IFREG and not must_be_dir:  # the common case
                return fd
            if kind == st.S_IFDIR and info.st_nlink == 0:
                # a removed directory: only the root itself (or one removed
                # while we resolved) can be reached that way
                raise self._not_found(text, where)
            if must_be_dir and kind != st.S_IFDIR:  # "fifo/" is ENOTDIR, as in the kernel
                raise contained_error(errno.ENOTDIR, text, where)
            if kind in _SPECIAL_KINDS and not (_O_PATH and flags & _O_PATH):
                raise SpecialFileError("not a regular file or directory", text,
                                       component=where, kind=_SPECIAL_KINDS[kind])
        except BaseException:
            backend.close(fd)
            raise
        return fd

    def _raise_if_special(self, dir_fd: int, name: str, text: str, where: str) -> None:
        try:
            kind = st.S_IFMT(self._backend.lstat_at(dir_fd, name).st_mode)
        except OSError:
            return
        if kind in _SPECIAL_KINDS:
            raise SpecialFileError("not a regular file or directory", text, component=where,
                                   kind=_SPECIAL_KINDS[kind])

    def _open_child(self, dir_fd: int, parsed: ParsedPath, flags: int, mode: int) -> int:
        text = parsed.text
        if "/" in text or text in ("", ".", ".."):
            raise InvalidPathError("with dir_fd, the path must be one name", text)
        self._rootfd()
        try:
            fd = self._backend.open_at(dir_fd, text, flags | _SAFE, mode)
        except OSError as exc:
            if exc.errno in (errno.ENXIO, errno.ENODEV):
                self._raise_if_special(dir_fd, text, text, text)
            raise self._mapped(exc, text, text) from None
        return self._checked_fd(fd, flags, text, text)

    def _entries(self, fd: int) -> Iterator[tuple[str, str]]:
        """(name, kind) of each entry of the directory fd, from d_type."""
        with self._backend.scandir(fd) as it:
            for entry in it:
                if entry.is_symlink():
                    kind = "symlink"
                elif entry.is_dir(follow_symlinks=False):
                    kind = "dir"
                elif entry.is_file(follow_symlinks=False):
                    kind = "file"
                else:
                    kind = "other"
                yield entry.name, kind

    def _would_create(self, walk: _Walk, name: str, pending: list[str],
                      parsed: ParsedPath) -> list[str]:
        lexical = [*walk.names, name]
        out = [_paths.join(lexical)]
        for part in reversed(pending):
            if part == ".":
                continue
            if part == "..":
                if not lexical:
                    raise EscapeError("'..' leads outside the root", parsed.text,
                                      component="..", reason="dotdot")
                lexical.pop()
                continue
            lexical.append(part)
            joined = _paths.join(lexical)
            if joined not in out:
                out.append(joined)
        return out

    # -- errors ------------------------------------------------------------
    def _mapped(self, exc: OSError, text: str, where: str) -> OSError:
        """``exc`` as corral raises it: root-relative names, vanished root
        told apart from a missing file."""
        if isinstance(exc, (EscapeError, InvalidPathError, SpecialFileError, SymlinkError,
                            RootVanishedError)) or getattr(exc, "component", None) is not None:
            return exc
        if exc.errno == errno.ENOENT and self._root_vanished():
            return RootVanishedError("the root directory no longer exists")
        return contained_error(exc.errno, text, where)

    def _raise_mapped(self, exc: OSError, text: str, where: str) -> "NoReturn":
        raise self._mapped(exc, text, where) from None

    def _not_found(self, text: str, where: str) -> OSError:
        if self._root_vanished():
            return RootVanishedError("the root directory no longer exists")
        return contained_error(errno.ENOENT, text, where)

    def _root_vanished(self) -> bool:
        fd = self._fd
        if fd is None:
            return False
        try:
            gone = self._backend.fstat(fd).st_nlink == 0
        except OSError:
            gone = True
        if gone:
            self._vanished = True
        return gone


def _close_quietly(backend: Backend, fd: int) -> None:
    """Close a directory fd opened only to resolve or list.  close(2)
    releases the fd even when it reports an error, and there is no data to
    lose on such an fd: go on closing the others rather than leak them."""
    try:
        backend.close(fd)
    except OSError:
        pass


def _dot_errno(op: str, text: str) -> int:
    """What the kernel answers when the last component of ``text`` is "." or
    ".." (or a followed link ends at a directory) for an operation that
    needs a name there."""
    if op in ("mkdir", "symlink", "rename_dst_excl", "write_excl"):
        return errno.EEXIST
    if op in ("remove", "write"):
        return errno.EISDIR
    if op == "rmdir":
        last = [part for part in text.split("/") if part][-1:]
        return errno.ENOTEMPTY if last == [".."] else errno.EINVAL
    if op in ("rename", "rename_dst"):
        return errno.EBUSY
    return errno.EINVAL  # readlink


def _check_mode(mode: int, text: str) -> None:
    if not isinstance(mode, int) or mode < 0 or mode & ~_CREATE_MASK:
        raise OSError(errno.EINVAL, "mode may carry permission bits (0o777) only", text)

