"""``Handle.opened_stat``: the file's ``fstat`` as it was opened, for a
reader deciding on what it opened before reading a byte (read_file: its
type, links, size and stamps).  Every backend answers it the same way: the
native one-call open hands back the fstat its file-type check took
(``Backend.open_stat_beneath``), any other open (the os backend, the walk,
a wrapping backend such as the fault-injecting one) takes one now through
the backend, where a fault injected on ``fstat`` still fails it.
"""

from __future__ import annotations

import errno
import os

import pytest

from corral.contained import Root, backend_by_name
from corral.testing.backends import Fault, FaultBackend

PATHS = ["f", "d/g", "d/../f", "link", "d"]


def _tree(base):
    (base / "d").mkdir()
    (base / "f").write_bytes(b"one\n")
    (base / "d" / "g").write_bytes(b"two\n" * 3)
    os.symlink("d/g", base / "link")
    os.utime(base / "f", ns=(1_000_000_001, 2_000_000_002))


@pytest.mark.parametrize("path", PATHS)
def test_it_is_the_fstat_of_what_was_opened_on_every_backend(make_root, tmp_path, path):
    _tree(tmp_path)
    root = make_root(tmp_path)
    with root.open_handle(path) as handle:
        info, now = handle.opened_stat(), os.fstat(handle.fd)
        assert handle.opened_stat() is info or handle.opened_stat() == info
    for name in [n for n in dir(now) if n.startswith("st_") and "atime" not in n]:
        assert getattr(info, name) == getattr(now, name), name
    assert (info.st_dev, info.st_ino) == (os.stat(tmp_path / path).st_dev,
                                          os.stat(tmp_path / path).st_ino)


def test_a_write_is_never_given_the_opens_fstat(make_root, tmp_path):
    """A handle opened to change the file says what it is now, not what
    the open saw: the bytes written through it count."""
    _tree(tmp_path)
    root = make_root(tmp_path)
    with root.open_handle("f", os.O_RDWR) as handle:
        os.write(handle.fd, b"longer than before\n")
        assert handle.opened_stat().st_size == len(b"longer than before\n")


@pytest.mark.parametrize("name", ["native", "os"])
def test_a_fault_on_fstat_still_fails_it_through_a_wrapping_backend(tmp_path, name):
    """Root ignores permission bits, so the failure is injected: a backend
    wrapping another takes the fstat itself, and its fault is raised,
    naming the path."""
    _tree(tmp_path)
    try:
        inner = backend_by_name(name)
    except (OSError, ImportError, ValueError):
        inner = backend_by_name("os")
    backend = FaultBackend(inner)
    with Root(tmp_path, backend=backend) as root, root.open_handle("d/g") as handle:
        backend.add(Fault("fstat", errno.EACCES, name="g", times=-1))  # (the open's own passed)
        with pytest.raises(PermissionError) as caught:
            handle.opened_stat()
    assert caught.value.filename == "d/g"
