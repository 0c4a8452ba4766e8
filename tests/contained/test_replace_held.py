"""``Backend.replace_held``: a held file's extended attributes listed and,
where there are none, its whole atomic replace, in one native call; where
there are some (or the listing fails) nothing is made and the caller
carries them call by call (``HeldParent.replace``)."""

from __future__ import annotations

import errno
import os
import shutil
import tempfile
from pathlib import Path

import pytest

from corral.contained import Root, available_backends
from corral.contained._backend import REPLACED, TARGET_CHANGED

pytestmark = pytest.mark.skipif("native" not in available_backends() or
                                not hasattr(os, "listxattr"),
                                reason="the native backend on a platform that lists xattrs")

_CREATE = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC


def _native():
    from corral.contained._native_backend import NativeBackend
    return NativeBackend()


@pytest.fixture
def shm_path(tmp_path):
    """A directory on tmpfs where there is one (its extended attributes
    may hold more than a disk filesystem's one block), else ``tmp_path``."""
    if not os.path.isdir("/dev/shm"):
        yield tmp_path
        return
    path = Path(tempfile.mkdtemp(dir="/dev/shm", prefix="corral-held-"))
    try:
        yield path
    finally:
        shutil.rmtree(path)


def _setup(tmp_path):
    f = tmp_path / "f.txt"
    f.write_bytes(b"old\n")
    os.chmod(f, 0o644)
    dir_fd = os.open(tmp_path, os.O_RDONLY | os.O_DIRECTORY)
    source_fd = os.open(f, os.O_RDONLY)
    return f, dir_fd, source_fd


def _call(backend, f, dir_fd, source_fd, expect=None):
    info = os.fstat(source_fd)
    return backend.replace_held(dir_fd, source_fd, ".f.txt.tmp", "f.txt", b"new\n", _CREATE,
                                0o644, (info.st_uid, info.st_gid),
                                expect or (info.st_dev, info.st_ino))


def _user_xattr(f) -> bool:
    try:
        os.setxattr(f, "user.corral-test", b"kept")
    except OSError:
        return False
    return True


def test_a_file_with_no_extended_attribute_is_replaced_in_the_one_call(tmp_path):
    f, dir_fd, source_fd = _setup(tmp_path)
    try:
        assert _call(_native(), f, dir_fd, source_fd) == REPLACED
    finally:
        os.close(source_fd)
        os.close(dir_fd)
    assert f.read_bytes() == b"new\n"
    assert os.listdir(tmp_path) == ["f.txt"]
    assert os.stat(f).st_mode & 0o777 == 0o644


def test_names_listed_make_nothing(tmp_path):
    f, dir_fd, source_fd = _setup(tmp_path)
    if not _user_xattr(f):
        pytest.skip("no user xattrs on this filesystem")
    try:
        assert _call(_native(), f, dir_fd, source_fd) == os.listxattr(f)
    finally:
        os.close(source_fd)
        os.close(dir_fd)
    assert f.read_bytes() == b"old\n"
    assert os.listdir(tmp_path) == ["f.txt"]


def _many_names(f) -> bool:
    """More than 4 KiB of extended attribute names (the one call's room)."""
    try:
        for i in range(20):
            os.setxattr(f, f"user.{i:02d}" + "n" * 240, b"v")
    except OSError:
        return False
    return True


@pytest.mark.parametrize("exported", [True, False])
def test_more_names_than_room_say_erange_and_make_nothing(shm_path, monkeypatch, exported):
    """Through the module's own function, and through its cffi wrapper."""
    from corral.contained import _native_backend
    tmp_path = shm_path
    f, dir_fd, source_fd = _setup(tmp_path)
    if not _many_names(f):
        pytest.skip("no room for so many user xattrs on this filesystem")
    if not exported:
        monkeypatch.setattr(_native_backend, "_replace_held", None)
    try:
        assert _call(_native(), f, dir_fd, source_fd) == -errno.ERANGE
    finally:
        os.close(source_fd)
        os.close(dir_fd)
    assert f.read_bytes() == b"old\n"
    assert os.listdir(tmp_path) == ["f.txt"]


@pytest.mark.parametrize("exported", [True, False])
def test_names_are_decoded_as_os_listxattr_decodes_them(tmp_path, monkeypatch, exported):
    from corral.contained import _native_backend
    f, dir_fd, source_fd = _setup(tmp_path)
    try:
        os.setxattr(f, os.fsencode("user.caf\udce9"), b"v")  # not UTF-8: a lone surrogate
    except OSError:
        pytest.skip("no user xattrs on this filesystem")
    if not exported:
        monkeypatch.setattr(_native_backend, "_replace_held", None)
    try:
        assert _call(_native(), f, dir_fd, source_fd) == os.listxattr(f)
    finally:
        os.close(source_fd)
        os.close(dir_fd)
    assert f.read_bytes() == b"old\n"


def test_a_name_with_a_nul_is_refused_and_nothing_made(tmp_path):
    f, dir_fd, source_fd = _setup(tmp_path)
    info = os.fstat(source_fd)
    try:
        with pytest.raises(OSError) as refused:
            _native().replace_held(dir_fd, source_fd, ".f.txt\0x.tmp", "f.txt", b"new\n",
                                   _CREATE, 0o644, (info.st_uid, info.st_gid),
                                   (info.st_dev, info.st_ino))
    finally:
        os.close(source_fd)
        os.close(dir_fd)
    assert refused.value.errno == errno.EINVAL
    assert f.read_bytes() == b"old\n"
    assert os.listdir(tmp_path) == ["f.txt"]


def test_another_file_at_the_name_is_not_replaced(tmp_path):
    f, dir_fd, source_fd = _setup(tmp_path)
    info = os.fstat(source_fd)
    try:
        answer = _call(_native(), f, dir_fd, source_fd, expect=(info.st_dev, info.st_ino + 1))
    finally:
        os.close(source_fd)
        os.close(dir_fd)
    assert answer == TARGET_CHANGED
    assert f.read_bytes() == b"old\n"
    assert os.listdir(tmp_path) == ["f.txt"]


def test_a_held_replace_carries_what_does_not_fit_the_first_listing(shm_path):
    """ERANGE from the one call: the names listed again, and carried."""
    tmp_path = shm_path
    f = tmp_path / "a" / "f.txt"
    f.parent.mkdir()
    f.write_bytes(b"old\n")
    os.chmod(f, 0o644)
    if not _many_names(f):
        pytest.skip("no room for so many user xattrs on this filesystem")
    with Root(str(tmp_path), backend=_native(), fast_path=True) as root:
        held = root.hold_parent("a/f.txt")
        if not root.info()["fast_path"]:  # CORRAL_OPENAT2=0: no held parent to replace in
            assert held is None
            return
        assert held is not None
        with held:
            assert held.open_file() is not None
            held.replace(b"new\n")
    assert f.read_bytes() == b"new\n"
    assert len(os.listxattr(f)) == 20
    assert sorted(os.listdir(f.parent)) == ["f.txt"]
