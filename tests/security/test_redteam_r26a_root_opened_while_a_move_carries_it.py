"""An independent red-team pass (round twenty-six, first team): a root
opened while a move in a root holding it is under way.

A move never carries a live root away (row 33's test,
``test_redteam_moving_another_root.py``): the Toolbox of ``proj/y`` would
go on deciding by names it no longer has, and ``tasks.json`` there is no
protected name.  The move looks for the roots served now once it holds its
locks; a Toolbox opened on ``proj/y`` just after that look (a host opening
a sub-agent's Toolbox on the folder the model names in the same turn as its
``move_file y -> .vscode``, or a second ``corral serve proj/y`` started by
a second editor window) was marked served too late for the look, and
looked that its path still named its directory before the rename: both
held, the model's ``tasks.json`` (a VS Code task run when the folder opens)
then landed at ``proj/.vscode/tasks.json`` whenever it liked.

The interleaving is forced (a fault-injecting backend's hook opens the other
Toolbox just before the move's rename, and lets the rename go once that
open is done, or once it looks for the roots holding its own, a look an
open waiting for the move makes first), on every backend config, with the
other Toolbox in this process and in another.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from pathlib import Path

from corral.contained import Root, backend_by_name
from corral.testing.backends import Fault, FaultBackend
from corral.tools import Toolbox
from corral.tools._runtime.view import opening

SRC = str(Path(__file__).resolve().parents[2] / "src")
TASK = '{"version": "2.0.0", "tasks": [{"label": "x", "command": "touch PWNED", ' \
       '"runOptions": {"runOn": "folderOpen"}}]}\n'
HANG = 60.0  # seconds: a hang detector only (the open takes milliseconds)

# another process opening a Toolbox on its root when started, saying when
# its open looks above its root ("looking"), then whether it opened
# ("serving", "refused"), then writing the task when told to
_OTHER = """
import json, sys
from corral.contained import Root, backend_by_name
from corral.testing.backends import Fault, FaultBackend
from corral.tools import Toolbox
path, backend, fast = sys.argv[1:4]
said = []
def looking():
    if not said:
        said.append(1)
        print("looking", flush=True)
inner = FaultBackend(backend_by_name(backend), Fault("open_at", None, name="..", hook=looking))
try:
    box = Toolbox(Root(path, backend=inner, fast_path=fast == "1"))
except OSError as exc:
    print("refused", flush=True)
    sys.exit(0)
print("serving", flush=True)
tool, args = json.loads(sys.stdin.readline())
print(json.dumps(box.call(tool, args, timeout=20)), flush=True)
"""


def _moving_root(make_root, base: Path, hook) -> Root:
    """A Root on ``base`` whose rename of ``y`` runs ``hook`` first."""
    backend = FaultBackend(backend_by_name(make_root.backend_name),
                           Fault("rename_at", None, name="y", hook=hook))
    return Root(str(base), backend=backend, fast_path=make_root.fast_path)


def _waits_said(monkeypatch, waiting: threading.Event) -> None:
    """``waiting`` set when an open in this process first waits for a move
    under way (its deadline's checkpoint runs between two tries of a held
    tree lock): where this process's served roots are is known without a
    look up the parents, so the open's ``..`` hook may never run, and the
    move's hook would otherwise wait its whole bound before letting go."""
    made = opening._move_deadline

    def said(opened, where):
        checkpoint = made(opened, where)

        def check() -> None:
            waiting.set()
            checkpoint()
        return check

    monkeypatch.setattr(opening, "_move_deadline", said)


def test_a_toolbox_opened_here_on_a_folder_being_moved_onto_vscode(tmp_path, make_root,
                                                                   monkeypatch):
    (tmp_path / "y").mkdir()
    opened: list[Toolbox | BaseException] = []
    looking = threading.Event()
    done = threading.Event()
    _waits_said(monkeypatch, looking)

    def open_inner() -> None:
        def said_looking() -> None:
            looking.set()
        inner = FaultBackend(backend_by_name(make_root.backend_name),
                             Fault("open_at", None, name="..", hook=said_looking))
        try:
            opened.append(Toolbox(Root(str(tmp_path / "y"), backend=inner,
                                       fast_path=make_root.fast_path)))
        except OSError as exc:
            opened.append(exc)
        finally:
            done.set()

    opener = threading.Thread(target=open_inner)

    def meanwhile() -> None:
        if not opener.is_alive() and not done.is_set():
            opener.start()
            for _ in range(int(HANG / 0.01)):  # until opened, or waiting on the move
                if done.is_set() or looking.is_set():
                    break
                done.wait(0.01)

    root = _moving_root(make_root, tmp_path, meanwhile)
    try:
        answer = Toolbox(root).call("move_file", {"source": "y", "destination": ".vscode"},
                                    timeout=20)
    finally:
        root.close()
    opener.join(HANG)
    assert not opener.is_alive()
    inner_box = opened[0]
    if isinstance(inner_box, Toolbox):
        written = inner_box.call("write_file", {"path": "tasks.json", "content": TASK},
                                 timeout=20)
        inner_box.close()
    else:
        written = None
    assert not (tmp_path / ".vscode" / "tasks.json").exists(), (answer, written)
    # one of the two went first: the move refused (a root served there), or
    # the Toolbox refused to open (its folder moved while it was opened)
    assert answer["ok"] != isinstance(inner_box, Toolbox), (answer, inner_box)
    if answer["ok"]:
        assert (tmp_path / ".vscode").is_dir() and not (tmp_path / "y").exists()
    else:
        assert written is not None and written["ok"], written
        assert (tmp_path / "y" / "tasks.json").read_text() == TASK


def test_a_server_started_on_a_folder_being_moved_onto_vscode(tmp_path, make_root):
    (tmp_path / "y").mkdir()
    env = {**os.environ, "PYTHONPATH": SRC + os.pathsep + os.environ.get("PYTHONPATH", "")}
    servers: list[subprocess.Popen[str]] = []
    lines: list[str] = []

    def meanwhile() -> None:
        if servers:
            return
        server = subprocess.Popen(
            [sys.executable, "-c", _OTHER, str(tmp_path / "y"), make_root.backend_name,
             "1" if make_root.fast_path else "0"],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=env)
        servers.append(server)
        assert server.stdout is not None
        lines.append(server.stdout.readline())  # opened, or waiting on the move

    root = _moving_root(make_root, tmp_path, meanwhile)
    try:
        answer = Toolbox(root).call("move_file", {"source": "y", "destination": ".vscode"},
                                    timeout=20)
    finally:
        root.close()
    assert servers, "the other process never started"
    server = servers[0]
    assert server.stdin is not None and server.stdout is not None
    try:
        if lines[0] == "looking\n":
            lines.append(server.stdout.readline())
        written = None
        if lines[-1] == "serving\n":
            server.stdin.write(json.dumps(["write_file", {"path": "tasks.json",
                                                          "content": TASK}]) + "\n")
            server.stdin.flush()
            written = json.loads(server.stdout.readline())
    finally:
        server.stdin.close()
        server.wait(HANG)
        server.stdout.close()
    assert not (tmp_path / ".vscode" / "tasks.json").exists(), (answer, lines, written)
    assert lines[-1] in ("serving\n", "refused\n"), lines
    assert answer["ok"] == (lines[-1] == "refused\n"), (answer, lines)
    if not answer["ok"]:
        assert written is not None and written["ok"], written
        assert (tmp_path / "y" / "tasks.json").read_text() == TASK
