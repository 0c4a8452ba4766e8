"""An independent red-team pass: configurations a host program runs on its
own that the default policy did not name, each written by a model and run
with no one asking:

- mise (``mise.toml`` and its other places): ``[hooks] enter`` and
  ``[env] _.source`` run in the user's shell at ``cd`` under
  ``mise activate``; mise trusts a config by its path, not its content, so
  a trusted project's file changed by the model runs (direnv's ``.envrc``,
  protected, needs ``direnv allow`` again after a change);
- GitHub Copilot CLI: ``.github/hooks/*.json`` loaded from the working
  directory, each hook's ``bash`` line run at session start and around
  every tool call;
- Cline: the executable scripts of ``.clinerules/hooks/`` (``TaskStart``,
  ``PreToolUse``...), as Kiro's ``.kiro/hooks`` (protected);
- Windsurf: the workspace's ``.windsurf/hooks.json`` (Cascade hooks);
- Qwen Code: ``.qwen/settings.json`` (Gemini CLI's settings, MCP server
  commands started at launch, as ``.gemini/settings.json``, protected).

Each was written, moved onto and made as a directory; refused now, while
their neighbours (a workflow, a rule file, a lock file) stay the user's.
So are the scripts such a config runs where they lie in the root (mise's
``_.source``, ``_.path`` and hooks, Windsurf's hook commands, Qwen Code's
MCP servers), as those of the configs already protected are: edited or
written, they went through.
"""

from __future__ import annotations

import json

import pytest

from corral.tools import Policy, Toolbox

from .helpers.config_runs import HOOK, check_protected_by_name, check_what_it_runs_is_protected

PATHS = [
    "mise.toml", ".mise.toml", "mise.local.toml", ".mise.local.toml", "mise.dev.toml",
    ".mise.ci.toml", ".mise/config.toml", "mise/config.toml", ".config/mise.toml",
    ".config/mise/config.toml", ".config/mise/conf.d/tools.toml", "sub/project/mise.toml",
    ".github/hooks/hooks.json", ".github/hooks/security.json",
    ".clinerules/hooks/TaskStart", ".clinerules/hooks/PreToolUse",
    ".windsurf/hooks.json", ".qwen/settings.json",
]

@pytest.mark.parametrize("path", PATHS)
def test_a_config_a_host_runs_is_protected(tmp_path, make_root, path):
    check_protected_by_name(tmp_path, make_root, path)


@pytest.mark.parametrize("path", ["mise.toml", ".github/hooks/hooks.json",
                                  ".clinerules/hooks/PreToolUse"])
def test_an_existing_one_is_not_edited(tmp_path, make_root, path):
    (tmp_path / path).parent.mkdir(parents=True, exist_ok=True)
    (tmp_path / path).write_text("# the user's\n")
    with Toolbox(make_root(tmp_path)) as toolbox:
        edit = toolbox.call("edit_file", {"path": path, "oldText": "# the user's",
                                          "newText": HOOK})
        gone = toolbox.call("delete_file", {"path": path})
    for answer in (edit, gone):
        assert answer["ok"] is False and answer["details"]["kind"] == "protected", answer
    assert (tmp_path / path).read_text() == "# the user's\n"


@pytest.mark.parametrize("path", PATHS[:3] + PATHS[-5:])
def test_the_host_can_lift_it(tmp_path, make_root, path):
    with Toolbox(make_root(tmp_path), policy=Policy.none()) as toolbox:
        assert toolbox.call("write_file", {"path": path, "content": "x\n"})["ok"] is True
    assert (tmp_path / path).read_text() == "x\n"


@pytest.mark.parametrize("path", [".github/workflows/ci.yml", ".clinerules/style.md",
                                  ".clinerules", "mise.lock", "docs/mise.md",
                                  ".windsurf/rules/x.md", ".qwen/notes.md", "hooks/x.json"])
def test_neighbours_stay_writable(tmp_path, make_root, path):
    with Toolbox(make_root(tmp_path)) as toolbox:
        assert toolbox.call("write_file", {"path": path, "content": "x\n"})["ok"] is True


# what those configurations run on their own, where it lies in the root:
# the config is protected, so the model changes the script it names instead
RUNS = {
    "mise.toml": ('[env]\n_.source = "scripts/env.sh"\n_.path = ["tools/bin"]\n'
                  '[hooks]\nenter = "./scripts/enter.sh"\n',
                  ["scripts/env.sh", "scripts/enter.sh", "tools/bin/ls"]),
    ".mise.toml": ('[env]\n_.source = [{ path = "ops/env.sh" }]\n'
                   '[hooks.leave]\nscript = "bash ops/leave.sh"\n',
                   ["ops/env.sh", "ops/leave.sh"]),
    ".config/mise.toml": ('[hooks]\ncd = ["./scripts/cd.sh"]\n', ["scripts/cd.sh"]),
    ".windsurf/hooks.json": (json.dumps({"hooks": {"pre_user_prompt": [
        {"command": "python3 .windsurf/check.py"}]}}), [".windsurf/check.py"]),
    ".qwen/settings.json": (json.dumps({"mcpServers": {"q": {
        "command": "node", "args": ["tools/server.js"]}}}), ["tools/server.js"]),
}


@pytest.mark.parametrize("config", sorted(RUNS))
def test_what_such_a_config_runs_is_protected(tmp_path, make_root, config):
    text, programs = RUNS[config]
    check_what_it_runs_is_protected(tmp_path, make_root, config, text, programs)
