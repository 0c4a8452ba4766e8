"""Hostile archives against ``Root.extract`` (THREATS.md row 28).

Each test builds a hostile archive here and extracts it on every backend
config.  Beyond the owner's own hostile-archive suite: archives that
amplify (a sparse tar member, a zip symlink entry whose "target" inflates
to hundreds of megabytes), and a hard-link member naming a file that is
already a second name of an outside inode.
"""

from __future__ import annotations

import io
import os
import stat
import struct
import tarfile
import tracemalloc
import zipfile

import pytest

from corral.testing import changes, snapshot

SECRET = b"OUTSIDE-SECRET"


@pytest.fixture
def site(tmp_path):
    """``ws`` (the root) beside ``outside`` holding a 0600 secret."""
    ws = tmp_path / "ws"
    outside = tmp_path / "outside"
    ws.mkdir()
    outside.mkdir()
    secret = outside / "secret"
    secret.write_bytes(SECRET)
    secret.chmod(0o600)
    os.utime(secret, (1_500_000_000, 1_500_000_000))
    return ws, outside


def _gnu_sparse_tar(name: str, real_size: int, tail: bytes) -> bytes:
    """A GNU tar holding one old-style sparse member (type ``S``): ``real_size``
    bytes of which only the last ``len(tail)`` are stored (what ``tar --sparse``
    writes for a file that is one hole and a few bytes)."""
    header = bytearray(512)
    header[0:len(name)] = name.encode()
    header[100:108] = b"0000644\0"
    header[108:116] = b"0000000\0"
    header[116:124] = b"0000000\0"
    header[124:136] = b"%011o\0" % len(tail)  # bytes stored in the archive
    header[136:148] = b"%011o\0" % 1_600_000_000
    header[156:157] = b"S"
    header[257:265] = b"ustar  \0"  # GNU magic
    header[386:398] = b"%011o\0" % (real_size - len(tail))  # first map entry: offset
    header[398:410] = b"%011o\0" % len(tail)  # ... and length
    header[483:495] = b"%011o\0" % real_size  # the member's real size
    header[148:156] = b" " * 8
    header[148:156] = b"%06o\0 " % sum(header)
    data = tail + b"\0" * (-len(tail) % 512)
    return bytes(header) + data + b"\0" * 1024


def test_sparse_member_stays_sparse(make_root, site):
    """A 2.5 KiB tar with a 64 MiB sparse member: tarfile.extractall makes a
    sparse file (no blocks for the hole); Root.extract must not write the hole
    out as zeros (an archive of kilobytes filling gigabytes of disk)."""
    ws, outside = site
    real = 64 * 1024 * 1024
    archive = _gnu_sparse_tar("sp", real, b"END")
    with tarfile.open(fileobj=io.BytesIO(archive)) as tf:  # the archive is what we meant
        info = tf.getmember("sp")
        assert info.issparse() and info.size == real
    before = snapshot(str(outside))
    root = make_root(str(ws))
    result = root.extract(io.BytesIO(archive))
    assert result.extracted == ["sp"] and not result.refused
    landed = os.stat(ws / "sp")
    assert landed.st_size == real
    with open(ws / "sp", "rb") as f:
        f.seek(real - 3)
        assert f.read() == b"END"
    assert landed.st_blocks * 512 < 4 * 1024 * 1024, \
        f"the hole was written out: {landed.st_blocks * 512} bytes on disk for 3 stored bytes"
    assert not changes(before, snapshot(str(outside)))


def test_zip_symlink_entry_is_not_inflated_whole(make_root, site):
    """A zip entry marked as a symlink whose content inflates to 32 MiB (the
    zip is about 32 KiB): a link target is at most PATH_MAX bytes, so the
    extractor must not read (and hold, and echo in its refusal) the rest."""
    ws, outside = site
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as zf:
        info = zipfile.ZipInfo("link")
        info.create_system = 3
        info.external_attr = (stat.S_IFLNK | 0o777) << 16
        info.compress_type = zipfile.ZIP_DEFLATED
        zf.writestr(info, b"a" * (32 * 1024 * 1024))
    assert len(buf.getvalue()) < 1024 * 1024
    root = make_root(str(ws))
    tracemalloc.start()
    try:
        result = root.extract(buf)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert [r.name for r in result.refused] == ["link"]
    assert not (ws / "link").exists()
    assert len(result.refused[0].message) < 8192, "the refusal echoes the whole 'target'"
    assert peak < 8 * 1024 * 1024, f"extracting one symlink entry allocated {peak >> 20} MiB"


def test_hard_link_member_to_a_second_name_changes_nothing_outside(make_root, site):
    """``pre`` in the tree is a second name of an outside 0600 secret (a local
    user made it).  A tar hard-link member ``h -> pre`` (mode 0644, mtime 0)
    may add a name, but must not chmod or re-date the shared inode: the
    secret outside would become world-readable."""
    ws, outside = site
    os.link(outside / "secret", ws / "pre")
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w", format=tarfile.GNU_FORMAT) as tf:
        info = tarfile.TarInfo("h")
        info.type = tarfile.LNKTYPE
        info.linkname = "pre"
        info.mode = 0o644
        info.mtime = 0
        tf.addfile(info)
    buf.seek(0)
    secret = outside / "secret"
    before = os.stat(secret)
    root = make_root(str(ws))
    root.extract(buf)
    after = os.stat(secret)
    assert stat.S_IMODE(after.st_mode) == 0o600, "the outside secret's mode was changed"
    assert after.st_mtime_ns == before.st_mtime_ns, "the outside secret was re-dated"
    assert secret.read_bytes() == SECRET


def _zip_two_members(method: int = zipfile.ZIP_DEFLATED) -> bytearray:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", method) as zf:
        zf.writestr("a.txt", b"hello" * 100)
        zf.writestr("b.txt", b"second")
    return bytearray(buf.getvalue())


def _encrypted_flag() -> bytes:
    data = _zip_two_members()
    data[6] |= 1  # general purpose flag bit 0: encrypted (local header)
    data[data.find(b"PK\x01\x02") + 8] |= 1  # ... and central directory
    return bytes(data)


def _unknown_method() -> bytes:
    data = _zip_two_members()
    struct.pack_into("<H", data, 8, 99)  # AES (WinZip), which zipfile cannot read
    struct.pack_into("<H", data, data.find(b"PK\x01\x02") + 10, 99)
    return bytes(data)


def _corrupt_deflate() -> bytes:
    data = _zip_two_members()
    start = 30 + len("a.txt")  # a.txt's compressed data
    data[start:start + 8] = b"\xff" * 8
    return bytes(data)


def _truncated_gzip_tar() -> bytes:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tf:
        payload = os.urandom(100_000)
        info = tarfile.TarInfo("x.txt")
        info.size = len(payload)
        tf.addfile(info, io.BytesIO(payload))
    whole = buf.getvalue()
    return whole[:len(whole) // 2]


DOCUMENTED = (tarfile.ReadError, zipfile.BadZipFile, OSError)


@pytest.mark.parametrize("make", [_encrypted_flag, _unknown_method, _corrupt_deflate,
                                  _truncated_gzip_tar],
                         ids=["encrypted", "unknown-method", "corrupt-deflate", "truncated-gzip"])
def test_a_damaged_or_unreadable_archive_raises_what_extract_documents(make_root, site, make):
    """extract() documents TypeError (not an archive), tarfile.ReadError /
    zipfile.BadZipFile (damaged) and OSError (the environment).  An
    encrypted entry, an unknown compression method, a corrupt deflate stream
    or a truncated .tar.gz raise RuntimeError, NotImplementedError,
    zlib.error and EOFError in the standard library: an embedder catching
    what is documented would crash on a hostile archive.  Either refuse the member (and go on) or
    raise a documented type; nothing half-written is left either way."""
    ws, outside = site
    root = make_root(str(ws))
    try:
        result = root.extract(io.BytesIO(make()))
    except DOCUMENTED:
        pass
    else:
        assert result.refused, "an unreadable member was neither refused nor raised"
    assert not [n for n in os.listdir(ws) if n.endswith(".corral-tmp")]
