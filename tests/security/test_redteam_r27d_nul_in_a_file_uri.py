"""An independent red-team pass (round twenty-seven, fourth team): a NUL
byte sent percent-encoded in a ``file://`` URI (``file:///proj/a%00.txt``)
in any path argument, through one root's Toolbox and through a Workspace of
two roots.  Sent as plain text the NUL is refused by the argument check,
naming the argument, with "Remove the NUL character"; through the URI it
reached the core and came back without the argument's name and with the
wrong next step ("Pass a shorter path of plain names"), and a Workspace
asked about a plain NUL path answered that it "does not begin with a
root's name" and suggested the same path, NUL and all, under a root's
name.  Each must be the argument's own refusal, nothing made or changed.
On every backend config.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from corral.tools import Toolbox, Workspace


def _calls(uri: str, top: Path) -> list[tuple[str, dict[str, Any], str]]:
    """(tool, arguments, the field at fault) for every path argument (the
    other paths a call takes name files in ``top``, read alike by both)."""
    moved, there = f"file://{top}/moved.txt", f"file://{top}/a.txt"
    return [
        ("read_file", {"path": uri}, "path"),
        ("file_info", {"path": uri}, "path"),
        ("list_directory", {"path": uri}, "path"),
        ("write_file", {"path": uri, "content": "x"}, "path"),
        ("edit_file", {"path": uri, "oldText": "a", "newText": "b"}, "path"),
        ("make_directory", {"path": uri}, "path"),
        ("delete_file", {"path": uri}, "path"),
        ("grep", {"pattern": "a", "path": uri}, "path"),
        ("glob", {"pattern": "*", "path": uri}, "path"),
        ("move_file", {"source": uri, "destination": moved}, "source"),
        ("move_file", {"source": there, "destination": uri}, "destination"),
        ("read_files", {"paths": [there, uri]}, "paths[1]"),
    ]


def _refused_for_the_nul(envelope: dict[str, Any], field: str, tool: str) -> str | None:
    """What is wrong with the answer (``None``: the argument's refusal)."""
    try:
        _check(envelope, field, tool)
    except AssertionError as wrong:
        return str(wrong)
    return None


def _check(envelope: dict[str, Any], field: str, tool: str) -> None:
    said = f"{tool}: {envelope}"
    if tool == "read_files" and "files" in envelope:  # refused per file, naming its item
        refused = [r for r in envelope["files"] if r.get("ok") is False]
        assert len(refused) == 1, said
        envelope = refused[0]
    assert envelope.get("ok") is False and envelope["code"] == "INVALID_ARGUMENT", said
    assert envelope["details"].get("field") == field, said
    assert "NUL" in envelope["message"] and "NUL" in envelope["hint"], said
    assert "shorter" not in envelope["hint"] and "root's name" not in envelope["message"], said
    assert "\x00" not in envelope["hint"] and "\x00" not in str(envelope.get("suggestedArgs")), said


def _state(top: Path) -> dict[str, bytes | None]:
    return {str(p.relative_to(top)): (p.read_bytes() if p.is_file() else None)
            for p in sorted(top.rglob("*"))}


def test_a_nul_in_a_uri_is_the_arguments_refusal(tmp_path: Path,
                                                make_root: Callable[..., Any]) -> None:
    web, api = tmp_path / "web", tmp_path / "api"
    for top in (web, api):
        top.mkdir()
        (top / "a.txt").write_text("a\n")
    before = _state(tmp_path)
    wrong: list[str | None] = []
    alone = Toolbox(make_root(str(web)))
    both = Workspace({"web": Toolbox(make_root(str(web))), "api": Toolbox(make_root(str(api)))})
    for box in (alone, both):
        for spelled in ("a%00.txt", "a.txt%00", "%00/a.txt", "d%00/../a.txt"):
            for tool, args, field in _calls(f"file://{web}/{spelled}", web):
                wrong.append(_refused_for_the_nul(box.call(tool, args), field, tool))
    for tool, args, field in _calls("web/a\x00.txt", web) + _calls("a\x00.txt", web):
        wrong.append(_refused_for_the_nul(both.call(tool, args), field, tool))
    failed = [w for w in wrong if w is not None]
    assert not failed, f"{len(failed)} of {len(wrong)}: {failed[:3]}"
    assert _state(tmp_path) == before
