"""The calls the tests of links made after open aim where a link leads,
one per operation, what a refusal of them looks like, and the check that
nothing changed where it leads."""

from __future__ import annotations

import os
import threading
from pathlib import Path

from corral.tools import Toolbox

OURS = "OWNED\n"  # what a model would write
SETTINGS = '{"terminal.integrated.env.linux": {"X": "1"}}\n'  # what is there already


def acts_on_existing(op: str) -> bool:
    """Whether ``op`` acts on a file already there (the fixture makes one)."""
    return op in ("overwrite", "edit", "move_away", "delete")


def unchanged(base: Path, target: str, op: str) -> None:
    """Nothing changed at ``target`` (under ``base``), nor the file a move takes."""
    path = base / target
    if acts_on_existing(op):
        assert path.read_text() == SETTINGS
    else:
        assert not os.path.lexists(path)
    assert (base / "staged.txt").read_text() == OURS
    assert not os.path.lexists(base / "elsewhere.json")


def denied(answer: dict) -> bool:
    return answer["ok"] is False and answer["code"] == "DENIED"


def call_op(box: Toolbox, op: str, target: str) -> dict:
    if op == "write":
        return box.call("write_file", {"path": target, "content": OURS})
    if op == "overwrite":
        return box.call("write_file", {"path": target, "content": OURS, "overwrite": True})
    if op == "edit":
        return box.call("edit_file", {"path": target, "oldText": '"1"', "newText": '"2"'})
    if op == "move_onto":
        return box.call("move_file", {"source": "staged.txt", "destination": target})
    if op == "move_away":
        return box.call("move_file", {"source": target, "destination": "elsewhere.json"})
    if op == "delete":
        return box.call("delete_file", {"path": target})
    assert op == "make_directory"
    return box.call("make_directory", {"path": target})


def walk_through() -> None:
    """Wait until the view's background walk for links has finished."""
    for thread in threading.enumerate():
        if thread.name == "corral-links":
            thread.join()
