"""An independent red-team pass over what a step on one root of a
Workspace knows of the other roots' links after another Toolbox of this
process moved one of them.

A Workspace of ``outer`` and ``outer/sub`` (or of ``app`` and ``shared``
beside it) holds each root to the links of the other: ``outer/.vscode ->
sub/editor`` protects ``editor`` when it is written through the inner root.
Here the link is put in place by a second Toolbox on the outer root (a
second agent, an embedder's own Toolbox) after the Workspace was used; the
Workspace then writes into the folder the link leads to, through the root
the link does not live in.  Every backend config, alone and with the
calls sent at once.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from corral.tools import Toolbox, Workspace


def _nested(tmp_path: Path, make_root) -> tuple[Workspace, Path, str, str]:
    outer = tmp_path / "outer"
    (outer / "sub" / "editor").mkdir(parents=True)
    os.symlink("sub/editor", outer / "lnk")
    ws = Workspace({"outer": Toolbox(make_root(str(outer))),
                    "inner": Toolbox(make_root(str(outer / "sub")))})
    return ws, outer, "inner/editor", str(outer)


def _beside(tmp_path: Path, make_root) -> tuple[Workspace, Path, str, str]:
    app, shared = tmp_path / "app", tmp_path / "shared"
    app.mkdir()
    (shared / "editor").mkdir(parents=True)
    os.symlink("../shared/editor", app / "lnk")
    ws = Workspace({"app": Toolbox(make_root(str(app))),
                    "shared": Toolbox(make_root(str(shared)))})
    return ws, app, "shared/editor", str(app)


_LAYOUTS = {"nested": _nested, "beside": _beside}


def _writes(folder: str) -> list[tuple[str, dict]]:
    return [("write_file", {"path": f"{folder}/tasks.json", "content": '{"tasks": []}\n'}),
            ("edit_file", {"path": f"{folder}/settings.json", "oldText": '"a": 1',
                           "newText": '"terminal.integrated.shellArgs": "x"'}),
            ("write_file", {"path": f"{folder}/settings.json", "content": "{}\n",
                            "overwrite": True})]


def _untouched(holder: Path) -> None:
    assert not (holder / ".vscode" / "tasks.json").exists()
    assert (holder / ".vscode" / "settings.json").read_text() == '{"a": 1}\n'


@pytest.mark.parametrize("sent", ["one_by_one", "at_once"])
@pytest.mark.parametrize("layout", sorted(_LAYOUTS))
def test_a_link_another_toolbox_moved_onto_vscode_holds_through_the_other_root(
        tmp_path, make_root, layout, sent):
    ws, holder, folder, holder_path = _LAYOUTS[layout](tmp_path, make_root)
    # the Workspace has been used through the root the link leads into
    assert ws.call("write_file", {"path": f"{folder}/notes.txt", "content": "x\n"})["ok"]
    moved = Toolbox(make_root(holder_path)).call("move_file", {"source": "lnk",
                                                               "destination": ".vscode"})
    assert moved["ok"], moved
    (holder / ".vscode" / "settings.json").write_text('{"a": 1}\n')  # the user's, made since

    async def turn() -> list[dict]:
        return list(await asyncio.gather(*(ws.acall(tool, args)
                                           for tool, args in _writes(folder))))

    answers = [ws.call(tool, args) for tool, args in _writes(folder)] \
        if sent == "one_by_one" else asyncio.run(turn())
    _untouched(holder)
    assert all(a["ok"] is False and a["code"] == "DENIED" for a in answers), answers


# One move made by another process on the root holding the link (a second
# ``corral serve`` of that root alone, its own Toolbox and process-wide locks).
_OTHER = """
import json, sys
from corral.contained import Root, backend_by_name
from corral.tools import Toolbox
path, backend, fast = sys.argv[1:4]
root = Root(path, backend=backend_by_name(backend), fast_path=fast == "1")
print(json.dumps(Toolbox(root).call("move_file", {"source": "lnk", "destination": ".vscode"})))
"""


@pytest.mark.parametrize("layout", sorted(_LAYOUTS))
def test_a_link_another_process_moved_onto_vscode_holds_through_the_other_root(
        tmp_path, make_root, layout):
    ws, holder, folder, holder_path = _LAYOUTS[layout](tmp_path, make_root)
    assert ws.call("write_file", {"path": f"{folder}/notes.txt", "content": "x\n"})["ok"]
    src = str(Path(__file__).resolve().parents[2] / "src")
    env = {**os.environ, "PYTHONPATH": src + os.pathsep + os.environ.get("PYTHONPATH", "")}
    done = subprocess.run([sys.executable, "-c", _OTHER, holder_path, make_root.backend_name,
                           "1" if make_root.fast_path else "0"], capture_output=True,
                          text=True, timeout=60, env=env, check=True)
    moved = json.loads(done.stdout)
    assert moved["ok"], moved
    (holder / ".vscode" / "settings.json").write_text('{"a": 1}\n')  # the user's, made since
    answers = [ws.call(tool, args) for tool, args in _writes(folder)]
    _untouched(holder)
    assert all(a["ok"] is False and a["code"] == "DENIED" for a in answers), answers
