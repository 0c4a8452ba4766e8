"""An independent red-team pass over main, tried as a hostile model would
through the tools' public surface: one call at a time and several at once
(``asyncio.gather`` over ``acall``, threads), aimed at protected, denied
and secret names.

Every test asserts the secure behaviour on every backend config.
"""

from __future__ import annotations

import json
import os
import threading
from pathlib import Path

import pytest

from corral.tools import Toolbox


def _denied_world(base: Path, exists: bool) -> Path:
    """``secrets/`` denied; with ``exists`` it holds a file and a folder."""
    (base / "secrets").mkdir(parents=True)
    (base / "a.txt").write_text("a\n")
    if exists:
        (base / "secrets" / "prod.txt").write_text("hunter2\n")
        (base / "secrets" / "sub").mkdir()
    return base


# -- a move's trailing '/' asks about what a denied name holds ---------------------------------


@pytest.mark.parametrize("source,destination", [
    ("secrets/prod.txt/", "b"),
    ("secrets/sub/", "b"),
    ("a.txt", "secrets/prod.txt/"),
    ("a.txt", "secrets/sub/"),
], ids=["file-as-folder-source", "folder-source", "into-a-file", "into-a-folder"])
def test_a_moves_trailing_slash_answers_alike_whether_a_denied_name_exists(
        tmp_path, make_root, source, destination):
    """``move_file secrets/prod.txt/ b`` said ``secrets/prod.txt is a
    file`` where the file exists and ``DENIED`` where it does not; ``into``
    a denied file named its field differently: a model learns what a denied
    folder holds, and of what kind."""
    answers = []
    for exists in (True, False):
        base = _denied_world(tmp_path / str(exists), exists)
        box = Toolbox(make_root(str(base)), deny=["secrets"])
        answers.append(box.call("move_file", {"source": source, "destination": destination}))
    assert answers[0] == answers[1], answers
    assert answers[0]["ok"] is False and answers[0]["code"] == "DENIED", answers
    assert (tmp_path / "True" / "a.txt").exists()


# -- a search's pattern names a denied file, and its counts say whether it exists ---------------


def _probe_answers(box: Toolbox, tool: str, field: str, probes: list[str],
                   extra: dict) -> list[str]:
    """Each probe's answer, the probe's own text taken out."""
    answers = []
    for probe in probes:
        answer = box.call(tool, {**extra, field: probe})
        answers.append(json.dumps(answer, sort_keys=True).replace(probe, "PROBE"))
    return answers


@pytest.mark.parametrize("deny", [["secrets/*"], ["**/prod-db.txt"], ["secrets/**"]])
@pytest.mark.parametrize("tool,field,probes,extra", [
    ("glob", "pattern", ["secrets/prod-db.txt", "secrets/nope-xx.txt"], {}),
    ("glob", "pattern", ["**/prod-db.txt", "**/nope-xx.txt"], {}),
    ("glob", "pattern", ["secrets/prod*", "secrets/nope*"], {}),
    ("grep", "include", ["prod-db.txt", "nope-xx.txt"], {"pattern": "zzz"}),
    ("grep", "include", ["prod-*", "nope-*"], {"pattern": "zzz"}),
], ids=["glob-exact", "glob-any-depth", "glob-prefix", "grep-include", "grep-include-prefix"])
def test_a_search_naming_a_denied_file_answers_as_for_a_name_nobody_has(
        tmp_path, make_root, deny, tool, field, probes, extra):
    """``glob secrets/prod-db.txt`` answered ``denied: 1`` and ``glob
    secrets/nope-xx.txt`` nothing; ``grep include=prod-db.txt`` counted the
    denied file as included: one probe per guess (or a letter at a time,
    ``secrets/p*``, ``secrets/pr*``...) spells out the denied names."""
    (tmp_path / "secrets").mkdir()
    (tmp_path / "secrets" / "prod-db.txt").write_text("hunter2\n")
    (tmp_path / "a.txt").write_text("a\n")
    box = Toolbox(make_root(str(tmp_path)), deny=deny)
    answers = _probe_answers(box, tool, field, probes, extra)
    assert answers[0] == answers[1], answers
    assert "hunter2" not in repr(answers) and "prod-db" not in repr(answers), answers


@pytest.mark.parametrize("text", ["secrets/prod.txt", "secrets/sub", "secrets/prod.txt/"],
                         ids=["to-a-file", "to-a-folder", "to-a-file-as-folder"])
def test_a_search_meeting_a_link_into_a_denied_folder_answers_alike_present_or_not(
        tmp_path, make_root, text):
    """A link of the repository leading into a denied folder: a glob
    counted it as hidden where what it names exists and as a link where it
    does not (``skipped.symlinks``), telling whether a denied file is there."""
    answers = []
    for exists in (True, False):
        base = _denied_world(tmp_path / str(exists), exists)
        os.symlink(text, base / "lnk")
        box = Toolbox(make_root(str(base)), deny=["secrets"])
        answers.append([box.call("glob", {"pattern": "lnk"}),
                        box.call("glob", {"pattern": "*"}),
                        box.call("grep", {"pattern": "hunt"}),
                        box.call("read_file", {"path": "lnk"})])
    assert answers[0] == answers[1], answers
    assert "hunter2" not in repr(answers), answers


# -- core.hooksPath naming the top of the work tree ---------------------------------------------


def _repository(base: Path, config: str) -> None:
    for made in ("hooks", "objects", "refs"):
        (base / ".git" / made).mkdir(parents=True, exist_ok=True)
    (base / ".git" / "HEAD").write_text("ref: refs/heads/main\n")
    (base / ".git" / "config").write_text(config)


@pytest.mark.parametrize("hooks_path", ["{root}", "{root}/", "sub/.."],
                         ids=["absolute", "absolute-slash", "through-a-folder"])
@pytest.mark.parametrize("hook", ["pre-commit", "post-checkout"])
def test_a_hooks_path_that_is_the_work_trees_top_protects_the_hooks_there(
        tmp_path, make_root, hooks_path, hook):
    """``git config core.hooksPath "$PWD"`` (hook scripts kept at the top
    of a small repository): git runs ``<top>/pre-commit`` at the next
    commit, yet a write of ``pre-commit`` there went through (the top of
    the root is never protected as a whole, so nothing was)."""
    (tmp_path / "sub").mkdir()
    _repository(tmp_path, f"[core]\n\thooksPath = {hooks_path.format(root=tmp_path)}\n")
    box = Toolbox(make_root(str(tmp_path)))
    answer = box.call("write_file", {"path": hook, "content": "#!/bin/sh\ntouch /tmp/owned\n"})
    assert not (tmp_path / hook).exists(), answer
    assert answer["ok"] is False and answer["code"] == "DENIED", answer
    assert box.call("write_file", {"path": "notes.txt", "content": "x\n"})["ok"]


# -- more links than the look at open learns, in a tree it saw whole ----------------------------


def test_a_protected_link_past_the_links_learnt_at_open_protects_what_it_leads_to(
        tmp_path, make_root):
    """A monorepo whose ``node_modules`` holds more links than the look at
    open learns (it saw the whole tree, so no later walk learnt the rest),
    and a package's ``.envrc`` and ``.vscode`` are links met after them:
    the writes where they lead went through."""
    (tmp_path / "node_modules").mkdir()
    (tmp_path / "cfg").mkdir()
    (tmp_path / "pkg" / "app").mkdir(parents=True)
    for index in range(10_010):
        os.symlink(f"../store/p{index}", tmp_path / "node_modules" / f"p{index}")
    os.symlink("../../cfg/envrc", tmp_path / "pkg" / "app" / ".envrc")
    os.symlink("../../cfg", tmp_path / "pkg" / "app" / ".vscode")
    box = Toolbox(make_root(str(tmp_path)))
    answers = []
    for written in ("cfg/envrc", "cfg/tasks.json"):
        answer = box.call("write_file", {"path": written, "content": "touch /tmp/owned\n"})
        assert not (tmp_path / written).exists(), answer
        if answer["ok"] is False and answer["details"]["kind"] == "not_ready":
            _walk_through()  # the walk for the links past the look's: retried once it is through
            answer = box.call("write_file", {"path": written, "content": "touch /tmp/owned\n"})
        answers.append(answer)
    assert not (tmp_path / "cfg" / "envrc").exists(), answers
    assert not (tmp_path / "cfg" / "tasks.json").exists(), answers
    assert all(a["ok"] is False and a["code"] == "DENIED" for a in answers), answers


def _walk_through() -> None:
    """Return once every walk for links under way has ended."""
    for thread in threading.enumerate():
        if thread.name == "corral-links":
            thread.join()


@pytest.mark.parametrize("config,written", [
    ("[core]\n\tworktree = ../sub\n\thooksPath = hk\n", "sub/hk/pre-commit"),
    ("[core]\n\tworktree = ../sub\n\tfsmonitor = scripts/fsmon.sh\n", "sub/scripts/fsmon.sh"),
    ("[core]\n\tworktree = {root}/sub\n\thooksPath = hk\n", "sub/hk/pre-commit"),
], ids=["hooksPath", "fsmonitor", "absolute-worktree"])
def test_what_git_config_names_from_its_core_worktree_is_protected(tmp_path, make_root,
                                                                   config, written):
    """``core.worktree`` (a submodule's git directory has one; so has a
    dotfiles set-up) moves the top of the work tree, from which git takes
    a relative ``core.hooksPath`` and runs the programs a config names:
    ``sub/hk/pre-commit`` ran at the next commit, yet the write went
    through."""
    (tmp_path / "sub").mkdir()
    _repository(tmp_path, config.format(root=tmp_path))
    box = Toolbox(make_root(str(tmp_path)))
    answer = box.call("write_file", {"path": written, "content": "#!/bin/sh\ntouch /tmp/owned\n"})
    assert not (tmp_path / written).exists(), answer
    assert answer["ok"] is False and answer["code"] == "DENIED", answer


# -- a link in a protected name's chain replaced by a move -----------------------------------


@pytest.mark.parametrize("shape", ["folder", "file", "deeper"])
def test_a_link_in_a_protected_chain_replaced_by_a_move_is_refused(tmp_path, make_root, shape):
    """``.vscode -> l1 -> editor`` and ``l2 -> cfg``: the model writes
    ``cfg/settings.json`` (nothing protects it), then ``move_file l2 l1
    overwrite`` puts its link in the chain, and VS Code reads the model's
    settings as ``.vscode/settings.json`` (deleting ``l1`` first, or moving
    it away, was refused; replacing it was not).  The same with a file
    (``.envrc -> l1 -> envs/rc``) and a chain reaching below the link
    (``.vscode -> l1/vs``)."""
    (tmp_path / "editor" / "vs").mkdir(parents=True)
    (tmp_path / "cfg" / "vs").mkdir(parents=True)
    (tmp_path / "envs").mkdir()
    (tmp_path / "envs" / "rc").write_text("export A=1\n")
    if shape == "file":
        os.symlink("envs/rc", tmp_path / "l1")
        os.symlink("l1", tmp_path / ".envrc")
        os.symlink("cfg/mine", tmp_path / "l2")
        written, guarded = "cfg/mine", ".envrc"
    else:
        os.symlink("editor", tmp_path / "l1")
        os.symlink("l1/vs" if shape == "deeper" else "l1", tmp_path / ".vscode")
        os.symlink("cfg", tmp_path / "l2")
        written = "cfg/vs/settings.json" if shape == "deeper" else "cfg/settings.json"
        guarded = ".vscode/settings.json"
    box = Toolbox(make_root(str(tmp_path)))
    wrote = box.call("write_file", {"path": written, "content": "PWN-round-eight\n"})
    assert wrote["ok"], wrote
    moved = box.call("move_file", {"source": "l2", "destination": "l1", "overwrite": True})
    landed = (tmp_path / guarded).read_text() if (tmp_path / guarded).exists() else ""
    assert "PWN-round-eight" not in landed, moved
    assert moved["ok"] is False and moved["code"] == "DENIED", moved


@pytest.mark.parametrize("onto", [".vscode", "l1"], ids=["onto-vscode", "into-its-chain"])
@pytest.mark.parametrize("present", [False, True], ids=["dangling-there", "harmless-there"])
def test_a_relative_link_moved_elsewhere_is_decided_where_it_will_lead(tmp_path, make_root,
                                                                       onto, present):
    """``p/lnk -> cfg`` leads to ``p/cfg`` (missing, or a harmless folder)
    where it lies; moved to the top it leads to ``cfg``, where the model
    wrote ``settings.json``: the move was decided on where the link led
    before it moved, and VS Code read the model's settings."""
    (tmp_path / "cfg").mkdir()
    (tmp_path / "editor").mkdir()
    (tmp_path / "p").mkdir()
    if present:
        (tmp_path / "p" / "cfg").mkdir()
    os.symlink("cfg", tmp_path / "p" / "lnk")
    os.symlink("editor", tmp_path / "l1")
    os.symlink("l1", tmp_path / ".vscode")
    box = Toolbox(make_root(str(tmp_path)))
    wrote = box.call("write_file", {"path": "cfg/settings.json", "content": "PWN-round-eight\n"})
    assert wrote["ok"], wrote
    moved = box.call("move_file", {"source": "p/lnk", "destination": onto, "overwrite": True})
    guarded = tmp_path / ".vscode" / "settings.json"
    landed = guarded.read_text() if guarded.exists() else ""
    assert "PWN-round-eight" not in landed, moved
    assert moved["ok"] is False and moved["code"] == "DENIED", moved


def test_a_folder_carrying_a_link_that_climbs_out_is_decided_where_the_link_will_lead(
        tmp_path, make_root):
    """``p/.vscode -> ../cfg`` leads to the top's ``cfg`` (harmless);
    ``move_file p x/p`` makes it lead to ``x/cfg``, where the model wrote
    ``settings.json`` first: VS Code opening ``x/p`` reads it."""
    (tmp_path / "cfg").mkdir()
    (tmp_path / "p").mkdir()
    (tmp_path / "x" / "cfg").mkdir(parents=True)
    os.symlink("../cfg", tmp_path / "p" / ".vscode")
    box = Toolbox(make_root(str(tmp_path)))
    wrote = box.call("write_file", {"path": "x/cfg/settings.json", "content": "PWN-round-eight\n"})
    assert wrote["ok"], wrote
    moved = box.call("move_file", {"source": "p", "destination": "x/p"})
    guarded = tmp_path / "x" / "p" / ".vscode" / "settings.json"
    landed = guarded.read_text() if guarded.exists() else ""
    assert "PWN-round-eight" not in landed, moved
    assert moved["ok"] is False and moved["code"] == "DENIED", moved


def test_a_folder_moved_onto_a_protected_chains_folder_is_decided_through_its_links(
        tmp_path, make_root):
    """``.vscode -> dd/l1 -> ../editor``: ``dd`` moved away, then ``q``
    (holding ``l1 -> cfg``, its own ``q/cfg/settings.json`` written by the
    model) moved onto ``dd``: ``.vscode`` now leads through the carried
    link to the model's settings."""
    for made in ("editor", "dd", "q/cfg"):
        (tmp_path / made).mkdir(parents=True)
    os.symlink("../editor", tmp_path / "dd" / "l1")
    os.symlink("dd/l1", tmp_path / ".vscode")
    os.symlink("cfg", tmp_path / "q" / "l1")
    box = Toolbox(make_root(str(tmp_path)))
    answers = [box.call("write_file", {"path": "q/cfg/settings.json",
                                       "content": "PWN-round-eight\n"}),
               box.call("move_file", {"source": "dd", "destination": "d2"}),
               box.call("move_file", {"source": "q", "destination": "dd"})]
    guarded = tmp_path / ".vscode" / "settings.json"
    landed = guarded.read_text() if guarded.exists() else ""
    assert "PWN-round-eight" not in landed, answers
    assert answers[2]["ok"] is False and answers[2]["code"] == "DENIED", answers


# -- other version control systems' repository config -------------------------------------------


@pytest.mark.parametrize("written,content", [
    (".hg/hgrc", "[hooks]\npre-status = touch /tmp/owned\n"),
    ("sub/.hg/hgrc", "[extensions]\nowned = ../../owned.py\n"),
    (".jj/repo/config.toml", "[ui]\npager = \"sh -c 'touch /tmp/owned; less'\"\n"),
])
def test_another_version_control_systems_repository_config_is_protected(tmp_path, make_root,
                                                                        written, content):
    """Mercurial reads ``.hg/hgrc`` at every command (``pre-<command>``
    hooks run, ``[extensions]`` load Python from a path), and Jujutsu its
    repository's ``config.toml`` (pager, diff and merge tools): a model
    writing one runs a command at the user's next ``hg status``."""
    (tmp_path / written).parent.mkdir(parents=True)
    box = Toolbox(make_root(str(tmp_path)))
    answer = box.call("write_file", {"path": written, "content": content})
    assert not (tmp_path / written).exists(), answer
    assert answer["ok"] is False and answer["code"] == "DENIED", answer


# -- a link in a denied name's chain removed -----------------------------------------------------


@pytest.mark.parametrize("name,text,secret", [
    ("vault", "l1", "data/prod.txt"),
    ("vault", "dd/../data", "data/prod.txt"),
    (".env", "l1/prod.env", "data/prod.env"),
], ids=["link", "folder-left-by-dotdot", "secret-name"])
@pytest.mark.parametrize("step", ["delete_file", "move_file"])
def test_removing_a_link_in_a_denied_names_chain_does_not_show_what_it_hid(
        tmp_path, make_root, name, text, secret, step):
    """``vault -> l1 -> data`` under ``deny=vault``: ``data`` is hidden;
    ``delete_file l1`` (moving it away was refused) left ``vault``
    dangling, and ``data/prod.txt`` read as any file.  The same with a
    folder the chain leaves by ``..``, and a secret name."""
    (tmp_path / "data").mkdir()
    (tmp_path / "dd").mkdir()
    (tmp_path / secret).write_text("hunter2-round-eight\n")
    os.symlink("data", tmp_path / "l1")
    os.symlink(text, tmp_path / name)
    removed = "dd" if text.startswith("dd/") else "l1"
    box = Toolbox(make_root(str(tmp_path)), deny=["vault"])
    gone = box.call(step, {"path": removed} if step == "delete_file" else
                    {"source": removed, "destination": "elsewhere"})
    answers = [box.call("read_file", {"path": secret}),
               box.call("grep", {"pattern": "hunter2", "path": "."})]
    assert "hunter2-round-eight" not in json.dumps(answers), (gone, answers)
