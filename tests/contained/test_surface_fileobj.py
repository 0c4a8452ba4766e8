"""``Root.open_file``, ``read_text`` and ``write_text`` against the standard
library as the oracle: ``open()`` / ``pathlib`` on the same host path give
the same outcome (content read, content left, error type and errno) for
every mode, on every kind of target, on every backend config; where ``open``
would escape or block, the root refuses.
"""

from __future__ import annotations

import errno
import fcntl
import io
import os
import stat
from pathlib import Path

import pytest

from corral.contained import EscapeError, InvalidPathError, PathError, SpecialFileError

from ..helpers import fds_opened_since, open_fds

MODES = ["r", "rb", "r+", "rb+", "rt", "w", "wb", "w+", "wb+", "x", "xb", "x+", "a", "ab", "a+",
         "ab+"]

# name -> how to make it in a fresh root (relative to the root)
TARGETS = {
    "file": lambda ws: (ws / "t").write_text("old line\nsecond\n"),
    "missing": lambda ws: None,
    "dir": lambda ws: (ws / "t").mkdir(),
    "link to file": lambda ws: ((ws / "real").write_text("via link\n"),
                                os.symlink("real", ws / "t")),
    "dangling link": lambda ws: os.symlink("made-through-link", ws / "t"),
    "link to dir": lambda ws: ((ws / "d").mkdir(), os.symlink("d", ws / "t")),
    "missing parent": lambda ws: None,
}
PATHS = {"missing parent": "nope/t"}


def _use(f, mode: str) -> object:
    """What a caller does with a file object: read if it can, then write."""
    got = None
    if "r" in mode or "+" in mode:
        got = f.read()
    if mode[0] in "wxa" or "+" in mode:
        f.write(b"written\n" if "b" in mode else "written\n")
    return got


def _outcome(fn) -> tuple:
    try:
        with fn() as f:
            return ("ok", _use(f, f.mode if "b" in f.mode else f.mode))
    except OSError as exc:
        return ("err", _builtin_class(exc), exc.errno)


def _open_outcome(opener, mode: str) -> tuple:
    try:
        with opener() as f:
            return ("ok", _use(f, mode))
    except OSError as exc:
        return ("err", _builtin_class(exc), exc.errno)


def _builtin_class(exc: OSError) -> type[OSError]:
    """The built-in class of ``exc``: the core raises its own subclass of the
    very class ``open`` raises (it carries ``component``), never another one."""
    own = getattr(type(exc), "builtin", None)
    if own is not None:
        assert isinstance(exc, own) and isinstance(exc, PathError)
        return own
    return type(exc)


def _state(ws: Path) -> dict:
    out = {}
    for dirpath, dirnames, filenames in os.walk(ws):
        for name in dirnames + filenames:
            full = Path(dirpath) / name
            rel = str(full.relative_to(ws))
            if full.is_symlink():
                out[rel] = ("link", os.readlink(full))
            elif full.is_dir():
                out[rel] = ("dir",)
            else:
                out[rel] = ("file", full.read_bytes(), stat.S_IMODE(full.stat().st_mode))
    return out


@pytest.mark.parametrize("target", list(TARGETS))
@pytest.mark.parametrize("mode", MODES)
def test_open_file_is_open(make_root, scratch, mode, target):
    ours, theirs = scratch / "ours", scratch / "theirs"
    for ws in (ours, theirs):
        ws.mkdir()
        TARGETS[target](ws)
    rel = PATHS.get(target, "t")
    root = make_root(ours)
    got = _open_outcome(lambda: root.open_file(rel, mode), mode)
    want = _open_outcome(lambda: open(theirs / rel, mode), mode)
    assert got == want, (mode, target)
    assert _state(ours) == _state(theirs)


def test_file_object_is_a_real_one(make_root, scratch):
    (scratch / "t").write_bytes(b"abc")
    root = make_root(scratch)
    fds = open_fds()
    with root.open_file("t", "rb") as f:
        assert isinstance(f, io.BufferedReader) and f.name == "t" and f.mode == "rb"
        flags = fcntl.fcntl(f.fileno(), fcntl.F_GETFL)
        assert not flags & os.O_NONBLOCK
        assert fcntl.fcntl(f.fileno(), fcntl.F_GETFD) & fcntl.FD_CLOEXEC
        assert f.read(1) == b"a" and f.seek(2) == 2 and f.read() == b"c"
    with root.open_file("t", "r", encoding="latin-1", newline="") as f:
        assert isinstance(f, io.TextIOWrapper) and f.encoding == "latin-1"
    with root.open_file("t", "rb", buffering=0) as f:
        assert isinstance(f, io.FileIO)
    assert not fds_opened_since(fds), "an fd was left open"


def test_refusals(make_root, scratch):
    outside = scratch.parent / f"{scratch.name}-outside"
    outside.mkdir()
    (outside / "secret").write_text("secret")
    ws = scratch
    os.symlink(str(outside / "secret"), ws / "abs")
    os.symlink(f"../{outside.name}", ws / "out")
    os.mkfifo(ws / "fifo")
    root = make_root(ws)
    for path, mode in [("abs", "r"), ("abs", "w"), ("abs", "a"), ("out/secret", "r"),
                       ("out/new", "x"), ("../x", "w"), (str(outside / "secret"), "r"),
                       ("out/", "r")]:
        with pytest.raises(EscapeError):
            root.open_file(path, mode)
    for mode in ("r", "w", "a", "rb+"):
        with pytest.raises(SpecialFileError):
            root.open_file("fifo", mode)
    with pytest.raises(InvalidPathError):
        root.open_file("a\x00b", "w")
    with pytest.raises(ValueError):
        root.open_file("t", "rw")
    with pytest.raises(ValueError):
        root.open_file("t", "wb", encoding="utf-8")
    with pytest.raises(LookupError):
        root.open_file("t2", "w", encoding="no-such-codec")
    assert (outside / "secret").read_text() == "secret" and sorted(os.listdir(outside)) == \
        ["secret"]
    assert sorted(os.listdir(ws)) == ["abs", "fifo", "out"]  # nothing made by a refusal


@pytest.mark.parametrize("encoding,errors,newline,text", [
    (None, None, None, "plain\nlines\n"),
    ("utf-8", None, None, "caf\u00e9 \u2713\r\nmixed\rends\n"),
    ("latin-1", "replace", None, "caf\u00e9 \u2713\n"),
    ("utf-16", None, "\r\n", "two\nlines\n"),
    ("utf-8", None, "", "kept\r\nas is\n"),
    ("utf-8", None, "\r", "cr\nends\n"),
])
def test_text_is_pathlibs(make_root, scratch, encoding, errors, newline, text):
    ours, theirs = scratch / "ours", scratch / "theirs"
    ours.mkdir()
    theirs.mkdir()
    root = make_root(ours)
    n = root.write_text("t.txt", text, encoding, errors, newline)
    assert n == (theirs / "t.txt").write_text(text, encoding, errors, newline)
    assert (ours / "t.txt").read_bytes() == (theirs / "t.txt").read_bytes()
    assert root.read_text("t.txt", encoding, errors) == \
        (theirs / "t.txt").read_text(encoding, errors)


def test_write_text_is_atomic_and_keeps_metadata(make_root, scratch):
    target = scratch / "t.txt"
    target.write_text("old\n")
    os.chmod(target, 0o640)
    before = os.stat(target)
    root = make_root(scratch)
    root.write_text("t.txt", "new\n")
    after = os.stat(target)
    assert target.read_text() == "new\n" and after.st_ino != before.st_ino
    assert stat.S_IMODE(after.st_mode) == 0o640
    with pytest.raises(TypeError):
        root.write_text("t.txt", b"bytes")  # type: ignore[arg-type]
    with pytest.raises(ValueError):
        root.write_text("t.txt", "x", newline="\n\n")
    with pytest.raises(FileExistsError):
        root.write_text("t.txt", "x", exclusive=True)
    with pytest.raises(UnicodeDecodeError):
        root.write_bytes("bad", b"\xff\xfe\xfa")
        root.read_text("bad", "utf-8")
    assert target.read_text() == "new\n"


def test_read_text_refuses_like_open_file(make_root, scratch):
    (scratch / "d").mkdir()
    os.symlink("/etc/passwd", scratch / "abs")
    root = make_root(scratch)
    with pytest.raises(IsADirectoryError) as info:
        root.read_text("d")
    assert info.value.errno == errno.EISDIR
    with pytest.raises(EscapeError):
        root.read_text("abs")
    with pytest.raises(FileNotFoundError):
        root.read_text("missing")
