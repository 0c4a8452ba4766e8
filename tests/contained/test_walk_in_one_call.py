"""Root.open's walk in one backend call (``Backend.walk_open``; C in the
native backend, native/corral_walk.h), used where the openat2 fast path is
off: it makes the walk's calls and THREATS rows 33/35's check of the
result, and answers -1 for anything unusual, so the Python walk runs and
decides.  Row 35's attack (a directory on the way moved out, one below it
swapped for an outside one, all put back) is played inside the C walk
deterministically through a test build's hook: the file it reaches was
never beneath the root, and no fd of it is handed out.
"""

from __future__ import annotations

import errno
import os
import stat as st

import pytest

from corral.contained import backend_by_name
from corral.contained._linux import proc_fds

from .helpers.trees import moved_out_tree
from .helpers.trees import walk_root_of as _identity

pytestmark = pytest.mark.skipif(not hasattr(os, "O_PATH") or proc_fds() < 0,
                                reason="Linux with procfs only (the walk's check reads it)")

READ = os.O_RDONLY | os.O_CLOEXEC


def _open_fds() -> set[str]:
    listing = os.open("/proc/self/fd", os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        return set(os.listdir(listing)) - {str(listing)}
    finally:
        os.close(listing)



@pytest.fixture
def tree(tmp_path):
    return moved_out_tree(tmp_path)


def test_every_config_opens_the_same_file_and_the_walk_configs_in_one_call(
        make_root, tree, monkeypatch):
    root_dir, _ = tree
    backend = backend_by_name(make_root.backend_name)
    calls: list[bytes] = []
    real = backend.walk_open

    def counting(root_fd: int, path: bytes, size: int, flags: int, proc_fd: int,
                 root_name: bytes, root_dev: int, root_ino: int) -> int:
        calls.append(path)
        return real(root_fd, path, size, flags, proc_fd, root_name, root_dev, root_ino)

    monkeypatch.setattr(backend, "walk_open", counting)
    root = make_root(str(root_dir))
    (root_dir / "top").write_bytes(b"inside")
    for path in ("a/b/c/g", "a//b/./c/g", "a/b/c", "a/b/c/../c/g", "a/b/c/g/", "a/b/nope/g",
                 "top"):
        try:
            fd = root.open(path)
        except OSError as exc:
            got: object = exc.errno
        else:
            info = os.fstat(fd)
            got = (st.S_IFMT(info.st_mode), os.read(fd, 100) if st.S_ISREG(info.st_mode) else b"")
            os.close(fd)
        want = {"a/b/c": (st.S_IFDIR, b""), "a/b/c/g/": errno.ENOTDIR,
                "a/b/nope/g": errno.ENOENT}.get(path, (st.S_IFREG, b"inside"))
        assert got == want, path
    walks_in_one_call = not make_root.fast_path  # the fast path's openat2 is one call too
    # plain names only ("a//b/./c/g" parses to them); "..", a trailing "/": the walk
    assert calls == ([b"a/b/c/g", b"a/b/c/g", b"a/b/c", b"a/b/nope/g", b"top"]
                     if walks_in_one_call else [])


@pytest.fixture
def variant(native_test_module):
    return native_test_module


def test_the_one_call_walk_takes_only_the_common_path(variant, tree):
    """Anything unusual is -1 with nothing left open: the caller's walk runs."""
    root_dir, out = tree
    (root_dir / "a" / "link").symlink_to("b")
    (root_dir / "a" / "b" / "up").symlink_to(str(out / "s"))
    os.mkfifo(root_dir / "a" / "fifo")
    lib = variant.lib
    proc = proc_fds()
    before = _open_fds()
    fd = os.open(root_dir, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    ident = _identity(fd)
    try:
        got = lib.corral_walk_open(fd, b"a/b/c/g", 7, READ, proc, *ident)
        assert got >= 0 and os.read(got, 100) == b"inside"
        os.close(got)
        (root_dir / "top").write_bytes(b"at the top")
        got = lib.corral_walk_open(fd, b"top", 3, READ, proc, *ident)
        assert got >= 0 and os.read(got, 100) == b"at the top"
        os.close(got)
        got = lib.corral_walk_open(fd, b"a", 1, READ, proc, *ident)
        assert got >= 0 and st.S_ISDIR(os.fstat(got).st_mode)
        os.close(got)
        refused = {
            b"g": (READ, errno.ENOENT),  # one name, missing: the walk says so
            b"a/../a/b/c/g": (READ, errno.EINVAL),
            b"a/./b/c/g": (READ, errno.EINVAL),
            b"a//b/c/g": (READ, errno.EINVAL),
            b"/a/b/c/g": (READ, errno.EINVAL),
            b"a/b/c/g/": (READ, errno.ENOTDIR),  # g opened as a directory on the way
            b"a/link/c/g": (READ, errno.ENOTDIR),  # a link on the way: the walk follows it
            b"a/b/up/g": (READ, errno.ENOTDIR),
            b"a/b/nope/g": (READ, errno.ENOENT),
            b"a/fifo": (READ, errno.EINVAL),  # a special file: the walk refuses it by kind
            b"a/b/c/h": (READ | os.O_CREAT, errno.EINVAL),  # creates: never this way
            b"a/b/c/g ": (READ | os.O_TRUNC, errno.EINVAL),
        }
        for path, (flags, err) in refused.items():
            assert lib.corral_walk_open(fd, path, len(path), flags, proc, *ident) == -1, path
            assert variant.ffi.errno == err, path
        assert lib.corral_walk_open(fd, b"a/b/c/g", 7, READ, -1, *ident) == -1  # no /proc
        assert not (root_dir / "a" / "b" / "c" / "h").exists()
    finally:
        os.close(fd)
    assert _open_fds() == before


def test_a_directory_moved_out_and_back_mid_walk_is_refused(variant, tree):
    """Row 35 inside the C walk: once ``a`` is open, ``a`` goes out and ``c``
    below it becomes the outside ``s``; once the walk holds ``s``, all is put
    back.  The walk then opens ``g`` in ``s``, which never was beneath the
    root: the check refuses it (-1, EXDEV) and closes it; without the
    dance, the same call opens the inside ``g``."""
    root_dir, out = tree
    lib, ffi = variant.lib, variant.ffi

    def dance(dir_fd: int, name: bytes) -> None:
        name = ffi.string(name)
        if name == b"a":
            os.rename(root_dir / "a", out / "a")
            os.rename(out / "a" / "b" / "c", out / "held")
            os.rename(out / "s", out / "a" / "b" / "c")
        elif name == b"c":
            os.rename(out / "a" / "b" / "c", out / "s")
            os.rename(out / "held", out / "a" / "b" / "c")
            os.rename(out / "a", root_dir / "a")

    hook = ffi.callback("void(int, const char *)", dance)
    fd = os.open(root_dir, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    ident = _identity(fd)
    before = _open_fds()
    lib.corral_set_walk_hook(hook)
    try:
        assert lib.corral_walk_open(fd, b"a/b/c/g", 7, READ, proc_fds(), *ident) == -1
        assert ffi.errno == errno.EXDEV
    finally:
        lib.corral_set_walk_hook(ffi.NULL)
    assert _open_fds() == before
    # everything is back where it was, and the walk opens the inside file
    assert (out / "s" / "g").read_bytes() == b"OUTSIDE"
    try:
        got = lib.corral_walk_open(fd, b"a/b/c/g", 7, READ, proc_fds(), *ident)
        assert got >= 0 and os.read(got, 100) == b"inside"
        os.close(got)
    finally:
        os.close(fd)


def _renames_after_a(tmp_path, root_dir):
    """What happens once the walk holds ``a``: (renames, whether the file
    the walk then reaches is beneath the root)."""
    return {
        # inside the root: the kernel name no longer ends in the path
        "a renamed inside": ([(root_dir / "a", root_dir / "z")], True),
        # the root itself moved: its new name, then the path
        "the root renamed": ([(root_dir, tmp_path / "moved-root")], True),
        # the root moved away and another directory put at its name, a
        # (with the walk in it) moved into that one: the name ends in the
        # path after a directory at the root's old name that is not the root
        "the root renamed and replaced": ([(root_dir, tmp_path / "moved-root"),
                                           (tmp_path / "decoy", root_dir),
                                           (tmp_path / "moved-root" / "a", root_dir / "a")],
                                          False),
    }


@pytest.mark.parametrize("case", ["a renamed inside", "the root renamed",
                                  "the root renamed and replaced"])
def test_the_check_of_the_walk_in_one_call_follows_the_root(variant, tree, tmp_path, case):
    """The check reads the result's kernel name and stats the directory it
    names before the path: that must be the root's own.  A rename inside
    the root, or of the root, is no refusal; the root moved away and
    another directory put at its name is (the decoy was never the root)."""
    root_dir, _ = tree
    (tmp_path / "decoy").mkdir()
    renames, beneath = _renames_after_a(tmp_path, root_dir)[case]
    lib, ffi = variant.lib, variant.ffi

    def move(dir_fd: int, name: bytes) -> None:
        if ffi.string(name) == b"a":
            for source, dest in renames:
                os.rename(source, dest)

    hook = ffi.callback("void(int, const char *)", move)
    before = _open_fds()
    fd = os.open(root_dir, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    lib.corral_set_walk_hook(hook)
    try:
        got = lib.corral_walk_open(fd, b"a/b/c/g", 7, READ, proc_fds(), *_identity(fd))
        err = ffi.errno
    finally:
        lib.corral_set_walk_hook(ffi.NULL)
        os.close(fd)
    if beneath:
        assert got >= 0 and os.read(got, 100) == b"inside"
        os.close(got)
    else:
        assert got == -1 and err == errno.EXDEV
    assert _open_fds() == before


@pytest.mark.parametrize("case", ["a renamed inside", "the root renamed",
                                  "the root renamed and replaced"])
def test_the_os_backends_walk_in_one_call_checks_the_same(tree, tmp_path, case, monkeypatch):
    """The os backend's walk_open (Python) against the same moves, made
    after its open of ``a`` (its os.open seen through the os module)."""
    root_dir, _ = tree
    (tmp_path / "decoy").mkdir()
    renames, beneath = _renames_after_a(tmp_path, root_dir)[case]
    backend = backend_by_name("os")
    if not backend.has_walk_open:
        pytest.skip("the os backend walks one call at a time here")
    real_open = os.open

    def opening(name, flags, mode=0o777, *, dir_fd=None):
        fd = real_open(name, flags, mode, dir_fd=dir_fd)
        if name == b"a":
            for source, dest in renames:
                os.rename(source, dest)
        return fd

    before = _open_fds()
    fd = os.open(root_dir, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    monkeypatch.setattr(os, "open", opening)
    try:
        got = backend.walk_open(fd, b"a/b/c/g", 7, READ, proc_fds(), *_identity(fd))
    finally:
        monkeypatch.undo()
        os.close(fd)
    if beneath:
        assert got >= 0 and os.read(got, 100) == b"inside"
        os.close(got)
    else:
        assert got == -1
    assert _open_fds() == before


def _swap_for_a_link_after_the_name_is_read(tmp_path, root_dir, out):
    """Row 35's move, into an outside directory named as the root is
    (``evil/root``), so the result's kernel name is ``.../evil/root`` then
    the path; and, once that name is read, ``evil`` renamed away and made a
    link to the root's parent, so ``.../evil/root`` now stats as the root.
    Returns the two moves: (once the walk holds ``a``, once the name is read)."""
    (tmp_path / "evil" / "root").mkdir(parents=True)

    def hold_a() -> None:
        os.rename(root_dir / "a", tmp_path / "evil" / "root" / "a")
        os.rename(tmp_path / "evil" / "root" / "a" / "b" / "c", out / "held")
        os.rename(out / "s", tmp_path / "evil" / "root" / "a" / "b" / "c")

    def name_read() -> None:
        os.rename(tmp_path / "evil", tmp_path / "evil2")
        os.symlink(root_dir.parent, tmp_path / "evil")

    return hold_a, name_read


def test_a_name_read_from_an_outside_file_is_not_trusted_by_its_stat(variant, tree, tmp_path):
    """The check must compare the result's name with the root's own, not
    only stat the directory the result names: when the result is outside,
    that name is the attacker's, and the stat follows links on the way (a
    link swapped in after the read leads it to the root)."""
    root_dir, out = tree
    hold_a, name_read = _swap_for_a_link_after_the_name_is_read(tmp_path, root_dir, out)
    lib, ffi = variant.lib, variant.ffi

    def dance(dir_fd: int, name: bytes) -> None:
        text = ffi.string(name)
        if text == b"a":
            hold_a()
        elif text.startswith(b"/") and text.endswith(b"/evil/root/a/b/c/g"):
            name_read()

    hook = ffi.callback("void(int, const char *)", dance)
    before = _open_fds()
    fd = os.open(root_dir, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    ident = _identity(fd)
    lib.corral_set_walk_hook(hook)
    try:
        got = lib.corral_walk_open(fd, b"a/b/c/g", 7, READ, proc_fds(), *ident)
        err = ffi.errno
    finally:
        lib.corral_set_walk_hook(ffi.NULL)
        os.close(fd)
    assert (tmp_path / "evil" / "root").samefile(root_dir)  # the swap happened
    if got >= 0:
        os.close(got)
    assert (got, err) == (-1, errno.EXDEV)
    assert _open_fds() == before


def test_the_os_backends_check_does_not_trust_the_name_either(tree, tmp_path, monkeypatch):
    """The same through the os backend's walk_open, the swap made right after
    its read of the result's kernel name."""
    root_dir, out = tree
    hold_a, name_read = _swap_for_a_link_after_the_name_is_read(tmp_path, root_dir, out)
    backend = backend_by_name("os")
    assert backend.has_walk_open
    real_open, real_readlink = os.open, os.readlink

    def opening(name, flags, mode=0o777, *, dir_fd=None):
        fd = real_open(name, flags, mode, dir_fd=dir_fd)
        if name == b"a":
            hold_a()
        return fd

    def reading(path, *, dir_fd=None):
        text = real_readlink(path, dir_fd=dir_fd)
        if isinstance(text, bytes) and text.endswith(b"/evil/root/a/b/c/g"):
            name_read()
        return text

    before = _open_fds()
    fd = os.open(root_dir, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    ident = _identity(fd)
    monkeypatch.setattr(os, "open", opening)
    monkeypatch.setattr(os, "readlink", reading)
    try:
        got = backend.walk_open(fd, b"a/b/c/g", 7, READ, proc_fds(), *ident)
    finally:
        monkeypatch.undo()
        os.close(fd)
    assert (tmp_path / "evil" / "root").samefile(root_dir)
    if got >= 0:
        os.close(got)
    assert got == -1
    assert _open_fds() == before
