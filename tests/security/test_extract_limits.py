"""``Root.extract``'s bounds for untrusted archives, on every backend config:
the limits on bytes written, members and compression ratio (a zip bomb, a
tar.gz bomb, 100,000 tiny members), overlapping zip entries (CVE-2024-0450,
refused on every Python version), cancellation and progress in the shapes
the tools use, ``members=``, zip mtimes, and ``TypeError`` for what cannot
be read as an archive.  After every stop: nothing half-written, no
temporary file left, nothing outside changed."""

from __future__ import annotations

import io
import os
import struct
import tarfile
import time
import zipfile
from pathlib import Path

import pytest

from corral.contained import (ExtractLimits, ExtractProgress, ExtractReason, ExtractStop,
                              Landed)
from corral.testing import changes, snapshot
from corral.tools import CancelToken

pytestmark = pytest.mark.filterwarnings("ignore:Duplicate name")


@pytest.fixture
def site(sec_tmp):
    base = Path(sec_tmp)
    (base / "ws").mkdir()
    (base / "outside").mkdir()
    (base / "outside" / "secret").write_bytes(b"SECRET")
    return base


def run(make_root, site: Path, data: bytes | io.IOBase, **kwargs):
    before = snapshot(site, exclude=("ws",))
    root = make_root(site / "ws")
    result = root.extract(io.BytesIO(data) if isinstance(data, bytes) else data, **kwargs)
    assert changes(before, snapshot(site, exclude=("ws",))) == []
    leftovers = [name for _, _, names in os.walk(site / "ws") for name in names
                 if name.endswith(".corral-tmp")]
    assert leftovers == [], "a temporary file was left"
    return result


def tar_of(files: list[tuple[str, bytes]], mode: str = "w") -> bytes:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode=mode) as tf:
        for name, data in files:
            info = tarfile.TarInfo(name)
            info.size, info.mtime = len(data), 1_600_000_000
            tf.addfile(info, io.BytesIO(data))
    return buf.getvalue()


def zip_of(files: list[tuple[str, bytes]], method: int = zipfile.ZIP_DEFLATED) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", method) as zf:
        for name, data in files:
            zf.writestr(zipfile.ZipInfo(name, (2020, 5, 17, 12, 30, 10)), data,
                        compress_type=method)
    return buf.getvalue()


# -- the limits --------------------------------------------------------------------------------

ZEROS = 16 << 20  # a bomb's one member: 16 MiB of zeros, a few KiB compressed


def test_defaults_are_finite():
    limits = ExtractLimits()
    assert limits.max_bytes == 1 << 30 and limits.max_members == 50_000
    assert limits.max_ratio == 100.0
    with pytest.raises(ValueError):
        ExtractLimits(max_bytes=-1)
    with pytest.raises(ValueError):
        ExtractLimits(max_ratio=True)  # type: ignore[arg-type]


@pytest.mark.parametrize("fmt", ["zip", "tar.gz"])
def test_a_bomb_stops_on_the_ratio_with_the_default_limits(make_root, site, fmt):
    files = [("small", b"fine"), ("bomb", bytes(ZEROS)), ("after", b"never")]
    data = zip_of(files) if fmt == "zip" else tar_of(files, "w:gz")
    assert len(data) * 1000 < ZEROS
    result = run(make_root, site, data)
    assert result.stop is ExtractStop.RATIO and result.stopped and not result.ok
    assert result.extracted == ["small"]
    assert [(r.name, r.reason) for r in result.refused] == [("bomb", ExtractReason.LIMIT)]
    assert sorted(os.listdir(site / "ws")) == ["small"]  # nothing half-written
    assert 1 << 20 < result.written <= 100 * len(data) + (1 << 20)


def test_the_ratio_limit_can_be_lifted(make_root, site):
    data = zip_of([("zeros", bytes(4 << 20))])
    result = run(make_root, site, data, limits=ExtractLimits(max_ratio=None))
    assert result.ok and (site / "ws" / "zeros").stat().st_size == 4 << 20


@pytest.mark.parametrize("fmt", ["tar", "zip"])
def test_the_byte_limit(make_root, site, fmt):
    (site / "ws" / "c").write_bytes(b"the old c")
    files = [(name, os.urandom(400)) for name in "abcde"]
    data = tar_of(files) if fmt == "tar" else zip_of(files)
    result = run(make_root, site, data, limits=ExtractLimits(max_bytes=1000))
    assert result.stop is ExtractStop.BYTES
    assert result.extracted == ["a", "b"]
    assert [(r.name, r.reason) for r in result.refused] == [("c", ExtractReason.LIMIT)]
    assert (site / "ws" / "c").read_bytes() == b"the old c"  # replaced only when whole
    assert sorted(os.listdir(site / "ws")) == ["a", "b", "c"]
    assert result.written == 1000 or 800 < result.written <= 1200


def _tiny_tar(count: int) -> bytes:
    """``count`` empty members ``f000000``..., headers made directly (tarfile
    takes seconds for 100,000)."""
    template = bytearray(tarfile.TarInfo("f000000").tobuf(tarfile.USTAR_FORMAT))
    out = bytearray()
    for number in range(count):
        header = bytearray(template)
        header[0:7] = b"f%06d" % number
        header[148:156] = b" " * 8
        header[148:156] = b"%06o\0 " % sum(header)
        out += header
    return bytes(out + bytes(1024))


def _tiny_zip(count: int) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_STORED) as zf:
        for number in range(count):
            zf.writestr(f"f{number:06d}", b"")
    return buf.getvalue()


@pytest.fixture(scope="module")
def tiny():
    return {"tar": _tiny_tar(100_000), "zip": _tiny_zip(100_000)}


def test_100000_tiny_members_zip_stops_before_anything_with_the_defaults(make_root, site, tiny):
    started = time.monotonic()
    result = run(make_root, site, tiny["zip"])
    assert result.stop is ExtractStop.MEMBERS and result.landed == [] and result.refused == []
    assert os.listdir(site / "ws") == []
    assert time.monotonic() - started < 60  # a hang detector, not a speed test


def test_100000_tiny_members_tar_stops_at_the_member_limit(make_root, site, tiny):
    result = run(make_root, site, tiny["tar"], limits=ExtractLimits(max_members=1000))
    assert result.stop is ExtractStop.MEMBERS
    assert len(result.landed) == 1000 and result.landed[-1].path == "f000999"
    assert len(os.listdir(site / "ws")) == 1000


def test_the_member_limit_counts_every_member_read(make_root, site):
    """Refused and filtered members count: an archive of hostile members
    cannot make the extractor read without end."""
    data = tar_of([("../x", b"1"), ("skip", b"2"), ("ok", b"3"), ("more", b"4")])
    result = run(make_root, site, data, limits=ExtractLimits(max_members=3),
                 filter=lambda member, path: None if member.name == "skip" else member)
    assert result.stop is ExtractStop.MEMBERS
    assert result.extracted == ["ok"] and result.skipped == ["skip"]
    assert [r.reason for r in result.refused] == [ExtractReason.OUTSIDE]


# -- overlapping zip entries ----------------------------------------------------------------

def _overlapping_zip() -> bytes:
    """``a`` (stored) holds, as its data, a whole local record of ``b``; the
    central directory points ``b`` at that record, inside ``a``'s data (the
    shape of CVE-2024-0450's overlapping bombs).  ``b`` is also written
    normally (same name, content and date, so the central entries agree)."""
    content = b"B" * 100
    inner = zip_of([("b", content)], zipfile.ZIP_STORED)
    record = inner[:inner.index(b"PK\x01\x02")]  # b's local header and data
    data = bytearray(zip_of([("a", record), ("b", content)], zipfile.ZIP_STORED))
    central = data.index(b"PK\x01\x02", data.index(b"PK\x01\x02") + 4)  # b's central entry
    inside = 30 + len("a")  # a's data starts after its local header
    assert data[inside:inside + 4] == b"PK\x03\x04"
    data[central + 42:central + 46] = struct.pack("<L", inside)
    return bytes(data)


def test_overlapping_zip_entries_are_refused_on_every_python(make_root, site):
    data = _overlapping_zip()
    with zipfile.ZipFile(io.BytesIO(data)) as zf:  # the shape is what we meant
        offsets = sorted(info.header_offset for info in zf.infolist())
        assert offsets == [0, 31]
    result = run(make_root, site, data)
    assert [(r.name, r.reason) for r in result.refused] == [("a", ExtractReason.OVERLAP)]
    assert result.extracted == ["b"] and (site / "ws" / "b").read_bytes() == b"B" * 100
    assert not (site / "ws" / "a").exists()


def test_zip_entries_sharing_one_offset_are_both_refused(make_root, site):
    data = bytearray(zip_of([("a", b"A" * 50), ("c", b"A" * 50)], zipfile.ZIP_STORED))
    central = data.index(b"PK\x01\x02", data.index(b"PK\x01\x02") + 4)
    data[central + 42:central + 46] = struct.pack("<L", 0)
    result = run(make_root, site, bytes(data))
    assert [(r.name, r.reason) for r in result.refused] == [("a", ExtractReason.OVERLAP),
                                                            ("c", ExtractReason.OVERLAP)]
    assert os.listdir(site / "ws") == []


# -- cancel and progress -------------------------------------------------------------------------

@pytest.mark.parametrize("fmt", ["tar", "zip"])
def test_progress_reports_each_member(make_root, site, fmt):
    files = [(f"f{i}", b"x") for i in range(5)]
    seen: list[ExtractProgress] = []
    result = run(make_root, site, tar_of(files) if fmt == "tar" else zip_of(files),
                 progress=seen.append)
    assert result.ok
    total = None if fmt == "tar" else 5
    assert seen == [ExtractProgress(i + 1, total, f"f{i}") for i in range(5)]


def test_cancel_between_members_with_the_tools_token(make_root, site):
    token = CancelToken()

    def progress(report: ExtractProgress) -> None:
        if report.done == 3:
            token.cancel()

    result = run(make_root, site, tar_of([(f"f{i}", b"x") for i in range(6)]),
                 progress=progress, cancel=token)
    assert result.stop is ExtractStop.CANCELLED and result.extracted == ["f0", "f1", "f2"]
    assert result.refused == [] and sorted(os.listdir(site / "ws")) == ["f0", "f1", "f2"]


class _CancelAfter:
    """Cancelled from the ``n``-th look on (a member's data is several
    chunks: the extractor looks between them)."""

    def __init__(self, n: int) -> None:
        self.looks, self.n = 0, n

    @property
    def cancelled(self) -> bool:
        self.looks += 1
        return self.looks >= self.n


@pytest.mark.parametrize("fmt", ["tar", "zip"])
def test_cancel_within_a_member_leaves_nothing_of_it(make_root, site, fmt):
    files = [("first", b"1"), ("big", os.urandom(3 << 20)), ("after", b"2")]
    data = tar_of(files) if fmt == "tar" else zip_of(files, zipfile.ZIP_STORED)
    result = run(make_root, site, data, cancel=_CancelAfter(5))
    assert result.stop is ExtractStop.CANCELLED and result.extracted == ["first"]
    assert [(r.name, r.reason) for r in result.refused] == [("big", ExtractReason.CANCELLED)]
    assert sorted(os.listdir(site / "ws")) == ["first"]


# -- members=, zip times, the result's paths ---------------------------------------------------

def test_members_by_name_and_by_info(make_root, site):
    data = tar_of([("a", b"a"), ("b", b"b"), ("c", b"c")])
    result = run(make_root, site, data, members=["c", "a"])
    assert result.extracted == ["a", "c"]
    with tarfile.open(fileobj=io.BytesIO(data)) as tf:
        pick = [tf.getmember("b")]
        result = make_root(site / "ws").extract(tf, members=pick)
    assert result.extracted == ["b"]
    with pytest.raises(TypeError):
        make_root(site / "ws").extract(io.BytesIO(data), members="abc")
    with pytest.raises(TypeError):
        make_root(site / "ws").extract(io.BytesIO(data), members=[1, 2])


def test_zip_mtimes_are_set(make_root, site):
    data = zip_of([("d/", b""), ("d/f", b"f")])
    run(make_root, site, data)
    want = time.mktime((2020, 5, 17, 12, 30, 10, 0, 0, -1))
    assert os.stat(site / "ws" / "d" / "f").st_mtime == want
    assert os.stat(site / "ws" / "d").st_mtime == want


def test_landed_names_the_canonical_path(make_root, site):
    (site / "ws" / "real").mkdir()
    os.symlink("real", site / "ws" / "via")
    data = tar_of([("via/f", b"f"), ("./x/../g", b"g")])
    result = run(make_root, site, data)
    assert result.landed == [Landed("via/f", "real/f", "file"), Landed("./x/../g", "g", "file")]


# -- what is no archive ---------------------------------------------------------------------------

class _ReadOnly:
    """Something with ``read`` and nothing else (no seek)."""

    def __init__(self, data: bytes) -> None:
        self.data = io.BytesIO(data)

    def read(self, size: int = -1) -> bytes:
        return self.data.read(size)


def test_what_cannot_be_read_as_an_archive_is_a_type_error(make_root, site):
    root = make_root(site / "ws")
    data = tar_of([("a", b"a")])
    read_end, write_end = os.pipe()
    os.write(write_end, data)
    os.close(write_end)
    with open(read_end, "rb") as pipe:
        with pytest.raises(TypeError, match="seekable"):
            root.extract(pipe)
    with pytest.raises(TypeError, match="seek"):
        root.extract(_ReadOnly(data))  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="binary"):
        root.extract(io.StringIO("text"))  # type: ignore[arg-type]
    for thing in (12345, None, b"bytes are not a file", ["a"]):
        with pytest.raises(TypeError):
            root.extract(thing)  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        root.extract(io.BytesIO(data), limits="none")  # type: ignore[arg-type]
    assert os.listdir(site / "ws") == []
