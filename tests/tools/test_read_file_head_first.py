"""read_file's plain run reads a file's head before its fstat: a file that
fits is then read whole and its stamps, taken after its bytes, vouch for
them (one fstat a call, none after the read).  On every backend config:
files around the head's size answer as the general run does; a file
changed in place after its digest was remembered is hashed anew; a warm
read's system calls after the open are the read, the fstat and the close."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path
from collections.abc import Callable

import pytest

from corral.contained import Root
from corral.testing.backends import CountingBackend
from corral.tools import Progress, Toolbox
from corral.tools._builtin import read_file

HEAD = getattr(read_file, "HEAD_READ", 32 * 1024)  # (its size today)


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
    """Same inode, same size, its mtime put back: the ctime the fstat
    after the read sees has moved, so the remembered digest is not used."""
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


def test_a_warm_read_makes_one_fstat_after_its_bytes(make_root: Callable[..., Root],
                                                     tmp_path: Path, settled: None) -> None:
    """The general run stats the file before its read and once more after
    it (do the remembered digest's stamps still hold?); the plain run's one
    fstat comes after the read."""
    (tmp_path / "f.py").write_text("x = 1\n" * 50)
    backend = CountingBackend(make_root(tmp_path).backend)
    root = Root(str(tmp_path), backend=backend, fast_path=make_root.fast_path)
    orders = {}
    try:
        with Toolbox(root) as toolbox:
            assert toolbox.call("read_file", {"path": "f.py"})["ok"]  # its digest remembered
            for name, options in (("plain", {}), ("general", {"progress": _ignored})):
                with backend.counting() as tally:
                    answer = toolbox.call("read_file", {"path": "f.py"}, **options)
                assert answer["ok"], answer
                orders[name] = list(tally.order)
    finally:
        root.close()
    plain, general = orders["plain"], orders["general"]
    assert plain[-3:] == ["pread", "fstat", "close"] and plain.count("pread") == 1, orders
    assert plain.count("fstat") == general.count("fstat") - 1, orders
