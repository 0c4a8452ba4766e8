"""An independent red-team pass over the text editor's ``view`` of a link
to a directory (``ls -> src``): it must list the directory as ``view`` of
the directory itself does (it answered INVALID_ARGUMENT, "a directory, not
a file", since the look before the read saw a symlink); a link into a
denied folder stays DENIED, the same whatever that folder holds; on every
backend config.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from corral.integrations._text_editor import run_text_editor
from corral.tools import Toolbox


def test_view_of_a_link_to_a_directory_lists_it(tmp_path: Path, make_root):
    (tmp_path / "src" / "pkg").mkdir(parents=True)
    (tmp_path / "src" / "a.py").write_text("a = 1\n")
    os.symlink("src", tmp_path / "ls")
    os.symlink("ls", tmp_path / "chain")
    toolbox = Toolbox(make_root(str(tmp_path)))
    direct = run_text_editor(toolbox, {"command": "view", "path": "src"})
    assert direct.is_error is False and direct.text == "a.py\npkg/", direct
    for path in ("ls", "ls/", "chain"):
        through = run_text_editor(toolbox, {"command": "view", "path": path})
        assert (through.is_error, through.text) == (False, direct.text), (path, through)
    ranged = run_text_editor(toolbox, {"command": "view", "path": "ls", "view_range": [1, 2]})
    assert ranged.is_error is True


@pytest.mark.parametrize("shape", ["present", "missing"])
def test_view_of_a_link_into_a_denied_folder_stays_denied(tmp_path: Path, make_root, shape):
    (tmp_path / "secrets" / "d").mkdir(parents=True)
    (tmp_path / "secrets" / "d" / "key.txt").write_text("TOPSECRET\n")
    os.symlink("secrets/d", tmp_path / "dd")
    if shape == "missing":
        shutil.rmtree(tmp_path / "secrets")
    toolbox = Toolbox(make_root(str(tmp_path)), deny=["secrets/**"])
    seen = run_text_editor(toolbox, {"command": "view", "path": "dd"})
    assert seen.is_error is True and seen.text.startswith("DENIED: dd "), seen
    assert "key.txt" not in seen.text
