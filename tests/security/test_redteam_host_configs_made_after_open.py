"""Host configs another program makes or changes while a Toolbox is open
(a ``git checkout`` of a branch holding them, a long ``corral serve``):
an ``.envrc`` made in a folder there at open or made since, one changed
to put ``bin`` on ``PATH``, a ``.vscode/tasks.json`` whose ``folderOpen``
task runs ``./scripts/setup.sh`` made in a ``.vscode`` there at open.
What they run is protected from the next call on, with the kernel's
watch and without one."""
from __future__ import annotations

import json
import os
import time
from pathlib import Path

import pytest

from corral.tools import Toolbox

TASKS = json.dumps({"version": "2.0.0", "tasks": [
    {"label": "setup", "type": "shell", "command": "./scripts/setup.sh",
     "runOptions": {"runOn": "folderOpen"}}]})


def _before(base: Path, shape: str) -> None:
    (base / "scripts").mkdir()
    (base / "scripts" / "setup.sh").write_text("echo setup\n")
    if shape != "envrc_in_a_new_folder":
        (base / "app" / "bin").mkdir(parents=True)
    if shape == "envrc_changed":
        (base / "app" / ".envrc").write_text("export A=1\n")
    if shape == "tasks_made":
        (base / ".vscode").mkdir()
        (base / ".vscode" / "settings.json").write_text("{}\n")


def _after(base: Path, shape: str) -> str:
    if shape == "tasks_made":
        (base / ".vscode" / "tasks.json").write_text(TASKS)
        return "scripts/setup.sh"
    if shape == "envrc_in_a_new_folder":
        (base / "app" / "bin").mkdir(parents=True)
    (base / "app" / ".envrc").write_text("export A=1\nPATH_add bin\n")
    if shape == "envrc_changed":  # the times an edit in place leaves
        os.utime(base / "app" / ".envrc", ns=(time.time_ns(), time.time_ns() + 10**9))
    return "app/bin/git"


@pytest.mark.parametrize("shape", ["envrc_made", "envrc_in_a_new_folder", "envrc_changed",
                                   "tasks_made"])
def test_what_a_host_config_made_after_open_runs_is_protected(sec_tmp, make_root, watching,
                                                              shape):
    base = Path(sec_tmp)
    _before(base, shape)
    box = Toolbox(make_root(sec_tmp))
    assert box.call("list_directory", {"path": "."})["ok"]
    target = _after(base, shape)
    time.sleep(0.05)
    answer = box.call("write_file", {"path": target, "content": "#!/bin/sh\necho MODEL\n",
                                     "overwrite": True})
    assert answer["ok"] is False and answer["code"] == "DENIED", answer
    assert not (base / target).exists() or "MODEL" not in (base / target).read_text()
