"""The native search scanner's listing and file batch (native/corral_scan.h)
against the os module on real files: every entry kind, names that are not
UTF-8, directories larger than the first buffer, every per-file status, a
needle across two read chunks, files past the per-call budget; and the
newline counter at every alignment.  (Without the module these cannot run:
test_search_engine.py::test_native_scanner_is_built fails there first.)"""

from __future__ import annotations

import errno
import os
import random
import socket
from pathlib import Path

import pytest

from corral.contained import ScanStatus
from corral.contained import available_backends, backend_by_name

from ..helpers import fds_opened_since, open_fds

HAS_NATIVE = "native" in available_backends()
pytestmark = pytest.mark.skipif(not HAS_NATIVE, reason="corral._native was not built")

if HAS_NATIVE:
    from corral._native import ffi, lib
    from corral.contained._native_backend import FileScanner
    NATIVE = backend_by_name("native")


class _NativeLister:
    """The native backend's lister, its listings sorted as a Tree sorts them."""

    def __init__(self) -> None:
        self._lister = NATIVE.dir_lister()

    @staticmethod
    def _sorted(raw):
        files, kinds, dirs, undecodable = raw
        return sorted(files), kinds, sorted(dirs), undecodable

    def __call__(self, fd):
        return self._sorted(self._lister(fd))

    def open_list(self, dir_fd, name, flags):
        fd, raw = self._lister.open_list(dir_fd, name, flags)
        return fd, self._sorted(raw)


def _scandir_truth(path: Path) -> tuple[list[str], dict[str, str], list[str], int]:
    files, kinds, dirs, undecodable = [], {}, [], 0
    for entry in os.scandir(path):
        name = entry.name
        try:
            name.encode("utf-8")
        except UnicodeEncodeError:
            undecodable += 1
            continue
        if entry.is_dir(follow_symlinks=False):
            dirs.append(name + "/")
        else:
            files.append(name)
            if not entry.is_file(follow_symlinks=False):
                kinds[name] = "symlink" if entry.is_symlink() else "other"
    return sorted(files), kinds, sorted(dirs), undecodable


def _every_kind(path: Path) -> None:
    (path / "f.txt").write_text("x")
    (path / "sub").mkdir()
    (path / "sub.d").mkdir()
    (path / "a-b").write_text("")
    os.symlink("f.txt", path / "link")
    os.symlink("sub", path / "dirlink")
    os.symlink("nowhere", path / "dangling")
    os.mkfifo(path / "fifo")
    sock = socket.socket(socket.AF_UNIX)
    sock.bind(str(path / "sock"))
    sock.close()
    (path / "caf\u00e9").write_text("")
    (path / "\u212bngstrom").mkdir()
    with open(os.path.join(os.fsencode(path), b"bad\xff\xfe"), "w"):
        pass
    with open(os.path.join(os.fsencode(path), b"surrogate\xed\xa0\x80"), "w"):
        pass


def test_listing_agrees_with_scandir(tmp_path):
    _every_kind(tmp_path)
    fd = os.open(tmp_path, os.O_RDONLY | os.O_DIRECTORY)
    try:
        listing = _NativeLister()(fd)
        files, kinds, dirs, undecodable = _scandir_truth(tmp_path)
        assert listing == (files, kinds, dirs, undecodable)
        assert undecodable == 2
        # listing the same fd again starts from its first entry
        assert _NativeLister()(fd)[0] == files
    finally:
        os.close(fd)


def test_open_list_lists_the_directory_it_opens_from_its_first_entry(tmp_path):
    sub = tmp_path / "sub"
    sub.mkdir()
    _every_kind(sub)
    parent = os.open(tmp_path, os.O_RDONLY | os.O_DIRECTORY)
    try:
        fd, listing = _NativeLister().open_list(parent, "sub", os.O_RDONLY | os.O_DIRECTORY)
        try:
            assert listing == _scandir_truth(sub)
            # the fd it hands back lists the same again (from its start)
            assert _NativeLister()(fd) == listing
        finally:
            os.close(fd)
    finally:
        os.close(parent)


def test_listing_of_a_directory_larger_than_the_buffer(tmp_path):
    names = {f"{i:05}-" + "n" * 60 for i in range(3000)}  # ~200 KB of names
    for name in names:
        (tmp_path / name).write_text("")
    for i in range(500):
        (tmp_path / f"d{i:04}").mkdir()
    lister = _NativeLister()
    fd, listing = lister.open_list(os.open(tmp_path.parent, os.O_RDONLY), tmp_path.name,
                                   os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW)
    os.close(fd)
    assert listing[0] == sorted(names)
    assert listing[2] == [f"d{i:04}/" for i in range(500)]


def test_open_list_refuses_a_symlink_and_leaks_nothing(tmp_path):
    (tmp_path / "real").mkdir()
    os.symlink("real", tmp_path / "link")
    parent = os.open(tmp_path, os.O_RDONLY | os.O_DIRECTORY)
    before = open_fds()
    try:
        with pytest.raises(OSError) as caught:
            _NativeLister().open_list(parent, "link", os.O_RDONLY | os.O_DIRECTORY |
                                      os.O_NOFOLLOW)
        assert caught.value.errno in (errno.ELOOP, errno.ENOTDIR)
        with pytest.raises(FileNotFoundError):
            _NativeLister().open_list(parent, "gone", os.O_RDONLY | os.O_DIRECTORY)
        assert not fds_opened_since(before)
    finally:
        os.close(parent)


def _scan(path: Path, names: list[str], needle: bytes | None, *, keep_links: bool = False,
          chunk: int = 1 << 20) -> list[tuple[int, int, int, int]]:
    scanner = NATIVE.file_scanner(needle, sniff=8000, keep_links=keep_links, chunk=chunk)
    blob = ("\0".join(names) + "\0").encode()
    fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY)
    rows: list[int] = []
    offset = 0
    try:
        while len(rows) < 4 * len(names):
            got, offset = scanner.scan(fd, blob, offset, len(names) - len(rows) // 4)
            rows += got
    finally:
        os.close(fd)
    out = [tuple(rows[i:i + 4]) for i in range(0, len(rows), 4)]
    for status, value, _size, _links in out:
        if status == ScanStatus.OPEN:
            os.fstat(value)  # a real, open fd: the caller's
            os.close(value)
    return out  # type: ignore[return-value]


def test_every_status(tmp_path):
    (tmp_path / "hit.txt").write_bytes(b"one\nneedle two\n")
    (tmp_path / "miss.txt").write_bytes(b"one\ntwo\n" * 100)
    (tmp_path / "bin.dat").write_bytes(b"needle\x00")
    (tmp_path / "late-nul.txt").write_bytes(b"x" * 9000 + b"\x00")  # past git's 8,000 bytes
    (tmp_path / "dir").mkdir()
    os.mkfifo(tmp_path / "fifo")
    (tmp_path / "linked.txt").write_bytes(b"needle\n")
    os.link(tmp_path / "linked.txt", tmp_path / "other-name")
    os.symlink("hit.txt", tmp_path / "link")
    (tmp_path / "empty").write_bytes(b"")
    names = ["hit.txt", "miss.txt", "bin.dat", "late-nul.txt", "dir", "fifo", "linked.txt",
             "link", "gone", "empty"]
    rows = _scan(tmp_path, names, b"needle")
    statuses = [r[0] for r in rows]
    assert statuses == [ScanStatus.OPEN, ScanStatus.ABSENT, ScanStatus.BINARY, ScanStatus.ABSENT, ScanStatus.SPECIAL,
                        ScanStatus.SPECIAL, ScanStatus.HARDLINK, ScanStatus.OPEN_ERROR, ScanStatus.OPEN_ERROR,
                        ScanStatus.ABSENT]
    assert rows[7][1] == errno.ELOOP and rows[8][1] == errno.ENOENT
    assert rows[1][2] == 800 and rows[6][3] == 2  # st_size, st_nlink
    assert _scan(tmp_path, ["linked.txt"], b"needle", keep_links=True)[0][0] == ScanStatus.OPEN
    # no needle: every readable regular file is the caller's to search
    assert [r[0] for r in _scan(tmp_path, ["hit.txt", "miss.txt", "bin.dat"], None)] == \
        [ScanStatus.OPEN, ScanStatus.OPEN, ScanStatus.BINARY]


@pytest.mark.parametrize("where", [0, 4095, 4096 - 3, 4096 - 6, 4096, 10_000, 40_000 - 6])
def test_a_needle_across_two_chunks_is_found(tmp_path, where):
    data = bytearray(b"a" * 40_000)
    data[where:where + 6] = b"needle"
    (tmp_path / "f").write_bytes(bytes(data))
    assert _scan(tmp_path, ["f"], b"needle", chunk=4096)[0][0] == ScanStatus.OPEN
    (tmp_path / "g").write_bytes(b"a" * 40_000 + b"needl")
    assert _scan(tmp_path, ["g"], b"needle", chunk=4096)[0][0] == ScanStatus.ABSENT


@pytest.mark.parametrize("size", [1, 4095, 4096, 4097, 8192, 8197, 12_288])
def test_a_needle_in_a_files_last_bytes_is_found_at_every_chunk_edge(tmp_path, size):
    """A file is read to the size it had when opened, whatever its size
    against the read chunk: its last bytes are searched, and a file without
    the needle is absent."""
    needle = b"needle"[:size]
    (tmp_path / "hit").write_bytes(b"a" * (size - len(needle)) + needle)
    (tmp_path / "miss").write_bytes(b"a" * size)
    rows = _scan(tmp_path, ["hit", "miss"], needle, chunk=4096)
    assert [r[0] for r in rows] == [ScanStatus.OPEN, ScanStatus.ABSENT]
    assert [r[2] for r in rows] == [size, size]


def test_the_binary_sniff_spans_chunks(tmp_path):
    (tmp_path / "early").write_bytes(b"a" * 5000 + b"\x00" + b"needle")  # chunk 2, byte 5000
    (tmp_path / "late").write_bytes(b"a" * 8000 + b"\x00" + b"needle")  # byte 8000: text
    rows = _scan(tmp_path, ["early", "late"], b"needle", chunk=4096)
    assert [r[0] for r in rows] == [ScanStatus.BINARY, ScanStatus.OPEN]


def test_files_past_the_budget_are_left_to_the_caller(tmp_path, monkeypatch):
    monkeypatch.setattr(FileScanner, "BUDGET", 10_000)
    (tmp_path / "big").write_bytes(b"x\n" * 6000)  # 12,000 bytes: past one call's budget
    (tmp_path / "a").write_bytes(b"y\n" * 3000)
    (tmp_path / "b").write_bytes(b"y\n" * 3000)
    scanner = NATIVE.file_scanner(b"needle", sniff=8000, keep_links=False, chunk=4096)
    blob = b"big\0a\0b\0"
    fd = os.open(tmp_path, os.O_RDONLY | os.O_DIRECTORY)
    try:
        rows, offset = scanner.scan(fd, blob, 0, 3)
        assert rows[0] == ScanStatus.OPEN  # unread: streamed by the caller between checkpoints
        os.close(rows[1])
        # 6,000 bytes of "a" read: still under the budget, so "b" is done in the same call,
        # which then stops (12,000 read)
        assert [rows[4], rows[8]] == [ScanStatus.ABSENT, ScanStatus.ABSENT] and offset == len(blob)
    finally:
        os.close(fd)


def test_newline_count_at_every_alignment():
    rng = random.Random(5)
    buf = bytes(rng.choice(b"\nab\x00\xff\x0a\x0b\x8a") for _ in range(3000))
    for start in range(40):
        for end in (start, start + 1, start + 7, start + 8, start + 9, 1000, 2999, 3000):
            assert NATIVE.count_newlines(buf, start, end) == buf.count(b"\n", start, end)
    assert lib.corral_count_newlines(b"\n" * 17, 17, 0, 17) == 17
    # past the buffer's end, or a negative start: refused, not read
    assert lib.corral_count_newlines(b"\n" * 17, 17, 0, 18) == -1 and ffi.errno == errno.EINVAL
    assert lib.corral_count_newlines(b"\n" * 17, 17, -1, 17) == -1 and ffi.errno == errno.EINVAL
    assert ffi is not None


def test_later_listers_start_in_the_room_a_large_directory_grew(tmp_path):
    """A lister made after one grew its room for a large directory starts
    in that room (one listing, not one per growth) and lists the large
    directory and then small ones exactly: nothing of an earlier, longer
    listing shows through, at either end of the room."""
    from corral.contained import _native_backend
    large, small, empty = tmp_path / "large", tmp_path / "small", tmp_path / "empty"
    for path in (large, small, empty):
        path.mkdir()
    for i in range(1500):
        (large / (f"{i:05}-" + "n" * 80)).write_text("")
    for i in range(300):
        (large / (f"d{i:04}-" + "m" * 80)).mkdir()
    _every_kind(small)
    fds = [os.open(p, os.O_RDONLY | os.O_DIRECTORY) for p in (large, small, empty, large)]
    try:
        assert _NativeLister()(fds[0]) == _scandir_truth(large)  # grows past the first room
        room = _native_backend._lister_room
        assert room.size > 1 << 16
        lister = _NativeLister()
        assert lister._lister._size == room.size
        for fd, path in zip(fds, (large, small, empty, large)):
            assert lister(fd) == _scandir_truth(path), path
            assert _NativeLister()(fd) == _scandir_truth(path), path
    finally:
        for fd in fds:
            os.close(fd)


# -- the search walk's step below (native/corral_search.h) ---------------------------------

_BENEATH = 0x08 | 0x04 | 0x02  # RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS
_DIR = os.O_RDONLY | os.O_DIRECTORY | os.O_NONBLOCK


def _ids(fd):
    info = os.fstat(fd)
    return info.st_dev, info.st_ino


def _below_lister():
    lister = NATIVE.dir_lister()
    if not lister.below:
        pytest.fail("no openat2 here: the step below is the Linux fast path's")
    return lister


@pytest.mark.own_backend  # the native lister's openat2 step, whatever the lane
def test_list_below_lists_a_directory_beneath_as_scandir_does(tmp_path):
    (tmp_path / "a" / "b").mkdir(parents=True)
    _every_kind(tmp_path / "a" / "b")
    before = open_fds()
    root = os.open(tmp_path, os.O_RDONLY | os.O_DIRECTORY)
    try:
        got = _below_lister().list_below(root, "a/b", _DIR, _BENEATH, None)
        assert isinstance(got, tuple), got
        fd, (files, kinds, dirs, undecodable) = got
        assert os.path.samestat(os.fstat(fd), os.stat(tmp_path / "a" / "b"))
        os.close(fd)
        assert (sorted(files), kinds, sorted(dirs), undecodable) == \
            _scandir_truth(tmp_path / "a" / "b")
    finally:
        os.close(root)
    assert not fds_opened_since(before)


@pytest.mark.own_backend  # the native lister's openat2 step, whatever the lane
def test_list_below_opens_nothing_through_a_link_or_out_of_the_root(tmp_path):
    from corral.contained._backend import NotListed
    root_dir = tmp_path / "root"
    (root_dir / "a").mkdir(parents=True)
    (tmp_path / "outside").mkdir()
    os.symlink("a", root_dir / "link")
    os.symlink(tmp_path / "outside", root_dir / "out")
    before = open_fds()
    root = os.open(root_dir, os.O_RDONLY | os.O_DIRECTORY)
    try:
        lister = _below_lister()
        for path in ("link", "out", "../outside", str(tmp_path / "outside"), "missing"):
            assert lister.list_below(root, path, _DIR, _BENEATH, None) is NotListed.NOT_OPENED, path
    finally:
        os.close(root)
    assert not fds_opened_since(before)


@pytest.mark.own_backend  # the native lister's openat2 step, whatever the lane
def test_list_below_opens_nothing_after_a_left_directory_moved_out(tmp_path):
    """The directory the walk left is checked first: moved out of the root,
    nothing is opened (the caller refuses); still beneath, the step is made."""
    from corral.contained._backend import LeftDirectory, NotListed
    from corral.contained._linux import proc_fds
    root_dir = tmp_path / "root"
    (root_dir / "a" / "c").mkdir(parents=True)
    (root_dir / "a" / "d").mkdir()
    root = os.open(root_dir, os.O_RDONLY | os.O_DIRECTORY)
    left = os.open(root_dir / "a" / "c", os.O_RDONLY | os.O_DIRECTORY)
    before = open_fds()
    try:
        lister = _below_lister()
        check = LeftDirectory(proc_fds(), left, "a/c", None, *_ids(root))
        got = lister.list_below(root, "a/d", _DIR, _BENEATH, check)
        assert isinstance(got, tuple), got
        os.close(got[0])
        # moved inside the root, to another depth: still beneath (the look
        # two levels up misses the root; the kernel's names show it beneath)
        os.rename(root_dir / "a" / "c", root_dir / "c")
        got = lister.list_below(root, "a/d", _DIR, _BENEATH, check)
        assert isinstance(got, tuple), got
        os.close(got[0])
        os.rename(root_dir / "c", tmp_path / "c")  # the left directory, out
        assert lister.list_below(root, "a/d", _DIR, _BENEATH, check) is NotListed.LEFT_NOT_SHOWN
        # out at the same depth, under an outside directory: not the root above it
        (tmp_path / "x").mkdir()
        os.rename(tmp_path / "c", tmp_path / "x" / "c")
        assert lister.list_below(root, "a/d", _DIR, _BENEATH, check) is NotListed.LEFT_NOT_SHOWN
    finally:
        os.close(left)
        os.close(root)
    assert not fds_opened_since(before)
