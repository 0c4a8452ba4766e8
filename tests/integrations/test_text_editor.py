"""Claude's text editor tool (str_replace_based_edit_tool) on a toolbox:
run_anthropic with the real SDK client over a mocked transport, and each
command's results and refusals on a real tree."""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

import anthropic
import httpx2
import pytest

from corral.integrations import anthropic_tool_results, anthropic_tools, run_anthropic
from corral.integrations.anthropic import text_editor_tool
from corral.tools import Toolbox


def _use(call_id: str, args: dict[str, object]) -> dict[str, object]:
    return {"type": "tool_use", "id": call_id, "name": "str_replace_based_edit_tool",
            "input": args}


def _run(toolbox: Toolbox, *args: dict[str, object]) -> list[dict[str, object]]:
    return anthropic_tool_results(toolbox, [_use(f"t{i}", a) for i, a in enumerate(args)])


def _snapshot(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*"))
            if p.is_file() and not p.is_symlink()}


def test_definition_and_tool_list_offer_one_way_to_change_files(toolbox: Toolbox) -> None:
    assert text_editor_tool(toolbox) == {"type": "text_editor_20250728",
                                         "name": "str_replace_based_edit_tool"}
    assert text_editor_tool(toolbox, 5000)["max_characters"] == 5000
    names = [tool["name"] for tool in anthropic_tools(toolbox, editor="text_editor")]
    assert names[-1] == "str_replace_based_edit_tool"
    assert "read_file" in names and "grep" in names
    assert not {"write_file", "edit_file", "move_file", "delete_file"} & set(names)


def test_view_file_with_range_and_directory(toolbox: Toolbox, project: Path) -> None:
    (project / "long.txt").write_text("".join(f"line {n}\n" for n in range(1, 11)))
    whole, window, tail, listing = _run(
        toolbox, {"command": "view", "path": "src/util.py"},
        {"command": "view", "path": "long.txt", "view_range": [3, 4]},
        {"command": "view", "path": "long.txt", "view_range": [9, -1]},
        {"command": "view", "path": "."})
    assert whole["content"] == "1\tdef util():\n2\t    return 1" and not whole["is_error"]
    assert window["content"] == "3\tline 3\n4\tline 4"
    assert tail["content"] == "9\tline 9\n10\tline 10"
    assert not listing["is_error"]
    assert {"src/", "src/util.py", "notes.txt", "long.txt"} <= set(
        str(listing["content"]).split("\n"))


def test_create_str_replace_insert(toolbox: Toolbox, project: Path) -> None:
    results = _run(
        toolbox, {"command": "create", "path": "pkg/new.py", "file_text": "a = 1\n"},
        {"command": "str_replace", "path": "src/util.py", "old_str": "return 1",
         "new_str": "return 2"},
        {"command": "insert", "path": "notes.txt", "insert_line": 1, "new_str": "middle"},
        {"command": "insert", "path": "pkg/new.py", "insert_line": 0, "insert_text": "# top\n"})
    assert [r["is_error"] for r in results] == [False] * 4, results
    assert (project / "pkg/new.py").read_text() == "# top\na = 1\n"
    assert (project / "src/util.py").read_text() == "def util():\n    return 2\n"
    assert (project / "notes.txt").read_text() == "hello\nmiddle\nworld\n"


def test_insert_among_repeated_lines_lands_at_the_line(toolbox: Toolbox, project: Path) -> None:
    (project / "rep.txt").write_text("x\nx\nx\nx\n")
    (result,) = _run(toolbox, {"command": "insert", "path": "rep.txt", "insert_line": 2,
                               "new_str": "here"})
    assert not result["is_error"], result
    assert (project / "rep.txt").read_text() == "x\nx\nhere\nx\nx\n"


@pytest.mark.parametrize("args", [
    {"command": "view", "path": "../outside.txt"},
    {"command": "create", "path": "/etc/corral-text-editor", "file_text": "x"},
    {"command": "create", "path": ".git/hooks/pre-commit", "file_text": "#!/bin/sh\n"},
    {"command": "str_replace", "path": "link/x", "old_str": "a", "new_str": "b"},
    {"command": "str_replace", "path": "src/util.py", "old_str": "nothing like it",
     "new_str": "x"},
    {"command": "insert", "path": "notes.txt", "insert_line": 99, "new_str": "x"},
    {"command": "insert", "path": ".env", "insert_line": 0, "new_str": "X=1"},
    {"command": "view", "path": ".env"},
    {"command": "delete", "path": "notes.txt"},
    {"command": "create", "path": "a.txt"},
    {"path": "notes.txt"},
])
def test_refusals_are_errors_that_change_nothing(toolbox: Toolbox, project: Path,
                                                 args: dict[str, object]) -> None:
    (project / ".git" / "hooks").mkdir(parents=True)
    (project / ".env").write_text("SECRET=1\n")
    os.symlink(project.parent, project / "link")
    before = _snapshot(project)
    (result,) = _run(toolbox, args)
    assert result["is_error"] is True
    text = str(result["content"])
    assert text.split(":", 1)[0] in {"INVALID_ARGUMENT", "NOT_FOUND", "OUTSIDE_ROOT", "DENIED",
                                     "UNSUPPORTED"}, text
    assert "SECRET" not in text
    assert _snapshot(project) == before
    assert not Path("/etc/corral-text-editor").exists()


def test_run_anthropic_with_the_text_editor(toolbox: Toolbox, project: Path) -> None:
    def reply(content: list[dict[str, object]], stop: str) -> dict[str, object]:
        return {"id": "m", "type": "message", "role": "assistant", "model": "claude-test",
                "content": content, "stop_reason": stop, "stop_sequence": None,
                "usage": {"input_tokens": 1, "output_tokens": 1}}

    replies = [
        reply([_use("v", {"command": "view", "path": "src/util.py"})], "tool_use"),
        reply([_use("e", {"command": "str_replace", "path": "src/util.py",
                          "old_str": "    return 1", "new_str": "    return 3"})], "tool_use"),
        reply([{"type": "text", "text": "done"}], "end_turn"),
    ]
    sent: list[dict[str, object]] = []

    def handler(request: httpx2.Request) -> httpx2.Response:
        sent.append(json.loads(request.content))
        return httpx2.Response(200, json=replies[len(sent) - 1])

    client = anthropic.Anthropic(api_key="test", http_client=httpx2.Client(
        transport=httpx2.MockTransport(handler)), max_retries=0)
    messages: list[object] = [{"role": "user", "content": "make util return 3"}]
    final = run_anthropic(toolbox, messages, model="claude-test", client=client,
                          editor="text_editor", max_characters=10_000)
    assert final.content[0].text == "done"
    tools = sent[0]["tools"]
    assert isinstance(tools, list) and tools[-1] == {
        "type": "text_editor_20250728", "name": "str_replace_based_edit_tool",
        "max_characters": 10_000}
    assert (project / "src/util.py").read_text() == "def util():\n    return 3\n"
    viewed = sent[1]["messages"][-1]["content"][0]  # type: ignore[index]
    assert viewed["content"] == "1\tdef util():\n2\t    return 1"
    assert hashlib.sha256((project / "src/util.py").read_bytes()).hexdigest()
