"""An independent red-team pass over the window a host's question opens:
what changes on the disk while the host decides (a person asked, a
program of the host's running meanwhile: ``git checkout``, a build, an
editor) must be taken in before the call acts (THREATS row 10: the target
swapped between authorization and action fails closed).

``apply_patch`` asks the host once per section, and after each answer
looked again only at that section's places: a patch adding
``y/tasks.json`` and ``z/new.txt`` wrote the first into ``.vscode`` when
``y`` was moved onto ``.vscode`` while the host decided on the second
(and a hook into ``y/hooks`` when ``y`` became a repository then), and
answered ``ok`` naming ``y/tasks.json``.  ``make_directory`` acted on the
directory it held wherever that had gone: ``y/q`` was made in ``.git``
when ``y`` was moved there during its question, and the answer said
``y/q`` was created.  On every backend config.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from corral.tools import Toolbox


def _tree(base: Path) -> None:
    for name in ("y", "z", ".git/objects", ".git/refs"):
        (base / name).mkdir(parents=True)
    (base / ".git" / "HEAD").write_text("ref: refs/heads/main\n")
    (base / "y" / "a.txt").write_text("plain\n")
    (base / "z" / "b.txt").write_text("plain\n")


def _on_question(number: int, act):
    """An ``authorize`` that allows, doing ``act`` while it decides on
    its ``number``-th question."""
    asked: list[str] = []

    def authorize(request) -> None:
        asked.append(request.path)
        if len(asked) == number:
            act()
    authorize.asked = asked
    return authorize


def _onto_vscode(base: Path):
    return lambda: os.rename(base / "y", base / ".vscode")


def _made_a_repository(base: Path):
    def act() -> None:
        for name in ("objects", "refs"):
            (base / "y" / name).mkdir()
        (base / "y" / "HEAD").write_text("ref: refs/heads/main\n")
    return act


def _everything(base: Path) -> dict[str, bytes | None]:
    out: dict[str, bytes | None] = {}
    for folder, dirs, files in os.walk(base):
        for name in dirs + files:
            path = Path(folder) / name
            rel = str(path.relative_to(base))
            out[rel] = path.read_bytes() if path.is_file() and not path.is_symlink() else None
    return out


_SECOND = "*** Add File: z/new.txt\n+second\n"
_FIRSTS = {
    "add": "*** Add File: y/tasks.json\n+{\"tasks\": \"MODEL\"}\n",
    "update": "*** Update File: y/a.txt\n@@\n-plain\n+MODEL\n",
    "add_with_folder": "*** Add File: y/sub/tasks.json\n+MODEL\n",
}


@pytest.mark.parametrize("first", sorted(_FIRSTS))
def test_patch_section_moved_onto_protected_name_while_host_decides_later_one(
        tmp_path, make_root, first):
    _tree(tmp_path)
    authorize = _on_question(2, _onto_vscode(tmp_path))
    box = Toolbox(make_root(str(tmp_path)), authorize=authorize)
    patch = "*** Begin Patch\n" + _FIRSTS[first] + _SECOND + "*** End Patch\n"
    before = {rel: data for rel, data in _everything(tmp_path).items()}
    answer = box.call("apply_patch", {"input": patch})
    assert len(authorize.asked) >= 2, authorize.asked
    after = _everything(tmp_path)
    model = {rel for rel, data in after.items() if data is not None and b"MODEL" in data}
    assert not model, (answer, model)
    assert answer["ok"] is False, answer
    assert answer["code"] == "STALE", answer
    # nothing done: the second section's file was not made either
    assert "z/new.txt" not in after, answer
    moved = {rel.replace(".vscode", "y", 1): data for rel, data in after.items()}
    assert moved == before, answer


def test_patch_section_in_a_repository_made_while_host_decides_later_one(tmp_path, make_root):
    _tree(tmp_path)
    authorize = _on_question(2, _made_a_repository(tmp_path))
    box = Toolbox(make_root(str(tmp_path)), authorize=authorize)
    patch = ("*** Begin Patch\n*** Add File: y/hooks/pre-receive\n+MODEL\n" + _SECOND
             + "*** End Patch\n")
    answer = box.call("apply_patch", {"input": patch})
    assert len(authorize.asked) == 2, authorize.asked
    assert not (tmp_path / "y" / "hooks").exists(), answer
    assert not (tmp_path / "z" / "new.txt").exists(), answer
    assert answer["ok"] is False, answer
    assert answer["code"] in ("DENIED", "STALE"), answer


def test_patch_answer_agrees_when_nothing_changes_meanwhile(tmp_path, make_root):
    """The check after the last question refuses only what changed: the
    same patch under a host that moves nothing is written whole."""
    _tree(tmp_path)
    authorize = _on_question(99, lambda: None)
    box = Toolbox(make_root(str(tmp_path)), authorize=authorize)
    patch = "*** Begin Patch\n" + _FIRSTS["add_with_folder"] + _FIRSTS["update"] + _SECOND + \
        "*** End Patch\n"
    answer = box.call("apply_patch", {"input": patch})
    assert answer["ok"] is True, answer
    assert (tmp_path / "y" / "sub" / "tasks.json").read_text() == "MODEL\n"
    assert (tmp_path / "y" / "a.txt").read_text() == "MODEL\n"
    assert (tmp_path / "z" / "new.txt").read_text() == "second\n"


@pytest.mark.parametrize("path", ["y/q", "y/q/r"])
def test_make_directory_parent_moved_into_git_directory_while_host_decides(
        tmp_path, make_root, path):
    _tree(tmp_path)
    authorize = _on_question(1, lambda: os.rename(tmp_path / "y", tmp_path / ".git" / "y"))
    box = Toolbox(make_root(str(tmp_path)), authorize=authorize)
    answer = box.call("make_directory", {"path": path})
    assert authorize.asked, answer
    assert not (tmp_path / ".git" / "y" / "q").exists(), answer
    if answer["ok"]:  # an answer that says it made the path made it there
        assert (tmp_path / path).is_dir(), answer
    else:
        assert answer["code"] == "STALE", answer


def test_make_directory_made_meanwhile_by_another_program_still_succeeds(tmp_path, make_root):
    """What the check after the question keeps: a directory another
    program made meanwhile is used, as ``mkdir -p`` does."""
    _tree(tmp_path)
    authorize = _on_question(1, lambda: (tmp_path / "y" / "q").mkdir())
    box = Toolbox(make_root(str(tmp_path)), authorize=authorize)
    answer = box.call("make_directory", {"path": "y/q/r"})
    assert answer["ok"] is True, answer
    assert (tmp_path / "y" / "q" / "r").is_dir()
    assert answer["createdDirectories"] == ["y/q/r"], answer
