"""Building and snapshotting the small trees the Root tables run against.

A tree lives in a *base* directory::

    base/ws/          the root under test (the case's ``fs`` is built here)
    base/outside/     a sibling: secret, sub/inner
    base/ws-evil/     a sibling sharing the root's name as a prefix: secret
    base/secret       next to the root, for "climbed one level too far"

The ``fs`` of a case is a list of entries, relative to ``ws`` (as in Go's
``makefs``):

    "d/"               a directory (parents are made as needed)
    "f"                a regular file whose content is ``content_of("f")``
    "l -> target"      a symlink with that text
    "h => $OUT/secret" a hard link to that file
    "p|fifo"           a FIFO; "s|sock" a unix socket; "n|chr" /dev/null's device
    "m|nosymfollow"    a tmpfs mounted at m with ``nosymfollow`` (skips the
                       test where mounting is impossible; unmounted with the
                       scratch directory, see :data:`MOUNTS`)

``$BASE``, ``$WS``, ``$OUT`` and ``$EVIL`` in a target (or a case's path)
stand for the absolute paths of this tree, so two trees built from one case
differ only in those prefixes.  :func:`snapshot` maps them back, so snapshots
of two trees compare equal when the same things happened to both.
"""

from __future__ import annotations

import os
import socket
import stat as st
from dataclasses import dataclass
from pathlib import Path

import pytest

from corral.contained._linux import proc_fds

OUTSIDE_SECRET = b"outside secret"
EVIL_SECRET = b"ws-evil secret"
BASE_SECRET = b"base secret"


def content_of(name: str) -> bytes:
    """The content the DSL gives the file ``name`` (unique per name)."""
    return b"content of " + os.fsencode(name)


@dataclass(frozen=True)
class Tree:
    base: Path
    ws: Path
    out: Path
    evil: Path

    def subst(self, text):
        """Replace the ``$`` placeholders in ``text`` (str or bytes; an
        ``os.PathLike`` is passed through as it is)."""
        if isinstance(text, os.PathLike):
            return text
        pairs = [("$BASE", self.base), ("$WS", self.ws), ("$OUT", self.out),
                 ("$EVIL", self.evil)]
        if isinstance(text, bytes):
            for key, value in pairs:
                text = text.replace(key.encode(), os.fsencode(value))
            return text
        for key, value in pairs:
            text = text.replace(key, str(value))
        return text

    def host(self, path):
        """The path ``os`` is given for a root-relative ``path``: joined to the
        root, except the empty path (which ``os`` refuses by itself)."""
        path = os.fspath(self.subst(path))
        if isinstance(path, bytes):
            return path if path in (b"",) or path.startswith(b"/") else os.fsencode(self.ws) + b"/" + path
        return path if path == "" or path.startswith("/") else f"{self.ws}/{path}"

    def at(self, rel: str) -> str:
        """Absolute host path of the root-relative ``rel`` ("." is the root)."""
        return str(self.ws) if rel in ("", ".") else f"{self.ws}/{rel}"


def build(base: Path, fs) -> Tree:
    """Build the standard tree in ``base`` with the case's ``fs`` in ``ws``."""
    tree = Tree(base, base / "ws", base / "outside", base / "ws-evil")
    b = str(base)
    for d in (b, b + "/ws", b + "/outside", b + "/outside/sub", b + "/ws-evil"):
        os.mkdir(d)
    for name, data in (("/outside/secret", OUTSIDE_SECRET),
                       ("/outside/sub/inner", OUTSIDE_SECRET + b" inner"),
                       ("/ws-evil/secret", EVIL_SECRET), ("/secret", BASE_SECRET)):
        with open(b + name, "wb") as f:
            f.write(data)
    for entry in fs:
        add(tree, entry)
    return tree


def _parent(path: str) -> None:
    parent = os.path.dirname(path)
    if not os.path.isdir(parent):
        os.makedirs(parent)


def add(tree: Tree, entry: str) -> None:
    """Add one DSL entry to ``tree.ws``."""
    ws = str(tree.ws)
    if " -> " in entry:
        name, target = entry.split(" -> ", 1)
        path = f"{ws}/{name}"
        _parent(path)
        os.symlink(tree.subst(target), path)
    elif " => " in entry:
        name, target = entry.split(" => ", 1)
        path = f"{ws}/{name}"
        _parent(path)
        os.link(tree.subst(target), path, follow_symlinks=False)
    elif entry.endswith("/"):
        os.makedirs(f"{ws}/{entry}", exist_ok=True)
    elif "|" in entry:
        name, kind = entry.rsplit("|", 1)
        path = f"{ws}/{name}"
        _parent(path)
        if kind == "fifo":
            os.mkfifo(path)
        elif kind == "sock":
            # bound by a relative name from its directory: a unix socket's
            # path is limited to about 100 bytes, temp dirs can be longer
            here = os.open(".", os.O_RDONLY)
            sock = socket.socket(socket.AF_UNIX)
            try:
                os.chdir(os.path.dirname(path))
                sock.bind(os.path.basename(path))
            finally:
                sock.close()  # the socket file stays; nobody listens
                os.fchdir(here)
                os.close(here)
        elif kind == "nosymfollow":
            os.mkdir(path)
            _mount_nosymfollow(path)
        elif kind == "chr":
            try:
                os.mknod(path, st.S_IFCHR | 0o666, os.makedev(1, 3))
            except PermissionError:
                pytest.skip("making a device node needs root (CAP_MKNOD)")
        else:
            raise ValueError(f"unknown special kind {kind!r}")
    else:
        path = f"{ws}/{entry}"
        _parent(path)
        with open(path, "wb") as f:
            f.write(content_of(entry))


#: Mount points made by "|nosymfollow" entries, unmounted by the scratch fixture.
MOUNTS: list[str] = []


def _mount_nosymfollow(path: str) -> None:
    import ctypes
    libc = ctypes.CDLL(None, use_errno=True)
    # MS_NOSYMFOLLOW (Linux 5.10) = 256
    if libc.mount(b"tmpfs", os.fsencode(path), b"tmpfs", 256, b"mode=0755") != 0:
        err = ctypes.get_errno()
        pytest.skip(f"cannot mount a nosymfollow tmpfs here: {os.strerror(err)}")
    MOUNTS.append(path)


def unmount_all() -> None:
    """Detach every mount the trees made (the scratch fixture calls it)."""
    import ctypes
    libc = ctypes.CDLL(None, use_errno=True)
    while MOUNTS:
        libc.umount2(os.fsencode(MOUNTS.pop()), 2)  # MNT_DETACH


def snapshot(tree: Tree) -> dict:
    """Everything under ``tree.base``: relative path -> (kind, permission
    bits, content or link text).  Host prefixes in link texts are mapped
    back to placeholders; FIFOs are never opened."""
    top = str(tree.base)
    cut = len(top) + 1
    # ws-evil before ws: the root's path is a prefix of its evil sibling's
    maps = [(str(tree.evil), "$EVIL"), (str(tree.ws), "$WS"), (str(tree.out), "$OUT"),
            (top, "$BASE")]
    out = {}
    stack = [top]
    while stack:
        with os.scandir(stack.pop()) as it:
            entries = list(it)
        for entry in entries:
            path = entry.path
            info = entry.stat(follow_symlinks=False)
            mode = info.st_mode
            rel = path[cut:]
            if st.S_ISLNK(mode):
                text = os.readlink(path)
                if text.startswith("/"):
                    for value, key in maps:
                        text = text.replace(value, key)
                out[rel] = ("link", text)
            elif st.S_ISDIR(mode):
                out[rel] = ("dir", st.S_IMODE(mode))
                stack.append(path)
            elif st.S_ISREG(mode):
                with open(path, "rb") as f:
                    out[rel] = ("file", st.S_IMODE(mode), f.read())
            else:
                out[rel] = ("special", st.S_IFMT(mode), st.S_IMODE(mode))
    return out


def fingerprint(tree: Tree) -> dict:
    """Cheaper than :func:`snapshot`, as strong at telling "nothing changed":
    relative path -> (mode, inode, size, nlink, mtime, ctime) from lstat.  A
    write, chmod, link or rename of an entry moves its ctime; adding or
    removing a name moves its directory's mtime."""
    top = str(tree.base)
    cut = len(top) + 1
    dev = os.stat(top).st_dev
    out = {}
    stack = [top]
    while stack:
        with os.scandir(stack.pop()) as it:
            for entry in it:
                info = entry.stat(follow_symlinks=False)
                out[entry.path[cut:]] = (info.st_mode, info.st_ino, info.st_size, info.st_nlink,
                                         info.st_mtime_ns, info.st_ctime_ns)
                # not into mounts (a bind-mounted /proc), but into the trees' own
                if st.S_ISDIR(info.st_mode) and (info.st_dev == dev or entry.path in MOUNTS):
                    stack.append(entry.path)
    return out


def outside_part(prints: dict) -> dict:
    """The entries of a fingerprint that are not in the root, without link
    count and ctime: removing or replacing a hard link inside the root to an
    outside file changes those, and nothing else, of the outside file."""
    return {k: v[:3] + v[4:5] for k, v in prints.items()
            if k != "ws" and not k.startswith("ws/")}




def walk_root_of(fd: int) -> tuple[bytes, int, int]:
    """What ``Backend.walk_open`` and ``fd_beneath_at`` are given for the
    root open as ``fd``: its kernel name (read once), device and inode."""
    info = os.fstat(fd)
    return os.readlink(b"%d" % fd, dir_fd=proc_fds()), info.st_dev, info.st_ino


def moved_out_tree(base: Path) -> tuple[Path, Path]:
    """Row 35's tree for the walk in one call: ``root/a/b/c/g`` (inside)
    beside ``out/s/g`` (outside), both under ``base``."""
    root, out = base / "root", base / "out"
    (root / "a" / "b" / "c").mkdir(parents=True)
    (root / "a" / "b" / "c" / "g").write_bytes(b"inside")
    (out / "s").mkdir(parents=True)
    (out / "s" / "g").write_bytes(b"OUTSIDE")
    return root, out
