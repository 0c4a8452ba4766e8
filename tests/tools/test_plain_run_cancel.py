"""The plain run of a call with a cancel token (``corral serve`` passes one
with every call): it is taken, and it answers exactly as the general run
(the same call with a progress callback, which always takes the general
run), on every backend config:

* a live token: the same answer as without one, taken by the plain run;
* a token cancelled before the call: ``DENIED`` (kind ``cancelled``) for a
  change, nothing changed, as the general run answers;
* a token cancelled while a plain write or edit waits on the tree lock
  another call holds: the same ``cancelled`` answer as the general run's,
  nothing changed.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from corral.tools import CancelToken, Progress, Toolbox, Workspace
from corral.tools._runtime import toolbox as toolbox_module
from corral.tools._runtime.view import locks

from .test_read_file_plain_run import _CALLS, _tree

PLAIN = "".join(f"x{i} = 1\n" for i in range(150))


def _ignored(report: Progress) -> None:
    """A progress callback: the call takes the general run."""


@pytest.fixture
def general_runs(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The tools each call ran through the general run (``Toolbox._run``)."""
    ran: list[str] = []
    real = toolbox_module.Toolbox._run

    def spy(self: Toolbox, name: Any, args: Any, ctx: Any) -> Any:
        ran.append(name)
        return real(self, name, args, ctx)

    monkeypatch.setattr(toolbox_module.Toolbox, "_run", spy)
    return ran


@pytest.mark.parametrize("args", _CALLS, ids=lambda args: "-".join(map(str, args.values())))
def test_a_live_token_answers_as_without(make_toolbox: Callable[..., Toolbox], tmp_path: Path,
                                         args: dict[str, Any]) -> None:
    _tree(tmp_path)
    with make_toolbox(tmp_path) as toolbox:
        bare = toolbox.call("read_file", args)
        held = toolbox.call("read_file", args, cancel=CancelToken())
        general = toolbox.call("read_file", args, cancel=CancelToken(), progress=_ignored)
        assert bare == held == general, (bare, held, general)


def test_a_live_token_takes_the_plain_run(make_toolbox: Callable[..., Toolbox], tmp_path: Path,
                                          general_runs: list[str]) -> None:
    _tree(tmp_path)
    with make_toolbox(tmp_path) as toolbox:
        assert toolbox.call("read_file", {"path": "src/plain.py"}, cancel=CancelToken())["ok"]
        assert general_runs == []
        toolbox.call("read_file", {"path": "src/plain.py"}, progress=_ignored)
        assert general_runs == ["read_file"]  # progress is reported by the general run


def test_a_workspace_passes_to_the_plain_run(make_root: Callable[..., Any], tmp_path: Path,
                                             general_runs: list[str]) -> None:
    """One root, and several (the path naming its root): a token and all."""
    for name in ("web", "api"):
        (tmp_path / name).mkdir()
        _tree(tmp_path / name)
    web = Toolbox(make_root(tmp_path / "web"))
    api = Toolbox(make_root(tmp_path / "api"))
    try:
        one = Workspace({"web": web})
        answer = one.call("read_file", {"path": "src/plain.py"}, cancel=CancelToken())
        assert answer == web.call("read_file", {"path": "src/plain.py"}, progress=_ignored)
        both = Workspace({"web": web, "api": api})
        general_runs.clear()
        answer = both.call("read_file", {"path": "api/src/plain.py"}, cancel=CancelToken())
        assert answer["ok"] and answer["path"] == "api/src/plain.py", answer
        assert general_runs == []
        general = both.call("read_file", {"path": "api/src/plain.py"}, cancel=CancelToken(),
                            progress=_ignored)
        assert answer == general
    finally:
        web.close()
        api.close()


def _write(path: str = "src/main.py") -> dict[str, Any]:
    return {"path": path, "content": PLAIN.replace("1", "2"), "overwrite": True}


def _edit(path: str = "src/main.py") -> dict[str, Any]:
    return {"path": path, "oldText": "x0 = 1", "newText": "x0 = 2"}


_CHANGES = {"write_file": _write, "edit_file": _edit}


def _changed_tree(tmp_path: Path, toolbox: Toolbox, tool: str) -> Path:
    """``src/main.py``, after a first call of ``tool`` made and undone (what
    the plain step remembers filled)."""
    f = tmp_path / "src" / "main.py"
    f.parent.mkdir(parents=True, exist_ok=True)
    f.write_text(PLAIN)
    assert toolbox.call("write_file", {**_write(), "content": PLAIN})["ok"]
    if tool == "edit_file":
        assert toolbox.call("edit_file", {**_edit(), "oldText": "x1 = 1",
                                          "newText": "x1 = 1 "})["ok"]
        assert toolbox.call("edit_file", {**_edit(), "oldText": "x1 = 1 ",
                                          "newText": "x1 = 1"})["ok"]
    assert f.read_text() == PLAIN
    return f


@pytest.mark.parametrize("tool", sorted(_CHANGES))
def test_a_token_cancelled_before_changes_nothing(make_toolbox: Callable[..., Toolbox],
                                                  tmp_path: Path, tool: str) -> None:
    with make_toolbox(tmp_path) as toolbox:
        f = _changed_tree(tmp_path, toolbox, tool)
        token = CancelToken()
        token.cancel()
        answer = toolbox.call(tool, _CHANGES[tool](), cancel=token)
        assert not answer["ok"] and answer["code"] == "DENIED" and \
            answer["details"]["kind"] == "cancelled", answer
        assert answer == toolbox.call(tool, _CHANGES[tool](), cancel=token, progress=_ignored)
        assert f.read_text() == PLAIN
        assert toolbox.call(tool, _CHANGES[tool](), cancel=CancelToken())["ok"]  # the same, live
        assert f.read_text() == PLAIN.replace("1", "2") if tool == "write_file" else \
            PLAIN.replace("x0 = 1", "x0 = 2")


@pytest.mark.parametrize("args", _CALLS, ids=lambda args: "-".join(map(str, args.values())))
def test_a_read_cancelled_before_answers_as_the_general_run(
        make_toolbox: Callable[..., Toolbox], tmp_path: Path, args: dict[str, Any]) -> None:
    _tree(tmp_path)
    token = CancelToken()
    token.cancel()
    with make_toolbox(tmp_path) as toolbox:
        answer = toolbox.call("read_file", args, cancel=token)
        assert answer == toolbox.call("read_file", args, cancel=token, progress=_ignored)


class _Watched(CancelToken):
    """A token that says when a call first looks at it."""

    __slots__ = ("looked",)

    def __init__(self) -> None:
        super().__init__()
        self.looked = threading.Event()

    @property
    def cancelled(self) -> bool:
        self.looked.set()
        return self._set


@contextmanager
def _tree_held() -> Iterator[None]:
    """This process's tree lock held exclusively by another thread (as a
    move by another call holds it) until the block ends."""
    taken, done = threading.Event(), threading.Event()

    def hold() -> None:
        with locks._TREE.exclusive(lambda: None):
            taken.set()
            done.wait()

    holder = threading.Thread(target=hold)
    holder.start()
    taken.wait()
    try:
        yield
    finally:
        done.set()
        holder.join()


def _cancelled_while_waiting(toolbox: Toolbox, tool: str,
                             progress: Callable[[Progress], None] | None) -> dict[str, Any]:
    """``tool``'s answer when its token is cancelled while it waits on the
    tree lock another thread holds (held until the call has answered)."""
    token = _Watched()
    answers: list[dict[str, Any]] = []
    with _tree_held():
        caller = threading.Thread(target=lambda: answers.append(
            toolbox.call(tool, _CHANGES[tool](), cancel=token, progress=progress)))
        caller.start()
        token.looked.wait()
        token.cancel()
        caller.join()
    (answer,) = answers
    return answer


@pytest.mark.parametrize("tool", sorted(_CHANGES))
def test_a_token_cancelled_during_a_plain_change(make_toolbox: Callable[..., Toolbox],
                                                 tmp_path: Path, tool: str,
                                                 general_runs: list[str]) -> None:
    with make_toolbox(tmp_path) as toolbox:
        f = _changed_tree(tmp_path, toolbox, tool)
        general_runs.clear()
        plain = _cancelled_while_waiting(toolbox, tool, None)
        assert general_runs == []  # answered by the plain run
        assert not plain["ok"] and plain["code"] == "DENIED" and \
            plain["details"]["kind"] == "cancelled", plain
        assert f.read_text() == PLAIN
        general = _cancelled_while_waiting(toolbox, tool, _ignored)
        assert general_runs == [tool]
        assert plain == general
        assert f.read_text() == PLAIN
