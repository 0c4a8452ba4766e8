"""Links and git config another program makes while a Toolbox is open
(a long ``corral serve`` session: the user's checkout, an editor, a
script), then a hostile model's call on where they lead.

A protected or denied name that is a link protects what it leads to;
made after open, the view must learn it before it decides, not only the
links it found when it opened:

* ``.vscode -> editor`` made at the root: ``write_file
  editor/settings.json`` is ``.vscode/settings.json`` to VS Code;
* ``.git/hooks -> ../scripts`` (a repository made with no hooks/):
  ``write_file scripts/pre-commit`` is a hook git runs;
* ``.envrc -> config/envrc``, a link to a file direnv sources;
* ``.claude -> x``: Claude Code's ``.claude/settings.json``;
* a directory made later holding such a link (``.vscode`` moved into
  place with ``settings.json -> ../editor/settings.json`` in it);
* ``.env -> config/env`` (a secret): ``read_file config/env`` refused;
* git config changed after open (``core.hooksPath``, ``include.path``),
  in place or as git writes it (a lock file renamed onto it).

Each call is answered as it would be had the link (or config) been there
when the Toolbox opened, and nothing is written.  On every backend config.
"""

from __future__ import annotations

import gc
import os
import subprocess
import sys
from pathlib import Path

import pytest

from corral.tools import Toolbox
from corral.tools._runtime.view import freshness

from .helpers.link_calls import OURS, SETTINGS, call_op, acts_on_existing, denied, unchanged


# (link, its text, the directory or file it leads to, the protected file written there)
LINKS = [
    (".vscode", "editor", "editor", "settings.json"),
    (".git/hooks", "../scripts", "scripts", "pre-commit"),
    (".envrc", "config/envrc", "config", "envrc"),
    (".claude", "x", "x", "settings.json"),
]
OPS = ["write", "overwrite", "edit", "move_onto", "move_away", "delete", "make_directory"]


def _tree(base: Path, directory: str, name: str, *, existing: bool) -> None:
    """A repository with no hooks/ (``git init --template=``), the
    directory a link will lead to, and a file the model may move."""
    for part in ("objects", "refs"):
        (base / ".git" / part).mkdir(parents=True, exist_ok=True)
    (base / ".git" / "HEAD").write_text("ref: refs/heads/main\n")
    (base / ".git" / "config").write_text("[core]\n\tbare = false\n")
    (base / directory).mkdir(parents=True, exist_ok=True)
    (base / "sub").mkdir(exist_ok=True)
    (base / "staged.txt").write_text(OURS)
    if existing:
        (base / directory / name).write_text(SETTINGS)


@pytest.mark.parametrize("op", OPS)
@pytest.mark.parametrize(("link", "text", "directory", "name"), LINKS,
                         ids=[case[0] for case in LINKS])
def test_a_protected_link_made_after_open_protects_what_it_leads_to(
        tmp_path, make_root, link, text, directory, name, op):
    _tree(tmp_path, directory, name, existing=acts_on_existing(op))
    target = f"{directory}/{name}"
    box = Toolbox(make_root(str(tmp_path)))
    assert box.call("list_directory", {"path": "."})["ok"] is True
    # another program (the user's checkout) makes the link now
    os.symlink(text, tmp_path / link)
    answer = call_op(box, op, target)
    assert denied(answer), answer
    unchanged(tmp_path, target, op)


def test_the_same_link_there_at_open_is_refused_alike(tmp_path, make_root):
    """The decision the calls above must match: the link there at open."""
    _tree(tmp_path, "editor", "settings.json", existing=False)
    os.symlink("editor", tmp_path / ".vscode")
    box = Toolbox(make_root(str(tmp_path)))
    answer = call_op(box, "write", "editor/settings.json")
    assert denied(answer), answer
    assert answer["details"]["kind"] == "protected"


def test_a_link_made_after_a_call_already_wrote_there_is_learnt(tmp_path, make_root):
    """The directory was written into (and decided) before the link came:
    the earlier decision is not reused."""
    _tree(tmp_path, "editor", "settings.json", existing=False)
    box = Toolbox(make_root(str(tmp_path)))
    first = box.call("write_file", {"path": "editor/notes.md", "content": "a\n"})
    assert first["ok"] is True, first
    root_level = box.call("write_file", {"path": "top.md", "content": "a\n"})
    assert root_level["ok"] is True, root_level
    os.symlink("editor", tmp_path / ".vscode")
    answer = box.call("write_file", {"path": "editor/settings.json", "content": OURS})
    assert denied(answer), answer
    assert not os.path.lexists(tmp_path / "editor" / "settings.json")


def test_a_directory_moved_into_place_holding_a_link_is_learnt(tmp_path, make_root):
    _tree(tmp_path, "editor", "settings.json", existing=False)
    box = Toolbox(make_root(str(tmp_path)))
    assert box.call("list_directory", {"path": "."})["ok"] is True
    prepared = tmp_path.parent / f"{tmp_path.name}-prepared"
    prepared.mkdir()
    os.symlink("../editor/settings.json", prepared / "settings.json")
    os.rename(prepared, tmp_path / ".vscode")
    answer = box.call("write_file", {"path": "editor/settings.json", "content": OURS})
    assert denied(answer), answer
    assert not os.path.lexists(tmp_path / "editor" / "settings.json")


def test_a_nested_new_directory_holding_a_link_is_learnt(tmp_path, make_root):
    _tree(tmp_path, "editor", "settings.json", existing=False)
    box = Toolbox(make_root(str(tmp_path)))
    assert box.call("list_directory", {"path": "."})["ok"] is True
    (tmp_path / "pkg" / "deep").mkdir(parents=True)
    os.symlink("../../editor", tmp_path / "pkg" / "deep" / ".vscode")
    answer = box.call("write_file", {"path": "editor/settings.json", "content": OURS})
    assert denied(answer), answer
    assert not os.path.lexists(tmp_path / "editor" / "settings.json")


@pytest.mark.parametrize("call", ["read_file", "grep", "edit_file"])
def test_a_secret_link_made_after_open_hides_what_it_leads_to(tmp_path, make_root, call):
    (tmp_path / "config").mkdir()
    (tmp_path / "config" / "env").write_text("API_KEY=TOPSECRET\n")
    box = Toolbox(make_root(str(tmp_path)))
    assert box.call("list_directory", {"path": "."})["ok"] is True
    os.symlink("config/env", tmp_path / ".env")
    if call == "read_file":
        answer = box.call("read_file", {"path": "config/env"})
    elif call == "grep":
        answer = box.call("grep", {"pattern": "TOP", "path": "config"})
    else:
        answer = box.call("edit_file", {"path": "config/env", "oldText": "TOPSECRET",
                                        "newText": "x"})
    assert "API_KEY" not in repr(answer), answer
    if call != "grep":
        assert answer["ok"] is False, answer
    assert (tmp_path / "config" / "env").read_text() == "API_KEY=TOPSECRET\n"


def _set_config(base: Path, text: str, *, as_git_does: bool) -> None:
    config = base / ".git" / "config"
    if as_git_does:  # git writes config.lock and renames it onto config
        lock = base / ".git" / "config.lock"
        lock.write_text(config.read_text() + text)
        os.rename(lock, config)
    else:
        with open(config, "a") as handle:
            handle.write(text)


@pytest.mark.parametrize("as_git_does", [True, False], ids=["renamed", "in-place"])
@pytest.mark.parametrize("op", ["write", "make_directory", "move_onto"])
def test_a_hooks_path_set_after_open_protects_that_directory(tmp_path, make_root, op,
                                                             as_git_does):
    _tree(tmp_path, "tools/hooks", "pre-commit", existing=False)
    box = Toolbox(make_root(str(tmp_path)))
    assert box.call("list_directory", {"path": "."})["ok"] is True
    _set_config(tmp_path, "[core]\n\thooksPath = tools/hooks\n", as_git_does=as_git_does)
    answer = call_op(box, op, "tools/hooks/pre-commit")
    assert denied(answer), answer
    unchanged(tmp_path, "tools/hooks/pre-commit", op)


@pytest.mark.parametrize("as_git_does", [True, False], ids=["renamed", "in-place"])
def test_an_include_path_set_after_open_protects_the_included_file(tmp_path, make_root,
                                                                   as_git_does):
    _tree(tmp_path, "editor", "settings.json", existing=False)
    (tmp_path / "shared.inc").write_text("[user]\n\tname = someone\n")
    box = Toolbox(make_root(str(tmp_path)))
    assert box.call("list_directory", {"path": "."})["ok"] is True
    _set_config(tmp_path, "[include]\n\tpath = ../shared.inc\n", as_git_does=as_git_does)
    answer = box.call("edit_file", {"path": "shared.inc", "oldText": "someone",
                                    "newText": "x\n[core]\n\tfsmonitor = ./run.sh"})
    assert denied(answer), answer
    assert (tmp_path / "shared.inc").read_text() == "[user]\n\tname = someone\n"


# -- how the view learns them: the kernel's watch, or stat where there is none ------------


@pytest.mark.parametrize(("link", "text", "directory", "name"), LINKS,
                         ids=[case[0] for case in LINKS])
def test_a_link_made_after_open_is_learnt_with_or_without_a_watch(
        tmp_path, make_root, watching, link, text, directory, name):
    _tree(tmp_path, directory, name, existing=True)
    box = Toolbox(make_root(str(tmp_path)))
    assert box.call("edit_file", {"path": f"{directory}/{name}", "oldText": '"1"',
                                  "newText": '"1"'})["ok"] is False  # no change: refused
    os.symlink(text, tmp_path / link)
    answer = call_op(box, "overwrite", f"{directory}/{name}")
    assert denied(answer), answer
    unchanged(tmp_path, f"{directory}/{name}", "overwrite")
    os.unlink(tmp_path / link)  # gone again: written as before
    allowed = call_op(box, "overwrite", f"{directory}/{name}")
    assert allowed["ok"] is True, allowed


def test_a_hooks_path_set_after_open_without_a_watch(tmp_path, make_root, watching):
    _tree(tmp_path, "tools/hooks", "pre-commit", existing=False)
    box = Toolbox(make_root(str(tmp_path)))
    assert box.call("list_directory", {"path": "."})["ok"] is True
    _set_config(tmp_path, "[core]\n\thooksPath = tools/hooks\n", as_git_does=False)
    answer = call_op(box, "write", "tools/hooks/pre-commit")
    assert denied(answer), answer
    assert not os.path.lexists(tmp_path / "tools" / "hooks" / "pre-commit")


def test_a_link_whose_event_the_full_queue_dropped_is_learnt(tmp_path, make_root):
    """More changes than the kernel queues (its events dropped, the queue
    said full): every followed place is looked at again."""
    _tree(tmp_path, "editor", "settings.json", existing=False)
    box = Toolbox(make_root(str(tmp_path)))
    assert box.call("list_directory", {"path": "."})["ok"] is True
    churn = tmp_path / "churn"
    for _ in range(_queued_most() // 2 + 16):  # each a create and a delete
        churn.touch()
        churn.unlink()
    os.symlink("editor", tmp_path / ".vscode")
    answer = box.call("write_file", {"path": "editor/settings.json", "content": OURS})
    assert denied(answer), answer
    assert not os.path.lexists(tmp_path / "editor" / "settings.json")


def test_a_program_renaming_in_a_loop_leaves_each_call_bounded(tmp_path, make_root,
                                                                monkeypatch):
    """Another program renaming names in the root in a loop queues events
    faster than a call reads them: a call reads a bounded part of them
    (it read on while events kept coming: a call did not end), looks at
    every followed place instead, and still learns a link made meanwhile."""
    _tree(tmp_path, "editor", "settings.json", existing=False)
    root = make_root(str(tmp_path))
    box = Toolbox(root)
    assert box.call("list_directory", {"path": "."})["ok"] is True
    reads: list[int] = []
    real_read = os.read

    def counted(fd: int, size: int, /) -> bytes:
        if fd == freshness._KERNEL.fd:
            reads.append(size)
        return real_read(fd, size)

    # the watch reads through the root's backend (the native one binds
    # os.read itself, so a patch of the os module would see nothing)
    monkeypatch.setattr(type(root.backend), "read", staticmethod(counted))
    (tmp_path / "a").mkdir()
    # a process of its own, so it renames while the call runs (not between)
    renamer = subprocess.Popen(
        [sys.executable, "-c", _RENAMER, str(tmp_path / "a"), str(tmp_path / "b")],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    try:
        assert renamer.stdout is not None and renamer.stdout.readline() == b"ready\n"
        most = 0
        for _ in range(50):
            reads.clear()
            assert box.call("list_directory", {"path": "."})["ok"] is True
            most = max(most, len(reads))
        os.symlink("editor", tmp_path / ".vscode")
        answer = box.call("write_file", {"path": "editor/settings.json", "content": OURS})
    finally:
        renamer.communicate(b"stop\n", timeout=60)
    watched = freshness._KERNEL.fd >= 0  # (where the kernel has no watch: nothing to read)
    # a call reads once, and a second time, a bounded read dropping the
    # burst queued, when the first read found more: however fast the events came
    assert most <= (2 if watched else 0) and (most >= 1) == watched, most
    assert denied(answer), answer
    assert not os.path.lexists(tmp_path / "editor" / "settings.json")


_RENAMER = """
import os, select, sys
a, b = sys.argv[1], sys.argv[2]
print("ready", flush=True)
while not select.select([sys.stdin], [], [], 0)[0]:
    for _ in range(256):
        os.rename(a, b)
        os.rename(b, a)
"""


def _queued_most() -> int:
    try:
        with open("/proc/sys/fs/inotify/max_queued_events") as limit:
            return int(limit.read())
    except (OSError, ValueError):
        return 16384


def test_a_forked_child_learns_a_link_made_after_the_fork(tmp_path, make_root):
    """The child lets the parent's watch go (its reads would take the
    parent's events) and looks for itself."""
    _tree(tmp_path, "editor", "settings.json", existing=False)
    box = Toolbox(make_root(str(tmp_path)))
    assert box.call("list_directory", {"path": "."})["ok"] is True
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: exits without returning into pytest
        code = 1
        try:
            os.close(read_end)
            os.symlink("editor", tmp_path / ".vscode")
            answer = box.call("write_file", {"path": "editor/settings.json", "content": OURS})
            os.write(write_end, b"denied" if denied(answer) else repr(answer).encode())
            code = 0
        finally:
            os._exit(code)
    os.close(write_end)
    with os.fdopen(read_end, "rb") as said:
        told = said.read()
    _, status = os.waitpid(pid, 0)
    assert status == 0 and told == b"denied", told
    assert not os.path.lexists(tmp_path / "editor" / "settings.json")
    # the parent's own watch goes on: a link made now is learnt here too
    os.unlink(tmp_path / ".vscode")
    os.symlink("editor", tmp_path / ".claude")
    answer = box.call("write_file", {"path": "editor/settings.json", "content": OURS})
    assert denied(answer), answer


def _watches() -> int | None:
    """The kernel watches the process's instance holds (``None``: none)."""
    fd = freshness._KERNEL.fd
    if fd < 0:
        return None
    with open(f"/proc/self/fdinfo/{fd}") as info:
        return sum(line.startswith("inotify wd:") for line in info)


def test_toolboxes_closed_or_let_go_leave_no_watch_behind(tmp_path, make_root):
    """Each Toolbox on a tree of its own (a watch of its own): closed, or
    dropped without a close, the process's watches are as before."""
    def opened(i: int) -> Toolbox:
        base = tmp_path / f"r{i}"
        base.mkdir()
        _tree(base, "editor", "settings.json", existing=False)
        box = Toolbox(make_root(str(base)))
        box.call("list_directory", {"path": "."})
        return box

    gc.collect()  # earlier tests' Toolboxes let go: removed by the next open
    opened(0).close()
    before = _watches()
    for i in range(1, 101):
        box = opened(i)
        if i % 2:
            box.close()
        del box
    gc.collect()
    opened(101).close()  # the watch's next user removes what the dropped ones held
    assert _watches() == before
    assert before is None or before >= 0
