"""A root opened in another process AROUND a root whose move is under way
(THREATS row 70's open end).

``corral serve proj/web`` moves ``sub -> .vscode`` (inside web, so
``web/.vscode``); ``corral serve proj`` starts meanwhile, and its Toolbox
writes ``web/sub/tasks.json``.  A move holds exclusively the tree lock of
every root served now that holds its own (row 60), so the write waits, but
the move looked for those roots before ``proj`` was marked served, and the
open of ``proj`` waited only on moves in roots holding it, never on roots
inside it: the write landed in ``web/sub`` and the rename carried it to
``web/.vscode/tasks.json`` (a VS Code task run when the folder opens).

The interleaving is forced by the moving process's fault-injecting backend:
the other server starts just before the rename (it opens while the move
holds its locks), or just before the move takes its first lock (it opens
after the move looked for the roots holding its own); in both, its write
is sent before the rename and the rename goes once the write is done or the
other process says a lock it wants is held (its backend tells each ``flock``
that would wait).  On every backend config.  In one process it cannot
happen: a move holds the process's tree lock exclusively from before its
look to its end, and every step of another Toolbox there takes it shared.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

from corral.contained import Root, backend_by_name
from corral.testing.backends import Fault, FaultBackend
from corral.tools import Toolbox

SRC = str(Path(__file__).resolve().parents[2] / "src")
TASK = '{"version": "2.0.0", "tasks": [{"label": "x", "command": "touch PWNED", ' \
       '"runOptions": {"runOn": "folderOpen"}}]}\n'
HANG = 60.0  # seconds: a hang detector only

# the outer server: opens a Toolbox on its root when started, says "blocked"
# the first time a lock its backend takes is held by another process, then
# whether it opened ("serving", "refused"), then runs each call it is sent
_OUTER = """
import json, sys
from corral.contained import Root, backend_by_name
from corral.testing.backends import FaultBackend
from corral.tools import Toolbox
path, backend, fast = sys.argv[1:4]
said = []
class Telling(FaultBackend):
    def flock(self, fd, operation):
        try:
            super().flock(fd, operation)
        except BlockingIOError:
            if not said:
                said.append(1)
                print("blocked", flush=True)
            raise
try:
    box = Toolbox(Root(path, backend=Telling(backend_by_name(backend)), fast_path=fast == "1"))
except OSError:
    print("refused", flush=True)
    sys.exit(0)
print("serving", flush=True)
for line in sys.stdin:
    tool, args = json.loads(line)
    print(json.dumps(box.call(tool, args, timeout=20)), flush=True)
"""

_WRITE = json.dumps(["write_file", {"path": "web/sub/tasks.json", "content": TASK}]) + "\n"


class _Outer:
    """The outer server, started by the moving process's hook."""

    def __init__(self, proj: Path, make_root) -> None:
        env = {**os.environ, "PYTHONPATH": SRC + os.pathsep + os.environ.get("PYTHONPATH", "")}
        self.process = subprocess.Popen(
            [sys.executable, "-c", _OUTER, str(proj), make_root.backend_name,
             "1" if make_root.fast_path else "0"],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=env)
        self.lines: list[str] = []

    def line(self) -> str:
        assert self.process.stdout is not None
        got = self.process.stdout.readline()
        self.lines.append(got)
        return got

    def send_write(self) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(_WRITE)
        self.process.stdin.flush()

    def answer(self) -> dict[str, object]:
        """The next call's answer (a "blocked" said meanwhile skipped)."""
        got = self.line()
        while got == "blocked\n":
            got = self.line()
        assert got, self.lines
        result: dict[str, object] = json.loads(got)
        return result

    def serving(self) -> bool:
        got = self.line()
        while got == "blocked\n":
            got = self.line()
        assert got in ("serving\n", "refused\n"), self.lines
        return got == "serving\n"

    def stop(self) -> None:
        assert self.process.stdin is not None and self.process.stdout is not None
        self.process.stdin.close()
        self.process.wait(HANG)
        self.process.stdout.close()


def _tree(tmp_path: Path) -> tuple[Path, Path]:
    proj = tmp_path / "proj"
    (proj / "web" / "sub").mkdir(parents=True)
    return proj, proj / "web"


def _moving(make_root, web: Path, before_rename: Callable[[], None],
            before_first_lock: Callable[[], None] | None = None) -> dict[str, object]:
    """``move_file sub -> .vscode`` by a Toolbox on ``web`` whose backend
    runs ``before_rename`` just before the rename, and ``before_first_lock``
    at the move's first ``flock`` (its tree lock's)."""
    backend = FaultBackend(backend_by_name(make_root.backend_name),
                           Fault("rename_at", None, name="sub", hook=before_rename))
    root = Root(str(web), backend=backend, fast_path=make_root.fast_path)
    try:
        box = Toolbox(root)
        if before_first_lock is not None:  # (the open's own flocks are not the move's)
            backend.add(Fault("flock", None, hook=before_first_lock))
        return box.call("move_file", {"source": "sub", "destination": ".vscode"}, timeout=20)
    finally:
        root.close()


def _write_lands_outside_vscode(web: Path, moved: dict[str, object], outer: _Outer,
                                written: dict[str, object] | None) -> None:
    assert not (web / ".vscode" / "tasks.json").exists(), (moved, outer.lines, written)
    assert moved["ok"], moved
    assert written is not None and written["ok"], (written, outer.lines)
    assert (web / "sub" / "tasks.json").read_text() == TASK
    assert (web / ".vscode").is_dir()


def test_a_server_started_around_a_root_while_its_move_holds_its_locks(tmp_path, make_root):
    proj, web = _tree(tmp_path)
    outers: list[_Outer] = []
    written: list[dict[str, object]] = []

    def before_rename() -> None:
        if outers:
            return
        outer = _Outer(proj, make_root)
        outers.append(outer)
        # opened (then its write is sent, and the rename waits for it), or
        # waiting on a lock the move holds (the rename goes first)
        if outer.line() == "serving\n":
            outer.send_write()
            written.append(outer.answer())

    moved = _moving(make_root, web, before_rename)
    assert outers, "the outer server never started"
    outer = outers[0]
    try:
        if not written:
            assert outer.serving(), outer.lines
            outer.send_write()
            written.append(outer.answer())
    finally:
        outer.stop()
    _write_lands_outside_vscode(web, moved, outer, written[0] if written else None)


def test_a_server_started_around_a_root_after_its_move_looked_for_roots_holding_it(
        tmp_path, make_root):
    proj, web = _tree(tmp_path)
    outers: list[_Outer] = []
    written: list[dict[str, object]] = []

    def before_first_lock() -> None:
        outer = _Outer(proj, make_root)
        outers.append(outer)
        assert outer.serving(), outer.lines  # nothing of the move is held yet

    def before_rename() -> None:
        outer = outers[0]
        outer.send_write()
        # written (the rename waits for it), or waiting on a lock the move holds
        got = outer.line()
        if got != "blocked\n":
            assert got, outer.lines
            written.append(json.loads(got))

    moved = _moving(make_root, web, before_rename, before_first_lock)
    assert outers, "the outer server never started"
    outer = outers[0]
    try:
        if not written:
            written.append(outer.answer())
    finally:
        outer.stop()
    _write_lands_outside_vscode(web, moved, outer, written[0] if written else None)
