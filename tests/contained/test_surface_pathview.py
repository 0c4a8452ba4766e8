"""The pathlib-style view (``root / "a" / "b"``, ``Root.joinpath``) against
``pathlib.Path`` on the same host tree as the oracle, on every backend
config; and what it deliberately is not (no ``__fspath__``, nothing
followed out, ``glob`` never descending a symlink that leads out).
"""

from __future__ import annotations

import os
from pathlib import Path, PurePosixPath

import pytest

from corral.contained import EscapeError, RootPath


def _tree(ws: Path) -> None:
    for d in ("src/pkg/sub", "docs", ".hidden", "empty"):
        (ws / d).mkdir(parents=True)
    for f, text in [("src/app.py", "app"), ("src/pkg/m.py", "m"), ("src/pkg/sub/deep.py", "d"),
                    ("src/pkg/data.txt", "t"), ("docs/a.md", "a"), ("docs/b.txt", "b"),
                    (".hidden/x.py", "h"), ("top.py", "top"), ("a.txt", "1")]:
        (ws / f).write_text(text)


GLOBS = ["*", "*.py", "**/*.py", "**", "src/*/m.py", "[ab]*", "?.txt", "src/**/*.txt", "**/sub",
         "docs/*", "nothing*", "src/pkg/*"]


@pytest.mark.parametrize("pattern", GLOBS)
def test_glob_is_pathlibs(make_root, scratch, pattern):
    _tree(scratch)
    root = make_root(scratch)
    for base in (".", "src"):
        ours = sorted(str(p) for p in (root / base).glob(pattern))
        host = scratch / base
        theirs = sorted(str(PurePosixPath(base) / p.relative_to(host))
                        for p in host.glob(pattern))
        theirs = [str(PurePosixPath(t)) for t in theirs]
        assert ours == theirs, (base, pattern)


def test_rglob_and_iterdir(make_root, scratch):
    _tree(scratch)
    root = make_root(scratch)
    assert sorted(map(str, root.joinpath("src").rglob("*.py"))) == \
        ["src/app.py", "src/pkg/m.py", "src/pkg/sub/deep.py"]
    assert sorted(p.name for p in (root / "src").iterdir()) == sorted(os.listdir(scratch / "src"))
    assert all(isinstance(p, RootPath) for p in (root / "docs").iterdir())


def test_glob_never_leaves_the_root(make_root, scratch):
    outside = scratch.parent / f"{scratch.name}-out"
    (outside / "deep").mkdir(parents=True)
    (outside / "deep" / "secret.py").write_text("secret")
    (scratch / "in").mkdir()
    (scratch / "in" / "f.py").write_text("f")
    os.symlink(str(outside), scratch / "abs")
    os.symlink(f"../{outside.name}", scratch / "rel")
    os.symlink("in", scratch / "inside")
    root = make_root(scratch)
    found = sorted(map(str, root.joinpath().glob("**/*.py")))
    assert found == ["in/f.py"]
    # a component other than ** follows an in-root link to a directory, as
    # pathlib does; the links leading out are never descended
    assert sorted(map(str, root.joinpath().glob("*/*.py"))) == ["in/f.py", "inside/f.py"]
    assert sorted(map(str, root.joinpath().glob("*"))) == ["abs", "in", "inside", "rel"]
    assert list((root / "abs").glob("*")) == [] and list((root / "rel").glob("**")) == []
    # ".." past the root leads out: nothing there, as for any escape
    for out in ("../*", "a/../../*", "../**", f"../{outside.name}/deep/*"):
        assert list(root.joinpath().glob(out)) == [], out
    assert sorted(map(str, (root / "in").glob("../in/*.py"))) == ["in/../in/f.py"]
    for bad in ("/etc/*", ""):
        with pytest.raises(ValueError):
            list(root.joinpath().glob(bad))


def test_queries(make_root, scratch):
    _tree(scratch)
    os.symlink("src/app.py", scratch / "l")
    os.symlink("/etc/passwd", scratch / "out")
    os.symlink("missing", scratch / "dangling")
    root = make_root(scratch)
    host = Path(scratch)
    for name in ("src", "src/app.py", "l", "dangling", "missing", "src/app.py/x", "empty"):
        p, h = root / name, host / name
        assert (p.exists(), p.is_dir(), p.is_file(), p.is_symlink()) == \
            (h.exists(), h.is_dir(), h.is_file(), h.is_symlink()), name
        if h.exists():
            assert p.stat().st_ino == h.stat().st_ino
        if h.is_symlink():
            assert p.lstat().st_ino == h.lstat().st_ino
            assert p.readlink() == PurePosixPath(os.readlink(h))
    out = root / "out"  # what pathlib would follow out of the root
    assert (out.exists(), out.is_file(), out.is_dir(), out.is_symlink()) == \
        (False, False, False, True)
    with pytest.raises(EscapeError):
        out.read_text()
    with pytest.raises(EscapeError):
        (root / "..").exists() or (root / "..").stat()
    assert (root / "l").resolve() == root / "src/app.py"
    assert (root / "src/../docs/new").resolve() == root / "docs/new"


def test_content_and_changes(make_root, scratch):
    root = make_root(scratch)
    (root / "a/b").mkdir(parents=True)
    (root / "a/b").mkdir(parents=True, exist_ok=True)
    with pytest.raises(FileExistsError):
        (root / "a/b").mkdir()
    (root / "a/b").mkdir(exist_ok=True)
    with pytest.raises(FileNotFoundError):
        (root / "x/y").mkdir()
    p = root / "a" / "b" / "f.txt"
    assert p.write_text("hello\n") == 6 and p.read_text() == "hello\n"
    assert p.write_bytes(b"bytes") == 5 and p.read_bytes() == b"bytes"
    (scratch / "a/file").write_text("")
    with pytest.raises(FileExistsError):
        (root / "a/file").mkdir(exist_ok=True)  # exists, but not as a directory
    with p.open("a") as f:
        f.write("+more")
    assert p.read_text() == "bytes+more"
    q = p.rename("a/g.txt")
    assert q == root / "a/g.txt" and q.exists() and not p.exists()
    r = q.replace(root / "a/b/h.txt")
    assert r.read_text() == "bytes+more"
    (root / "t").touch()
    assert (scratch / "t").stat().st_size == 0
    os.utime(scratch / "t", (1, 1))
    (root / "t").touch()
    assert (scratch / "t").stat().st_mtime > 1
    with pytest.raises(FileExistsError):
        (root / "t").touch(exist_ok=False)
    (root / "t").unlink()
    (root / "t").unlink(missing_ok=True)
    with pytest.raises(FileNotFoundError):
        (root / "t").unlink()
    (root / "a/link").symlink_to("b/h.txt")
    assert os.readlink(scratch / "a/link") == "b/h.txt"
    (root / "empty").mkdir()
    (root / "empty").rmdir()
    assert not (scratch / "empty").exists()


def test_pure_algebra_and_honesty(make_root, scratch):
    root = make_root(scratch)
    p = root / "src" / "pkg" / "mod.tar.gz"
    assert str(p) == "src/pkg/mod.tar.gz" and repr(p) == "RootPath('src/pkg/mod.tar.gz')"
    assert (p.name, p.suffix, p.stem, p.parts) == ("mod.tar.gz", ".gz", "mod.tar",
                                                    ("src", "pkg", "mod.tar.gz"))
    assert p.parent == root / "src/pkg" and p.with_suffix(".zip") == root / "src/pkg/mod.tar.zip"
    assert p.with_name("x") == root.joinpath("src", "pkg", "x")
    assert p.corral_root is root and p.root == ""  # .root is pathlib's string
    assert root.joinpath() == root / "." and str(root.joinpath()) == "."
    assert (root / "a") / (root / "b") == root / "a/b"
    assert len({root / "a", root / "a", root / "b"}) == 2
    assert (root / "a/..").parent == root / "a"  # lexical, as pathlib
    with pytest.raises(TypeError):
        os.fspath(p)  # type: ignore[call-overload]
    with pytest.raises(TypeError):
        open(p)  # type: ignore[call-overload]
    other = make_root(scratch)
    with pytest.raises(ValueError):
        (root / "x").rename(other / "y")
