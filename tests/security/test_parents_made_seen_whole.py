"""A call that makes parent directories (``write_file n/m/tasks.json``,
``make_directory n/m`` with ``n`` missing) makes them one ``mkdir`` at a
time; a look from the same process between two of them must not see the
chain half made: ``n`` empty (``list_directory``, the tree, glob of
folders), or ``n``'s link count of a folder holding nothing
(``file_info``), a state no one-at-a-time order of the calls gives (before:
no ``n``; after: ``n/m`` and what the call put there).

Found by the calls-sent-at-once battery (``file_info`` between two of the
``mkdir`` s, 2 runs in 6; it stopped comparing a directory's ``links``).
Now such a step holds the process's tree lock alone (made again so once
its resolution says parents are to be made), and every look made of
several reads holds it shared after the host was asked.

Deterministic: the writing Toolbox's :class:`FaultBackend` runs a hook just
before ``m`` is made (``n`` made already), which starts the look on another
thread through a second Toolbox and returns once the look has answered or
waits for the tree lock (seen in the thread's stack: a hang detector bounds
it).  Every config.
"""

from __future__ import annotations

import sys
import threading
from pathlib import Path
from typing import Any

import pytest

from corral.contained import Root, backend_by_name
from corral.testing.backends import Fault, FaultBackend
from corral.tools import Toolbox

HANG = 20.0  # seconds: a hang detector only

MAKERS = {
    "write": ("write_file", {"path": "n/m/tasks.json", "content": "w\n"}),
    "mkdir": ("make_directory", {"path": "n/m"}),
}
LOOKS = {
    "list": ("list_directory", {"path": "n"}),
    "tree": ("list_directory", {"path": ".", "depth": 3}),
    "info": ("file_info", {"path": "n"}),
    "glob": ("glob", {"pattern": "**/"}),
}


def _waits_for_the_tree(thread: threading.Thread) -> bool:
    frame = sys._current_frames().get(thread.ident or -1)
    while frame is not None:
        if frame.f_code.co_name == "take_shared":
            return True
        frame = frame.f_back
    return False


def _half_made(name: str, answer: dict[str, Any]) -> bool:
    """Whether ``answer`` describes ``n`` made and ``m`` not yet."""
    if not answer.get("ok"):
        return False  # n not there yet: the state before
    if name == "list":
        return answer["entries"] == []
    if name == "tree":
        folder = [e for e in answer["entries"] if e["name"] == "n"]
        return bool(folder) and folder[0].get("entries") == []
    if name == "info":
        return answer["links"] == 2
    return "n/" in answer["paths"] and "n/m/" not in answer["paths"]


@pytest.mark.parametrize("look", sorted(LOOKS))
@pytest.mark.parametrize("maker", sorted(MAKERS))
def test_parents_being_made_are_seen_whole_or_not_at_all(sec_tmp, make_root, maker, look):
    base = Path(sec_tmp)
    (base / "tf").write_text("tf\n")
    looked: dict[str, Any] = {}
    done = threading.Event()
    backend = FaultBackend(backend_by_name(make_root.backend_name))
    making = Root(sec_tmp, backend=backend, fast_path=make_root.fast_path)
    try:
        with Toolbox(making) as maker_box, Toolbox(make_root(sec_tmp)) as looker:
            def run_look() -> None:
                try:
                    looked.update(looker.call(*LOOKS[look]))
                finally:
                    done.set()

            thread = threading.Thread(target=run_look)

            def start_look() -> None:
                assert (base / "n").is_dir() and not (base / "n" / "m").exists()
                thread.start()
                for _ in range(int(HANG / 0.001)):
                    if done.is_set() or _waits_for_the_tree(thread):
                        return
                    done.wait(0.001)
                raise AssertionError("the look neither answered nor waited")

            hooks = [backend.add(Fault(method, None, name="m", hook=start_look))
                     for method in ("mkdir_at", "create_directory_at")]
            made = maker_box.call(*MAKERS[maker])
            thread.join(HANG)
            assert not thread.is_alive()
    finally:
        making.close()
    assert sum(hook.fired for hook in hooks) == 1, backend.fired
    assert made.get("ok") is True, made
    assert looked.get("ok") is True, looked
    assert not _half_made(look, looked), looked
