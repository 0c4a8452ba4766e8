"""A call the directories beyond those the view follows could decide, and
which cannot look at them within its wait, is refused ``not_ready``; its
sentence and hint say why the directories lie beyond, and what would help,
for each cause: the user's share of the kernel's watches used up (raising
``fs.inotify.max_user_watches`` helps), the tools' own bound on folders
watched reached (raising the limit does not), no watch to be had from
this backend at all, the system refusing one (its inotify limits may be
reached), or more folders beyond than the view keeps (retrying never
helps).  Nothing is written in any case, on every backend config.
"""

from __future__ import annotations

import errno
from collections.abc import Iterator
from pathlib import Path

import pytest

from corral.contained import Root
from corral.testing.backends import FaultBackend
from corral.tools import Toolbox
from corral.tools._runtime.view import freshness

from .helpers.link_calls import OURS, SETTINGS, walk_through


def _tree(base: Path) -> None:
    for folder in ("editor", "far/inner", "near/a", "near/b"):
        (base / folder).mkdir(parents=True, exist_ok=True)
        (base / folder / "code.py").write_text("x = 1\n")
    (base / "editor" / "settings.json").write_text(SETTINGS)


class _NoWatchOpened(FaultBackend):
    """A backend on which the kernel refuses a watch instance (the user's
    ``fs.inotify.max_user_instances`` used up: ``EMFILE``)."""

    def watch_open(self) -> int:
        raise OSError(errno.EMFILE, "too many inotify instances")


def _refused(tmp_path: Path, backend: FaultBackend, make_root, *,
             no_time: bool = True) -> Iterator[dict]:
    base = tmp_path / "root"
    base.mkdir()
    _tree(base)
    with Root(str(base), backend=backend, fast_path=make_root.fast_path) as root:
        box = Toolbox(root)
        walk_through()
        assert box.call("list_directory", {"path": "."})["ok"] is True
        assert box._view.freshness is not None and (
            box._view.freshness.beyond or box._view.freshness.beyond_full)
        if no_time:
            box._view.links_grace = -1.0  # no time at all to look beyond
        answer = box.call("write_file", {"path": "editor/tasks.json", "content": OURS})
        assert answer["ok"] is False and answer["details"]["kind"] == "not_ready", answer
        assert not (base / "editor" / "tasks.json").exists()
        yield answer
        box.close()


@pytest.fixture
def own_kernel_watch(monkeypatch) -> freshness._KernelWatch:
    own = freshness._KernelWatch()
    monkeypatch.setattr(freshness, "_KERNEL", own)
    return own


def _one(answers: Iterator[dict]) -> dict:
    answer = next(answers)
    for _ in answers:
        pass
    return answer


def test_the_users_share_of_the_kernels_watches_used_up_names_max_user_watches(
        tmp_path, make_root, own_kernel_watch, monkeypatch):
    backend = FaultBackend(make_root(str(tmp_path)).backend)
    if not backend.watches:
        pytest.fail("this suite runs where the kernel watches (Linux)")
    monkeypatch.setattr(backend, "watch_limit", lambda: 6)  # a share of 3
    answer = _one(_refused(tmp_path, backend, make_root))
    assert answer["details"].get("cause") == "watch_share", answer
    assert "more folders than this system lets a program watch" in answer["message"], answer
    assert "fs.inotify.max_user_watches" in answer["hint"], answer
    assert answer["hint"].startswith("Retry the same call"), answer


def test_the_tools_own_bound_on_folders_watched_does_not_name_the_kernels_limit(
        tmp_path, make_root, own_kernel_watch, monkeypatch):
    """The kernel would give more watches (its share is larger than the
    tools' own bound): raising ``max_user_watches`` changes nothing."""
    backend = FaultBackend(make_root(str(tmp_path)).backend)
    monkeypatch.setattr(backend, "watch_limit", lambda: 1 << 20)
    monkeypatch.setattr(freshness, "MAX_WATCHED", 3)
    answer = _one(_refused(tmp_path, backend, make_root))
    assert answer["details"].get("cause") == "watch_bound", answer
    assert "this system lets" not in answer["message"], answer
    assert "more folders than the tools watch" in answer["message"], answer
    assert "max_user_watches" not in answer["hint"] + answer["message"], answer
    assert answer["hint"].startswith("Retry the same call"), answer


def test_a_backend_that_cannot_watch_says_so_and_names_no_kernel_limit(
        tmp_path, make_root, own_kernel_watch, monkeypatch):
    """Nothing watches here (a platform without inotify): a few folders
    are looked at each call, and no limit of the system's is the cause."""
    backend = FaultBackend(make_root(str(tmp_path)).backend)
    monkeypatch.setattr(backend, "watches", False)
    monkeypatch.setattr(freshness, "MAX_STAMPED", 1)
    answer = _one(_refused(tmp_path, backend, make_root))
    assert answer["details"].get("cause") == "no_watch", answer
    assert "this system lets" not in answer["message"], answer
    assert "cannot watch folders on this system" in answer["message"], answer
    assert "inotify" not in answer["hint"] + answer["message"], answer
    assert answer["hint"].startswith("Retry the same call"), answer


def test_a_watch_the_system_refused_names_its_inotify_limits(
        tmp_path, make_root, own_kernel_watch, monkeypatch):
    """The backend can watch, but the kernel gave no watch instance (the
    user's inotify instances used up by other programs)."""
    backend = _NoWatchOpened(make_root(str(tmp_path)).backend)
    if not backend.watches:
        pytest.fail("this suite runs where the kernel watches (Linux)")
    monkeypatch.setattr(freshness, "MAX_STAMPED", 1)
    answer = _one(_refused(tmp_path, backend, make_root))
    assert answer["details"].get("cause") == "watch_refused", answer
    assert "this system lets" not in answer["message"], answer
    assert "the system gave the tools no watch of folders" in answer["message"], answer
    assert "fs.inotify.max_user_instances" in answer["hint"], answer
    assert answer["hint"].startswith("Retry the same call"), answer


def test_more_folders_beyond_than_are_kept_asks_for_a_smaller_folder_not_a_retry(
        tmp_path, make_root, watching, root_alone_followed, monkeypatch):
    """Past the folders whose times are kept no look in time can help: the
    answer says so at once (it looked at nothing), and never asks to retry."""
    monkeypatch.setattr(freshness, "MAX_BEYOND", 2)
    backend = FaultBackend(make_root(str(tmp_path)).backend)
    answer = _one(_refused(tmp_path, backend, make_root, no_time=False))
    assert answer["details"].get("cause") == "too_many", answer
    assert "more folders than the tools keep track of" in answer["message"], answer
    assert "took too long" not in answer["message"], answer
    assert "Retry" not in answer["hint"] and "max_user_watches" not in answer["hint"], answer
    assert "smaller folder" in answer["hint"], answer
