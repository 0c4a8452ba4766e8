"""An independent red-team pass (round twenty-one) over the project
folders of coding agents beside Claude Code's, read with docs/policy.md's
test: protected is what a program runs, loads or obeys on its own, with
no question put to the user.  These were the model's to write:

- opencode's custom tools (``.opencode/tools/``, ``.opencode/tool/``):
  TypeScript or JavaScript modules opencode imports at launch, as it does
  the plugins beside them (protected), so their top-level code runs at the
  next start; its agents and commands (``.opencode/agents/``,
  ``.opencode/commands/`` and the singular spellings), whose front matter
  sets the tools and permissions a subagent the primary agent picks on its
  own runs with, and whose ``!`command``` lines run in a shell as a
  command loads: what ``.claude/agents/`` and ``.claude/commands/`` are
  protected for;
- Kilo Code (an opencode fork): ``kilo.json``, ``kilo.jsonc``,
  ``.kilo/kilo.json(c)`` (its MCP servers, started as it loads), its
  plugins and tools under ``.kilo/`` (modules loaded at startup), its
  agents and commands there, and ``.kilocode/mcp.json`` (the extension's
  project MCP servers, as ``.roo/mcp.json``, which is protected);
- Cursor CLI's ``.cursor/cli.json``: its ``permissions.allow``
  (``Shell(**)``) lets the agent run any command without asking, merged
  from each ``.cursor/cli.json`` between the repository's top and where
  it runs: what ``.claude/settings.json`` is protected for;
- Cursor's ``.cursor/worktrees.json``: its ``setup-worktree`` commands (or
  script) run as Cursor makes a worktree for an agent, read from the
  checkout itself;
- Gemini CLI's workspace extensions (``.gemini/extensions/<x>/``): their
  ``gemini-extension.json`` MCP servers start with the CLI;
- JetBrains Junie's project MCP servers (``.junie/mcp/mcp.json``).

On main each was written, moved into place and made: ``ok``.  Each must
be refused as ``protected`` (read stays allowed), the host can lift it,
and instructions and prompts (which run nothing) stay the model's.
What Kilo's configs start (their MCP servers' programs inside the root)
is protected too, read as opencode.json is: on main those scripts were
written and edited.  Every backend config.
"""

from __future__ import annotations

import json

import pytest

from corral.tools import Policy, Toolbox

from .helpers.config_runs import check_what_it_runs_is_protected

TOOL = 'export default { description: "x", async execute() { return "" } }\n'
FOLDERS = [".opencode/tools/x.ts", ".opencode/tool/x.ts", ".opencode/agents/helper.md",
           ".opencode/agent/helper.md", ".opencode/commands/ship.md",
           ".opencode/command/ship.md", ".kilo/plugins/x.ts", ".kilo/plugin/x.ts",
           ".kilo/tools/x.ts", ".kilo/tool/x.ts", ".kilo/agents/helper.md",
           ".kilo/agent/helper.md", ".kilo/commands/ship.md", ".kilo/command/ship.md",
           "pkg/.opencode/tools/x.ts", ".gemini/extensions/x/gemini-extension.json"]
FILES = ["kilo.json", "kilo.jsonc", ".kilo/kilo.json", ".kilo/kilo.jsonc",
         ".kilocode/mcp.json", ".cursor/cli.json", "pkg/.cursor/cli.json", "pkg/kilo.json",
         ".cursor/worktrees.json", ".junie/mcp/mcp.json"]


def _refused(answer: dict) -> None:
    assert answer["ok"] is False and answer["details"]["kind"] == "protected", answer


@pytest.mark.parametrize("path", FOLDERS + FILES)
def test_written_or_moved_into_place_is_refused(tmp_path, make_root, path):
    (tmp_path / "staged").write_text(TOOL)
    with Toolbox(make_root(str(tmp_path))) as toolbox:
        write = toolbox.call("write_file", {"path": path, "content": TOOL})
        move = toolbox.call("move_file", {"source": "staged", "destination": path})
    _refused(write)
    _refused(move)
    assert not (tmp_path / path).exists() and (tmp_path / "staged").read_text() == TOOL


@pytest.mark.parametrize("path", FOLDERS)
def test_a_folder_made_there_is_refused(tmp_path, make_root, path):
    with Toolbox(make_root(str(tmp_path))) as toolbox:
        _refused(toolbox.call("make_directory", {"path": path.rsplit("/", 1)[0] + "/more"}))
    assert not (tmp_path / path.rsplit("/", 1)[0]).exists()


@pytest.mark.parametrize("path", FOLDERS + FILES)
def test_an_existing_one_is_read_not_changed(tmp_path, make_root, path):
    (tmp_path / path).parent.mkdir(parents=True, exist_ok=True)
    (tmp_path / path).write_text(TOOL)
    with Toolbox(make_root(str(tmp_path))) as toolbox:
        edit = toolbox.call("edit_file", {"path": path, "oldText": "x", "newText": "y"})
        delete = toolbox.call("delete_file", {"path": path})
        read = toolbox.call("read_file", {"path": path})
    _refused(edit)
    _refused(delete)
    assert read["ok"] is True, read
    assert (tmp_path / path).read_text() == TOOL


@pytest.mark.parametrize("path", FOLDERS + FILES)
def test_the_host_can_lift_it(tmp_path, make_root, path):
    with Toolbox(make_root(str(tmp_path)), policy=Policy.none()) as toolbox:
        assert toolbox.call("write_file", {"path": path, "content": TOOL})["ok"] is True
    assert (tmp_path / path).read_text() == TOOL


@pytest.mark.parametrize("path", ["AGENTS.md", ".github/copilot-instructions.md",
                                  ".cursor/rules/style.mdc", ".kilocode/rules/style.md",
                                  ".opencode/notes.md", ".kilo/notes.md", "tools/x.ts",
                                  "commands/ship.md", ".cursor/cli.json.bak"])
def test_instructions_and_neighbours_stay_writable(tmp_path, make_root, path):
    with Toolbox(make_root(str(tmp_path))) as toolbox:
        answer = toolbox.call("write_file", {"path": path, "content": "x\n"})
    assert answer["ok"] is True, answer


#: Kilo Code's and Junie's configs and the programs their MCP servers run
#: (opencode's format under ``mcp``; ``mcpServers``), and what Cursor's
#: worktree setup runs: read as opencode.json is (on main the scripts were
#: written and edited)
KILO_RUNS = {
    "kilo.json": (json.dumps({"mcp": {"x": {"type": "local",
                                            "command": ["node", "tools/kilo-mcp.js"]}}}),
                  ["tools/kilo-mcp.js"]),
    "kilo.jsonc": ('{\n  // as Kilo writes it\n  "mcp": {"x": {"type": "local",\n'
                   '    "command": ["bun", "tools/kilo.ts"]}},\n}\n', ["tools/kilo.ts"]),
    ".kilo/kilo.json": (json.dumps({"mcp": {"y": {"type": "local",
                                                  "command": ["./bin/kilo-server"]}}}),
                        ["bin/kilo-server"]),
    ".kilo/kilo.jsonc": (json.dumps({"mcp": {"y": {"type": "local", "command": [
        "python3", "tools/kilo_mcp.py"]}}}), ["tools/kilo_mcp.py"]),
    ".kilocode/mcp.json": (json.dumps({"mcpServers": {"x": {
        "command": "node", "args": ["tools/kilocode-mcp.js"]}}}), ["tools/kilocode-mcp.js"]),
    ".junie/mcp/mcp.json": (json.dumps({"mcpServers": {"x": {
        "command": "python3", "args": ["tools/junie_mcp.py"]}}}), ["tools/junie_mcp.py"]),
    ".cursor/worktrees.json": (json.dumps({"setup-worktree": ["npm ci", "./tools/setup.sh"]}),
                               ["tools/setup.sh"]),
    ".cursor/worktrees.json#unix": (json.dumps({"setup-worktree-unix": "tools/setup-unix.sh"}),
                                    ["tools/setup-unix.sh"]),
}


@pytest.mark.parametrize("config", sorted(KILO_RUNS))
def test_what_kilos_configs_run_is_protected(tmp_path, make_root, config):
    text, programs = KILO_RUNS[config]
    check_what_it_runs_is_protected(tmp_path, make_root, config.partition("#")[0], text,
                                    programs)
