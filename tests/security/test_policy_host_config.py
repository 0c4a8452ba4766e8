"""Host-run configuration beyond the first list: each entry is a file (or
directory) a host program runs or loads on its own, without the user asking
for that file to run.  Refused by default through write_file, move_file
(onto it) and make_directory; allowed once the host lifts the defaults.  On
every backend config."""

from __future__ import annotations

import pytest

from corral.tools import Policy, Toolbox

PATHS = [
    ".cursor/hooks.json", "opencode.json", "opencode.jsonc", ".opencode/opencode.json",
    ".opencode/opencode.jsonc", ".opencode/plugin/run.ts", ".opencode/plugins/run.js",
    ".aider.conf.yml", ".venv/lib/python3.12/site-packages/zz.pth",
    "env/lib/python3.11/site-packages/sitecustomize.py",
    ".venv/lib/python3.12/site-packages/usercustomize.py",
    ".kiro/hooks/on-save.kiro.hook", ".kiro/settings/mcp.json", ".roo/mcp.json",
    ".amazonq/mcp.json", ".continue/mcpServers/server.yaml", ".exrc", ".nvimrc", ".nvim.lua",
    ".dir-locals.el", ".dir-locals-2.el", "sub/project/.exrc",
]


@pytest.mark.parametrize("path", PATHS)
def test_host_run_configuration_is_protected_by_default(tmp_path, make_root, path):
    (tmp_path / "staged.txt").write_text("x\n")
    with Toolbox(make_root(tmp_path)) as toolbox:
        write = toolbox.call("write_file", {"path": path, "content": "x\n"})
        move = toolbox.call("move_file", {"source": "staged.txt", "destination": path})
    for answer in (write, move):
        assert answer["ok"] is False and answer["details"]["kind"] == "protected", answer
    assert not (tmp_path / path).exists() and (tmp_path / "staged.txt").exists()


@pytest.mark.parametrize("path", PATHS)
def test_the_host_can_lift_it(tmp_path, make_root, path):
    with Toolbox(make_root(tmp_path), policy=Policy.none()) as toolbox:
        assert toolbox.call("write_file", {"path": path, "content": "x\n"})["ok"] is True
    assert (tmp_path / path).read_text() == "x\n"


@pytest.mark.parametrize("path", ["site-packages.txt", ".venv/lib/python3.12/site-packages/m.py",
                                  "docs/plugin/x.md", "hooks/x.sh", "mcp.json", "notes.pth"])
def test_neighbours_stay_writable(tmp_path, make_root, path):
    with Toolbox(make_root(tmp_path)) as toolbox:
        assert toolbox.call("write_file", {"path": path, "content": "x\n"})["ok"] is True
