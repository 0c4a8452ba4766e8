"""An independent red-team pass (round twenty-seven, first team): a read
sent with a move that replaces a file, or a patch that moves one, read in
the instant between the move's two renames.

``move_file a -> b`` with ``overwrite`` swaps the two names
(``RENAME_EXCHANGE``, THREATS row 72), looks at what came back and removes
it; between the swap and the removal ``a`` names ``b``'s old file.  An
``apply_patch`` section ``Update File: c.txt`` / ``Move to: d.txt``
renames the file, then writes its new text at the new name; between the
two, ``d.txt`` holds the old text.  A ``read_file`` or ``read_files`` sent
in the same turn (``asyncio.gather``, or threads) held no lock, so it read
those states, which no one-at-a-time order of the calls shows: ``a``
holding ``b``'s text, ``d.txt`` holding ``c.txt``'s unpatched text.

The reader runs on its own thread just after the call's first rename (a
backend hook); the hook lets the call go on once the reader answered or
waits on a lock.  Its answer must be what some order gives: ``a``'s own
text or ``NOT_FOUND``; ``d.txt``'s new text or ``NOT_FOUND``.
Every backend config; ``read_file`` (its plain run and the run that asks
the host) and ``read_files``.
"""

from __future__ import annotations

import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from corral.contained import Root, backend_by_name
from corral.tools import Toolbox

PATCH = ("*** Begin Patch\n*** Update File: c.txt\n*** Move to: d.txt\n@@\n-gamma\n+GAMMA\n"
         "*** End Patch\n")


class _AfterFirstRename:
    """A backend that runs ``then`` once, just after its first rename."""

    def __init__(self, inner: Any) -> None:
        self._inner = inner
        self.then: Any = None

    def __getattr__(self, name: str) -> Any:
        value = getattr(self._inner, name)
        if name != "rename_at":
            return value

        def renamed(*args: Any, **kwargs: Any) -> Any:
            done = value(*args, **kwargs)
            then, self.then = self.then, None
            if then is not None:
                then()
            return done
        return renamed


def _waiting(thread: threading.Thread) -> bool:
    """Whether ``thread`` waits in a lock or a condition of ``threading``."""
    frame = sys._current_frames().get(thread.ident or -1)
    while frame is not None:
        if frame.f_code.co_filename == threading.__file__ and frame.f_code.co_name == "wait":
            return True
        frame = frame.f_back
    return False


def _read_beside(box: Toolbox, read: tuple[str, dict[str, Any]], tool: str,
                 args: dict[str, Any], backend: _AfterFirstRename) -> tuple[dict, dict]:
    said: dict[str, Any] = {}

    def reader() -> None:
        said.update(box.call(*read, timeout=10))

    thread = threading.Thread(target=reader)

    def beside() -> None:
        thread.start()
        give_up = time.monotonic() + 10  # a hang detector, never the outcome
        while thread.is_alive() and not _waiting(thread) and time.monotonic() < give_up:
            time.sleep(0.001)

    backend.then = beside
    answer = box.call(tool, args, timeout=10)
    thread.join(10)
    assert not thread.is_alive()
    return answer, said


def _box(base: Path, make_root: Any, asks: bool) -> tuple[Toolbox, _AfterFirstRename]:
    """A Toolbox whose Root's backend runs the hook (``asks``: a host that
    allows everything is asked, so read_file takes its general run)."""
    backend = _AfterFirstRename(backend_by_name(make_root.backend_name))
    root = Root(str(base), backend=backend, fast_path=make_root.fast_path)
    kwargs: dict[str, Any] = {"authorize": lambda request: None} if asks else {}
    return Toolbox(root, **kwargs), backend


def _text(said: dict[str, Any]) -> str | None:
    """The file's text a read answered (``None``: not found)."""
    if "files" in said:
        said = said["files"][0]
    if not said.get("ok"):
        assert said.get("code") == "NOT_FOUND", said
        return None
    return "".join(line.split("\t", 1)[1] + "\n" for line in said["content"].splitlines())


READS = [("read_file", False), ("read_file", True), ("read_files", False)]


@pytest.mark.parametrize("read, asks", READS)
def test_a_read_beside_a_move_onto_a_file_never_reads_the_replaced_file(
        tmp_path, make_root, read, asks):
    base = tmp_path / "w"
    base.mkdir()
    (base / "a").write_text("a text\n")
    (base / "b").write_text("b old text\n")
    box, backend = _box(base, make_root, asks)
    args = {"paths": ["a"]} if read == "read_files" else {"path": "a"}
    try:
        moved, said = _read_beside(box, (read, args), "move_file",
                                   {"source": "a", "destination": "b", "overwrite": True},
                                   backend)
    finally:
        box.close()
        box.root.close()
    assert moved["ok"], moved
    assert (base / "b").read_text() == "a text\n" and not (base / "a").exists()
    assert _text(said) in ("a text\n", None), said


@pytest.mark.parametrize("read, asks", READS)
def test_a_read_beside_a_patch_that_moves_a_file_never_reads_it_half_moved(
        tmp_path, make_root, read, asks):
    base = tmp_path / "w"
    base.mkdir()
    (base / "c.txt").write_text("gamma\n")
    box, backend = _box(base, make_root, asks)
    args = {"paths": ["d.txt"]} if read == "read_files" else {"path": "d.txt"}
    try:
        patched, said = _read_beside(box, (read, args), "apply_patch", {"input": PATCH},
                                     backend)
    finally:
        box.close()
        box.root.close()
    assert patched["ok"], patched
    assert (base / "d.txt").read_text() == "GAMMA\n" and not (base / "c.txt").exists()
    assert _text(said) in ("GAMMA\n", None), said


def test_a_read_beside_a_move_waiting_on_its_host_is_answered_at_once(tmp_path, make_root):
    """Only the act makes a read wait: while the move's host decides (a
    person may take minutes), the move has changed nothing, and a read
    sent beside it answers the tree as it is."""
    base = tmp_path / "w"
    base.mkdir()
    (base / "a").write_text("a text\n")
    (base / "b").write_text("b old text\n")
    root = make_root(str(base))
    said: dict[str, Any] = {}

    def host(request: Any) -> None:
        if type(request).__name__ != "MoveRequest":
            return
        thread = threading.Thread(target=lambda: said.update(
            box.call("read_file", {"path": "a"}, timeout=10)))
        thread.start()
        thread.join(10)  # a hang detector, never the outcome
        said["answered"] = not thread.is_alive()

    with Toolbox(root, authorize=host) as box:
        moved = box.call("move_file", {"source": "a", "destination": "b", "overwrite": True},
                         timeout=30)
    assert moved["ok"], moved
    assert said.pop("answered") is True
    assert _text(said) == "a text\n", said
