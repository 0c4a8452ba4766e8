"""A process that moved beside roots other processes served (a move holds
the tree lock of each root served on its way: THREATS row 60) keeps no
descriptor of their lock files once they are no longer served: their last
server removed the files, and the process's next move closes what it kept
of them (a long ``corral serve`` beside many short-lived ones would
otherwise hold one removed file per root).

In processes of their own whose temporary directory (so their lock
directory) is the test's, on every backend config; a hang detector bounds
the children's CPU time."""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

SRC = str(Path(__file__).resolve().parents[2] / "src")
CPU_SECONDS = 120  # a hang detector: the case takes a few seconds of CPU
ROOTS = 4

_SERVER = """
import sys
from corral.tools import Toolbox
box = Toolbox(sys.argv[1])
print("serving", flush=True)
sys.stdin.readline()
box.close()
"""

_MOVER = """
import json, os, subprocess, sys
from pathlib import Path
from corral.contained import Root, backend_by_name
from corral.tools import Toolbox
from corral.tools._runtime.view import tree_lock
base, backend, fast, roots, server = sys.argv[1:6]
base = Path(base)
served = []
with Toolbox(Root(str(base), backend=backend_by_name(backend), fast_path=fast == "1")) as box:
    for i in range(int(roots)):
        inner = base / f"k{i}"
        info = os.stat(inner)
        served.append((info.st_dev, info.st_ino))
        child = subprocess.Popen([sys.executable, "-c", server, str(inner)],
                                 stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        assert child.stdout.readline() == "serving\\n"
        moved = box.call("move_file", {"source": f"k{i}/sub/a.txt",
                                       "destination": f"k{i}/sub/b.txt"})
        assert moved["ok"], moved
        kept_while_served = served[-1] in tree_lock._files
        child.stdin.write("\\n")
        child.stdin.close()
        assert child.wait() == 0
    moved = box.call("move_file", {"source": "x.txt", "destination": "y.txt"})
    assert moved["ok"], moved
    removed_kept = [key for key, found in tree_lock._files.items()
                    if found is not None and os.fstat(found.fd).st_nlink == 0]
    print(json.dumps({"kept_while_served": kept_while_served,
                      "beside_kept": [list(key) for key in served if key in tree_lock._files],
                      "removed_kept": len(removed_kept)}))
"""


def _cpu_bound() -> None:
    resource.setrlimit(resource.RLIMIT_CPU, (CPU_SECONDS, CPU_SECONDS))


def test_no_lock_file_of_a_root_no_longer_served_is_kept(make_root: Callable[..., Any],
                                                         tmp_path: Path) -> None:
    base = tmp_path / "proj"
    for i in range(ROOTS):
        (base / f"k{i}" / "sub").mkdir(parents=True)
        (base / f"k{i}" / "sub" / "a.txt").write_text("a\n")
    (base / "x.txt").write_text("x\n")
    locks = tmp_path / "tmp"
    locks.mkdir()
    env = {**os.environ, "TMPDIR": str(locks),
           "PYTHONPATH": SRC + os.pathsep + os.environ.get("PYTHONPATH", "")}
    done = subprocess.run([sys.executable, "-c", _MOVER, str(base), make_root.backend_name,
                           "1" if make_root.fast_path else "0", str(ROOTS), _SERVER],
                          capture_output=True, text=True, env=env, preexec_fn=_cpu_bound,
                          timeout=1800)
    assert done.returncode == 0, done.stderr
    found = json.loads(done.stdout)
    # the move held the served root's lock (its file opened here) ...
    assert found["kept_while_served"] is True, found
    # ... and once that root is served no more, nothing of it is kept
    assert found["beside_kept"] == [], found
    assert found["removed_kept"] == 0, found
