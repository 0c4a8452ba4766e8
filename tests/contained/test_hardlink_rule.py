"""The core's hard-link rule, every backend config: an operation that would
change a regular file in place (``chmod``, ``chown``, ``utime``,
``truncate``, ``open`` / ``open_file`` for writing, ``RootPath.touch``)
refuses a file with more than one link (:class:`HardLinkError`, ``EMLINK``)
unless the Root allows hard links; its other name here is outside the root,
and nothing of the outside file changes.  Replacing the name
(``write_bytes``, ``write_text``, ``copyfile`` onto it, ``rename`` over it)
stays allowed and leaves the outside name as it was.  The tools map the
error as they map a hard-linked read."""

from __future__ import annotations

import copy
import errno
import os
import stat
from collections.abc import Callable
from pathlib import PurePosixPath

import pytest

from corral.contained import HardLinkError, Root
from corral.tools import Toolbox
from corral.tools._refusals.classify import Call
from corral.tools._runtime.refusing import refusal_for

SECRET = b"outside content\n"


@pytest.fixture
def linked(scratch):
    """``ws/f`` and ``ws/d/g`` are second names of files outside the root;
    ``ws/via`` is an in-root symlink to ``f``; ``ws/plain`` has one link."""
    (scratch / "ws" / "d").mkdir(parents=True)
    (scratch / "outside").mkdir()
    for name, inside in (("f", "f"), ("g", "d/g")):
        (scratch / "outside" / name).write_bytes(SECRET)
        os.chmod(scratch / "outside" / name, 0o640)
        os.utime(scratch / "outside" / name, (1_000_000_000, 1_000_000_000))
        os.link(scratch / "outside" / name, scratch / "ws" / inside)
    os.symlink("f", scratch / "ws" / "via")
    (scratch / "ws" / "plain").write_bytes(b"plain\n")
    return scratch


def outside_state(base) -> list[tuple]:
    out = []
    for name in ("f", "g"):
        info = os.stat(base / "outside" / name)
        out.append(((base / "outside" / name).read_bytes(), stat.S_IMODE(info.st_mode),
                    info.st_mtime_ns, info.st_uid, info.st_gid, info.st_size))
    return out


def _open_file(mode: str) -> Callable[[Root, str], None]:
    def run(root: Root, path: str) -> None:
        with root.open_file(path, mode) as f:
            if "r" not in mode or "+" in mode:
                f.write(b"changed" if "b" in mode else "changed")
    return run


def _open_fd(flags: int) -> Callable[[Root, str], None]:
    def run(root: Root, path: str) -> None:
        fd = root.open(path, flags)
        try:
            os.write(fd, b"changed")
        finally:
            os.close(fd)
    return run


def _write_handle(root: Root, path: str, flags: int) -> None:
    handle = root.open_handle(path, flags)
    try:
        os.write(handle.fd, b"changed")
    finally:
        handle.close()


IN_PLACE: dict[str, Callable[[Root, str], None]] = {
    "chmod": lambda root, path: root.chmod(path, 0o600),
    "chown": lambda root, path: root.chown(path, os.getuid() + 1, -1),
    "utime": lambda root, path: root.utime(path, (2_000_000_000, 2_000_000_000)),
    "utime-now": lambda root, path: root.utime(path),
    "truncate": lambda root, path: root.truncate(path, 0),
    "open_file-w": _open_file("w"),
    "open_file-wb": _open_file("wb"),
    "open_file-a": _open_file("a"),
    "open_file-r+": _open_file("r+"),
    "open_file-r+b": _open_file("r+b"),
    "open_file-w+": _open_file("w+"),
    "open-O_WRONLY": _open_fd(os.O_WRONLY),
    "open-O_RDWR": _open_fd(os.O_RDWR),
    "open-O_APPEND": _open_fd(os.O_WRONLY | os.O_APPEND),
    "open-O_TRUNC": _open_fd(os.O_WRONLY | os.O_TRUNC),
    "open-O_CREAT": _open_fd(os.O_WRONLY | os.O_CREAT),
    "touch": lambda root, path: root.joinpath(path).touch(),
    "open_handle-O_RDWR": lambda root, path: _write_handle(root, path, os.O_RDWR),
    "open_handle-O_TRUNC": lambda root, path: _write_handle(root, path,
                                                             os.O_WRONLY | os.O_TRUNC),
}


@pytest.mark.parametrize("op", sorted(IN_PLACE))
@pytest.mark.parametrize("path", ["f", "d/g", "via", "./d/../f"])
def test_in_place_changes_refuse_a_hard_linked_file(make_root, linked, op, path):
    before = outside_state(linked)
    root = make_root(linked / "ws")
    assert root.allow_hardlinks is False
    with pytest.raises(HardLinkError) as info:
        IN_PLACE[op](root, path)
    assert info.value.errno == errno.EMLINK and info.value.links == 2
    # a RootPath spells its path as PurePosixPath does ("./d/../f" is "d/../f")
    assert info.value.filename == (str(PurePosixPath(path)) if op == "touch" else path)
    assert outside_state(linked) == before


@pytest.mark.parametrize("op", sorted(IN_PLACE))
def test_a_file_with_one_link_is_changed(make_root, linked, op):
    if op == "chown" and os.getuid() != 0:
        pytest.skip("giving a file away needs root")  # CI and this machine run as root
    root = make_root(linked / "ws")
    IN_PLACE[op](root, "plain")
    info = os.stat(linked / "ws" / "plain")
    assert info.st_nlink == 1


@pytest.mark.parametrize("op", sorted(IN_PLACE))
def test_a_root_that_allows_hard_links_changes_them(make_root, linked, op):
    if op == "chown" and os.getuid() != 0:
        pytest.skip("giving a file away needs root")
    root = make_root(linked / "ws", allow_hardlinks=True)
    before = outside_state(linked)
    IN_PLACE[op](root, "f")
    assert outside_state(linked)[0] != before[0]  # the shared inode changed
    assert outside_state(linked)[1] == before[1]


def test_open_for_reading_and_exclusive_create_are_not_in_place_changes(make_root, linked):
    root = make_root(linked / "ws")
    with root.open_file("f", "rb") as f:
        assert f.read() == SECRET
    with pytest.raises(FileExistsError):
        root.open_file("f", "x")
    with root.open_file("new", "w") as f:  # created: one link
        f.write("new")
    assert (linked / "ws" / "new").read_text() == "new"


REPLACING: dict[str, Callable[[Root], None]] = {
    "write_bytes": lambda root: root.write_bytes("f", b"replaced"),
    "write_text": lambda root: root.write_text("f", "replaced"),
    "copyfile": lambda root: root.copyfile("plain", "f"),
    "rename": lambda root: root.rename("plain", "f"),
    "via-write_bytes": lambda root: root.write_bytes("via", b"replaced"),
    "RootPath.write_bytes": lambda root: root.joinpath("d/g").write_bytes(b"replaced"),
}


@pytest.mark.parametrize("op", sorted(REPLACING))
def test_replacing_the_name_stays_allowed(make_root, linked, op):
    before = outside_state(linked)
    root = make_root(linked / "ws")
    REPLACING[op](root)
    assert outside_state(linked) == before


def test_sub_roots_and_copies_keep_the_choice(make_root, linked):
    for allow in (False, True):
        root = make_root(linked, allow_hardlinks=allow)
        sub = root.open_root("ws")
        try:
            assert sub.allow_hardlinks is allow
            twin = copy.copy(sub)
            assert twin.allow_hardlinks is allow
            twin.close()
        finally:
            sub.close()
    fd = os.open(linked / "ws", os.O_RDONLY | os.O_DIRECTORY)
    try:
        assert Root.from_fd(fd, allow_hardlinks=True).allow_hardlinks is True
        assert Root.from_fd(fd).allow_hardlinks is False
    finally:
        os.close(fd)


def test_a_refused_truncating_open_leaves_the_content(make_root, linked):
    """``O_TRUNC`` is applied only after the check: the refused open
    truncated nothing."""
    root = make_root(linked / "ws")
    with pytest.raises(HardLinkError):
        root.open("f", os.O_WRONLY | os.O_TRUNC)
    assert (linked / "outside" / "f").read_bytes() == SECRET
    fd = root.open("plain", os.O_WRONLY | os.O_TRUNC)
    os.close(fd)
    assert (linked / "ws" / "plain").read_bytes() == b""


def test_the_tools_map_it_as_a_hard_linked_read(linked):
    """A ``HardLinkError`` from the core becomes the refusal a hard-linked
    read gets (``UNSUPPORTED``, kind ``hardlink``, the link count)."""
    toolbox = Toolbox(linked / "ws")
    read = toolbox.call("read_file", {"path": "f"})
    error = HardLinkError("a hard-linked file (2 links) is not changed in place", "f",
                          component="f", links=2)
    refusal = refusal_for(error, Call("write_file", {"path": "f"}),
                          toolbox._state.context("write_file", seconds=30)).envelope()
    assert read["ok"] is False and read["code"] == "UNSUPPORTED"
    assert read["details"]["kind"] == "hardlink"
    assert (refusal["code"], refusal["details"]["kind"], refusal["details"]["links"],
            refusal["details"]["path"]) == ("UNSUPPORTED", "hardlink", 2, "f")
