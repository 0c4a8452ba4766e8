"""An independent red-team pass: a root opened at, or inside, a folder of
a project that holds a host's config by a fixed name (``proj/.vscode``,
``proj/.claude``, ``proj/.cursor``, ``proj/.kiro/settings``, ``proj/.idea``,
``proj/.jj/repo``...): the config's own name there (``tasks.json``,
``settings.json``, ``mcp.json``, ``runConfigurations/x.xml``) was written
and moved onto.  VS Code, Claude Code or Cursor opening ``proj`` runs what
the model put there.  A root inside a folder protected whole (``.git/hooks``,
``.devcontainer``, ``~/.ssh``) was refused already; a pattern naming a file
below such a folder (``**/.vscode/tasks.json``) was matched against the
root-relative path alone, which no longer holds the folder's name.

Now each such pattern is also read from the root's own place: the part
naming folders the root lies in is taken away and the rest anchored at
the root (``/tasks.json`` in a root at ``.vscode``).  Every backend config.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from corral.tools import Policy, Toolbox

# (folder the root is opened at, below proj; the config's path in that root)
CASES = [
    (".vscode", "tasks.json"), (".vscode", "settings.json"), (".vscode", "launch.json"),
    (".vscode", "mcp.json"), (".claude", "settings.json"), (".claude", "settings.local.json"),
    (".cursor", "mcp.json"), (".cursor", "hooks.json"), (".gemini", "settings.json"),
    (".codex", "config.toml"), (".zed", "tasks.json"), (".kiro", "settings/mcp.json"),
    (".kiro/settings", "mcp.json"), (".idea", "workspace.xml"),
    (".idea", "runConfigurations/app.xml"), (".helix", "config.toml"),
    (".opencode", "opencode.json"), (".opencode", "plugin/run.ts"), (".mise", "config.toml"),
    (".jj", "repo/config.toml"), (".jj/repo", "config.toml"), (".hg", "hgrc"),
    ("sub/.vscode", "tasks.json"),
]
IDS = [f"{folder}:{path}" for folder, path in CASES]


def _root_at(tmp_path: Path, folder: str) -> Path:
    place = tmp_path / "proj" / folder
    place.mkdir(parents=True)
    (place / "staged.txt").write_text("{}\n")
    return place


@pytest.mark.parametrize(("folder", "path"), CASES, ids=IDS)
def test_the_config_of_the_folder_a_root_is_opened_at_is_protected(
        tmp_path, make_root, folder, path):
    place = _root_at(tmp_path, folder)
    with Toolbox(make_root(str(place))) as toolbox:
        write = toolbox.call("write_file", {"path": path, "content": "{}\n"})
        move = toolbox.call("move_file", {"source": "staged.txt", "destination": path})
        edit_later = toolbox.call("make_directory", {"path": path})
    for answer in (write, move, edit_later):
        assert answer["ok"] is False and answer["details"]["kind"] == "protected", answer
    assert not (place / path).exists() and (place / "staged.txt").exists()


@pytest.mark.parametrize(("folder", "path"), CASES, ids=IDS)
def test_the_host_can_lift_it(tmp_path, make_root, folder, path):
    place = _root_at(tmp_path, folder)
    with Toolbox(make_root(str(place)), policy=Policy.none()) as toolbox:
        assert toolbox.call("write_file", {"path": path, "content": "{}\n"})["ok"] is True
    assert (place / path).read_text() == "{}\n"


@pytest.mark.parametrize(("folder", "path"), [
    (".vscode", "notes.md"), (".vscode", "sub/tasks.json"), ("docs", "tasks.json"),
    ("vscode", "tasks.json"), (".claude", "CLAUDE.md"), (".kiro", "mcp.json"),
    (".idea", "misc.xml"), ("settings", "mcp.json"), ("repo", "config.toml"),
], ids=lambda v: v)
def test_other_names_there_stay_writable(tmp_path, make_root, folder, path):
    place = _root_at(tmp_path, folder)
    with Toolbox(make_root(str(place))) as toolbox:
        answer = toolbox.call("write_file", {"path": path, "content": "x\n"})
    assert answer["ok"] is True, answer


@pytest.mark.parametrize(("folder", "path"), [(".aws", "credentials"),
                                              (".docker", "config.json")], ids=lambda v: v)
def test_the_secret_of_the_folder_a_root_is_opened_at_is_not_read(
        tmp_path, make_root, folder, path):
    """The same for a secret named below a folder (``**/.aws/credentials``):
    a root opened at ``~/.aws`` read it out."""
    place = tmp_path / "home" / folder
    place.mkdir(parents=True)
    (place / path).write_text("aws_secret_access_key = q7-secret\n")
    with Toolbox(make_root(str(place))) as toolbox:
        answers = [toolbox.call("read_file", {"path": path}),
                   toolbox.call("grep", {"pattern": "q7-secret"}),
                   toolbox.call("move_file", {"source": path, "destination": "moved.txt"})]
    for answer in answers:  # grep's answer says its own pattern back: the line is the secret
        assert "aws_secret_access_key" not in str(answer), answer
    assert answers[0]["ok"] is False and answers[0]["details"]["kind"] == "secret", answers[0]
    assert answers[2]["ok"] is False and answers[2]["details"]["kind"] == "secret", answers[2]
    assert (place / path).exists()
