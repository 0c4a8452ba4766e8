"""A walk (glob, grep, list_directory's tree) beside a move or a delete of
the same Toolbox's process answers one state of the tree, as some
one-at-a-time order of the calls would.

Found by the calls-sent-at-once battery once glob, grep and list_directory
were back in its pool: ``glob **`` over the root sent with ``move_file y x``
listed the root (``y`` there), then the move ran, then the walk could not
open ``y`` and answered ``"skipped": {"unreadableDirectories": 1}`` with
neither ``y/in`` nor ``x/in``, a state no order gives.  Now a walk holds the
process's tree lock shared (as a write does; a move and a delete hold it
alone), so the move waits for the walk.

Made deterministic: the searching Toolbox's :class:`FaultBackend` runs a
hook as the walk opens ``y``, which starts the move (or the delete) on
another thread through a second Toolbox and returns once that call has
finished or waits for the tree lock.  Every config; the move (or delete)
lands after, and its own answer is ok.
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import pytest

from corral.contained import Root, backend_by_name
from corral.testing.backends import Fault, FaultBackend
from corral.tools import Toolbox
from corral.tools._runtime.view import locks

HANG = 20.0  # seconds: a hang detector only

SEARCHES = {
    "glob": (("glob", {"pattern": "**"}), lambda a: a["paths"]),
    "grep": (("grep", {"pattern": "text", "outputMode": "files"}), lambda a: a["files"]),
    "tree": (("list_directory", {"path": ".", "depth": 3}),
             lambda a: sorted(f"{e['name']}/{i['name']}" for e in a["entries"]
                              for i in e.get("entries", []))),
}
OTHERS = {
    "move": (("move_file", {"source": "y", "destination": "x"}), {"x/in"}),
    "delete": (("delete_file", {"path": "y/in"}), set()),
}


def _waits_or_ends(done: threading.Event) -> None:
    """Until the other call ended, or waits for the tree lock (a hang detector bounds it)."""
    for _ in range(int(HANG / 0.001)):
        if done.is_set() or locks._TREE._waiting_writers:
            return
        done.wait(0.001)
    raise AssertionError("the other call neither ended nor waited")


@pytest.mark.parametrize("other", sorted(OTHERS))
@pytest.mark.parametrize("search", sorted(SEARCHES))
def test_a_walk_beside_a_move_answers_one_state(sec_tmp, make_root, search, other):
    base = Path(sec_tmp)
    (base / "y").mkdir()
    (base / "y" / "in").write_text("in text\n")
    (base / "tf").write_text("tf text\n")
    (call, args), shown = SEARCHES[search]
    (other_call, other_args), after = OTHERS[other]
    other_answer: dict[str, Any] = {}
    done = threading.Event()
    backend = FaultBackend(backend_by_name(make_root.backend_name))
    searching = Root(sec_tmp, backend=backend, fast_path=make_root.fast_path)
    try:
        with Toolbox(searching) as searcher, Toolbox(make_root(sec_tmp)) as mover:
            def run_other() -> None:
                try:
                    other_answer.update(mover.call(other_call, other_args))
                finally:
                    done.set()

            thread = threading.Thread(target=run_other)

            def start_other() -> None:
                thread.start()
                _waits_or_ends(done)

            hooks = [backend.add(Fault(method, None, name="y", hook=start_other))
                     for method in ("openat2", "open_at")]
            answer = searcher.call(call, args)
            thread.join(HANG)
            assert not thread.is_alive()
    finally:
        searching.close()
    assert sum(hook.fired for hook in hooks) == 1, backend.fired
    assert other_answer.get("ok") is True, other_answer
    assert answer.get("ok") is True, answer
    assert "skipped" not in answer or not answer["skipped"].get("unreadableDirectories"), answer
    # the state before the move or delete (the walk first), in full
    found = set(shown(answer)) - {"tf", "tf/"}
    assert found == {"y/in"} or (found == after), answer
