"""The work ``Root.extract`` spends judging where one symlink member leads
is bounded (THREATS row 28, "every call is bounded"), on every backend config.

A symlink member is judged by walking its text through the tree with one
``lstat`` of the whole root-relative path per component, following the
links it meets (40 at most).  An archive of a directory ``d/d/.../d`` and a
chain of links that each walk down it and climb back out
(``L1 -> d/.../d/M1``, ``d/.../d/M1 -> ../../.../L2``...) made that walk
quadratic in the depth for every hop: each further ``p -> L1`` cost
hundreds of thousands of component lookups (at depth 1,000, seconds with
openat2 and a minute through the walk; the archive holds 50,000 members by
default).  The count here is exact: the components of every path the
extraction looks up with ``lstat`` or ``readlink``.
"""

from __future__ import annotations

import io
import os
import sys
import tarfile
from pathlib import Path


from corral.contained import ExtractReason

DEPTH = int(os.environ.get("CORRAL_REDCORE_LINK_DEPTH", "120"))
HOPS = 6
PROBES = 2
#: component lookups one symlink member may cost, its check when made and
#: once the archive is in: a small multiple of a deep member's own resolution
PER_LINK = 20_000


def _chain_archive() -> bytes:
    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode="w", format=tarfile.PAX_FORMAT) as tf:
        deep = "/".join(["d"] * DEPTH)
        top = tarfile.TarInfo(deep)
        top.type = tarfile.DIRTYPE
        tf.addfile(top)
        for hop in range(HOPS, 0, -1):
            down = tarfile.TarInfo(f"{deep}/M{hop}")
            down.type = tarfile.SYMTYPE
            down.linkname = "/".join([".."] * DEPTH) + (f"/L{hop + 1}" if hop < HOPS else "/d")
            tf.addfile(down)
            up = tarfile.TarInfo(f"L{hop}")
            up.type = tarfile.SYMTYPE
            up.linkname = f"{deep}/M{hop}"
            tf.addfile(up)
        for probe in range(PROBES):
            link = tarfile.TarInfo(f"p{probe}")
            link.type = tarfile.SYMTYPE
            link.linkname = "L1"
            tf.addfile(link)
        # an ordinary deep link: it lands whatever the chain did
        near = tarfile.TarInfo(f"{deep}/near")
        near.type = tarfile.SYMTYPE
        near.linkname = "../../d"
        tf.addfile(near)
    return out.getvalue()


def _fds() -> int:
    """Open fds, but the one on ``/proc/self/fd`` the walk opens once a process."""
    names = os.listdir("/proc/self/fd")
    proc = f"/proc/{os.getpid()}/fd"
    return sum(1 for fd in names if _target(fd) != proc)


def _target(fd: str) -> str:
    try:
        return os.readlink(f"/proc/self/fd/{fd}")
    except OSError:
        return ""  # the fd listdir held


def _counting_lookups(monkeypatch, root) -> list[int]:
    """A one-item list counting the path components ``root``'s class is
    asked to ``lstat`` or ``readlink`` from now on (the judging's lookups)."""
    looked = [0]
    kind = type(root)
    lstat, readlink = kind.lstat, kind.readlink

    def counted_lstat(self, path, *args, **kwargs):
        looked[0] += len(str(path).split("/"))
        return lstat(self, path, *args, **kwargs)

    def counted_readlink(self, path, *args, **kwargs):
        looked[0] += len(str(path).split("/"))
        return readlink(self, path, *args, **kwargs)

    monkeypatch.setattr(kind, "lstat", counted_lstat)
    monkeypatch.setattr(kind, "readlink", counted_readlink)
    return looked


def test_judging_one_symlink_member_is_bounded(make_root, tmp_path: Path, monkeypatch):
    ws, outside = tmp_path / "ws", tmp_path / "outside"
    ws.mkdir()
    outside.mkdir()
    (outside / "secret").write_bytes(b"S")
    root = make_root(str(ws))
    looked = _counting_lookups(monkeypatch, root)
    archive = _chain_archive()
    before = _fds()
    try:
        result = root.extract(io.BytesIO(archive))
        left_open = _fds() - before
    finally:
        monkeypatch.undo()
        root.close()
    assert left_open == 0
    links = 2 * HOPS + PROBES + 1
    assert looked[0] <= PER_LINK * links, f"{looked[0]} components looked up for {links} links"
    assert sorted(os.listdir(outside)) == ["secret"]
    assert result.stop is None
    assert {one.reason for one in result.refused} <= {ExtractReason.LOOP}
    landed = {one.name for one in result.landed}
    assert "/".join(["d"] * DEPTH) + "/near" in landed
    # whatever landed leads inside the root
    for one in result.landed:
        if one.kind == "symlink":
            assert os.path.realpath(ws / one.path).startswith(str(ws.resolve()))


#: what the test below sets the extraction's whole judging budget to
#: (``extract.MAX_EXTRACT_LEADS_WORK``, 2^24 by default): the same rule at a
#: scale a test can afford
WHOLE = 100_000


def test_judging_every_symlink_member_of_one_archive_is_bounded(make_root, tmp_path: Path,
                                                                monkeypatch):
    """One hop down the deep directory and back (about 7,500 steps to
    judge, under one judgment's bound, so it lands) and sixty links to it,
    each judged at that cost when made and again at the end: the bound on
    each alone left an archive of 50,000 such members at an hour of
    lookups.  The extraction as a whole has a bound too; past it, every
    symlink member is refused (``LOOP``) unjudged, and whatever landed
    leads inside."""
    from corral.contained._ops import extract as extract_module

    monkeypatch.setattr(extract_module, "MAX_EXTRACT_LEADS_WORK", WHOLE, raising=False)
    this = sys.modules[__name__]
    monkeypatch.setattr(this, "PROBES", 60)
    monkeypatch.setattr(this, "HOPS", 1)
    ws, outside = tmp_path / "ws", tmp_path / "outside"
    ws.mkdir()
    outside.mkdir()
    root = make_root(str(ws))
    looked = _counting_lookups(monkeypatch, root)
    try:
        result = root.extract(io.BytesIO(_chain_archive()))
    finally:
        monkeypatch.undo()
        root.close()
    # the whole bound, one judgment's own, and the lookups of what lands
    assert looked[0] <= WHOLE + PER_LINK, f"{looked[0]} components looked up"
    assert result.stop is None
    assert {one.reason for one in result.refused} <= {ExtractReason.LOOP}
    assert os.listdir(outside) == []
    for one in result.landed:
        if one.kind == "symlink":
            assert os.path.realpath(ws / one.path).startswith(str(ws.resolve()))
