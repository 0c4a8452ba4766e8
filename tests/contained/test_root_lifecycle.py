"""The root itself removed, renamed or replaced after it was opened
(THREATS.md row 17), and a closed Root: every operation.

A Root is its fd.  Renamed, it keeps working on the same directory (never
on whatever now has its old path, a decoy directory or a symlink to
outside).  Removed, every call raises RootVanishedError, which names no
host path, and so does every later call on the same Root.
"""

from __future__ import annotations

import copy
import errno
import gc
import os
import pickle
import shutil

import pytest

from corral.contained import RootVanishedError

from .helpers.trees import Tree, build, fingerprint
from .helpers.operations import OPS, check_target, prepare
from .helpers.table import C, OK, expectation

PLAIN = C("renamed root", ["d/"], "d/target", target="d/target")
VANISH_PATHS = [".", "./", "", "d", "d/target", "new", "a/..", "d/../new"]


@pytest.mark.parametrize("op", OPS, ids=[op.name for op in OPS])
def test_removed_root_is_a_dead_capability(op, make_root, scratch):
    for i, path in enumerate(VANISH_PATHS):
        tree = build(scratch / str(i), ["d/", "a/"])
        prepare(tree, op, "d/target")
        root = make_root(tree.ws)
        shutil.rmtree(tree.ws)
        with pytest.raises(RootVanishedError) as info:
            op.root(root, tree, path)
        exc = info.value
        assert exc.errno == errno.ESTALE
        for text in (str(exc), str(exc.filename), str(getattr(exc, "component", ""))):
            assert str(tree.base) not in text
        # the capability stays dead, also for a call that would have worked
        tree.ws.mkdir()  # a new directory at the old path changes nothing
        (tree.ws / "d").mkdir()
        with pytest.raises(RootVanishedError):
            root.stat("d")
        with pytest.raises(RootVanishedError):
            root.listdir(".")
        assert os.listdir(tree.ws) == ["d"], "the new directory at the old path was touched"
        shutil.rmtree(tree.ws)


_ACTING = [op for op in OPS if op.name != "readlink"]  # readlink: its own test below


@pytest.mark.parametrize("decoy", ["directory", "symlink to outside"])
@pytest.mark.parametrize("op", _ACTING, ids=[op.name for op in _ACTING])
def test_renamed_root_keeps_working_on_its_fd(op, decoy, make_root, scratch):
    tree = build(scratch / "t", PLAIN.fs)
    prepare(tree, op, PLAIN.target)
    root = make_root(tree.ws)
    moved = Tree(tree.base, tree.base / "ws-moved", tree.out, tree.evil)
    os.rename(tree.ws, moved.ws)
    if decoy == "directory":
        # the same names at the old path, with other content
        (tree.ws / "d" / "target").mkdir(parents=True)
        (tree.ws / "d" / "target" / "inner").write_bytes(b"decoy")
        (tree.ws / "zz-src").write_bytes(b"decoy")
    else:
        os.symlink(tree.out, tree.ws)
    before = fingerprint(tree)

    raw = op.root(root, moved, PLAIN.path)

    assert expectation(PLAIN, op) == (OK, OK)
    check_target(op, moved, raw, PLAIN.target, PLAIN.target)
    after = fingerprint(tree)

    def elsewhere(prints):  # everything but the moved root: the decoy, outside, ...
        return {k: v[:3] + v[4:5] for k, v in prints.items()
                if k != "ws-moved" and not k.startswith("ws-moved/")}

    assert elsewhere(after) == elsewhere(before)


def test_readlink_on_a_renamed_root(make_root, scratch):
    tree = build(scratch / "t", ["d/", "d/l -> x"])
    root = make_root(tree.ws)
    os.rename(tree.ws, tree.base / "ws-moved")
    os.symlink(tree.out, tree.ws)
    assert root.readlink("d/l") == "x"
    with pytest.raises(FileNotFoundError):
        root.readlink("sub")  # outside/sub exists; the root never looks there


@pytest.mark.parametrize("op", OPS, ids=[op.name for op in OPS])
def test_closed_root_refuses_everything(op, make_root, scratch):
    tree = build(scratch / "t", PLAIN.fs)
    prepare(tree, op, PLAIN.target)
    root = make_root(tree.ws)
    root.close()
    assert root.closed
    before = fingerprint(tree)
    with pytest.raises(OSError) as info:
        op.root(root, tree, PLAIN.path)
    assert info.value.errno == errno.EBADF
    # the error names the call's path (the source's, for a rename)
    assert info.value.filename in (PLAIN.path, "zz-src"), info.value.filename
    assert fingerprint(tree) == before
    root.close()  # closing twice is harmless


# -- copies, pickling, borrowed fds, a symlinked root path ---------------------------

def test_copies_are_independent_roots(make_root, scratch):

    tree = build(scratch / "t", ["d/", "d/f"])
    root = make_root(tree.ws)
    for clone in (copy.copy(root), copy.deepcopy(root)):
        assert clone.fileno() != root.fileno()
        assert os.path.samestat(os.fstat(clone.fileno()), os.fstat(root.fileno()))
        assert clone.read_bytes("d/f") == b"content of d/f"
        assert (clone.backend, clone.follow_symlinks, clone.info()["fast_path"]) == \
            (root.backend, root.follow_symlinks, root.info()["fast_path"])
        del clone  # a dropped copy closes its own fd, never the original's
        gc.collect()
        assert root.read_bytes("d/f") == b"content of d/f"
        assert os.path.samestat(os.fstat(root.fileno()), os.stat(tree.ws))
    other = copy.copy(root)
    root.close()
    assert other.read_bytes("d/f") == b"content of d/f"  # closing one leaves the other
    with pytest.raises(TypeError, match="cannot be pickled"):
        pickle.dumps(other)
    other.close()


def test_from_fd_dups_unless_borrowing(make_root, scratch):
    from corral.contained import Root

    tree = build(scratch / "t", ["f"])
    fd = os.open(tree.ws, os.O_RDONLY | os.O_DIRECTORY)
    try:
        backend = make_root(tree.ws).backend
        owned = Root.from_fd(fd, backend=backend, fast_path=make_root.fast_path)
        assert owned.fileno() != fd and owned.read_bytes("f") == b"content of f"
        owned.close()
        os.fstat(fd)  # still the caller's
        borrowed = Root.from_fd(fd, borrow=True, backend=backend)
        assert borrowed.fileno() == fd and borrowed.read_bytes("f") == b"content of f"
        borrowed.close()
        os.fstat(fd)  # a borrowed fd is never closed by the Root
        with pytest.raises(OSError) as info:
            borrowed.stat("f")
        assert info.value.errno == errno.EBADF and info.value.filename == "f"
    finally:
        os.close(fd)
    file_fd = os.open(tree.ws / "f", os.O_RDONLY)
    try:
        with pytest.raises(NotADirectoryError):
            Root.from_fd(file_fd)
    finally:
        os.close(file_fd)


@pytest.mark.parametrize("how", ["symlinked root", "symlinked ancestor", "chain to root"])
def test_root_path_is_trusted_and_followed(how, make_root, scratch):
    tree = build(scratch / "t", ["d/", "d/f", "l -> $OUT"])
    if how == "symlinked root":
        os.symlink(tree.ws, tree.base / "alias")
        path = tree.base / "alias"
    elif how == "symlinked ancestor":
        os.symlink(tree.base, scratch / "base-alias")
        path = scratch / "base-alias" / "ws"
    else:
        os.symlink(tree.ws, tree.base / "a1")
        os.symlink("a1", tree.base / "a2")
        path = tree.base / "a2"
    root = make_root(path)
    assert root.read_bytes("d/f") == b"content of d/f"
    assert os.path.samestat(os.fstat(root.fileno()), os.stat(tree.ws))
    # beneath the root, the usual rules: an outward link is still an escape
    from corral.contained import EscapeError
    with pytest.raises(EscapeError):
        root.stat("l/secret")
    with pytest.raises(EscapeError):
        root.read_bytes("../ws-evil/secret")
    root.write_bytes("d/new", b"x")
    assert (tree.ws / "d/new").read_bytes() == b"x"
