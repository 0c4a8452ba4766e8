"""An independent red-team pass over apply_patch against the disk.

A file read as UTF-16 or UTF-32 (its byte order mark says so) was written
back by a patch as UTF-8 with a UTF-8 byte order mark: read_file and
edit_file keep the file's encoding, the patch's answer said "updated" and
the file's encoding was gone.

A hunk ending in ``*** End of File`` whose lines are not the file's last
ones was placed at the first of several matches earlier in the file with
no ambiguity refusal (an ambiguous hunk is refused, docs/edit-tools.md),
and one whose lines end the file only with trailing whitespace forgiven
went to an exact match higher up, not to the end the patch names.

Both dialects, every backend config.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from corral.tools import Toolbox

DIALECTS = ["codex", "v4a"]
WIDE = ["utf-16-le", "utf-16-be", "utf-32-le", "utf-32-be"]


def _patch(body: str) -> str:
    return f"*** Begin Patch\n*** Update File: a.txt\n{body}*** End Patch\n"


@pytest.mark.parametrize("dialect", DIALECTS)
@pytest.mark.parametrize("encoding", WIDE)
def test_a_patch_keeps_a_wide_encoding(tmp_path: Path, make_toolbox, encoding: str,
                                       dialect: str) -> None:
    target = tmp_path / "a.txt"
    target.write_bytes(("\ufeff" + "first\nsecond\n").encode(encoding))
    with make_toolbox(tmp_path) as tools:
        out = tools.call("apply_patch", {"input": _patch("@@\n-first\n+premier\n"),
                                         "dialect": dialect})
        assert out["ok"] is True, out
        assert target.read_bytes() == ("\ufeff" + "premier\nsecond\n").encode(encoding)
        read = tools.call("read_file", {"path": "a.txt"})
        assert read["ok"] is True, read
        assert read["sha256"] == out["files"][0]["sha256"]
        assert read["encoding"] == encoding


@pytest.mark.parametrize("dialect", DIALECTS)
def test_a_move_keeps_a_wide_encoding(tmp_path: Path, make_toolbox, dialect: str) -> None:
    (tmp_path / "a.txt").write_bytes("\ufeffx\ny\n".encode("utf-16-le"))
    patch = ("*** Begin Patch\n*** Update File: a.txt\n*** Move to: b.txt\n@@\n-x\n+z\n"
             "*** End Patch\n")
    with make_toolbox(tmp_path) as tools:
        out = tools.call("apply_patch", {"input": patch, "dialect": dialect})
        assert out["ok"] is True, out
    assert not (tmp_path / "a.txt").exists()
    assert (tmp_path / "b.txt").read_bytes() == "\ufeffz\ny\n".encode("utf-16-le")


@pytest.mark.parametrize("dialect", DIALECTS)
@pytest.mark.parametrize("text", ["x\nx\nz\n", "x\nz\nx\nw\n"])
def test_an_end_of_file_hunk_found_twice_elsewhere_is_ambiguous(
        tmp_path: Path, make_toolbox, dialect: str, text: str) -> None:
    target = tmp_path / "a.txt"
    target.write_text(text)
    with make_toolbox(tmp_path) as tools:
        out = tools.call("apply_patch", {"input": _patch("@@\n-x\n+y\n*** End of File\n"),
                                         "dialect": dialect})
    assert out["ok"] is False, out
    assert out["code"] == "AMBIGUOUS", out
    assert out["details"]["lines"] == [i + 1 for i, line in enumerate(text.split("\n"))
                                       if line == "x"]
    assert target.read_text() == text


@pytest.mark.parametrize("dialect", DIALECTS)
def test_an_end_of_file_hunk_goes_to_the_end_when_it_matches_there(
        tmp_path: Path, make_toolbox, dialect: str) -> None:
    target = tmp_path / "a.txt"
    target.write_text("x\nmiddle\nx  \n")  # the last line differs only by trailing spaces
    with make_toolbox(tmp_path) as tools:
        out = tools.call("apply_patch", {"input": _patch("@@\n-x\n+y\n*** End of File\n"),
                                         "dialect": dialect})
    assert out["ok"] is True, out
    assert target.read_text() == "x\nmiddle\ny\n"
    assert out["files"][0]["hunkLines"] == [3]


@pytest.mark.parametrize("dialect", DIALECTS)
def test_an_end_of_file_hunk_found_once_elsewhere_still_applies(
        tmp_path: Path, make_toolbox, dialect: str) -> None:
    target = tmp_path / "a.txt"
    target.write_text("x\nz\n")
    with make_toolbox(tmp_path) as tools:
        out = tools.call("apply_patch", {"input": _patch("@@\n-x\n+y\n*** End of File\n"),
                                         "dialect": dialect})
    assert out["ok"] is True, out
    assert target.read_text() == "y\nz\n"


def test_a_toolbox_over_a_path_agrees(tmp_path: Path) -> None:
    """The same through a Toolbox made from a host path (the default backend)."""
    (tmp_path / "a.txt").write_bytes("\ufeffx\n".encode("utf-32-le"))
    with Toolbox(tmp_path) as tools:
        out = tools.call("apply_patch", {"input": _patch("@@\n-x\n+q\n")})
        assert out["ok"] is True, out
    assert (tmp_path / "a.txt").read_bytes() == "\ufeffq\n".encode("utf-32-le")
