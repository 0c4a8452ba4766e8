"""Agent and editor configs the default policy protects by name but did
not read for what they run on their own: the MCP servers of Kiro
(``.kiro/settings/mcp.json``), Roo Code (``.roo/mcp.json``), Amazon Q
(``.amazonq/mcp.json``), Codex (``.codex/config.toml``), opencode's other
places (``opencode.jsonc``, ``.opencode/opencode.json``), Zed's context
servers and language server binaries (``.zed/settings.json``), and
aider's ``lint-cmd`` / ``test-cmd`` (``.aider.conf.yml``: run after every
edit), lint-staged's commands (``.lintstagedrc``, run at each commit by
the usual husky hook), Kiro's hooks (``.kiro/hooks/*.kiro.hook``) and
Continue's MCP servers (``.continue/mcpServers/*.json``).  Each runs its
commands on its own (as the agent or editor opens the project, after an
edit, at a commit): the configs were refused, the scripts they run were
written.

What each runs inside the root is protected now (written, edited, made:
refused), on every backend config; a script none names stays the user's.
"""

from __future__ import annotations

import json

import pytest

from .helpers.config_runs import check_what_it_runs_is_protected

RUNS = {
    ".kiro/settings/mcp.json": (json.dumps({"mcpServers": {"x": {
        "command": "node", "args": ["tools/kiro-mcp.js"]}}}), ["tools/kiro-mcp.js"]),
    ".roo/mcp.json": (json.dumps({"mcpServers": {"x": {"command": "./bin/roo-server"}}}),
                      ["bin/roo-server"]),
    ".amazonq/mcp.json": (json.dumps({"mcpServers": {"x": {
        "command": "python3", "args": ["tools/q_mcp.py"]}}}), ["tools/q_mcp.py"]),
    ".codex/config.toml": ('[mcp_servers.docs]\ncommand = "./bin/codex-mcp"\n'
                           'args = ["--stdio"]\n', ["bin/codex-mcp"]),
    "opencode.jsonc": ('{\n  // as opencode writes it\n  "mcp": {"x": {"type": "local",\n'
                       '    "command": ["bun", "tools/oc.ts"]}},\n}\n', ["tools/oc.ts"]),
    ".opencode/opencode.json": (json.dumps({"mcp": {"y": {
        "type": "local", "command": ["./bin/oc-server", "--stdio"]}}}), ["bin/oc-server"]),
    ".zed/settings.json": (json.dumps({
        "context_servers": {"x": {"command": {"path": "./tools/zed-mcp", "args": []}},
                            "y": {"command": "python3", "args": ["tools/zed_ctx.py"]}},
        "lsp": {"rust-analyzer": {"binary": {"path": "./tools/ra", "arguments": []}}}}),
        ["tools/zed-mcp", "tools/zed_ctx.py", "tools/ra"]),
    ".aider.conf.yml": ('lint-cmd: "python: ./tools/lint.sh"\ntest-cmd: ./tools/test.sh\n',
                        ["tools/lint.sh", "tools/test.sh"]),
    ".lintstagedrc": (json.dumps({"*.{js,ts}": ["eslint --fix", "./tools/staged.sh"],
                                  "*.py": "python3 tools/staged_check.py"}),
                      ["tools/staged.sh", "tools/staged_check.py"]),
    ".lintstagedrc.json": (json.dumps({"*": "./tools/any-staged.sh"}),
                           ["tools/any-staged.sh"]),
    ".kiro/hooks/lint.kiro.hook": (json.dumps({
        "enabled": True, "name": "lint", "when": {"type": "fileEdited", "patterns": ["*.ts"]},
        "then": {"type": "runCommand", "command": "./tools/kiro-lint.sh"}}),
        ["tools/kiro-lint.sh"]),
    ".continue/mcpServers/local.json": (json.dumps({"mcpServers": {"x": {
        "command": "node", "args": ["tools/continue-mcp.js"]}}}), ["tools/continue-mcp.js"]),
}


@pytest.mark.parametrize("config", sorted(RUNS))
def test_what_such_a_config_runs_is_protected(tmp_path, make_root, config):
    text, programs = RUNS[config]
    check_what_it_runs_is_protected(tmp_path, make_root, config, text, programs)
