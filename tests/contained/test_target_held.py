"""``Target.held_fd``, ``open_held`` and ``held_identity``: the directory a
Target holds (its parent, or while parents are only planned, the deepest
directory that exists on the way), what the tools' view locks."""

from __future__ import annotations

import fcntl
import os

import pytest


def test_the_held_directory_is_the_parent(tmp_path, make_root):
    (tmp_path / "a" / "b").mkdir(parents=True)
    root = make_root(tmp_path)
    with root.target("a/b/new.txt") as target:
        info = os.stat(tmp_path / "a" / "b")
        assert target.held_identity() == (info.st_dev, info.st_ino)
        assert os.fstat(target.held_fd).st_ino == info.st_ino
        with target.open_held() as handle:
            assert handle.path == "a/b"
            assert handle.stat().st_ino == info.st_ino
            fcntl.flock(handle.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)  # a lockable fd


def test_while_parents_are_planned_the_deepest_existing_directory_is_held(tmp_path,
                                                                          make_root):
    (tmp_path / "a").mkdir()
    root = make_root(tmp_path)
    with root.target("a/x/y/new.txt", create_parents=True) as target:
        assert target.creates == ("a/x", "a/x/y")
        info = os.stat(tmp_path / "a")
        assert target.held_identity() == (info.st_dev, info.st_ino)
        with pytest.raises(FileNotFoundError):
            target.dir_fd  # the parent itself is not there yet
        target.make_parents()
        made = os.stat(tmp_path / "a" / "x" / "y")
        assert target.held_identity() == (made.st_dev, made.st_ino)


def test_the_held_directory_is_the_one_resolved_even_when_renamed(tmp_path, make_root):
    (tmp_path / "d").mkdir()
    root = make_root(tmp_path)
    with root.target("d/f.txt") as target:
        before = target.held_identity()
        os.rename(tmp_path / "d", tmp_path / "moved")
        os.symlink("elsewhere", tmp_path / "d")
        assert target.held_identity() == before  # the fd, never the path again
        with target.open_held() as handle:
            assert handle.stat().st_ino == before[1]


def test_a_closed_target_refuses(tmp_path, make_root):
    root = make_root(tmp_path)
    target = root.target("f.txt")
    target.close()
    with pytest.raises(OSError):
        target.held_identity()
    with pytest.raises(OSError):
        target.open_held()


def test_held_lstat_looks_at_one_name_beside_the_entry(tmp_path, make_root):
    (tmp_path / "repo" / "objects").mkdir(parents=True)
    (tmp_path / "repo" / "HEAD").write_text("ref: refs/heads/main\n")
    os.symlink("elsewhere", tmp_path / "repo" / "link")
    root = make_root(tmp_path)
    with root.target("repo/hooks/pre-receive", create_parents=True) as target:
        head = target.held_lstat("HEAD")  # the deepest existing directory: repo
        assert head is not None and head.st_ino == os.stat(tmp_path / "repo" / "HEAD").st_ino
        assert target.held_lstat("refs") is None
        link = target.held_lstat("link")
        assert link is not None and os.path.islink(tmp_path / "repo" / "link")
        assert link.st_ino == os.lstat(tmp_path / "repo" / "link").st_ino  # not followed
        for bad in ("", ".", "..", "a/b", "x\0"):
            with pytest.raises(ValueError):
                target.held_lstat(bad)


def test_target_open_refuses_a_socket_as_root_open_does(tmp_path, make_root):
    import socket

    from corral.contained import SpecialFileError

    server = socket.socket(socket.AF_UNIX)
    try:
        server.bind(str(tmp_path / "sock"))
        root = make_root(tmp_path)
        with root.target("sock") as target:
            with pytest.raises(SpecialFileError) as caught:
                target.open()
        assert caught.value.kind == "socket"
    finally:
        server.close()


def test_a_lock_taken_on_the_held_directory_holds_while_parents_are_made(tmp_path, make_root):
    """make_parents moves on to the directories it makes, but keeps the fd
    the resolution held open until the Target closes: a flock taken on it
    (the view's lock on where a step acts) is not dropped halfway."""
    (tmp_path / "a").mkdir()
    root = make_root(tmp_path)
    with root.target("a/x/new.txt", create_parents=True, lockable=True) as target:
        # as the view takes it: on the held fd where it was opened for
        # reading, else (an O_PATH fd, the walk's) on the directory reopened
        reopened = None if target.held_lockable else target.open_held()
        fd = target.held_fd if reopened is None else reopened.fileno()
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        target.make_parents()
        target.write_bytes(b"data")
        other = os.open(tmp_path / "a", os.O_RDONLY | os.O_DIRECTORY)
        try:
            with pytest.raises(BlockingIOError):  # still held through the first fd
                fcntl.flock(other, fcntl.LOCK_EX | fcntl.LOCK_NB)
        finally:
            os.close(other)
        if reopened is not None:
            reopened.close()
    other = os.open(tmp_path / "a", os.O_RDONLY | os.O_DIRECTORY)
    try:
        fcntl.flock(other, fcntl.LOCK_EX | fcntl.LOCK_NB)  # closing the Target let it go
    finally:
        os.close(other)
    assert (tmp_path / "a" / "x" / "new.txt").read_bytes() == b"data"


def test_identify_false_leaves_the_directory_unlooked_at_until_asked(tmp_path, make_root):
    (tmp_path / "a").mkdir()
    root = make_root(tmp_path)
    with root.target("a/new.txt", lockable=True, identify=False) as target:
        info = os.stat(tmp_path / "a")
        assert target.held_identity() == (info.st_dev, info.st_ino)  # looked at now
