"""Hostile tar headers against ``Root.extract`` (THREATS row 28), on every
backend config.

``Root.extract`` documents ``tarfile.ReadError`` for an archive whose
members cannot be found and ``OSError`` for the environment.  Each archive
here is a few blocks an attacker writes by hand: a PAX or GNU long-name
header, a member size or a sparse map holding a number no file or memory
holds.  Before, ``MemoryError``, ``OverflowError`` and ``ValueError``
came out of ``tarfile``'s parsing or of the sparse write, and a long name
of tens of megabytes (a few KiB gzipped) was read whole into memory.
Each case also checks that nothing outside changed and no fd was left open.
"""

from __future__ import annotations

import gzip
import os
import tarfile
import tracemalloc
from pathlib import Path

import pytest

from corral.contained import ExtractLimits, ExtractReason, ExtractStop

END = b"\0" * 1024
SECRET = b"OUTSIDE-SECRET"


def _header(name: bytes, kind: bytes = b"0", size: int = 0, raw_size: bytes | None = None,
            gnu: bool = False, fields: tuple[tuple[int, bytes], ...] = ()) -> bytearray:
    """One 512-byte tar header; ``raw_size``: the size field as given
    (a base-256 number no octal field holds)."""
    header = bytearray(512)
    header[0:len(name)] = name
    header[100:108] = b"0000644\0"
    header[108:116] = b"0000000\0"
    header[116:124] = b"0000000\0"
    header[124:136] = raw_size if raw_size is not None else b"%011o\0" % size
    header[136:148] = b"%011o\0" % 1_600_000_000
    header[156:157] = kind
    header[257:265] = b"ustar  \0" if gnu else b"ustar\x0000"
    for at, value in fields:
        header[at:at + len(value)] = value
    header[148:156] = b" " * 8
    header[148:156] = b"%06o\0 " % sum(header)
    return header


def _base256(number: int) -> bytes:
    """A 12-byte numeric field in GNU's base-256 form."""
    return bytes([0x80]) + number.to_bytes(11, "big")


def _block(data: bytes) -> bytes:
    return data + b"\0" * (-len(data) % 512)


def _pax(*records: tuple[bytes, bytes]) -> bytes:
    body = b""
    for key, value in records:
        record = b" " + key + b"=" + value + b"\n"
        length = len(record) + 1
        while len(str(length)) + len(record) != length:
            length += 1
        body += str(length).encode() + record
    return bytes(_header(b"././@PaxHeader", b"x", len(body))) + _block(body)


def _file(name: bytes, data: bytes) -> bytes:
    return bytes(_header(name, size=len(data))) + _block(data)


def _gnu_sparse(name: bytes, offset: int, real_size: int, stored: bytes) -> bytes:
    """An old-style GNU sparse member (type ``S``) whose one block of
    ``stored`` bytes lies at ``offset`` of a file of ``real_size`` bytes."""
    def number(value: int) -> bytes:
        return _base256(value) if value >= 8 ** 11 else b"%011o\0" % value
    header = _header(name, b"S", len(stored), gnu=True,
                     fields=((386, number(offset)), (398, b"%011o\0" % len(stored)),
                             (483, number(real_size))))
    return bytes(header) + _block(stored)


AFTER = _file(b"after", b"after\n")

#: archives whose members cannot be found: a header that claims more bytes
#: than any memory holds, a size no seek reaches, a sparse map cut short
DAMAGED = {
    "pax_header_of_a_tebibyte": bytes(_header(b"././@PaxHeader", b"x",
                                              raw_size=_base256(1 << 40))) + _block(b"x"),
    "long_name_of_a_tebibyte": bytes(_header(b"././@LongLink", b"L",
                                             raw_size=_base256(1 << 40))) + _block(b"x"),
    "pax_header_of_2_70_bytes": bytes(_header(b"././@PaxHeader", b"x",
                                              raw_size=_base256(1 << 70))) + _block(b"x"),
    "member_of_2_70_bytes": bytes(_header(b"big", raw_size=_base256(1 << 70))) + _block(b"x"),
    "pax_size_of_30_digits": _pax((b"size", b"9" * 30)) + _file(b"x", b"y"),
    "sparse_1_0_map_cut_short": _pax((b"GNU.sparse.major", b"1"), (b"GNU.sparse.minor", b"0"),
                                     (b"GNU.sparse.name", b"s"),
                                     (b"GNU.sparse.realsize", b"10"))
    + bytes(_header(b"x", size=512)) + _block(b"1\n" + b"9" * 26 + b"\n"),
}


@pytest.fixture
def site(tmp_path: Path) -> tuple[Path, Path]:
    """``ws`` (the root) beside ``outside`` holding a 0600 secret."""
    ws, outside = tmp_path / "ws", tmp_path / "outside"
    ws.mkdir()
    outside.mkdir()
    (outside / "secret").write_bytes(SECRET)
    (outside / "secret").chmod(0o600)
    return ws, outside


def _fds() -> int:
    return len(os.listdir("/proc/self/fd"))


def _outside(outside: Path) -> list[tuple[str, bytes]]:
    return sorted((p.name, p.read_bytes()) for p in outside.iterdir())


@pytest.mark.parametrize("case", sorted(DAMAGED))
def test_a_header_no_memory_or_file_holds_raises_read_error(make_root, site, case):
    ws, outside = site
    archive = ws.parent / "a.tar"
    archive.write_bytes(DAMAGED[case] + AFTER + END)
    before, seen = _fds(), _outside(outside)
    root = make_root(str(ws))
    # no ratio: a size past the archive's end stops on it first (below)
    unbounded = ExtractLimits(max_ratio=None)
    try:
        with pytest.raises(tarfile.ReadError):
            root.extract(str(archive), limits=unbounded)
        with open(archive, "rb") as raw:
            with pytest.raises(tarfile.ReadError):
                root.extract(raw, limits=unbounded)
        # a TarFile the caller opened, the hostile header after a member
        second = ws.parent / "b.tar"
        second.write_bytes(AFTER + DAMAGED[case] + END)
        with tarfile.open(second) as archive_file:
            with pytest.raises(tarfile.ReadError):
                root.extract(archive_file, limits=unbounded)
            assert archive_file.tarinfo is tarfile.TarInfo
    finally:
        root.close()
    assert _fds() == before
    assert _outside(outside) == seen
    assert not [name for name in os.listdir(ws) if name != "after"]


@pytest.mark.parametrize("case", ["member_of_2_70_bytes", "pax_size_of_30_digits"])
def test_a_member_size_past_the_archive_stops_on_the_ratio(make_root, site, case):
    """Under the default limits, a member whose stated size passes the end
    of the archive is refused unreadable and the extraction stops on the
    ratio: its size is where the stream would be read to next."""
    ws, outside = site
    archive = ws.parent / "a.tar"
    archive.write_bytes(DAMAGED[case] + AFTER + END)
    before = _fds()
    root = make_root(str(ws))
    try:
        result = root.extract(str(archive))
    finally:
        root.close()
    assert [one.reason for one in result.refused] == [ExtractReason.UNREADABLE]
    assert result.stop is ExtractStop.RATIO
    assert os.listdir(ws) == []
    assert _fds() == before
    assert _outside(outside) == [("secret", SECRET)]


def test_a_long_name_bomb_is_read_to_a_bound(make_root, site):
    """A GNU long-name header of 64 MiB of zeros: 64 KiB gzipped, read
    whole into memory before (the member then refused for its empty name)."""
    ws, outside = site
    archive = ws.parent / "bomb.tar.gz"
    size = 64 << 20
    with gzip.open(archive, "wb") as out:
        out.write(bytes(_header(b"././@LongLink", b"L", size)))
        zeros = bytes(1 << 20)
        for _ in range(size >> 20):
            out.write(zeros)
        out.write(AFTER + END)
    before = _fds()
    root = make_root(str(ws))
    tracemalloc.start()
    try:
        with pytest.raises(tarfile.ReadError):
            root.extract(str(archive))
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
        root.close()
    assert peak < 16 << 20, f"{peak} bytes held while reading one header"
    assert _fds() == before
    assert _outside(outside) == [("secret", SECRET)]


@pytest.mark.parametrize("offset", [1 << 63, 1 << 70])
def test_a_sparse_member_no_file_can_hold_is_refused_and_the_rest_lands(make_root, site, offset):
    ws, outside = site
    archive = ws.parent / "sparse.tar"
    archive.write_bytes(_gnu_sparse(b"s", offset, offset + 4, b"abcd") + AFTER + END)
    before = _fds()
    root = make_root(str(ws))
    try:
        result = root.extract(str(archive))
    finally:
        root.close()
    assert [(one.name, one.reason) for one in result.refused] == [("s", ExtractReason.UNREADABLE)]
    assert result.extracted == ["after"]
    assert sorted(os.listdir(ws)) == ["after"]
    assert _fds() == before
    assert _outside(outside) == [("secret", SECRET)]


def test_the_data_of_a_refused_member_counts_toward_the_ratio(make_root, site):
    """A .tar.gz whose member named ``../x`` holds 32 MiB of zeros (32 KiB
    gzipped): refused, its data was then inflated to be passed over, counted
    by no limit (a thousand such members: hours of inflating under the
    default limits).  Now what a tar's stream has been read to counts toward
    the compression ratio, so the extraction stops before passing over it."""
    ws, outside = site
    archive = ws.parent / "skipped.tar.gz"
    size = 32 << 20
    with gzip.open(archive, "wb") as out:
        out.write(bytes(_header(b"../x", size=size)))
        zeros = bytes(1 << 20)
        for _ in range(size >> 20):
            out.write(zeros)
        out.write(AFTER + END)
    root = make_root(str(ws))
    try:
        with tarfile.open(archive, "r:gz") as opened:
            result = root.extract(opened)
            read_to = opened.fileobj.tell()
    finally:
        root.close()
    assert [(one.name, one.reason) for one in result.refused] == [("../x", ExtractReason.OUTSIDE)]
    assert result.stop is ExtractStop.RATIO
    assert read_to < size, f"the stream was inflated to {read_to} bytes"
    assert os.listdir(ws) == []
    assert _outside(outside) == [("secret", SECRET)]
