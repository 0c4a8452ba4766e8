"""THREATS rows 21 and 25: the safe defaults, with no policy argument.

Every protected class (``.git/``, a directory a ``.git`` file points to,
host-run configuration) refuses every change through every tool that
changes files, both ends of a move, in every spelling THREATS rows 18 and 21
list (case and Unicode variants, ``nx/../``, a symlink into the protected
directory, ``link/..``, a link chain near the step budget, dot segments);
reading stays allowed.  Every secret class refuses reads, edits, searches
(which skip it and say so by count, never by name), moves away and
replacement.  On every backend config.  And the very same calls succeed once
the host lifts the policy (``Policy.none()``, or ``allow_git_writes`` for git).
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import Any

import pytest

from .helpers.world import CONFIG_IDS, CONFIGS, assert_contract, call_bounded
from corral.contained import MAX_SYMLINKS
from corral.tools import Policy, Toolbox

per_config = pytest.mark.parametrize("config", CONFIGS, ids=CONFIG_IDS)

HOOK = "#!/bin/sh\necho pwned\n"
SECRET_TEXT = "API_KEY=sk-live-0123456789"
CHAIN = MAX_SYMLINKS - 2  # links in the chain that ends in .git/hooks (near the budget)


def build(root: Path) -> None:
    """A project with every protected and secret class in it."""
    files = {
        ".git/config": "[core]\n\tbare = false\n", ".git/hooks/pre-commit.sample": "#\n",
        ".git/HEAD": "ref: refs/heads/main\n",
        "sub/.git/config": "[core]\n",  # a nested repository
        ".envrc": "export A=1\n", ".vscode/tasks.json": "{}\n",
        ".vscode/settings.json": "{}\n", ".vscode/mcp.json": "{}\n",
        ".cursor/mcp.json": "{}\n", ".claude/settings.json": "{}\n", ".mcp.json": "{}\n",
        ".husky/pre-commit": "npm test\n", ".pre-commit-config.yaml": "repos: []\n",
        ".devcontainer/devcontainer.json": "{}\n", ".idea/workspace.xml": "<x/>\n",
        "app/.envrc": "export B=1\n",
        ".env": f"{SECRET_TEXT}\n", ".env.local": f"{SECRET_TEXT}\n",
        "deploy/id_rsa": f"{SECRET_TEXT}\n", "tls/server.key": f"{SECRET_TEXT}\n",
        "tls/cert.pem": f"{SECRET_TEXT}\n", ".netrc": f"{SECRET_TEXT}\n",
        ".aws/credentials": f"{SECRET_TEXT}\n",
        ".env.example": "API_KEY=\n", "deploy/id_rsa.pub": "ssh-ed25519 AAAA\n",
        "src/main.py": "print('hi')\n", "notes.txt": "notes\n",
    }
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    os.symlink(".git/hooks", root / "hooklink")  # a symlink into .git/hooks
    os.symlink(".git", root / "gitlink")
    previous = ".git/hooks"
    for i in range(CHAIN, 0, -1):  # chain1 -> chain2 -> ... -> .git/hooks
        os.symlink(previous, root / f"chain{i}")
        previous = f"chain{i}"
    os.symlink(".env", root / "settings")  # an innocent name for a secret


# Spellings that all reach .git/hooks/<name> (THREATS rows 18 and 21).
HOOK_SPELLINGS = [
    ".git/hooks/pre-commit", "./.git//hooks/pre-commit", ".GIT/hooks/pre-commit",
    ".Git/Hooks/pre-commit", ".g\u200cit/hooks/pre-commit", "nx/../.git/hooks/pre-commit",
    "nx/ny/../../.git/hooks/pre-commit", "src/../.git/hooks/pre-commit",
    "hooklink/pre-commit", "gitlink/hooks/pre-commit", "hooklink/../hooks/pre-commit",
    "chain1/pre-commit", f"chain{CHAIN}/../hooks/pre-commit",
]
CONFIG_SPELLINGS = [".git/config", ".GIT/config", "gitlink/config", "hooklink/../config",
                    "sub/.git/config", "nx/../.git/config", "chain1/../config"]
HOST_CONFIG = [".envrc", ".ENVRC", "app/.envrc", ".vscode/tasks.json", ".VSCode/tasks.json",
               ".vscode/settings.json", ".vscode/mcp.json", ".cursor/mcp.json",
               ".claude/settings.json", ".mcp.json", ".husky/pre-commit",
               ".pre-commit-config.yaml", ".devcontainer/devcontainer.json",
               ".idea/workspace.xml", "nx/../.envrc"]
SECRETS = [".env", ".ENV", ".env.local", "settings", "deploy/id_rsa", "tls/server.key",
           "tls/cert.pem", ".netrc", ".aws/credentials", "src/../.env", "./.env"]
READABLE = [".env.example", "deploy/id_rsa.pub", ".git/config", ".envrc", ".vscode/tasks.json"]


def changes(path: str, exists: bool) -> list[tuple[str, dict[str, Any]]]:
    """Every call that would change ``path`` (each tool, both ends of a move)."""
    out = [("write_file", {"path": path, "content": HOOK, "overwrite": True}),
           ("move_file", {"source": "notes.txt", "destination": path, "overwrite": True})]
    if exists:
        out += [("edit_file", {"path": path, "oldText": "?", "newText": "x"}),  # oldText: below
                ("move_file", {"source": path, "destination": "stolen.txt"}),
                ("delete_file", {"path": path})]
    return out


class Project:
    """A fresh project per call (a lifted call changes the tree)."""

    def __init__(self, base: Path, config: Any) -> None:
        self.base, self.config, self.count = base, config, 0

    def toolbox(self, **options: Any) -> tuple[Toolbox, Path]:
        self.count += 1
        root = self.base / f"p{self.count}"
        root.mkdir()
        build(root)
        return Toolbox(self.config.factory(str(root)), **options), root

    def call(self, tool: str, args: dict[str, Any], **options: Any) -> tuple[dict[str, Any], Path]:
        toolbox, root = self.toolbox(**options)
        try:
            envelope = call_bounded(lambda: toolbox.call(tool, args), what=f"{tool} {args}")
        finally:
            toolbox.root.close()
        assert_contract(envelope)
        return envelope, root


def snapshot(root: Path) -> dict[str, bytes | str]:
    out: dict[str, bytes | str] = {}
    for dirpath, dirnames, filenames in os.walk(root):
        for name in dirnames + filenames:
            full = Path(dirpath) / name
            rel = str(full.relative_to(root))
            out[rel] = os.readlink(full) if full.is_symlink() else (
                "dir" if full.is_dir() else full.read_bytes())
    return out


def refused_as(envelope: dict[str, Any], kind: str, where: str) -> None:
    assert envelope["ok"] is False, f"{where}: expected DENIED/{kind}, got success"
    assert (envelope["code"], envelope["details"].get("kind")) == ("DENIED", kind), \
        f"{where}: {envelope}"
    if kind == "protected":
        assert "the host (the user) must allow it" in envelope["hint"], envelope


# -- protected: refused by default, in every spelling, through every changing tool --------

@per_config
@pytest.mark.parametrize("path", HOOK_SPELLINGS + CONFIG_SPELLINGS + HOST_CONFIG)
def test_protected_paths_refuse_every_change(tmp_path, config, path):
    project = Project(tmp_path, config)
    toolbox, root = project.toolbox()  # refusals change nothing: one tree serves every call
    exists = (root / path).exists() and not path.startswith("nx/")
    before = snapshot(root)
    try:
        for tool, args in changes(path, exists):
            if tool == "edit_file":  # an oldText the file holds, so only the policy can refuse
                args = {**args, "oldText": (root / path).read_text()[:1]}
            envelope = call_bounded(lambda: toolbox.call(tool, args), what=f"{tool} {args}")
            assert_contract(envelope)
            refused_as(envelope, "protected", f"{tool} {args}")
            assert snapshot(root) == before, f"{tool} {args} changed the tree"
    finally:
        toolbox.root.close()


@per_config
@pytest.mark.parametrize("path", [".git/hooks/pre-commit", "nx/../.git/hooks/pre-commit",
                                  "hooklink/pre-commit", "chain1/pre-commit", ".envrc",
                                  ".vscode/tasks.json", ".GIT/hooks/pre-commit"])
def test_the_same_writes_succeed_once_lifted(tmp_path, config, path):
    project = Project(tmp_path, config)
    policy = Policy.build(allow_git_writes=True) if "git" in path.lower() or "link" in path or \
        "chain" in path else Policy.none()
    envelope, root = project.call("write_file", {"path": path, "content": HOOK,
                                                 "overwrite": True}, policy=policy)
    if "link" in path or "chain" in path:  # a final name through links: written in .git/hooks
        assert envelope["ok"] is True, envelope
        assert (root / ".git" / "hooks" / "pre-commit").read_text() == HOOK
    else:
        assert envelope["ok"] is True, envelope
    lifted, _ = project.call("move_file", {"source": "notes.txt", "destination": path,
                                           "overwrite": True}, policy=Policy.none())
    assert lifted["ok"] is True, lifted


@per_config
def test_moving_into_and_out_of_protected_places(tmp_path, config):
    project = Project(tmp_path, config)
    cases = [
        ("move_file", {"source": ".git/hooks", "destination": "h"}),  # out of .git
        ("move_file", {"source": ".git", "destination": "old-git"}),
        ("move_file", {"source": "sub", "destination": "sub2"}),  # holds sub/.git
        ("move_file", {"source": ".vscode", "destination": "vs"}),  # holds tasks.json
        ("move_file", {"source": "src", "destination": ".git/hooks/src"}),
        ("move_file", {"source": "src", "destination": "nx/../.husky"}),
        ("write_file", {"path": ".git/hooks/new/dir/x", "content": HOOK}),  # creates dirs
        ("write_file", {"path": ".vscode2/../.vscode/tasks.json", "content": "{}"}),
    ]
    for tool, args in cases:
        envelope, _ = project.call(tool, args)
        refused_as(envelope, "protected", f"{tool} {args}")
    # a directory whose contents would arrive under a protected name (.vscode/tasks.json)
    toolbox, root = project.toolbox()
    (root / "stage").mkdir()
    (root / "stage" / "tasks.json").write_text('{"tasks": []}\n')
    shutil.rmtree(root / ".vscode")
    envelope = toolbox.call("move_file", {"source": "stage", "destination": ".vscode"})
    toolbox.root.close()
    refused_as(envelope, "protected", "stage -> .vscode")
    assert not (root / ".vscode").exists()


@per_config
def test_a_git_file_protects_the_directory_it_points_to(tmp_path, config):
    root = tmp_path / "wt"
    (root / "store" / "hooks").mkdir(parents=True)
    (root / "store" / "config").write_text("[core]\n")
    (root / ".git").write_text("gitdir: store\n")
    (root / "notes.txt").write_text("n\n")
    with Toolbox(config.factory(str(root))) as toolbox:
        for tool, args in [("write_file", {"path": "store/hooks/pre-commit", "content": HOOK}),
                           ("write_file", {"path": "STORE/config", "content": "x",
                                           "overwrite": True}),
                           ("move_file", {"source": "notes.txt",
                                          "destination": "store/hooks/post-checkout"}),
                           ("delete_file", {"path": "store/config"}),
                           ("write_file", {"path": ".git", "content": "gitdir: /tmp/x\n",
                                           "overwrite": True})]:
            refused_as(toolbox.call(tool, args), "protected", f"{tool} {args}")
        assert toolbox.call("read_file", {"path": "store/config"})["ok"] is True
        assert "store" in " ".join(toolbox.policy.describe())
    absolute = tmp_path / "wt2"
    (absolute / "store").mkdir(parents=True)
    (absolute / ".git").write_text(f"gitdir: {absolute / 'store'}\n")
    with Toolbox(config.factory(str(absolute))) as toolbox:
        refused_as(toolbox.call("write_file", {"path": "store/hooks/x", "content": HOOK}),
                   "protected", "absolute gitdir")
    with Toolbox(config.factory(str(root)), policy=Policy.build(allow_git_writes=True)) as box:
        assert box.call("write_file", {"path": "store/hooks/pre-commit", "content": HOOK})["ok"]


@per_config
def test_protected_files_stay_readable(tmp_path, config):
    project = Project(tmp_path, config)
    toolbox, _ = project.toolbox()
    try:
        for path in (".git/config", ".envrc", ".vscode/tasks.json", "hooklink/pre-commit.sample",
                     ".env.example", "deploy/id_rsa.pub"):
            assert toolbox.call("read_file", {"path": path})["ok"] is True, path
        listing = toolbox.call("list_directory", {"path": ".git"})
        assert listing["ok"] is True and "config" in json.dumps(listing)
        assert toolbox.call("grep", {"pattern": "bare", "path": ".git"})["ok"] is True
    finally:
        toolbox.root.close()


# -- secrets: not read, searched, edited, moved away or replaced --------------------------

@per_config
@pytest.mark.parametrize("path", SECRETS)
def test_secret_files_are_not_read(tmp_path, config, path):
    project = Project(tmp_path, config)
    calls = [("read_file", {"path": path}),
             ("edit_file", {"path": path, "oldText": "API_KEY", "newText": "x"}),
             ("grep", {"pattern": "API", "path": path}),
             ("move_file", {"source": path, "destination": "public.txt"}),
             ("write_file", {"path": path, "content": "x", "overwrite": True})]
    if path == "settings":  # a symlink moves itself: the moved link still leads to .env
        calls = [c for c in calls if c[0] != "move_file"]
    probe, probe_root = project.toolbox()
    probe.root.close()
    existed = os.path.lexists(probe_root / path)
    for tool, args in calls:
        envelope, root = project.call(tool, args)
        if tool == "write_file" and not existed:
            # ".ENV" on a case-sensitive filesystem is a new file: creating one is allowed
            assert envelope["ok"] is True, envelope
            continue
        refused_as(envelope, "secret", f"{tool} {args}")
        assert SECRET_TEXT not in json.dumps(envelope)
        assert (root / ".env").read_text() == f"{SECRET_TEXT}\n"


@per_config
def test_searches_skip_secrets_and_say_so_by_count_only(tmp_path, config):
    project = Project(tmp_path, config)
    toolbox, _ = project.toolbox()
    try:
        grep = toolbox.call("grep", {"pattern": "API_KEY", "includeIgnored": True})
        glob = toolbox.call("glob", {"pattern": "**/*", "includeIgnored": True})
        named = toolbox.call("glob", {"pattern": "**/.env*", "includeIgnored": True})
    finally:
        toolbox.root.close()
    for envelope in (grep, glob, named):
        assert envelope["ok"] is True, envelope
        text = json.dumps(envelope)
        assert SECRET_TEXT not in text
        for name in ("id_rsa\"", "server.key", "cert.pem", ".netrc", "credentials",
                     ".env.local", "\".env\""):
            assert name not in text, (name, envelope)
        assert envelope.get("denied", 0) >= 1, envelope  # said by count
    assert ".env.example" in json.dumps(named)  # the template is not a secret


@per_config
def test_secret_reads_succeed_once_lifted(tmp_path, config):
    project = Project(tmp_path, config)
    for path in (".env", "settings", "deploy/id_rsa", "tls/cert.pem"):
        envelope, _ = project.call("read_file", {"path": path}, policy=Policy.none())
        assert envelope["ok"] is True and SECRET_TEXT in envelope["content"], envelope
    grep, _ = project.call("grep", {"pattern": "API_KEY", "includeIgnored": True},
                           policy=Policy.none())
    assert grep["ok"] is True and ".env" in json.dumps(grep)


@per_config
def test_creating_or_deleting_a_secret_named_file_is_allowed(tmp_path, config):
    project = Project(tmp_path, config)
    created, root = project.call("write_file", {"path": "new/.env", "content": "A=1\n"})
    assert created["ok"] is True and (root / "new" / ".env").read_text() == "A=1\n"
    deleted, root = project.call("delete_file", {"path": ".env.local"})
    assert deleted["ok"] is True and not (root / ".env.local").exists()


def test_policy_describe_names_every_rule_and_how_to_lift_it():
    lines = Policy.default().describe()
    text = "\n".join(lines)
    assert "--allow-git-writes" in text and ".envrc" in text and ".env" in text
    assert Policy.none().describe()[0] == "git: writes under .git/ allowed"
    built = Policy.build(protect=["deploy/**"], deny=["private/**"])
    assert "deploy/**" in "\n".join(built.describe()) and "private/**" in built.deny
