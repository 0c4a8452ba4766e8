"""An independent red-team pass over ``Root.extract`` and the times an
archive gives its members: a PAX ``mtime`` of ``nan``, ``inf``, ``-inf``,
``1e400``, ``±1e20`` or a 30-digit number, and a GNU header's base-256
mtime of 2**80, on a file, a directory and a hard link.  ``os.utime``
cannot set them, and its ``ValueError`` / ``OverflowError`` was raised out
of ``extract`` (neither documented nor an ``OSError``): the extraction
stopped at that member with no result, the members after it never made.
Now the member lands with the time it was made with (as GNU tar leaves a
time it cannot set; a hard link leaves its file's), and the extraction goes
on; on every backend config.
"""

from __future__ import annotations

import io
import os
import tarfile
import time
from pathlib import Path

import pytest

TIMES = ["nan", "inf", "-inf", "1e400", "1e20", "-1e20", "9" * 30, "-" + "9" * 30]
KINDS = ["file", "dir", "hardlink"]
BASE_TIME = 1_600_000_000


def _member(name: str, kind: str) -> tuple[tarfile.TarInfo, io.BytesIO | None]:
    info = tarfile.TarInfo(name)
    if kind == "file":
        info.size = 4
        return info, io.BytesIO(b"DATA")
    if kind == "dir":
        info.type = tarfile.DIRTYPE
    else:
        info.type, info.linkname = tarfile.LNKTYPE, "base.txt"
    return info, None


def _archive(kind: str, *, pax_mtime: str | None = None, gnu_mtime: int | None = None) -> bytes:
    buf = io.BytesIO()
    form = tarfile.GNU_FORMAT if gnu_mtime is not None else tarfile.PAX_FORMAT
    with tarfile.open(fileobj=buf, mode="w", format=form) as tf:
        base = tarfile.TarInfo("base.txt")
        base.size, base.mtime = 4, BASE_TIME
        tf.addfile(base, io.BytesIO(b"BASE"))
        info, data = _member("m", kind)
        if pax_mtime is not None:
            info.pax_headers = {"mtime": pax_mtime}
        if gnu_mtime is not None:
            info.mtime = gnu_mtime
        tf.addfile(info, data)
        after = tarfile.TarInfo("after.txt")
        after.size = 5
        tf.addfile(after, io.BytesIO(b"AFTER"))
    return buf.getvalue()


def _check(dest: Path, result, kind: str, started: float) -> None:
    assert [(one.path, one.kind) for one in result.landed] == \
        [("base.txt", "file"), ("m", kind), ("after.txt", "file")], result
    assert result.refused == []
    assert (dest / "after.txt").read_bytes() == b"AFTER"
    if kind == "dir":
        assert (dest / "m").is_dir()
    else:
        assert (dest / "m").read_bytes() == (b"DATA" if kind == "file" else b"BASE")
    if kind == "hardlink":  # base.txt's own time, which the link's member left alone
        assert (dest / "m").stat().st_mtime == BASE_TIME
    else:
        assert abs((dest / "m").stat().st_mtime - started) < 3600  # the time it was made


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("mtime", TIMES)
def test_a_pax_time_no_clock_holds_leaves_the_member_as_made(tmp_path, make_root, kind, mtime):
    dest = tmp_path / "dest"
    dest.mkdir()
    started = time.time()
    result = make_root(str(dest)).extract(io.BytesIO(_archive(kind, pax_mtime=mtime)))
    _check(dest, result, kind, started)
    assert sorted(os.listdir(tmp_path)) == ["dest"]


@pytest.mark.parametrize("kind", KINDS)
def test_a_gnu_base256_time_no_clock_holds_leaves_the_member_as_made(tmp_path, make_root,
                                                                     kind):
    dest = tmp_path / "dest"
    dest.mkdir()
    started = time.time()
    result = make_root(str(dest)).extract(io.BytesIO(_archive(kind, gnu_mtime=2 ** 80)))
    _check(dest, result, kind, started)
