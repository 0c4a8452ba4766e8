"""Host configurations that run code without being asked, in the places
the default policy did not name or did not read:

- mise loads every ``conf.d/*.toml`` fragment under ``.mise/`` (as under
  ``.config/mise/``, protected), its former name's ``.rtx.toml``, and a
  ``MISE_ENV`` file (``mise.dev.toml``, ``.mise/config.ci.toml``) as it
  loads ``mise.toml`` (mise's ``LOCAL_CONFIG_FILENAMES`` and
  ``env_config_patterns``); the hooks and ``_.source`` scripts of those were
  not read, so the scripts they run stayed writable;
- GitHub Copilot CLI runs each ``bash`` line of ``.github/hooks/*.json``
  (from its ``cwd``) at session start and around every tool call: the
  configs are protected, the scripts they run were not;
- a JetBrains file watcher (``.idea/watcherTasks.xml``) runs its
  ``program`` each time a watched file changes;
- Helix starts the language servers (and formatters) of a project's
  ``.helix/languages.toml`` as a file of the project opens, and binds keys
  to shell commands in ``.helix/config.toml``;
- Crush starts the MCP and language servers of ``.crush.json`` /
  ``crush.json``;
- VS Code runs the programs its settings name (``python.defaultInterpreterPath``,
  ``git.path``, ``*.executablePath``, a terminal profile's ``path``) and
  puts ``terminal.integrated.env.*``'s ``PATH`` first in every terminal.

Each config is refused by name where it was not, and what each runs (where
it lies in the root) is protected, on every backend config, while a
script none of them names stays the user's.
"""

from __future__ import annotations

import json

import pytest

from corral.tools import Policy, Toolbox

from .helpers.config_runs import check_protected_by_name, check_what_it_runs_is_protected

NAMED_NOW = [".mise/conf.d/tools.toml", "sub/.mise/conf.d/env.toml", ".rtx.toml",
             ".rtx.local.toml", ".idea/watcherTasks.xml", ".helix/languages.toml",
             ".helix/config.toml", ".crush.json", "crush.json", "apps/web/crush.json"]
@pytest.mark.parametrize("path", NAMED_NOW)
def test_a_config_that_runs_code_is_protected_by_name(tmp_path, make_root, path):
    check_protected_by_name(tmp_path, make_root, path)


@pytest.mark.parametrize("path", NAMED_NOW[::3])
def test_the_host_can_lift_it(tmp_path, make_root, path):
    with Toolbox(make_root(tmp_path), policy=Policy.none()) as toolbox:
        assert toolbox.call("write_file", {"path": path, "content": "x\n"})["ok"] is True
    assert (tmp_path / path).read_text() == "x\n"


@pytest.mark.parametrize("path", [".mise/notes.md", ".helix/themes/x.toml", ".idea/misc.xml",
                                  "crush.md", ".crush/logs/x.log", "docs/rtx.toml"])
def test_neighbours_stay_writable(tmp_path, make_root, path):
    with Toolbox(make_root(tmp_path)) as toolbox:
        assert toolbox.call("write_file", {"path": path, "content": "x\n"})["ok"] is True


WATCHERS = """<?xml version="1.0" encoding="UTF-8"?>
<project version="4">
  <component name="ProjectTasksOptions">
    <TaskOptions isEnabled="true">
      <option name="arguments" value="--no-source-map $FilePath$" />
      <option name="program" value="$ProjectFileDir$/node_modules/.bin/sass" />
      <option name="workingDir" value="$ProjectFileDir$" />
    </TaskOptions>
    <TaskOptions isEnabled="false">
      <option name="program" value="./lint.sh" />
      <option name="workingDir" value="web" />
    </TaskOptions>
  </component>
</project>
"""
SETTINGS = """{
  // as VS Code writes it: comments, trailing commas
  "python.defaultInterpreterPath": "${workspaceFolder}/tools/py/python",
  "git.path": ["./tools/git"],
  "php.validate.executablePath": "bin/php",
  "terminal.integrated.profiles.linux": {"dev": {"path": "./tools/shell.sh"}},
  "terminal.integrated.env.linux": {"PATH": "${workspaceFolder}/devbin:${env:PATH}"},
  "[python]": {"ruff.interpreter": ["tools/ruffpy"]},
  "python.analysis.stubPath": "typings",
}
"""
# each config with what it runs on its own (the first program made beforehand)
RUNS = {
    ".mise/conf.d/hooks.toml": ('[hooks]\nenter = "./scripts/enter.sh"\n',
                                ["scripts/enter.sh"]),
    ".config/mise/conf.d/env.toml": ('[env]\n_.source = "ops/env.sh"\n', ["ops/env.sh"]),
    "mise.dev.toml": ('[env]\n_.source = "ops/dev.sh"\n_.path = ["devtools"]\n',
                      ["ops/dev.sh", "devtools/ls"]),
    ".mise.ci.local.toml": ('[hooks]\ncd = ["./ops/cd.sh"]\n', ["ops/cd.sh"]),
    ".mise/config.dev.toml": ('[hooks.leave]\nscript = "bash ops/leave.sh"\n',
                              ["ops/leave.sh"]),
    ".config/mise/mise.toml": ('[hooks]\nenter = "./ops/mise-enter.sh"\n',
                               ["ops/mise-enter.sh"]),
    ".rtx.toml": ('[env]\n_.source = "ops/rtx.sh"\n', ["ops/rtx.sh"]),
    ".github/hooks/security.json": (json.dumps({"version": 1, "hooks": {
        "sessionStart": [{"type": "command", "bash": "./check.sh", "cwd": "tools"}],
        "preToolUse": [{"type": "command", "bash": "python3 scripts/audit.py",
                        "powershell": "scripts/audit.ps1"}]}}),
        ["tools/check.sh", "scripts/audit.py"]),
    ".idea/watcherTasks.xml": (WATCHERS, ["node_modules/.bin/sass", "web/lint.sh"]),
    ".helix/languages.toml": ('[language-server.mylsp]\ncommand = "./tools/lsp"\n'
                              'args = ["--stdio"]\n[[language]]\nname = "python"\n'
                              'formatter = { command = "python3", args = ["tools/fmt.py"] }\n',
                              ["tools/lsp", "tools/fmt.py"]),
    ".crush.json": (json.dumps({"mcp": {"x": {"type": "stdio", "command": "node",
                                              "args": ["tools/crush-mcp.js"]}},
                                "lsp": {"go": {"command": "./bin/gopls"}}}),
                    ["tools/crush-mcp.js", "bin/gopls"]),
    "crush.json": (json.dumps({"mcp": {"y": {"command": "./bin/crush-server"}}}),
                   ["bin/crush-server"]),
    ".vscode/settings.json": (SETTINGS, ["tools/py/python", "tools/git", "bin/php",
                                         "tools/shell.sh", "devbin/ls", "tools/ruffpy"]),
    "app.code-workspace": (json.dumps({"folders": [{"path": "."}], "settings": {
        "eslint.runtime": "./tools/node"}}), ["tools/node"]),
}


@pytest.mark.parametrize("config", sorted(RUNS))
def test_what_such_a_config_runs_is_protected(tmp_path, make_root, config):
    text, programs = RUNS[config]
    check_what_it_runs_is_protected(tmp_path, make_root, config, text, programs)


def test_what_vscode_settings_name_but_do_not_run_stays_the_users(tmp_path, make_root):
    """A folder of type stubs, a debugged program and a disabled-by-name
    setting run nothing: the model may still write there."""
    (tmp_path / ".vscode").mkdir()
    (tmp_path / ".vscode" / "settings.json").write_text(SETTINGS)
    (tmp_path / ".vscode" / "launch.json").write_text(json.dumps({"configurations": [
        {"name": "app", "type": "python", "request": "launch",
         "program": "${workspaceFolder}/app.py"}]}))
    with Toolbox(make_root(tmp_path)) as toolbox:
        answers = [toolbox.call("write_file", {"path": path, "content": "x = 1\n"})
                   for path in ("typings/mod.pyi", "app.py", "tools/notes.md")]
    assert all(answer["ok"] is True for answer in answers), answers


def test_many_mise_env_files_are_each_read(tmp_path, make_root):
    """Every ``MISE_ENV`` name is read (mise takes whichever the user's
    environment names): a hook in the fifth is as protected as in the first."""
    for env in ("ci", "dev", "prod", "stage", "test"):
        (tmp_path / f"mise.{env}.toml").write_text(f'[hooks]\nenter = "./ops/{env}.sh"\n')
    with Toolbox(make_root(tmp_path)) as toolbox:
        answers = [toolbox.call("write_file", {"path": f"ops/{env}.sh", "content": "x\n"})
                   for env in ("ci", "test")]
    assert all(answer["details"]["kind"] == "protected" for answer in answers), answers
