"""A tree deeper or wider than the look at open: the rest of its links are
learnt by a walk on a thread of its own, which on a huge tree (``corral
serve /``, a home directory) runs for minutes.  Calls must stay bounded
and never decide on part of the links.

A link the walk has not reached yet may lead to any place and be named
anything (``deep/.vscode -> ../editor`` protects ``editor/settings.json``;
``deep/.env -> ../config/env`` makes ``config/env`` secret), so:

* a call whose decision no such link can change answers at once, the walk
  held back: one the policy refuses already (links only add refusals), a
  listing under a policy with no deny rule, a read under one with no
  secret or deny rule;
* a call those links could change waits for the walk a short while, then
  refuses ``not_ready`` (retry shortly), nothing done; once the walk is
  through, the late link rules as had it been known at open.

The walk is held back by an event (no timing): a wait for it is seen by
hooking ``View.wait_for_links``.  On every backend config.
"""

from __future__ import annotations

import json
import os
import threading
import time

import pytest

from corral.cli import main
from corral.tools import CancelToken, Limits, Policy, Toolbox
from corral.tools._policy.gitdirs import MAX_DEPTH
from corral.tools._runtime.view import freshness
from corral.tools._runtime.view.decide import View

DEEP = "/".join(["d"] * (MAX_DEPTH + 1))  # below what the look at open lists
UP = "/".join([".."] * (MAX_DEPTH + 1))
ORIGINAL = "original\n"


@pytest.fixture
def held_walk(monkeypatch):
    """The background walk held until ``release`` is set; ``started`` is
    set once it is under way (and held).  The tree is made huge as the
    view sees it: the directories freshness follows at open (and learns
    the links of) are bounded at the root alone, so what lies deeper is
    the walk's to learn."""
    monkeypatch.setattr(freshness, "MAX_WATCHED", 1)
    monkeypatch.setattr(freshness, "MAX_STAMPED", 1)
    release, started = threading.Event(), threading.Event()
    walk = View._walk_tree_links

    def held(self):
        started.set()
        release.wait()
        walk(self)

    monkeypatch.setattr(View, "_walk_tree_links", held)
    yield release, started
    release.set()


def _tree(tmp_path):
    (tmp_path / DEEP).mkdir(parents=True)
    (tmp_path / "editor").mkdir()
    (tmp_path / "editor" / "settings.json").write_text(ORIGINAL)
    (tmp_path / "config").mkdir()
    (tmp_path / "config" / "env").write_text("API_KEY=1\n")
    (tmp_path / "notes.txt").write_text("notes\n")
    (tmp_path / ".env").write_text("TOKEN=2\n")
    (tmp_path / DEEP / ".vscode").symlink_to(f"{UP}/editor")
    (tmp_path / DEEP / ".env").symlink_to(f"{UP}/config/env")


def _open(make_root, tmp_path, started, **kwargs):
    box = Toolbox(make_root(str(tmp_path)), **kwargs)
    assert started.wait(60), "the walk beyond the look at open did not start"
    return box


def _grace(box, seconds):
    """How long ``box``'s calls wait for the walk (its limit, set after open)."""
    box._view.links_grace = seconds


def _no_wait(monkeypatch):
    """Fail any wait for the walk (a call that cannot be concerned must
    not wait)."""
    def refused(self, checkpoint=None):
        raise AssertionError("waited for the walk")
    monkeypatch.setattr(View, "wait_for_links", refused)


def test_calls_no_unknown_link_can_change_answer_at_once(tmp_path, make_root, held_walk,
                                                         monkeypatch):
    release, started = held_walk
    _tree(tmp_path)
    (tmp_path / "cfg").mkdir()
    (tmp_path / ".claude").symlink_to("cfg")  # the look at open meets it
    (tmp_path / "known").symlink_to("cfg")
    box = _open(make_root, tmp_path, started)
    _no_wait(monkeypatch)
    listed = box.call("list_directory", {"path": "."})
    assert listed["ok"], listed
    refused = box.call("write_file", {"path": ".vscode/settings.json", "content": "{}"})
    assert not refused["ok"] and refused["details"]["kind"] == "protected", refused
    secret = box.call("read_file", {"path": ".env"})
    assert not secret["ok"] and secret["details"]["kind"] == "secret", secret
    assert not (tmp_path / ".vscode").exists()
    # a protected link the look at open found refuses whatever the walk finds
    for written in ("cfg/settings.json", "known/settings.json"):
        through = box.call("write_file", {"path": written, "content": "{}"})
        assert not through["ok"] and through["details"]["kind"] == "protected", through
    assert not (tmp_path / "cfg" / "settings.json").exists()
    # a policy refusing only writes: no link can change a read
    only_writes = _open(make_root, tmp_path, started,
                        policy=Policy.build(defaults=False, protect=["**/.vscode"]))
    read = only_writes.call("read_file", {"path": "editor/settings.json"})
    assert read["ok"] and "original" in read["content"], read


CONCERNED = [
    ("write_file", {"path": "editor/settings.json", "content": "OWNED\n", "overwrite": True},
     "protected"),
    ("edit_file", {"path": "editor/settings.json", "oldText": "original", "newText": "OWNED"},
     "protected"),
    ("delete_file", {"path": "editor/settings.json"}, "protected"),
    ("move_file", {"source": "notes.txt", "destination": "editor/tasks.json"}, "protected"),
    ("read_file", {"path": "config/env"}, "secret"),
]


@pytest.mark.parametrize("tool,args,kind", CONCERNED, ids=[c[0] for c in CONCERNED])
def test_calls_an_unknown_link_could_change_refuse_then_the_late_link_rules(
        tmp_path, make_root, held_walk, monkeypatch, tool, args, kind):
    release, started = held_walk
    _tree(tmp_path)
    box = _open(make_root, tmp_path, started)
    _grace(box, 0.0)  # the wait ends at once
    early = box.call(tool, args)
    assert not early["ok"] and early["details"]["kind"] == "not_ready", early
    assert early["code"] == "TOO_LARGE" and "Retry" in early["hint"], early
    assert (tmp_path / "editor" / "settings.json").read_text() == ORIGINAL
    assert not (tmp_path / "editor" / "tasks.json").exists()
    assert (tmp_path / "notes.txt").exists()
    release.set()
    _grace(box, 3600.0)  # the walk is waited for now
    late = box.call(tool, args)
    assert not late["ok"] and late["details"]["kind"] == kind, late
    assert (tmp_path / "editor" / "settings.json").read_text() == ORIGINAL
    assert not (tmp_path / "editor" / "tasks.json").exists()


def test_searches_an_unknown_secret_link_could_change_refuse(tmp_path, make_root, held_walk,
                                                             monkeypatch):
    release, started = held_walk
    _tree(tmp_path)
    box = _open(make_root, tmp_path, started)
    _grace(box, 0.0)
    for tool, args in (("grep", {"pattern": "API_KEY", "path": "config"}),
                       ("glob", {"pattern": "**/env", "path": "config"})):
        early = box.call(tool, args)
        assert not early["ok"] and early["details"]["kind"] == "not_ready", (tool, early)
    release.set()
    _grace(box, 3600.0)
    found = box.call("grep", {"pattern": "API_KEY", "path": "config"})
    assert found["ok"] and not found["matches"] and found["denied"] == 1, found
    listed = box.call("glob", {"pattern": "**/env", "path": "config"})
    assert listed["ok"] and not listed["paths"] and listed["denied"] == 1, listed


def test_a_walk_ending_within_the_wait_decides_the_call(tmp_path, make_root, held_walk,
                                                       monkeypatch):
    """The call waits (the walk let go once it does): decided on every link."""
    release, started = held_walk
    _tree(tmp_path)
    box = _open(make_root, tmp_path, started)
    _grace(box, 3600.0)
    wait = View.wait_for_links

    def waiting(self, checkpoint=None):
        release.set()
        return wait(self, checkpoint)

    monkeypatch.setattr(View, "wait_for_links", waiting)
    out = box.call("write_file", {"path": "editor/settings.json", "content": "OWNED\n",
                                  "overwrite": True})
    assert not out["ok"] and out["details"]["kind"] == "protected", out
    assert (tmp_path / "editor" / "settings.json").read_text() == ORIGINAL


def _wait_seen(monkeypatch, release):
    """The wait each call asks for, recorded; the walk let go as it starts."""
    seen = []
    wait = View.wait_for_links

    def waiting(self, checkpoint=None):
        seen.append(self.links_grace)
        release.set()
        return wait(self, checkpoint)

    monkeypatch.setattr(View, "wait_for_links", waiting)
    return seen


# how soon a call waiting for the walk stops once cancelled: ten times what
# the wait sleeps between two looks at the call's checkpoint (at most 20 ms)
# and the refusal's making, against a wait of an hour otherwise
CANCEL_WITHIN = 0.5


@pytest.mark.parametrize("stop", ["cancel", "deadline"])
def test_a_call_waiting_for_the_walk_stops_soon_once_cancelled(tmp_path, make_root, held_walk,
                                                               monkeypatch, stop):
    """A call waiting for the walk polls its checkpoint: a cancel (or its
    deadline) stops it within a poll, nothing done, not after the wait."""
    release, started = held_walk
    _tree(tmp_path)
    box = _open(make_root, tmp_path, started)
    _grace(box, 3600.0)
    waiting = threading.Event()
    wait = View.wait_for_links

    def seen(self, checkpoint=None):
        waiting.set()
        return wait(self, checkpoint)

    monkeypatch.setattr(View, "wait_for_links", seen)
    token, answers = CancelToken(), []
    args = {"path": "editor/settings.json", "content": "OWNED\n", "overwrite": True}
    timeout = 3600.0 if stop == "cancel" else 1.0
    caller = threading.Thread(target=lambda: answers.append(
        box.call("write_file", args, cancel=token, timeout=timeout)))
    began = time.monotonic()
    caller.start()
    try:
        assert waiting.wait(60), "the call did not wait for the walk"
        if stop == "cancel":
            time.sleep(0.1)  # well into the wait
            stopped_at = time.monotonic()
            token.cancel()
        else:
            stopped_at = began + timeout  # (the call's deadline, a little later)
        caller.join(max(0.0, stopped_at - time.monotonic()) + CANCEL_WITHIN)
        stopped = not caller.is_alive()
        took = time.monotonic() - stopped_at
    finally:
        release.set()
        caller.join(60)
    assert stopped, f"still waiting {took:.2f} s after the {stop}"
    out = answers[0]
    kind = "cancelled" if stop == "cancel" else "time_limit"
    assert not out["ok"] and out["details"]["kind"] == kind, out
    assert (tmp_path / "editor" / "settings.json").read_text() == ORIGINAL


def test_a_toolbox_waits_as_long_as_its_limit_says(tmp_path, make_root, held_walk,
                                                   monkeypatch):
    release, started = held_walk
    _tree(tmp_path)
    box = _open(make_root, tmp_path, started, limits=Limits(links_wait_seconds=7.5))
    seen = _wait_seen(monkeypatch, release)
    out = box.call("delete_file", {"path": "editor/settings.json"})
    assert not out["ok"] and out["details"]["kind"] == "protected", out
    assert seen == [7.5]
    assert Limits().links_wait_seconds == 2.0  # a server's calls: refused soon, retried


def test_a_one_shot_cli_call_waits_its_whole_deadline(tmp_path, monkeypatch, capsys):
    """``corral call`` makes one call and exits: a large tree's walk is
    waited for its whole deadline (a later process would walk again), not
    answered not_ready after the server's grace."""
    import corral.tools

    opened = []

    class Recording(corral.tools.Toolbox):
        def __init__(self, *args, **kwargs):
            super().__init__(*args, **kwargs)
            opened.append(self._view.links_grace)

    monkeypatch.setattr(corral.tools, "Toolbox", Recording)
    _tree(tmp_path)
    code = main(["call", str(tmp_path), "delete_file", '{"path": "editor/settings.json"}'])
    out = json.loads(capsys.readouterr().out)
    assert code != 0 and out["details"]["kind"] == "protected", out
    assert opened == [Limits().call_seconds], opened
    assert (tmp_path / "editor" / "settings.json").read_text() == ORIGINAL


# -- the walk itself: from each parent's fd, every name, within its bounds -------------


def _walk_through() -> None:
    for thread in threading.enumerate():
        if thread.name == "corral-links":
            thread.join()


def test_a_link_below_a_name_that_is_not_utf8_is_learnt(tmp_path, make_root):
    """A Tree leaves out a name that is not UTF-8: the walk goes through it
    entry by entry (a host program opens it all the same)."""
    odd = os.path.join(os.fsencode(tmp_path), DEEP.encode(), b"\xff")
    os.makedirs(odd)
    os.symlink(b"../" * (MAX_DEPTH + 2) + b"editor", os.path.join(odd, b".vscode"))
    (tmp_path / "editor").mkdir()
    box = Toolbox(make_root(str(tmp_path)))
    _walk_through()
    out = box.call("write_file", {"path": "editor/settings.json", "content": "OWNED\n"})
    assert not out["ok"] and out["details"]["kind"] == "protected", out
    assert not (tmp_path / "editor" / "settings.json").exists()


def test_a_large_directory_made_after_open_is_walked_to_its_end(tmp_path, make_root):
    """A directory that appears in the root after open holding more folders
    than a call walks at once: the rest are walked on the thread, and a
    link in the last of them protects where it leads."""
    (tmp_path / "editor").mkdir()
    (tmp_path / "editor" / "settings.json").write_text(ORIGINAL)
    box = Toolbox(make_root(str(tmp_path)))
    made = tmp_path / "new.tmp"
    for index in range(300):
        (made / f"p{index:03}").mkdir(parents=True)
    (made / "p299" / ".vscode").symlink_to("../../editor")
    made.rename(tmp_path / "new")
    args = {"path": "editor/settings.json", "content": "OWNED\n", "overwrite": True}
    first = box.call("write_file", args)
    assert not first["ok"] and first["details"]["kind"] in ("protected", "not_ready"), first
    _walk_through()
    late = box.call("write_file", args)
    assert not late["ok"] and late["details"]["kind"] == "protected", late
    assert (tmp_path / "editor" / "settings.json").read_text() == ORIGINAL
