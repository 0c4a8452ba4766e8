"""The kernel's watch of directories (inotify) as a capability of the
root's backend: every call on it goes through the backend (a counting
backend sees it, a fault backend can break it), a watch that cannot be
had or breaks leaves the view looking for itself (each followed
directory ``stat``-ed), and the process's instance is closed with its
last watch, so what closed views left queued never reaches later ones.
"""

from __future__ import annotations

import errno
import os
from pathlib import Path

import pytest

from corral.contained import Root, backend_by_name
from corral.testing.backends import CountingBackend, Fault, FaultBackend
from corral.tools import Toolbox
from corral.tools._read import cache as read_cache
from corral.tools._runtime.view import freshness

OURS = "OWNED\n"


@pytest.fixture
def own_watch(monkeypatch) -> freshness._KernelWatch:
    """A process watch of this test's own (none open yet)."""
    watch = freshness._KernelWatch()
    monkeypatch.setattr(freshness, "_KERNEL", watch)
    return watch


def _tree(base: Path) -> None:
    for folder in ("sub/deeper", "editor"):
        (base / folder).mkdir(parents=True)
        (base / folder / "code.py").write_text("x = 1\n")


def _denied(answer: dict) -> bool:
    return answer["ok"] is False and answer["code"] == "DENIED"


def _backends() -> list[str]:
    return [name for name in ("os", "native") if _has(name)]


def _has(name: str) -> bool:
    try:
        backend_by_name(name)
    except (ValueError, ImportError, OSError):
        return False
    return True


@pytest.mark.parametrize("name", _backends())
@pytest.mark.parametrize("fault", ["watch_open", "watch_add", "read"])
def test_a_watch_that_cannot_be_had_or_breaks_leaves_the_view_looking_for_itself(
        tmp_path, own_watch, name, fault):
    """No instance to be had, no directory watched, or the watch's read
    failing once calls run (a listing and a write read no file with
    ``read``): a link made later below the root is learnt all the same."""
    _tree(tmp_path)
    backend = FaultBackend(backend_by_name(name))
    if fault != "read":
        backend.add(Fault(fault, errno.ENOSPC, times=-1))
    box = Toolbox(Root(str(tmp_path), backend=backend))
    if fault == "read":
        backend.add(Fault("read", errno.EIO, times=-1))
    assert box.call("list_directory", {"path": "."})["ok"] is True
    os.symlink("../editor", tmp_path / "sub" / ".vscode")
    answer = box.call("write_file", {"path": "editor/settings.json", "content": OURS})
    assert _denied(answer), answer
    assert not os.path.lexists(tmp_path / "editor" / "settings.json")
    box.close()


@pytest.mark.parametrize("name", _backends())
def test_every_call_on_the_watch_goes_through_the_backend(tmp_path, own_watch, name):
    _tree(tmp_path)
    backend = CountingBackend(backend_by_name(name))
    with backend.counting() as opening:
        box = Toolbox(Root(str(tmp_path), backend=backend))
    with backend.counting() as call:
        assert box.call("read_file", {"path": "sub/deeper/code.py"})["ok"] is True
    with backend.counting() as closing:
        box.close()
    if not backend.watches:  # (a platform with no inotify: nothing to count)
        assert opening["watch_open"] == call["read"] == closing["watch_remove"] == 0
        return
    # the root, sub, sub/deeper and editor each watched
    assert opening["watch_open"] == 1 and opening["watch_add"] == 4, str(opening)
    assert call["read"] == 1, str(call)  # the watch's read: nothing waits
    # the last view closing closes the instance: the kernel drops every watch at once
    assert closing["watch_remove"] == 0 and closing["close"] == 1, str(closing)
    assert own_watch.fd == -1  # the instance closed with its last watch


@pytest.mark.parametrize("name", _backends())
def test_a_view_closing_beside_another_removes_its_own_watches(tmp_path, own_watch, name):
    """Another view still watches through the instance: the closing one's
    watches are removed one by one (the other's stay, its links learnt)."""
    first, second = tmp_path / "first", tmp_path / "second"
    for base in (first, second):
        base.mkdir()
        _tree(base)
    backend = CountingBackend(backend_by_name(name))
    staying = Toolbox(Root(str(second), backend=backend))
    closing_box = Toolbox(Root(str(first), backend=backend))
    with backend.counting() as closing:
        closing_box.close()
    if not backend.watches:
        assert closing["watch_remove"] == 0
        return
    assert closing["watch_remove"] == 4 and closing["close"] == 0, str(closing)
    assert own_watch.fd >= 0
    os.symlink("../editor", second / "sub" / ".vscode")
    answer = staying.call("write_file", {"path": "editor/settings.json", "content": OURS})
    assert _denied(answer), answer
    staying.close()
    assert own_watch.fd == -1


def test_what_closed_views_left_queued_never_reaches_a_later_one(tmp_path, own_watch):
    """Another program's churn in a closed Toolbox's tree fills the queue;
    a Toolbox opened later reads a queue of its own: one read a call, and
    no look at everything it follows (the full queue's answer)."""
    first, second = tmp_path / "first", tmp_path / "second"
    for base in (first, second):
        base.mkdir()
        _tree(base)
    backend = CountingBackend(backend_by_name(_backends()[0]))
    box = Toolbox(Root(str(first), backend=backend))
    assert box.call("list_directory", {"path": "."})["ok"] is True
    for i in range(2000):  # far more than one read of the queue holds
        (first / "sub" / f"n{i}").touch()
    box.close()
    later = Toolbox(Root(str(second), backend=backend))
    with backend.counting() as call:
        assert later.call("read_file", {"path": "sub/deeper/code.py"})["ok"] is True
    if backend.watches:
        assert call["read"] == 1 and call["scandir"] == 0, str(call)
    later.close()


@pytest.mark.parametrize("name", [name for name in _backends() if backend_by_name(name).watches])
@pytest.mark.parametrize("error", [errno.EMFILE, errno.ENFILE, errno.ENOMEM])
def test_a_watch_out_of_files_once_is_had_by_the_next_view(tmp_path, own_watch, name, error):
    """The process (or the user) out of files or memory when a view opens
    the watch is a moment, not the platform: the next view watches (a
    view left stat-ing follows 256 directories, not 4,096)."""
    first, second = tmp_path / "first", tmp_path / "second"
    for base in (first, second):
        base.mkdir()
        _tree(base)
    failing = FaultBackend(backend_by_name(name))
    failing.add(Fault("watch_open", error, times=1))
    with Toolbox(Root(str(first), backend=failing)) as box:
        assert box.call("list_directory", {"path": "."})["ok"] is True
        assert not box._view.freshness.watching
    with Toolbox(Root(str(second), backend=backend_by_name(name))) as box:
        assert box._view.freshness.watching
        os.symlink("../editor", second / "sub" / ".vscode")
        answer = box.call("write_file", {"path": "editor/settings.json", "content": OURS})
        assert _denied(answer), answer


@pytest.mark.parametrize("name", [name for name in _backends() if backend_by_name(name).watches])
def test_a_burst_of_another_programs_changes_costs_one_call(tmp_path, own_watch, name,
                                                          monkeypatch):
    """A build or a checkout queues thousands of events: the first call
    after it drops them in one bounded read and looks at everything once;
    the next call costs what a quiet one does (they were read 4 KB a call,
    each call looking at every directory followed)."""
    # the file's stamps trusted by the read cache from the first read: else
    # whether they are depends on how long the burst took (over a granule
    # under load, the later read confirms a remembered digest: one more fstat)
    monkeypatch.setattr(read_cache, "started",
                        lambda: read_cache.time.time_ns() + 10 * read_cache.RACY_NS)
    _tree(tmp_path)
    backend = CountingBackend(backend_by_name(name))
    box = Toolbox(Root(str(tmp_path), backend=backend))
    read = {"path": "sub/deeper/code.py"}
    assert box.call("read_file", read)["ok"] is True
    with backend.counting() as quiet:
        assert box.call("read_file", read)["ok"] is True
    for i in range(3000):
        made = tmp_path / "sub" / f".made{i}"
        made.write_text("x")
        os.rename(made, tmp_path / "sub" / "out.txt")
    with backend.counting() as first:
        assert box.call("read_file", read)["ok"] is True
    with backend.counting() as second:
        assert box.call("read_file", read)["ok"] is True
    assert first["read"] == 2, str(first)  # the call's read, then the bounded drop
    assert str(second) == str(quiet)  # each call by name and count
    box.close()
