"""The programs a repository's config names, lying inside the root, are
protected as git's own hooks are: git runs them (``core.fsmonitor`` at the
next ``git status``, a filter's ``clean`` at the next ``git add``, an
alias at its use), from the top of the work tree.  A value that is a shell
command protects each word naming a path inside the root; a bare program
name is looked up on ``PATH`` and is left alone.  On every backend config."""

from __future__ import annotations

import os

import pytest

from corral.tools import Policy, Toolbox
from corral.tools._policy import gitconfig

PLANTED = "#!/bin/sh\necho planted\n"
ORIGINAL = "#!/bin/sh\necho original\n"


def _repository(tree, config: str) -> None:
    for sub in ("hooks", "objects", "refs"):
        (tree / ".git" / sub).mkdir(parents=True, exist_ok=True)
    (tree / ".git" / "HEAD").write_text("ref: refs/heads/main\n")
    (tree / ".git" / "config").write_text(config)


def _protected(answer: dict) -> bool:
    return answer["ok"] is False and answer["code"] == "DENIED" \
        and answer["details"].get("kind") == "protected"


FAMILIES = [
    ("[core]\n\tfsmonitor = scripts/fsmon.sh\n", "scripts/fsmon.sh"),
    ("[core]\n\tfsmonitor = sh ./tools/fsmon.sh\n", "tools/fsmon.sh"),
    ("[core]\n\tfsmonitor = {root}/scripts/fsmon.sh\n", "scripts/fsmon.sh"),
    ("[core]\n\tfsmonitor = {alias}/scripts/fsmon.sh\n", "scripts/fsmon.sh"),
    ('[core]\n\tsshCommand = "ssh -F bin/ssh.cfg -o ProxyCommand=x" \n', "bin/ssh.cfg"),
    ("[CORE]\n\tEDITOR = tools/edit.sh --wait\n", "tools/edit.sh"),
    ("[core]\n\tpager = less -R | bin/pager\n", "bin/pager"),
    ("[core]\n\taskPass = ./askpass.sh\n", "askpass.sh"),
    ("[sequence]\n\teditor = bash bin/rebase-edit\n", "bin/rebase-edit"),
    ("[diff]\n\texternal = bin/difftool.sh\n", "bin/difftool.sh"),
    ("[gpg]\n\tprogram = bin/gpg\n", "bin/gpg"),
    ('[gpg "ssh"]\n\tprogram = bin/ssh-sign\n', "bin/ssh-sign"),
    ("[credential]\n\thelper = !bin/cred.sh get\n", "bin/cred.sh"),
    ("[credential]\n\thelper = {root}/bin/cred\n", "bin/cred"),
    ('[credential "https://example.com"]\n\thelper = "!sh tools/cred.sh"\n', "tools/cred.sh"),
    ('[filter "lfs"]\n\tclean = tools/clean.sh %f\n', "tools/clean.sh"),
    ('[filter "lfs"]\n\tsmudge = "sh \\"tools/smudge one.sh\\""\n', "tools/smudge one.sh"),
    ("[filter.x]\n\tprocess = python3 tools/process.py\n", "tools/process.py"),
    ('[diff "pdf"]\n\ttextconv = bin/pdf2txt\n', "bin/pdf2txt"),
    ('[diff "pdf"]\n\tcommand = bin/pdfdiff\n', "bin/pdfdiff"),
    ('[merge "ours"]\n\tdriver = tools/merge.sh %O %A %B\n', "tools/merge.sh"),
    ("[alias]\n\tst = !git status && tools/after.sh\n", "tools/after.sh"),
    ("[alias]\n\tup = \"!f() { sh hooks.sh; }; f\"\n", "hooks.sh"),
    # continuation lines, a comment, the key after the section header on its line
    ("[core] fsmonitor = scr\\\nipts/fsmon.sh ; watch\n", "scripts/fsmon.sh"),
    ("[core]\n\t# fsmonitor = nothing.sh\n\tfsmonitor = \"scripts/a#b.sh\" # real\n",
     "scripts/a#b.sh"),
    ('[core]\n\tfsmonitor = "$(git rev-parse --show-toplevel)/scripts/fsmon.sh"\n',
     "scripts/fsmon.sh"),
    ('[core]\n\tpager = sh \\"$GIT_DIR/../tools/page.sh\\"\n', "tools/page.sh"),
]
FAMILY_IDS = ["fsmonitor", "fsmonitor-sh", "fsmonitor-absolute", "fsmonitor-alias",
              "sshCommand", "editor-case", "pager-pipe", "askPass", "sequence.editor",
              "diff.external", "gpg.program", "gpg.ssh.program", "credential-shell",
              "credential-absolute", "credential-url", "filter.clean", "filter.smudge-quoted",
              "filter.process-legacy", "diff.textconv", "diff.command", "merge.driver",
              "alias-shell", "alias-function", "continuation", "comment-and-hash",
              "toplevel-expansion", "git-dir-expansion"]


def _open(tmp_path, make_root, config: str, script: str, *, exists: bool = True):
    tree = tmp_path / "tree"
    tree.mkdir()
    os.symlink("tree", tmp_path / "alias")
    _repository(tree, config.replace("{root}", str(tree))
                .replace("{alias}", str(tmp_path / "alias")))
    if exists:
        (tree / script).parent.mkdir(parents=True, exist_ok=True)
        (tree / script).write_text(ORIGINAL)
    (tree / "notes.txt").write_text("hello\n")
    return tree, Toolbox(make_root(str(tree)))


@pytest.mark.parametrize("config,script", FAMILIES, ids=FAMILY_IDS)
def test_a_program_the_config_names_cannot_be_written(tmp_path, make_root, config, script):
    tree, box = _open(tmp_path, make_root, config, script, exists=False)
    with box:
        answer = box.call("write_file", {"path": script, "content": PLANTED})
        assert _protected(answer), answer
        assert box.call("write_file", {"path": "free.txt", "content": "x"})["ok"] is True
    assert not (tree / script).exists()


@pytest.mark.parametrize("config,script", FAMILIES, ids=FAMILY_IDS)
def test_a_program_the_config_names_cannot_be_changed_by_any_tool(
        tmp_path, make_root, config, script):
    tree, box = _open(tmp_path, make_root, config, script)
    patch_path = script
    calls = [
        ("write_file", {"path": script, "content": PLANTED, "overwrite": True}),
        ("edit_file", {"path": script, "oldText": "original", "newText": "planted"}),
        ("move_file", {"source": "notes.txt", "destination": script, "overwrite": True}),
        ("move_file", {"source": script, "destination": "gone.sh"}),
        ("delete_file", {"path": script}),
        ("apply_patch", {"input": f"*** Begin Patch\n*** Update File: {patch_path}\n@@\n"
                                  "-echo original\n+echo planted\n*** End Patch\n"}),
        ("apply_patch", {"input": "*** Begin Patch\n*** Update File: notes.txt\n"
                                  f"*** Move to: {patch_path}\n@@\n-hello\n+bye\n"
                                  "*** End Patch\n"}),
    ]
    with box:
        for tool, args in calls:
            answer = box.call(tool, args)
            assert answer["ok"] is False and answer["code"] == "DENIED", (tool, answer)
    assert (tree / script).read_text() == ORIGINAL
    assert (tree / "notes.txt").read_text() == "hello\n"


@pytest.mark.parametrize("config,free", [
    ("[core]\n\teditor = vim\n", "vim"),
    ("[core]\n\tfsmonitor = true\n", "true"),
    ("[core]\n\tfsmonitor = false\n\tpager = less -R\n", "less"),
    ("[core]\n\tsshCommand = /usr/bin/ssh -i ~/.ssh/key\n", "usr/bin/ssh"),
    ("[core]\n\tfsmonitor = ../../outside/fsmon.sh\n", "outside/fsmon.sh"),
    ("[credential]\n\thelper = store --file scripts/creds\n", "store"),
    ("[alias]\n\tco = checkout scripts/x.sh\n", "scripts/x.sh"),  # a git command, not a shell's
    ("[core]\n\t; editor = scripts/x.sh\n\teditor = nano\n", "scripts/x.sh"),
    ("[user]\n\tname = scripts/x.sh\n", "scripts/x.sh"),
    ('[filter "lfs"]\n\trequired = true\n', "true"),
], ids=["bare-editor", "fsmonitor-true", "fsmonitor-false", "absolute-outside",
        "relative-outside", "credential-named-helper", "alias-git-command", "commented-out",
        "not-a-program-key", "filter-required"])
def test_what_the_config_does_not_run_stays_writable(tmp_path, make_root, config, free):
    tree, box = _open(tmp_path, make_root, config, "unused.txt")
    with box:
        answer = box.call("write_file", {"path": free, "content": "x\n"})
        assert answer["ok"] is True, answer
    assert (tree / free).read_text() == "x\n"


def test_a_nested_work_tree_runs_its_programs_from_its_own_top(tmp_path, make_root):
    """A repository at ``a/b``: its config's relative programs are taken
    from ``a/b`` (where git runs them), not the root."""
    deep = tmp_path / "a" / "b"
    _repository(deep, "[core]\n\tfsmonitor = scripts/fsmon.sh\n")
    with Toolbox(make_root(str(tmp_path))) as box:
        assert _protected(box.call("write_file", {"path": "a/b/scripts/fsmon.sh",
                                                  "content": PLANTED}))
        assert box.call("write_file", {"path": "scripts/fsmon.sh",
                                       "content": "x\n"})["ok"] is True


def test_an_included_config_names_programs_too(tmp_path, make_root):
    _repository(tmp_path, "[include]\n\tpath = ../shared.gitconfig\n")
    (tmp_path / "shared.gitconfig").write_text('[filter "crypt"]\n\tsmudge = tools/dec.sh\n')
    with Toolbox(make_root(str(tmp_path))) as box:
        assert _protected(box.call("write_file", {"path": "tools/dec.sh", "content": PLANTED}))
    assert not (tmp_path / "tools" / "dec.sh").exists()


def test_allow_git_writes_lifts_them(tmp_path, make_root):
    _repository(tmp_path, "[core]\n\tfsmonitor = scripts/fsmon.sh\n")
    with Toolbox(make_root(str(tmp_path)),
                 policy=Policy.build(allow_git_writes=True)) as box:
        assert box.call("write_file", {"path": "scripts/fsmon.sh",
                                       "content": PLANTED})["ok"] is True


def test_a_config_cannot_be_repointed_through_the_tools_and_a_change_is_read_next_open(
        tmp_path, make_root):
    """As for ``core.hooksPath``: what a config names is found when the
    Toolbox opens; the config itself cannot be changed through the tools
    (so the model cannot point it at a script of its own), and a change
    made outside them is read by the next Toolbox."""
    _repository(tmp_path, "[core]\n\tbare = false\n")
    with Toolbox(make_root(str(tmp_path))) as box:
        (tmp_path / ".git" / "config").write_text("[core]\n\tfsmonitor = scripts/fsmon.sh\n")
        refused = box.call("edit_file", {"path": ".git/config", "oldText": "scripts/fsmon.sh",
                                         "newText": "scripts/other.sh"})
        assert _protected(refused), refused
    with Toolbox(make_root(str(tmp_path))) as box:
        assert _protected(box.call("write_file", {"path": "scripts/fsmon.sh",
                                                  "content": PLANTED}))


@pytest.mark.parametrize("text,expected", [
    ('[core]\n\tfsmonitor = "a b"\\t"c"\n', [("core", "", "fsmonitor", "a b\tc")]),
    ("[core]\n\tpager =   less   -R   ; x\n", [("core", "", "pager", "less   -R")]),
    ('[Filter "LFS"]\n\tClean = x\n', [("filter", "LFS", "clean", "x")]),
    ("[Filter.LFS]\n\tclean = x\n", [("filter", "lfs", "clean", "x")]),
    ('[diff "a\\"b"]\n\ttextconv = y\n', [("diff", 'a"b', "textconv", "y")]),
    ("[core]\n\tfsmonitor\n", [("core", "", "fsmonitor", None)]),
    ("\ufeff[core]\r\n\teditor = e\\\r\n2\r\n", [("core", "", "editor", "e2")]),
], ids=["quotes-and-escape", "spaces-and-comment", "subsection-case", "legacy-subsection",
        "escaped-quote-in-subsection", "no-value", "bom-and-crlf-continuation"])
def test_config_values_are_read_as_git_reads_them(text, expected):
    assert list(gitconfig.entries(text)) == expected


@pytest.mark.parametrize("config,link,target,named", [
    ("[core]\n\tfsmonitor = scripts/fsmon.sh\n", "scripts/fsmon.sh", "../real/fsmon.sh",
     "real/fsmon.sh"),
    ("[core]\n\tfsmonitor = scripts/fsmon.sh\n", "scripts", "real", "real/fsmon.sh"),
    ("[core]\n\thooksPath = scripts/hooks\n", "scripts", "real", "real/hooks/pre-commit"),
], ids=["program-is-a-link", "directory-on-the-way-is-a-link", "hooksPath-through-a-link"])
def test_a_link_on_the_way_to_what_git_runs_stays(tmp_path, make_root, config, link, target,
                                                  named):
    """A link on the way to a program (or hooks directory) git runs is held
    as well as where it leads: removed or moved away, it could be replaced
    by a file or directory of the model's own, which git would then run."""
    _repository(tmp_path, config)
    (tmp_path / "real" / "hooks").mkdir(parents=True)
    (tmp_path / "real" / "fsmon.sh").write_text(ORIGINAL)
    (tmp_path / link).parent.mkdir(parents=True, exist_ok=True)
    os.symlink(target, tmp_path / link)
    with Toolbox(make_root(str(tmp_path))) as box:
        for tool, args in [("write_file", {"path": named, "content": PLANTED}),
                           ("delete_file", {"path": link}),
                           ("move_file", {"source": link, "destination": "elsewhere"})]:
            answer = box.call(tool, args)
            assert answer["ok"] is False and answer["code"] == "DENIED", (tool, answer)
    assert os.readlink(tmp_path / link) == target
    assert not (tmp_path / "real" / "hooks" / "pre-commit").exists()


def test_an_entry_on_the_section_headers_line_counts(tmp_path, make_root):
    """``[core] hooksPath = tools/hooks``: git reads a key after the
    header on the same line."""
    _repository(tmp_path, "[core] hooksPath = tools/hooks\n[alias] x = !sh run.sh\n")
    with Toolbox(make_root(str(tmp_path))) as box:
        for path in ("tools/hooks/pre-commit", "run.sh"):
            assert _protected(box.call("write_file", {"path": path, "content": PLANTED})), path


def test_a_git_commands_arguments_leave_directories_and_subcommands_alone(tmp_path, make_root):
    """``!git -C sub/module status`` works in ``sub/module``; it runs no
    program of its own there, so the directory stays writable; git-lfs's
    ``clean`` is a subcommand, not a file at the top of the work tree."""
    _repository(tmp_path, "[alias]\n\tsst = !git -C sub/module status\n"
                          '[filter "lfs"]\n\tclean = git-lfs clean -- %f\n'
                          "\tprocess = git-lfs filter-process\n")
    (tmp_path / "sub" / "module").mkdir(parents=True)
    with Toolbox(make_root(str(tmp_path))) as box:
        for path in ("sub/module/notes.txt", "clean", "filter-process"):
            assert box.call("write_file", {"path": path, "content": "x\n"})["ok"] is True, path
    assert (tmp_path / "sub" / "module" / "notes.txt").read_text() == "x\n"


def test_a_worktree_config_names_programs_too(tmp_path, make_root):
    """``extensions.worktreeConfig``: git reads ``.git/config.worktree``
    as well."""
    _repository(tmp_path, "[extensions]\n\tworktreeConfig = true\n")
    (tmp_path / ".git" / "config.worktree").write_text("[core]\n\tfsmonitor = bin/watch\n")
    with Toolbox(make_root(str(tmp_path))) as box:
        assert _protected(box.call("write_file", {"path": "bin/watch", "content": PLANTED}))
    assert not (tmp_path / "bin").exists()
