"""DirectoryWatch: the directories a layer above watches report every entry
any program makes, renames or removes in them, by the directory's object
(added by fd), and leave out the core's own atomic replaces."""

from __future__ import annotations

import os
import sys
from pathlib import Path

from corral.contained import DirectoryWatch, Root, backend_by_name

CREATED, REMOVED, MOVED_FROM, MOVED_TO = (DirectoryWatch.CREATED, DirectoryWatch.REMOVED,
                                          DirectoryWatch.MOVED_FROM, DirectoryWatch.MOVED_TO)


def _watch() -> DirectoryWatch | None:
    watch = DirectoryWatch.open()
    # Linux with the native module watches; elsewhere there is none (never a broken one)
    native = backend_by_name("native") if sys.platform == "linux" else None
    assert (watch is not None) == (native is not None and native.can_watch)
    return watch


def test_a_link_made_renamed_and_removed_is_reported(tmp_path: Path) -> None:
    watch = _watch()
    if watch is None:
        return
    fd = os.open(tmp_path, os.O_RDONLY | os.O_DIRECTORY)
    try:
        number = watch.add(fd)
        assert watch.read() == []
        os.symlink("editor", tmp_path / ".vscode")
        os.rename(tmp_path / ".vscode", tmp_path / "vscode-old")
        os.unlink(tmp_path / "vscode-old")
        events = watch.read()
        assert [(e.watch, e.mask & ~0x40000000, e.name) for e in events] == [
            (number, CREATED, ".vscode"), (number, MOVED_FROM, ".vscode"),
            (number, MOVED_TO, "vscode-old"), (number, REMOVED, "vscode-old")]
        assert events[1].cookie == events[2].cookie != 0
        assert watch.read() == []
    finally:
        os.close(fd)
        watch.close()


def test_the_watch_follows_the_directory_not_its_path(tmp_path: Path) -> None:
    watch = _watch()
    if watch is None:
        return
    (tmp_path / "a").mkdir()
    fd = os.open(tmp_path / "a", os.O_RDONLY | os.O_DIRECTORY)
    try:
        number = watch.add(fd)
        os.rename(tmp_path / "a", tmp_path / "b")
        (tmp_path / "a").mkdir()  # a new directory at the old path is not watched
        os.symlink("x", tmp_path / "a" / "not-seen")
        os.symlink("x", tmp_path / "b" / "seen")
        names = [(e.watch, e.name) for e in watch.read() if e.name]
        assert names == [(number, "seen")]
    finally:
        os.close(fd)
        watch.close()


def test_the_cores_own_replaces_are_left_out(tmp_path: Path) -> None:
    watch = _watch()
    if watch is None:
        return
    (tmp_path / "f.txt").write_text("old\n")
    fd = os.open(tmp_path, os.O_RDONLY | os.O_DIRECTORY)
    try:
        watch.add(fd)
        with Root(str(tmp_path)) as root:
            for _ in range(3):
                root.write_bytes("f.txt", b"new\n")
        assert watch.read() == []  # temporary file made, renamed onto f.txt: nothing
        os.symlink("x", tmp_path / ".f.txt.0123456789ab.corral-tmp.not")
        assert [e.name for e in watch.read()] == [".f.txt.0123456789ab.corral-tmp.not"]
    finally:
        os.close(fd)
        watch.close()


def test_one_directory_added_twice_is_one_watch_and_a_removal_ends_it(tmp_path: Path) -> None:
    import errno

    import pytest
    watch = _watch()
    if watch is None:
        return
    fd = os.open(tmp_path, os.O_RDONLY | os.O_DIRECTORY)
    again = os.open(tmp_path, os.O_RDONLY | os.O_DIRECTORY)
    try:
        number = watch.add(fd)
        assert watch.add(again) == number  # the kernel's one watch of the directory
        watch.remove(number)
        assert [(e.watch, e.mask) for e in watch.read()] == [(number, DirectoryWatch.DROPPED)]
        os.symlink("x", tmp_path / "not-seen")
        assert watch.read() == []
        with pytest.raises(OSError) as removed_again:
            watch.remove(number)
        assert removed_again.value.errno == errno.EINVAL
        renewed = watch.add(fd)
        os.symlink("x", tmp_path / "seen")
        assert [(e.watch, e.name) for e in watch.read()] == [(renewed, "seen")]
    finally:
        os.close(fd)
        os.close(again)
        watch.close()
