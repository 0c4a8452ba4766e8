"""An independent red-team pass over a Workspace's looks into its other
roots, made for the model's sake after (or instead of) the call it asked
for: a path naming no root (``src/a.py``: the root holding it is offered),
a root's folder left out (``list_directory`` with no path: the first root
offered), and a path missing in the root it names while another root has it
(``web/src/a.py``: ``api/src/a.py`` offered).  Each look asks each other
root whether it may show the path, and each suggested call is tried before
it is offered.

Those looks ignored the caller's deadline and cancel token (DESIGN rule 2:
every call is bounded): a call cancelled by the host (``notifications/
cancelled``, a framework cancelling its task), or past its deadline, went on
to read the other root's file; the suggested call ran with a fresh default
deadline (30 s); and where another root's links were not all known yet (the
walk of a large tree), the look waited out that root's whole wait and then
raised its ``not_ready`` refusal out of ``Workspace.call`` (into the
framework; ``corral serve`` logged a traceback).  Now each look runs within
what is left of the call's deadline and stops at its cancel, and a root that
cannot answer within it is taken as not showing the path (nothing is said of
a path no root may be asked about).  On every backend config.
"""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest

from corral.contained import Root, backend_by_name
from corral.testing.backends import Fault, FaultBackend
from corral.tools import CancelToken, Toolbox, Workspace
from corral.tools._policy.gitdirs import MAX_DEPTH
from corral.tools._runtime.view import freshness
from corral.tools._runtime.view.decide import View

HANG = 5.0  # a call bounded by a 0.2 s deadline answers well within this (load 10+)
DEEP = "/".join(["d"] * (MAX_DEPTH + 1))  # below what the look at open lists


def _tree(base: Path) -> None:
    (base / "web" / "src").mkdir(parents=True)
    (base / "api" / "src").mkdir(parents=True)
    (base / "api" / DEEP).mkdir(parents=True)
    (base / "api" / "src" / "a.py").write_text("print('api')\n")


class _Api:
    """The ``api`` root on a backend that reports each open of ``a.py``
    (whether the call was cancelled or past its deadline then) and runs
    ``hook`` at each ``lstat`` of it (where the look into the roots begins)."""

    def __init__(self, make_root, base: Path, hook=None) -> None:
        self.backend = FaultBackend(backend_by_name(make_root.backend_name))
        self.opened_after_stop: list[str] = []
        self.stopped = False
        root = Root(str(base / "api"), backend=self.backend, fast_path=make_root.fast_path)
        self.box = Toolbox(root, deny=["secrets/**"])
        self.backend.add(Fault("open_at", None, name="a.py", times=-1, hook=self._opened))
        if hook is not None:
            self.backend.add(Fault("lstat_at", None, name="a.py", times=-1, hook=hook))

    def _opened(self) -> None:
        if self.stopped:
            self.opened_after_stop.append("a.py")


def _workspace(make_root, base: Path, api: _Api) -> Workspace:
    web = Toolbox(make_root(str(base / "web")), deny=["secrets/**"])
    return Workspace({"web": web, "api": api.box})


def _assert_no_offer(answer: dict) -> None:
    assert answer["ok"] is False, answer
    assert "suggestedTool" not in answer, answer


@pytest.mark.parametrize("path", ["web/src/a.py", "src/a.py"])
def test_a_cancel_landing_in_the_look_into_other_roots_stops_it(tmp_path, make_root, path):
    _tree(tmp_path)
    token = CancelToken()

    def cancel() -> None:
        token.cancel()
        api.stopped = True

    api = _Api(make_root, tmp_path, cancel)
    ws = _workspace(make_root, tmp_path, api)
    answer = ws.call("read_file", {"path": path}, cancel=token)
    _assert_no_offer(answer)
    assert api.opened_after_stop == [], answer


@pytest.mark.parametrize("path", ["web/src/a.py", "src/a.py"])
def test_a_call_cancelled_before_it_begins_looks_into_no_root(tmp_path, make_root, path):
    _tree(tmp_path)
    api = _Api(make_root, tmp_path)
    ws = _workspace(make_root, tmp_path, api)
    token = CancelToken()
    token.cancel()
    api.stopped = True
    answer = ws.call("read_file", {"path": path}, cancel=token)
    _assert_no_offer(answer)
    assert api.opened_after_stop == [], answer


@pytest.mark.parametrize("path", ["web/src/a.py", "src/a.py"])
def test_a_deadline_passing_in_the_look_into_other_roots_stops_it(tmp_path, make_root, path):
    _tree(tmp_path)

    def past_deadline() -> None:
        time.sleep(0.3)  # past the call's 0.1 s
        api.stopped = True

    api = _Api(make_root, tmp_path, past_deadline)
    ws = _workspace(make_root, tmp_path, api)
    answer = ws.call("read_file", {"path": path}, timeout=0.1)
    _assert_no_offer(answer)
    assert api.opened_after_stop == [], answer


@pytest.fixture
def held_walk(monkeypatch):
    """Every root's walk for the links beyond the look at open held until
    the test ends (a huge tree's walk runs for minutes)."""
    monkeypatch.setattr(freshness, "MAX_WATCHED", 1)
    monkeypatch.setattr(freshness, "MAX_STAMPED", 1)
    release, started = threading.Event(), threading.Event()
    walk = View._walk_tree_links

    def held(self):
        started.set()
        release.wait()
        walk(self)

    monkeypatch.setattr(View, "_walk_tree_links", held)
    yield started
    release.set()


CALLS = [
    ("read_file", {"path": "src/a.py"}),  # names no root: the roots are asked about src/a.py
    ("list_directory", {}),  # a root's folder left out: the first root's listing tried
]


@pytest.mark.parametrize("cancelled", [False, True], ids=["deadline", "cancelled"])
@pytest.mark.parametrize(("tool", "args"), CALLS, ids=[tool for tool, _ in CALLS])
def test_a_root_whose_links_are_not_known_yet_is_not_waited_for_past_the_call(
        tmp_path, make_root, held_walk, tool, args, cancelled):
    _tree(tmp_path)
    api = _Api(make_root, tmp_path)
    assert held_walk.wait(60), "the walk beyond the look at open did not start"
    ws = _workspace(make_root, tmp_path, api)
    for box in (api.box, ws.toolbox("web")):
        box._view.links_grace = 4 * HANG  # a root's own wait for its walk, longer than the call's
    token = CancelToken()
    if cancelled:
        token.cancel()
    began = time.monotonic()
    try:
        answer = ws.call(tool, args, timeout=0.2, cancel=token)
    except Exception as exc:  # noqa: BLE001 - what a framework running the tool would meet
        pytest.fail(f"{tool} raised {exc!r} after {time.monotonic() - began:.1f} s")
    took = time.monotonic() - began
    assert took < HANG, (took, answer)
    _assert_no_offer(answer)
    assert "didYouMean" not in answer["details"], answer
