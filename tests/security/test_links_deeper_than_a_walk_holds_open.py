"""A link at a protected name deeper than one walk holds directories open
(64 levels: each holds a descriptor), in a part of the tree the view does
not follow with the kernel's watch (beyond its budget, or where nothing
watches and only a few hundred directories are stat-ed a call): there at
open, made later in a directory that was there, or in one made later.

``d/d/.../d/.vscode -> <up>/editor`` makes ``editor/tasks.json`` the tasks
VS Code runs when it opens the deep folder; a call writing
``editor/tasks.json`` never passes the link.  The walks stopped at 64
levels, so such a link was learnt only when a call passed it: the write
went through.  The walks now go on below that depth from a new start
(each opened by the resolver), so every link whose path a program can
open (shorter than the kernel's ``PATH_MAX``: some 2,000 levels) is
known, and a directory's changes are looked at at any depth.

With the kernel's watch and without one, on every backend config, with
the view's budgets made tiny (the root alone followed) and at the real
ones.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from corral.tools import Toolbox

from ..helpers import remove_level_by_level
from .helpers.link_calls import OURS, SETTINGS, denied, walk_through

SECRET = "API_KEY=TOPSECRET\n"


@pytest.fixture(autouse=True)
def removed_afterwards(tmp_path) -> Iterator[None]:
    """The tree removed level by level once the test is done: pytest's
    own removal of old temporary directories recurses a frame a level, and
    a chain of 1,990 would stop every later session's clean-up there."""
    yield
    remove_level_by_level(tmp_path / "root")


def _chain(levels: int) -> str:
    return "/".join(["d"] * levels)


def _made(base: Path, levels: int) -> None:
    """``base`` and a chain of ``levels`` directories in it, one at a time
    (``mkdir(parents=True)`` recurses a frame a level)."""
    base.mkdir(exist_ok=True)
    path = str(base)
    for _ in range(levels):
        path += "/d"
        os.mkdir(path)


def _tree(base: Path, levels: int) -> None:
    _made(base, levels)
    (base / "editor").mkdir()
    (base / "editor" / "settings.json").write_text(SETTINGS)
    (base / "config").mkdir()
    (base / "config" / "env").write_text(SECRET)


def _opened(base: Path, make_root) -> Toolbox:
    box = Toolbox(make_root(str(base)))
    walk_through()
    assert box.call("list_directory", {"path": "."})["ok"] is True
    return box


def _link(base: Path, levels: int, name: str, leads: str) -> None:
    os.symlink("../" * levels + leads, base / _chain(levels) / name)


WHEN = ["at open", "made later", "in a directory made later"]


def _place(base: Path, make_root, levels: int, when: str, name: str,
           leads: str) -> Toolbox:
    """A Toolbox on ``base`` and the link ``name`` at the bottom of the
    chain of ``levels`` directories, leading to ``leads``, placed ``when``."""
    if when == "at open":
        _link(base, levels, name, leads)
        return _opened(base, make_root)
    if when == "made later":
        box = _opened(base, make_root)
        _link(base, levels, name, leads)
        return box
    assert when == "in a directory made later"
    box = _opened(base, make_root)
    (base / _chain(levels + 1)).mkdir()
    assert box.call("list_directory", {"path": "."})["ok"] is True
    _link(base, levels + 1, name, leads)
    return box


@pytest.mark.parametrize("when", WHEN)
@pytest.mark.parametrize("levels", [66, 140])
def test_a_protected_link_deeper_than_a_walk_holds_protects_where_it_leads(
        tmp_path, make_root, watching, root_alone_followed, levels, when):
    base = tmp_path / "root"
    _tree(base, levels)
    box = _place(base, make_root, levels, when, ".vscode", "editor")
    with box:
        write = box.call("write_file", {"path": "editor/tasks.json", "content": OURS})
        edit = box.call("edit_file", {"path": "editor/settings.json", "oldText": '"1"',
                                      "newText": '"2"'})
    assert denied(write), write
    assert denied(edit), edit
    assert not (base / "editor" / "tasks.json").exists()
    assert (base / "editor" / "settings.json").read_text() == SETTINGS


@pytest.mark.parametrize("when", WHEN)
def test_a_secret_link_deeper_than_a_walk_holds_hides_where_it_leads(
        tmp_path, make_root, watching, root_alone_followed, when):
    base = tmp_path / "root"
    _tree(base, 70)
    box = _place(base, make_root, 70, when, ".env", "config/env")
    with box:
        answer = box.call("read_file", {"path": "config/env"})
    assert denied(answer), answer
    assert "TOPSECRET" not in repr(answer)


def test_a_link_as_deep_as_a_path_can_name_protects_where_it_leads(
        tmp_path, make_root, watching, root_alone_followed):
    """1,990 levels (a path of about 4,000 bytes, near the kernel's
    ``PATH_MAX``): the link beside its target folder, there at open."""
    base = tmp_path / "root"
    chain = _chain(1990)
    _made(base, 1990)
    (base / chain / "editor").mkdir()
    (base / chain / "editor" / "settings.json").write_text(SETTINGS)
    os.symlink("editor", base / chain / ".vscode")
    with _opened(base, make_root) as box:
        answer = box.call("write_file", {"path": f"{chain}/editor/tasks.json",
                                         "content": OURS})
    assert denied(answer), answer
    assert not (base / chain / "editor" / "tasks.json").exists()


def test_a_link_made_below_the_stat_ed_directories_at_the_real_budgets(
        tmp_path, make_root, watching):
    """The real budgets: a chain of 400 directories (more than are stat-ed
    a call where nothing watches), a link made at its bottom after open."""
    base = tmp_path / "root"
    _tree(base, 400)
    with _opened(base, make_root) as box:
        _link(base, 400, ".vscode", "editor")
        answer = box.call("write_file", {"path": "editor/tasks.json", "content": OURS})
    assert denied(answer), answer
    assert not (base / "editor" / "tasks.json").exists()


def test_a_deep_link_below_a_name_that_is_not_utf8_protects_where_it_leads(
        tmp_path, make_root, watching, root_alone_followed):
    """A directory name that is not UTF-8 on the way (the walk then goes
    entry by entry, not by the core's Tree): 100 levels below it."""
    base = tmp_path / "root"
    _tree(base, 1)
    odd = os.fsencode(base / "d") + b"/\xff"
    os.mkdir(odd)
    path = odd
    for _ in range(100):
        path += b"/d"
        os.mkdir(path)
    os.symlink(b"../" * 102 + b"editor", path + b"/.vscode")
    with _opened(base, make_root) as box:
        answer = box.call("write_file", {"path": "editor/tasks.json", "content": OURS})
    assert denied(answer), answer
    assert not (base / "editor" / "tasks.json").exists()
