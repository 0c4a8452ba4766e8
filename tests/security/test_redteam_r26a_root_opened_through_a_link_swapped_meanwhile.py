"""An independent red-team pass (round twenty-six, first team): a root
opened by a path through a link the model swaps for a folder meanwhile.

A repository holds ``y -> .vscode`` (an editor-settings link, as row 20's
fixtures do); a host opens a Toolbox on ``proj/y`` (a sub-agent's Toolbox
on the folder the model names).  Opened through the link, its directory
is ``.vscode``, and a root inside a protected place is protected whole.
But the open looked at the path twice: the directory by ``Root(path)``,
then where the path really leads (``realpath``) a moment later, to decide
by.  The model's two moves in the same turn, in the Toolbox of ``proj``
(``y -> y2``, the link; ``d -> y``, a plain folder), between those two
looks, made the Toolbox decide as if it served ``proj/y`` while it holds
``.vscode``: its ``write_file tasks.json`` put a VS Code task at
``.vscode/tasks.json``.

The interleaving is forced: the two moves run on another thread just
before the open's look at the real path (``os.path.realpath`` wrapped;
the open waits for them, a bounded time: an open that waits for moves
in the roots holding it lets them run after its look), on every
backend config.
"""

from __future__ import annotations

import os
import threading
from pathlib import Path

from corral.contained import Root, backend_by_name
from corral.tools import Toolbox
from corral.tools._runtime.view import locks

TASK = '{"version": "2.0.0", "tasks": [{"label": "x", "command": "touch PWNED", ' \
       '"runOptions": {"runOn": "folderOpen"}}]}\n'
MOVES_WAITED = 3.0  # seconds the open waits for the moves at most (they take milliseconds)


def _moved_or_waiting(mover: threading.Thread) -> None:
    """Return once ``mover``'s moves are done or one waits for the tree
    lock this process's open holds shared (it lets them run after its
    look), within :data:`MOVES_WAITED`: a join alone waited its whole
    bound whenever the open held the lock."""
    for _ in range(int(MOVES_WAITED / 0.002)):
        mover.join(0.002)
        if not mover.is_alive() or locks._TREE._waiting_writers:
            return


def test_a_link_swapped_for_a_folder_while_a_toolbox_opens_through_it(tmp_path, make_root,
                                                                     monkeypatch):
    (tmp_path / ".vscode").mkdir()
    (tmp_path / "d").mkdir()
    os.symlink(".vscode", tmp_path / "y")
    outer = Toolbox(make_root(str(tmp_path)))
    moved: list[dict] = []

    def swap() -> None:
        moved.append(outer.call("move_file", {"source": "y", "destination": "y2"}, timeout=20))
        moved.append(outer.call("move_file", {"source": "d", "destination": "y"}, timeout=20))

    mover = threading.Thread(target=swap)
    real = os.path.realpath
    inner_path = str(tmp_path / "y")

    def realpath(path, *args, **kwargs):  # the swap runs just before the open's look
        if os.fspath(path) == inner_path and not mover.is_alive() and not moved:
            mover.start()
            _moved_or_waiting(mover)
        return real(path, *args, **kwargs)

    monkeypatch.setattr(os.path, "realpath", realpath)
    try:
        inner: Toolbox | None = Toolbox(Root(inner_path,
                                             backend=backend_by_name(make_root.backend_name),
                                             fast_path=make_root.fast_path))
    except FileNotFoundError:
        inner = None  # refused: the path named another folder once it was looked at
    monkeypatch.setattr(os.path, "realpath", real)
    mover.join(60)
    assert not mover.is_alive()
    assert moved and all(answer["ok"] for answer in moved), moved
    written = None
    if inner is not None:
        written = inner.call("write_file", {"path": "tasks.json", "content": TASK}, timeout=20)
        inner.close()
    assert not (tmp_path / ".vscode" / "tasks.json").exists(), (moved, written)
    if written is not None and written["ok"]:  # it served the folder moved to y
        assert (tmp_path / "y" / "tasks.json").read_text() == TASK, written
