"""CPython's concrete-path tests (test_pathlib), in their spirit, written
anew for RootPath on the same shape of fixture tree (helpers.pathview), with
the expected answers spelled out; every backend config.  Where a test of
CPython's meets a deliberate difference (docs/rootpath.md) the test here
asserts the difference instead."""

from __future__ import annotations

import errno
import os
import stat
import sys

import pytest
from .helpers.pathview import build, ours

from corral.contained import EscapeError, RootPath


@pytest.fixture
def P(make_root, scratch):  # noqa: N802 (CPython's name for the base path)
    build(scratch)
    root = make_root(scratch)
    return root.joinpath()


# -- listing ------------------------------------------------------------------------
def test_iterdir(P):
    expected = ["brokenLink", "brokenLinkLoop", "dirA", "dirB", "dirC", "dirE", "fileA",
                "linkA", "linkB"]
    assert ours(P.iterdir()) == expected
    assert all(isinstance(p, RootPath) for p in P.iterdir())


def test_iterdir_symlink(P):
    assert ours((P / "linkB").iterdir()) == ["linkB/fileB", "linkB/linkD"]


def test_iterdir_nodir(P):
    with pytest.raises(OSError) as caught:
        (P / "foo").iterdir()
    assert caught.value.errno == errno.ENOENT
    with pytest.raises(OSError) as caught:
        (P / "fileA").iterdir()
    assert caught.value.errno == errno.ENOTDIR


@pytest.mark.parametrize("pattern,expected", [
    ("fileA", ["fileA"]),
    ("fileB", []),
    ("dir*/file*", ["dirB/fileB", "dirC/fileC"]),
    ("*A", ["dirA", "fileA", "linkA"]),
    ("*B/*", ["dirB/fileB", "dirB/linkD", "linkB/fileB", "linkB/linkD"]),
    ("*/fileB", ["dirB/fileB", "linkB/fileB"]),
    ("brokenLink", ["brokenLink"]),
    ("*/", ["dirA", "dirB", "dirC", "dirE", "linkB"]),
    ("dirC/dirD/", ["dirC/dirD"]),
])
def test_glob_common(P, pattern, expected):
    if pattern == "brokenLink" and sys.version_info < (3, 13):
        expected = []  # a literal matched by exists() before 3.13, by lexists() since
    assert ours(P.glob(pattern)) == expected


def test_glob_dotdot(P):
    assert ours(P.glob("..")) == []  # the root's parent is outside: absent
    assert ours(P.glob("../xyzzy")) == []
    assert ours(P.glob("dirA/../file*")) == ["dirA/../fileA"]
    assert ours(P.glob("dirA/../file*/..")) == []
    assert ours(P.glob("xyzzy/..")) == []
    assert ours((P / "dirC").glob("../dir*/file*")) == ["dirC/../dirB/fileB",
                                                        "dirC/../dirC/fileC"]


def test_glob_case_sensitive(P):
    assert ours(P.glob("FILEa")) == []
    assert ours(P.glob("FILEa", case_sensitive=False)) == ["fileA"]
    assert ours(P.glob("dirb/FILE*", case_sensitive=False)) == ["dirB/fileB"]


def test_glob_empty_and_absolute_patterns(P):
    with pytest.raises(ValueError):
        list(P.glob(""))
    with pytest.raises(NotImplementedError):
        list(P.glob("/"))
    with pytest.raises(NotImplementedError):
        list(P.rglob("/x"))


@pytest.mark.parametrize("pattern,expected", [
    ("fileA", ["fileA"]),
    ("fileB", ["dirB/fileB"]),
    ("*/fileA", []),
    # "*" follows a link to a directory (pathlib's rule), "**" does not
    ("*/fileB", ["dirA/linkC/fileB", "dirB/fileB", "dirB/linkD/fileB", "linkB/fileB"]),
    ("file*", ["dirB/fileB", "dirC/dirD/fileD", "dirC/fileC", "fileA"]),
    ("*/", ["dirA", "dirB", "dirC", "dirC/dirD", "dirE", "linkB"]),
])
def test_rglob_common(P, pattern, expected):
    if pattern == "*/":  # the "**" part lists links as entries but descends real dirs only
        expected = expected + ["dirA/linkC", "dirB/linkD"]
    assert ours(P.rglob(pattern)) == sorted(expected)


def test_rglob_below(P):
    assert ours((P / "dirC").rglob("file*")) == ["dirC/dirD/fileD", "dirC/fileC"]
    assert ours((P / "dirC").rglob("*")) == ["dirC/dirD", "dirC/dirD/fileD", "dirC/fileC",
                                             "dirC/novel.txt"]
    assert ours((P / "dirC").rglob("*/*")) == ["dirC/dirD/fileD"]
    assert ours((P / "dirC").rglob("*.txt")) == ["dirC/novel.txt"]
    assert ours((P / "dirC").rglob("**/")) == ["dirC", "dirC/dirD"]


def test_rglob_symlink_loop(P):
    found = ours(P.rglob("*"))
    assert "dirB/linkD" in found and not any(p.startswith("dirB/linkD/") for p in found)
    assert len(found) == len(set(found))


def test_rglob_recurse_symlinks(P):
    found = ours((P / "dirC").rglob("*", recurse_symlinks=True))
    assert found == ours((P / "dirC").rglob("*"))
    through = ours((P / "dirA").rglob("file*", recurse_symlinks=True))
    assert through[0] == "dirA/linkC/fileB"


def test_glob_above_recursion_limit(make_root, scratch):
    depth = 60
    base = scratch / "deep"
    path = base.joinpath(*(["d"] * depth))
    path.mkdir(parents=True)
    root = make_root(scratch)
    found = list((root / "deep").rglob("*"))
    assert len(found) == depth


# -- queries ---------------------------------------------------------------------------
def test_exists(P):
    for name, exists in [("", True), ("dirA", True), ("dirA/", True), ("fileA", True),
                         ("linkA", True), ("linkB", True), ("brokenLink", False),
                         ("foo", False), ("fileA/bah", False), ("brokenLinkLoop", False),
                         ("linkA/bah", False)]:
        assert (P / name).exists() is exists, name
    assert (P / "brokenLink").exists(follow_symlinks=False)
    assert (P / "brokenLinkLoop").exists(follow_symlinks=False)


def test_is_dir_is_file_is_symlink(P):
    table = {  # name: (is_dir, is_file, is_symlink)
        "dirA": (True, False, False), "fileA": (False, True, False),
        "linkA": (False, True, True), "linkB": (True, False, True),
        "brokenLink": (False, False, True), "brokenLinkLoop": (False, False, True),
        "non-existing": (False, False, False), "fileA/bah": (False, False, False),
    }
    for name, want in table.items():
        p = P / name
        assert (p.is_dir(), p.is_file(), p.is_symlink()) == want, name
    assert not (P / "linkB").is_dir(follow_symlinks=False)
    assert not (P / "linkA").is_file(follow_symlinks=False)


def test_stat_and_lstat(P):
    st_a = (P / "fileA").stat()
    assert st_a.st_size == len(b"this is file A\n") and stat.S_ISREG(st_a.st_mode)
    assert (P / "linkA").stat() == st_a
    assert stat.S_ISLNK((P / "linkA").lstat().st_mode)
    assert (P / "linkA").stat(follow_symlinks=False) == (P / "linkA").lstat()
    assert (P / "fileA").lstat() == st_a
    with pytest.raises(FileNotFoundError):
        (P / "brokenLink").stat()
    with pytest.raises(OSError) as caught:
        (P / "brokenLinkLoop").stat()
    assert caught.value.errno == errno.ELOOP


def test_samefile(P):
    assert (P / "fileA").samefile(P / "linkA")
    assert not (P / "fileA").samefile(P / "dirB/fileB")
    with pytest.raises(FileNotFoundError):
        (P / "fileA").samefile(P / "missing")
    with pytest.raises(NotImplementedError):
        (P / "fileA").samefile("fileA")


def test_readlink(P):
    assert str((P / "linkA").readlink()) == "fileA"
    assert str((P / "brokenLink").readlink()) == "non-existing"
    assert str((P / "dirA/linkC").readlink()) == "../dirB"
    with pytest.raises(OSError) as caught:
        (P / "fileA").readlink()
    assert caught.value.errno == errno.EINVAL
    with pytest.raises(FileNotFoundError):
        (P / "missing").readlink()


# -- resolve ---------------------------------------------------------------------------
def test_resolve_common(P):
    assert (P / "foo").resolve() == P / "foo"
    assert (P / "dirB/fileB").resolve() == P / "dirB/fileB"
    assert (P / "linkA").resolve() == P / "fileA"
    assert (P / "dirA/linkC/fileB").resolve() == P / "dirB/fileB"
    assert (P / "dirB/linkD/linkD/fileB").resolve() == P / "dirB/fileB"
    assert (P / "dirA/linkC/fileB/foo/in/spam").resolve() == P / "dirB/fileB/foo/in/spam"
    assert (P / "dirA/linkC/../foo/in/spam").resolve() == P / "foo/in/spam"
    assert (P / "dirA/..").resolve() == P
    assert (P / ".").resolve() == P
    with pytest.raises(FileNotFoundError):
        (P / "foo").resolve(strict=True)
    with pytest.raises(FileNotFoundError):
        (P / "dirA/linkC/foo").resolve(strict=True)


def test_resolve_loops(P):
    assert (P / "brokenLinkLoop").resolve() == P / "brokenLinkLoop"
    with pytest.raises(OSError) as caught:
        (P / "brokenLinkLoop").resolve(strict=True)
    assert caught.value.errno == errno.ELOOP
    (P / "linkX").symlink_to("linkY")
    (P / "linkY").symlink_to("linkX/inside")
    assert (P / "linkX").resolve() == P / "linkX/inside"


def test_resolve_escapes(make_root, scratch):
    os.symlink("/etc", scratch / "abs")
    os.symlink("../..", scratch / "up")
    (scratch / "d").mkdir()
    root = make_root(scratch)
    assert (root / "abs").resolve() == root / "abs"  # leads out: kept, as absent
    assert (root / "abs/passwd").resolve() == root / "abs/passwd"
    assert (root / "up/x").resolve() == root / "up/x"
    assert (root / "d/../up").resolve() == root / "up"
    for strict_escape in ("abs", "up/x"):
        with pytest.raises(EscapeError):
            (root / strict_escape).resolve(strict=True)
    for spelled in ("..", "d/../..", "/etc"):
        with pytest.raises(EscapeError):
            (root / spelled).resolve()


# -- content ---------------------------------------------------------------------------
def test_open_common(P):
    with (P / "fileA").open("r") as f:
        assert f.read() == "this is file A\n"
    with (P / "fileA").open("rb") as f:
        assert f.read() == b"this is file A\n"
    with (P / "fileA").open("rb", buffering=0) as f:
        assert f.read().strip() == b"this is file A"


def test_read_write_bytes_and_text(P):
    p = P / "fileA"
    assert p.write_bytes(b"abcdefg") == 7 and p.read_bytes() == b"abcdefg"
    with pytest.raises(TypeError):
        p.write_bytes("somestr")  # type: ignore[arg-type]
    assert p.write_text("äbcdefg", encoding="latin-1") == 7
    assert p.read_bytes() == b"\xe4bcdefg"
    assert p.read_text(encoding="utf-8", errors="ignore") == "bcdefg"
    with pytest.raises(TypeError):
        p.write_text(b"somebytes")  # type: ignore[arg-type]
    p.write_text("abc\ndef", newline="\r\n")
    assert p.read_bytes() == b"abc\r\ndef"
    p.write_text("abc\ndef", newline="")
    assert p.read_bytes() == b"abc\ndef"
    p.write_bytes(b"abc\r\ndef\rghi\n")
    assert p.read_text(newline="") == "abc\r\ndef\rghi\n"
    assert p.read_text(newline="\r") == "abc\r\ndef\rghi\n"
    assert p.read_text() == "abc\ndef\nghi\n"
    memory = memoryview(b"\x00\x01\x02").cast("B")
    assert (P / "m").write_bytes(memory) == 3


# -- changes ------------------------------------------------------------------------------
def test_touch(make_root, scratch):
    root = make_root(scratch).joinpath()
    p = root / "newfileA"
    assert not p.exists()
    p.touch()
    assert p.exists()
    os.utime(scratch / "newfileA", (1, 2))
    p.touch()
    assert p.stat().st_mtime > 2
    with pytest.raises(FileExistsError):
        p.touch(exist_ok=False)
    old = os.umask(0)
    try:
        (root / "modefile").touch(0o640)
    finally:
        os.umask(old)
    assert stat.S_IMODE((root / "modefile").stat().st_mode) == 0o640
    with pytest.raises(FileNotFoundError):
        (root / "missing/x").touch()


def test_mkdir(make_root, scratch):
    root = make_root(scratch).joinpath()
    p = root / "newdirA"
    p.mkdir()
    assert p.is_dir()
    with pytest.raises(FileExistsError):
        p.mkdir()
    with pytest.raises(FileNotFoundError):
        (root / "newdirB/newdirC").mkdir()
    (root / "newdirB/newdirC").mkdir(parents=True)
    with pytest.raises(FileExistsError):
        (root / "newdirB/newdirC").mkdir(parents=True)
    (root / "newdirB/newdirC").mkdir(parents=True, exist_ok=True)
    (root / "newdirB").mkdir(exist_ok=True)
    (scratch / "afile").write_text("")
    with pytest.raises(FileExistsError):
        (root / "afile").mkdir(exist_ok=True)
    with pytest.raises(FileExistsError):
        (root / "afile").mkdir(parents=True, exist_ok=True)
    with pytest.raises(FileExistsError):
        root.mkdir()
    root.mkdir(exist_ok=True)
    root.mkdir(parents=True, exist_ok=True)
    (root / "a/b/../c").mkdir(parents=True)
    assert (scratch / "a/c").is_dir() and (scratch / "a/b").is_dir()


def test_symlink_to_and_hardlink_to(P):
    (P / "dirA/linkAA").symlink_to("../fileA")
    assert (P / "dirA/linkAA").read_text() == "this is file A\n"
    (P / "dirA/linkBB").symlink_to("../dirB", target_is_directory=True)
    assert ours((P / "dirA/linkBB").iterdir()) == ["dirA/linkBB/fileB", "dirA/linkBB/linkD"]
    with pytest.raises(FileExistsError):
        (P / "linkA").symlink_to("fileA")
    (P / "dirA/hardA").hardlink_to(P / "fileA")
    assert (P / "dirA/hardA").stat().st_nlink == 2
    with pytest.raises(FileExistsError):
        (P / "dirA/hardA").hardlink_to("fileA")


def test_rename_and_replace(P):
    p = P / "fileA"
    size = p.stat().st_size
    q = p.rename(P / "dirA/fileAA")
    assert q == P / "dirA/fileAA" and q.stat().st_size == size and not p.exists()
    r = q.rename("fileAAA")  # a str target: root-relative
    assert r == P / "fileAAA" and r.exists()
    (P / "other").write_text("x")
    s = r.replace(P / "other")
    assert s.read_text() == "this is file A\n"
    with pytest.raises(OSError):
        (P / "dirB").rename(P / "dirC")  # not empty


def test_unlink_and_rmdir(P):
    (P / "fileA").unlink()
    assert not (P / "fileA").exists()
    with pytest.raises(FileNotFoundError):
        (P / "fileA").unlink()
    (P / "fileA").unlink(missing_ok=True)
    (P / "linkB").unlink()  # the link, not what it leads to
    assert (P / "dirB").is_dir()
    with pytest.raises(OSError):
        (P / "dirB").unlink()
    (P / "dirE").rmdir()
    assert not (P / "dirE").exists()
    with pytest.raises(OSError) as caught:
        (P / "dirB").rmdir()
    assert caught.value.errno == errno.ENOTEMPTY
    with pytest.raises(NotADirectoryError):
        (P / "linkA").rmdir()


# -- walk ---------------------------------------------------------------------------------
def test_walk_topdown(P):
    rows = list((P / "dirC").walk())
    assert [str(r[0]) for r in rows] == ["dirC", "dirC/dirD"]
    assert sorted(rows[0][2]) == ["fileC", "novel.txt"] and rows[1][2] == ["fileD"]


def test_walk_bottom_up(P):
    seen = [str(p) for p, _, _ in (P / "dirC").walk(top_down=False)]
    assert seen == ["dirC/dirD", "dirC"]


def test_walk_links(P):
    row = next(iter((P / "dirB").walk()))
    assert row[1] == [] and sorted(row[2]) == ["fileB", "linkD"]
    row = next(iter((P / "dirA").walk(follow_symlinks=True)))
    assert row[1] == ["linkC"]
    rows = list((P / "linkB").walk())
    assert str(rows[0][0]) == "linkB" and sorted(rows[0][2]) == ["fileB", "linkD"]


def test_walk_errors(P):
    errors: list[OSError] = []
    assert list((P / "nope").walk(on_error=errors.append)) == []
    assert isinstance(errors[0], FileNotFoundError)
    assert list((P / "nope").walk()) == []


# -- copy and move (3.14) ------------------------------------------------------------------
def test_copy_file(P):
    target = (P / "fileA").copy(P / "copyA")
    assert target == P / "copyA" and target.read_text() == "this is file A\n"
    (P / "copyA").write_text("old")
    (P / "fileA").copy(P / "copyA")
    assert (P / "copyA").read_text() == "this is file A\n"
    with pytest.raises(IsADirectoryError):
        (P / "fileA").copy(P / "dirB")
    with pytest.raises(FileNotFoundError):
        (P / "missing").copy(P / "x")


def test_copy_symlinks(P):
    (P / "linkA").copy(P / "copyLink", follow_symlinks=False)
    assert (P / "copyLink").is_symlink() and str((P / "copyLink").readlink()) == "fileA"
    (P / "linkA").copy(P / "copyFollowed")
    assert not (P / "copyFollowed").is_symlink() and (P / "copyFollowed").is_file()
    (P / "brokenLink").copy(P / "copyBroken", follow_symlinks=False)
    assert str((P / "copyBroken").readlink()) == "non-existing"
    with pytest.raises(FileNotFoundError):
        (P / "brokenLink").copy(P / "copyBroken2")


def test_copy_tree(P):
    (P / "dirC").copy(P / "dirC2")
    assert ours((P / "dirC2").rglob("*")) == ["dirC2/dirD", "dirC2/dirD/fileD",
                                              "dirC2/fileC", "dirC2/novel.txt"]
    assert (P / "dirC2/dirD/fileD").read_text() == "this is file D\n"
    target = (P / "dirC").copy_into(P / "dirE")
    assert target == P / "dirE/dirC" and (P / "dirE/dirC/fileC").exists()


def test_move(P):
    moved = (P / "fileA").move(P / "dirE/fileA")
    assert moved == P / "dirE/fileA" and not (P / "fileA").exists()
    moved = (P / "dirC").move_into(P / "dirE")
    assert moved == P / "dirE/dirC" and (P / "dirE/dirC/dirD/fileD").exists()
    with pytest.raises(OSError):
        (P / "dirB").move(P / "dirB/inside")
    moved = (P / "linkB").move(P / "linkBB")
    assert (P / "linkBB").is_symlink() and (P / "dirB").is_dir()
