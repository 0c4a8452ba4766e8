"""``Target``: where a mutation will act, resolved once, acted on by fd."""

from __future__ import annotations

import errno
import os
import stat as st
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, NamedTuple

from . import _acts
from ._acts import SAFE, End, NameOp
from ._closing import Closing
from ._backend import RENAME_EXCHANGE, RENAME_NOREPLACE
from ._errors import (ContainedError, EscapeError, PathError, RootVanishedError, StaleError,
                      contained_error)
from ._handle import Handle
from ._paths import ParsedPath
from ._replace import Content, replace_in
from ._resolve import Anchor, Resolved, open_dir_below, still_beneath

if TYPE_CHECKING:
    from ._backend import Backend
    from ._root import Root

__all__ = ["Target", "Opened"]


class Opened(NamedTuple):
    """An entry opened by :meth:`Target.open_existing` and the ``fstat``
    that checked it."""

    handle: Handle
    info: os.stat_result


_new_opened = tuple.__new__

# a Target that made no directory has none to remove
_NOTHING_MADE: Mapping[str, tuple[int, int]] = {}


def _is_name(name: str) -> bool:
    return bool(name) and name not in (".", "..") and "/" not in name and "\0" not in name


class Target(Closing):
    """Where a mutation will act: the resolved parent directory, held open,
    and the final name in it.  Made by :meth:`Root.target`.

    Everything a decision needs is what resolution computed, never the
    spelling: ``path`` (canonical root-relative path of the entry: the
    final name not followed, unless ``follow_final``, then the in-root
    target of a final link), ``parent`` (canonical path of its directory),
    ``name`` (``None`` when the path ends at a directory without naming an
    entry in it, as ``.``, ``a/..`` or ``d/.`` do: ``path`` is then that
    directory and every mutation raises the kernel's errno for it),
    ``creates`` (canonical directories that do not exist yet and that
    :meth:`make_parents` would create, outermost first: only those the
    parent needs, so a would-be directory that a later ``..`` leaves again,
    as ``nx`` in ``nx/../a/x``, is never made, and is in ``passed``) and
    ``passed`` (canonical directories resolution entered and left again, and
    symlinks followed on the way, deduplicated: so policy can refuse a path
    *through* a place, not only *to* it).

    The operations act on ``name`` in the held parent fd and never follow
    it; none resolves the path again.  The parent stays the directory it was
    (renamed, it is still acted on; removed, acts fail).  Errors are the
    Root's (``filename`` the caller's spelling, ``component`` canonical);
    :class:`StaleError` where the tree no longer matches the plan.  Close
    it (or use ``with``); not thread-safe.
    """

    __slots__ = ("path", "parent", "name", "creates", "passed", "_root", "_anchor", "_parsed",
                 "_fd", "_tail", "_must_be_dir", "_follow", "_ends_dotdot", "_closed",
                 "_identity", "_readable", "_first_fd", "_made_ids", "_vouched")

    def __init__(self, root: Root, anchor: Anchor, parsed: ParsedPath, at: Resolved, fd: int,
                 tail: tuple[str, ...], *, passed: tuple[str, ...], follow_final: bool,
                 ends_dotdot: bool, identity: tuple[int, int] | None = None,
                 readable: bool = False, vouched: bool = False) -> None:
        name = self.name = at.name
        parts = at.parts
        parent = self.parent = "/".join(parts) if parts else "."
        self.path = parent if name is None else f"{parent}/{name}" if parts else name
        if tail:
            held = list(at.parts[:len(at.parts) - len(tail)])
            self.creates = tuple("/".join(held + list(tail[:i + 1])) for i in range(len(tail)))
        else:  # the parent exists: nothing is planned (the common write)
            self.creates = ()
        self.passed = passed
        self._root = root
        self._anchor = anchor
        self._parsed = parsed
        self._fd = fd  # the parent; while it is planned, the deepest directory that exists
        self._tail = tail  # the planned directories below _fd, outermost first
        self._must_be_dir = at.must_be_dir
        self._follow = follow_final
        self._ends_dotdot = ends_dotdot
        self._closed = False
        self._identity = identity  # of the held fd's directory, as resolution saw it
        self._readable = readable  # the held fd was opened for reading (not O_PATH)
        # the fd resolution held, kept open until close once make_parents
        # moved on from it: a lock taken on it holds for the Target's life
        self._first_fd = -1
        self._made_ids: Mapping[str, tuple[int, int]] = _NOTHING_MADE
        # the held directory is the root or openat2's (resolved beneath just
        # before): a file opened or a directory made in it needs no check;
        # one the walk opened by name may be moved out, so they are checked
        self._vouched = vouched

    def __repr__(self) -> str:
        return f"<corral Target {self.path!r} creates={list(self.creates)}>"

    # -- looking ---------------------------------------------------------------
    def lstat(self) -> os.stat_result | None:
        """``lstat`` of the entry (the directory itself when ``name`` is
        ``None``); ``None`` if it does not exist (or its parent not yet)."""
        if self._tail and not self._closed:
            return None
        fd = self._dir()
        backend = self._backend()
        try:
            if self.name is None:
                return backend.fstat(fd)
            return _acts.lstat_or_none(backend, fd, self.name)
        except OSError as exc:
            raise self._error(exc, self.path) from None

    def open(self, flags: int = os.O_RDONLY, mode: int = 0o666) -> Handle:
        """Open the entry (``O_NOFOLLOW``: a symlink there now is ``ELOOP``)
        as a :class:`Handle`; FIFOs, sockets and devices are refused as by
        :meth:`Root.open`."""
        fd = self._dir()
        backend = self._backend()
        flags |= os.O_CLOEXEC
        if flags & os.O_CREAT and self.name is None:
            raise contained_error(errno.EEXIST if flags & os.O_EXCL else errno.EISDIR,
                                  self._parsed.text, self.path)
        name = "." if self.name is None else self.name
        try:
            try:
                opened = backend.open_at(fd, name, flags | SAFE, mode)
            except OSError as exc:
                if exc.errno in (errno.ENXIO, errno.ENODEV, errno.EOPNOTSUPP):
                    # a socket (or a device with no driver) fails the open itself
                    _acts.refuse_special(backend, fd, name, self._parsed.text, self.path)
                raise
            info = _acts.checked_info(backend, opened, flags, self._parsed.text, self.path,
                                      must_be_dir=self._must_be_dir)
            if st.S_ISDIR(info.st_mode) or not self._vouched:
                self._refuse_unless_beneath(opened)
        except OSError as exc:
            raise self._error(exc, self.path) from None
        return Handle(self._root, backend, opened, self.path)

    def open_existing(self, flags: int = os.O_RDONLY) -> Opened | None:
        """:meth:`open` of an entry that is there, with the ``fstat`` that
        checked it (one open and one ``fstat``: no ``lstat`` first);
        ``None`` when no entry has the name (or its parent is only
        planned).  Raises as :meth:`open` for everything else (``ELOOP``
        for a symlink)."""
        if self._tail and not self._closed:
            return None
        if self.name is None or self._closed:
            return self._opened(flags)  # (closed: its EBADF)
        fd = self._fd
        backend = self._anchor.backend
        try:
            opened = backend.open_at(fd, self.name, flags | os.O_CLOEXEC | SAFE)
        except FileNotFoundError:
            return None  # a single name in the held directory: nothing is there
        except OSError:
            return self._opened(flags)  # the errors :meth:`open` raises, as it raises them
        try:
            info = _acts.checked_info(backend, opened, flags, self._parsed.text, self.path,
                                      must_be_dir=self._must_be_dir)
            if st.S_ISDIR(info.st_mode) or not self._vouched:
                self._refuse_unless_beneath(opened)
        except OSError as exc:
            raise self._error(exc, self.path) from None
        # (tuple.__new__: the NamedTuple's own __new__ is a Python frame)
        return _new_opened(Opened, (Handle(self._root, backend, opened, self.path), info))

    def opened_beneath(self, fd: int) -> bool:
        """Whether ``fd``, a directory opened by :attr:`name` in the held
        directory, is beneath the root now (``_resolve.still_beneath``).
        The held directory was beneath when it was resolved, but it may have
        been moved out since and the name in it swapped for a directory
        that never was: a directory opened there to be listed, walked or
        emptied is checked, unless it is held in the root's own fd."""
        anchor = self._anchor
        root_fd = anchor.acquire(self._parsed.text)
        try:
            return self._fd == root_fd or still_beneath(anchor, root_fd, fd, self.path)
        finally:
            anchor.release()

    def open_below(self, parent_fd: int, name: str, path: str, flags: int) -> int:
        """Open the directory ``name`` a walk down from the entry listed in
        ``parent_fd`` (canonical ``path``), shown beneath the root
        (:func:`._resolve.open_dir_below`)."""
        return open_dir_below(self._anchor, parent_fd, name, path, flags)

    def _refuse_unless_beneath(self, opened: int) -> None:
        """Close ``opened`` and refuse (``EscapeError``, reason ``moved``)
        unless :meth:`opened_beneath`."""
        try:
            beneath = self.opened_beneath(opened)
        except BaseException:
            self._anchor.backend.close(opened)
            raise
        if not beneath:
            self._anchor.backend.close(opened)
            raise EscapeError("what was opened is no longer inside the root", self._parsed.text,
                              component=self.path, reason="moved", passed=self.passed)

    def _opened(self, flags: int) -> Opened:
        handle = self.open(flags)
        try:
            return Opened(handle, handle.stat())
        except BaseException:
            handle.close()
            raise

    # -- acting ------------------------------------------------------------------
    def make_parents(self, mode: int = 0o777) -> list[str]:
        """Create :attr:`creates`, one below the other from the deepest
        directory that exists (held since :meth:`Root.target`): ``mkdirat``
        and an ``O_NOFOLLOW`` reopen each, so nothing is resolved again.
        Return what was made (one someone else made meanwhile is used, and not
        listed).  :class:`StaleError` if something other than a directory is
        at one of the names now.  ``[]`` when the parent exists."""
        self._dir(planned_ok=True)
        made: list[str] = []
        try:
            self._make_each(made, mode)
        except BaseException:
            # a creation that cannot go on (out of descriptors, the disk
            # full) leaves none of the directories it made
            try:
                self.unmake_parents(made, passed=len(self.creates) - len(self._tail))
            except OSError:
                pass
            raise
        return made

    def _make_each(self, made: list[str], mode: int) -> None:
        backend = self._backend()
        while self._tail:
            name, where = self._tail[0], self.creates[len(self.creates) - len(self._tail)]
            try:
                new = backend.create_directory_at(self._fd, name, mode)
                made.append(where)
                if not self._vouched:
                    # made in a directory moved out meanwhile: refused, and
                    # nothing made in it (no call makes a name beneath a root
                    # in one step)
                    self._made_beneath(new, where)
            except OSError as exc:
                if exc.errno != errno.EEXIST:
                    raise self._error(exc, where) from None
                try:
                    # one made meanwhile, or swapped in from outside: shown beneath
                    new = open_dir_below(self._anchor, self._fd, name, where, backend.dir_flags)
                except EscapeError:
                    raise
                except OSError:
                    raise StaleError("something other than a directory is there now",
                                     self._parsed.text, component=where) from None
            if made and made[-1] == where:
                # what each directory made is (device, inode): only that is removed again
                try:
                    info = self._made_identity(backend, new, name)
                except OSError as exc:
                    backend.close(new)
                    raise self._error(exc, where) from None
                self._made_ids = {**self._made_ids, where: (info.st_dev, info.st_ino)}
            if self._first_fd < 0:
                self._first_fd = self._fd
            else:
                backend.close(self._fd)
            self._fd, self._tail = new, self._tail[1:]
            self._identity, self._readable = None, False

    def _held_beneath(self) -> None:
        """Before and after an act by name in the held directory:
        ``EscapeError`` (reason ``moved``) unless it is the root's fd or
        openat2's (vouched), or beneath the root now.  Before, nothing is
        done in a directory moved out while the Target was held; after, an
        act that a move just then put outside (no call acts by name beneath
        a root in one step, and an undo would be one more act outside) is
        never answered as done."""
        if self._vouched or self._closed or self._tail or self._fd < 0:
            return  # (closed, or only planned: the act says so)
        anchor = self._anchor
        root_fd = anchor.acquire(self._parsed.text)
        try:
            beneath = self._fd == root_fd or still_beneath(anchor, root_fd, self._fd,
                                                           self.parent)
        finally:
            anchor.release()
        if not beneath:
            raise EscapeError("the directory acted in is no longer inside the root",
                              self._parsed.text, component=self.parent, reason="moved",
                              passed=self.passed)

    def _made_beneath(self, new: int, where: str) -> None:
        """Close ``new`` and refuse (``EscapeError``, reason ``moved``)
        unless the directory just made as ``where`` is beneath the root."""
        anchor = self._anchor
        root_fd = anchor.acquire(self._parsed.text)
        try:
            beneath = still_beneath(anchor, root_fd, new, where)
        except BaseException:
            anchor.backend.close(new)
            raise
        finally:
            anchor.release()
        if not beneath:
            anchor.backend.close(new)
            raise EscapeError("a directory made is no longer inside the root", self._parsed.text,
                              component=where, reason="moved", passed=self.passed)

    def _made_identity(self, backend: Backend, new: int, name: str) -> os.stat_result:
        """The identity of the directory just made as ``name`` and opened as
        ``new``: by its fd, or (that look refused, as a security module may
        refuse one kind of look) by its name in the parent still held."""
        try:
            return backend.fstat(new)
        except OSError:
            return backend.lstat_at(self._fd, name)

    def unmake_parents(self, made: Sequence[str], *, passed: int | None = None) -> None:
        """Remove the directories :meth:`make_parents` made (``made``, as it
        returned them), deepest first, each only while it is still an empty
        directory (reached ``O_NOFOLLOW`` from the directory resolution
        held) and still the directory made (its device and inode): a
        creation that did not go on leaves no directory behind, and one
        moved into a made one's place stays.  Stops at the first that is not
        empty, not there or not the one made.  Where every look at a made
        directory is refused (its ``fstat`` and its ``lstat``: one SELinux
        ``getattr`` denial covers both), nothing can tell it is still the
        one made, so it stays, empty, rather than a directory another
        program may have put there being removed unchecked."""
        if not made or self._first_fd < 0:
            return
        made_ids = self._made_ids
        backend = self._backend()
        # ``passed``: the directories of :attr:`creates` reached before a creation stopped
        creates = self.creates if passed is None else self.creates[:passed]
        names = [where.rsplit("/", 1)[-1] for where in creates]
        fds = [self._first_fd]
        try:
            for name in names[:-1]:
                fds.append(backend.open_at(fds[-1], name, backend.dir_flags))
            for parent_fd, name, where in reversed(list(zip(fds, names, creates))):
                if where in made:
                    info = backend.lstat_at(parent_fd, name)
                    if made_ids.get(where) != (info.st_dev, info.st_ino):
                        return  # another directory is there now: it is not this call's
                    backend.rmdir_at(parent_fd, name)
        except OSError as exc:
            if exc.errno not in (errno.ENOTEMPTY, errno.EEXIST, errno.ENOENT, errno.ENOTDIR,
                                 errno.ELOOP):
                raise self._error(exc, self.parent) from None
        finally:
            for fd in fds[1:]:
                backend.close(fd)

    def write_bytes(self, data: Content, *, exclusive: bool = False,
                    expect: tuple[int, int] | None = None, mode: int | None = None,
                    fsync: bool = True, replacing: Opened | None = None) -> None:
        """Atomically replace (or create) the entry with ``data`` (bytes, or a
        function writing the content into the fd it is given:
        ``_replace.Content``), as :meth:`Root.write_bytes`; a symlink there
        is replaced itself.
        ``expect``: the (``st_dev``, ``st_ino``) the caller decided on,
        checked right before the rename (:class:`StaleError` if the entry is
        another file, or gone, by then).
        ``replacing``: the regular file being replaced, open (from
        :meth:`open_existing`): its ``fstat`` stands for a fresh ``lstat``
        and its extended attributes are read through its fd (the entry is
        not opened again); ``expect`` is then its identity."""
        if mode is not None and (not isinstance(mode, int) or mode < 0 or mode & ~0o777):
            raise OSError(errno.EINVAL, "mode may carry permission bits (0o777) only",
                          self._parsed.text)
        name = self.name
        if name is None or self._must_be_dir or self._closed or self._tail:
            # (the common write, a plain name in a held parent, needs none of these looks)
            name = self._name(_acts.WRITE_EXCL if exclusive else _acts.WRITE)
            fd = self._dir()
        else:
            fd = self._fd
        backend = self._anchor.backend
        # bytes go as they are; another buffer is checked (and cast to bytes) here
        view = data if callable(data) or type(data) is bytes else memoryview(data).cast("B")
        text = self._parsed.text
        source_fd = None
        if replacing is not None:
            current: os.stat_result | None = replacing.info
            if exclusive or not st.S_ISREG(replacing.info.st_mode):
                raise ValueError("replacing is the regular file a write replaces")
            source_fd = replacing.handle.fd
            if source_fd < 0:
                source_fd = replacing.handle.fileno()  # raises: the handle is closed
            expect = (replacing.info.st_dev, replacing.info.st_ino)
            # a regular file, not written exclusively: nothing below refuses it
        else:
            try:
                current = _acts.lstat_or_none(backend, fd, name)
            except OSError as exc:
                raise self._error(exc, self.path) from None
            if current is not None and self._follow and st.S_ISLNK(current.st_mode):
                raise StaleError("a symlink is there now", text, component=self.path)
            _acts.write_checks(current, exclusive=exclusive, text=text, where=self.path)
        self._held_beneath()
        try:
            replace_in(backend, fd, name, view, current=current, mode=mode, fsync=fsync,
                       exclusive=exclusive, expect=expect, source_fd=source_fd)
        except StaleError:
            self._held_beneath()
            raise StaleError("the file changed since it was looked at", text,
                             component=self.path) from None
        except OSError as exc:
            self._held_beneath()
            raise self._error(exc, self.path) from None
        self._held_beneath()

    def mkdir(self, mode: int = 0o777) -> None:
        """``mkdirat`` of the entry."""
        if not isinstance(mode, int) or mode < 0 or mode & ~0o777:
            raise OSError(errno.EINVAL, "mode may carry permission bits (0o777) only",
                          self._parsed.text)
        name = self._name(_acts.MKDIR)
        self._held_beneath()
        try:
            self._backend().mkdir_at(self._dir(), name, mode)
        except OSError as exc:
            self._held_beneath()
            raise self._error(exc, self.path) from None
        self._held_beneath()

    def remove(self) -> None:
        """``unlinkat`` of the entry (a symlink itself, never its target)."""
        name = self._name(_acts.REMOVE)
        self._held_beneath()
        try:
            self._backend().unlink_at(self._dir(), name)
        except OSError as exc:
            self._held_beneath()
            raise self._error(exc, self.path) from None
        self._held_beneath()

    def rmdir(self) -> None:
        """``unlinkat(AT_REMOVEDIR)`` of the entry."""
        name = self._name(_acts.RMDIR)
        self._held_beneath()
        try:
            self._backend().rmdir_at(self._dir(), name)
        except OSError as exc:
            self._held_beneath()
            raise self._error(exc, self.path) from None
        self._held_beneath()

    def rename(self, dst: Target, *, replace: bool = False, exchange: bool = False) -> None:
        """Rename the entry to ``dst``'s (``renameat2`` between the two held
        parents).  Without ``replace`` an existing ``dst`` is
        ``FileExistsError``, atomically; ``exchange`` swaps the two."""
        flags = RENAME_EXCHANGE if exchange else (0 if replace else RENAME_NOREPLACE)
        dst_op = _acts.RENAME_DST_NOREPLACE if flags & RENAME_NOREPLACE else _acts.RENAME_END
        dname = dst._name(dst_op)
        sname = self._name(_acts.RENAME_END)
        src_end = End(self._dir(), sname, self._must_be_dir, self._parsed.text, self.path)
        dst_end = End(dst._dir(), dname, dst._must_be_dir, dst._parsed.text, dst.path)
        self._held_beneath()
        dst._held_beneath()
        try:
            _acts.rename_names(self._backend(), src_end, dst_end, flags)
        except OSError as exc:
            self._held_beneath()
            dst._held_beneath()
            raise self._error(exc, self.path) from None
        self._held_beneath()
        dst._held_beneath()

    @property
    def dir_fd(self) -> int:
        """The held parent directory fd (the Target's: valid until
        :meth:`close`), for calls on :attr:`name` a Target has no method for;
        ``ENOENT`` while :attr:`creates` are only planned."""
        return self._dir()

    @property
    def held_fd(self) -> int:
        """The directory fd the Target holds: the parent, or, while
        :attr:`creates` are only planned, the deepest directory that exists
        on the way (what a lock on "where this acts" is taken on)."""
        return self._dir(planned_ok=True)

    @property
    def held_lockable(self) -> bool:
        """Whether :attr:`held_fd` was opened for reading (``Root.target(...,
        lockable=True)`` where the resolution could choose how: the fast
        parent, the root), so ``flock`` may be taken on it; ``False`` once
        :meth:`make_parents` moved it (then :meth:`open_held`).  A hint: a
        lock taken on an fd that cannot hold one fails with ``EBADF``."""
        return self._readable and not self._closed

    def lock_fd(self) -> int:
        """:attr:`held_fd` where :attr:`held_lockable` says a ``flock`` may
        be taken on it, else -1 (one call for the two)."""
        return self._fd if self._readable and not self._closed else -1

    def open_held(self) -> Handle:
        """The directory of :attr:`held_fd`, opened for reading as a
        :class:`Handle` (an fd ``flock`` can be taken on: the held one may
        be ``O_PATH``)."""
        fd = self._dir(planned_ok=True)
        backend = self._backend()
        try:
            opened = backend.open_at(fd, ".", os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC | SAFE)
        except OSError as exc:
            raise self._error(exc, self.parent) from None
        return Handle(self._root, backend, opened, self.parent)

    def held_lstat(self, name: str) -> os.stat_result | None:
        """``lstat`` of the single name ``name`` in :attr:`held_fd`'s
        directory (``None`` if it is not there): a look beside the entry
        that resolves nothing."""
        if not _is_name(name):
            raise ValueError(f"not a single name: {name!r}")
        try:
            return _acts.lstat_or_none(self._backend(), self._dir(planned_ok=True), name)
        except OSError as exc:
            raise self._error(exc, self.parent) from None

    def held_exists(self, name: str) -> bool:
        """Whether the single name ``name`` is in :attr:`held_fd`'s directory
        (a link not followed), as :meth:`held_lstat` would find it, without
        raising: any error is ``False`` (a probe that misses as a rule)."""
        if not name or name in (".", "..") or "/" in name or "\0" in name:  # _is_name, inline
            raise ValueError(f"not a single name: {name!r}")
        if self._closed:
            return False
        return self._anchor.backend.exists_at(self._fd, name)

    def held_identity(self) -> tuple[int, int]:
        """``(st_dev, st_ino)`` of :attr:`held_fd`'s directory (an open fd's
        identity never changes: the one resolution saw is given)."""
        if self._identity is not None and not self._closed:
            return self._identity
        try:
            info = self._backend().fstat(self._dir(planned_ok=True))
        except OSError as exc:
            raise self._error(exc, self.parent) from None
        return info.st_dev, info.st_ino

    # -- lifetime ------------------------------------------------------------------
    def close(self) -> None:
        """Close the held parent fd (idempotent)."""
        self._closed = True
        if self._fd < 0 and self._first_fd < 0:
            return  # closed already (a lock's release, then the step's end, then collection)
        fd, self._fd = self._fd, -1
        first, self._first_fd = self._first_fd, -1
        backend = self._anchor.backend
        try:
            if fd >= 0:
                backend.close(fd)
        finally:
            if first >= 0:
                backend.close(first)

    def __del__(self) -> None:
        # Closing's finalizer, without its call of close() for a Target
        # closed already (every Target a step ends with)
        try:
            if self._fd >= 0 or self._first_fd >= 0:
                self.close()
        except Exception:  # a finalizer must not raise (nor a half-made Target's)
            pass

    # -- helpers ---------------------------------------------------------------------
    def _backend(self) -> Backend:
        return self._anchor.backend

    def _dir(self, *, planned_ok: bool = False) -> int:
        if self._closed:
            raise OSError(errno.EBADF, "the target is closed", self._parsed.text)
        if self._tail and not planned_ok:  # make_parents() first
            raise contained_error(errno.ENOENT, self._parsed.text, self.creates[0])
        return self._fd

    def _name(self, op: NameOp) -> str:
        text = self._parsed.text
        if self.name is None:
            raise contained_error(op.dotdot if self._ends_dotdot else op.dot, text, self.path)
        if self._must_be_dir and op.slash not in (_acts.Slash.CREATES, _acts.Slash.RENAME):
            fd = self._dir()
            try:
                _acts.check_slash(self._backend(), fd, self.name, op, text, self.path)
            except OSError as exc:
                raise self._error(exc, self.path) from None
        return self.name

    def _error(self, exc: OSError, where: str) -> OSError:
        if isinstance(exc, PathError) and (isinstance(exc, ContainedError)
                                           or exc.component is not None):
            return exc
        if exc.errno == errno.ENOENT and self._gone():
            return RootVanishedError("the root directory no longer exists")
        return contained_error(exc.errno, self._parsed.text, where)

    def _gone(self) -> bool:
        anchor = self._anchor
        try:
            fd = anchor.acquire(None)
        except OSError:
            return anchor.vanished
        try:
            return anchor.root_gone(fd)
        finally:
            anchor.release()
