"""The OpenAI Agents SDK's own run loop with ``apply_patch_tool(toolbox)``:
a scripted model sends the Responses API's apply_patch calls (create,
update in V4A, delete, a move), the SDK hands each operation to
``CorralEditor``, and every refusal comes back to the model as a failed
``apply_patch_call_output`` carrying corral's sentence and hint while the
run goes on and nothing on disk changes.  corral's V4A results are compared
with the SDK's own ``agents.apply_diff`` on the same texts."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path
from typing import Any

import pytest
from agents import Agent, ApplyPatchTool, Runner, apply_diff, set_tracing_disabled
from agents.editor import ApplyPatchOperation, ApplyPatchResult
from agents.testing import ScriptedModel, assistant_message

from corral.integrations import apply_patch_tool
from corral.integrations.openai_agents import CorralEditor
from corral.tools import Toolbox

from ..helpers import tree_snapshot

set_tracing_disabled(True)  # offline: no trace export


def _call(call_id: str, type_: str, path: str, diff: str | None = None,
          move_to: str | None = None) -> dict[str, Any]:
    operation: dict[str, Any] = {"type": type_, "path": path}
    if diff is not None:
        operation["diff"] = diff
    if move_to is not None:
        operation["move_to"] = move_to
    return {"type": "apply_patch_call", "call_id": call_id, "status": "completed",
            "operation": operation}


def _run(toolbox: Toolbox, steps: list[list[Any]]) -> tuple[Any, ScriptedModel]:
    model = ScriptedModel([*steps, [assistant_message("done")]])
    agent = Agent(name="coder", instructions="Edit files.", model=model,
                  tools=[apply_patch_tool(toolbox)])
    result = asyncio.run(Runner.run(agent, "Edit the project."))
    assert result.final_output == "done"
    return result, model


def _outputs(result: Any) -> list[dict[str, Any]]:
    return [item.raw_item for item in result.new_items if item.type == "tool_call_output_item"]


def test_the_tool_is_the_sdks_with_corrals_editor(toolbox: Toolbox) -> None:
    tool = apply_patch_tool(toolbox)
    assert isinstance(tool, ApplyPatchTool) and isinstance(tool.editor, CorralEditor)
    assert tool.editor.toolbox is toolbox


def test_create_update_move_and_delete_through_the_run_loop(toolbox: Toolbox,
                                                            project: Path) -> None:
    result, model = _run(toolbox, [
        [_call("c1", "create_file", "docs/guide.md", "+# Guide\n+\n+Read me.\n")],
        [_call("c2", "update_file", "src/util.py",
               "@@ def util():\n-    return 1\n+    return 2\n")],
        [_call("c3", "update_file", "notes.txt", "@@\n hello\n-world\n+there\n",
               move_to="docs/notes.txt")],
        [_call("c4", "delete_file", "src/util.py")],
    ])
    outputs = _outputs(result)
    assert [o["status"] for o in outputs] == ["completed"] * 4, outputs
    assert [o["call_id"] for o in outputs] == ["c1", "c2", "c3", "c4"]
    # a V4A new file ends where its last '+' line ends, as apply_diff makes it
    assert (project / "docs/guide.md").read_text() == "# Guide\n\nRead me."
    assert (project / "docs/notes.txt").read_text() == "hello\nthere\n"
    assert not (project / "notes.txt").exists()
    assert not (project / "src/util.py").exists()
    # the model's second turn saw the first result
    assert "docs/guide.md" in str(model.calls[1].input)


def test_an_update_seen_by_the_model_before_the_delete(toolbox: Toolbox, project: Path) -> None:
    result, _ = _run(toolbox, [
        [_call("u", "update_file", "src/util.py", "@@\n def util():\n-    return 1\n"
               "+    return 7\n")],
    ])
    [output] = _outputs(result)
    assert output["status"] == "completed", output
    assert (project / "src/util.py").read_text() == "def util():\n    return 7\n"


@pytest.fixture
def hostile(project: Path, tmp_path: Path) -> Path:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_text("a\n")
    os.symlink(outside, project / "out")
    (project / ".env").write_text("KEY=1\n")
    (project / ".git" / "hooks").mkdir(parents=True)
    return outside


REFUSED = [
    (_call("r1", "update_file", "../outside/secret.txt", "@@\n-a\n+b\n"), "OUTSIDE_ROOT"),
    (_call("r2", "create_file", "/tmp/corral-agents-apply-patch", "+x\n"), "OUTSIDE_ROOT"),
    (_call("r3", "update_file", "out/secret.txt", "@@\n-a\n+b\n"), "OUTSIDE_ROOT"),
    (_call("r4", "create_file", "out/new.txt", "+x\n"), "OUTSIDE_ROOT"),
    (_call("r5", "delete_file", "out/secret.txt"), "OUTSIDE_ROOT"),
    (_call("r6", "update_file", "notes.txt", "@@\n-hello\n+bye\n", move_to="../moved.txt"),
     "OUTSIDE_ROOT"),
    (_call("r7", "update_file", "notes.txt", "@@\n-hello\n+bye\n", move_to="out/moved.txt"),
     "OUTSIDE_ROOT"),
    (_call("r8", "create_file", ".git/hooks/pre-commit", "+#!/bin/sh\n"), "DENIED"),
    (_call("r9", "update_file", ".env", "@@\n-KEY=1\n+KEY=2\n"), "DENIED"),
    (_call("r10", "update_file", "notes.txt", "@@\n-hello\n+{}\n",
           move_to=".vscode/tasks.json"), "DENIED"),
    (_call("r11", "update_file", "src/util.py", "@@\n-    return 42\n+    return 0\n"),
     "NOT_FOUND"),
    (_call("r12", "create_file", "notes.txt", "+over\n"), "ALREADY_EXISTS"),
    (_call("r13", "update_file", "notes.txt", "@@\n-hello\n+x\n", move_to="src/util.py"),
     "ALREADY_EXISTS"),
]


@pytest.mark.parametrize("call,code", REFUSED, ids=[c["call_id"] for c, _ in REFUSED])
def test_a_refusal_is_a_failed_result_and_the_run_goes_on(project: Path, hostile: Path,
                                                          call: dict[str, Any],
                                                          code: str) -> None:
    with Toolbox(project) as toolbox:  # opened with the links in place
        before, outside_before = tree_snapshot(project), tree_snapshot(hostile)
        result, model = _run(toolbox, [
            [call],
            [_call("ok", "update_file", "notes.txt", "@@\n hello\n-world\n+corral\n")],
        ])
    refused, recovered = _outputs(result)
    assert refused["status"] == "failed", refused
    assert refused["output"].startswith(f"{code}: "), refused
    sentence, _, hint = refused["output"].partition("\n")
    assert len(sentence) > len(code) + 10 and hint, refused  # corral's sentence, then its hint
    # the model's next turn carried the refusal, and the run went on to the next call
    seen = [item for item in model.calls[1].input
            if isinstance(item, dict) and item.get("type") == "apply_patch_call_output"]
    assert [item.get("output") for item in seen] == [refused["output"]]
    assert recovered["status"] == "completed", recovered
    after = tree_snapshot(project)
    assert after.pop("notes.txt") == b"hello\ncorral\n"
    before.pop("notes.txt")
    assert after == before and tree_snapshot(hostile) == outside_before
    assert not Path("/tmp/corral-agents-apply-patch").exists()


def test_a_missed_hunk_names_the_nearest_lines(toolbox: Toolbox, project: Path) -> None:
    result, _ = _run(toolbox, [
        [_call("m", "update_file", "src/util.py", "@@\n def util():\n-    return 42\n"
               "+    return 0\n")],
    ])
    [output] = _outputs(result)
    assert output["status"] == "failed"
    assert output["output"].startswith("NOT_FOUND: ") and "src/util.py" in output["output"]
    assert (project / "src/util.py").read_text() == "def util():\n    return 1\n"


@pytest.mark.parametrize("operation", [
    ApplyPatchOperation(type="update_file", path="notes.txt\n*** Add File: x", diff="+x\n"),
    ApplyPatchOperation(type="update_file", path="notes.txt",
                        diff="@@\n-hello\n+x\n*** Delete File: src/util.py\n"),
    ApplyPatchOperation(type="create_file", path="a.txt",
                        diff="+a\n*** End Patch\n*** Begin Patch\n*** Delete File: notes.txt\n"),
    ApplyPatchOperation(type="rename_file", path="notes.txt"),  # type: ignore[arg-type]
])
def test_an_operation_cannot_smuggle_another_file(toolbox: Toolbox, project: Path,
                                                  operation: ApplyPatchOperation) -> None:
    before = tree_snapshot(project)
    editor = CorralEditor(toolbox)
    method = {"update_file": editor.update_file, "create_file": editor.create_file}.get(
        operation.type, editor.update_file)
    out = asyncio.run(method(operation))
    assert isinstance(out, ApplyPatchResult) and out.status == "failed", out
    assert out.output and ":" in out.output
    assert tree_snapshot(project) == before


# -- corral's V4A against the SDK's apply_diff --------------------------------------

SAME = [
    ("a\nb\nc\n", "@@\n a\n-b\n+B\n c\n"),
    ("a\r\nb\r\nc\r\n", "@@\n a\n-b\n+B\n"),
    ("a\nb\nc", "@@\n b\n-c\n+C\n"),
    ("def f():\n    x = 1\n    return x\n", "@@ def f():\n+    # added\n"),
    ("one\ntwo\nthree\nfour\nfive\nsix\n",
     "@@\n one\n-two\n+2\n three\n@@\n five\n-six\n+6\n"),
    ("x\ny\n", "@@\n x\n-y\n+y\n+z\n*** End of File\n"),
    ("k = 1\nv = 2\n", "@@\n-k = 1  \n+k = 3\n"),
]


@pytest.mark.parametrize("text,diff", SAME)
def test_v4a_updates_agree_with_apply_diff(toolbox: Toolbox, project: Path, text: str,
                                           diff: str) -> None:
    (project / "f.txt").write_bytes(text.encode())
    out = asyncio.run(CorralEditor(toolbox).update_file(
        ApplyPatchOperation(type="update_file", path="f.txt", diff=diff)))
    assert out.status == "completed", out
    assert (project / "f.txt").read_bytes().decode() == apply_diff(text, diff)


@pytest.mark.parametrize("diff", ["+a\n+b\n", "+only\n", "+\n+x\n", "+a\n+\n", "+a\r\n+b\r\n",
                                  "+a\r\n+b"])
def test_v4a_new_files_agree_with_apply_diff(toolbox: Toolbox, project: Path,
                                             diff: str) -> None:
    out = asyncio.run(CorralEditor(toolbox).create_file(
        ApplyPatchOperation(type="create_file", path="new.txt", diff=diff)))
    assert out.status == "completed", out
    assert (project / "new.txt").read_bytes().decode() == apply_diff("", diff, "create")


def test_deliberate_difference_an_ambiguous_hunk_is_refused(toolbox: Toolbox,
                                                            project: Path) -> None:
    # apply_diff changes the first match; corral refuses a hunk its context
    # does not place uniquely, and nothing changes
    text = "x = 1\ny = 2\nx = 1\ny = 2\n"
    diff = "@@\n x = 1\n-y = 2\n+y = 3\n"
    assert apply_diff(text, diff) == "x = 1\ny = 3\nx = 1\ny = 2\n"
    (project / "f.txt").write_text(text)
    out = asyncio.run(CorralEditor(toolbox).update_file(
        ApplyPatchOperation(type="update_file", path="f.txt", diff=diff)))
    assert out.status == "failed" and out.output
    assert (project / "f.txt").read_text() == text


def test_deliberate_difference_create_onto_an_existing_file_is_refused(
        toolbox: Toolbox, project: Path) -> None:
    # apply_diff's create mode knows no file; the SDK's sample editors overwrite
    out = asyncio.run(CorralEditor(toolbox).create_file(
        ApplyPatchOperation(type="create_file", path="notes.txt", diff="+over\n")))
    assert out.status == "failed" and out.output and out.output.startswith("ALREADY_EXISTS")
    assert (project / "notes.txt").read_text() == "hello\nworld\n"
