"""What the
front ends show a model agrees with what the tool found, on every backend
config: the compact text (:func:`corral.hosts.render`, what the adapters
and ``corral serve``'s ``content`` carry) next to the envelope.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from corral.hosts import render
from corral.tools import Toolbox, Workspace
from .helpers import PipedServer


def _matching_tree(base: Path) -> Path:
    """Matches in several files, a later file's at lower line numbers than
    an earlier one's."""
    (base / "a.txt").write_text("x\nx\nfoo a3\nx\nfoo a5\n")
    (base / "b.txt").write_text("foo b1\nx\nfoo b3\n")
    (base / "c.txt").write_text("foo c1\n")
    return base


_EVERY_MATCH = ["foo a3", "foo a5", "foo b1", "foo b3", "foo c1"]


def _shown_lines(text: str) -> list[str]:
    return [line.split(":", 1)[1] for line in text.split("\n") if ":" in line]


@pytest.mark.parametrize("context", [0, 1], ids=["plain", "with-context"])
def test_a_grep_over_several_files_shows_every_match(tmp_path, make_root, context):
    """grep's rendered text showed a file's matching lines only past the
    highest line number an earlier file had shown: ``b.txt`` then no line
    at all, though the envelope held ``1:foo b1`` (on main ``foo b1``,
    ``foo b3`` and ``foo c1`` were missing)."""
    box = Toolbox(make_root(str(_matching_tree(tmp_path))))
    args: dict[str, Any] = {"pattern": "^foo"}
    if context:
        args["context"] = context
    envelope = box.call("grep", args)
    assert envelope["ok"] is True, envelope
    assert sorted(m["text"] for m in envelope["matches"]) == _EVERY_MATCH
    assert sorted(_shown_lines(render("grep", envelope))) == _EVERY_MATCH


def test_serve_shows_every_match_of_a_grep(tmp_path, make_root):
    """The same through ``corral serve``'s answer: its text content."""
    box = Toolbox(make_root(str(_matching_tree(tmp_path))))
    piped = PipedServer(Workspace({"root": box}))
    try:
        piped.request(0, "initialize", protocolVersion="2025-11-25", capabilities={})
        answer = piped.request(1, "tools/call", name="grep", arguments={"pattern": "^foo"})
    finally:
        piped.close()
    result = answer["result"]
    assert result["isError"] is False, result
    assert sorted(_shown_lines(result["content"][0]["text"])) == _EVERY_MATCH
