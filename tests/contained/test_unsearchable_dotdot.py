"""``.`` and ``..`` after a directory that may not be searched: the
documented difference from the kernel (README, contained section; ``Root``
docstring).  The kernel answers ``stat("dir/..")`` with ``EACCES`` when
``dir`` lacks search permission, since it looks ``..`` up in ``dir``; the
walk never hands ``..`` to the kernel (it pops its stack of open directory
fds, so a concurrent rename cannot carry it out of the root) and never
looks ``.`` up, so it answers from the directories it already holds.  The
openat2 fast path, which the kernel resolves, falls back to the walk on
any error but ``EAGAIN``, so both give the walk's answer.  A name looked
up *in* ``dir`` is refused as the kernel refuses it.

Root ignores permission bits (CI runs as root), so the backend here
refuses every lookup in ``dir`` with ``EACCES``, as the kernel does for a
directory without search permission, and every ``openat2`` (whose path
may pass through ``dir``; the kernel would refuse those)."""

from __future__ import annotations

import errno
import os

import pytest

from corral.contained import Root, available_backends, backend_by_name
from corral.testing.backends import FaultBackend


class NoSearch(FaultBackend):
    """Lookups in the directory ``(st_dev, st_ino)`` fail with ``EACCES``."""

    def __init__(self, inner, forbidden: tuple[int, int]) -> None:
        super().__init__(inner)
        self.forbidden = forbidden

    def _refuse(self, dir_fd: int) -> None:
        info = os.fstat(dir_fd)
        if (info.st_dev, info.st_ino) == self.forbidden:
            raise PermissionError(errno.EACCES, os.strerror(errno.EACCES))

    def open_at(self, dir_fd, name, flags, mode=0o666):
        self._refuse(dir_fd)
        return super().open_at(dir_fd, name, flags, mode)

    def openat2(self, dir_fd, path, flags, mode, resolve):
        raise PermissionError(errno.EACCES, os.strerror(errno.EACCES))

    def lstat_at(self, dir_fd, name):
        self._refuse(dir_fd)
        return super().lstat_at(dir_fd, name)

    def readlink_at(self, dir_fd, name):
        self._refuse(dir_fd)
        return super().readlink_at(dir_fd, name)

    def mkdir_at(self, dir_fd, name, mode):
        self._refuse(dir_fd)
        return super().mkdir_at(dir_fd, name, mode)

    def create_directory_at(self, dir_fd, name, mode):
        self._refuse(dir_fd)
        return super().create_directory_at(dir_fd, name, mode)


CONFIGS = [(name, fast) for name in available_backends() for fast in (True, False)]


@pytest.fixture(params=CONFIGS, ids=[f"{n}-{'openat2' if f else 'walk'}" for n, f in CONFIGS])
def locked(request, tmp_path):
    name, fast = request.param
    (tmp_path / "dir").mkdir()
    (tmp_path / "dir" / "inner").write_bytes(b"inner")
    (tmp_path / "x").write_bytes(b"x")
    info = os.stat(tmp_path / "dir")
    backend = NoSearch(backend_by_name(name), (info.st_dev, info.st_ino))
    root = Root(tmp_path, backend=backend, fast_path=fast)
    yield root, tmp_path
    root.close()


def test_a_name_in_the_directory_is_refused_as_the_kernel_refuses_it(locked):
    root, _ = locked
    with pytest.raises(PermissionError):
        root.stat("dir/inner")
    with pytest.raises(PermissionError):
        root.open("dir/inner")
    with pytest.raises(PermissionError):
        root.mkdir("dir/new")


def test_dot_and_dotdot_after_it_answer_from_the_held_directories(locked):
    """Where the kernel says EACCES (documented difference)."""
    root, top = locked
    assert root.stat("dir/..").st_ino == os.stat(top).st_ino
    assert root.stat("dir/.").st_ino == os.stat(top / "dir").st_ino
    fd = root.open("dir/../x")
    try:
        assert os.read(fd, 10) == b"x"
    finally:
        os.close(fd)
    root.mkdir("dir/../new")
    assert (top / "new").is_dir()
    assert root.realpath("dir/../x") == "x"
    assert sorted(root.listdir("dir/..")) == ["dir", "new", "x"]
