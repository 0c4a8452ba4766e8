"""An independent red-team pass (round twenty-four, third team) over
``Root.extract`` and a sparse tar member larger than the destination's
filesystem holds a file, though smaller than any file can be (``off_t``):
one stored block of four bytes at 2**50, or a real size of 2**44 or
2**50 (ext4's largest file is 16 TiB).  The write of its block or its
size failed ``EFBIG``, which was raised out of ``extract`` as an error of
the environment: a 1.5 KiB archive stopped the extraction there, every
member after it left unmade.  It is the archive's content (THREATS row
28: a sparse member with a bad map is refused and the extraction goes
on): now the member is refused ``unreadable``, nothing of it left, the
rest lands.  Where the filesystem holds such a file (tmpfs, XFS,
btrfs), it lands sparse, its holes not written.  On every backend config.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from corral.contained import ExtractReason

END = b"\0" * 1024


def _header(name: bytes, kind: bytes, size: int, fields: tuple[tuple[int, bytes], ...] = ()
            ) -> bytes:
    header = bytearray(512)
    header[0:len(name)] = name
    header[100:108] = b"0000644\0"
    header[108:116] = b"0000000\0"
    header[116:124] = b"0000000\0"
    header[124:136] = b"%011o\0" % size
    header[136:148] = b"%011o\0" % 1_600_000_000
    header[156:157] = kind
    header[257:265] = b"ustar  \0"
    for at, value in fields:
        header[at:at + len(value)] = value
    header[148:156] = b" " * 8
    header[148:156] = b"%06o\0 " % sum(header)
    return bytes(header)


def _number(value: int) -> bytes:
    """A 12-byte numeric field: octal, or GNU's base-256 past 8**11."""
    return bytes([0x80]) + value.to_bytes(11, "big") if value >= 8 ** 11 \
        else b"%011o\0" % value


def _block(data: bytes) -> bytes:
    return data + b"\0" * (-len(data) % 512)


def _sparse(offset: int, real_size: int) -> bytes:
    """An old-GNU sparse member ``s`` whose one block ``abcd`` lies at
    ``offset`` of a file of ``real_size`` bytes."""
    return _header(b"s", b"S", 4, ((386, _number(offset)), (398, b"%011o\0" % 4),
                                   (483, _number(real_size)))) + _block(b"abcd")


AFTER = _header(b"after", b"0", 6) + _block(b"after\n")


@pytest.mark.parametrize("offset,real_size", [(1 << 50, (1 << 50) + 4), (0, 1 << 44),
                                              (0, 1 << 50)],
                         ids=["block_at_2_50", "size_2_44", "size_2_50"])
def test_a_sparse_member_the_filesystem_cannot_hold_is_refused_and_the_rest_lands(
        tmp_path: Path, make_root, offset: int, real_size: int) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    (tmp_path / "secret").write_bytes(b"OUTSIDE")
    archive = tmp_path / "sparse.tar"
    archive.write_bytes(_sparse(offset, real_size) + AFTER + END)
    result = make_root(str(ws)).extract(str(archive))  # raised OSError (EFBIG) on main
    assert "after" in result.extracted, result
    assert (ws / "after").read_bytes() == b"after\n"
    if result.refused:
        assert [(one.name, one.reason) for one in result.refused] == \
            [("s", ExtractReason.UNREADABLE)], result.refused
        assert sorted(os.listdir(ws)) == ["after"]  # no temporary file left
    else:  # a filesystem that holds it: sparse, its block where it was
        info = os.stat(ws / "s")
        assert info.st_size == real_size and info.st_blocks * 512 < 1 << 20
        with open(ws / "s", "rb") as landed:
            landed.seek(offset)
            assert landed.read(4) == b"abcd"
    assert sorted(os.listdir(tmp_path)) == ["secret", "sparse.tar", "ws"]
    assert (tmp_path / "secret").read_bytes() == b"OUTSIDE"
