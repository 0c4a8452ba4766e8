"""THREATS.md row 17 through ``corral serve``: the root removed, or renamed
and replaced, while the server runs.  Also the one refusal code the main
module cannot reach: ``INTERNAL``, which must say nothing of the host.

Each test gets its own server (the root is destroyed)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from corral.tools import Refusal
from .helpers import envelope_of, serve_command

PLANTED = "PLANTEDCONTENT91b7"


def _make_root(path: Path) -> Path:
    (path / "sub").mkdir(parents=True)
    (path / "ok.txt").write_text("inside\n")
    return path


def test_removed_root_is_internal_and_says_nothing(tmp_path, make_session):
    root = _make_root(tmp_path / "ws")
    session = make_session(serve_command(root))
    assert session.envelope("read_file", {"path": "ok.txt"})["ok"] is True
    shutil.rmtree(root)
    internal = Refusal.internal().envelope()
    # Searches first: a search that only lists directories is the one call
    # that could take an empty (deleted) root for an empty tree.
    for tool, args in [("glob", {"pattern": "**/*"}), ("grep", {"pattern": "inside"}),
                       ("read_file", {"path": "ok.txt"}), ("list_directory", {"path": "."}),
                       ("write_file", {"path": "new.txt", "content": "x"})]:
        result = session.call(tool, args)
        envelope = envelope_of(result)
        assert envelope == internal, (tool, envelope)
        assert result["isError"] is True
        assert str(tmp_path) not in json.dumps(result)
    assert not root.exists()  # nothing re-created at the old path


def test_renamed_root_never_resolves_at_the_new_path(tmp_path, make_session):
    root = _make_root(tmp_path / "ws")
    session = make_session(serve_command(root))
    root.rename(tmp_path / "ws-moved")
    replacement = _make_root(tmp_path / "ws")
    (replacement / "planted.txt").write_text(f"{PLANTED}\n")
    result = session.call("read_file", {"path": "planted.txt"})
    text = result["content"][0]["text"]
    assert result["isError"] is True
    assert PLANTED not in text and str(tmp_path) not in text
    write = session.envelope("write_file", {"path": "written.txt", "content": "x"})
    assert not (replacement / "written.txt").exists()
    if write["ok"]:  # the renamed root is still the root
        assert (tmp_path / "ws-moved" / "written.txt").read_text() == "x"
    listing = session.call("list_directory", {"path": "."})["content"][0]["text"]
    assert "planted.txt" not in listing
