"""``Backend.fd_beneath_at``, every check of the walk (``still_beneath``:
THREATS rows 33, 35, 35b) that knows the canonical path of what it checks:
the result's kernel name must be the root's own as read once, then ``/``
and the path, and that name must still ``lstat`` as the root; any other
answer is the two-name ``fd_beneath``'s.  The name must be the root's, not
merely one that stats as the root: a name read from an outside file is the
attacker's, and a link swapped in after the read leads the stat to the
root (played in the window through the test build's hook, and through the
os module for the os backend)."""

from __future__ import annotations

import os

import pytest

from corral.contained import backend_by_name
from corral.contained._linux import proc_fds

from .helpers.trees import moved_out_tree
from .helpers.trees import walk_root_of as _identity

pytestmark = pytest.mark.skipif(not hasattr(os, "O_PATH") or proc_fds() < 0,
                                reason="Linux with procfs only (the check reads it)")

READ = os.O_RDONLY | os.O_CLOEXEC
PATH = b"a/b/c/g"



@pytest.fixture
def tree(tmp_path):
    root, out = moved_out_tree(tmp_path)
    (tmp_path / "evil" / "root" / "a" / "b" / "c").mkdir(parents=True)
    (tmp_path / "evil" / "root" / "a" / "b" / "c" / "g").write_bytes(b"OUTSIDE")
    return root, out


@pytest.mark.parametrize("name", ["native", "os"])
def test_inside_outside_renamed_and_the_root_itself(name, tree, tmp_path):
    root_dir, out = tree
    backend = backend_by_name(name)
    root = os.open(root_dir, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    ident = _identity(root)
    inside = os.open(root_dir / "a" / "b" / "c" / "g", READ)
    outside = os.open(out / "s" / "g", READ)
    try:
        proc = proc_fds()
        assert backend.fd_beneath_at(proc, root, inside, PATH, len(PATH), *ident) == 1
        assert backend.fd_beneath_at(proc, root, outside, PATH, len(PATH), *ident) == 0
        assert backend.fd_beneath_at(proc, root, root, b".", 1, *ident) == 1
        # a rename inside the root: the two names decide, and say beneath
        os.rename(root_dir / "a", root_dir / "z")
        assert backend.fd_beneath_at(proc, root, inside, PATH, len(PATH), *ident) == 1
        os.rename(root_dir / "z", root_dir / "a")
        # the root renamed: its name read once is stale, the two names decide
        os.rename(root_dir, tmp_path / "moved")
        assert backend.fd_beneath_at(proc, root, inside, PATH, len(PATH), *ident) == 1
        # another directory at the root's old name, the file moved into it
        (tmp_path / "moved" / "a").rename(tmp_path / "evil" / "root" / "z")
        os.rename(tmp_path / "evil" / "root", root_dir)
        os.rename(root_dir / "a", root_dir / "y")
        os.rename(root_dir / "z", root_dir / "a")
        assert backend.fd_beneath_at(proc, root, inside, PATH, len(PATH), *ident) == 0
    finally:
        for fd in (root, inside, outside):
            os.close(fd)


def _name_read(tmp_path, root_dir) -> None:
    """Once the outside file's name (``.../evil/root/a/b/c/g``) is read:
    ``evil`` renamed away and made a link to the root's parent, so
    ``.../evil/root`` now stats as the root."""
    os.rename(tmp_path / "evil", tmp_path / "evil2")
    os.symlink(root_dir.parent, tmp_path / "evil")


def test_a_name_read_from_an_outside_file_is_not_trusted_by_its_stat(native_test_module,
                                                                       tree, tmp_path):
    root_dir, _ = tree
    lib, ffi = native_test_module.lib, native_test_module.ffi

    def window(fd: int, name: bytes) -> None:
        if ffi.string(name).endswith(b"/evil/root/a/b/c/g"):
            _name_read(tmp_path, root_dir)

    hook = ffi.callback("void(int, const char *)", window)
    root = os.open(root_dir, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    ident = _identity(root)
    fd = os.open(tmp_path / "evil" / "root" / "a" / "b" / "c" / "g", READ)
    lib.corral_set_walk_hook(hook)
    try:
        got = lib.corral_walk_beneath(proc_fds(), root, fd, PATH, len(PATH), *ident)
    finally:
        lib.corral_set_walk_hook(ffi.NULL)
        os.close(fd)
        os.close(root)
    assert (tmp_path / "evil" / "root").samefile(root_dir)  # the swap happened
    assert got == 0


def test_the_os_backends_check_does_not_trust_the_name_either(tree, tmp_path, monkeypatch):
    root_dir, _ = tree
    backend = backend_by_name("os")
    real_readlink = os.readlink

    def reading(path, *, dir_fd=None):
        text = real_readlink(path, dir_fd=dir_fd)
        if isinstance(text, bytes) and text.endswith(b"/evil/root/a/b/c/g"):
            _name_read(tmp_path, root_dir)
        return text

    root = os.open(root_dir, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    ident = _identity(root)
    fd = os.open(tmp_path / "evil" / "root" / "a" / "b" / "c" / "g", READ)
    monkeypatch.setattr(os, "readlink", reading)
    try:
        got = backend.fd_beneath_at(proc_fds(), root, fd, PATH, len(PATH), *ident)
    finally:
        monkeypatch.undo()
        os.close(fd)
        os.close(root)
    assert (tmp_path / "evil" / "root").samefile(root_dir)
    assert got == 0
