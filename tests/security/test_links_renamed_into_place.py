"""A link another program makes under a temporary name and renames onto
a protected name (an editor's atomic save, ``ln -s`` then ``mv``), the
only change queued since the last call: the kernel's watch reports it as
a write's own replace is reported (a name made, moved away, and arriving
at the final name), and the view learns the link all the same, also
when this view's own write just replaced a file in that directory, or
the file the link leads to.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from corral.tools import Toolbox

OURS = "OWNED\n"


def _tree(base: Path) -> None:
    for folder in ("sub", "editor"):
        (base / folder).mkdir()
        (base / folder / "code.py").write_text("x = 1\n")


def _denied(answer: dict) -> bool:
    return answer["ok"] is False and answer["code"] == "DENIED"


def _renamed_link(directory: Path, text: str, name: str) -> None:
    temporary = directory / f".{name}.tmp"
    os.symlink(text, temporary)
    os.rename(temporary, directory / name)


@pytest.mark.parametrize("before", ["a listing", "a write beside it", "none"])
def test_a_link_renamed_onto_a_protected_name_is_learnt(tmp_path, make_root, before):
    _tree(tmp_path)
    box = Toolbox(make_root(str(tmp_path)))
    if before == "a listing":
        assert box.call("list_directory", {"path": "sub"})["ok"] is True
    elif before == "a write beside it":
        answer = box.call("write_file", {"path": "sub/code.py", "content": "x = 2\n",
                                         "overwrite": True})
        assert answer["ok"] is True, answer
    _renamed_link(tmp_path / "sub", "../editor", ".vscode")
    answer = box.call("write_file", {"path": "editor/settings.json", "content": OURS})
    assert _denied(answer), answer
    assert not os.path.lexists(tmp_path / "editor" / "settings.json")
    answer = box.call("write_file", {"path": "editor/code.py", "content": OURS,
                                     "overwrite": True})
    assert answer["ok"] is True, answer  # a harmless name there is written as before


def test_a_link_renamed_onto_a_protected_name_after_a_write_where_it_leads_is_learnt(
        tmp_path, make_root):
    """The view's own write replaced the file the link comes to lead to a
    moment before: its own replace is not looked at, the program's is."""
    _tree(tmp_path)
    (tmp_path / "sub" / ".envrc").write_text("export A=1\n")
    (tmp_path / "config").mkdir()
    (tmp_path / "config" / "envrc").write_text("export B=1\n")
    box = Toolbox(make_root(str(tmp_path)))
    answer = box.call("write_file", {"path": "config/envrc", "content": "export B=2\n",
                                     "overwrite": True})
    assert answer["ok"] is True, answer
    # .envrc is protected: this view does not write it; another program
    # makes it a link to config/envrc by a rename
    _renamed_link(tmp_path / "sub", "../config/envrc", ".envrc")
    answer = box.call("write_file", {"path": "config/envrc", "content": OURS,
                                     "overwrite": True})
    assert _denied(answer), answer
    assert (tmp_path / "config" / "envrc").read_text() == "export B=2\n"
