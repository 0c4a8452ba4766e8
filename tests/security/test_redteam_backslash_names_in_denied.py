"""An independent red-team pass: the forgiveness of ``\\`` separators as an
existence oracle for a denied directory.

A path holding a backslash is read with ``\\`` as ``/`` unless an entry is
named with the backslash; that look at the disk was made whatever the deny
rules say, and the answer echoed the reading: ``read_file secrets/a\\b``
was refused as "secrets/a\\b is in a path the host does not allow" when
``secrets/`` (denied) holds a file named ``a\\b``, and as "secrets/a/b ..."
with a ``pathNotes`` entry when it does not.  Anyone could so ask whether
a denied directory holds a given name with a backslash in it; through a
link into it too (``pub/dl -> ../secrets``).

Each call is made on two trees that differ only inside the denied
directory, and the answers must be the same; on every backend config.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from corral.tools import Toolbox

DENY = ["secrets/**"]
NAME = "a\\b"


def _tree(base: Path, holds: bool) -> Path:
    (base / "secrets").mkdir(parents=True)
    (base / "secrets" / "other.txt").write_text("x\n")
    (base / "pub").mkdir()
    (base / "pub" / "readme.txt").write_text("r\n")
    os.symlink("../secrets", base / "pub" / "dl")
    if holds:
        (base / "secrets" / NAME).write_text("TOPSECRET\n")
    return base


PATHS = [f"secrets/{NAME}", f"pub/dl/{NAME}", f"./secrets/{NAME}"]
CALLS = [(tool, make) for tool, make in [
    ("read_file", lambda p: {"path": p}),
    ("file_info", lambda p: {"path": p}),
    ("list_directory", lambda p: {"path": p}),
    ("write_file", lambda p: {"path": p, "content": "x", "overwrite": True}),
    ("edit_file", lambda p: {"path": p, "oldText": "TOPSECRET", "newText": "y"}),
    ("delete_file", lambda p: {"path": p}),
    ("glob", lambda p: {"pattern": "*", "path": p}),
    ("grep", lambda p: {"pattern": "TOP", "path": p}),
    ("make_directory", lambda p: {"path": p}),
    ("move_file", lambda p: {"source": p, "destination": "pub/moved"}),
    ("move_file", lambda p: {"source": "pub/readme.txt", "destination": p}),
]]


def _answer(tmp_path: Path, make_root, holds: bool, tool: str, args: dict) -> str:
    base = _tree(tmp_path / ("holds" if holds else "empty"), holds)
    box = Toolbox(make_root(str(base)), deny=DENY)
    answer = box.call(tool, args)
    assert answer["ok"] is False, answer
    assert (base / "pub" / "readme.txt").read_text() == "r\n"
    if holds:
        assert (base / "secrets" / NAME).read_text() == "TOPSECRET\n"
    return json.dumps(answer, sort_keys=True).replace(str(base), "ROOT")


@pytest.mark.parametrize("path", PATHS)
@pytest.mark.parametrize(("tool", "make"), CALLS,
                         ids=[f"{n}-{tool}" for n, (tool, _) in enumerate(CALLS)])
def test_a_backslash_name_in_a_denied_directory_answers_the_same_whether_it_exists(
        tmp_path, make_root, tool, make, path):
    args = make(path)
    holds = _answer(tmp_path, make_root, True, tool, args)
    empty = _answer(tmp_path, make_root, False, tool, args)
    assert holds == empty
    assert "TOPSECRET" not in holds


def test_a_visible_backslash_name_is_still_read_as_its_name(tmp_path, make_root):
    """Outside the denied directory the name with a backslash is the entry."""
    (tmp_path / "pub").mkdir()
    (tmp_path / "pub" / NAME).write_text("mine\n")
    box = Toolbox(make_root(str(tmp_path)), deny=DENY)
    answer = box.call("read_file", {"path": f"pub/{NAME}"})
    assert answer["ok"] is True, answer
    assert answer["path"] == f"pub/{NAME}"
    assert answer["content"].endswith("mine")
