"""An independent red-team pass over ``Root.extract`` while another program
changes the destination: once every member is in, each symlink the
extraction made is checked again (a later member may have turned it
outward).  A directory holding one of them moved out of the root and
replaced by a link leading outside (here between two members, through the
``progress`` callback, as a local process could at any moment) made that
check raise ``EscapeError`` out of ``extract``: the extraction, complete,
was reported as failed with no result, and every symlink after that one
went unchecked (one another program pointed outside stayed).  Now the
link that cannot be reached is reported refused (not landed), the others
are checked, and nothing outside changes; on every backend config.
"""

from __future__ import annotations

import io
import os
import tarfile
from pathlib import Path

from corral.contained import ExtractProgress, ExtractReason


def _archive() -> io.BytesIO:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w", format=tarfile.PAX_FORMAT) as tf:
        for kind, name, link in (("dir", "d", ""), ("symlink", "d/s1", "f"),
                                 ("symlink", "z", "f"), ("dir", "last", "")):
            info = tarfile.TarInfo(name)
            info.type = tarfile.DIRTYPE if kind == "dir" else tarfile.SYMTYPE
            info.linkname = link
            tf.addfile(info)
    buf.seek(0)
    return buf


def _outside(base: Path) -> dict[str, bytes]:
    return {str(p.relative_to(base)): p.read_bytes() for p in sorted(base.rglob("*"))
            if p.is_file() and not p.is_symlink() and "dest" not in p.parts}


def test_a_directory_moved_out_during_extraction_is_reported_and_the_rest_checked(
        tmp_path, make_root):
    dest, away = tmp_path / "dest", tmp_path / "away"
    dest.mkdir()
    (tmp_path / "secret").write_bytes(b"OUTSIDE\n")
    before = _outside(tmp_path)
    root = make_root(str(dest))

    def meddle(step: ExtractProgress) -> None:
        if step.message == "z":  # another program: d goes, a link out takes its name,
            os.rename(dest / "d", away)  # and the link z is pointed outside
            os.symlink(str(away), dest / "d")
            os.remove(dest / "z")
            os.symlink("../secret", dest / "z")

    result = root.extract(_archive(), progress=meddle)  # raised EscapeError before
    reasons = {refused.name: refused.reason for refused in result.refused}
    assert reasons == {"d/s1": ExtractReason.CONFLICT, "z": ExtractReason.LINK_OUTSIDE}, \
        result.refused
    assert {landed.path for landed in result.landed} == {"d", "last"}
    assert not (dest / "z").is_symlink()  # the link leading out was removed
    assert os.readlink(away / "s1") == "f"  # the one out of reach is left where it went
    assert _outside(tmp_path) == before
