"""An independent red-team pass over main, tried as a hostile model (and a
hostile local user) would: several Toolboxes or processes on one tree, a
Workspace of roots nested in one another, trees holding many links to one
place, and a lock directory planted by another user.

Every test asserts the secure behaviour on every backend config.  The
battery at the end runs 150 calls per thread by default; a soak run's
``CORRAL_SOAK`` (tests/security/README.md) multiplies that by
``CORRAL_SOAK / 10,000``.
"""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from corral.tools import Toolbox, Workspace

SRC = str(Path(__file__).resolve().parents[2] / "src")


def _env(**extra: str) -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": SRC + os.pathsep + os.environ.get("PYTHONPATH", ""),
            **extra}


# One call made by another process on the same tree (its own Toolbox, its own
# process-wide locks), as a second ``corral serve`` would.
_OTHER = """
import json, sys
from corral.contained import Root, backend_by_name
from corral.tools import Toolbox
path, backend, fast, tool, args = sys.argv[1:6]
root = Root(path, backend=backend_by_name(backend), fast_path=fast == "1")
print(json.dumps(Toolbox(root).call(tool, json.loads(args), timeout=10.0)))
"""


def _other_process(make_root, path: Path, tool: str, args: dict,
                   env: dict[str, str] | None = None) -> dict:
    done = subprocess.run([sys.executable, "-c", _OTHER, str(path), make_root.backend_name,
                           "1" if make_root.fast_path else "0", tool, json.dumps(args)],
                          capture_output=True, text=True, timeout=60, env=env or _env(),
                          check=True)
    return json.loads(done.stdout)


# -- more links to one place than the view weighs per decision ------------------------------


@pytest.mark.parametrize("count,groups", [(300, 4), (1100, 2)])
def test_many_links_to_one_directory_leave_its_protected_name_protecting_it(
        tmp_path, make_root, count, groups):
    """A monorepo whose packages each link one shared folder (hundreds of
    links to it; more than the view weighs per decision in the second
    case), and whose editor settings are one more link to it: a write there
    must be refused whichever order the view meets the names leading to it
    in."""
    landed = []
    for group in range(groups):
        shared = tmp_path / f"shared{group}"
        shared.mkdir()
        (tmp_path / f"pkgs{group}").mkdir()
        for index in range(count):
            os.symlink(f"../shared{group}", tmp_path / f"pkgs{group}" / f"p{index:04d}")
        (tmp_path / f"app{group}").mkdir()
        os.symlink(f"../shared{group}", tmp_path / f"app{group}" / ".vscode")
    box = Toolbox(make_root(str(tmp_path)))
    for group in range(groups):
        answer = box.call("write_file", {"path": f"shared{group}/tasks.json",
                                         "content": '{"tasks": []}\n'})
        if answer["ok"] or (tmp_path / f"app{group}" / ".vscode" / "tasks.json").exists():
            landed.append((group, answer))
    assert not landed, landed


def test_many_links_to_one_directory_leave_its_denied_name_hiding_it(tmp_path, make_root):
    """The same with a deny rule: ``vault`` is denied and links to a folder
    hundreds of other links lead to; nothing there is read or listed."""
    shown = []
    for group in range(4):
        data = tmp_path / f"data{group}"
        data.mkdir()
        (data / "prod.txt").write_text("hunter2-round-seven\n")
        (tmp_path / f"pkgs{group}").mkdir()
        for index in range(300):
            os.symlink(f"../data{group}", tmp_path / f"pkgs{group}" / f"p{index:03d}")
        os.symlink(f"data{group}", tmp_path / f"vault{group}")
    box = Toolbox(make_root(str(tmp_path)), deny=["vault*"])
    for group in range(4):
        answers = [box.call("read_file", {"path": f"data{group}/prod.txt"}),
                   box.call("grep", {"pattern": "hunter2", "path": f"data{group}"})]
        shown += [answer for answer in answers if "hunter2-round-seven" in repr(answer)]
    assert not shown, shown


# -- what another Toolbox on the tree removed ---------------------------------------------


@pytest.mark.parametrize("remover", ["toolbox", "process"])
def test_a_link_another_toolbox_deleted_frees_no_protected_name(tmp_path, make_root, remover):
    """``.vscode -> l1 -> editor``: another Toolbox (in this process or
    another) deletes ``l1``; here ``l1`` is then made a directory and a
    settings file written in it, which VS Code reads as its own."""
    (tmp_path / "editor").mkdir()
    os.symlink("editor", tmp_path / "l1")
    os.symlink("l1", tmp_path / ".vscode")
    box = Toolbox(make_root(str(tmp_path)))
    assert box.call("list_directory", {"path": "."})["ok"]  # this Toolbox has been used
    if remover == "toolbox":
        removed = Toolbox(make_root(str(tmp_path))).call("delete_file", {"path": "l1"})
    else:
        removed = _other_process(make_root, tmp_path, "delete_file", {"path": "l1"})
    made = box.call("make_directory", {"path": "l1"})
    answer = box.call("write_file", {"path": "l1/tasks.json", "content": '{"tasks": []}\n'})
    assert not (tmp_path / ".vscode" / "tasks.json").exists(), (removed, made, answer)
    assert not answer["ok"], (removed, made, answer)


# -- roots nested in one Workspace ------------------------------------------------------------


def _nested(tmp_path: Path, make_root) -> Workspace:
    return Workspace({"outer": Toolbox(make_root(str(tmp_path / "outer"))),
                      "inner": Toolbox(make_root(str(tmp_path / "outer" / "sub")))})


@pytest.mark.parametrize("moved_through,written_through", [("inner", "outer"),
                                                           ("outer", "inner")])
def test_a_link_moved_through_one_nested_root_protects_through_the_other(
        tmp_path, make_root, moved_through, written_through):
    """Roots ``outer`` and ``outer/sub`` in one Workspace: a link moved onto
    ``.vscode`` through one root, then a write into the folder it leads to
    through the other root."""
    sub = tmp_path / "outer" / "sub"
    (sub / "editor").mkdir(parents=True)
    os.symlink("editor", sub / "lnk")
    ws = _nested(tmp_path, make_root)
    prefix = {"inner": "inner", "outer": "outer/sub"}
    assert ws.call("list_directory", {"path": "outer/sub"})["ok"]
    moved = ws.call("move_file", {"source": f"{prefix[moved_through]}/lnk",
                                  "destination": f"{prefix[moved_through]}/.vscode"})
    answer = ws.call("write_file", {"path": f"{prefix[written_through]}/editor/tasks.json",
                                    "content": '{"tasks": []}\n'})
    assert not (sub / ".vscode" / "tasks.json").exists(), (moved, answer)
    assert not answer["ok"], (moved, answer)


def test_a_link_deleted_through_the_inner_root_frees_nothing_through_the_outer(tmp_path,
                                                                              make_root):
    sub = tmp_path / "outer" / "sub"
    (sub / "editor").mkdir(parents=True)
    os.symlink("editor", sub / "l1")
    os.symlink("l1", sub / ".vscode")
    ws = _nested(tmp_path, make_root)
    removed = ws.call("delete_file", {"path": "inner/l1"})
    made = ws.call("make_directory", {"path": "outer/sub/l1"})
    answer = ws.call("write_file", {"path": "outer/sub/l1/tasks.json",
                                    "content": '{"tasks": []}\n'})
    assert not (sub / ".vscode" / "tasks.json").exists(), (removed, made, answer)
    assert not answer["ok"], (removed, made, answer)


# -- the lock directory planted by another local user ----------------------------------------

# This process's side, in a process of its own: its temporary directory is
# the one another user planted the lock directory in.  It opens its Toolbox,
# lets another process (same temporary directory) move a link onto
# ``.vscode``, then writes into the folder the link leads to.
_PLANTED = """
import json, subprocess, sys
from corral.contained import Root, backend_by_name
from corral.tools import Toolbox
path, backend, fast, other = sys.argv[1:5]
root = Root(path, backend=backend_by_name(backend), fast_path=fast == "1")
box = Toolbox(root)
assert box.call("list_directory", {"path": "."})["ok"]
moved = subprocess.run([sys.executable, "-c", other, path, backend, fast, "move_file",
                        json.dumps({"source": "lnk", "destination": ".vscode"})],
                       capture_output=True, text=True, check=True).stdout
answer = box.call("write_file", {"path": "editor/tasks.json", "content": "{}\\n"})
print(json.dumps([json.loads(moved), answer]))
"""


def test_a_lock_directory_another_user_planted_still_keeps_processes_in_step(tmp_path,
                                                                            make_root):
    """Another local user makes ``corral-locks-<uid>`` in the shared
    temporary directory before corral does (theirs, or writable by all):
    two processes serving one tree must still see each other's moves."""
    shared_tmp = tmp_path / "tmp"
    planted = shared_tmp / f"corral-locks-{os.getuid()}"
    planted.mkdir(parents=True)
    os.chmod(shared_tmp, 0o1777)
    os.chmod(planted, 0o777)
    if os.getuid() == 0:
        os.chown(planted, 65534, 65534)  # nobody's
    home = tmp_path / "home"
    home.mkdir()
    tree = tmp_path / "tree"
    (tree / "editor").mkdir(parents=True)
    os.symlink("editor", tree / "lnk")
    env = _env(TMPDIR=str(shared_tmp), HOME=str(home), XDG_RUNTIME_DIR="",
               XDG_CACHE_HOME="")
    done = subprocess.run([sys.executable, "-c", _PLANTED, str(tree), make_root.backend_name,
                           "1" if make_root.fast_path else "0", _OTHER],
                          capture_output=True, text=True, timeout=120, env=env, check=True)
    moved, answer = json.loads(done.stdout)
    assert moved["ok"], moved
    assert not (tree / ".vscode" / "tasks.json").exists(), answer
    assert not answer["ok"], answer
    assert sorted(os.listdir(planted)) == []  # nothing of ours in another user's directory


# -- the count of moves kept beside the lock --------------------------------------------------

# A Toolbox in a process of its own: opened, then (once told) a move.
_MOVER = """
import json, sys
from corral.contained import Root, backend_by_name
from corral.tools import Toolbox
path, backend, fast = sys.argv[1:4]
box = Toolbox(Root(path, backend=backend_by_name(backend), fast_path=fast == "1"))
assert box.call("list_directory", {"path": "."})["ok"]
print("open", flush=True)
sys.stdin.readline()
print(json.dumps(box.call("move_file", {"source": "d", "destination": "e"})), flush=True)
"""


def test_a_lock_file_whose_page_cannot_be_had_does_not_kill_the_server(tmp_path, make_root):
    """The count of moves beside the tree lock must be read and bumped by
    calls that can fail, never through a mapping of the file: a model whose
    root shares a filesystem with the temporary directory fills it with
    writes, and the page of the count, never written before, cannot be had;
    a store to it there is SIGBUS, and the server dies at the model's next
    move.  Here the page is taken away by shortening the file (the same
    fault, with no full disk to set up)."""
    lock_tmp = tmp_path / "tmp"
    lock_tmp.mkdir()
    tree = tmp_path / "tree"
    (tree / "d").mkdir(parents=True)
    mover = subprocess.Popen([sys.executable, "-c", _MOVER, str(tree), make_root.backend_name,
                              "1" if make_root.fast_path else "0"],
                             stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
                             env=_env(TMPDIR=str(lock_tmp)))
    try:
        assert mover.stdout is not None and mover.stdin is not None
        assert mover.stdout.readline().strip() == "open"
        lock_files = list(lock_tmp.glob("corral-locks-*/*.lock"))
        assert lock_files
        for lock_file in lock_files:
            os.truncate(lock_file, 0)
        mover.stdin.write("go\n")
        mover.stdin.flush()
        answer = mover.stdout.readline()
    finally:
        mover.stdin.close()
        returncode = mover.wait(timeout=60)
    assert returncode == 0, returncode
    assert json.loads(answer)["ok"], answer
    assert (tree / "e").is_dir()


# -- links that climb out of the root and come back in ----------------------------------------


@pytest.mark.parametrize("spelled", ["../{root}/editor", "sub/../../{root}/editor",
                                     "../{alias}/editor"],
                         ids=["by-its-name", "through-a-folder", "through-a-link-to-it"])
def test_a_protected_link_climbing_out_and_back_in_protects_its_target(tmp_path, make_root,
                                                                       spelled):
    """``.vscode -> ../<the root's own name>/editor``: VS Code follows the
    link out of the project and back into it (as it does an absolute link
    naming a place inside the root); what it leads to is protected."""
    tree = tmp_path / "tree"
    (tree / "editor").mkdir(parents=True)
    (tree / "sub").mkdir()
    os.symlink("tree", tmp_path / "alias")
    os.symlink(spelled.format(root="tree", alias="alias"), tree / ".vscode")
    box = Toolbox(make_root(str(tree)))
    answer = box.call("write_file", {"path": "editor/tasks.json", "content": '{"tasks": []}\n'})
    assert not (tree / ".vscode" / "tasks.json").exists(), answer
    assert answer["ok"] is False and answer["code"] == "DENIED", answer


def test_a_denied_link_climbing_out_and_back_in_hides_its_target(tmp_path, make_root):
    tree = tmp_path / "tree"
    (tree / "data").mkdir(parents=True)
    (tree / "data" / "prod.txt").write_text("hunter2-round-seven\n")
    os.symlink("../tree/data", tree / "vault")
    box = Toolbox(make_root(str(tree)), deny=["vault"])
    answers = [box.call("read_file", {"path": "data/prod.txt"}),
               box.call("grep", {"pattern": "hunter2"}),
               box.call("list_directory", {"path": "data"})]
    assert "hunter2-round-seven" not in repr(answers), answers
    assert "prod.txt" not in repr(answers[2]), answers


@pytest.mark.parametrize("config,written", [
    ("[core]\n\thooksPath = ../tree/tools/hooks\n", "tools/hooks/pre-commit"),
    ("[core]\n\thooksPath = ../alias/tools/hooks\n", "tools/hooks/pre-commit"),
    ("[core]\n\thooksPath = {alias}/tools/hooks\n", "tools/hooks/pre-commit"),
    ("[include]\n\tpath = {alias}/.gitconfig\n", ".gitconfig"),
    ("[include]\n\tpath = ../../tree/.gitconfig\n", ".gitconfig"),
], ids=["hooksPath-out-and-back", "hooksPath-through-an-alias", "hooksPath-absolute-alias",
        "include-absolute-alias", "include-out-and-back"])
def test_what_git_config_names_by_another_spelling_of_the_root_is_protected(
        tmp_path, make_root, config, written):
    """``git config core.hooksPath $PWD/tools/hooks`` run where the project
    is reached through a link (``~/code -> /mnt/data/code``), or a path
    climbing out of the work tree and back in: git runs what is there all
    the same."""
    tree = tmp_path / "tree"
    for made in ("objects", "refs"):
        (tree / ".git" / made).mkdir(parents=True)
    (tree / ".git" / "HEAD").write_text("ref: refs/heads/main\n")
    os.symlink("tree", tmp_path / "alias")
    (tree / ".git" / "config").write_text(config.format(alias=tmp_path / "alias"))
    box = Toolbox(make_root(str(tree)))
    answer = box.call("write_file", {"path": written, "content": "[core]\n\tfsmonitor = x\n"})
    assert not (tree / written).exists(), answer
    assert answer["ok"] is False and answer["code"] == "DENIED", answer


# -- links of an outer root leading into an inner one -----------------------------------------


def _outer_links_into_inner(tmp_path: Path) -> Path:
    """``outer/.vscode -> sub/editor`` and a denied ``outer/vault ->
    sub/data``: names the outer root holds, leading into ``outer/sub``."""
    outer = tmp_path / "outer"
    (outer / "sub" / "editor").mkdir(parents=True)
    (outer / "sub" / "data").mkdir()
    (outer / "sub" / "data" / "prod.txt").write_text("hunter2-round-seven\n")
    os.symlink("sub/editor", outer / ".vscode")
    os.symlink("sub/data", outer / "vault")
    return outer


def _through_inner(ws, root: str) -> list[dict]:
    """The guarded targets reached through the inner root (``root``: its
    name in a workspace of several, "" where it is the only one)."""
    at = f"{root}/" if root else ""
    return [ws.call("write_file", {"path": f"{at}editor/tasks.json",
                                   "content": '{"tasks": []}\n'}),
            ws.call("read_file", {"path": f"{at}data/prod.txt"}),
            ws.call("grep", {"pattern": "hunter2", "path": root or "."}),
            ws.call("list_directory", {"path": f"{at}data"})]


def _assert_held(outer: Path, answers: list[dict]) -> None:
    assert not (outer / ".vscode" / "tasks.json").exists(), answers
    assert answers[0]["ok"] is False and answers[0]["code"] == "DENIED", answers[0]
    assert "hunter2-round-seven" not in repr(answers), answers
    assert "prod.txt" not in repr(answers[3]), answers[3]


def test_an_outer_roots_links_into_a_nested_root_hold_through_it(tmp_path, make_root):
    """A Workspace of ``outer`` and ``outer/sub``: a protected and a
    denied link of the outer root leading into the inner one rule what
    they lead to when it is reached through the inner root too."""
    outer = _outer_links_into_inner(tmp_path)
    ws = Workspace({"outer": Toolbox(make_root(str(outer)), deny=["vault"]),
                    "inner": Toolbox(make_root(str(outer / "sub")))})
    _assert_held(outer, _through_inner(ws, "inner"))


def test_an_outer_roots_links_into_a_narrowed_client_root_hold_through_it(tmp_path, make_root):
    """``corral serve outer`` and a client whose root is ``outer/sub``:
    the narrowed root is held to the outer's links as to its rules."""
    outer = _outer_links_into_inner(tmp_path)
    parent = Toolbox(make_root(str(outer)), deny=["vault"])

    def opener(root, box, base):
        return Toolbox(root, policy=box.policy.beneath(base))

    narrowed = Workspace({"outer": parent}, opener=opener).narrowed([str(outer / "sub")])
    try:
        assert len(narrowed.roots) == 1
        _assert_held(outer, _through_inner(narrowed, ""))
    finally:
        narrowed.close()


def test_an_outer_link_moved_onto_vscode_holds_through_the_nested_root(tmp_path, make_root):
    """The outer root's own move puts the link in place; the write then goes
    through the inner root."""
    outer = tmp_path / "outer"
    (outer / "sub" / "editor").mkdir(parents=True)
    os.symlink("sub/editor", outer / "lnk")
    ws = Workspace({"outer": Toolbox(make_root(str(outer))),
                    "inner": Toolbox(make_root(str(outer / "sub")))})
    moved = ws.call("move_file", {"source": "outer/lnk", "destination": "outer/.vscode"})
    answer = ws.call("write_file", {"path": "inner/editor/tasks.json",
                                    "content": '{"tasks": []}\n'})
    assert not (outer / ".vscode" / "tasks.json").exists(), (moved, answer)
    assert answer["ok"] is False, (moved, answer)


def test_a_roots_links_into_a_root_beside_it_hold_through_that_root(tmp_path, make_root):
    """``corral serve app shared`` where ``app/.vscode -> ../shared/vscode``
    and a denied ``app/vault -> ../shared/data``: VS Code opening ``app``
    follows its link into ``shared``; the names rule there through the
    ``shared`` root too."""
    app, shared = tmp_path / "app", tmp_path / "shared"
    app.mkdir()
    (shared / "editor").mkdir(parents=True)
    (shared / "data").mkdir()
    (shared / "data" / "prod.txt").write_text("hunter2-round-seven\n")
    os.symlink("../shared/editor", app / ".vscode")
    os.symlink("../shared/data", app / "vault")
    ws = Workspace({"app": Toolbox(make_root(str(app)), deny=["vault"]),
                    "shared": Toolbox(make_root(str(shared)))})
    answers = _through_inner(ws, "shared")
    assert not (app / ".vscode" / "tasks.json").exists(), answers
    assert answers[0]["ok"] is False and answers[0]["code"] == "DENIED", answers[0]
    assert "hunter2-round-seven" not in repr(answers), answers
    assert "prod.txt" not in repr(answers[3]), answers[3]


# -- a battery: several Toolboxes and nested roots, links moved and deleted at once ------------

SOAK = max(1, int(os.environ.get("CORRAL_SOAK", "10000") or "10000") // 10000)
# what is moved, deleted and made (the fixture's protected links stay: what
# they lead to is the target), and where moves may put it
_NAMES = ["l1", "l2", "l3", "editor", "cfg", "x", "y", "a", "a/b", "hookstore", "h2"]
_ONTO = [*_NAMES, ".vscode", ".claude", ".zed"]
_GUARDED = [".vscode/tasks.json", ".vscode/settings.json", ".claude/settings.json",
            ".zed/settings.json", ".zed/tasks.json", ".git/hooks/pre-commit"]


def test_nested_roots_and_toolboxes_moving_and_deleting_links_at_once(tmp_path, make_root):
    """Four threads send random writes, moves, deletes and directories
    through a Workspace of ``outer`` and ``outer/sub`` (either spelling) and
    through a second Toolbox on ``outer/sub``, aimed at chains of links
    leading to protected names (``.vscode -> l1 -> editor``, a hook linked
    out of ``.git``): nothing lands in a protected file, whichever links
    are where at the end."""
    sub = tmp_path / "outer" / "sub"
    for made in ("editor", "cfg", "hookstore", "a/b"):
        (sub / made).mkdir(parents=True, exist_ok=True)
    (sub / ".git" / "hooks").mkdir(parents=True)
    (sub / ".git" / "HEAD").write_text("ref: refs/heads/main\n")
    (sub / "hookstore" / "pc").write_text("#!/bin/sh\n")
    os.symlink("editor", sub / "l1")
    os.symlink("l1", sub / ".vscode")
    os.symlink("cfg", sub / "l2")
    os.symlink("a/b/../../cfg", sub / "l3")
    os.symlink("../../hookstore/pc", sub / ".git" / "hooks" / "pre-commit")
    ws = _nested(tmp_path, make_root)
    other = Toolbox(make_root(str(sub)))
    token = "PWN-round-seven"
    calls = 150 * SOAK
    errors: list[object] = []

    def one(rng) -> dict:
        kind, at, name = rng.randrange(6), rng.choice(["inner/", "outer/sub/"]), \
            rng.choice(_NAMES)
        if kind == 0:
            leaf = rng.choice(["tasks.json", "settings.json", "pc"])
            return ws.call("write_file", {"path": f"{at}{name}/{leaf}", "content": token,
                                          "overwrite": True})
        if kind == 1:
            return ws.call("move_file", {"source": at + name,
                                         "destination": at + rng.choice(_ONTO),
                                         "overwrite": rng.random() < 0.3})
        if kind == 2:
            return ws.call("delete_file", {"path": at + name})
        if kind == 3:
            return ws.call("make_directory", {"path": at + name})
        if kind == 4:
            return other.call("move_file", {"source": name, "destination": rng.choice(_ONTO)})
        return other.call("delete_file", {"path": name})

    def run(index: int) -> None:
        rng = random.Random(index)
        try:
            for _ in range(calls):
                answer = one(rng)
                if not answer["ok"] and (answer["code"] == "INTERNAL" or
                                         answer.get("details", {}).get("kind") == "time_limit"):
                    errors.append(answer)
        except BaseException as error:  # noqa: BLE001 - reported below
            errors.append(error)

    threads = [threading.Thread(target=run, args=(index,)) for index in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=300)
        assert not thread.is_alive(), "a call hung"
    assert not errors, errors[:3]
    landed = []
    for guarded in _GUARDED:
        try:
            if token in (sub / guarded).read_text():
                landed.append(guarded)
        except OSError:
            pass
    assert not landed, landed


@pytest.mark.parametrize("leads", ["/", ".."], ids=["to-the-filesystem-root", "to-the-parent"])
def test_a_denied_link_of_one_root_to_a_directory_above_another_hides_it(tmp_path, make_root,
                                                                          leads):
    """``app/vault -> /`` (or ``..``) under ``deny=vault``: every root
    beside it lies under what the denied name leads to."""
    app, shared = tmp_path / "app", tmp_path / "shared"
    app.mkdir()
    (shared / "data").mkdir(parents=True)
    (shared / "data" / "prod.txt").write_text("hunter2-round-seven\n")
    os.symlink(leads, app / "vault")
    ws = Workspace({"app": Toolbox(make_root(str(app)), deny=["vault"]),
                    "shared": Toolbox(make_root(str(shared)))})
    answer = ws.call("read_file", {"path": "shared/data/prod.txt"})
    assert "hunter2-round-seven" not in repr(answer), answer
    assert answer["ok"] is False and answer["code"] == "DENIED", answer
