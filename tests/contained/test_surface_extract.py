"""``Root.extract`` on benign archives, against the standard library as the
oracle: the same archive through ``tarfile.extractall(filter="data")`` (or
``zipfile.extractall``) into a second directory must give the same tree
(kinds, modes, content, link text, mtimes, which names share an inode).
Every backend config; every way of passing an archive.  Hostile archives
are in tests/security/test_extract_hostile.py.
"""

from __future__ import annotations

import errno
import io
import os
import stat
import tarfile
import zipfile
from pathlib import Path
from typing import Any

import pytest

from corral.contained import Extraction, Root, backend_by_name

BIG = os.urandom(3 << 20)  # several chunks of the copy loop


def benign_members() -> list[tuple]:
    """(kind, name, payload, mode, mtime)"""
    return [
        ("dir", ".", None, 0o755, 1_500_000_000),
        ("dir", "src", None, 0o700, 1_500_000_001),
        ("file", "src/app.py", b"print('hi')\n", 0o644, 1_500_000_002),
        ("file", "src/run.sh", b"#!/bin/sh\necho run\n", 0o775, 1_500_000_003),
        ("file", "src/empty", b"", 0o600, 1_500_000_004),
        ("file", "src/big.bin", BIG, 0o444, 1_500_000_005),
        ("dir", "src/pkg/deep/er", None, 0o755, 1_500_000_006),  # parents made on the way
        ("file", "src/pkg/deep/er/m.py", b"x = 1\n", 0o664, 1_500_000_007),
        ("symlink", "src/current", "pkg/deep", 0o777, 1_500_000_008),
        ("symlink", "top-link", "src/app.py", 0o777, 1_500_000_009),
        ("hardlink", "src/app-again.py", "src/app.py", 0o644, 1_500_000_010),
        ("file", "caf\u00e9/na\u00efve.txt", "unicode \u2713\n".encode(), 0o644, 1_500_000_011),
        ("file", "src/run.sh", b"#!/bin/sh\necho second version\n", 0o750, 1_500_000_012),
        ("symlink", "dangling", "src/not-yet", 0o777, 1_500_000_013),
        ("file", "src/not-yet", b"now there\n", 0o644, 1_500_000_014),
        ("file", "./dotted/./name", b"dots\n", 0o644, 1_500_000_015),
    ]


def tar_of(members: list[tuple], fmt: int = tarfile.PAX_FORMAT, mode: str = "w") -> bytes:
    buf = io.BytesIO()
    types = {"dir": tarfile.DIRTYPE, "symlink": tarfile.SYMTYPE, "hardlink": tarfile.LNKTYPE}
    with tarfile.open(fileobj=buf, mode=mode, format=fmt) as tf:
        for kind, name, payload, mode_bits, mtime in members:
            info = tarfile.TarInfo(name)
            info.mode, info.mtime = mode_bits, mtime
            info.uid, info.gid, info.uname, info.gname = 4321, 4321, "someone", "somegroup"
            if kind == "file":
                info.size = len(payload)
                tf.addfile(info, io.BytesIO(payload))
                continue
            info.type = types[kind]
            if payload is not None:
                info.linkname = payload
            tf.addfile(info)
    return buf.getvalue()


def tree(top: Path, dated: set[str] | None = None) -> dict[str, tuple]:
    """Everything below ``top``: kind, mode, content or link text, mtime,
    and a canonical inode label (the first name with that inode).  A
    directory's mtime only if it is in ``dated`` (one made on the way has
    the time it was made)."""
    out: dict[str, tuple] = {}
    labels: dict[tuple[int, int], str] = {}
    for dirpath, dirnames, filenames in os.walk(top):
        for name in sorted(dirnames + filenames):
            full = os.path.join(dirpath, name)
            rel = os.path.relpath(full, top)
            info = os.lstat(full)
            label = labels.setdefault((info.st_dev, info.st_ino), rel)
            if stat.S_ISLNK(info.st_mode):
                out[rel] = ("link", os.readlink(full), label)
            elif stat.S_ISDIR(info.st_mode):
                mtime = info.st_mtime_ns if dated is None or rel in dated else None
                out[rel] = ("dir", stat.S_IMODE(info.st_mode), mtime)
            else:
                with open(full, "rb") as f:
                    out[rel] = ("file", stat.S_IMODE(info.st_mode), f.read(), info.st_mtime_ns,
                                label)
    return out


def _oracle_tar(data: bytes, dest: Path) -> None:
    with tarfile.open(fileobj=io.BytesIO(data)) as tf:
        tf.extractall(dest, filter="data")


@pytest.fixture
def dirs(scratch):
    (scratch / "ours").mkdir()
    (scratch / "theirs").mkdir()
    return scratch / "ours", scratch / "theirs"


def test_tar_lands_as_tarfile_data_filter_puts_it(make_root, dirs):
    ours, theirs = dirs
    data = tar_of(benign_members())
    result = make_root(ours).extract(io.BytesIO(data))
    _oracle_tar(data, theirs)
    assert result.ok and not result.stopped
    assert result.extracted == [m[1] for m in benign_members()]
    dated = {os.path.normpath(m[1]) for m in benign_members() if m[0] == "dir"}
    assert tree(ours, dated) == tree(theirs, dated)
    assert (ours / "src/big.bin").read_bytes() == BIG


def test_a_member_replaces_never_writes_through(make_root, dirs):
    """Where tarfile opens an existing file for writing (so a hard link's
    other names see the new content), corral replaces it: the other names
    keep theirs, as Root.write_bytes does (THREATS.md row 11)."""
    ours, _ = dirs
    members = [("file", "a", b"first\n", 0o644, 1), ("hardlink", "b", "a", 0o644, 1),
               ("file", "a", b"second\n", 0o644, 2)]
    assert make_root(ours).extract(io.BytesIO(tar_of(members))).ok
    assert (ours / "a").read_bytes() == b"second\n" and (ours / "b").read_bytes() == b"first\n"
    assert os.stat(ours / "b").st_nlink == 1


@pytest.mark.parametrize("how", ["tarfile", "path", "pathlike", "fileobj", "gz", "bz2", "xz",
                                 "stream"])
def test_every_way_of_passing_a_tar(make_root, dirs, how):
    ours, theirs = dirs
    members = benign_members()[:5]
    plain = tar_of(members)
    packed = tar_of(members, mode=f"w:{how}") if how in ("gz", "bz2", "xz") else plain
    archive_path = ours.parent / f"a.{how}"
    archive_path.write_bytes(packed)
    root = make_root(ours)
    if how == "tarfile":
        with tarfile.open(archive_path) as tf:
            result = root.extract(tf)
    elif how == "stream":
        with open(archive_path, "rb") as f, tarfile.open(fileobj=f, mode="r|") as tf:
            result = root.extract(tf)
    elif how == "fileobj":
        with open(archive_path, "rb") as f:
            result = root.extract(f)
    elif how == "pathlike":
        result = root.extract(archive_path)
    else:
        result = root.extract(str(archive_path))
    _oracle_tar(plain, theirs)
    assert result.ok, result.refused
    dated = {os.path.normpath(m[1]) for m in members if m[0] == "dir"}
    assert tree(ours, dated) == tree(theirs, dated)


def zip_of(members: list[tuple[str, bytes | None, int | None]]) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        for name, payload, mode in members:
            info = zipfile.ZipInfo(name)
            if mode is not None:
                info.create_system = 3
                info.external_attr = mode << 16
            else:
                info.create_system = 0  # no Unix mode at all (made on another system)
            zf.writestr(info, payload or b"")
    return buf.getvalue()


@pytest.mark.filterwarnings("ignore:Duplicate name")
def test_zip_lands_as_zipfile_puts_it(make_root, dirs):
    ours, theirs = dirs
    members = [("src/", None, stat.S_IFDIR | 0o755), ("src/a.txt", b"a\n", None),
               ("src/b/c.bin", BIG[:100_000], None), ("top.txt", b"top\n", None),
               ("src/a.txt", b"replaced\n", None)]
    data = zip_of(members)
    previous = os.umask(0o022)
    try:
        result = make_root(ours).extract(zipfile.ZipFile(io.BytesIO(data)))
        with zipfile.ZipFile(io.BytesIO(data)) as zf:
            zf.extractall(theirs)
    finally:
        os.umask(previous)
    assert result.ok and result.extracted == [m[0] for m in members]

    def no_times(t: dict[str, tuple]) -> dict[str, tuple]:  # zipfile sets no times
        return {k: v[:3] if v[0] == "file" else v[:2] for k, v in t.items()}
    assert no_times(tree(ours)) == no_times(tree(theirs))


def test_zip_unix_modes_and_symlinks(make_root, scratch):
    data = zip_of([("run.sh", b"#!/bin/sh\n", stat.S_IFREG | 0o4775),
                   ("ro.txt", b"ro\n", stat.S_IFREG | 0o444),
                   ("link", b"run.sh", stat.S_IFLNK | 0o777)])
    result = make_root(scratch).extract(io.BytesIO(data))
    assert result.ok
    assert stat.S_IMODE(os.stat(scratch / "run.sh").st_mode) == 0o755
    assert stat.S_IMODE(os.stat(scratch / "ro.txt").st_mode) == 0o644
    assert os.readlink(scratch / "link") == "run.sh"


def test_not_an_archive(make_root, scratch):
    root = make_root(scratch)
    with pytest.raises(TypeError):
        root.extract(12345)  # type: ignore[arg-type]
    (scratch.parent / "garbage").write_bytes(b"this is no archive" * 100)
    with pytest.raises(tarfile.ReadError):
        root.extract(scratch.parent / "garbage")
    assert os.listdir(scratch) == []



def test_a_hard_link_to_an_unreadable_file_in_the_tree_is_made(scratch):
    """A hard-link member naming a file that was in the tree (EACCES to open
    it, injected: CI runs as root) adds the name and leaves the file alone:
    only files the extraction made get the member's mode, so it is never
    opened."""
    (scratch / "locked").write_bytes(b"theirs")
    os.chmod(scratch / "locked", 0o600)
    locked = {"locked", "locked-again"}
    opened: list[str] = []

    class Unreadable:
        def __init__(self) -> None:
            self._inner = backend_by_name("os")

        def __getattr__(self, attr: str) -> Any:
            return getattr(self._inner, attr)

        def open_at(self, dir_fd: int, name: str, flags: int, mode: int = 0o666) -> int:
            if name.rsplit("/", 1)[-1] in locked:
                opened.append(name)
                raise PermissionError(errno.EACCES, os.strerror(errno.EACCES), name)
            return self._inner.open_at(dir_fd, name, flags, mode)

        def openat2(self, dir_fd: int, path: str, flags: int, mode: int, resolve: int) -> int:
            if path.rsplit("/", 1)[-1] in locked:
                opened.append(path)
                raise PermissionError(errno.EACCES, os.strerror(errno.EACCES), path)
            return self._inner.openat2(dir_fd, path, flags, mode, resolve)

    root = Root(scratch, backend=Unreadable(), fast_path=False)  # type: ignore[arg-type]
    result = root.extract(io.BytesIO(tar_of([("hardlink", "locked-again", "locked", 0o755, 1)])))
    assert result.ok and result.extracted == ["locked-again"]
    assert os.stat(scratch / "locked-again").st_ino == os.stat(scratch / "locked").st_ino
    assert stat.S_IMODE(os.stat(scratch / "locked").st_mode) == 0o600
    assert opened == []

def test_a_full_disk_is_raised_not_refused(scratch):
    """ENOSPC is the environment's, not the archive's: extraction stops with
    the error, and the member's temporary file is gone."""

    class FullDisk:
        def __init__(self) -> None:
            self._inner = backend_by_name("os")

        def __getattr__(self, attr: str) -> Any:
            return getattr(self._inner, attr)

    backend = FullDisk()
    root = Root(scratch, backend=backend, fast_path=False)  # type: ignore[arg-type]
    real_write = os.write

    def full(fd: int, data: Any) -> int:
        if len(data) > 10:
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        return real_write(fd, data)

    data = tar_of([("file", "small", b"ok", 0o644, 1), ("file", "large", b"x" * 100, 0o644, 1),
                   ("file", "after", b"never", 0o644, 1)])
    os_write, os.write = os.write, full
    try:
        with pytest.raises(OSError) as info:
            root.extract(io.BytesIO(data))
    finally:
        os.write = os_write
    assert info.value.errno == errno.ENOSPC
    assert sorted(os.listdir(scratch)) == ["small"]


def test_extraction_result_shape(make_root, scratch):
    result = make_root(scratch).extract(io.BytesIO(tar_of(benign_members()[:3])))
    assert isinstance(result, Extraction)
    assert result.ok and result.refused == [] and result.stopped is False


def test_extract_into_a_directory_beneath(make_root, scratch):
    """``path`` makes that directory the extraction root: what would stay
    inside the Root but leave the directory is refused too."""
    (scratch / "sub").mkdir()
    (scratch / "sibling").mkdir()
    members = [("file", "a", b"a", 0o644, 1), ("file", "../sibling/x", b"x", 0o644, 1),
               ("symlink", "up", "../sibling", 0o777, 1), ("file", "d/e", b"e", 0o644, 1)]
    result = make_root(scratch).extract(io.BytesIO(tar_of(members)), "sub")
    assert result.extracted == ["a", "d/e"]
    assert [(r.name, r.reason.value) for r in result.refused] == [("../sibling/x", "outside"),
                                                                  ("up", "link_outside")]
    assert sorted(os.listdir(scratch / "sub")) == ["a", "d"] and os.listdir(scratch / "sibling") \
        == []


def test_open_root(make_root, scratch):
    (scratch / "sub" / "deep").mkdir(parents=True)
    (scratch / "sub" / "f").write_bytes(b"f")
    os.symlink("sub", scratch / "link")
    os.symlink("..", scratch / "sub" / "up")
    parent = make_root(scratch)
    sub = parent.open_root("link")  # in-root links followed to the directory
    try:
        assert sorted(sub.listdir()) == ["deep", "f", "up"]
        assert sub.info()["fast_path"] == parent.info()["fast_path"]
        assert sub.backend is parent.backend and sub.follow_symlinks == parent.follow_symlinks
        with pytest.raises(OSError) as info:
            sub.open("up/f")  # the sub-root's own top is now the limit
        assert info.value.errno == errno.EXDEV
        parent.close()  # independent fds
        assert sub.read_bytes("f") == b"f"
    finally:
        sub.close()
    other = make_root(scratch)
    with pytest.raises(NotADirectoryError):
        other.open_root("sub/f")
    with pytest.raises(OSError) as info:
        other.open_root("..")
    assert info.value.errno == errno.EXDEV
    strict = make_root(scratch, follow_symlinks=False)
    assert strict.open_root("sub").follow_symlinks is False
