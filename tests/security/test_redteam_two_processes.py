"""An independent red-team pass over main, tried as a hostile model would:
several tool calls at once, from threads, ``acall`` under ``asyncio.gather``
and from more than one process working on one tree (two ``corral serve``
processes, or a host running two Toolboxes in two processes), aimed at
protected, denied and secret names.

Every test asserts the secure behaviour on every backend config, and
forces the interleaving it needs (a fault-injecting backend's hook runs the
other call at the chosen instant) rather than relying on timing.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from corral.contained import Root, backend_by_name
from corral.testing.backends import Fault, FaultBackend
from corral.tools import Toolbox
from corral.tools._policy.gitdirs import MAX_DEPTH

SRC = str(Path(__file__).resolve().parents[2] / "src")

# A second process running one tool call on the same tree (its own
# Toolbox, its own process-wide locks), as a second ``corral serve`` would.
_OTHER = """
import json, sys
from corral.contained import Root, backend_by_name
from corral.tools import Toolbox
path, backend, fast, tool, args, timeout = sys.argv[1:7]
root = Root(path, backend=backend_by_name(backend), fast_path=fast == "1")
answer = Toolbox(root).call(tool, json.loads(args), timeout=float(timeout))
print(json.dumps(answer))
"""


def _other_process(make_root, path: Path, tool: str, args: dict, timeout: float) -> dict:
    """One call made by another process on ``path``; its answer.  The call
    gives up after ``timeout`` seconds (a lock held here makes it wait)."""
    env = {**os.environ, "PYTHONPATH": SRC + os.pathsep + os.environ.get("PYTHONPATH", "")}
    done = subprocess.run([sys.executable, "-c", _OTHER, str(path), make_root.backend_name,
                           "1" if make_root.fast_path else "0", tool, json.dumps(args),
                           str(timeout)],
                          capture_output=True, text=True, timeout=60, env=env, check=True)
    return json.loads(done.stdout)


@contextmanager
def _hooked_root(make_root, path: Path, *faults: Fault) -> Iterator[Root]:
    """A Root on ``path`` with ``faults`` injected, on this test's backend config."""
    backend = FaultBackend(backend_by_name(make_root.backend_name), *faults)
    root = Root(str(path), backend=backend, fast_path=make_root.fast_path)
    try:
        yield root
    finally:
        root.close()


# -- two processes on one tree ---------------------------------------------------------------


def test_a_write_into_a_folder_another_process_moves_onto_vscode_lands_nowhere_protected(
        tmp_path, make_root):
    """This process writes ``y/tasks.json``; just before the file is put in
    place, another process serving the same root moves ``y`` to ``.vscode``
    (each call alone is allowed: the folder holds no protected name when it
    moves).  (Two processes serving roots nested in one another:
    test_redteam_r25a_nested_roots_in_two_processes.py.)"""
    (tmp_path / "y").mkdir()
    other: list[dict] = []

    def move_meanwhile() -> None:
        if not other:
            other.append(_other_process(make_root, tmp_path, "move_file",
                                        {"source": "y", "destination": ".vscode"}, 1.0))

    faults = [Fault(method, None, name="tasks.json", hook=move_meanwhile)
              for method in ("link_at", "rename_at")]
    with _hooked_root(make_root, tmp_path, *faults) as root:
        answer = Toolbox(root).call("write_file", {"path": "y/tasks.json",
                                                   "content": '{"tasks": []}\n'})
    assert other, "the other process never ran"
    assert not (tmp_path / ".vscode" / "tasks.json").exists(), (answer, other)
    if answer["ok"]:  # the answer agrees with the disk
        assert (tmp_path / "y" / "tasks.json").read_text() == '{"tasks": []}\n', (answer, other)


# -- two Toolboxes on one tree: what one moves, the other must know ------------------------

# (fixture links, the move the other Toolbox makes, the write made here,
# where that write would land through the moved link)
_MOVED_LINKS = {
    "link_onto_vscode": ({"lnk": "editor"}, ("lnk", ".vscode"),
                         "editor/tasks.json", ".vscode/tasks.json"),
    "link_onto_claude": ({"lnk": "editor"}, ("lnk", ".claude"),
                         "editor/settings.json", ".claude/settings.json"),
    "folder_holding_a_link": ({"d/.vscode": "sub"}, ("d", "e"),
                              "e/sub/tasks.json", "e/.vscode/tasks.json"),
}


@pytest.mark.parametrize("mover", ["toolbox", "process"])
@pytest.mark.parametrize("shape", sorted(_MOVED_LINKS))
def test_a_link_another_toolbox_moved_protects_what_it_leads_to_here(tmp_path, make_root,
                                                                    mover, shape):
    """Another Toolbox on the same tree (in this process, or in another
    process) moves a link the fixture holds to a name that makes it lead a
    protected name into an ordinary folder; a write into that folder here
    must be refused as if this Toolbox had made the move itself."""
    links, (source, destination), written, landing = _MOVED_LINKS[shape]
    for name, text in links.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).parent.joinpath(text).mkdir(parents=True, exist_ok=True)
        os.symlink(text, tmp_path / name)
    (tmp_path / "editor").mkdir(exist_ok=True)
    box = Toolbox(make_root(str(tmp_path)))
    assert box.call("list_directory", {"path": "."})["ok"]  # this Toolbox has been used
    args = {"source": source, "destination": destination}
    if mover == "toolbox":
        moved = Toolbox(make_root(str(tmp_path))).call("move_file", args)
    else:
        moved = _other_process(make_root, tmp_path, "move_file", args, 10.0)
    answer = box.call("write_file", {"path": written, "content": '{"x": 1}\n'})
    assert not (tmp_path / landing).exists(), (moved, answer)
    assert not answer["ok"], (moved, answer)


# -- links the repository already has, beyond the look taken when the Toolbox opened ---------


def test_a_protected_link_deeper_than_the_look_at_open_protects_what_it_leads_to(tmp_path,
                                                                                 make_root):
    """A monorepo's package several levels down keeps its editor settings
    as a link to a shared folder; VS Code opening that package follows it."""
    package = tmp_path / "a" / "b" / "c" / "d" / "e" / "f" / "g"
    package.mkdir(parents=True)
    (tmp_path / "shared" / "vscode").mkdir(parents=True)
    os.symlink(os.path.relpath(tmp_path / "shared" / "vscode", package), package / ".vscode")
    box = Toolbox(make_root(str(tmp_path)))
    answer = box.call("write_file", {"path": "shared/vscode/tasks.json",
                                     "content": '{"tasks": []}\n'})
    assert not (package / ".vscode" / "tasks.json").exists(), answer
    assert answer["ok"] is False and answer["code"] == "DENIED", answer


def test_protected_links_in_a_tree_wider_than_the_look_at_open_protect_what_they_lead_to(
        tmp_path, make_root):
    """2,100 packages side by side (more directories than the look at open
    takes), each with its editor settings linked to a folder of its own."""
    count = 2100
    for index in range(count):
        package = tmp_path / f"p{index:04d}"
        package.mkdir()
        os.symlink(f"../shared/v{index:04d}", package / ".vscode")
        (tmp_path / "shared" / f"v{index:04d}").mkdir(parents=True)
    box = Toolbox(make_root(str(tmp_path)))
    landed = []
    for index in range(count):
        answer = box.call("write_file", {"path": f"shared/v{index:04d}/tasks.json",
                                         "content": "{}\n"})
        if answer["ok"] or (tmp_path / f"p{index:04d}" / ".vscode" / "tasks.json").exists():
            landed.append((index, answer))
    assert not landed, (len(landed), landed[:2])


def test_a_protected_link_inside_a_repository_of_a_tree_deeper_than_the_look_at_open(
        tmp_path, make_root):
    """A bare repository the look at open met (it does not go into one: its
    own directories are git's) in a tree deeper than that look, holding a
    ``.vscode`` link to a shared folder: the walk for the links the look
    did not meet goes into the repository too."""
    tmp_path.joinpath(*["deep"] * (MAX_DEPTH + 2)).mkdir(parents=True)
    repo = tmp_path / "remote.git"
    for sub in ("hooks", "objects/info", "refs/heads"):
        (repo / sub).mkdir(parents=True)
    (repo / "HEAD").write_text("ref: refs/heads/main\n")
    (repo / "config").write_text("[core]\n\tbare = true\n")
    (tmp_path / "shared" / "vscode").mkdir(parents=True)
    os.symlink("../../../shared/vscode", repo / "objects" / "info" / ".vscode")
    box = Toolbox(make_root(str(tmp_path)))
    answer = box.call("write_file", {"path": "shared/vscode/tasks.json",
                                     "content": '{"tasks": []}\n'})
    assert not (tmp_path / "shared" / "vscode" / "tasks.json").exists(), answer
    assert answer["ok"] is False and answer["code"] == "DENIED", answer
    assert box.call("write_file", {"path": "shared/notes.txt", "content": "x\n"})["ok"]


def test_a_protected_link_under_a_name_that_is_not_utf8_beyond_the_look_at_open(
        tmp_path, make_root):
    """Past the look at open, below a folder whose name is not UTF-8 (a
    native listing leaves such a name out), a ``.vscode`` link to a shared
    folder: the walk still learns it."""
    deep = os.path.join(os.fsencode(tmp_path), *[b"deep"] * (MAX_DEPTH + 1), b"caf\xe9")
    os.makedirs(deep)
    (tmp_path / "shared" / "vscode").mkdir(parents=True)
    os.symlink(os.path.relpath(os.fsencode(tmp_path / "shared" / "vscode"), deep),
               os.path.join(deep, b".vscode"))
    box = Toolbox(make_root(str(tmp_path)))
    answer = box.call("write_file", {"path": "shared/vscode/tasks.json",
                                     "content": '{"tasks": []}\n'})
    assert not (tmp_path / "shared" / "vscode" / "tasks.json").exists(), answer
    assert answer["ok"] is False and answer["code"] == "DENIED", answer


# -- a worktree's common git directory made after the Toolbox opened ------------------------


def test_a_common_git_directory_made_later_without_head_is_protected(tmp_path, make_root):
    """A work tree's ``.git`` file names a git directory (``HEAD`` beside
    ``commondir``) whose ``commondir`` names a directory holding ``objects/``
    and ``refs/`` but no ``HEAD``: git reads that one's ``config``,
    ``hooks/`` and ``info/`` for the work tree.  All of it made by the host
    after the Toolbox opened (a folder of the model's own holding ``objects``
    and ``refs`` stays writable: test_view_repositories)."""
    box = Toolbox(make_root(str(tmp_path)))
    for made in ("objects/info", "objects/pack", "refs/heads", "refs/tags"):  # as git makes them
        (tmp_path / "common" / made).mkdir(parents=True)
    (tmp_path / "gitstore").mkdir()
    (tmp_path / "gitstore" / "HEAD").write_text("ref: refs/heads/main\n")
    (tmp_path / "gitstore" / "commondir").write_text("../common\n")
    (tmp_path / "wt").mkdir()
    (tmp_path / "wt" / ".git").write_text("gitdir: ../gitstore\n")
    answers = [box.call("write_file", {"path": path, "content": "[core]\n\tfsmonitor = x\n"})
               for path in ("common/config", "common/hooks/post-checkout",
                            "common/info/attributes")]
    answers.append(box.call("make_directory", {"path": "common/hooks"}))
    assert all(answer["ok"] is False and answer["code"] == "DENIED" for answer in answers), \
        answers
    assert sorted(os.listdir(tmp_path / "common")) == ["objects", "refs"]
