"""The surface operations in the Root tables: every case of
``test_root_table`` (resolution, consistency with os, special files) run
against chmod, chown, utime (and their ``follow_symlinks=False`` forms),
truncate, link (each end), copyfile (each end), rmtree, open_file,
read_text and write_text, on every backend config, with ``os`` /
``shutil`` / ``pathlib`` on a copy of the tree as the oracle (see
``helpers.table``: nothing outside changes, no fd leaks, no host path in an
error, the openat2 fast path and the walk agree, and os gives the same).

This is a parallel table: the operations are :class:`helpers.operations.Op`
records of their own, and the runner's three per-op hooks (what to put in
place first, what a success must have done, what a non-following op does
on a final symlink) are extended for them by the ``_surface_hooks``
fixture, for these tests only.

Where the oracle cannot be asked as it is, its answer is translated, each
with the reason (the ``os_*`` functions): ``os.chmod`` raises
``NotImplementedError`` for a symlink itself where the kernel says
``EOPNOTSUPP``; ``shutil.rmtree`` says "Cannot call rmtree on a symbolic
link" with no errno (ENOTDIR here) but follows a dangling or looping link
into ENOENT/ELOOP, and on ``dir/.`` or ``link/`` it empties a directory
before failing where corral refuses first (EINVAL, ENOTDIR), and on a FIFO
it blocks opening it (ENOTDIR here); ``shutil.copyfile`` turns open()'s
EISDIR for ``missing/`` into a FileNotFoundError without errno.
"""

from __future__ import annotations

import dataclasses
import errno
import os
import shutil
import stat as st

import pytest

from corral.contained import SpecialFileError

from .helpers import operations, table
from .helpers.table import case_ids
from .helpers.trees import Tree, content_of
from .helpers.operations import DST_NAME, SRC_DATA, SRC_NAME, Op
from .test_root_table import _ON_LINK_SLASH, CONSISTENCY, RESOLUTION, SPECIAL

MODE = 0o640
NS = (1_000_000_001, 2_000_000_002)
TEXT = "written by write_text\n"
ROOT_USER = os.geteuid() == 0
# foreign ids as root (CI), one's own otherwise (the call still runs)
UID, GID = (1234, 5678) if ROOT_USER else (os.getuid(), os.getgid())


def _owners(tree: Tree) -> dict[str, tuple[int, int]]:
    """uid and gid of everything outside the root (the runner's fingerprint
    of the outside leaves owners out)."""
    out = {}
    for top in (tree.out, tree.evil, tree.base):
        for dirpath, dirnames, filenames in os.walk(top):
            for name in [*dirnames, *filenames, "."]:
                full = os.path.join(dirpath, name)
                if not full.startswith(str(tree.ws)):
                    info = os.lstat(full)
                    out[full] = (info.st_uid, info.st_gid)
            if top == tree.base:
                break  # the base's own entries only (ws, outside... are walked above)
    return out


def root_chown(follow: bool):
    def run(root, tree: Tree, path):
        before = _owners(tree)
        try:
            root.chown(path, UID, GID, follow_symlinks=follow)
        finally:
            after = _owners(tree)  # (a race test may move entries out meanwhile)
            assert {k: v for k, v in after.items() if k in before} == \
                {k: v for k, v in before.items() if k in after}, \
                "an owner outside the root changed"
    return run


def os_chmod_nofollow(tree: Tree, host) -> None:
    try:
        os.chmod(host, MODE, follow_symlinks=False)
    except NotImplementedError:  # os's word for the kernel's EOPNOTSUPP (no lchmod)
        raise OSError(errno.EOPNOTSUPP, os.strerror(errno.EOPNOTSUPP), host) from None


def os_rmtree(tree: Tree, host) -> None:
    text = os.fsdecode(host)
    last = [p for p in text.split("/") if p][-1:] if text else []
    if last in ([".."], ["."]) or text == "":
        os.stat(host)  # the kernel's answer for what is not a directory, first
        # shutil would empty the directory and then fail to remove "."
        raise OSError(errno.EINVAL if text else errno.ENOENT, "refused", host)
    if os.path.islink(text.rstrip("/")):
        # shutil says "Cannot call rmtree on a symbolic link" for a link to a
        # directory, but follows a dangling or looping one into ENOENT/ELOOP,
        # and for "link/" empties the link's target, then fails rmdir
        raise OSError(errno.ENOTDIR, "a symlink", host)
    try:
        kind = st.S_IFMT(os.lstat(host).st_mode)
    except OSError:
        kind = None
    if kind in (st.S_IFIFO, st.S_IFSOCK, st.S_IFCHR, st.S_IFBLK):
        # shutil opens it for reading first: a FIFO would block for ever
        raise OSError(errno.ENOTDIR, "not a directory", host)
    shutil.rmtree(host)


def os_copyfile(src, dst) -> None:
    try:
        shutil.copyfile(src, dst)
    except FileNotFoundError as exc:
        if exc.errno is None:  # shutil's "Directory does not exist" for open()'s EISDIR
            raise OSError(errno.EISDIR, str(exc), dst) from None
        raise


def os_read_text(tree: Tree, host) -> str:
    with open(host, encoding="utf-8", errors="surrogateescape") as f:
        return f.read()


def os_write_text(tree: Tree, host) -> int:
    with open(host, "w") as f:
        return f.write(TEXT)


def _open_file(mode: str):
    def run(root, tree: Tree, path):
        with root.open_file(path, mode) as f:
            return f.read() if mode == "rb" else f.write(b"by open_file")

    def oracle(tree: Tree, host):
        with open(host, mode) as f:
            return f.read() if mode == "rb" else f.write(b"by open_file")
    return run, oracle


SURFACE_OPS = [
    Op("chmod", True, "file", True, lambda r, t, p: r.chmod(p, MODE),
       lambda t, h: os.chmod(h, MODE)),
    Op("chmod_nofollow", False, "file", True,
       lambda r, t, p: r.chmod(p, MODE, follow_symlinks=False), os_chmod_nofollow),
    Op("chown", True, "file", True, root_chown(True), lambda t, h: os.chown(h, UID, GID)),
    Op("chown_nofollow", False, "file", True, root_chown(False),
       lambda t, h: os.lchown(h, UID, GID)),
    Op("utime", True, "file", True, lambda r, t, p: r.utime(p, ns=NS),
       lambda t, h: os.utime(h, ns=NS)),
    Op("utime_nofollow", False, "file", True,
       lambda r, t, p: r.utime(p, ns=NS, follow_symlinks=False),
       lambda t, h: os.utime(h, ns=NS, follow_symlinks=False)),
    Op("truncate", True, "file", True, lambda r, t, p: r.truncate(p, 3),
       lambda t, h: os.truncate(h, 3)),
    Op("link_src", False, "file", True, lambda r, t, p: r.link(p, DST_NAME),
       lambda t, h: os.link(h, t.at(DST_NAME), follow_symlinks=False)),
    Op("link_dst", False, "absent", True, lambda r, t, p: r.link(SRC_NAME, p),
       lambda t, h: os.link(t.at(SRC_NAME), h, follow_symlinks=False)),
    # copyfile returns dst as given: compared as the call's success only
    Op("copyfile_src", True, "file", True, lambda r, t, p: r.copyfile(p, DST_NAME) and None,
       lambda t, h: os_copyfile(h, t.at(DST_NAME))),
    Op("copyfile_dst", True, "absent", True, lambda r, t, p: r.copyfile(SRC_NAME, p) and None,
       lambda t, h: os_copyfile(t.at(SRC_NAME), h)),
    Op("rmtree", False, "dir", True, lambda r, t, p: r.rmtree(p), os_rmtree),
    # (names, hence contents, are not all UTF-8)
    # the oracle is pathlib's read_text/write_text, on the path as given
    # (pathlib itself would drop a trailing "/", and open a FIFO "p/" as "p")
    Op("read_text", True, "file", False,
       lambda r, t, p: r.read_text(p, "utf-8", "surrogateescape"), os_read_text),
    Op("write_text", True, "absent", True, lambda r, t, p: r.write_text(p, TEXT), os_write_text),
    Op("open_file_rb", True, "file", False, *_open_file("rb")),
    Op("open_file_ab", True, "absent", True, *_open_file("ab")),
    Op("open_file_xb", False, "absent", True, *_open_file("xb")),
]

# a non-following op on a path whose final component is a symlink acts on
# the link itself: these are what the kernel says instead where it cannot
ON_FINAL_LINK = {
    "chmod_nofollow": errno.EOPNOTSUPP,  # no lchmod on Linux
    "link_dst": errno.EEXIST, "open_file_xb": errno.EEXIST,
    "rmtree": errno.ENOTDIR,  # as shutil: "Cannot call rmtree on a symbolic link"
}
# what the kernel says for "link/" where the op does not follow "link" (see
# test_root_table._ON_LINK_SLASH): rmtree is rmdir's, link's dst is mkdir's
# (creating through "link/", as write_text does, follows the link: an escape)
ON_LINK_SLASH = {"rmtree": errno.ENOTDIR, "link_dst": errno.EEXIST}


def check_target(op: Op, tree: Tree, raw, target: str, ltarget: str) -> None:
    """What a success of a surface op must have done at its target."""
    at, lat = tree.at(target), tree.at(ltarget)
    is_link = ltarget != target
    name = op.name
    if name == "chmod":
        assert st.S_IMODE(os.stat(at).st_mode) == MODE
    elif name == "chmod_nofollow":
        assert not is_link and st.S_IMODE(os.lstat(lat).st_mode) == MODE
    elif name in ("chown", "chown_nofollow"):
        info = os.stat(at) if name == "chown" else os.lstat(lat)
        assert (info.st_uid, info.st_gid) == (UID, GID)
        if is_link and name == "chown_nofollow" and ROOT_USER:
            assert os.stat(at).st_uid != UID, "lchown followed the link"
    elif name in ("utime", "utime_nofollow"):
        info = os.stat(at) if name == "utime" else os.lstat(lat)
        assert (info.st_atime_ns, info.st_mtime_ns) == NS
    elif name == "truncate":
        with open(at, "rb") as f:
            assert f.read() == content_of(target)[:3]
    elif name == "link_src":
        assert os.lstat(tree.at(DST_NAME)).st_ino == os.lstat(lat).st_ino
    elif name == "link_dst":
        assert os.lstat(lat).st_ino == os.lstat(tree.at(SRC_NAME)).st_ino
    elif name == "copyfile_src":
        with open(tree.at(DST_NAME), "rb") as f:
            assert f.read() == content_of(target)
    elif name == "copyfile_dst":
        with open(at, "rb") as f:
            assert f.read() == SRC_DATA
    elif name == "rmtree":
        assert not os.path.lexists(lat)
    elif name == "read_text":
        assert raw == content_of(target).decode("utf-8", "surrogateescape")
    elif name == "write_text":
        with open(at) as f:
            assert f.read() == TEXT
    elif name == "open_file_rb":
        assert raw == content_of(target)
    elif name in ("open_file_ab", "open_file_xb"):
        with open(at, "rb") as f:
            assert f.read() == b"by open_file"
    else:  # pragma: no cover - a new op needs its check
        raise AssertionError(f"no target check for {name}")


NEEDS_SRC = {"link_dst", "copyfile_dst"}


def install_hooks(monkeypatch, *modules) -> None:
    """Teach the shared runner (and ``modules`` that imported its helpers by
    name) the surface ops, for the calling test only."""
    core_check, core_prepare = table.check_target, table.prepare

    def check(op, tree, raw, target, ltarget):
        if op in SURFACE_OPS:
            return check_target(op, tree, raw, target, ltarget)
        return core_check(op, tree, raw, target, ltarget)

    def prepare(tree, op, target):
        if op.name in NEEDS_SRC:
            with open(tree.at(SRC_NAME), "wb") as f:
                f.write(SRC_DATA)
        core_prepare(tree, op, target)

    for module in (table, *modules):
        for name, value in (("check_target", check), ("prepare", prepare)):
            if hasattr(module, name):
                monkeypatch.setattr(module, name, value)
    monkeypatch.setattr(table, "ON_FINAL_LINK",
                        {**operations.ON_FINAL_LINK, **ON_FINAL_LINK})


@pytest.fixture(autouse=True)
def _surface_hooks(monkeypatch):
    install_hooks(monkeypatch)


# file operations a FIFO, socket or device is refused for (os would block
# on a FIFO, or read /dev/null)
BLOCKING = ("read_text", "open_file_rb", "open_file_ab", "write_text", "copyfile_src",
            "copyfile_dst", "truncate")


def _extend(cases):
    """The core's cases, their per-op expectations extended to these ops."""
    out = []
    for case in cases:
        if case.expect == _ON_LINK_SLASH:
            case = dataclasses.replace(case, expect={**case.expect, **ON_LINK_SLASH})
        if any(exp is SpecialFileError for exp in case.expect.values()):
            case = dataclasses.replace(
                case, expect={**case.expect, **dict.fromkeys(BLOCKING, SpecialFileError)},
                no_oracle=case.no_oracle | frozenset(BLOCKING))
        out.append(case)
    return out


# THREATS.md row 11 for these ops: a hard link inside the root to an outside
# file.  What replaces the name (write_text, copyfile onto it) never writes
# through; what reads it (read_text, copyfile from it, open_file "rb") reads
# the shared inode, as Root.read_bytes does (the tools refuse that); links to
# it stay inside.  chmod, chown, utime, truncate and appending act on the
# inode itself, which its outside name shares, as os's do: not in this row
# (documented in _ops_meta; a host checks st_nlink, as the tools do).
HARDLINK = [
    table.C("hard link to outside file", ["h => $OUT/secret"], "h",
                   expect={"read_text": table.Value("outside secret"),
                           "open_file_rb": table.Value(b"outside secret"),
                           "write_text": table.OK, "copyfile_dst": table.OK,
                           "copyfile_src": table.OK, "link_src": table.OK,
                           "link_dst": errno.EEXIST, "rmtree": errno.ENOTDIR,
                           "open_file_xb": errno.EEXIST},
                   no_oracle=("write_text", "copyfile_dst"),
                   ops=["read_text", "open_file_rb", "write_text", "copyfile_dst",
                        "copyfile_src", "link_src", "link_dst", "rmtree", "open_file_xb"]),
]


@pytest.mark.parametrize("case", _extend(RESOLUTION), ids=case_ids(RESOLUTION))
def test_resolution(case, make_root, scratch):
    table.run_ops(case, SURFACE_OPS, make_root, scratch)


@pytest.mark.parametrize("case", _extend(CONSISTENCY), ids=case_ids(CONSISTENCY))
def test_consistency_with_os(case, make_root, scratch):
    table.run_ops(case, SURFACE_OPS, make_root, scratch)


@pytest.mark.parametrize("case", _extend(SPECIAL), ids=case_ids(SPECIAL))
def test_special(case, make_root, scratch):
    table.run_ops(case, SURFACE_OPS, make_root, scratch)


@pytest.mark.parametrize("case", HARDLINK, ids=case_ids(HARDLINK))
def test_hard_link_to_outside(case, make_root, scratch):
    table.run_ops(case, SURFACE_OPS, make_root, scratch)
