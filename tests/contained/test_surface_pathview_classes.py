"""Each class of difference between RootPath and ``pathlib.Path`` found by
running CPython's concrete-path tests against RootPath, shown fixed on
every backend config, with host ``pathlib`` on the same tree as the oracle
where there is one (helpers.pathview)."""

from __future__ import annotations

import copy
import errno
import os
import pickle
import stat
from pathlib import Path, PurePosixPath

import pytest
from .helpers.pathview import build, host_walk, ours, rel

from corral.contained import EscapeError, RootPath


@pytest.fixture
def tree(make_root, scratch):
    build(scratch)
    return make_root(scratch), scratch


# -- 1. glob: no duplicates; a trailing "/" yields directories only -------------------
def test_rglob_answers_each_path_once(tree):
    root, base = tree
    found = ours((root / "").rglob("**/fileB"))
    assert found == ["dirB/fileB"]
    assert found == rel(base, base.rglob("**/fileB"))
    for pattern in ("**/*", "**/**/file*", "**/dir*/**/file*"):
        listed = ours(root.joinpath().glob(pattern))
        assert len(listed) == len(set(listed)), pattern
        assert listed == rel(base, base.glob(pattern)), pattern


def test_glob_with_a_trailing_slash_yields_directories_only(tree):
    root, base = tree
    for pattern in ("*/", "dir*/", "**/", "*/*/", "linkB/"):
        found = ours(root.joinpath().glob(pattern))
        assert found == rel(base, base.glob(pattern)), pattern
        assert all((base / p).is_dir() for p in found), pattern
    assert "fileA" not in ours(root.joinpath().glob("*/"))
    assert "linkB" in ours(root.joinpath().glob("*/"))  # an in-root link to a directory


# -- 2. mkdir(mode, parents=True): the parents get the default mode -------------------
def test_mkdir_mode_is_for_the_leaf_only(make_root, scratch):
    root = make_root(scratch)
    old = os.umask(0o022)
    try:
        (root / "p/q/leaf").mkdir(0o555, parents=True)
        (root / "x/y").mkdir(0o700, parents=True, exist_ok=True)
    finally:
        os.umask(old)
    assert stat.S_IMODE((scratch / "p").stat().st_mode) == 0o755
    assert stat.S_IMODE((scratch / "p/q").stat().st_mode) == 0o755
    assert stat.S_IMODE((scratch / "p/q/leaf").stat().st_mode) == 0o555
    assert stat.S_IMODE((scratch / "x").stat().st_mode) == 0o755
    assert stat.S_IMODE((scratch / "x/y").stat().st_mode) == 0o700
    with pytest.raises(FileExistsError):
        (root / "p/q/leaf").mkdir(parents=True)
    (root / "p/q/leaf").mkdir(parents=True, exist_ok=True)
    (scratch / "f").write_text("")
    with pytest.raises(FileExistsError):
        (root / "f").mkdir(parents=True, exist_ok=True)
    with pytest.raises(NotADirectoryError):
        (root / "f/sub").mkdir(parents=True)


# -- 3. pathlib's keyword arguments --------------------------------------------------------
def test_pathlibs_keyword_arguments(tree):
    root, base = tree
    (root / "dirlink").symlink_to("dirB", target_is_directory=True)
    assert os.readlink(base / "dirlink") == "dirB"
    with pytest.raises(FileNotFoundError):
        (root / "missing/x").resolve(strict=True)
    assert (root / "linkA").resolve(strict=True) == root / "fileA"
    assert (root / "missing/x").resolve(strict=False) == root / "missing/x"
    for name in ("brokenLink", "linkA", "linkB", "fileA", "dirB", "missing"):
        p, h = root / name, base / name
        for follow in (True, False):
            got = (p.exists(follow_symlinks=follow), p.is_dir(follow_symlinks=follow),
                   p.is_file(follow_symlinks=follow))
            assert got == (h.exists() if follow else h.is_symlink() or h.exists(),
                           h.is_dir() and (follow or not h.is_symlink()),
                           h.is_file() and (follow or not h.is_symlink())), (name, follow)
    assert ours(root.joinpath().glob("FILE?", case_sensitive=False)) == ["fileA"]
    assert ours(root.joinpath().glob("FILE?", case_sensitive=True)) == []
    assert ours(root.joinpath().glob("DIRC/FILEC", case_sensitive=False)) == ["dirC/fileC"]
    plain = ours(root.joinpath().rglob("fileB"))
    assert plain == ["dirB/fileB"]
    followed = ours((root / "dirC").rglob("*", recurse_symlinks=True))
    assert followed == ours((root / "dirC").rglob("*"))
    through = ours((root / "dirA").rglob("fileB", recurse_symlinks=True))
    assert "dirA/linkC/fileB" in through
    (base / "crlf.txt").write_bytes(b"a\r\nb\n")
    assert (root / "crlf.txt").read_text(newline="") == "a\r\nb\n"
    assert (root / "crlf.txt").read_text() == "a\nb\n"
    assert (root / "crlf.txt").read_text(encoding="ascii", errors="strict", newline=None) \
        == "a\nb\n"


# -- 4. unencodable names and NUL answer False --------------------------------------------
@pytest.mark.parametrize("name", ["fileA\udfff\ud800", "fileA\x00", "bad\ud800/x", "a\x00b"])
def test_queries_on_impossible_names_answer_false(tree, name):
    root, _ = tree
    p = root / name
    for query in (p.exists, p.is_file, p.is_dir, p.is_symlink, p.is_fifo, p.is_socket,
                  p.is_block_device, p.is_char_device, p.is_mount, p.is_junction):
        assert query() is False, query.__name__
    assert p.exists(follow_symlinks=False) is False
    assert p.info.exists() is False and p.info.is_file() is False


# -- 5. the smaller ones ---------------------------------------------------------------------
def test_joinpath_takes_a_rootpath_and_root_is_a_string(tree):
    root, _ = tree
    a, b = root / "dirC", root / "dirD/fileD"
    assert a.joinpath(b) == a / b == root / "dirC/dirD/fileD"
    assert a.joinpath(b).read_bytes() == b"this is file D\n"
    assert root.joinpath("dirC").joinpath("dirD", PurePosixPath("fileD")) == \
        root / "dirC/dirD/fileD"
    assert "dirC" / (root / "fileC") == root / "dirC/fileC"
    p = root / "dirC/fileC"
    assert (p.root, p.anchor, p.drive) == ("", "", "")
    assert isinstance(p.root, str) and p.corral_root is root
    assert (root / "/etc").root == "/" and (root / "/etc").is_absolute()
    with pytest.raises(EscapeError):
        (root / "/etc").stat()


def test_pickling_is_refused_clearly_and_copies_are_the_same_path(tree):
    root, _ = tree
    p = root / "fileA"
    for protocol in range(pickle.HIGHEST_PROTOCOL + 1):
        with pytest.raises(TypeError, match="RootPath .*cannot be pickled"):
            pickle.dumps(p, protocol)
    assert copy.copy(p) == p and copy.deepcopy(p) == p
    assert "cannot be pickled" in (RootPath.__doc__ or "") + _module_doc()


def _module_doc() -> str:
    import corral.contained._rootpath.view as view
    return view.__doc__ or ""


def test_glob_of_a_pathlike_pattern(tree):
    root, base = tree
    for pattern in (PurePosixPath("dirC/*"), Path("*A"), PurePosixPath("**/file*")):
        assert ours(root.joinpath().glob(pattern)) == rel(base, base.glob(str(pattern)))
    assert ours(root.joinpath().rglob(PurePosixPath("file?"))) == \
        rel(base, base.rglob("file?"))
    with pytest.raises(TypeError):
        list(root.joinpath().glob(3))  # type: ignore[arg-type]


def test_symlink_to_a_rootpath_leads_to_it(tree):
    root, base = tree
    (root / "dirC/dirD/toA").symlink_to(root / "fileA")
    assert os.readlink(base / "dirC/dirD/toA") == "../../fileA"
    assert (root / "dirC/dirD/toA").read_bytes() == b"this is file A\n"
    assert (base / "dirC/dirD/toA").read_bytes() == b"this is file A\n"
    (root / "dirC/toD").symlink_to(root / "dirC/dirD/fileD")
    assert os.readlink(base / "dirC/toD") == "dirD/fileD"
    (root / "linkB/toC").symlink_to(root / "dirC")  # made in dirB, through the link
    assert os.readlink(base / "dirB/toC") == "../dirC"
    assert (root / "dirB/toC/fileC").read_bytes() == b"this is file C\n"
    (root / "toroot").symlink_to(root.joinpath())
    assert os.readlink(base / "toroot") == "."
    (root / "dirE/up").symlink_to(root / "linkB/../dirC")  # kept as written below the root
    assert (root / "dirE/up/fileC").exists() == (base / "dirE/up/fileC").exists()
    (root / "dirE/text").symlink_to("plain/text")
    assert os.readlink(base / "dirE/text") == "plain/text"


def test_resolve_below_a_link_loop_answers(tree):
    root, base = tree
    os.symlink("loopB", base / "loopA")
    os.symlink("loopA", base / "loopB")
    assert (root / "brokenLinkLoop").resolve() == root / "brokenLinkLoop"
    assert (root / "brokenLinkLoop/x/y").resolve() == root / "brokenLinkLoop/x/y"
    assert (root / "brokenLinkLoop/..").resolve() == root.joinpath()
    assert (root / "loopA/z").resolve() in (root / "loopA/z", root / "loopB/z")
    with pytest.raises(OSError) as caught:
        (root / "brokenLinkLoop/x").resolve(strict=True)
    assert caught.value.errno == errno.ELOOP


def test_iterdir_of_a_file_raises_when_called(tree):
    root, _ = tree
    with pytest.raises(NotADirectoryError):
        (root / "fileA").iterdir()
    with pytest.raises(FileNotFoundError):
        (root / "missing").iterdir()
    with pytest.raises(EscapeError):
        (root / "..").iterdir()
    it = (root / "dirC").iterdir()
    (root / "dirC/late").write_bytes(b"")
    assert ours(it) == ["dirC/dirD", "dirC/fileC", "dirC/novel.txt"]  # listed at the call


# -- 6. the methods that were missing ---------------------------------------------------------
# Where a followed walk stops in the linkD cycle is the kernel's, and it moves:
# Linux counts the links of one lookup across its retries (an RCU walk that
# bails out after n links goes on from n), so a path of more than 20 links may
# end at ELOOP early on the host and in openat2 alike. Up to 20 links a lookup
# cannot fail that way; the rows whose listing stats at most that many are
# compared exactly, the deeper ones by their shape.
_ELOOP_SURE = 19
_Row = tuple[str, list[str], list[str]]


def _links_in(path: str) -> int:
    return sum(part.startswith("link") for part in PurePosixPath(path).parts)


def _short_of_eloop(rows: list[_Row]) -> list[_Row]:
    return [row for row in rows if _links_in(row[0]) <= _ELOOP_SURE]


def _inside_the_cycle(row: _Row) -> bool:
    _path, dirs, files = row
    return dirs in ([], ["linkD"]) and files in (["fileB"], ["fileB", "linkD"])


def test_walk_is_pathlibs(tree):
    root, base = tree
    for top in ("", "dirC", "linkB", "dirA"):
        for top_down in (True, False):
            for follow in (False, True):
                if follow and top == "":
                    continue  # two ways into the linkD cycle: long (each ends at ELOOP)
                got = sorted((str(p), sorted(d), sorted(f)) for p, d, f in
                             (root / top).walk(top_down=top_down, follow_symlinks=follow))
                want = sorted((str(PurePosixPath(top) / q.relative_to(base / top)),
                               sorted(d), sorted(f)) for q, d, f in
                              host_walk(base / top, top_down, follow))
                assert _short_of_eloop(got) == _short_of_eloop(want), (top, top_down, follow)
                assert max(_links_in(row[0]) for row in got) <= 40, (top, top_down, follow)
                assert all(_inside_the_cycle(row) for row in got
                           if _links_in(row[0]) > _ELOOP_SURE), (top, top_down, follow)
    rows = list((root / "dirC").walk())
    assert rows[0][0] == root / "dirC" and sorted(rows[0][1]) == ["dirD"]
    pruned = []
    for here, dirs, _files in root.joinpath().walk():
        pruned.append(str(here))
        dirs[:] = [d for d in dirs if d != "dirC"]
    assert "dirC" not in pruned and "dirC/dirD" not in pruned and "dirB" in pruned
    errors: list[OSError] = []
    assert list((root / "fileA").walk(on_error=errors.append)) == []
    assert len(errors) == 1 and isinstance(errors[0], NotADirectoryError)
    assert list((root / "missing").walk()) == []


def test_walk_follow_symlinks_stays_inside(make_root, scratch):
    outside = scratch.parent / f"{scratch.name}-away"
    outside.mkdir()
    (outside / "secret").write_text("s")
    (scratch / "d").mkdir()
    (scratch / "d/f").write_text("f")
    os.symlink("d", scratch / "in")
    os.symlink(str(outside), scratch / "out")
    root = make_root(scratch)
    rows = {str(p): (sorted(d), sorted(f)) for p, d, f in root.joinpath().walk(
        follow_symlinks=True)}
    assert rows == {".": (["d", "in"], ["out"]), "d": ([], ["f"]), "in": ([], ["f"])}


def test_chmod_lchmod_owner_group(tree):
    import grp
    import pwd
    root, base = tree
    (root / "fileA").chmod(0o640)
    assert stat.S_IMODE((base / "fileA").stat().st_mode) == 0o640
    (root / "linkA").chmod(0o600)  # through the link
    assert stat.S_IMODE((base / "fileA").stat().st_mode) == 0o600
    try:
        (root / "linkA").lchmod(0o700)
    except (OSError, NotImplementedError) as exc:  # Linux has no lchmod
        assert getattr(exc, "errno", errno.EOPNOTSUPP) in (errno.EOPNOTSUPP, errno.ENOTSUP)
    assert stat.S_IMODE((base / "fileA").stat().st_mode) == 0o600
    uid, gid = os.stat(base / "fileA").st_uid, os.stat(base / "fileA").st_gid
    assert (root / "fileA").owner() == pwd.getpwuid(uid).pw_name == (base / "fileA").owner()
    assert (root / "fileA").group() == grp.getgrgid(gid).gr_name == (base / "fileA").group()
    assert (root / "linkA").owner(follow_symlinks=False) == pwd.getpwuid(
        os.lstat(base / "linkA").st_uid).pw_name
    with pytest.raises(FileNotFoundError):
        (root / "missing").owner()


def test_hardlink_to(tree):
    root, base = tree
    (root / "dirE/hard").hardlink_to(root / "fileA")
    (root / "dirE/hard2").hardlink_to("dirC/fileC")
    assert (base / "dirE/hard").stat().st_ino == (base / "fileA").stat().st_ino
    assert (base / "dirE/hard2").stat().st_ino == (base / "dirC/fileC").stat().st_ino
    with pytest.raises(FileExistsError):
        (root / "dirE/hard").hardlink_to(root / "fileA")
    with pytest.raises(FileNotFoundError):
        (root / "dirE/h3").hardlink_to(root / "missing")


def test_file_kinds(tree):
    root, base = tree
    os.mkfifo(base / "fifo")
    import socket
    sock = socket.socket(socket.AF_UNIX)
    try:
        sock.bind(str(base / "sock"))
    except OSError:  # a path too long for a socket name: bind relatively
        cwd = os.getcwd()
        os.chdir(base)
        try:
            sock.bind("sock")
        finally:
            os.chdir(cwd)
    try:
        for name in ("fifo", "sock", "fileA", "dirB", "linkA", "missing"):
            p, h = root / name, base / name
            assert (p.is_fifo(), p.is_socket(), p.is_block_device(), p.is_char_device(),
                    p.is_junction()) == (h.is_fifo(), h.is_socket(), h.is_block_device(),
                                         h.is_char_device(), False), name
    finally:
        sock.close()
    assert not root.joinpath().is_mount()  # its parent is outside: not known
    assert not (root / "dirB").is_mount() and not (root / "linkB").is_mount()


def test_pure_methods_are_purepaths(tree):
    root, _ = tree
    cases = ["a/b.tar.gz", "a/b", ".", "a/.hidden", "x/y/z.txt", "a/../b"]
    for text in cases:
        p, q = root / text, PurePosixPath(text)
        assert (p.suffixes, p.stem, p.name, p.parts, p.anchor, p.is_absolute()) == \
            (q.suffixes, q.stem, q.name, q.parts, q.anchor, q.is_absolute()), text
        assert [str(x) for x in p.parents] == [str(x) for x in q.parents], text
        assert all(isinstance(x, RootPath) and x.corral_root is root for x in p.parents)
        if q.name:
            assert str(p.with_stem("s")) == str(q.with_stem("s"))
    p = root / "a/b/c"
    assert p.parents[0] == root / "a/b" and p.parents[-1] == root.joinpath()
    assert p.parents[1:] == (root / "a", root.joinpath())
    assert p.relative_to(root / "a") == root / "b/c" and p.relative_to("a/b") == root / "c"
    assert p.relative_to("a/x", walk_up=True) == root / "../b/c"
    with pytest.raises(ValueError):
        p.relative_to("x")
    with pytest.raises(ValueError):
        p.relative_to("../x", walk_up=True)
    assert p.is_relative_to(root / "a") and p.is_relative_to("a/b/c")
    assert not p.is_relative_to("b")
    assert p.match("b/c") and p.match("*/c") and not p.match("/b/c") and p.match("a/*/c")
    assert p.match("B/C", case_sensitive=False) and not p.match("B/C")
    assert p.full_match("a/**") and p.full_match("**/c") and p.full_match("a/*/c")
    assert not p.full_match("b/c") and not p.full_match("a/b/c/**")
    assert p.full_match("A/**", case_sensitive=False) and p.full_match("**")
    assert p.with_segments("q", "r") == root / "q/r"
    assert sorted([root / "b", root / "a/z", root / "a"]) == [root / "a", root / "a/z", root / "b"]
    assert root / "a" < root / "b" <= root / "b" and root / "c" > root / "b" >= root / "b"
    with pytest.raises(TypeError):
        assert root / "a" < PurePosixPath("b")  # type: ignore[operator]
    assert bytes(p) == b"a/b/c"


def test_copy_and_move(tree):
    root, base = tree
    got = (root / "fileA").copy(root / "dirE/copied")
    assert got == root / "dirE/copied" and (base / "dirE/copied").read_bytes() == \
        b"this is file A\n"
    os.utime(base / "dirC/fileC", (1000, 2000))
    os.chmod(base / "dirC/fileC", 0o604)
    tree_copy = (root / "dirC").copy("dirC2", preserve_metadata=True)
    assert tree_copy == root / "dirC2"
    assert rel(base / "dirC2", (base / "dirC2").rglob("*")) == \
        rel(base / "dirC", (base / "dirC").rglob("*"))
    assert (base / "dirC2/fileC").stat().st_mtime == 2000
    assert stat.S_IMODE((base / "dirC2/fileC").stat().st_mode) == 0o604
    (root / "dirA").copy("dirA2", follow_symlinks=False)
    assert os.readlink(base / "dirA2/linkC") == "../dirB"
    os.symlink("../dirC/dirD", base / "dirE/toD")
    (root / "dirE").copy("dirE3")  # the link followed: its directory copied
    assert (base / "dirE3/toD/fileD").is_file() and not (base / "dirE3/toD").is_symlink()
    assert (root / "linkA").copy_into("dirE") == root / "dirE/linkA"
    assert not (base / "dirE/linkA").is_symlink()
    with pytest.raises(OSError) as same:
        (root / "dirC").copy("dirC")
    assert same.value.errno == errno.EINVAL
    with pytest.raises(OSError) as inside:
        (root / "dirC").copy("dirC/dirD/again")
    assert inside.value.errno == errno.EINVAL
    with pytest.raises(FileExistsError):
        (root / "dirC").copy("dirC2")
    moved = (root / "dirC2").move("dirE/moved")
    assert moved == root / "dirE/moved" and not (base / "dirC2").exists()
    assert (base / "dirE/moved/dirD/fileD").read_bytes() == b"this is file D\n"
    assert (root / "dirE/copied").move_into("dirB") == root / "dirB/copied"
    with pytest.raises(OSError) as same_file:
        (root / "fileA").move("linkA/..")  # noqa: B018 (a directory: a different error)
    assert same_file.value.errno in (errno.EINVAL, errno.EISDIR, errno.ENOTDIR, errno.EEXIST,
                                     errno.ENOTEMPTY, errno.EBUSY)
    with pytest.raises(OSError) as same_path:
        (root / "fileA").move(root / "fileA")
    assert same_path.value.errno == errno.EINVAL
    with pytest.raises(ValueError):
        root.joinpath().copy_into("dirE")


def test_copy_never_leaves_the_root(make_root, scratch):
    outside = scratch.parent / f"{scratch.name}-far"
    outside.mkdir()
    (outside / "secret").write_text("secret")
    (scratch / "d").mkdir()
    os.symlink(str(outside), scratch / "d/out")
    os.symlink(str(outside / "secret"), scratch / "d/outfile")
    (scratch / "d/x").write_text("x")
    root = make_root(scratch)
    with pytest.raises(EscapeError):
        (root / "d").copy("e")
    assert not (scratch / "e/out").exists()
    (root / "d").copy("f", follow_symlinks=False)  # links copied as links, never followed
    assert os.readlink(scratch / "f/out") == str(outside)
    with pytest.raises(EscapeError):
        (root / "d/outfile").copy("g")
    with pytest.raises(EscapeError):
        (root / "d/x").move(root / "d/out/stolen")
    assert sorted(os.listdir(outside)) == ["secret"]


def test_info(tree):
    root, base = tree
    for name in ("fileA", "dirB", "linkA", "linkB", "brokenLink", "missing", "brokenLinkLoop"):
        info, h = (root / name).info, base / name
        assert (info.exists(), info.is_dir(), info.is_file(), info.is_symlink()) == \
            (h.exists(), h.is_dir(), h.is_file(), h.is_symlink()), name
        assert info.exists(follow_symlinks=False) == (h.is_symlink() or h.exists())
        assert info.is_dir(follow_symlinks=False) == (h.is_dir() and not h.is_symlink())
    p = root / "dirE/late"
    assert p.info.exists() is False
    (base / "dirE/late").write_text("")
    assert p.info.exists() is False  # kept, as pathlib's info
    assert p.joinpath().info.exists() is True


def test_host_paths_raise_clearly(tree):
    root, _ = tree
    p = root / "fileA"
    for call in (p.absolute, RootPath.cwd, RootPath.home, p.as_uri,
                 lambda: RootPath.from_uri("file:///etc"), (root / "~x").expanduser,
                 lambda: p.samefile("fileA")):
        with pytest.raises(NotImplementedError, match="host path"):
            call()
    assert (root / "a").expanduser() == root / "a"
    assert p.samefile(root / "linkA") and not p.samefile(root / "dirB")
    with pytest.raises(TypeError):
        os.fspath(p)  # type: ignore[call-overload]


# -- errors that are not "absent": pathlib's answer for each version --------------------------
@pytest.mark.parametrize("fast_path", [True, False])
def test_permission_denied_is_raised_by_queries_and_skipped_by_glob(scratch, fast_path):
    import sys

    from corral.contained import OsBackend, Root
    from corral.testing.backends import Fault, FaultBackend

    (scratch / "sub").mkdir()
    (scratch / "sub/x").write_text("x")
    (scratch / "ok").mkdir()
    (scratch / "ok/y").write_text("y")
    # the directory and (for openat2, which names its last component) the file
    faults = [Fault(method, errno.EACCES, name=name, times=-1)
              for method in ("open_at", "openat2", "lstat_at") for name in ("sub", "x")]
    root = Root(scratch, backend=FaultBackend(OsBackend(), *faults), fast_path=fast_path)
    try:
        p = root / "sub/x"
        if sys.version_info >= (3, 14):  # from 3.14 pathlib's queries answer False
            assert (p.exists(), p.is_file(), p.is_dir()) == (False, False, False)
        else:
            for query in (p.exists, p.is_file, p.is_dir, p.is_symlink):
                with pytest.raises(PermissionError):
                    query()
        assert ours(root.joinpath().glob("*/*")) == ["ok/y"]
        assert ours(root.joinpath().rglob("*")) == ["ok", "ok/y", "sub"]
        errors: list[OSError] = []
        rows = [str(here) for here, _d, _f in (root / "sub").walk(on_error=errors.append)]
        assert rows == [] and isinstance(errors[0], PermissionError)
        with pytest.raises(PermissionError):
            (root / "sub").iterdir()
    finally:
        root.close()


# -- where Python versions differ: the other versions' rules, switched on here ----------------
def test_the_glob_rules_of_313_and_later(tree, monkeypatch):
    from corral.contained._rootpath import globbing as _pathglob

    root, _ = tree
    monkeypatch.setattr(_pathglob, "_NEW_GLOB", True)
    # a final "**" yields files (and links) too, "**/" directories only
    assert ours((root / "dirC").glob("**")) == ["dirC", "dirC/dirD", "dirC/dirD/fileD",
                                                "dirC/fileC", "dirC/novel.txt"]
    assert ours((root / "dirC").glob("**/")) == ["dirC", "dirC/dirD"]
    # a literal matches a dangling link (lexists); "**" inside a component is "*"
    assert ours(root.joinpath().glob("brokenLink")) == ["brokenLink"]
    assert ours(root.joinpath().glob("dir**")) == ["dirA", "dirB", "dirC", "dirE"]
    monkeypatch.setattr(_pathglob, "_NEW_GLOB", False)
    assert ours((root / "dirC").glob("**")) == ["dirC", "dirC/dirD"]
    assert ours(root.joinpath().glob("brokenLink")) == []
    with pytest.raises(ValueError):
        list(root.joinpath().glob("dir**"))


def test_the_query_rules_of_314_and_later(scratch, monkeypatch):
    from corral.contained import OsBackend, Root
    from corral.contained._rootpath import view as _pathview
    from corral.testing.backends import Fault, FaultBackend

    (scratch / "x").write_text("x")
    faults = [Fault(m, errno.EACCES, name="x", times=-1) for m in ("openat2", "open_at",
                                                                  "lstat_at")]
    root = Root(scratch, backend=FaultBackend(OsBackend(), *faults))
    try:
        monkeypatch.setattr(_pathview, "_ANY_ERROR_IS_ABSENT", True)
        assert (root / "x").is_file() is False and (root / "x").exists() is False
        monkeypatch.setattr(_pathview, "_ANY_ERROR_IS_ABSENT", False)
        with pytest.raises(PermissionError):
            (root / "x").is_file()
    finally:
        root.close()
    closed = Root(scratch)
    p = closed / "x"
    closed.close()
    monkeypatch.setattr(_pathview, "_ANY_ERROR_IS_ABSENT", True)
    with pytest.raises(OSError) as caught:  # a closed root is a mistake, never "absent"
        p.exists()
    assert caught.value.errno == errno.EBADF


def test_resolve_strict_refuses_a_file_mid_path_where_python_does(tree, monkeypatch):
    from corral.contained._rootpath import ops as _pathops

    root, _ = tree
    monkeypatch.setattr(_pathops, "_STRICT_NOTDIR", True)
    with pytest.raises(NotADirectoryError):
        (root / "fileA/..").resolve(strict=True)
    assert (root / "fileA/..").resolve() == root.joinpath()
    monkeypatch.setattr(_pathops, "_STRICT_NOTDIR", False)
    assert (root / "fileA/..").resolve(strict=True) == root.joinpath()


@pytest.mark.parametrize("method,pattern", [("glob", "*"), ("rglob", "*.py"), ("glob", "s/*"),
                                            ("glob", "**/")])
def test_a_closed_roots_glob_raises_rather_than_finding_nothing(make_root, scratch, method,
                                                                pattern):
    # pathlib's glob reads an unreadable directory as empty; a closed Root is
    # the caller's mistake, and an empty answer would hide it
    (scratch / "s").mkdir()
    (scratch / "s" / "a.py").write_text("")
    root = make_root(scratch)
    path = RootPath(root)
    assert list(getattr(path, method)(pattern))
    root.close()
    with pytest.raises(OSError) as caught:
        list(getattr(path, method)(pattern))
    assert caught.value.errno == errno.EBADF
