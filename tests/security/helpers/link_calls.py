"""The calls the tests of links made after open aim where a link leads,
one per operation, and what a refusal of them looks like."""

from __future__ import annotations

from corral.tools import Toolbox

OURS = "OWNED\n"  # what a model would write


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
