"""Configs longer than the look at open reads of them: a git config of
1,000 tracked branches (88 KB, as ``git branch --track`` leaves it) with
``core.fsmonitor`` and a ``!`` alias after them, a hook script with its
program after 70 KB of lines, a ``.vscode/tasks.json`` whose
``folderOpen`` task comes after 70 KB of others.  git, the hook and VS
Code read them whole, so the scripts they name are protected wherever in
the file they are named; and past the bound the look reads at all
(``MAX_FILE_BYTES``, made 4 KB here) every path is protected, since what
the rest names is not known."""
from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from corral.tools import Toolbox
from corral.tools._policy import gitdirs

SCRIPT = "#!/bin/sh\necho checks\n"


def _repository(base: Path) -> None:
    for sub in ("hooks", "objects", "refs/heads"):
        (base / ".git" / sub).mkdir(parents=True, exist_ok=True)
    (base / ".git" / "HEAD").write_text("ref: refs/heads/main\n")
    (base / ".git" / "config").write_text("[core]\n\trepositoryformatversion = 0\n")


def _git_config(base: Path, branches: int) -> list[str]:
    pad = "".join(f'[branch "topic-{i:05d}"]\n\tremote = origin\n\tmerge = refs/heads/topic-{i:05d}\n'
                  for i in range(branches))
    (base / ".git" / "config").write_text("[core]\n\tbare = false\n" + pad +
                                          "[core]\n\tfsmonitor = scripts/fsmon.sh\n"
                                          "[alias]\n\tlint = !scripts/lint.sh\n")
    return ["scripts/fsmon.sh", "scripts/lint.sh"]


def _hook(base: Path, lines: int) -> list[str]:
    hook = base / ".git" / "hooks" / "pre-commit"
    hook.write_text("#!/bin/sh\n" + "echo step\n" * lines + "./scripts/check.sh\n")
    hook.chmod(0o755)
    return ["scripts/check.sh"]


def _tasks(base: Path, tasks: int) -> list[str]:
    listed = [{"label": f"task {i}", "type": "shell", "command": "echo hello"}
              for i in range(tasks)]
    listed.append({"label": "setup", "type": "shell", "command": "./scripts/setup.sh",
                   "runOptions": {"runOn": "folderOpen"}})
    (base / ".vscode").mkdir()
    (base / ".vscode" / "tasks.json").write_text(json.dumps({"version": "2.0.0",
                                                             "tasks": listed}, indent=2))
    return ["scripts/setup.sh"]


_SHAPES = {"git_config": (_git_config, 1000, 60), "hook": (_hook, 7000, 500),
           "tasks": (_tasks, 900, 60)}


def _attempts(box: Toolbox, script: str) -> list[dict]:
    return [box.call("write_file", {"path": script, "content": "#!/bin/sh\necho MODEL\n",
                                    "overwrite": True}),
            box.call("edit_file", {"path": script, "oldText": "checks", "newText": "MODEL"}),
            box.call("move_file", {"source": "model.sh", "destination": script,
                                   "overwrite": True}),
            box.call("delete_file", {"path": script})]


@pytest.mark.parametrize("shape", sorted(_SHAPES))
@pytest.mark.parametrize("bound", ["real", "small"])
def test_a_program_named_late_in_a_long_config_is_protected(tmp_path, make_root, monkeypatch,
                                                            shape, bound):
    make, long_size, small_size = _SHAPES[shape]
    if bound == "small":
        monkeypatch.setattr(gitdirs, "MAX_FILE_BYTES", 4096)
    _repository(tmp_path)
    scripts = make(tmp_path, long_size if bound == "real" else small_size)
    (tmp_path / "scripts").mkdir()
    for script in scripts:
        (tmp_path / script).write_text(SCRIPT)
        (tmp_path / script).chmod(0o755)
    (tmp_path / "model.sh").write_text("#!/bin/sh\necho MODEL\n")
    box = Toolbox(make_root(str(tmp_path)))
    for script in scripts:
        for answer in _attempts(box, script):
            assert answer["ok"] is False and answer["code"] == "DENIED", (script, answer)
        assert (tmp_path / script).read_text() == SCRIPT
        assert os.access(tmp_path / script, os.X_OK)
    if bound == "real":  # read whole: the rest of the tree is the model's as before
        wrote = box.call("write_file", {"path": "notes.txt", "content": "plain\n"})
        assert wrote["ok"] is True, wrote


def test_a_hook_naming_more_programs_than_are_looked_up_protects_everything(tmp_path, make_root):
    """A hook naming 600 programs (more than the look looks up) and then
    ``./scripts/check.sh``: what it names past the bound is not known, so
    every path is protected."""
    _repository(tmp_path)
    hook = tmp_path / ".git" / "hooks" / "pre-commit"
    hook.write_text("#!/bin/sh\n" + "".join(f"./tools/step{i}.sh\n" for i in range(600))
                    + "./scripts/check.sh\n")
    hook.chmod(0o755)
    (tmp_path / "scripts").mkdir()
    (tmp_path / "scripts" / "check.sh").write_text(SCRIPT)
    (tmp_path / "model.sh").write_text("#!/bin/sh\necho MODEL\n")
    box = Toolbox(make_root(str(tmp_path)))
    for answer in _attempts(box, "scripts/check.sh"):
        assert answer["ok"] is False and answer["code"] == "DENIED", answer
    assert (tmp_path / "scripts" / "check.sh").read_text() == SCRIPT
