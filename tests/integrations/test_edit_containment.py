"""Containment through each way a vendor's edit tool reaches the root:
corral's ``apply_patch`` tool (the Codex envelope), Claude's text editor
(``anthropic_tool_results``) and the Agents SDK's editor (``CorralEditor``,
V4A operations).  Each is given the same attacks, a path out of the root, a
path through a link that leads out, a protected name, a denied name, a
secret, and (where the tool can move) a move out: each refuses with the same
code and nothing changes, inside the root or outside it, on every backend
config."""

from __future__ import annotations

import asyncio
import os
from collections.abc import Callable
from pathlib import Path

import pytest
from agents.editor import ApplyPatchOperation

from corral.integrations import anthropic_tool_results
from corral.integrations.openai_agents import CorralEditor
from corral.tools import Toolbox

from ..helpers import tree_snapshot

ABSOLUTE = "/tmp/corral-edit-containment.txt"


@pytest.fixture
def hostile(tmp_path: Path) -> tuple[Path, Path]:
    root, outside = tmp_path / "root", tmp_path / "outside"
    (root / "src").mkdir(parents=True)
    (root / "notes.txt").write_text("hello\nworld\n")
    (root / ".env").write_text("KEY=1\n")
    (root / "private").mkdir()
    (root / "private" / "key.txt").write_text("k\n")
    (root / ".git" / "hooks").mkdir(parents=True)
    (root / "scripts").mkdir()
    (root / "scripts" / "pre-commit").write_text("#!/bin/sh\n")
    os.symlink("../../scripts/pre-commit", root / ".git" / "hooks" / "pre-commit")
    outside.mkdir()
    (outside / "secret.txt").write_text("a\n")
    os.symlink(outside, root / "out")
    return root, outside


# attack -> (the text editor's call, the V4A operation, the envelope section, code)
Attack = tuple[dict[str, object] | None, ApplyPatchOperation, str, str]
ATTACKS: dict[str, Attack] = {
    "dotdot": ({"command": "str_replace", "path": "../outside/secret.txt", "old_str": "a",
                "new_str": "b"},
               ApplyPatchOperation(type="update_file", path="../outside/secret.txt",
                                   diff="@@\n-a\n+b\n"),
               "*** Update File: ../outside/secret.txt\n@@\n-a\n+b\n", "OUTSIDE_ROOT"),
    "absolute": ({"command": "create", "path": ABSOLUTE, "file_text": "x\n"},
                 ApplyPatchOperation(type="create_file", path=ABSOLUTE, diff="+x\n"),
                 f"*** Add File: {ABSOLUTE}\n+x\n", "OUTSIDE_ROOT"),
    "link-update": ({"command": "str_replace", "path": "out/secret.txt", "old_str": "a",
                     "new_str": "b"},
                    ApplyPatchOperation(type="update_file", path="out/secret.txt",
                                        diff="@@\n-a\n+b\n"),
                    "*** Update File: out/secret.txt\n@@\n-a\n+b\n", "OUTSIDE_ROOT"),
    "link-create": ({"command": "create", "path": "out/new.txt", "file_text": "x\n"},
                    ApplyPatchOperation(type="create_file", path="out/new.txt", diff="+x\n"),
                    "*** Add File: out/new.txt\n+x\n", "OUTSIDE_ROOT"),
    "protected": ({"command": "create", "path": ".vscode/tasks.json", "file_text": "{}\n"},
                  ApplyPatchOperation(type="create_file", path=".vscode/tasks.json",
                                      diff="+{}\n"),
                  "*** Add File: .vscode/tasks.json\n+{}\n", "DENIED"),
    "protected-by-link": ({"command": "str_replace", "path": "scripts/pre-commit",
                           "old_str": "#!/bin/sh", "new_str": "#!/bin/sh\nevil"},
                          ApplyPatchOperation(type="update_file", path="scripts/pre-commit",
                                              diff="@@\n #!/bin/sh\n+evil\n"),
                          "*** Update File: scripts/pre-commit\n@@\n #!/bin/sh\n+evil\n",
                          "DENIED"),
    "hook": ({"command": "create", "path": ".git/hooks/post-merge", "file_text": "#!/bin/sh\n"},
             ApplyPatchOperation(type="create_file", path=".git/hooks/post-merge",
                                 diff="+#!/bin/sh\n"),
             "*** Add File: .git/hooks/post-merge\n+#!/bin/sh\n", "DENIED"),
    "secret": ({"command": "str_replace", "path": ".env", "old_str": "KEY=1",
                "new_str": "KEY=2"},
               ApplyPatchOperation(type="update_file", path=".env", diff="@@\n-KEY=1\n+KEY=2\n"),
               "*** Update File: .env\n@@\n-KEY=1\n+KEY=2\n", "DENIED"),
    "denied": ({"command": "str_replace", "path": "private/key.txt", "old_str": "k",
                "new_str": "x"},
               ApplyPatchOperation(type="update_file", path="private/key.txt",
                                   diff="@@\n-k\n+x\n"),
               "*** Update File: private/key.txt\n@@\n-k\n+x\n", "DENIED"),
    "move-out": (None,
                 ApplyPatchOperation(type="update_file", path="notes.txt",
                                     diff="@@\n-hello\n+bye\n", move_to="../moved.txt"),
                 "*** Update File: notes.txt\n*** Move to: ../moved.txt\n@@\n-hello\n+bye\n",
                 "OUTSIDE_ROOT"),
    "move-through-link": (None,
                          ApplyPatchOperation(type="update_file", path="notes.txt",
                                              diff="@@\n-hello\n+bye\n",
                                              move_to="out/moved.txt"),
                          "*** Update File: notes.txt\n*** Move to: out/moved.txt\n@@\n"
                          "-hello\n+bye\n", "OUTSIDE_ROOT"),
    "move-onto-protected": (None,
                            ApplyPatchOperation(type="update_file", path="notes.txt",
                                                diff="@@\n-hello\n+{}\n",
                                                move_to=".vscode/tasks.json"),
                            "*** Update File: notes.txt\n*** Move to: .vscode/tasks.json\n@@\n"
                            "-hello\n+{}\n", "DENIED"),
}


def _by_tool(box: Toolbox, attack: Attack) -> str:
    out = box.call("apply_patch", {"input": f"*** Begin Patch\n{attack[2]}*** End Patch\n"})
    assert out["ok"] is False and out["hint"], out
    return str(out["code"])


def _by_text_editor(box: Toolbox, attack: Attack) -> str:
    assert attack[0] is not None
    (result,) = anthropic_tool_results(box, [{"type": "tool_use", "id": "t", "input": attack[0],
                                              "name": "str_replace_based_edit_tool"}])
    assert result["is_error"] is True, result
    return str(result["content"]).split(":", 1)[0]


def _by_agents_editor(box: Toolbox, attack: Attack) -> str:
    operation = attack[1]
    editor = CorralEditor(box)
    method = editor.create_file if operation.type == "create_file" else editor.update_file
    result = asyncio.run(method(operation))
    assert result.status == "failed" and result.output and "\n" in result.output, result
    return result.output.split(":", 1)[0]


WAYS: dict[str, Callable[[Toolbox, Attack], str]] = {
    "apply_patch": _by_tool, "text_editor": _by_text_editor, "agents_editor": _by_agents_editor}


@pytest.mark.parametrize("attack,way", [
    (attack, way) for attack in ATTACKS for way in WAYS
    if not (way == "text_editor" and ATTACKS[attack][0] is None)])  # it has no move
def test_each_way_in_refuses_and_changes_nothing(hostile: tuple[Path, Path], make_root,  # type: ignore[no-untyped-def]
                                                 way: str, attack: str) -> None:
    root, outside = hostile
    with Toolbox(make_root(root), deny=["private"]) as box:  # opened with the links in place
        before, outside_before = tree_snapshot(root), tree_snapshot(outside)
        code = WAYS[way](box, ATTACKS[attack])
    assert code == ATTACKS[attack][3]
    assert tree_snapshot(root) == before and tree_snapshot(outside) == outside_before
    assert not Path(ABSOLUTE).exists()
