"""Host configs protected by name but not read for what they run, and
VS Code settings read by a list of keys:

- a JetBrains run configuration (``.idea/runConfigurations/*.xml``,
  ``.run/*.run.xml``, the local ones in ``.idea/workspace.xml``) runs its
  script, interpreter, Node or Python file; one click in Settings | Tools |
  Startup Tasks (``.idea/startup.xml``, not protected) runs it each time
  the project opens;
- Helix's ``.helix/config.toml`` binds keys to shell commands
  (``:sh``, ``:run-shell-command``, ``:insert-output``, ``:pipe``...) and
  names the shell every command runs in (``[editor] shell``);
- VS Code's settings name programs under keys of every extension's
  choosing (``C_Cpp.clang_format_path``, ``go.alternateTools``,
  ``cmake.cmakePath``, an ESLint ``overrideConfigFile`` it loads): the
  keys read were those whose last word was on a list.

What each names inside the root is protected now (written, edited, made:
refused), on every backend config; a script none names stays the user's,
and a folder a setting names (a stub folder, an extra import path), a
file a key binding opens and a recent file JetBrains remembers stay
writable.
"""

from __future__ import annotations

import json

import pytest

from corral.tools import Toolbox

from .helpers.config_runs import check_protected_by_name, check_what_it_runs_is_protected


def _run_configuration(kind: str, options: dict[str, str], attributes: str = "") -> str:
    lines = "".join(f'    <option name="{name}" value="{value}" />\n'
                    for name, value in options.items())
    return ('<component name="ProjectRunConfigurationManager">\n'
            f'  <configuration default="false" name="x" type="{kind}" {attributes}>\n'
            f'{lines}    <method v="2" />\n  </configuration>\n</component>\n')


WORKSPACE = """<?xml version="1.0" encoding="UTF-8"?>
<project version="4">
  <component name="RecentsManager">
    <key name="MoveFile.RECENT_KEYS">
      <recent name="$PROJECT_DIR$/src/recent.py" />
    </key>
  </component>
  <component name="RunManager">
    <configuration name="local" type="ShConfigurationType">
      <option name="SCRIPT_PATH" value="$PROJECT_DIR$/scripts/local.sh" />
      <option name="SCRIPT_WORKING_DIRECTORY" value="$PROJECT_DIR$" />
    </configuration>
  </component>
</project>
"""

RUNS = {
    "shell run configuration": (".idea/runConfigurations/build.xml", _run_configuration(
        "ShConfigurationType", {"SCRIPT_PATH": "$PROJECT_DIR$/scripts/build.sh",
                                "INTERPRETER_PATH": "$PROJECT_DIR$/tools/bash",
                                "SCRIPT_WORKING_DIRECTORY": "$PROJECT_DIR$"}),
        ["scripts/build.sh", "tools/bash"]),
    "inline script run configuration": (".idea/runConfigurations/inline.xml",
                                        _run_configuration("ShConfigurationType", {
                                            "SCRIPT_TEXT": "./tools/inline.sh --fast",
                                            "EXECUTE_SCRIPT_FILE": "false"}),
                                        ["tools/inline.sh"]),
    "python run configuration": (".run/serve.run.xml", _run_configuration(
        "PythonConfigurationType", {"SCRIPT_NAME": "$PROJECT_DIR$/manage.py",
                                    "SDK_HOME": "$PROJECT_DIR$/venv/bin/python",
                                    "PARAMETERS": "runserver"}),
        ["manage.py", "venv/bin/python"]),
    "node run configuration": (".run/node.run.xml", _run_configuration(
        "NodeJSConfigurationType", {},
        'path-to-js-file="server/index.js" working-dir="$PROJECT_DIR$"'),
        ["server/index.js"]),
    "local run configuration": (".idea/workspace.xml", WORKSPACE, ["scripts/local.sh"]),
    "helix key bindings": (".helix/config.toml",
                           '[keys.normal]\nC-s = ":sh ./scripts/fmt.sh"\n'
                           '[keys.normal.space]\n'
                           'l = [":write", ":run-shell-command ./tools/lint.sh"]\n'
                           '[keys.insert]\nC-o = ":insert-output ./tools/snippet.sh"\n'
                           '[keys.select]\n"|" = ":pipe ./tools/filter.sh"\n',
                           ["scripts/fmt.sh", "tools/lint.sh", "tools/snippet.sh",
                            "tools/filter.sh"]),
    "helix shell": (".helix/config.toml", '[editor]\nshell = ["./tools/hxsh", "-c"]\n',
                    ["tools/hxsh"]),
    "vscode keys of any name": (".vscode/settings.json", json.dumps({
        "C_Cpp.clang_format_path": "${workspaceFolder}/tools/clang-format",
        "go.alternateTools": {"go": "./tools/go-wrapper"},
        "cmake.cmakePath": "./tools/cmake",
        "python.poetryPath": "tools/poetry",
        "eslint.options": {"overrideConfigFile": "./config/eslint.config.js"}}),
        ["tools/clang-format", "tools/go-wrapper", "tools/cmake", "tools/poetry",
         "config/eslint.config.js"]),
    "workspace keys of any name": ("app.code-workspace", json.dumps({
        "folders": [{"path": "."}],
        "settings": {"prettier.configPath": "./config/prettier.config.js",
                     "[python]": {"black-formatter.importStrategy": "fromEnvironment",
                                  "mypy.runUsingActiveInterpreter": False,
                                  "pylint.lintPath": "./tools/pylint"}}}),
        ["config/prettier.config.js", "tools/pylint"]),
}


@pytest.mark.parametrize("case", list(RUNS))
def test_what_such_a_config_runs_is_protected(tmp_path, make_root, case):
    config, text, programs = RUNS[case]
    check_what_it_runs_is_protected(tmp_path, make_root, config, text, programs)


def test_the_startup_tasks_of_a_jetbrains_project_are_protected_by_name(tmp_path, make_root):
    check_protected_by_name(tmp_path, make_root, ".idea/startup.xml")


def test_what_the_configs_name_but_do_not_run_stays_the_users(tmp_path, make_root):
    """A folder a setting names (stubs, an extra import path), a file a key
    binding opens and a file JetBrains remembers as recent run nothing."""
    (tmp_path / ".vscode").mkdir()
    (tmp_path / "lib").mkdir()
    (tmp_path / "typings").mkdir()
    (tmp_path / ".vscode" / "settings.json").write_text(json.dumps({
        "python.analysis.extraPaths": ["./lib"], "python.analysis.stubPath": "./typings",
        "files.exclude": {"**/build": True}, "search.exclude": {"**/dist/**": True}}))
    (tmp_path / ".helix").mkdir()
    (tmp_path / ".helix" / "config.toml").write_text(
        '[keys.normal]\nC-p = ":open ./src/main.rs"\n')
    (tmp_path / ".idea").mkdir()
    (tmp_path / ".idea" / "workspace.xml").write_text(WORKSPACE)
    with Toolbox(make_root(tmp_path)) as toolbox:
        answers = [toolbox.call("write_file", {"path": path, "content": "x = 1\n"})
                   for path in ("lib/util.py", "typings/mod.pyi", "src/main.rs",
                                "src/recent.py", "build/out.txt")]
    assert all(answer["ok"] is True for answer in answers), answers
