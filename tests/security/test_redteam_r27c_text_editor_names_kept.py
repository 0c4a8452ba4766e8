"""An independent red-team pass (round twenty-seven, third team) over the
names the text editor (``str_replace_based_edit_tool``) says in a refusal.
It puts corral's words in the editor's (``oldText`` -> ``old_str``,
``edit_file`` -> the command) by rewriting the whole text, names of files
included: a refused ``str_replace`` in ``tools/edit_file.py`` (a name this
very project has) answered "old_str does not occur in
tools/str_replace.py", a misspelt name "Check the name;
tools/str_replace.py exists", a ``create`` of ``tools/edit_file.py/``
spoke of ``tools/create.py``, and ``tools/oldText.py`` became
``tools/old_str.py``: names that are not on the disk, so the model's next
call misses.  Every name stays as it is; only the tool's own words are
rewritten.  On every backend config.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from corral.integrations._text_editor import run_text_editor
from corral.tools import Toolbox

CASES = {  # the command, a name on the disk the refusal must say as it is
    "a_str_replace_that_does_not_match": (
        {"command": "str_replace", "path": "tools/edit_file.py", "old_str": "y", "new_str": "z"},
        "tools/edit_file.py"),
    "a_misspelt_name_beside_it": (
        {"command": "str_replace", "path": "tools/edit_filex.py", "old_str": "y",
         "new_str": "z"}, "tools/edit_file.py"),
    "a_create_with_a_trailing_slash": (
        {"command": "create", "path": "tools/edit_file.py/", "file_text": "z"},
        "tools/edit_file.py"),
    "a_name_holding_old_text": (
        {"command": "str_replace", "path": "tools/oldText.py", "old_str": "y", "new_str": "z"},
        "tools/oldText.py"),
    "a_misspelt_name_beside_that": (
        {"command": "insert", "path": "tools/oldTextx.py", "insert_line": 0, "new_str": "z"},
        "tools/oldText.py"),
}


@pytest.mark.parametrize("name", list(CASES))
def test_a_refusal_says_every_name_as_it_is_on_the_disk(
        tmp_path: Path, make_root: Callable[..., Any], name: str) -> None:
    args, kept = CASES[name]
    (tmp_path / "tools").mkdir()
    for file in ("edit_file.py", "oldText.py"):
        (tmp_path / "tools" / file).write_text("x = 1\n")
    done = run_text_editor(Toolbox(make_root(str(tmp_path))), args)
    assert done.is_error is True, done.text
    assert kept in done.text, done.text
    for invented in ("str_replace.py", "create.py", "insert.py", "old_str.py"):
        assert invented not in done.text, done.text
    assert sorted(p.name for p in (tmp_path / "tools").iterdir()) == ["edit_file.py",
                                                                     "oldText.py"]
