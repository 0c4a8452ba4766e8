"""read_file's plain run of small files, on every backend config: files
around 32 KiB answer as the general run does (whole, hashed, then from the
remembered digest); a file changed in place after its digest was
remembered, its mtime put back, is hashed anew (its ctime moved)."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path
from collections.abc import Callable

import pytest

from corral.tools import Progress, Toolbox

HEAD = 32 * 1024


def _ignored(report: Progress) -> None:
    """A progress callback: the call takes the general run."""


def _text(size: int) -> bytes:
    """``size`` bytes of short ASCII lines (the last one cut, no newline)."""
    row = b"value = compute(alpha, beta)  # a line of about forty bytes\n"
    return (row * (size // len(row) + 1))[:size]


@pytest.mark.parametrize("size", [HEAD - 1, HEAD, HEAD + 1, 3 * HEAD])
def test_files_around_the_head_answer_as_the_general_run(
        make_toolbox: Callable[..., Toolbox], tmp_path: Path, settled: None, size: int) -> None:
    data = _text(size)
    (tmp_path / "f.py").write_bytes(data)
    with make_toolbox(tmp_path) as toolbox:
        for _ in range(2):  # the digest hashed, then remembered
            plain = toolbox.call("read_file", {"path": "f.py"})
            general = toolbox.call("read_file", {"path": "f.py"}, progress=_ignored)
            assert plain == general, (plain, general)
            assert plain["ok"] and plain["size"] == size
            assert plain["sha256"] == hashlib.sha256(data).hexdigest()


def test_a_file_changed_in_place_is_hashed_anew(make_toolbox: Callable[..., Toolbox],
                                                tmp_path: Path, settled: None) -> None:
    """Same inode, same size, its mtime put back: the ctime has moved, so
    the remembered digest is not used."""
    path = tmp_path / "f.py"
    path.write_bytes(b"x = 1\n" * 20)
    before = path.stat()
    with make_toolbox(tmp_path) as toolbox:
        first = toolbox.call("read_file", {"path": "f.py"})
        again = toolbox.call("read_file", {"path": "f.py"})  # from what it remembers
        with open(path, "r+b") as f:
            f.write(b"y")
        os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))
        changed = toolbox.call("read_file", {"path": "f.py"})
    assert first["sha256"] == again["sha256"] == hashlib.sha256(b"x = 1\n" * 20).hexdigest()
    assert changed["sha256"] == hashlib.sha256(path.read_bytes()).hexdigest() != first["sha256"]
    assert changed["content"].startswith("1\ty = 1")
