"""An independent red-team pass: what a denied entry is, told by paths
that only pass it.

A denied name is answered identically whatever is there (THREATS row
30).  The earlier passes aimed at the denied entry itself, at links to
it and at a ``..`` climbing out through it; here the path passes the
denied entry ``secrets/key.txt`` and goes on, and the answer came from
the error further on:

* ``nx/../secrets/key.txt`` (a missing directory, then ``..``) answered
  ``DENIED`` for a file, a directory or nothing there, and ``NOT_FOUND``
  ("there is no nx") when the denied entry was a link leading out or a
  loop: read_file, edit_file, read_files, grep and the text editor;
* ``edit_file`` with an empty ``oldText`` (the model creating a file) of
  ``pub/lk/x`` (``pub/lk -> ../secrets/key.txt``) or
  ``secrets/key.txt/../../../x`` answered ``NOT_FOUND`` naming the
  denied name as missing ("there is no secrets/key.txt") when nothing
  was there, ``DENIED`` when anything was;
* ``pub/nx/../dl/key.txt/..`` (``pub/dl -> ../secrets``) answered
  ``NOT_FOUND`` ("there is no pub/nx") when the denied entry was a file,
  ``DENIED`` when it was a directory or missing;
* ``nx/../pub/lk`` (an allowed link to the denied entry) answered
  ``NOT_FOUND`` when the denied entry led out or looped;
* ``write_file`` and ``make_directory`` of
  ``secrets/key.txt/../../top.txt/new`` answered ``DENIED`` when the
  denied entry was a file, a FIFO, a link leading out or a loop, and
  "top.txt is a file" when it was a directory or missing.

On every backend config, under ``secrets/**`` and ``secrets``.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from corral.integrations._text_editor import run_text_editor
from corral.tools import Toolbox

SECRET = "TOPSECRET-51c2"
SHAPES = ("missing", "file", "directory", "fifo", "out_absolute", "out_climbing", "loop")


def _tree(base: Path, shape: str) -> Path:
    root = base / "ws"
    (base / "far").mkdir(parents=True)
    (base / "far" / "f.txt").write_text(SECRET + "\n")
    (root / "secrets").mkdir(parents=True)
    (root / "pub").mkdir()
    (root / "top.txt").write_text("top\n")
    os.symlink("../secrets", root / "pub" / "dl")
    os.symlink("../secrets/key.txt", root / "pub" / "lk")
    key = root / "secrets" / "key.txt"
    if shape == "file":
        key.write_text(SECRET + "\n")
    elif shape == "directory":
        key.mkdir()
        (key / "in.txt").write_text(SECRET + "\n")
    elif shape == "fifo":
        os.mkfifo(key)
    elif shape == "out_absolute":
        os.symlink(str(base / "far" / "f.txt"), key)
    elif shape == "out_climbing":
        os.symlink("../../far/f.txt", key)
    elif shape == "loop":
        os.symlink("key.txt", key)
    return root


def _patch(body: str) -> str:
    return f"*** Begin Patch\n{body}\n*** End Patch"


PASSING = "nx/../secrets/key.txt"
CLIMBING = "secrets/key.txt/../../top.txt/new"
BACK = "pub/nx/../dl/key.txt/.."  # a missing folder, a link into the denied one, back out
CALLS = [
    ("read_file", {"path": PASSING}),
    ("read_file", {"path": "nx/../pub/dl/key.txt"}),
    ("read_files", {"paths": [PASSING, "top.txt"]}),
    ("grep", {"pattern": "TOP", "path": PASSING}),
    ("file_info", {"path": PASSING}),
    ("edit_file", {"path": PASSING, "oldText": SECRET, "newText": "x"}),
    ("edit_file", {"path": PASSING, "oldText": "", "newText": "x"}),
    ("editor", {"command": "view", "path": PASSING}),
    ("editor", {"command": "str_replace", "path": PASSING, "old_str": SECRET, "new_str": "x"}),
    ("editor", {"command": "insert", "path": PASSING, "insert_line": 0, "new_str": "x"}),
    ("edit_file", {"path": "pub/lk/x", "oldText": "", "newText": "x"}),
    ("edit_file", {"path": "secrets/key.txt/../../../x", "oldText": "", "newText": "x"}),
    ("edit_file", {"path": "pub/dl/key.txt/x", "oldText": "", "newText": "x"}),
    ("write_file", {"path": CLIMBING, "content": "x"}),
    ("write_file", {"path": "pub/dl/key.txt/../../top.txt/new", "content": "x"}),
    ("make_directory", {"path": CLIMBING}),
    ("make_directory", {"path": "pub/dl/key.txt/../../top.txt/n"}),
    ("move_file", {"source": "top.txt", "destination": CLIMBING}),
    ("apply_patch", {"input": _patch(f"*** Add File: {CLIMBING}\n+x")}),
    ("read_file", {"path": BACK}),
    ("list_directory", {"path": BACK}),
    ("file_info", {"path": BACK}),
    ("grep", {"pattern": "TOP", "path": BACK}),
    ("edit_file", {"path": BACK, "oldText": "", "newText": "x"}),
    ("delete_file", {"path": BACK}),
    ("move_file", {"source": BACK, "destination": "pub/m"}),
    ("editor", {"command": "view", "path": BACK}),
    ("read_file", {"path": "nx/../pub/lk"}),
    ("grep", {"pattern": "TOP", "path": "nx/../pub/lk"}),
    ("edit_file", {"path": "nx/../pub/lk", "oldText": SECRET, "newText": "x"}),
    ("editor", {"command": "view", "path": "nx/../pub/lk"}),
]


def _answer(base: Path, make_root, shape: str, deny: list[str], tool: str, args: dict) -> str:
    root = _tree(base / shape, shape)
    if tool == "editor":
        result = run_text_editor(Toolbox(make_root(str(root)), deny=deny), args)
        answer: dict = {"text": result.text, "is_error": result.is_error}
    else:
        box = Toolbox(make_root(str(root)), deny=deny,
                      editing="apply_patch" if tool == "apply_patch" else "corral")
        answer = box.call(tool, args)
    text = json.dumps(answer, sort_keys=True)
    assert SECRET not in text, (shape, answer)
    refused = answer["files"][0] if tool == "read_files" else answer
    assert refused.get("ok") is not True and refused.get("is_error") is not False, (shape, answer)
    assert sorted(os.listdir(root)) == ["pub", "secrets", "top.txt"], (shape, answer)
    assert (root / "top.txt").read_text() == "top\n"
    return text.replace(str(base / shape), "BASE")


@pytest.mark.parametrize("deny", [["secrets/**"], ["secrets"]], ids=["contents", "folder"])
@pytest.mark.parametrize(("tool", "args"), CALLS,
                         ids=[f"{n}-{tool}" for n, (tool, _) in enumerate(CALLS)])
def test_a_path_passing_a_denied_entry_answers_the_same_whatever_it_is(
        tmp_path, make_root, deny, tool, args):
    answers = {shape: _answer(tmp_path, make_root, shape, deny, tool, args) for shape in SHAPES}
    assert len(set(answers.values())) == 1, json.dumps(answers, indent=1)
