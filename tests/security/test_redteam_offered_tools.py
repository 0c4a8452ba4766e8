"""An independent red-team pass over the adapters: a hostile model (or a
stored conversation it wrote) names a tool the host did not offer.

``anthropic_tools(toolbox, editor="text_editor")`` offers corral's read and
search tools beside Claude's text editor, "so the model has one way to
change files".  A reply's ``tool_use`` blocks naming corral's other tools
(``delete_file``, ``move_file``, ``make_directory``...) must be refused as
tools that are not there, by ``anthropic_tool_results`` told the offer and
by ``run_anthropic``, and must change nothing.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from corral.integrations import anthropic_tool_results, anthropic_tools, run_anthropic
from corral.tools import Toolbox

# each changes the tree when run: none is among what the text editor offer holds
_NOT_OFFERED = [
    ("delete_file", {"path": "keep.txt"}),
    ("move_file", {"source": "keep.txt", "destination": "gone/keep.txt"}),
    ("make_directory", {"path": "made"}),
    ("write_file", {"path": "new.txt", "content": "model\n"}),
    ("edit_file", {"path": "keep.txt", "oldText": "mine", "newText": "model"}),
]


def _tree(base: Path) -> dict[str, bytes | None]:
    return {str(p.relative_to(base)): None if p.is_dir() else p.read_bytes()
            for p in sorted(base.rglob("*"))}


def _project(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    root.mkdir()
    (root / "keep.txt").write_text("mine\n")
    return root


def _use(call_id: str, name: str, args: dict[str, Any]) -> dict[str, Any]:
    return {"type": "tool_use", "id": call_id, "name": name, "input": args}


@pytest.mark.parametrize("name,args", _NOT_OFFERED, ids=[n for n, _ in _NOT_OFFERED])
def test_tool_results_refuse_a_tool_the_text_editor_offer_does_not_hold(tmp_path, make_root,
                                                                       name, args):
    root = _project(tmp_path)
    toolbox = Toolbox(make_root(str(root)))
    offered = {tool["name"] for tool in anthropic_tools(toolbox, editor="text_editor")}
    assert name not in offered
    before = _tree(root)
    [result] = anthropic_tool_results(toolbox, [_use("t1", name, args)], editor="text_editor")
    assert result["is_error"] is True, result
    assert result["tool_use_id"] == "t1"
    assert name in str(result["content"]), result
    assert _tree(root) == before


@dataclass
class _Reply:
    content: list[dict[str, Any]]
    stop_reason: str


@dataclass
class _Messages:
    replies: list[_Reply]
    sent: list[dict[str, Any]] = field(default_factory=list)

    def create(self, **request: Any) -> _Reply:
        self.sent.append(request)
        return self.replies[len(self.sent) - 1]


@dataclass
class _Client:
    messages: _Messages


def test_run_anthropic_with_the_text_editor_runs_only_what_it_offered(tmp_path, make_root):
    """A reply asking, in one turn, for the text editor and for every
    mutating corral tool the offer leaves out: the editor's view runs; the
    others are refused and the tree is as it was."""
    root = _project(tmp_path)
    toolbox = Toolbox(make_root(str(root)))
    blocks = [_use("v", "str_replace_based_edit_tool", {"command": "view", "path": "keep.txt"}),
              *(_use(f"t{i}", name, args) for i, (name, args) in enumerate(_NOT_OFFERED))]
    client = _Client(_Messages([_Reply(blocks, "tool_use"),
                                _Reply([{"type": "text", "text": "done"}], "end_turn")]))
    before = _tree(root)
    messages: list[Any] = [{"role": "user", "content": "tidy up"}]
    run_anthropic(toolbox, messages, model="claude-test", client=client, editor="text_editor")
    results = messages[2]["content"]
    assert [r["tool_use_id"] for r in results] == ["v", *(f"t{i}" for i in
                                                         range(len(_NOT_OFFERED)))]
    assert results[0]["is_error"] is False and "mine" in results[0]["content"]
    assert all(r["is_error"] is True for r in results[1:]), results
    assert _tree(root) == before


@pytest.mark.parametrize("name,args", _NOT_OFFERED, ids=[n for n, _ in _NOT_OFFERED])
def test_a_tool_apply_patch_stands_in_for_is_not_called_read_only(tmp_path, make_root, name,
                                                                   args):
    """``corral serve --apply-patch`` (``editing="apply_patch"``): a model
    calling ``write_file`` is refused, and told the truth: files change
    here through apply_patch.  It was told "this root is read-only... Do
    not try to change files here", an answer that disagrees with what the
    root allows (the model stops changing files it was set to change)."""
    root = _project(tmp_path)
    toolbox = Toolbox(make_root(str(root)), editing="apply_patch")
    before = _tree(root)
    answer = toolbox.call(name, args)
    assert answer["ok"] is False
    assert answer["details"]["kind"] != "read_only", answer
    assert "read-only" not in answer["message"] + answer.get("hint", ""), answer
    assert "apply_patch" in answer.get("hint", ""), answer
    assert _tree(root) == before
    patch = "*** Begin Patch\n*** Update File: keep.txt\n@@\n-mine\n+patched\n*** End Patch\n"
    assert toolbox.call("apply_patch", {"input": patch})["ok"] is True
