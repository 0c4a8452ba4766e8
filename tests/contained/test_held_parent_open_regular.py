"""``HeldParent.open_regular`` and ``HeldParent.read_regular``: the held
directory's file opened, its ``fstat`` looked at and (only for a regular
file of one link within the bound) its head or its whole content read, in
one step of the tools' plain write and edit.  Run on every backend config:
where the root has no openat2 fast path there is no held parent."""

from __future__ import annotations

import os

import pytest

from corral.contained import HeldParent


def _held(tmp_path, make_root, content: bytes = b"line one\nline two\n") -> HeldParent | None:
    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "f.txt").write_bytes(content)
    root = make_root(tmp_path)
    held = root.hold_parent("a/f.txt")
    if not root.info()["fast_path"]:
        assert held is None
        return None
    assert held is not None
    return held


def test_open_regular_gives_the_fstat_and_at_most_the_head_asked(tmp_path, make_root):
    held = _held(tmp_path, make_root)
    if held is None:
        return
    with held:
        opened = held.open_regular(1000, 4)
        assert opened is not None
        info, head = opened
        before = os.stat(tmp_path / "a" / "f.txt")
        assert (info.st_dev, info.st_ino, info.st_size) == (before.st_dev, before.st_ino, 18)
        assert head == b"line"
        with pytest.raises(ValueError):  # opened once a hold
            held.open_regular(1000, 4)
        held.replace(b"new\n")
    assert (tmp_path / "a" / "f.txt").read_bytes() == b"new\n"


def test_open_regular_reads_no_head_unasked_and_all_of_a_short_file(tmp_path, make_root):
    held = _held(tmp_path, make_root)
    if held is None:
        return
    with held:
        opened = held.open_regular(1000, 0)
        assert opened is not None and opened[1] == b""
    with make_root(tmp_path).hold_parent("a/f.txt") as again:
        opened = again.open_regular(1000, 1 << 16)
        assert opened is not None and opened[1] == b"line one\nline two\n"


def test_open_regular_is_none_for_a_file_at_or_over_the_bound(tmp_path, make_root):
    held = _held(tmp_path, make_root)
    if held is None:
        return
    with held:
        assert held.open_regular(18, 100) is None  # 18 bytes: not under 18
    assert (tmp_path / "a" / "f.txt").read_bytes() == b"line one\nline two\n"


def test_open_regular_is_none_for_a_file_with_other_links(tmp_path, make_root):
    held = _held(tmp_path, make_root)
    if held is None:
        return
    os.link(tmp_path / "a" / "f.txt", tmp_path / "other")
    with held:
        assert held.open_regular(1000, 100) is None
    with make_root(tmp_path).hold_parent("a/f.txt") as again:
        assert again.read_regular(1000) is None


def test_a_fifo_is_neither_waited_on_nor_read(tmp_path, make_root):
    (tmp_path / "a").mkdir()
    os.mkfifo(tmp_path / "a" / "f.txt")
    root = make_root(tmp_path)
    held = root.hold_parent("a/f.txt")
    if not root.info()["fast_path"]:
        assert held is None
        return
    with held:  # (a read of a FIFO with no writer would block, or fail)
        assert held.open_regular(1000, 100) is None
    with root.hold_parent("a/f.txt") as again:
        assert again.read_regular(1000) is None


def test_a_link_or_nothing_at_the_name_is_none(tmp_path, make_root):
    (tmp_path / "a").mkdir()
    (tmp_path / "target").write_bytes(b"x\n")
    os.symlink("../target", tmp_path / "a" / "f.txt")
    root = make_root(tmp_path)
    if not root.info()["fast_path"]:
        return
    with root.hold_parent("a/f.txt") as held:
        assert held.open_regular(1000, 100) is None
    with root.hold_parent("a/f.txt") as held:
        assert held.read_regular(1000) is None
    with root.hold_parent("a/missing.txt") as held:
        assert held.open_regular(1000, 100) is None
        assert (tmp_path / "target").read_bytes() == b"x\n"


def test_read_regular_gives_the_whole_file_or_none_over_the_limit(tmp_path, make_root):
    held = _held(tmp_path, make_root)
    if held is None:
        return
    with held:
        opened = held.read_regular(18)
        assert opened is not None and opened[1] == b"line one\nline two\n"
        assert opened[0].st_size == 18
    with make_root(tmp_path).hold_parent("a/f.txt") as again:
        assert again.read_regular(17) is None  # over the limit: not read
