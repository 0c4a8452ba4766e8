"""Every public operation of ``Root``, written twice: once through the Root
and once as the same call with plain ``os`` on the host path (the oracle).

Each :class:`Op` says whether it follows a final symlink (then it acts on a
case's ``target``) or not (``ltarget``), what it needs to find there before
it runs (``prep``), and how to check that a success acted on the right thing.
Results are normalised so the Root's and the oracle's can be compared with
``==``: fds are read and closed inside, listings sorted, names as ``str``.
"""

from __future__ import annotations

import ctypes
import errno
import os
import stat as st
import sys
from dataclasses import dataclass
from typing import Callable

from corral.contained import Root

from .trees import Tree, content_of

OPEN_W_DATA = b"written by open(O_CREAT|O_WRONLY)"
WRITE_DATA = b"written by write_bytes"
SYMLINK_TEXT = "zz-link-text"
SRC_NAME = "zz-src"  # rename_dst moves this file onto the case's path
SRC_DATA = b"the rename source"
DST_NAME = "zz-dst"  # rename_src moves the case's path here


def ident(info: os.stat_result) -> tuple:
    return (info.st_dev, info.st_ino, info.st_mode, info.st_nlink, info.st_size)


def _kind(entry) -> str:
    if entry.is_symlink():
        return "symlink"
    if entry.is_dir(follow_symlinks=False):
        return "dir"
    if entry.is_file(follow_symlinks=False):
        return "file"
    return "other"


def _text(name) -> str:
    return os.fsdecode(name)


# -- the Root side -------------------------------------------------------------

def _read_fd(fd: int) -> tuple:
    info = os.fstat(fd)
    data = os.read(fd, 1 << 16) if st.S_ISREG(info.st_mode) else None
    return ident(info), data


def root_open_r(root: Root, tree: Tree, path):
    fd = root.open(path, os.O_RDONLY)
    try:
        return _read_fd(fd)
    finally:
        os.close(fd)


def root_open_w(root: Root, tree: Tree, path):
    fd = root.open(path, os.O_CREAT | os.O_WRONLY, 0o644)
    try:
        os.write(fd, OPEN_W_DATA)
    finally:
        os.close(fd)


_EXCL = os.O_CREAT | os.O_EXCL | os.O_WRONLY


def root_open_excl(root: Root, tree: Tree, path):
    fd = root.open(path, _EXCL, 0o644)
    try:
        os.write(fd, OPEN_W_DATA)
    finally:
        os.close(fd)


def _walk_rows(rows) -> list:
    return [(_text(d), sorted(map(_text, dn)), sorted(map(_text, fn))) for d, dn, fn in rows]


def _relative_rows(rows, top) -> list:
    out = []
    for d, dn, fn, *rest in rows:
        rel = os.path.relpath(d, top) if d != top else "."
        out.append((rel, dn, fn, *rest))
    return sorted(out)


def root_walk(root: Root, tree: Tree, path):
    return _walk_rows(root.walk(path, onerror=_raise))


def root_fwalk(root: Root, tree: Tree, path):
    rows = []
    for d, dn, fn, fd in root.fwalk(path, onerror=_raise):
        rows.append((d, sorted(dn), sorted(fn), ident(os.fstat(fd))[:2]))
    return rows


def _raise(exc: OSError) -> None:
    raise exc


def root_scandir(root: Root, tree: Tree, path):
    return sorted((e.name, e.kind, e.path) for e in root.scandir(path))


_O_PATH_NOFOLLOW = getattr(os, "O_PATH", 0) | os.O_NOFOLLOW


def root_open_path_nofollow(root: Root, tree: Tree, path):
    fd = root.open(path, _O_PATH_NOFOLLOW)
    try:
        return ident(os.fstat(fd))
    finally:
        os.close(fd)


def os_open_path_nofollow(tree: Tree, host):
    fd = os.open(host, _O_PATH_NOFOLLOW)
    try:
        return ident(os.fstat(fd))
    finally:
        os.close(fd)


def root_open_nofollow(root: Root, tree: Tree, path):
    fd = root.open(path, os.O_RDONLY | os.O_NOFOLLOW)
    try:
        return _read_fd(fd)
    finally:
        os.close(fd)


def os_open_nofollow(tree: Tree, host):
    fd = os.open(host, os.O_RDONLY | os.O_NOFOLLOW)
    try:
        return _read_fd(fd)
    finally:
        os.close(fd)


def root_handle_r(root: Root, tree: Tree, path):
    with root.open_handle(path) as handle:
        return (*_read_fd(handle.fd), handle.path)


def _target_row(target) -> tuple:
    info = target.lstat()
    return (target.path, target.parent, target.name, None if info is None else ident(info))


def root_target_l(root: Root, tree: Tree, path):
    with root.target(path) as target:
        return _target_row(target)


def root_target_f(root: Root, tree: Tree, path):
    with root.target(path, follow_final=True) as target:
        return _target_row(target)


# -- the os side (the oracle) ---------------------------------------------------

def os_open_r(tree: Tree, host):
    fd = os.open(host, os.O_RDONLY)
    try:
        return _read_fd(fd)
    finally:
        os.close(fd)


def os_open_w(tree: Tree, host):
    fd = os.open(host, os.O_CREAT | os.O_WRONLY, 0o644)
    try:
        os.write(fd, OPEN_W_DATA)
    finally:
        os.close(fd)


def _os_walk(host, walker) -> list:
    rows = []
    for d, dn, fn, *rest in walker:
        # os lists a symlink to a directory as a directory (without entering
        # it); corral never follows a link to classify it: it is a file there.
        links = [n for n in dn if os.path.islink(os.path.join(d, n))]
        dn = [n for n in dn if n not in links]
        rel = os.path.relpath(d, host) if d != host else "."
        rows.append((_text(rel), sorted(map(_text, dn)), sorted(map(_text, [*fn, *links])),
                     *rest))
    return sorted(rows)


def os_open_excl(tree: Tree, host):
    fd = os.open(host, _EXCL, 0o644)
    try:
        os.write(fd, OPEN_W_DATA)
    finally:
        os.close(fd)


def os_walk(tree: Tree, host):
    return _os_walk(host, os.walk(host, onerror=_raise))


def os_fwalk(tree: Tree, host):
    # os.fwalk itself is no oracle: it yields nothing for a symlinked top
    # (Root.fwalk follows it, as walk does) and blocks opening a FIFO.  So:
    # os.walk, plus the identity of each directory it names.
    return _os_walk(host, ((d, dn, fn, ident(os.stat(d))[:2])
                           for d, dn, fn in os.walk(host, onerror=_raise)))


def os_scandir(tree: Tree, host):
    with os.scandir(host) as it:
        return sorted((_text(e.name), _kind(e)) for e in it)


def os_realpath(tree: Tree, host):
    os.stat(host)  # the kernel's answer for a missing or looping path
    real = os.path.realpath(host)
    return _text(os.path.relpath(real, os.fsencode(tree.ws) if isinstance(real, bytes)
                                 else tree.ws))


def _rel(tree: Tree, real) -> str:
    top = os.fsencode(tree.ws) if isinstance(real, bytes) else str(tree.ws)
    return _text(os.path.relpath(real, top))


def os_handle_r(tree: Tree, host):
    return (*os_open_r(tree, host), os_realpath(tree, host))


def _split_final(host):
    """(parent, name) of a host path; name ``None`` when the spelling ends
    at a directory ("." or ".." last)."""
    slash = b"/" if isinstance(host, bytes) else "/"
    stripped = host.rstrip(slash) or slash
    head, tail = os.path.split(stripped)
    if _text(tail) in (".", ".."):
        return stripped, None
    return head, tail


def _os_target_row(tree: Tree, parent, name) -> tuple:
    if name is None:
        info = os.stat(parent)  # the directory itself: it must resolve
        real = _rel(tree, os.path.realpath(parent))
        return (real, real, None, ident(info))
    if not st.S_ISDIR(os.stat(parent).st_mode):  # the parent must resolve to a directory
        raise NotADirectoryError(errno.ENOTDIR, "not a directory", parent)
    where = _rel(tree, os.path.join(os.path.realpath(parent), name))
    try:
        info = ident(os.lstat(os.path.join(parent, name)))
    except FileNotFoundError:
        info = None
    return (where, where.rpartition("/")[0] or ".", _text(name), info)


def os_target_l(tree: Tree, host):
    if not host:
        raise FileNotFoundError(errno.ENOENT, "empty path", host)
    return _os_target_row(tree, *_split_final(host))


def os_target_f(tree: Tree, host):
    if not host:
        raise FileNotFoundError(errno.ENOENT, "empty path", host)
    parent, name = _split_final(host)
    try:
        os.stat(host)
    except OSError as exc:  # a loop is refused; a dangling final link is not
        if exc.errno == errno.ELOOP:
            raise
    # follow final links one by one: a text ending in "." or ".." ends at a
    # directory (no final name), as the resolver says
    while name is not None and os.path.islink(os.path.join(parent, name)):
        text = os.readlink(os.path.join(parent, name))
        parent, name = _split_final(os.path.join(os.path.realpath(parent), text))
    return _os_target_row(tree, parent, name)


def os_write_bytes(tree: Tree, host):
    with open(host, "wb") as f:
        f.write(WRITE_DATA)


def os_write_bytes_excl(tree: Tree, host):
    with open(host, "xb") as f:
        f.write(WRITE_DATA)


_libc = ctypes.CDLL(None, use_errno=True)


def os_rename_noreplace(src, dst) -> None:
    """rename refusing an existing dst, written here so the oracle does not
    lean on the code under test: renameat2(RENAME_NOREPLACE) on Linux,
    renameatx_np(RENAME_EXCL) on Darwin."""
    if sys.platform == "darwin":
        rc = _libc.renameatx_np(-2, os.fsencode(src), -2, os.fsencode(dst), 0x4)
    else:
        rc = _libc.renameat2(-100, os.fsencode(src), -100, os.fsencode(dst), 1)
    if rc != 0:
        err = ctypes.get_errno()
        raise OSError(err, os.strerror(err), src, None, dst)


# -- the table of operations ----------------------------------------------------

@dataclass(frozen=True)
class Op:
    name: str
    follows: bool  # a final symlink is followed: the op acts on ``target``
    prep: str  # what the A-style table puts at the target first
    mutates: bool  # the oracle then runs on a second, identical tree
    root: Callable  # (root, tree, path) -> raw result
    os: Callable | None  # (tree, host path) -> result comparable to cmp(raw)
    cmp: Callable = staticmethod(lambda raw: raw)  # raw Root result -> comparable


def _rows_cmp(raw):
    if not raw:
        return raw
    top = raw[0][0]
    return _relative_rows(raw, top)


OPS: list[Op] = [
    Op("open_r", True, "file", False, root_open_r, os_open_r),
    Op("open_w", True, "absent", True, root_open_w, os_open_w),
    # O_EXCL never follows a final link: it exists
    Op("open_excl", False, "absent", True, root_open_excl, os_open_excl),
    Op("stat", True, "file", False, lambda r, t, p: ident(r.stat(p)),
       lambda t, h: ident(os.stat(h))),
    Op("lstat", False, "file", False, lambda r, t, p: ident(r.lstat(p)),
       lambda t, h: ident(os.lstat(h))),
    Op("listdir", True, "dir", False, lambda r, t, p: sorted(r.listdir(p)),
       lambda t, h: sorted(map(_text, os.listdir(h)))),
    Op("scandir", True, "dir", False, root_scandir, os_scandir,
       cmp=lambda raw: [(n, k) for n, k, _ in raw]),
    Op("mkdir", False, "absent", True, lambda r, t, p: r.mkdir(p, 0o755),
       lambda t, h: os.mkdir(h, 0o755)),
    Op("makedirs", True, "absent", True, lambda r, t, p: r.makedirs(p, 0o755),
       lambda t, h: os.makedirs(h, 0o755), cmp=lambda raw: None),
    Op("makedirs_exist_ok", True, "absent", True,
       lambda r, t, p: r.makedirs(p, 0o755, exist_ok=True),
       lambda t, h: os.makedirs(h, 0o755, exist_ok=True), cmp=lambda raw: None),
    # no os equivalent: compared with a real makedirs on the second tree
    Op("makedirs_dry", True, "absent", False,
       lambda r, t, p: r.makedirs(p, 0o755, dry_run=True), None),
    Op("remove", False, "file", True, lambda r, t, p: r.remove(p), lambda t, h: os.remove(h)),
    Op("rmdir", False, "emptydir", True, lambda r, t, p: r.rmdir(p), lambda t, h: os.rmdir(h)),
    Op("rename_src", False, "file", True,
       lambda r, t, p: r.rename(p, DST_NAME, replace=False),
       lambda t, h: os_rename_noreplace(h, t.at(DST_NAME))),
    Op("rename_dst", False, "absent", True,
       lambda r, t, p: r.rename(SRC_NAME, p, replace=False),
       lambda t, h: os_rename_noreplace(t.at(SRC_NAME), h)),
    Op("readlink", False, "file", False, lambda r, t, p: r.readlink(p),
       lambda t, h: _text(os.readlink(h))),
    Op("walk", True, "dir", False, root_walk, os_walk, cmp=_rows_cmp),
    Op("fwalk", True, "dir", False, root_fwalk, os_fwalk, cmp=_rows_cmp),
    Op("read_bytes", True, "file", False, lambda r, t, p: r.read_bytes(p),
       lambda t, h: open(h, "rb").read()),
    Op("write_bytes", True, "absent", True, lambda r, t, p: r.write_bytes(p, WRITE_DATA),
       os_write_bytes),
    Op("write_bytes_replace", True, "file", True, lambda r, t, p: r.write_bytes(p, WRITE_DATA),
       os_write_bytes),
    # exclusive: never follows a final link (O_EXCL semantics: it exists)
    Op("write_bytes_excl", False, "absent", True,
       lambda r, t, p: r.write_bytes(p, WRITE_DATA, exclusive=True), os_write_bytes_excl),
    Op("exists", True, "file", False, lambda r, t, p: r.exists(p),
       lambda t, h: os.path.exists(h)),
    Op("symlink", False, "absent", True, lambda r, t, p: r.symlink(SYMLINK_TEXT, p),
       lambda t, h: os.symlink(SYMLINK_TEXT, h)),
    Op("realpath", True, "file", False, lambda r, t, p: r.realpath(p), os_realpath),
    # O_NOFOLLOW: a final link is the link (O_PATH) or ELOOP; "link/" follows it
    Op("open_nofollow", False, "file", False, root_open_nofollow, os_open_nofollow),
    Op("open_path_nofollow", False, "file", False, root_open_path_nofollow,
       os_open_path_nofollow),
    # a Handle's path and a Target's are where resolution really went (what callers judge)
    Op("open_handle", True, "file", False, root_handle_r, os_handle_r),
    Op("target", False, "file", False, root_target_l, os_target_l),
    Op("target_follow", True, "file", False, root_target_f, os_target_f),
]
OP_NAMES = [op.name for op in OPS]
OPS_BY_NAME = {op.name: op for op in OPS}


def prepare(tree: Tree, op: Op, target: str | None) -> None:
    """What ``op`` needs: the rename source, and (A-style cases) the target."""
    if op.name == "rename_dst":
        with open(tree.at(SRC_NAME), "wb") as f:
            f.write(SRC_DATA)
    if target is None:
        return
    host = tree.at(target)
    os.makedirs(os.path.dirname(host), exist_ok=True)
    if op.prep == "file":
        with open(host, "wb") as f:
            f.write(content_of(target))
    elif op.prep in ("dir", "emptydir"):
        os.mkdir(host)
        if op.prep == "dir":
            with open(os.path.join(host, "inner"), "wb") as f:
                f.write(b"inner")


def check_target(op: Op, tree: Tree, raw, target: str, ltarget: str) -> None:
    """Assert that a success of ``op`` acted on ``target`` (or ``ltarget``)."""
    at, lat = tree.at(target), tree.at(ltarget)
    is_link = ltarget != target
    name = op.name
    if name == "open_r":
        assert raw == (ident(os.stat(at)), content_of(target))
    elif name in ("open_w", "open_excl", "write_bytes", "write_bytes_replace",
                  "write_bytes_excl"):
        data = OPEN_W_DATA if name.startswith("open") else WRITE_DATA
        assert st.S_ISREG(os.lstat(at).st_mode)
        with open(at, "rb") as f:
            assert f.read() == data
    elif name == "stat":
        assert raw == ident(os.stat(at))
    elif name == "lstat":
        assert raw == ident(os.lstat(lat))
    elif name == "listdir":
        assert raw == ["inner"]
    elif name == "scandir":
        prefix = "" if target == "." else target + "/"
        assert raw == [("inner", "file", prefix + "inner")]
    elif name == "mkdir":
        assert st.S_ISDIR(os.lstat(lat).st_mode)
    elif name in ("makedirs", "makedirs_exist_ok", "makedirs_dry"):
        assert raw == [target]
        assert os.path.isdir(at) == (name != "makedirs_dry")
    elif name == "remove":
        assert not os.path.lexists(lat)
        if is_link:
            assert os.path.exists(at), "remove followed the link"
    elif name == "rmdir":
        assert not os.path.lexists(lat)
    elif name == "rename_src":
        assert not os.path.lexists(lat)
        assert os.path.lexists(tree.at(DST_NAME))
    elif name == "rename_dst":
        assert not os.path.lexists(tree.at(SRC_NAME))
        with open(lat, "rb") as f:
            assert f.read() == SRC_DATA
    elif name == "readlink":
        assert raw == _text(os.readlink(lat))
    elif name in ("walk", "fwalk"):
        assert raw[0][0] == target, "walk names the real root-relative directory"
        rows = [(".", [], ["inner"])]
        if name == "fwalk":
            rows = [(*rows[0], tuple(ident(os.stat(at))[:2]))]
        assert _rows_cmp(raw) == rows
    elif name == "read_bytes":
        assert raw == content_of(target)
    elif name == "exists":
        assert raw is True
    elif name == "symlink":
        assert os.readlink(lat) == SYMLINK_TEXT
    elif name == "realpath":
        assert raw == target
    elif name == "open_nofollow":
        assert raw == (ident(os.stat(lat)), content_of(target))
    elif name == "open_path_nofollow":
        assert raw == ident(os.lstat(lat))
    elif name == "open_handle":
        assert raw == (ident(os.stat(at)), content_of(target), target)
    elif name in ("target", "target_follow"):
        where = target if name == "target_follow" else ltarget
        assert raw[0] == where and raw[3] == ident(os.lstat(tree.at(where)))
    else:  # pragma: no cover - a new op needs its check
        raise AssertionError(f"no target check for {name}")


# What a non-following op does when the path's final component is a symlink:
# it acts on the link itself.
ON_FINAL_LINK = {
    "lstat": "ok", "readlink": "ok", "remove": "ok", "rename_src": "ok", "target": "ok",
    "rmdir": errno.ENOTDIR, "mkdir": errno.EEXIST, "symlink": errno.EEXIST,
    "rename_dst": errno.EEXIST, "write_bytes_excl": errno.EEXIST, "open_excl": errno.EEXIST,
    "open_nofollow": errno.ELOOP,
}
