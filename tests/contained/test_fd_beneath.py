"""``Backend.fd_beneath``, the walk's containment check in one call: the
kernel's names of an fd and of the root, compared; the os backend's Python
and the native backend's C answer alike."""

from __future__ import annotations

import os
import sys

import pytest

from corral.contained import backend_by_name
from corral.contained._linux import proc_fds

from ..helpers import BACKEND_CONFIGS

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux") or proc_fds() < 0,
                                reason="/proc/self/fd names fds on Linux with procfs")
NAMES = sorted({name for name, _fast in BACKEND_CONFIGS})


@pytest.fixture(params=NAMES)
def backend(request):
    return backend_by_name(request.param)


def _open(path, flags=os.O_RDONLY):
    return os.open(path, flags | os.O_CLOEXEC)


def test_a_file_below_the_root_the_root_itself_and_what_is_not(backend, tmp_path):
    (tmp_path / "root" / "a").mkdir(parents=True)
    (tmp_path / "root" / "a" / "f").write_bytes(b"in")
    (tmp_path / "rootx").mkdir()  # the root's name as a prefix, not a parent
    (tmp_path / "rootx" / "f").write_bytes(b"out")
    (tmp_path / "g").write_bytes(b"out")
    root = _open(tmp_path / "root", os.O_RDONLY | os.O_DIRECTORY)
    fds = {what: _open(tmp_path / what) for what in ("root/a/f", "root/a", "rootx/f", "g",
                                                      "rootx")}
    try:
        proc = proc_fds()
        assert backend.fd_beneath(proc, root, fds["root/a/f"]) == 1
        assert backend.fd_beneath(proc, root, fds["root/a"]) == 1
        assert backend.fd_beneath(proc, root, root) == 1
        for outside in ("rootx/f", "g", "rootx"):
            assert backend.fd_beneath(proc, root, fds[outside]) == 0, outside
        # renamed out: the fd's name follows it
        os.rename(tmp_path / "root" / "a", tmp_path / "a")
        assert backend.fd_beneath(proc, root, fds["root/a/f"]) == 0
        # the root renamed: its name follows it too
        os.rename(tmp_path / "a", tmp_path / "root" / "a")
        os.rename(tmp_path / "root", tmp_path / "moved")
        assert backend.fd_beneath(proc, root, fds["root/a/f"]) == 1
        assert backend.fd_beneath(proc, root, fds["g"]) == 0
    finally:
        for fd in (root, *fds.values()):
            os.close(fd)


def test_the_file_system_root_holds_everything(backend, tmp_path):
    (tmp_path / "f").write_bytes(b"x")
    root = _open("/", os.O_RDONLY | os.O_DIRECTORY)
    fd = _open(tmp_path / "f")
    try:
        assert backend.fd_beneath(proc_fds(), root, fd) == 1
    finally:
        os.close(fd)
        os.close(root)


def test_no_name_is_minus_one(backend, tmp_path):
    (tmp_path / "f").write_bytes(b"x")
    root = _open(tmp_path, os.O_RDONLY | os.O_DIRECTORY)
    closed = _open(tmp_path / "f")
    os.close(closed)
    try:
        assert backend.fd_beneath(proc_fds(), root, closed) == -1
    finally:
        os.close(root)


def test_a_first_look_made_while_out_of_fds_is_not_remembered(monkeypatch):
    """The first look at /proc made with no fd free raises (a typed
    refusal above) and learns nothing: once fds are free again the
    kernel's names are there.  Remembered as "no procfs", it took them
    away for the process's life (an apply_patch after running out of
    fds was refused)."""
    import errno
    import resource

    from corral.contained import _linux

    monkeypatch.setattr(_linux, "_proc_is_procfs", [])
    monkeypatch.setattr(_linux, "_proc_fds", [])
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (min(soft, 512), hard))
    held: list[int] = []
    try:
        with pytest.raises(OSError) as raised:
            while True:
                held.append(os.open(os.devnull, os.O_RDONLY | os.O_CLOEXEC))
        assert raised.value.errno == errno.EMFILE
        with pytest.raises(OSError) as looked:
            _linux.proc_fds()
        assert looked.value.errno == errno.EMFILE
        assert _linux._proc_is_procfs == [] and _linux._proc_fds == []
    finally:
        for fd in held:
            os.close(fd)
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))
    proc = _linux.proc_fds()
    try:
        assert proc >= 0 and _linux._proc_is_procfs == [True]
    finally:
        os.close(proc)
