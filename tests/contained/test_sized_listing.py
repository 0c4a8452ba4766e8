"""``Handle.sized_listing``: a directory's names, kinds and file sizes.

Every backend config (``make_root``) against an oracle built here from
``os.scandir`` of the bytes path and ``os.lstat`` (so neither implementation
checks itself), and the native C call against the ``os`` fallback on the
same directory: files of several sizes, directories, symlinks (to a file, a
directory, outside, dangling), a FIFO, names that are not UTF-8, an empty
directory, directories larger than the first buffers (by names and by
entry count), an entry removed before its stat, a file whose stat fails.
"""

from __future__ import annotations

import errno
import os
import stat
import threading

import pytest

from corral.contained import OsBackend, SizedListing, backend_by_name
from corral.contained import _listing
from corral.contained import _native_backend as _sized  # the native listing's buffers
from corral.testing.backends import Fault, FaultBackend

DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY


def _native():
    try:
        return backend_by_name("native")
    except OSError:
        return None


NATIVE = _native()
BAD_NAMES = [b"bad\xff", b"caf\xc3", b"\xed\xa0\x80surrogate", b"ok-\xc3\xa9"]


def oracle(path: str) -> list[tuple[str, str, int | None]]:
    """(name, kind, size) of each entry, sorted: what the listing must say."""
    out = []
    for entry in os.scandir(os.fsencode(path)):
        info = os.lstat(entry.path)
        mode = info.st_mode
        if stat.S_ISREG(mode):  # a file of several names: no size (its other names')
            size = info.st_size if info.st_nlink == 1 else None
            out.append((os.fsdecode(entry.name), "file", size))
            continue
        kind = "dir" if stat.S_ISDIR(mode) else "symlink" if stat.S_ISLNK(mode) else "other"
        out.append((os.fsdecode(entry.name), kind, None))
    return sorted(out)


def populate(base) -> str:
    """A directory with one of each kind of entry; its path."""
    path = os.path.join(base, "mixed")
    os.mkdir(path)
    outside = os.path.join(base, "outside.txt")
    with open(outside, "w") as f:
        f.write("outside")
    for i, size in enumerate((0, 1, 4096, 70000)):
        with open(os.path.join(path, f"file{i}.txt"), "wb") as f:
            f.write(b"x" * size)
    os.mkdir(os.path.join(path, "sub"))
    os.mkdir(os.path.join(path, "sub", "inner"))
    os.symlink("file1.txt", os.path.join(path, "to_file"))
    os.symlink("sub", os.path.join(path, "to_dir"))
    os.symlink(outside, os.path.join(path, "to_outside"))
    os.symlink("../outside.txt", os.path.join(path, "to_outside_rel"))
    os.symlink("missing", os.path.join(path, "dangling"))
    os.mkfifo(os.path.join(path, "pipe"))
    raw = os.fsencode(path)
    for name in BAD_NAMES:
        with open(raw + b"/" + name, "wb") as f:
            f.write(name)
    os.mkdir(raw + b"/dir\xfe")
    os.symlink(b"bad\xff", raw + b"/link\xfd")
    os.link(os.path.join(path, "file2.txt"), os.path.join(path, "hardlink"))
    return path


def listed(root, rel: str) -> list[tuple[str, str, int | None]]:
    with root.open_handle(rel, DIR_FLAGS) as handle:
        return sorted(handle.sized_listing().records())


def test_every_kind_of_entry_as_the_oracle_says(tmp_path, make_root):
    path = populate(str(tmp_path))
    expected = oracle(path)
    names = {name for name, _, _ in expected}
    assert {os.fsdecode(n) for n in BAD_NAMES} <= names  # every name kept, as os.fsdecode
    assert ("pipe", "other", None) in expected and ("to_outside", "symlink", None) in expected
    assert ("file3.txt", "file", 70000) in expected and ("sub", "dir", None) in expected
    root = make_root(tmp_path)
    assert listed(root, "mixed") == expected


def test_the_codes_and_their_kinds(tmp_path, make_root):
    path = populate(str(tmp_path))
    root = make_root(tmp_path)
    with root.open_handle("mixed", DIR_FLAGS) as handle:
        listing = handle.sized_listing()
    assert isinstance(listing, SizedListing) and len(listing) == len(listing.codes)
    codes = dict(zip(listing.names, listing.codes))
    assert codes["file0.txt"] == 0 and codes["file3.txt"] == 70000
    assert codes["file2.txt"] == codes["hardlink"] == SizedListing.FILE  # two names: no size
    assert codes["sub"] == SizedListing.DIR and codes["dangling"] == SizedListing.SYMLINK
    assert codes["pipe"] == SizedListing.OTHER
    assert SizedListing.KINDS == {SizedListing.DIR: "dir", SizedListing.SYMLINK: "symlink",
                                  SizedListing.OTHER: "other", SizedListing.FILE: "file"}
    assert sorted(listing.names) == [name for name, _, _ in oracle(path)]


@pytest.mark.skipif(NATIVE is None, reason="the native module is not built on this install")
def test_native_and_os_give_the_same_listing(tmp_path):
    path = populate(str(tmp_path))
    fd = os.open(path, DIR_FLAGS)
    try:
        native = _listing.list_sized(NATIVE, fd)
        plain = _listing.list_sized(OsBackend(), fd)
        again = SizedListing(*NATIVE.list_sized(fd))  # from the start, wherever the fd was
    finally:
        os.close(fd)
    assert native.records() == again.records()
    assert sorted(native.records()) == sorted(plain.records()) == oracle(path)


def test_an_empty_directory(tmp_path, make_root):
    (tmp_path / "empty").mkdir()
    with make_root(tmp_path).open_handle("empty", DIR_FLAGS) as handle:
        listing = handle.sized_listing()
    assert listing.names == [] and listing.codes == [] and listing.records() == []


@pytest.mark.parametrize("count, width", [(3000, 40), (2500, 1)],
                         ids=["more-names-than-the-buffer", "more-entries-than-the-codes"])
def test_a_directory_larger_than_the_first_buffers(tmp_path, make_root, count, width):
    big = tmp_path / "big"
    big.mkdir()
    for i in range(count):
        name = f"{i:x}".rjust(width, "n")
        with open(big / name, "wb") as f:
            f.write(b"y" * (i % 13))
    if width > 1:
        assert count * (width + 1) > _sized._SIZED_FIRST  # the names overflow the first buffer
    else:
        assert count > _sized._SIZED_FIRST // 16 and count * 5 < _sized._SIZED_FIRST  # the codes do
    root = make_root(tmp_path)
    assert listed(root, "big") == oracle(str(big))
    assert listed(root, "big") == oracle(str(big))  # the grown buffers listed again


def test_a_grown_buffer_past_the_keep_limit_is_not_kept(tmp_path, make_root, monkeypatch):
    monkeypatch.setattr(_sized, "_SIZED_KEEP", _sized._SIZED_FIRST)  # any growth is past it
    big = tmp_path / "big"
    big.mkdir()
    for i in range(2000):
        (big / f"entry-{i:05}.txt").write_bytes(b"z" * (i % 5))
    root = make_root(tmp_path)
    state: dict[str, object] = {}

    def in_a_new_thread() -> None:  # its own buffers, from the first size
        state["result"] = listed(root, "big")
        state["size"] = _sized._sized_buffers.size

    worker = threading.Thread(target=in_a_new_thread)
    worker.start()
    worker.join()
    assert state["result"] == oracle(str(big))
    # the native path grew its buffers for this call only; the os path has none
    assert state["size"] == (_sized._SIZED_FIRST if make_root.backend_name == "native" else 0)


def test_buffers_are_per_thread(tmp_path, make_root):
    """Two threads listing different directories at once (cffi releases the
    GIL) each get their own directory's entries."""
    for name, count in (("one", 300), ("two", 500)):
        (tmp_path / name).mkdir()
        for i in range(count):
            (tmp_path / name / f"{name}-{i}").write_bytes(b"q" * (i % 3))
    expected = {name: oracle(str(tmp_path / name)) for name in ("one", "two")}
    root = make_root(tmp_path)
    wrong: list[str] = []

    def lister(name: str) -> None:
        with root.open_handle(name, DIR_FLAGS) as handle:
            for _ in range(200):
                if sorted(handle.sized_listing().records()) != expected[name]:
                    wrong.append(name)

    threads = [threading.Thread(target=lister, args=(name,)) for name in ("one", "two")]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert wrong == []


def test_an_entry_removed_before_its_stat_is_left_out(tmp_path):
    """The fallback path's ENOENT (the C's is the same rule): a file whose
    lstat says it is gone is not listed; one whose lstat fails otherwise is
    listed as a file without a size."""
    path = populate(str(tmp_path))
    backend = FaultBackend(OsBackend(), Fault("lstat_at", errno.ENOENT, name="file1.txt"),
                           Fault("lstat_at", errno.EACCES, name="file2.txt"))
    fd = os.open(path, DIR_FLAGS)
    try:
        records = sorted(_listing.list_sized(backend, fd).records())
    finally:
        os.close(fd)
    expected = [r for r in oracle(path) if r[0] != "file1.txt"]
    expected = [(n, k, None) if n == "file2.txt" else (n, k, s) for n, k, s in expected]
    assert records == expected
    assert [f.fired for f in backend.faults] == [1, 1]


@pytest.mark.skipif(NATIVE is None, reason="the native module is not built on this install")
def test_native_files_removed_while_listing(tmp_path):
    """Files removed and made again while the C lists them: every entry
    listed is one that existed, a file always with its size (a file gone
    before its fstatat is left out, never shown without one)."""
    path = tmp_path / "churn"
    path.mkdir()
    names = [f"churn-{i:03}" for i in range(200)]
    for name in names:
        (path / name).write_bytes(b"abc")
    stop = threading.Event()

    def churn() -> None:
        while not stop.is_set():
            for name in names:
                try:
                    os.unlink(path / name)
                except FileNotFoundError:
                    pass
                (path / name).write_bytes(b"abc")

    worker = threading.Thread(target=churn)
    worker.start()
    fd = os.open(path, DIR_FLAGS)
    try:
        seen = [_listing.list_sized(NATIVE, fd) for _ in range(200)]
    finally:
        stop.set()
        worker.join()
        os.close(fd)
    for listing in seen:
        assert set(listing.names) <= set(names)
        assert set(listing.codes) <= {0, 3}  # the size during the write, or after it


def test_a_closed_handle_and_a_file(tmp_path, make_root):
    (tmp_path / "f.txt").write_text("x")
    (tmp_path / "d").mkdir()
    root = make_root(tmp_path)
    handle = root.open_handle("d", DIR_FLAGS)
    handle.close()
    with pytest.raises(OSError) as info:
        handle.sized_listing()
    assert info.value.errno == errno.EBADF and info.value.filename == "d"
    with root.open_handle("f.txt") as handle:
        with pytest.raises(NotADirectoryError) as info:
            handle.sized_listing()
    assert info.value.filename == "f.txt"


def test_under_pyfakefs_through_the_fake_backend():
    from pyfakefs.fake_filesystem_unittest import Patcher

    from corral.contained import Root
    from corral.testing.backends import FakeFsBackend

    with Patcher() as patcher:
        patcher.fs.create_file("/fake/work/a.txt", contents="hello")
        patcher.fs.create_dir("/fake/work/sub")
        patcher.fs.create_symlink("/fake/work/link", "a.txt")
        with Root("/fake/work", backend=FakeFsBackend()) as root:
            assert listed(root, ".") == [("a.txt", "file", 5), ("link", "symlink", None),
                                         ("sub", "dir", None)]
