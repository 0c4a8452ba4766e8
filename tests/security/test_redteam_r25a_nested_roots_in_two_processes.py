"""An independent red-team pass (round twenty-five, first team): one model
given two servers whose roots lie one in the other (``corral serve proj``
and ``corral serve proj/web``, two processes), sending a move to one and a
write to the other in the same turn.

The lock other processes see is per root, so the two processes' steps did
not exclude each other: the move checked the folder it carries (nothing
protected in it), the other process wrote ``tasks.json`` into that folder,
and the rename put it at ``.vscode/tasks.json`` (a VS Code task run when
the folder opens), in both directions: the outer root's process moving a
folder of the inner root while the inner one writes, and the inner one
moving while the outer one writes.  Now a move also holds exclusively the
tree lock of every root served now that holds its root or lies on the way
to either end of the move, so a step of the other process waits for it,
or the move sees what that step made.

The interleaving is forced (a fault-injecting backend's hook runs the
other process's call just before this process's rename or link), on every
backend config.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from corral.contained import Root, backend_by_name
from corral.testing.backends import Fault, FaultBackend
from corral.tools import Toolbox

SRC = str(Path(__file__).resolve().parents[2] / "src")
TASK = '{"version": "2.0.0", "tasks": [{"label": "x", "command": "touch PWNED", ' \
       '"runOptions": {"runOn": "folderOpen"}}]}\n'
OTHER_SECONDS = 1.0  # the other process's call gives up after this (a lock held here)

# another process serving its own root all along (its Toolbox open before
# this process's call begins), making one call there when told to
_OTHER = """
import json, sys
from corral.contained import Root, backend_by_name
from corral.tools import Toolbox
path, backend, fast, timeout = sys.argv[1:5]
box = Toolbox(Root(path, backend=backend_by_name(backend), fast_path=fast == "1"))
print("serving", flush=True)
tool, args = json.loads(sys.stdin.readline())
print(json.dumps(box.call(tool, args, timeout=float(timeout))), flush=True)
"""


@contextmanager
def _other_server(make_root, path: Path) -> Iterator[Callable[[str, dict], dict]]:
    """Another process serving ``path``; yields a function making one call there."""
    env = {**os.environ, "PYTHONPATH": SRC + os.pathsep + os.environ.get("PYTHONPATH", "")}
    server = subprocess.Popen([sys.executable, "-c", _OTHER, str(path), make_root.backend_name,
                               "1" if make_root.fast_path else "0", str(OTHER_SECONDS)],
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=env)
    assert server.stdin is not None and server.stdout is not None
    try:
        assert server.stdout.readline() == "serving\n"
        stdin, stdout = server.stdin, server.stdout

        def call(tool: str, args: dict) -> dict:
            stdin.write(json.dumps([tool, args]) + "\n")
            stdin.flush()
            return json.loads(stdout.readline())
        yield call
    finally:
        server.stdin.close()
        server.wait(60)
        server.stdout.close()


def _call_with_the_other_meanwhile(make_root, here: Path, tool: str, args: dict,
                                   there: Path, other_tool: str, other_args: dict,
                                   name: str) -> tuple[dict, list[dict]]:
    """``tool`` called on a root at ``here``; just before it renames or
    links ``name`` into place, another process serving ``there`` (since
    before the call) calls ``other_tool``.  Both answers."""
    other: list[dict] = []
    with _other_server(make_root, there) as other_call:
        def meanwhile() -> None:
            if not other:
                other.append(other_call(other_tool, other_args))

        faults = [Fault(method, None, name=name, hook=meanwhile)
                  for method in ("link_at", "rename_at")]
        backend = FaultBackend(backend_by_name(make_root.backend_name), *faults)
        root = Root(str(here), backend=backend, fast_path=make_root.fast_path)
        try:
            answer = Toolbox(root).call(tool, args, timeout=20)
        finally:
            root.close()
    assert other, "the other process never ran"
    return answer, other


def test_a_folder_of_an_inner_root_moved_onto_vscode_while_its_server_writes(tmp_path,
                                                                          make_root):
    """This process serves ``proj`` and moves ``web/sub`` to ``.vscode``;
    the process serving ``proj/web`` writes ``sub/tasks.json`` meanwhile."""
    (tmp_path / "web" / "sub").mkdir(parents=True)
    answer, other = _call_with_the_other_meanwhile(
        make_root, tmp_path, "move_file", {"source": "web/sub", "destination": ".vscode"},
        tmp_path / "web", "write_file", {"path": "sub/tasks.json", "content": TASK}, "sub")
    assert not (tmp_path / ".vscode" / "tasks.json").exists(), (answer, other)
    if other[0]["ok"]:  # the write landed where it said, and the move saw it
        assert (tmp_path / "web" / "sub" / "tasks.json").read_text() == TASK, (answer, other)
        assert not answer["ok"], (answer, other)


def test_a_folder_moved_onto_vscode_by_the_inner_roots_server_while_the_outer_writes(
        tmp_path, make_root):
    """This process serves ``proj`` and writes ``web/sub/tasks.json``; the
    process serving ``proj/web`` moves ``sub`` to ``.vscode`` meanwhile."""
    (tmp_path / "web" / "sub").mkdir(parents=True)
    answer, other = _call_with_the_other_meanwhile(
        make_root, tmp_path, "write_file", {"path": "web/sub/tasks.json", "content": TASK},
        tmp_path / "web", "move_file", {"source": "sub", "destination": ".vscode"},
        "tasks.json")
    assert not (tmp_path / "web" / ".vscode" / "tasks.json").exists(), (answer, other)
    if answer["ok"]:  # the answer agrees with the disk
        assert (tmp_path / "web" / "sub" / "tasks.json").read_text() == TASK, (answer, other)

