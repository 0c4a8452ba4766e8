"""Atomic replace of one name in a resolved directory (a reader sees the old
content or the new, never a part).

:func:`replace_in` writes new content under a temporary name in the same
directory fd and renames it over the target (or links it, for an exclusive
create), so a reader sees the old content or the new, never a mix, and a
failure (``ENOSPC``, ``EIO``, a crash) leaves the old file as it was.

What another local user can see, step by step (THREATS.md row 27):

1. The temporary file is created ``O_CREAT|O_EXCL|O_NOFOLLOW`` with mode
   0600 when it replaces a file, or with its final mode when it creates a new
   one (the caller's ``mode``, else 0o666; the umask only removes bits), so
   it is never more visible than the file it replaces, before a byte is in it.
   A file replaced through an fd of it (:class:`HeldParent`) whose bits show
   every user but the owner the same and the owner no less (0644, 0755) and
   which has no extended attribute to carry (no ACL, no label: listed first)
   is replaced by a temporary file made with those bits: it shows no one
   more than the file did, and needs no ``fchmod`` after.
2. The content is written.
3. The replaced file's owner and group are carried over (where permitted:
   root may give the file to anyone; another user only to a group it is in),
   then its extended attributes, then its permission bits.  Each of these
   makes the temporary file readable by no one who cannot read the final
   file, and each comes after the content, so no one gains a look early.
4. ``fsync`` (optional), close, and ``rename`` over the target (or, for
   ``exclusive``, a rename that never replaces: ``RENAME_NOREPLACE``, else
   ``link`` + ``unlink`` where the filesystem lacks it).

A replace through a held fd with nothing to carry over (no extended
attribute, the file's bits those the temporary file is made with, its owner
the writer) makes these calls, in this order, in one backend call where the
backend has one (:meth:`Backend.replace_file`).

Carried over from the replaced file: permission bits (0o777), owner and
group (where permitted), extended attributes ``user.*``, ``security.*``
(SELinux, Smack, AppArmor labels) and ``system.posix_acl_access`` where the
filesystem and the caller's privileges allow.

Not carried over: the inode itself, so hard-link identity (the other names
of a hard-linked file keep the old content), open fds and locks held on the
old file, and its inode number; setuid, setgid and sticky bits (new content
must not inherit privileges); ``security.capability`` (file capabilities,
for the same reason), ``security.ima`` and ``security.evm`` (they describe
the old content); ``trusted.*`` (overlayfs keeps its own state there); the
timestamps (the file is new) and file flags (``chattr``).  On macOS no
extended attributes are carried (the ``os`` module has no xattr calls
there).  Extended attributes are read through an fd of the replaced file,
so a file the caller cannot read keeps its mode, owner and group, but not
its xattrs.  Owner, group, xattrs and mode are skipped silently where they
are not permitted (``EPERM``, ``EACCES``, ``ENOTSUP``...); any other error
fails the replace, leaving the old file untouched.
"""

from __future__ import annotations

import errno
import fcntl
import os
import re
import secrets
import stat as st
from bisect import bisect_left
from collections.abc import Callable
from typing import TYPE_CHECKING

from ._backend import RENAME_NOREPLACE, REPLACED, TARGET_CHANGED, Backend
from ._errors import StaleError
from ._resolve import mapped

if TYPE_CHECKING:
    from ._resolve import Anchor

__all__ = ["TEMP_SUFFIX", "Content", "HeldParent", "TargetChangedError", "is_temp_name",
           "replace_in", "temp_name", "without_temp_names"]

#: Every temporary file's name ends so: ``.<name[:32]>.<12 hex>.corral-tmp``.
TEMP_SUFFIX = ".corral-tmp"
# the whole form temp_name gives: a dot, 1 to 32 characters of the name it
# stands for (any but "/", a newline too), a dot, 12 lowercase hex digits
_TEMP_FORM = re.compile(r"\.[^/]{1,32}\.[0-9a-f]{12}" + re.escape(TEMP_SUFFIX), re.DOTALL)

_SAFE = os.O_NOFOLLOW | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC
_S_IFMT, _S_IFREG = 0o170000, st.S_IFREG  # a mode's file type, looked at without a call
_CREATE = os.O_WRONLY | os.O_CREAT | os.O_EXCL | _SAFE  # the temporary file's open
_CHANGED = "the file changed since it was looked at; nothing was written"
_PERMISSIONS = 0o777
_REPLACING_MODE = 0o600
_NEW_FILE_MODE = 0o666
_READ_CHUNK = 1 << 20  # bytes read at a time of a file grown past its fstat
# security.* names that grant privileges or vouch for the old content
_NOT_CARRIED = frozenset({"security.capability", "security.ima", "security.evm"})
# where a file's ACL or label can be listed (else one may be there unseen)
_XATTRS_LISTED = hasattr(os, "listxattr")


class TargetChangedError(StaleError):
    """The file at the target is no longer the one the caller decided on
    (``expect`` given to :func:`replace_in`): nothing was written.
    ``errno`` is ``EAGAIN``: look again, then retry."""

    default_errno = errno.EAGAIN


class _Names:
    """Unpredictable temporary names without a syscall each: drawn from the
    kernel's random source :data:`_NAMES_DRAWN` at a time (and again in a
    forked child, which would otherwise use its parent's)."""

    def __init__(self) -> None:
        self._ready: list[str] = []

    def rekey(self) -> None:
        self._ready = []

    def next_hex(self) -> str:
        try:
            return self._ready.pop()  # (one step under the GIL: no two callers get one name)
        except IndexError:
            drawn = secrets.token_hex(6 * _NAMES_DRAWN)
            self._ready = [drawn[at:at + 12] for at in range(12, len(drawn), 12)]
            return drawn[:12]


_NAMES_DRAWN = 128  # 48 random bits each


_NAMES = _Names()
os.register_at_fork(after_in_child=_NAMES.rekey)


def temp_name(name: str) -> str:
    """A fresh temporary name standing for ``name`` (see :data:`TEMP_SUFFIX`)."""
    try:  # (next_hex's common step written out, one pop as there: every replace passes here)
        drawn = _NAMES._ready.pop()
    except IndexError:
        drawn = _NAMES.next_hex()
    return f".{name[:32]}.{drawn}{TEMP_SUFFIX}"


def is_temp_name(name: str) -> bool:
    """Whether ``name`` (one name, no ``/``) has the form :func:`temp_name`
    gives: a write in flight (or one a crash cut short), never a file anyone
    meant.  A name only like it (another number of hex digits, capitals, no
    leading dot, another suffix) is an ordinary name."""
    return name.endswith(TEMP_SUFFIX) and _TEMP_FORM.fullmatch(name) is not None


def without_temp_names(names: list[str], *, is_sorted: bool = False) -> list[str]:
    """``names`` without those :func:`is_temp_name` accepts (``names``
    itself when it holds none: the common case costs one scan in C, or two
    bisections of a list sorted by code point, where every such name lies
    between ``"."`` and ``"/"``)."""
    if is_sorted:
        first = bisect_left(names, ".")
        end = bisect_left(names, "/", first)
        if not any(map(is_temp_name, names[first:end])):
            return names
    elif TEMP_SUFFIX not in "\0".join(names):
        return names
    return [name for name in names if not is_temp_name(name)]


#: What :func:`replace_in` writes: bytes, or a function that writes the
#: content into the fd it is given (a stream, a copy from another fd).
Content = bytes | bytearray | memoryview | Callable[[int], None]


def replace_in(backend: Backend, dir_fd: int, name: str, data: Content,
               *, current: os.stat_result | None, mode: int | None, fsync: bool,
               exclusive: bool, expect: tuple[int, int] | None = None,
               source_fd: int | None = None) -> None:
    """Atomically make ``name`` in ``dir_fd`` a regular file holding ``data``
    (bytes, or what ``data(fd)`` writes into the temporary file's fd).

    ``current`` is the ``lstat`` of what ``name`` is now (``None``: nothing);
    a regular file's metadata is carried over (module docstring).  ``mode``
    sets the permission bits instead (0o777 at most; the caller checked).
    ``exclusive`` refuses an existing ``name`` (``FileExistsError``, from
    the rename that never replaces, or ``linkat``).  ``expect`` is the
    ``(st_dev, st_ino)`` of the file the caller decided on, checked right
    before the rename.  ``source_fd`` is an
    fd open on the file ``current`` describes (the caller checked its
    identity): its extended attributes are read through it, and ``name``
    is not opened again.

    Raises whatever the system calls raise (``OSError`` with the kernel's
    errno, no filename: the caller names its path), and
    :class:`TargetChangedError` when ``expect`` no longer holds.  On any
    failure the temporary file is removed and ``name`` is untouched (once
    an exclusive link made ``name``, the write is done: nothing raised).
    """
    if exclusive and expect is not None:
        raise ValueError("expect is for replacing a file; exclusive creates one")
    # the regular file being replaced, whose metadata is carried over
    source = current if current is not None and st.S_ISREG(current.st_mode) else None
    if source is not None and source_fd is not None and mode is None and _XATTRS_LISTED:
        # its extended attributes read first: with none to carry (no ACL,
        # no label), the temporary file may be made with the file's own bits
        _replace_listed(backend, dir_fd, name, data, source, source_fd,
                        _listed_xattrs(backend, source_fd), fsync=fsync, expect=expect)
        return
    _replace_steps(backend, dir_fd, name, temp_name(name), data, source, None,
                   _create_mode(source, mode), mode=mode, fsync=fsync, exclusive=exclusive,
                   expect=expect, source_fd=source_fd)


def _replace_listed(backend: Backend, dir_fd: int, name: str, data: Content,
                    source: os.stat_result, source_fd: int, attrs: list[str] | None, *,
                    fsync: bool, expect: tuple[int, int] | None) -> None:
    """:func:`replace_in` of the regular file ``source`` open as
    ``source_fd``, its extended attributes listed as ``attrs`` (``None``:
    not to be listed by this caller), no mode given."""
    bits = source.st_mode & _PERMISSIONS
    if attrs is None:
        attrs = []  # not to be listed by this caller: none carried, maybe some there
        create_mode = _REPLACING_MODE
    elif not attrs or not any(_carried(attr) for attr in attrs):
        create_mode = _SHOWN_BITS[bits]
        if not attrs and expect is not None and fsync and type(data) is bytes and \
                create_mode == bits:
            # nothing to carry but what the temporary file is made with (its
            # owner checked there): the whole replace in one call, where the
            # backend has one; otherwise (a wrapper's default, another owner,
            # bits the umask took) each call below, a fresh name
            made = backend.replace_file(dir_fd, temp_name(name), name, data, _CREATE,
                                        create_mode, (source.st_uid, source.st_gid), expect)
            if made == REPLACED:
                return
            if made == TARGET_CHANGED:
                raise TargetChangedError(_CHANGED)
    else:
        create_mode = _REPLACING_MODE
    _replace_steps(backend, dir_fd, name, temp_name(name), data, source, attrs, create_mode,
                   mode=None, fsync=fsync, exclusive=False, expect=expect, source_fd=source_fd)


def _replace_held(backend: Backend, dir_fd: int, name: str, data: bytes,
                  source: os.stat_result, source_fd: int) -> None:
    """:meth:`HeldParent.replace`'s replace of ``source`` (open as
    ``source_fd``) by :func:`_replace_listed`, its extended attributes
    listed and, where there are none to carry and its bits show no one
    more, the whole replace made in the same call where the backend has
    one (:meth:`Backend.replace_held`: the common write, one return from C)."""
    bits = source.st_mode & _PERMISSIONS
    expect = (source.st_dev, source.st_ino)
    if _SHOWN_BITS[bits] != bits or type(data) is not bytes:
        attrs = _listed_xattrs(backend, source_fd)
    else:
        try:  # temp_name written out (one pop, as there): every plain write passes here
            drawn = _NAMES._ready.pop()
        except IndexError:
            drawn = _NAMES.next_hex()
        answer = backend.replace_held(dir_fd, source_fd, f".{name[:32]}.{drawn}{TEMP_SUFFIX}",
                                      name, data, _CREATE, bits, (source.st_uid, source.st_gid),
                                      expect)
        if answer == REPLACED:
            return
        if answer is None:  # no such call: listed, and maybe replaced, call by call
            attrs = _listed_xattrs(backend, source_fd)
        elif isinstance(answer, list):  # some listed: nothing made
            attrs = answer
        elif answer < 0:  # the listing failed: nothing made
            attrs = _listing_failed(backend, source_fd, -answer)
        elif answer == TARGET_CHANGED:
            raise TargetChangedError(_CHANGED)
        else:  # none to carry, but its owner or bits: carried call by call
            _replace_steps(backend, dir_fd, name, temp_name(name), data, source, [], bits,
                           mode=None, fsync=True, exclusive=False, expect=expect,
                           source_fd=source_fd)
            return
    _replace_listed(backend, dir_fd, name, data, source, source_fd, attrs, fsync=True,
                    expect=expect)


def _listing_failed(backend: Backend, source_fd: int, err: int) -> list[str] | None:
    """What :func:`_listed_xattrs` makes of a listing that failed with
    ``err``: ``None`` where the caller may not list them, the names listed
    again into room enough where there were more than the first call had
    room for (``ERANGE``), else the error raised."""
    if err == errno.ERANGE:
        return _listed_xattrs(backend, source_fd)
    if err in NOT_PERMITTED:
        return None
    raise OSError(err, os.strerror(err))


def _replace_steps(backend: Backend, dir_fd: int, name: str, tmp: str, data: Content,
                   source: os.stat_result | None, attrs: list[str] | None, create_mode: int,
                   *, mode: int | None, fsync: bool, exclusive: bool,
                   expect: tuple[int, int] | None, source_fd: int | None) -> None:
    """:func:`replace_in`'s calls one by one: ``tmp`` made with
    ``create_mode``, the content written, ``source``'s owner, extended
    attributes (``attrs``: listed already) and bits carried over, then the
    rename (or link)."""
    fd = backend.open_at(dir_fd, tmp, _CREATE, create_mode)
    try:
        try:
            if type(data) is bytes:  # written as it is: a regular file takes it whole, as a rule
                written = backend.write(fd, data)
                if written < len(data):
                    _write_all(backend, fd, memoryview(data)[written:])
            elif callable(data):
                data(fd)
            else:
                _write_all(backend, fd, data)
            kept: os.stat_result | None = None  # the temporary file's, its owner the file's
            if source is not None:
                kept = _carry_owner(backend, fd, source)
                if source_fd is not None:
                    if attrs is None or attrs:  # (listed already, and none: none to copy)
                        _copy_xattrs(backend, source_fd, fd, attrs)
                else:
                    _carry_xattrs(backend, dir_fd, name, fd, source)
            final_mode = mode if mode is not None or source is None else \
                st.S_IMODE(source.st_mode) & _PERMISSIONS
            if final_mode is not None and (
                    kept is None or st.S_IMODE(kept.st_mode) != final_mode):
                backend.fchmod(fd, final_mode)
            if fsync:
                backend.fsync(fd)
        finally:
            backend.close(fd)
        if expect is not None:
            _check_expected(backend, dir_fd, name, expect)
        if exclusive:
            _publish_new(backend, dir_fd, tmp, name)
        else:
            backend.rename_at(dir_fd, tmp, dir_fd, name)
    except BaseException:
        try:
            backend.unlink_at(dir_fd, tmp)
        except OSError:
            pass
        raise


# a filesystem without a rename that never replaces says one of these
_NO_NOREPLACE = frozenset({errno.EINVAL, errno.ENOSYS, errno.ENOTSUP, errno.EOPNOTSUPP})


def _publish_new(backend: Backend, dir_fd: int, tmp: str, name: str) -> None:
    """Give the temporary file ``tmp`` the name ``name``, refusing an
    existing one (``FileExistsError``): a rename that never replaces, so
    the new file has one link from its first moment under ``name`` (a read
    beside it would take two for a hard link); a link and an unlink where
    the filesystem has no such rename."""
    try:
        backend.rename_at(dir_fd, tmp, dir_fd, name, RENAME_NOREPLACE)
        return
    except OSError as exc:
        if exc.errno not in _NO_NOREPLACE:
            raise
    backend.link_at(dir_fd, tmp, dir_fd, name)
    try:
        backend.unlink_at(dir_fd, tmp)
    except OSError:
        # ``name`` holds the content now: the write is done, whatever
        # becomes of its second name (tried once more, else left)
        _unlink_quietly(backend, dir_fd, tmp)


def _unlink_quietly(backend: Backend, dir_fd: int, name: str) -> None:
    try:
        backend.unlink_at(dir_fd, name)
    except OSError:
        pass


class HeldParent:
    """The directory holding one file, opened by :meth:`Root.hold_parent`
    with one ``openat2`` that followed no link, held open (readable, so a
    ``flock`` can be taken on it) for one replace of that file: look at
    its neighbours, open the file once, read its head, replace it on the
    identity opened.  Nothing is resolved again: every call acts on the
    held fd.

    :attr:`path` is the file's canonical root-relative path (the spelling's
    names: no link was followed, no ``..`` is in it).  Use it in a
    ``with`` block, or :meth:`close` it; closing lets a ``flock`` taken by
    :meth:`lock` go."""

    __slots__ = ("path", "name", "_text", "_anchor", "_backend", "_fd", "_file", "_info")

    def __init__(self, anchor: Anchor, fd: int, text: str, path: str, name: str) -> None:
        self.path = path
        self.name = name
        self._text = text  # as the caller spelled it, for errors
        self._anchor = anchor
        self._backend = anchor.backend
        self._fd = fd
        self._file = -1
        self._info: os.stat_result | None = None

    def fileno(self) -> int:
        """The held directory's fd (``-1`` once closed)."""
        return self._fd

    def lock(self) -> bool:
        """Take an exclusive ``flock`` on the held directory without
        waiting: ``False`` if another open file holds it (in this process
        too) or the filesystem has no such locks.  Let go by :meth:`close`."""
        try:
            self._backend.flock(self._fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            return False
        return True

    def holds(self, name: str) -> bool:
        """Whether the held directory has an entry ``name`` (a final link
        not followed; any error is ``False``)."""
        return self._backend.exists_at(self._fd, name)

    def open_file(self) -> os.stat_result | None:
        """Open the file (``O_RDONLY|O_NOFOLLOW|O_NONBLOCK``) and give its
        ``fstat``, kept for :meth:`head` and :meth:`replace`; ``None`` when it
        cannot be opened (missing, a link, unreadable: nothing is raised)."""
        if self._file >= 0:
            raise ValueError("the file is open already")
        opened = self._backend.open_stat(self._fd, self.name, os.O_RDONLY | _SAFE)
        if opened is None:
            return None
        self._file, info = opened
        self._info = info
        return info

    def open_regular(self, below: int, head: int) -> tuple[os.stat_result, bytes] | None:
        """:meth:`open_file` and :meth:`head` in one step, for a replace
        that wants only a regular file of one link, smaller than ``below``
        bytes: its ``fstat`` and at most its first ``head`` bytes (none
        asked: ``b""``; nothing is read of any other file); ``None`` when
        it cannot be opened or read, or is not such a file (then left
        open for :meth:`close`, nothing raised)."""
        info = self.open_file()
        if info is None:
            return None
        size = info.st_size
        if info.st_mode & _S_IFMT != _S_IFREG or info.st_nlink > 1 or size >= below:
            return None
        if not head:
            return info, b""
        try:
            return info, self._backend.pread(self._file, head if head <= size else size + 1, 0)
        except OSError:
            return None

    def read_regular(self, limit: int) -> tuple[os.stat_result, bytes] | None:
        """:meth:`open_file` and :meth:`read` in one step, for an edit that
        wants only a regular file of one link of at most ``limit`` bytes:
        its ``fstat`` and its bytes (``limit + 1`` of them where it grew
        since: the caller refuses it); ``None`` when it cannot be opened or
        read, or is not such a file (then left open for :meth:`close`,
        nothing raised)."""
        info = self.open_file()
        if info is None:
            return None
        if info.st_mode & _S_IFMT != _S_IFREG or info.st_nlink > 1 or info.st_size > limit:
            return None
        try:
            return info, self.read(limit)
        except OSError:
            return None

    def head(self, size: int) -> bytes:
        """At most the first ``size`` bytes of the file :meth:`open_file`
        opened, in one ``pread`` (as long as its ``fstat`` said it is, and
        one byte more)."""
        info = self._info
        if info is None:
            raise ValueError("no file is open")
        return self._backend.pread(self._file, min(size, info.st_size + 1), 0)

    def read(self, limit: int) -> bytes:
        """The whole file :meth:`open_file` opened, but at most ``limit + 1``
        bytes (the caller refuses more): one ``pread`` as long as its
        ``fstat`` said it is and one byte more, which a file that did not
        grow answers short; a file grown since is read on to the bound."""
        info = self._info
        if info is None:
            raise ValueError("no file is open")
        size = info.st_size
        want = (size if size < limit else limit) + 1
        first = self._backend.pread(self._file, want, 0)
        got = len(first)
        if got == size < want or not got:
            return first  # the common file: read whole at once
        backend, fd = self._backend, self._file
        chunks, total = [first], len(first)
        while total <= limit:
            chunk = backend.pread(fd, min(_READ_CHUNK, limit + 1 - total), total)
            if not chunk:
                break
            chunks.append(chunk)
            total += len(chunk)
        return b"".join(chunks)

    def replace(self, data: bytes) -> None:
        """Atomically replace the file :meth:`open_file` opened with
        ``data``, as :meth:`Root.write_bytes` does (fsync, then rename; its
        mode, owner, group and extended attributes carried over, read
        through the open fd), on the condition that the name still holds
        the file opened, checked right before the rename.

        Raises :class:`StaleError` (naming :attr:`path`) when another file
        is there by then, and ``OSError`` as the core raises it (the
        root-relative path as ``filename``, :class:`RootVanishedError` for
        a root removed) for any other failure; either way the file is
        untouched."""
        info = self._info
        if info is None or not st.S_ISREG(info.st_mode):
            raise ValueError("replace is for the regular file open_file opened")
        backend = self._backend
        try:
            if _XATTRS_LISTED:  # replace_in's step for a file open, written out
                _replace_held(backend, self._fd, self.name, data, info, self._file)
            else:
                replace_in(backend, self._fd, self.name, data, current=info, mode=None,
                           fsync=True, exclusive=False, expect=(info.st_dev, info.st_ino),
                           source_fd=self._file)
        except StaleError:
            raise StaleError("the file changed since it was looked at", self._text,
                             component=self.path) from None
        except OSError as exc:
            raise self._mapped(exc) from None

    def _mapped(self, exc: OSError) -> OSError:
        anchor = self._anchor
        try:
            root_fd = anchor.acquire(None)
        except OSError as closed:
            return closed
        try:
            return mapped(anchor, root_fd, exc, self._text, self.path)
        finally:
            anchor.release()

    def close(self) -> None:
        """Close the file and the directory (idempotent)."""
        backend = self._backend
        file, self._file = self._file, -1
        fd, self._fd = self._fd, -1
        try:
            if file >= 0:
                backend.close(file)
        finally:
            if fd >= 0:
                backend.close(fd)

    def __enter__(self) -> HeldParent:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _bits_shown_to_no_one_more(bits: int) -> int:
    """The temporary file's mode at creation replacing a file of permission
    ``bits`` with no extended attribute to carry (no ACL, no label): its
    own bits where they show every user but the owner the same and the
    owner no less (0644, 0755, 0600), so no one sees the temporary file
    (owned by the writer, its group maybe not the file's) who cannot read
    the file; else 0600, the bits set after the content."""
    other = bits & 0o7
    if (bits >> 3) & 0o7 != other or (bits >> 6) & other != other:
        return _REPLACING_MODE
    return bits


#: :func:`_bits_shown_to_no_one_more` of each permission bits, by them
_SHOWN_BITS = tuple(_bits_shown_to_no_one_more(bits) for bits in range(_PERMISSIONS + 1))


def _create_mode(source: os.stat_result | None, mode: int | None) -> int:
    """The temporary file's mode at creation: never more open than the file
    it replaces (0600), or the final mode of a new file."""
    if source is not None:
        return _REPLACING_MODE if mode is None else mode & _REPLACING_MODE
    return _NEW_FILE_MODE if mode is None else mode


def _write_all(backend: Backend, fd: int, data: bytes | bytearray | memoryview) -> None:
    written, view = 0, memoryview(data).cast("B")
    while written < len(view):
        written += backend.write(fd, view[written:])


#: errnos meaning "this metadata cannot be set here by this caller", which a
#: copy of metadata tolerates (the operation goes on without it)
NOT_PERMITTED = frozenset({errno.EPERM, errno.EACCES, errno.ENOTSUP, errno.EOPNOTSUPP,
                           errno.ENODATA, errno.EINVAL, errno.ENOSYS})


def _tolerated(exc: OSError) -> bool:
    return exc.errno in NOT_PERMITTED


def _carry_owner(backend: Backend, fd: int, current: os.stat_result) -> os.stat_result | None:
    """Give the temporary file ``current``'s owner and group, as far as the
    caller may: all of it (root), else the group alone (a member), else
    nothing.  The temporary file's ``fstat`` where its owner and group
    were the file's already (nothing changed: its mode is as it says)."""
    mine = backend.fstat(fd)
    if (mine.st_uid, mine.st_gid) == (current.st_uid, current.st_gid):
        return mine
    try:
        backend.fchown(fd, current.st_uid, current.st_gid)
        return None
    except OSError as exc:
        if not _tolerated(exc):
            raise
    if mine.st_gid != current.st_gid:
        try:
            backend.fchown(fd, -1, current.st_gid)
        except OSError as exc:
            if not _tolerated(exc):
                raise
    return None


def _carried(attr: str) -> bool:
    if attr.startswith("user.") or attr == "system.posix_acl_access":
        return True
    return attr.startswith("security.") and attr not in _NOT_CARRIED


def _carry_xattrs(backend: Backend, dir_fd: int, name: str, fd: int,
                  current: os.stat_result) -> None:
    """Copy the carried extended attributes of the file at ``name`` (if it is
    still ``current``) onto the temporary file ``fd``."""
    try:
        src = backend.open_at(dir_fd, name, os.O_RDONLY | _SAFE)
    except OSError:
        return  # unreadable, or gone or swapped since: nothing to copy from
    try:
        info = backend.fstat(src)
        if (info.st_dev, info.st_ino) != (current.st_dev, current.st_ino):
            return
        _copy_xattrs(backend, src, fd)
    finally:
        backend.close(src)


def _listed_xattrs(backend: Backend, src: int) -> list[str] | None:
    """The extended attributes of the file open as ``src`` (``None`` where
    the caller may not list them)."""
    try:
        return backend.flistxattr(src)
    except OSError as exc:
        if _tolerated(exc):
            return None
        raise


def _copy_xattrs(backend: Backend, src: int, fd: int, attrs: list[str] | None = None) -> None:
    """Copy the carried extended attributes of the file open as ``src``
    onto ``fd`` (``attrs``: as listed already)."""
    if attrs is None:
        attrs = _listed_xattrs(backend, src)
        if attrs is None:
            return
    for attr in attrs:
        if _carried(attr):
            _copy_xattr(backend, src, fd, attr)


def _copy_xattr(calls: Backend, src: int, dst: int, attr: str) -> None:
    try:
        calls.fsetxattr(dst, attr, calls.fgetxattr(src, attr))
    except OSError as exc:
        if not _tolerated(exc):
            raise


def _check_expected(backend: Backend, dir_fd: int, name: str, expect: tuple[int, int]) -> None:
    try:
        info = backend.lstat_at(dir_fd, name)
    except FileNotFoundError:
        info = None
    if info is None or (info.st_dev, info.st_ino) != expect:
        raise TargetChangedError(_CHANGED)
