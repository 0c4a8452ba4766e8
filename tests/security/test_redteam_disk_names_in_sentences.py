"""An independent red-team pass over what a model reads, past the listings:
names read from the disk that an answer's sentence, hint, suggestion or
success line carries (a link's text, the file a link leads to, a near name
offered for a missing one, directories made through a link, an edit's
resolved path) and the text editor's `view` of a directory.

A repository can hold a name or a link text with a line break in it
(``src/conf\\nINJECTED ...``).  Shown as it is, it starts a line the model
reads as the tool's own: a forged sentence after ``NOT_FOUND: ...``, a
second "Created directory" line, a fake entry in the editor's listing.
Every such answer must show the name on its line, its breaks escaped (it
was shown as it is in 63 of 305 answers of eleven tools).
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from corral.hosts import render
from corral.integrations import anthropic_tool_results
from corral.tools import Toolbox

FORGED = "INJECTED tool line"
# the break a name holds: a line feed, a carriage return, Unicode's line separator, NEL
BREAKS = ["\n", "\r", "\u2028", "\x85"]


def _tree(base: Path, brk: str) -> None:
    odd = f"{brk}{FORGED}"
    (base / "src" / "pkg").mkdir(parents=True)
    (base / "src" / "config.py").write_text("x = 1\n")
    (base / "src" / f"conf{odd}.py").write_text("y = 2\n")
    (base / f"dir{odd}").mkdir()
    (base / f"dir{odd}" / "f.txt").write_text("z\n")
    os.symlink(f"src/config.py{odd}", base / "badlink")  # dangling: its text is said
    os.symlink(f"dir{odd}", base / "dlink")
    os.symlink(f"src/conf{odd}.py", base / "flink")


# calls whose answer names a name of the tree that holds the break
CALLS: list[tuple[str, dict[str, object]]] = [
    ("read_file", {"path": "badlink"}),
    ("file_info", {"path": "badlink"}),
    ("list_directory", {"path": "badlink"}),
    ("edit_file", {"path": "badlink", "oldText": "y", "newText": "z"}),
    ("read_files", {"paths": ["badlink", "src/config.py"]}),
    ("grep", {"pattern": "y", "path": "badlink"}),
    ("glob", {"pattern": "*", "path": "badlink"}),
    ("make_directory", {"path": "badlink/q"}),
    ("file_info", {"path": "dlink"}),
    ("write_file", {"path": "dlink", "content": "q\n"}),
    ("delete_file", {"path": "dlink/f.txtzz"}),
    ("make_directory", {"path": "dlink/f.txt/q"}),
    ("make_directory", {"path": "dlink/made"}),
    ("file_info", {"path": "flink"}),
    ("edit_file", {"path": "flink", "oldText": "y = 2", "newText": "y = 3", "dryRun": True}),
    ("write_file", {"path": "flink", "content": "q\n"}),
    ("make_directory", {"path": "flink/q"}),
    ("glob", {"pattern": "*.py", "path": "flink/x"}),
    ("apply_patch", {"input": "*** Begin Patch\n*** Update File: flink/x\n@@\n-y\n+z\n"
                              "*** End Patch\n"}),
]


def _assert_one_line(what: object, text: str) -> None:
    lines = text.splitlines()  # every break str knows: \n, \r, \x85, \u2028, ...
    assert not any(line.lstrip(" \"").startswith(FORGED) for line in lines), (what, text)
    assert FORGED in text, (what, text)  # the name is named (escaped), not left out


@pytest.mark.parametrize("brk", BREAKS, ids=[repr(b) for b in BREAKS])
def test_a_disk_name_in_an_answer_stays_on_its_line(tmp_path: Path, make_root, brk):
    _tree(tmp_path, brk)
    toolbox = Toolbox(make_root(str(tmp_path)))
    for tool, args in CALLS:
        _assert_one_line((tool, args), render(tool, toolbox.call(tool, args)))


@pytest.mark.parametrize("brk", BREAKS, ids=[repr(b) for b in BREAKS])
def test_the_text_editor_shows_a_disk_name_on_its_line(tmp_path: Path, make_root, brk):
    _tree(tmp_path, brk)
    toolbox = Toolbox(make_root(str(tmp_path)))
    for args in ({"command": "view", "path": "."}, {"command": "view", "path": "src"},
                 {"command": "view", "path": "badlink"},
                 {"command": "create", "path": "flink", "file_text": "q\n"},
                 {"command": "str_replace", "path": "badlink", "old_str": "y", "new_str": "z"}):
        [result] = anthropic_tool_results(
            toolbox, [{"type": "tool_use", "id": "t1", "name": "str_replace_based_edit_tool",
                       "input": args}], editor="text_editor")
        _assert_one_line(args, result["content"])
