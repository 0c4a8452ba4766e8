"""``Backend.replace_held``: a held file's extended attributes listed and,
where there are none, its whole atomic replace, in one native call; where
there are some (or the listing fails) nothing is made and the caller
carries them call by call (``HeldParent.replace``)."""

from __future__ import annotations

import errno
import os

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


def test_more_names_than_room_say_erange_and_make_nothing(tmp_path, monkeypatch):
    from corral.contained import _native_backend
    f, dir_fd, source_fd = _setup(tmp_path)
    if not _user_xattr(f):
        pytest.skip("no user xattrs on this filesystem")
    monkeypatch.setattr(_native_backend, "_HELD_NAMES", 4)
    try:
        assert _call(_native(), f, dir_fd, source_fd) == -errno.ERANGE
    finally:
        os.close(source_fd)
        os.close(dir_fd)
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


def test_a_held_replace_carries_what_does_not_fit_the_first_listing(tmp_path, monkeypatch):
    """ERANGE from the one call: the names listed again, and carried."""
    from corral.contained import _native_backend
    f = tmp_path / "a" / "f.txt"
    f.parent.mkdir()
    f.write_bytes(b"old\n")
    os.chmod(f, 0o644)
    if not _user_xattr(f):
        pytest.skip("no user xattrs on this filesystem")
    monkeypatch.setattr(_native_backend, "_HELD_NAMES", 4)
    with Root(str(tmp_path), backend=_native(), fast_path=True) as root:
        held = root.hold_parent("a/f.txt")
        if held is None:
            pytest.skip("no openat2 here")
        with held:
            assert held.open_file() is not None
            held.replace(b"new\n")
    assert f.read_bytes() == b"new\n"
    assert os.getxattr(f, "user.corral-test") == b"kept"
    assert sorted(os.listdir(f.parent)) == ["f.txt"]
