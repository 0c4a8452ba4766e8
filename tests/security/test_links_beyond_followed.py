"""Links another program makes while a Toolbox is open, in a directory the
view does not follow with the kernel's watch (a tree of more directories
than it watches: a monorepo, a home directory; or where nothing watches
and only a few are stat-ed per call), then a hostile model's call aimed
straight where the link leads.

``far/.vscode -> ../editor`` made after open makes ``editor/tasks.json``
the tasks VS Code runs when it opens ``far``; a call writing
``editor/tasks.json`` never passes the link, so the view cannot learn it
on the way.  Each call is refused as it would be had the link been there
at open (``DENIED``): never written.

The view's budgets are made tiny here (one directory, the root), so
every other directory of the fixture lies beyond them; the tests at the
end keep the real budgets.  With the kernel's watch and without one, on
every backend config.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from corral.contained import Root
from corral.testing.backends import FaultBackend
from corral.tools import Toolbox
from corral.tools._policy.gitdirs import MAX_DEPTH
from corral.tools._runtime.view import freshness

from .helpers.link_calls import OURS, SETTINGS, acts_on_existing, call_op, denied, walk_through

DEEP = "/".join(["d"] * (MAX_DEPTH + 1))  # below what the look at open lists
UP = "/".join([".."] * (MAX_DEPTH + 1))
SECRET = "API_KEY=TOPSECRET\n"


def _tree(base: Path) -> None:
    for folder in ("editor", "config", "far/inner", DEEP):
        (base / folder).mkdir(parents=True, exist_ok=True)
        (base / folder / "code.py").write_text("x = 1\n")
    (base / "editor" / "settings.json").write_text(SETTINGS)
    (base / "config" / "env").write_text(SECRET)
    (base / "staged.txt").write_text(OURS)


def _opened(base: Path, make_root) -> Toolbox:
    box = Toolbox(make_root(str(base)))
    walk_through()
    # a call before the link: the view's picture is the tree at open
    assert box.call("list_directory", {"path": "."})["ok"] is True
    return box


def _make_link(base: Path, outside: Path, where: str, box: Toolbox, name: str,
               leads: str) -> None:
    """Another program makes the link ``name`` leading to the root's
    ``leads`` directory, in the way ``where`` says."""
    if where == "listed":  # in a directory the look at open listed
        os.symlink(f"../{leads}", base / "far" / name)
    elif where == "deep":  # below what the look lists: walked on its thread
        os.symlink(f"{UP}/{leads}", base / DEEP / name)
    elif where == "moved-in":  # a directory holding it moved in from outside
        (outside / "incoming").mkdir()
        os.symlink(f"../../{leads}", outside / "incoming" / name)
        os.rename(outside / "incoming", base / "far" / "incoming")
    else:  # in a directory made after open, a call later
        assert where == "made-later"
        (base / "far" / "inner" / "new").mkdir()
        assert box.call("list_directory", {"path": "."})["ok"] is True
        os.symlink(f"../../../{leads}", base / "far" / "inner" / "new" / name)


WHERE = ["listed", "deep", "moved-in", "made-later"]


@pytest.mark.parametrize("op", ["write", "overwrite", "edit", "delete"])
@pytest.mark.parametrize("where", WHERE)
def test_a_protected_link_made_beyond_the_followed_directories_protects_where_it_leads(
        tmp_path, make_root, watching, root_alone_followed, where, op):
    base, outside = tmp_path / "root", tmp_path / "outside"
    base.mkdir()
    outside.mkdir()
    _tree(base)
    box = _opened(base, make_root)
    _make_link(base, outside, where, box, ".vscode", "editor")
    target = "editor/settings.json" if acts_on_existing(op) else "editor/tasks.json"
    answer = call_op(box, op, target)
    assert denied(answer), answer
    assert (base / "editor" / "settings.json").read_text() == SETTINGS
    assert not (base / "editor" / "tasks.json").exists()


@pytest.mark.parametrize("where", WHERE)
def test_a_secret_link_made_beyond_the_followed_directories_hides_where_it_leads(
        tmp_path, make_root, watching, root_alone_followed, where):
    base, outside = tmp_path / "root", tmp_path / "outside"
    base.mkdir()
    outside.mkdir()
    _tree(base)
    box = _opened(base, make_root)
    _make_link(base, outside, where, box, ".env", "config/env")
    answer = box.call("read_file", {"path": "config/env"})
    assert denied(answer), answer
    assert "TOPSECRET" not in repr(answer)


# -- the real budgets ----------------------------------------------------------------


def test_a_link_made_in_the_last_of_thousands_of_directories_protects_where_it_leads(
        tmp_path, make_root, watching):
    """More directories than a fixed few thousand: the one listed last (at
    the deepest level, after 4,200 above it) is watched, or looked at
    before a write decides."""
    base = tmp_path / "root"
    for index in range(4200):
        (base / "wide" / f"d{index:04}").mkdir(parents=True)
    (base / "tail" / "y" / "z").mkdir(parents=True)
    (base / "editor").mkdir()
    (base / "editor" / "settings.json").write_text(SETTINGS)
    box = _opened(base, make_root)
    os.symlink("../../../editor", base / "tail" / "y" / "z" / ".vscode")
    answer = box.call("write_file", {"path": "editor/tasks.json", "content": OURS})
    assert denied(answer), answer
    assert not (base / "editor" / "tasks.json").exists()


def test_a_link_made_in_a_large_directory_moved_in_after_open_protects_where_it_leads(
        tmp_path, make_root, watching):
    """A directory moved in after open holding more folders than a call
    walks at once: the rest are walked on the view's thread, and a link
    made later in the last of them still protects where it leads."""
    base, outside = tmp_path / "root", tmp_path / "outside"
    (base / "editor").mkdir(parents=True)
    (base / "editor" / "settings.json").write_text(SETTINGS)
    for index in range(300):  # (each q at the second level: walked after every p)
        (outside / "new" / f"p{index:03}" / "q").mkdir(parents=True)
    box = _opened(base, make_root)
    os.rename(outside / "new", base / "new")
    box.call("list_directory", {"path": "."})  # the view meets it
    walk_through()
    assert box.call("list_directory", {"path": "."})["ok"] is True
    os.symlink("../../../editor", base / "new" / "p150" / "q" / ".vscode")
    answer = box.call("write_file", {"path": "editor/tasks.json", "content": OURS})
    assert denied(answer), answer
    assert not (base / "editor" / "tasks.json").exists()


# -- when the directories beyond cannot be looked at ----------------------------------


def test_a_call_that_cannot_look_beyond_in_time_is_refused_not_ready(
        tmp_path, make_root, watching, root_alone_followed):
    """The look at the directories beyond takes longer than the call may
    wait (a tree too large for the kernel's watch): refused ``not_ready``,
    nothing written; in time, the link made there rules."""
    base, outside = tmp_path / "root", tmp_path / "outside"
    base.mkdir()
    outside.mkdir()
    _tree(base)
    box = _opened(base, make_root)
    _make_link(base, outside, "listed", box, ".vscode", "editor")
    box._view.links_grace = -1.0  # no time at all to look
    args = {"path": "editor/tasks.json", "content": OURS}
    early = box.call("write_file", args)
    assert early["ok"] is False and early["details"]["kind"] == "not_ready", early
    # the tools' own bound (one folder here) where the kernel watches, none to
    # be had where not: raising the kernel's watch limit would change nothing
    cause = "watch_bound" if watching == "watch" else "no_watch"
    assert early["details"]["cause"] == cause, early
    assert "max_user_watches" not in early["hint"], early
    assert not (base / "editor" / "tasks.json").exists()
    # a listing (no deny rule) needs no look: no link can change it
    assert box.call("list_directory", {"path": "editor"})["ok"] is True
    box._view.links_grace = 3600.0
    late = box.call("write_file", args)
    assert denied(late), late
    assert not (base / "editor" / "tasks.json").exists()


def test_more_directories_beyond_than_are_kept_refuse_what_links_could_decide(
        tmp_path, make_root, watching, root_alone_followed, monkeypatch):
    """Past the directories whose times are kept, a link made in the rest
    could never be told: a write is refused, a listing no rule refuses is not."""
    monkeypatch.setattr(freshness, "MAX_BEYOND", 2)
    base = tmp_path / "root"
    base.mkdir()
    _tree(base)
    box = _opened(base, make_root)
    out = box.call("write_file", {"path": "editor/tasks.json", "content": OURS})
    assert out["ok"] is False and out["details"]["kind"] == "not_ready", out
    assert not (base / "editor" / "tasks.json").exists()
    assert box.call("list_directory", {"path": "editor"})["ok"] is True


class _Limited:
    """A backend whose kernel lets the user watch ``limit`` directories."""

    def __init__(self, inner, limit: int) -> None:
        self._inner, self._limit = inner, limit

    def __getattr__(self, name):
        return getattr(self._inner, name)

    def watch_limit(self) -> int:
        return self._limit


def test_the_view_watches_its_share_of_the_kernels_limit(tmp_path, make_root, monkeypatch):
    """The directories watched are half of what the kernel lets the user
    watch (the rest is the user's other programs'); a link made later in
    one beyond them still protects where it leads."""
    own = freshness._KernelWatch()
    monkeypatch.setattr(freshness, "_KERNEL", own)
    base = tmp_path / "root"
    base.mkdir()
    _tree(base)
    backend = FaultBackend(make_root(str(base)).backend)
    monkeypatch.setattr(backend, "watch_limit", lambda: 6)
    with Root(str(base), backend=backend, fast_path=make_root.fast_path) as root:
        box = Toolbox(root)
        walk_through()
        fresh = box._view.freshness
        if backend.watches:  # (a platform without inotify stat-s its few instead)
            assert own.budget == 3
            assert len([wd for wd in fresh._watched.values() if wd >= 0]) == 3
        assert fresh.beyond  # the rest: their times kept
        os.symlink("../editor", base / "far" / ".vscode")
        os.symlink("../../editor", base / "far" / "inner" / ".vscode")
        answer = box.call("write_file", {"path": "editor/tasks.json", "content": OURS})
        assert denied(answer), answer
        assert not (base / "editor" / "tasks.json").exists()
        box.close()
