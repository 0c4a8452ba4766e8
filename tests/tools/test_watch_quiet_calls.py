"""A call after a call that changed nothing asks the kernel watch whether
events wait (``watch_waiting``) before it reads them: a read of an empty
queue raises, which costs several times the question.  Where events wait
(another program's change) it reads them as always, so nothing is missed;
a call after one that acted (whose own events are certain) reads at once.
Counted through the backend, on every backend that watches."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from corral.contained import Root, available_backends, backend_by_name
from corral.testing.backends import CountingBackend
from corral.tools import Toolbox
from corral.tools._read import cache as read_cache
from corral.tools._runtime.view import freshness

WATCHING = [name for name in available_backends() if backend_by_name(name).watches]


@pytest.fixture
def own_watch(monkeypatch) -> freshness._KernelWatch:
    """A process watch of this test's own (none open yet)."""
    watch = freshness._KernelWatch()
    monkeypatch.setattr(freshness, "_KERNEL", watch)
    return watch


def _tree(base: Path) -> None:
    (base / "sub").mkdir()
    (base / "sub" / "code.py").write_text("x = 1\n")
    (base / "editor").mkdir()


@pytest.mark.parametrize("name", WATCHING)
def test_a_quiet_call_after_a_read_asks_and_reads_nothing(tmp_path, own_watch, name,
                                                         monkeypatch):
    # the file was just written: both reads must see it as racy (read cache's
    # 2 s granule), else a loaded machine that lets 2 s pass between them
    # has the second trust the stamps and count a different path
    monkeypatch.setattr(read_cache, "RACY_NS", 10**18)
    _tree(tmp_path)
    backend = CountingBackend(backend_by_name(name))
    read = {"path": "sub/code.py"}
    with Toolbox(Root(str(tmp_path), backend=backend)) as box:
        with backend.counting() as first:
            assert box.call("read_file", read)["ok"] is True
        with backend.counting() as quiet:
            assert box.call("read_file", read)["ok"] is True
    # a view's first call reads (its count pinned as before); the next asks
    assert first["read"] == 1 and first["watch_waiting"] == 0, str(first)
    assert quiet["read"] == 0 and quiet["watch_waiting"] == 1, str(quiet)
    assert quiet.syscalls <= first.syscalls, (str(first), str(quiet))


@pytest.mark.parametrize("name", WATCHING)
def test_another_programs_link_after_a_quiet_call_is_read_and_ruled(tmp_path, own_watch,
                                                                    name):
    """The question says events wait: the call reads them, learns the link
    made since, and a write through it into a protected name is refused."""
    _tree(tmp_path)
    backend = CountingBackend(backend_by_name(name))
    with Toolbox(Root(str(tmp_path), backend=backend)) as box:
        assert box.call("list_directory", {"path": "."})["ok"] is True
        assert box.call("list_directory", {"path": "sub"})["ok"] is True  # quiet: asked
        os.symlink("../editor", tmp_path / "sub" / ".vscode")
        with backend.counting() as call:
            answer = box.call("write_file", {"path": "editor/settings.json",
                                             "content": "{}\n"})
    assert answer["ok"] is False and answer["code"] == "DENIED", answer
    assert not (tmp_path / "editor" / "settings.json").exists()
    assert call["watch_waiting"] == 1 and call["read"] >= 1, str(call)


@pytest.mark.parametrize("name", WATCHING)
def test_a_call_after_a_write_reads_at_once(tmp_path, own_watch, name):
    """A write's own events are certain: the call after it reads them
    without asking first, and the call after that (nothing acted) asks."""
    _tree(tmp_path)
    backend = CountingBackend(backend_by_name(name))
    write = {"path": "sub/code.py", "content": "x = 2\n", "overwrite": True}
    read = {"path": "sub/code.py"}
    with Toolbox(Root(str(tmp_path), backend=backend)) as box:
        assert box.call("read_file", read)["ok"] is True
        assert box.call("write_file", write)["ok"] is True
        with backend.counting() as after_write:
            assert box.call("read_file", read)["ok"] is True
        with backend.counting() as after_read:
            assert box.call("read_file", read)["ok"] is True
    assert after_write["watch_waiting"] == 0 and after_write["read"] == 1, str(after_write)
    assert after_read["watch_waiting"] == 1 and after_read["read"] == 0, str(after_read)
