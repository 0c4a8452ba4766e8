"""A deep make_directory stops no later call (THREATS row 32).

One ``make_directory a/a/.../a`` of 2,000 levels (a path of 4,000 bytes,
within every limit) leaves most of its folders beyond those the view
follows.  Before a decision links could change, the view looks at each
folder beyond: it looked at each by its whole path from the root, one
open a level on a walk backend, so the look grew with the square of the
depth and no call's wait could finish it.  Every later write, edit, read
or grep that links could decide answered ``not_ready``, for good: each
call began the look again from the first folder.  Each folder beyond is
now looked at from its parent's open directory where this look holds it.
What the look must find it still finds: a ``.vscode`` link made deep in
that chain after the call protects where it leads."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from corral.tools import Toolbox

from ..helpers import remove_level_by_level

DEPTH = 2000
DEEP = "/".join(["a"] * DEPTH)
LINKED = 1200  # the level of the link: its text (../ a level) within PATH_MAX


@pytest.fixture(autouse=True)
def removed_afterwards(tmp_path) -> Iterator[None]:
    yield
    remove_level_by_level(tmp_path / "root")


def _opened(tmp_path: Path, make_root) -> tuple[Path, Toolbox]:
    base = tmp_path / "root"
    (base / "editor").mkdir(parents=True)
    (base / "f.txt").write_text("hi\n")
    box = Toolbox(make_root(str(base)))
    made = box.call("make_directory", {"path": DEEP})
    assert made["ok"], made
    return base, box


def test_calls_after_a_deep_make_directory_are_answered(tmp_path, make_root, watching):
    base, box = _opened(tmp_path, make_root)
    try:
        answers = [box.call("write_file", {"path": "f.txt", "content": f"{i}\n",
                                           "overwrite": True}) for i in range(3)]
        read = box.call("read_file", {"path": "f.txt"})
    finally:
        box.close()
    assert all(answer["ok"] for answer in answers), answers
    assert read["ok"], read
    assert (base / "f.txt").read_text() == "2\n"


def test_a_link_made_deep_in_a_deep_make_directory_still_decides(
        tmp_path, make_root, watching):
    base, box = _opened(tmp_path, make_root)
    try:
        # another program links a deep folder's .vscode to editor/
        bottom = os.open(base, os.O_RDONLY | os.O_DIRECTORY)
        try:
            for _ in range(LINKED):
                below = os.open("a", os.O_RDONLY | os.O_DIRECTORY, dir_fd=bottom)
                os.close(bottom)
                bottom = below
            os.symlink("../" * LINKED + "editor", ".vscode", dir_fd=bottom)
        finally:
            os.close(bottom)
        written = box.call("write_file", {"path": "editor/tasks.json", "content": "{}\n"})
    finally:
        box.close()
    assert written["ok"] is False and written["details"]["kind"] == "protected", written
    assert not (base / "editor" / "tasks.json").exists()
