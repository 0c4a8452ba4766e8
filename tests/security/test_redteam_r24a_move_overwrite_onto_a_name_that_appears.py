"""An independent red-team pass (round twenty-four, first team):
``move_file`` with ``overwrite: true`` onto a name that held nothing when
the move was decided, where another program puts a file in the moment
before the rename (THREATS row 40).

The decision (and what the host was asked) was "create ``y.txt``": nothing
was there to replace.  A file that appears afterwards (the user's editor
saving, a ``.env`` the user's script writes) was never decided on, so it
must not be replaced, as ``write_file`` already refuses it
(``ALREADY_EXISTS``): the move answers ``ALREADY_EXISTS``, the newcomer
and the source stay as they are.  A secret name (``.env``, which no tool
may replace) makes it a loss of the user's credentials.

The window is made to happen every time: a ``FaultBackend`` hook on
``rename_at`` writes the file just before the move's rename, on every
backend config.  A file there when the move is decided is still replaced
(``overwritten: true``).
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from corral.contained import Root, backend_by_name
from corral.testing.backends import Fault, FaultBackend
from corral.tools import Toolbox

USERS = "the user's own text\n"
MODEL = "the model's text\n"

DESTINATIONS = ["y.txt", ".env", "sub/y.txt", "made/y.txt"]


def _tree(base: Path) -> None:
    (base / "x.txt").write_text(MODEL)
    (base / "sub").mkdir()


def _move_with(base: Path, make_root, hook, destination: str) -> dict:
    backend = FaultBackend(backend_by_name(make_root.backend_name))
    root = Root(str(base), backend=backend, fast_path=make_root.fast_path)
    try:
        with Toolbox(root) as box:
            # armed after the Toolbox opened: only the move's own rename is hit
            backend.add(Fault("rename_at", None, name="x.txt", hook=hook))
            return box.call("move_file", {"source": "x.txt", "destination": destination,
                                          "overwrite": True})
    finally:
        root.close()


@pytest.mark.parametrize("destination", DESTINATIONS)
def test_a_file_appearing_before_the_rename_is_not_replaced(tmp_path, make_root, destination):
    _tree(tmp_path)
    landed = tmp_path / destination

    def another_program() -> None:
        landed.parent.mkdir(exist_ok=True)  # the move made it already, if it was missing
        landed.write_text(USERS)

    answer = _move_with(tmp_path, make_root, another_program, destination)
    assert landed.read_text() == USERS, (answer, "the user's file was replaced")
    assert (tmp_path / "x.txt").read_text() == MODEL, answer
    assert answer["ok"] is False, answer
    assert answer["code"] == "ALREADY_EXISTS", answer
    assert USERS.strip() not in repr(answer), answer


@pytest.mark.parametrize("destination", ["y.txt", "sub/y.txt"])
def test_a_file_there_when_decided_is_still_replaced(tmp_path, make_root, destination):
    """What the fix must keep: ``overwrite`` replaces a file the move saw."""
    _tree(tmp_path)
    landed = tmp_path / destination
    landed.write_text(USERS)
    answer = _move_with(tmp_path, make_root, lambda: None, destination)
    assert answer["ok"] is True, answer
    assert answer["overwritten"] is True, answer
    assert landed.read_text() == MODEL
    assert not (tmp_path / "x.txt").exists()


def test_nothing_appearing_the_move_answers_what_it_did(tmp_path, make_root):
    _tree(tmp_path)
    answer = _move_with(tmp_path, make_root, lambda: None, "made/y.txt")
    assert answer["ok"] is True, answer
    assert answer["overwritten"] is False, answer
    assert answer["createdDirectories"] == ["made"], answer
    assert (tmp_path / "made" / "y.txt").read_text() == MODEL
    assert sorted(os.listdir(tmp_path)) == ["made", "sub"]
