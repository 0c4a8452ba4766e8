"""An independent red-team pass (round twenty-four, third team) over
apply_patch's refusals: a section that moves a file onto its own name
(``*** Update File: a.txt`` then ``*** Move to: a.txt``, ``./a.txt``, or
``d/a.txt`` through a link ``d -> .``) was refused as "the patch names
a.txt in two file sections (1 and 1)" with the hint "Put every change to
a.txt in one section": it is one section, so the model had nothing to act
on.  Now the refusal names the one section and its move onto the same
file, and says what to send (drop the ``Move to`` line, or name another
file); nothing is changed.  On every backend config.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from corral.tools import Toolbox

TEXT = "one\ntwo\nthree\n"


def _patch(dest: str) -> str:
    return ("*** Begin Patch\n*** Update File: a.txt\n"
            f"*** Move to: {dest}\n@@\n-one\n+ONE\n*** End Patch\n")


@pytest.mark.parametrize("dest", ["a.txt", "./a.txt", "d/a.txt", "x/../a.txt"])
def test_a_move_onto_its_own_name_says_so(tmp_path: Path, make_root, dest: str) -> None:
    (tmp_path / "a.txt").write_text(TEXT)
    os.symlink(".", tmp_path / "d")
    os.mkdir(tmp_path / "x")
    toolbox = Toolbox(make_root(str(tmp_path)), editing="apply_patch")
    answer = toolbox.call("apply_patch", {"input": _patch(dest)})
    assert answer["ok"] is False, answer
    assert answer["code"] == "INVALID_ARGUMENT", answer
    assert answer["details"]["kind"] == "patch_syntax", answer
    assert "two file sections" not in answer["message"], answer
    assert "same file" in answer["message"] or "its own name" in answer["message"], answer
    assert "nothing was changed" in answer["message"], answer
    assert "one section" not in answer["hint"], answer
    assert "Move to" in answer["hint"], answer
    assert (tmp_path / "a.txt").read_text() == TEXT
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.txt", "d", "x"]


def test_two_sections_naming_one_file_still_say_two_sections(tmp_path: Path,
                                                             make_root) -> None:
    (tmp_path / "a.txt").write_text(TEXT)
    toolbox = Toolbox(make_root(str(tmp_path)), editing="apply_patch")
    answer = toolbox.call("apply_patch", {"input": (
        "*** Begin Patch\n*** Update File: a.txt\n@@\n-one\n+ONE\n"
        "*** Update File: ./a.txt\n@@\n-two\n+TWO\n*** End Patch\n")})
    assert answer["code"] == "INVALID_ARGUMENT", answer
    assert "two file sections (1 and 2)" in answer["message"], answer
    assert "one section" in answer["hint"], answer
    assert (tmp_path / "a.txt").read_text() == TEXT
