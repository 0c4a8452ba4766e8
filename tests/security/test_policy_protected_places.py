"""Places the default policy must find and protect (THREATS rows 21 and
25), on every backend config.

* git directories not named ``.git``: a ``.git`` *file* below the root
  (a submodule or a ``--separate-git-dir`` checkout) pointing at a git
  directory inside the root that is not named ``.git``; the common
  directory of a worktree (``commondir``), where git keeps the hooks and
  config a worktree runs; a bare repository (a local remote: ``git push``
  to it runs its hooks).
* a secret inside a directory named like a template (``.env.example/.env``):
  the template exception re-includes everything below it.
"""

from __future__ import annotations

import pytest

from corral.tools import Toolbox

HOOK = "#!/bin/sh\necho planted\n"


def _write(toolbox: Toolbox, path: str) -> dict:
    return toolbox.call("write_file", {"path": path, "content": HOOK, "overwrite": True})


def _git_dir(path):
    """A minimal git directory at ``path`` (what git's is_git_directory checks)."""
    (path / "hooks").mkdir(parents=True)
    (path / "objects").mkdir()
    (path / "refs").mkdir()
    (path / "HEAD").write_text("ref: refs/heads/main\n")
    (path / "config").write_text("[core]\n\trepositoryformatversion = 0\n")


def _refused_as_protected(answer: dict) -> bool:
    return answer["ok"] is False and answer["code"] == "DENIED" \
        and answer["details"].get("kind") == "protected"


def test_git_dir_named_by_a_nested_git_file_is_protected(tmp_path, make_root):
    """``sub/.git`` says ``gitdir: ../store``: git runs ``store/hooks`` and
    reads ``store/config`` for every command in ``sub``."""
    _git_dir(tmp_path / "store")
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / ".git").write_text("gitdir: ../store\n")
    with Toolbox(make_root(tmp_path)) as toolbox:
        for path in ("store/hooks/pre-commit", "store/config"):
            assert _refused_as_protected(_write(toolbox, path)), path
    assert not (tmp_path / "store" / "hooks" / "pre-commit").exists()
    assert (tmp_path / "store" / "config").read_text().startswith("[core]")


def test_common_dir_of_the_roots_worktree_is_protected(tmp_path, make_root):
    """The root is a worktree: ``.git`` says ``gitdir: main.git/worktrees/w``
    and that directory's ``commondir`` is ``../..``.  Hooks and config of a
    worktree are the common directory's (``main.git/hooks``, ``main.git/config``)."""
    _git_dir(tmp_path / "main.git")
    wt = tmp_path / "main.git" / "worktrees" / "w"
    wt.mkdir(parents=True)
    (wt / "commondir").write_text("../..\n")
    (wt / "HEAD").write_text("ref: refs/heads/w\n")
    (tmp_path / ".git").write_text("gitdir: main.git/worktrees/w\n")
    with Toolbox(make_root(tmp_path)) as toolbox:
        assert _refused_as_protected(_write(toolbox, "main.git/worktrees/w/HEAD"))  # holds today
        for path in ("main.git/hooks/pre-commit", "main.git/config"):
            assert _refused_as_protected(_write(toolbox, path)), path
    assert not (tmp_path / "main.git" / "hooks" / "pre-commit").exists()


def test_bare_repository_in_the_root_is_protected(tmp_path, make_root):
    """``remote.git`` is a bare repository used as a local remote: ``git push``
    runs its ``hooks/pre-receive`` on the host."""
    _git_dir(tmp_path / "remote.git")
    with Toolbox(make_root(tmp_path)) as toolbox:
        for path in ("remote.git/hooks/pre-receive", "remote.git/config"):
            assert _refused_as_protected(_write(toolbox, path)), path
    assert not (tmp_path / "remote.git" / "hooks" / "pre-receive").exists()


@pytest.mark.parametrize("template", [".env.example", ".env.sample", ".env.local.template"])
def test_secret_below_a_template_named_directory_stays_secret(tmp_path, make_root, template):
    """``.env.example`` is readable as a template; a *directory* of that name
    holding ``.env`` does not make the ``.env`` in it a template."""
    (tmp_path / template).mkdir()
    (tmp_path / template / ".env").write_text("API_KEY=redteam-secret-7f3a\n")
    with Toolbox(make_root(tmp_path)) as toolbox:
        read = toolbox.call("read_file", {"path": f"{template}/.env"})
        assert read["ok"] is False and read["details"].get("kind") == "secret", read
        found = toolbox.call("grep", {"pattern": "redteam-secret"})
        assert "redteam-secret-7f3a" not in str(found)


@pytest.mark.parametrize("tool,args", [
    ("read_file", {"path": "dl"}),
    ("edit_file", {"path": "dl", "oldText": "a", "newText": "b"}),
    ("read_files", {"paths": ["dl"]}),
], ids=["read_file", "edit_file", "read_files"])
def test_a_link_into_a_denied_directory_names_nothing_there(tmp_path, make_root, tool, args):
    """``dl -> private/gone-q1/x`` with ``private`` denied: the answer is the
    same DENIED as for ``dl3 -> private/there/x`` (whose middle exists), never
    a NOT_FOUND that names ``private/gone-q1`` (a denied path, and an oracle
    for what exists in the denied directory)."""
    (tmp_path / "private" / "there").mkdir(parents=True)
    (tmp_path / "dl").symlink_to("private/gone-q1/x")
    (tmp_path / "dl3").symlink_to("private/there/x")
    with Toolbox(make_root(tmp_path), deny=["private"]) as toolbox:
        answer = toolbox.call(tool, args)
        control = toolbox.call(tool, _renamed(args, "dl", "dl3"))
    assert "private" not in str(answer), answer
    assert _shape(answer) == _shape(control)


def _renamed(args: dict, old: str, new: str) -> dict:
    out = dict(args)
    if "path" in out:
        out["path"] = new
    if "paths" in out:
        out["paths"] = [new]
    return out


def _shape(answer: dict) -> tuple:
    """The code and kind an answer gives (for read_files: its one file's)."""
    if "files" in answer:
        answer = answer["files"][0]
    return answer.get("ok"), answer.get("code"), answer.get("details", {}).get("kind")


@pytest.mark.parametrize("config,path", [
    ("[core]\n\thooksPath = tools/hooks\n", "tools/hooks/pre-commit"),
    ("[core]\n\thooksPath = ../tools/hooks\n", "tools/hooks/pre-commit"),
    ("[include]\n\tpath = ../.gitconfig\n", ".gitconfig"),
    ('[includeIf "gitdir:~/"]\n\tpath = ../config/git.inc\n', "config/git.inc"),
], ids=["hooksPath", "hooksPath-relative-to-git-dir", "include.path", "includeIf.path"])
def test_what_git_config_points_at_inside_the_root_is_protected(tmp_path, make_root, config, path):
    """``.git/`` is protected because git runs it; so is what ``.git/config``
    tells git to run or read from the work tree: a ``core.hooksPath``
    directory (a repository's shared hooks, checked in), and files pulled in
    by ``include.path`` (a common way to share config: ``core.fsmonitor``
    there runs at the next ``git status``)."""
    _git_dir(tmp_path / ".git")
    (tmp_path / ".git" / "config").write_text(config)
    with Toolbox(make_root(tmp_path)) as toolbox:
        assert _refused_as_protected(_write(toolbox, path)), path
    assert not (tmp_path / path).exists()


@pytest.mark.parametrize("path", [
    ".cursor/hooks.json",          # Cursor: shell commands around the agent loop
    "opencode.json",               # opencode: local MCP servers (commands), started automatically
    "opencode.jsonc",
    ".opencode/opencode.json",
    ".aider.conf.yml",             # aider: lint-cmd / test-cmd, run after every edit by default
    # run by every start of the project's interpreter
    ".venv/lib/python3.12/site-packages/zz-planted.pth",
])
def test_host_run_configuration_beyond_the_list_is_protected(tmp_path, make_root, path):
    with Toolbox(make_root(tmp_path)) as toolbox:
        assert _refused_as_protected(_write(toolbox, path)), path
    assert not (tmp_path / path).exists()


@pytest.mark.parametrize("pattern", ["private/*", "./private", "./private/**", "{abs}/private",
                                     "private/."],
                         ids=["children-glob", "dot-slash", "dot-slash-globstar", "absolute",
                              "trailing-dot"])
def test_host_deny_spellings_never_fail_open(tmp_path, make_root, pattern):
    """Spellings a host writes for "nothing in private/": ``private/*``
    denies the directory's entries, so what is below them is denied too
    (the policy says ancestors count; a search already prunes there, but
    read_file of private/in/s.txt reads it); ``./private`` and an absolute
    path inside the root are what a shell user types.  A pattern the policy
    cannot apply must be refused when the Toolbox is made, never ignored."""
    (tmp_path / "private" / "in").mkdir(parents=True)
    (tmp_path / "private" / "in" / "s.txt").write_text("SECRET-Q7\n")
    spelled = pattern.replace("{abs}", str(tmp_path))
    try:
        toolbox = Toolbox(make_root(tmp_path), deny=[spelled])
    except ValueError:
        return  # refused up front: the host learns its rule is not understood
    with toolbox:
        read = toolbox.call("read_file", {"path": "private/in/s.txt"})
        # a pattern that is not the content itself: the answer echoes the pattern
        found = toolbox.call("grep", {"pattern": "SECRET-Q[7]"})
    assert read["ok"] is False and read["details"].get("kind") == "deny_rule", read
    assert "SECRET-Q7" not in str(found)
