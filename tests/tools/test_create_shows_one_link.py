"""A file a call creates (write_file of a new name, Root.write_bytes with
exclusive=True) appears under its name with one link from the first moment:
the temporary file is renamed into place with a rename that never replaces.
Linking it there and then removing the temporary name left a moment where
the new file had two links, and a read sent at the same time answered
"x is a hard-linked file (2 links)" of a file that never had a second name
(found by r24a's calls-sent-at-once battery).  Where the filesystem has no
such rename (EINVAL, ENOTSUP), the link and unlink still create it, never
replacing.  Every backend config."""

from __future__ import annotations

import errno
import os
from pathlib import Path

import pytest

from corral.contained import Root, backend_by_name
from corral.testing.backends import Fault, FaultBackend
from corral.tools import Toolbox

METHODS = ("link_at", "unlink_at", "rename_at", "close", "fsync", "fstat", "lstat_at")


def _watching(make_root, final: Path, seen: list[int]) -> FaultBackend:
    """A backend that, before each name call of the write, looks at ``final``."""
    def look() -> None:
        try:
            seen.append(os.lstat(final).st_nlink)
        except FileNotFoundError:
            pass
    return FaultBackend(backend_by_name(make_root.backend_name),
                        *(Fault(method, None, times=-1, hook=look) for method in METHODS))


def test_write_file_creates_with_one_link(tmp_path: Path, make_root) -> None:
    seen: list[int] = []
    backend = _watching(make_root, tmp_path / "x", seen)
    with Toolbox(Root(tmp_path, backend=backend, fast_path=make_root.fast_path)) as tools:
        answer = tools.call("write_file", {"path": "x", "content": "w1\n"})
        assert answer["ok"] is True and answer["created"] is True, answer
        read = tools.call("read_file", {"path": "x"})
        assert read["ok"] is True, read
    assert (tmp_path / "x").read_text() == "w1\n"
    assert os.lstat(tmp_path / "x").st_nlink == 1
    assert seen and set(seen) == {1}, seen  # looked at while it was there: never two links
    assert [n for n in os.listdir(tmp_path) if n != "x" and not n.startswith(".corral")] == []


def test_write_bytes_exclusive_creates_with_one_link(tmp_path: Path, make_root) -> None:
    seen: list[int] = []
    backend = _watching(make_root, tmp_path / "y", seen)
    root = Root(tmp_path, backend=backend, fast_path=make_root.fast_path)
    try:
        root.write_bytes("y", b"new\n", exclusive=True)
        with pytest.raises(FileExistsError):
            root.write_bytes("y", b"again\n", exclusive=True)
    finally:
        root.close()
    assert (tmp_path / "y").read_bytes() == b"new\n"
    assert seen and set(seen) == {1}, seen
    assert sorted(os.listdir(tmp_path)) == ["y"]


@pytest.mark.parametrize("err", [errno.EINVAL, errno.ENOTSUP])
def test_without_the_rename_a_create_still_never_replaces(tmp_path: Path, make_root,
                                                           err: int) -> None:
    backend = FaultBackend(backend_by_name(make_root.backend_name),
                           Fault("rename_at", err, times=-1, temp=True))
    root = Root(tmp_path, backend=backend, fast_path=make_root.fast_path)
    try:
        root.write_bytes("z", b"first\n", exclusive=True)
        with pytest.raises(FileExistsError):
            root.write_bytes("z", b"second\n", exclusive=True)
    finally:
        root.close()
    assert (tmp_path / "z").read_bytes() == b"first\n"
    assert sorted(os.listdir(tmp_path)) == ["z"]
