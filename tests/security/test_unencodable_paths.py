"""A path holding a lone surrogate (``"\\ud800"``: a ``str`` no filesystem
encoding turns into bytes, not even with ``surrogateescape``) given to every
public ``Root`` method that takes a path or a symlink text, and to a ``RootPath``, on every
backend config.

``corral.contained`` says every error is an ``OSError`` and
``InvalidPathError`` covers a path that cannot be a path at all; before,
each of these calls raised ``UnicodeEncodeError`` (a ``ValueError``) from
the path check's own encoding.  ``"\\udcff"`` (the escape of the byte
``0xff``) stays a name that can be made.
"""

from __future__ import annotations

import errno
import os
from collections.abc import Callable
from pathlib import Path

import pytest

from corral.contained import InvalidPathError, Root

BAD = "sub/\ud800x"

CALLS: dict[str, Callable[[Root], object]] = {
    "stat": lambda r: r.stat(BAD),
    "lstat": lambda r: r.lstat(BAD),
    "exists": lambda r: r.exists(BAD),
    "open": lambda r: r.open(BAD, os.O_RDONLY),
    "open_create": lambda r: r.open(BAD, os.O_WRONLY | os.O_CREAT, 0o600),
    "open_file": lambda r: r.open_file(BAD, "w"),
    "open_handle": lambda r: r.open_handle(BAD),
    "open_root": lambda r: r.open_root(BAD),
    "target": lambda r: r.target(BAD),
    "read_bytes": lambda r: r.read_bytes(BAD),
    "read_text": lambda r: r.read_text(BAD),
    "write_bytes": lambda r: r.write_bytes(BAD, b"x"),
    "write_text": lambda r: r.write_text(BAD, "x"),
    "listdir": lambda r: r.listdir(BAD),
    "scandir": lambda r: r.scandir(BAD),
    "walk": lambda r: list(r.walk(BAD, onerror=_raise)),
    "mkdir": lambda r: r.mkdir(BAD),
    "makedirs": lambda r: r.makedirs(BAD),
    "remove": lambda r: r.remove(BAD),
    "unlink": lambda r: r.unlink(BAD),
    "rmdir": lambda r: r.rmdir(BAD),
    "rmtree": lambda r: r.rmtree(BAD),
    "readlink": lambda r: r.readlink(BAD),
    "realpath": lambda r: r.realpath(BAD),
    "chmod": lambda r: r.chmod(BAD, 0o600),
    "chown": lambda r: r.chown(BAD, -1, -1),
    "utime": lambda r: r.utime(BAD, None),
    "truncate": lambda r: r.truncate(BAD, 0),
    "rename_from": lambda r: r.rename(BAD, "f2"),
    "rename_to": lambda r: r.rename("sub/f", BAD),
    "link_from": lambda r: r.link(BAD, "f2"),
    "link_to": lambda r: r.link("sub/f", BAD),
    "symlink_at": lambda r: r.symlink("f", BAD),
    "symlink_text": lambda r: r.symlink(BAD, "sub/l"),
    "rootpath_symlink_to": lambda r: (r.joinpath("sub/l")).symlink_to(BAD),
    "copyfile_from": lambda r: r.copyfile(BAD, "f2"),
    "copyfile_to": lambda r: r.copyfile("sub/f", BAD),
    "rootpath_stat": lambda r: (r.joinpath(BAD)).stat(),
    "rootpath_read_bytes": lambda r: (r.joinpath(BAD)).read_bytes(),
    "rootpath_touch": lambda r: (r.joinpath(BAD)).touch(),
    "rootpath_mkdir": lambda r: (r.joinpath(BAD)).mkdir(parents=True),
    "rootpath_resolve": lambda r: (r.joinpath(BAD)).resolve(strict=True),
    "rootpath_iterdir": lambda r: list((r.joinpath(BAD)).iterdir()),
}


def _raise(exc: OSError) -> None:
    raise exc


def _fds() -> int:
    return len(os.listdir("/proc/self/fd"))


def _tree(top: Path) -> list[str]:
    return sorted(str(p.relative_to(top)) for p in top.rglob("*"))


@pytest.mark.parametrize("call", sorted(CALLS))
def test_an_unencodable_path_is_invalid_path_error(make_root, tmp_path, call):
    ws = tmp_path / "ws"
    (ws / "sub").mkdir(parents=True)
    (ws / "sub" / "f").write_bytes(b"f")
    root = make_root(str(ws))
    try:
        # what a process opens once (the walk's /proc/self/fd) is open before counting
        root.read_bytes("sub/f")
        before, tree = _fds(), _tree(ws)
        with pytest.raises(InvalidPathError) as caught:
            CALLS[call](root)
        assert caught.value.errno == errno.EINVAL
        assert _fds() == before
        assert _tree(ws) == tree
    finally:
        root.close()


def test_a_surrogate_escape_is_still_a_name(make_root, tmp_path):
    root = make_root(str(tmp_path))
    try:
        root.write_bytes("\udcff", b"x")
        assert root.read_bytes("\udcff") == b"x"
    finally:
        root.close()
    assert os.listdir(os.fsencode(tmp_path)) == [b"\xff"]
