"""The kernel as oracle: ``openat2(RESOLVE_BENEATH|RESOLVE_NO_MAGICLINKS)``.

Written here with its own ctypes binding on purpose: it must not share code
with corral (``corral.contained._linux``), or a bug there would be in both
the thing tested and the thing it is tested against.

Each ``k_*`` function performs one operation the way the kernel would if it
had a BENEATH variant of that call: the parent directory (or the whole path)
is opened with ``openat2``, and the final ``*at`` call acts on the last name.
They raise ``OSError`` with the kernel's errno.  Only corral's documented
pre-syscall checks are applied first (:func:`precheck`: NUL and over-long
input), plus the documented refusal of FIFOs/sockets/devices by file
operations (``EOPNOTSUPP``), which the kernel has no notion of, and
corral's one documented difference for ``O_CREAT``: ``link/`` follows the
link first, so an outward one is an escape (:func:`_creat_through_slash`).
One kernel quirk is corrected where it shows (:func:`_counted`: ``ELOOP``
for an escape after 21-40 links).
"""

from __future__ import annotations

import ctypes
import errno
import os
import stat as st
import sys
import time

IS_LINUX = sys.platform.startswith("linux")

_RESOLVE_NO_MAGICLINKS = 0x02
_RESOLVE_BENEATH = 0x08
RESOLVE = _RESOLVE_BENEATH | _RESOLVE_NO_MAGICLINKS
_NR_OPENAT2 = 437


class _How(ctypes.Structure):
    _fields_ = [("flags", ctypes.c_uint64), ("mode", ctypes.c_uint64),
                ("resolve", ctypes.c_uint64)]


_libc = ctypes.CDLL(None, use_errno=True) if IS_LINUX else None
if _libc is not None:
    _libc.syscall.restype = ctypes.c_long


def available() -> bool:
    if _libc is None:
        return False
    try:
        os.close(kopen(-100, ".", os.O_PATH))
    except OSError:
        return False
    return True


def kopen(dir_fd: int, path: str, flags: int, mode: int = 0) -> int:
    """Raw ``openat2`` beneath ``dir_fd`` (``O_CLOEXEC`` added)."""
    raw = os.fsencode(path)
    if b"\x00" in raw:  # ctypes would cut the string: never let that happen
        raise ValueError("NUL in oracle path")
    # openat2 refuses a mode without O_CREAT (EINVAL), unlike openat
    how = _How(flags | os.O_CLOEXEC, mode if flags & os.O_CREAT else 0, RESOLVE)
    deadline = None
    while True:
        fd = _libc.syscall(_NR_OPENAT2, ctypes.c_int(dir_fd), ctypes.c_char_p(raw),
                           ctypes.byref(how), ctypes.c_size_t(ctypes.sizeof(how)))
        if fd >= 0:
            return fd
        err = ctypes.get_errno()
        if err == errno.ELOOP:
            err = _counted(dir_fd, raw, flags)  # the kernel's double count: see there
        if err != errno.EAGAIN:
            raise OSError(err, os.strerror(err), path)
        # a rename anywhere on the machine during a ".." lookup: the answer
        # is "try again", never an answer about this tree
        now = time.monotonic()
        if deadline is None:
            deadline = now + 10.0
        elif now > deadline:
            raise OSError(err, "oracle: openat2 kept answering EAGAIN", path)


def _counted(dir_fd: int, raw: bytes, flags: int) -> int:
    """What an ``ELOOP`` from ``openat2`` really was, from the links counted
    here by hand (``lstat``/``readlink`` beneath ``dir_fd``, no openat2):
    ``ELOOP`` if resolution needs more than 40 links (or ends at a link that
    ``O_NOFOLLOW`` refuses), ``EXDEV`` if it escapes first, ``EAGAIN`` if
    neither (ask the kernel again).

    Why (a kernel quirk this suite found, Linux 6.18): ``total_link_count``
    is set once per ``nameidata``, so when an RCU walk is redone with
    references the redo starts from the count the RCU attempt reached. A
    BENEATH lookup whose ``..`` reaches the root always redoes the walk, so
    ``c/../..`` where ``c`` is a chain of 21 to 40 links answers ``ELOOP``
    instead of ``EXDEV`` (when the dentries are cached); any other reason to
    leave RCU mode (load, other processes) can do the same. Counting here
    does not depend on the dcache's state, so the oracle's answer is
    deterministic (asking ``RESOLVE_CACHED`` was not: under load it answered
    ``EAGAIN`` for a genuine self-loop)."""
    if raw.startswith(b"/"):
        return errno.EXDEV
    todo = raw.split(b"/")
    todo.reverse()  # a stack: the next component last
    here: list[bytes] = []
    links = 0
    while todo:
        part = todo.pop()
        if part in (b"", b"."):
            continue
        if part == b"..":
            if not here:
                return errno.EXDEV
            here.pop()
            continue
        path = b"/".join([*here, part])
        try:
            mode = os.lstat(path, dir_fd=dir_fd).st_mode
        except OSError:
            return errno.EAGAIN  # missing or not a directory: no loop here
        if not st.S_ISLNK(mode):
            here.append(part)
            continue
        if not todo and flags & os.O_NOFOLLOW:
            return errno.EAGAIN if flags & os.O_PATH else errno.ELOOP
        links += 1
        if links > 40:  # the kernel's MAXSYMLINKS
            return errno.ELOOP
        body = os.readlink(path, dir_fd=dir_fd)
        if body.startswith(b"/"):
            return errno.EXDEV
        todo.extend(reversed(body.split(b"/")))
    return errno.EAGAIN


def precheck(*paths: str) -> None:
    """corral's documented checks made before any system call, in argument
    order: a NUL byte is ``EINVAL``; a path of 4096 bytes or more, or any
    component over 255 bytes (even after a missing one) is ``ENAMETOOLONG``."""
    for path in paths:
        if "\x00" in path:
            raise OSError(errno.EINVAL, "NUL byte", path)
        raw = path.encode("utf-8", "surrogateescape")
        if len(raw) >= 4096 or any(len(part) > 255 for part in raw.split(b"/")):
            raise OSError(errno.ENAMETOOLONG, "too long", path)


def split_last(path: str) -> tuple[str, str, str]:
    """Lexically split a non-empty path: ``(parent, name, trailing)``.

    ``parent`` keeps its final ``/`` (``"a/"``), is ``"."`` when there is
    none, and is absolute when the path is.  ``name`` has no slashes;
    ``trailing`` is the run of ``/`` after it.  ``"/"`` gives ``("/", "", "/")``.
    """
    stripped = path.rstrip("/")
    trailing = path[len(stripped):]
    if not stripped:
        return "/", "", trailing
    idx = stripped.rfind("/")
    if idx < 0:
        return ".", stripped, trailing
    return stripped[:idx + 1], stripped[idx + 1:], trailing


def _special(fd: int) -> bool:
    return st.S_IFMT(os.fstat(fd).st_mode) in (st.S_IFIFO, st.S_IFSOCK, st.S_IFCHR, st.S_IFBLK)


def _refuse_special(rootfd: int, path: str) -> None:
    """EOPNOTSUPP if ``path`` (followed) is a FIFO, socket or device."""
    try:
        fd = kopen(rootfd, path, os.O_PATH)
    except OSError:
        return
    try:
        if _special(fd):
            raise OSError(errno.EOPNOTSUPP, "special file", path)
    finally:
        os.close(fd)


def _parent(rootfd: int, path: str) -> tuple[int, str]:
    """Open the parent of ``path`` (a directory, followed); return it and the
    last name with its trailing slashes.  A final ``.``/``..`` is checked by
    opening the whole path first, so ``..`` at the top is ``EXDEV``."""
    if path == "":
        raise OSError(errno.ENOENT, "empty path", path)
    parent, name, trailing = split_last(path)
    if name in ("", ".", ".."):
        os.close(kopen(rootfd, path, os.O_PATH))
        if name == "":  # the path is "/" (absolute: already EXDEV above)
            raise OSError(errno.EXDEV, "absolute", path)
    return kopen(rootfd, parent, os.O_PATH | os.O_DIRECTORY), name + trailing


def _creat_through_slash(rootfd: int, path: str) -> None:
    """corral's one documented difference from the kernel for ``O_CREAT``:
    ``link/`` names what the link points to, so a final symlink is followed
    first and an outward one is an escape (``EXDEV``), where the kernel
    answers ``EISDIR`` without looking at the link."""
    parent, name, trailing = split_last(path)
    if not trailing or name in ("", ".", ".."):
        return
    try:
        pfd = kopen(rootfd, parent, os.O_PATH | os.O_DIRECTORY)
    except OSError:
        return
    try:
        is_link = st.S_ISLNK(os.stat(name, dir_fd=pfd, follow_symlinks=False).st_mode)
    except OSError:
        is_link = False
    finally:
        os.close(pfd)
    if not is_link:
        return
    try:
        os.close(kopen(rootfd, path.rstrip("/"), os.O_PATH))
    except OSError as exc:
        if exc.errno == errno.EXDEV:
            raise


# -- operations ---------------------------------------------------------------

def k_open(rootfd: int, path: str, flags: int, mode: int = 0o644) -> int:
    """``Root.open``: a FIFO/socket/device is ``EOPNOTSUPP`` (corral opens it
    non-blocking, looks, and refuses)."""
    precheck(path)
    if flags & os.O_CREAT:
        _creat_through_slash(rootfd, path)
        _refuse_special(rootfd, path)
    fd = kopen(rootfd, path, flags | os.O_NONBLOCK | os.O_NOCTTY, mode)
    if _special(fd):
        os.close(fd)
        raise OSError(errno.EOPNOTSUPP, "special file", path)
    return fd


def k_stat(rootfd: int, path: str, follow: bool = True) -> os.stat_result:
    precheck(path)
    fd = kopen(rootfd, path, os.O_PATH | (0 if follow else os.O_NOFOLLOW))
    try:
        return os.fstat(fd)
    finally:
        os.close(fd)


def k_listdir(rootfd: int, path: str) -> list[str]:
    precheck(path)
    fd = kopen(rootfd, path, os.O_RDONLY | os.O_DIRECTORY | os.O_NONBLOCK)
    try:
        return os.listdir(fd)
    finally:
        os.close(fd)


def k_mkdir(rootfd: int, path: str, mode: int = 0o777) -> None:
    precheck(path)
    pfd, name = _parent(rootfd, path)
    try:
        os.mkdir(name, mode, dir_fd=pfd)
    finally:
        os.close(pfd)


def k_remove(rootfd: int, path: str) -> None:
    precheck(path)
    pfd, name = _parent(rootfd, path)
    try:
        os.unlink(name, dir_fd=pfd)
    finally:
        os.close(pfd)


def k_rename(rootfd: int, src: str, dst: str) -> None:
    precheck(src, dst)
    sfd, sname = _parent(rootfd, src)
    try:
        dfd, dname = _parent(rootfd, dst)
        try:
            os.rename(sname, dname, src_dir_fd=sfd, dst_dir_fd=dfd)
        finally:
            os.close(dfd)
    finally:
        os.close(sfd)


def k_write_bytes(rootfd: int, path: str, data: bytes) -> None:
    """Replace-or-create with a final symlink followed (beneath): the kernel's
    ``open(O_CREAT|O_TRUNC)``.  (corral writes a temporary file and renames
    it; the end state is the same for trees without hard links.)"""
    precheck(path)
    _creat_through_slash(rootfd, path)
    _refuse_special(rootfd, path)
    fd = kopen(rootfd, path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NONBLOCK | os.O_NOCTTY,
               0o644)
    try:
        os.write(fd, data)
    finally:
        os.close(fd)


def k_makedirs(rootfd: int, path: str) -> list[tuple[int, int]]:
    """``makedirs(path, exist_ok=False)``: ``os.makedirs`` beneath the root.

    Each intermediate lexical prefix that does not resolve (``ENOENT``) is
    made with ``mkdirat`` in its kernel-resolved parent; as in
    ``os.makedirs``, nothing is created through a dangling symlink
    (``mkdirat`` meets the link itself: ``ENOENT``, its target is missing).
    The last name is made unless something of that name exists, whatever
    it is or points at (``EEXIST``, as ``mkdir``; a directory this call
    made itself, as in ``x/y/../y``, is no error); a last ``.`` or ``..``
    is resolved as a directory instead.  Returns the identities
    of the directories made, outermost first; ``EEXIST`` when none was."""
    precheck(path)
    if path.startswith("/"):
        raise OSError(errno.EXDEV, "absolute", path)
    if path == "":
        raise OSError(errno.ENOENT, "empty path", path)
    comps = [c for c in path.split("/") if c not in ("", ".")]
    if split_last(path)[1] == ".":  # "f/." must resolve "f" as a directory
        comps.append(".")
    made: list[tuple[int, int]] = []
    for i, name in enumerate(comps):
        last = i == len(comps) - 1
        if not last or name in (".", ".."):
            try:
                os.close(kopen(rootfd, "/".join(comps[:i + 1]), os.O_PATH | os.O_DIRECTORY))
                continue
            except OSError as exc:
                if exc.errno != errno.ENOENT:
                    raise
        pfd = kopen(rootfd, "/".join(comps[:i]) or ".", os.O_PATH | os.O_DIRECTORY)
        try:
            if last:
                try:
                    info = os.stat(name, dir_fd=pfd, follow_symlinks=False)
                except FileNotFoundError:
                    info = None
                if info is not None:
                    if made and st.S_ISDIR(info.st_mode):
                        continue  # made by this very call ("x/y/../y")
                    raise OSError(errno.EEXIST, "exists", path)
            try:
                os.mkdir(name, dir_fd=pfd)
            except FileExistsError:  # the last name exists, or a dangling link
                if last:
                    raise
                raise OSError(errno.ENOENT, "dangling symlink", path) from None
            info = os.stat(name, dir_fd=pfd, follow_symlinks=False)
            made.append((info.st_dev, info.st_ino))
        finally:
            os.close(pfd)
    if not made:
        raise OSError(errno.EEXIST, "exists", path)
    return made
