"""An independent red-team pass over ``Root.extract`` on damaged archives
an attacker shapes (found by flipping, cutting and inserting bytes in small
tar, tar.gz and zip archives).

``Root.extract`` documents ``tarfile.ReadError`` / ``zipfile.BadZipFile``
for an archive that cannot be read and ``OSError`` for the environment: an
embedder catches those.  Each archive below raised something else
(``ValueError`` from a seek to a negative offset, ``NotImplementedError``,
``EOFError``, ``IndexError``), and nothing may land outside the
destination either way.
"""

from __future__ import annotations

import io
import struct
import tarfile
import zipfile
from pathlib import Path

import pytest


def _zip(*names: str) -> bytes:
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_STORED) as archive:
        for name in names:
            archive.writestr(zipfile.ZipInfo(name), b"hello\n" * 20)
    return out.getvalue()


def _central_directory(data: bytes) -> int:
    return data.index(b"PK\x01\x02")


def _zip_cut_before_its_directory() -> bytes:
    """Bytes cut from the first entry's data: the central directory's
    offsets now lead before the start of the file."""
    data = _zip("a.txt", "b.txt")
    return data[:40] + data[80:]


def _zip_of_an_unknown_version() -> bytes:
    """The central directory says version 25.2 is needed to extract."""
    data = bytearray(_zip("a.txt"))
    at = _central_directory(bytes(data)) + 6  # "version needed to extract"
    data[at:at + 2] = struct.pack("<H", 252)
    return bytes(data)


def _gzip_whose_header_runs_past_the_end() -> bytes:
    """A tar.gz whose gzip header says an extra field of 65,535 bytes follows."""
    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode="w:gz") as archive:
        info = tarfile.TarInfo("a.txt")
        info.size = 6
        archive.addfile(info, io.BytesIO(b"hello\n"))
    data = bytearray(out.getvalue())
    data[3] |= 0x04  # FEXTRA
    return bytes(data[:10] + struct.pack("<H", 0xFFFF) + data[10:40])


DAMAGED = {
    "zip-unknown-version": _zip_of_an_unknown_version,
    "gzip-header-past-the-end": _gzip_whose_header_runs_past_the_end,
}


def _outside(base: Path) -> list[str]:
    return sorted(str(p.relative_to(base)) for p in base.rglob("*")
                  if not p.is_relative_to(base / "out"))


@pytest.mark.parametrize("shape", list(DAMAGED))
def test_a_damaged_archive_raises_what_extract_documents(tmp_path, make_root, shape):
    (tmp_path / "out").mkdir()
    before = _outside(tmp_path)
    root = make_root(str(tmp_path / "out"))
    data = DAMAGED[shape]()
    with pytest.raises((tarfile.ReadError, zipfile.BadZipFile)):
        root.extract(io.BytesIO(data))
    archive = tmp_path / "archive.bin"
    archive.write_bytes(data)
    with pytest.raises((tarfile.ReadError, zipfile.BadZipFile)):
        root.extract(str(archive))
    archive.unlink()
    assert _outside(tmp_path) == before


def test_a_zip_entry_whose_offset_leads_before_the_start_is_refused_alone(tmp_path, make_root):
    """The cut entry's data cannot be placed (as an entry whose local
    header cannot be read): refused; the whole entry after it lands."""
    (tmp_path / "out").mkdir()
    before = _outside(tmp_path)
    root = make_root(str(tmp_path / "out"))
    done = root.extract(io.BytesIO(_zip_cut_before_its_directory()))
    assert [one.name for one in done.refused] == ["a.txt"]
    assert done.extracted == ["b.txt"]
    assert (tmp_path / "out" / "b.txt").read_bytes() == b"hello\n" * 20
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == ["b.txt"]
    assert _outside(tmp_path) == before


def test_a_zip_member_with_an_empty_name_is_refused_and_the_rest_lands(tmp_path, make_root):
    root = make_root(str(tmp_path))
    done = root.extract(io.BytesIO(_zip("", "b.txt")))
    assert done.extracted == ["b.txt"]
    assert [one.name for one in done.refused] == [""]
    assert (tmp_path / "b.txt").read_bytes() == b"hello\n" * 20
    assert sorted(p.name for p in tmp_path.iterdir()) == ["b.txt"]
