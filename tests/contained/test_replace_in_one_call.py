"""``Backend.replace_file``: a file's whole atomic replace in one call (the
native backend's ``corral_replace_file``), taken by a replace through a held
directory where nothing is to be carried over but what the temporary file is
made with.  Every other backend answers ``NOT_REPLACED`` without a call, so a
wrapper (the counting and fault-injecting backends) sees each call; where the
one call finds another owner or bits the umask took, it leaves nothing and
the replace is made call by call, carrying them over."""

from __future__ import annotations

import os
import stat

import pytest

from corral.contained import InvalidPathError, OsBackend, available_backends, backend_by_name
from corral.contained._backend import NOT_REPLACED, REPLACED, TARGET_CHANGED

_CREATE = (os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_NOCTTY
           | os.O_CLOEXEC)


@pytest.fixture
def place(tmp_path):
    """A directory fd holding ``f`` (0644, ``old``); no fd left open after."""
    f = tmp_path / "f"
    f.write_bytes(b"old\n")
    os.chmod(f, 0o644)
    fd = os.open(tmp_path, os.O_RDONLY | os.O_DIRECTORY)
    yield fd, f
    os.close(fd)


def _identity(f) -> tuple[int, int]:
    info = os.lstat(f)
    return info.st_dev, info.st_ino


def _left(f) -> list[str]:
    return sorted(os.listdir(f.parent))


def _owner() -> tuple[int, int]:
    return os.geteuid(), os.getegid()


@pytest.mark.parametrize("name", available_backends())
def test_the_file_is_replaced_in_one_call_where_the_backend_has_one(place, name):
    fd, f = place
    backend = backend_by_name(name)
    before = os.lstat(f)
    umask = os.umask(0o022)
    try:
        made = backend.replace_file(fd, ".f.t1.corral-tmp", "f", b"new\n", _CREATE, 0o644,
                                    _owner(), _identity(f))
    finally:
        os.umask(umask)
    if name == "native":
        assert made == REPLACED
        assert f.read_bytes() == b"new\n" and os.lstat(f).st_ino != before.st_ino
        assert stat.S_IMODE(os.lstat(f).st_mode) == 0o644
    else:  # no such call: nothing made, the caller makes each call
        assert made == NOT_REPLACED and f.read_bytes() == b"old\n"
    assert _left(f) == ["f"]


@pytest.mark.parametrize("name", available_backends())
@pytest.mark.parametrize("case", ["owner", "umask", "swapped", "removed"])
def test_what_the_one_call_cannot_make_leaves_nothing(place, name, case):
    """Another owner or bits the umask took: ``NOT_REPLACED``; the name no
    longer the file decided on: ``TARGET_CHANGED``.  Either way the
    temporary file is gone and the name holds what it held."""
    fd, f = place
    expect = _identity(f)
    owner = _owner()
    if case == "owner":
        owner = (owner[0] + 1, owner[1])
    elif case == "swapped":
        (f.parent / "other").write_bytes(b"someone else's\n")
        os.rename(f.parent / "other", f)
    elif case == "removed":
        f.unlink()
    umask = os.umask(0o077 if case == "umask" else 0o022)
    try:
        made = backend_by_name(name).replace_file(fd, ".f.t2.corral-tmp", "f", b"new\n",
                                                  _CREATE, 0o644, owner, expect)
    finally:
        os.umask(umask)
    if name != "native":
        assert made == NOT_REPLACED
    elif case in ("owner", "umask"):
        assert made == NOT_REPLACED
    else:
        assert made == TARGET_CHANGED
    if case == "removed":
        assert _left(f) == []
    else:
        assert _left(f) == ["f"]
        assert f.read_bytes() == (b"someone else's\n" if case == "swapped" else b"old\n")


@pytest.mark.parametrize("name", available_backends())
def test_a_failed_call_raises_the_kernel_errno_and_leaves_nothing(place, name):
    fd, f = place
    (f.parent / ".f.t3.corral-tmp").write_bytes(b"there already\n")  # O_EXCL refuses it
    backend = backend_by_name(name)
    if name == "native":
        with pytest.raises(FileExistsError):
            backend.replace_file(fd, ".f.t3.corral-tmp", "f", b"new\n", _CREATE, 0o644,
                                 _owner(), _identity(f))
        for bad in ("a/b", "..", ""):  # not one component: refused before any call
            with pytest.raises(OSError) as raised:
                backend.replace_file(fd, bad, "f", b"new\n", _CREATE, 0o644, _owner(),
                                     _identity(f))
            assert raised.value.errno == 22
        with pytest.raises(OSError):  # not a create of its own (no O_EXCL)
            backend.replace_file(fd, ".f.t4.corral-tmp", "f", b"new\n",
                                 _CREATE & ~os.O_EXCL, 0o644, _owner(), _identity(f))
    else:
        assert backend.replace_file(fd, ".f.t3.corral-tmp", "f", b"new\n", _CREATE, 0o644,
                                    _owner(), _identity(f)) == NOT_REPLACED
    assert f.read_bytes() == b"old\n"
    assert (f.parent / ".f.t3.corral-tmp").read_bytes() == b"there already\n"
    assert _left(f) == [".f.t3.corral-tmp", "f"]


def test_the_default_makes_no_call(place):
    """A backend without the one call (every wrapper) answers at once."""
    fd, f = place

    class Refusing(OsBackend):
        def __getattribute__(self, attr):
            if attr in ("open_at", "write", "fstat", "fsync", "close", "lstat_at", "rename_at",
                        "unlink_at"):
                raise AssertionError(f"{attr} called")
            return super().__getattribute__(attr)

    assert Refusing().replace_file(fd, ".f.t5.corral-tmp", "f", b"new\n", _CREATE, 0o644,
                                   _owner(), _identity(f)) == NOT_REPLACED
    assert _left(f) == ["f"]


@pytest.mark.parametrize("umask", [0o022, 0o077])
def test_a_held_replace_keeps_the_bits_whatever_the_umask(tmp_path, make_root, umask):
    """A 0644 file replaced through its held directory is 0644 after, the
    umask taking bits from the temporary file or not (then its bits are set
    after the content, as for any other file)."""
    (tmp_path / "a").mkdir()
    f = tmp_path / "a" / "f.txt"
    f.write_bytes(b"old\n")
    os.chmod(f, 0o644)
    root = make_root(tmp_path)
    held = root.hold_parent("a/f.txt")
    if held is None:
        return  # no openat2 fast path in this config: the caller takes Root.target
    before = os.umask(umask)
    try:
        with held:
            assert held.open_file() is not None
            held.replace(b"new\n")
    finally:
        os.umask(before)
    assert f.read_bytes() == b"new\n" and stat.S_IMODE(os.lstat(f).st_mode) == 0o644
    assert sorted(os.listdir(tmp_path / "a")) == ["f.txt"]


@pytest.mark.parametrize("name", available_backends())
def test_a_name_with_a_nul_is_refused(place, name):
    """C would take the name as ending at the NUL: refused before any call."""
    fd, f = place
    for tmp, target in ((".f.t6.corral-tmp", "f\0x"), (".f\0.t6.corral-tmp", "f")):
        if name == "native":
            with pytest.raises(InvalidPathError):
                backend_by_name(name).replace_file(fd, tmp, target, b"new\n", _CREATE, 0o644,
                                                   _owner(), _identity(f))
        else:
            assert backend_by_name(name).replace_file(fd, tmp, target, b"new\n", _CREATE,
                                                      0o644, _owner(),
                                                      _identity(f)) == NOT_REPLACED
    assert f.read_bytes() == b"old\n" and _left(f) == ["f"]
