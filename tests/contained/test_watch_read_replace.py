"""``Backend.watch_read_replace``: one read of the kernel watch and the look
whether it is exactly one replace onto an awaited name, in one call (C in
the native backend, the two calls in the default); the same answer both
ways."""

from __future__ import annotations

import os

import pytest

from corral.contained import available_backends, backend_by_name
from corral.contained._backend import Backend
from corral.tools._runtime.view.freshness import _ENTRIES, _arrival

WATCHING = [name for name in available_backends() if backend_by_name(name).watches]


def _watched(backend, path):
    watch = backend.watch_open()
    dir_fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY)
    wd = backend.watch_add(watch, dir_fd, _ENTRIES)
    os.close(dir_fd)
    return watch, wd


# (backend, the default's two calls, the native module's own function)
CASES = [(name, generic, True) for name in WATCHING for generic in (False, True)] + \
    [("native", False, False)] * ("native" in WATCHING)


@pytest.mark.parametrize(("name", "generic", "exported"), CASES)
def test_one_replace_is_taken_and_any_other_read_given(tmp_path, monkeypatch, name, generic,
                                                       exported):
    """The default's two calls, the native backend's one: through the
    module's own function, and through its cffi wrapper."""
    if not exported:
        from corral.contained import _native_backend
        monkeypatch.setattr(_native_backend, "_watch_read", None)
    backend = backend_by_name(name)
    call = (lambda *a: Backend.watch_read_replace(backend, *a)) if generic else \
        backend.watch_read_replace
    (tmp_path / "f.txt").write_bytes(b"old\n")
    watch, wd = _watched(backend, tmp_path)
    try:
        (tmp_path / ".f.txt.tmp").write_bytes(b"new\n")
        os.rename(tmp_path / ".f.txt.tmp", tmp_path / "f.txt")
        assert call(watch, 4096, wd, _arrival("f.txt")) is None
        # the same replace awaited at another name: the bytes read come back
        (tmp_path / ".f.txt.tmp").write_bytes(b"new\n")
        os.rename(tmp_path / ".f.txt.tmp", tmp_path / "f.txt")
        data = call(watch, 4096, wd, _arrival("g.txt"))
        assert data is not None and len(data) >= 48 and b"f.txt" in data
        # another program's change: given as read
        (tmp_path / "other").write_bytes(b"x")
        data = call(watch, 4096, wd, _arrival("f.txt"))
        assert data is not None and b"other" in data
        # nothing waits: the read's error, as a read raises it
        with pytest.raises(BlockingIOError):
            call(watch, 4096, wd, _arrival("f.txt"))
    finally:
        backend.close(watch)
