"""The edit lock is keyed by what a path resolves to and shared by every
Toolbox in the process and by other processes: concurrent edits
of different snippets of one file never lose one another, however many
toolboxes or processes make them, and whichever spelling each one uses.

``CORRAL_SOAK_EDITS`` raises the number of edits per worker (a documented
longer profile); the default run keeps it small.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import threading
from pathlib import Path

from corral.tools import Toolbox

WORKERS = 8
EDITS = int(os.environ.get("CORRAL_SOAK_EDITS", "8"))


def _seed(path: Path, workers: int, edits: int) -> None:
    path.write_text("".join(f"slot_{w}_{e} = 'old'\n" for w in range(workers)
                            for e in range(edits)))


def _landed(path: Path, workers: int, edits: int) -> int:
    text = path.read_text()
    return sum(f"slot_{w}_{e} = 'new'\n" in text for w in range(workers) for e in range(edits))


def test_eight_toolboxes_editing_one_file_lose_nothing(tmp_path, make_root):
    (tmp_path / "pkg").mkdir()
    target = tmp_path / "pkg" / "shared.py"
    _seed(target, WORKERS, EDITS)
    os.symlink("pkg/shared.py", tmp_path / "alias.py")
    spellings = ["pkg/shared.py", "alias.py", "./pkg//shared.py", "pkg/../pkg/shared.py"]
    answers: list[dict] = []
    guard = threading.Lock()
    start = threading.Barrier(WORKERS)

    def worker(w: int) -> None:
        with Toolbox(make_root(tmp_path)) as toolbox:  # its own toolbox, its own root
            start.wait()
            for e in range(EDITS):
                result = toolbox.call("edit_file", {"path": spellings[(w + e) % len(spellings)],
                                                    "oldText": f"slot_{w}_{e} = 'old'",
                                                    "newText": f"slot_{w}_{e} = 'new'"})
                with guard:
                    answers.append(result)

    threads = [threading.Thread(target=worker, args=(w,)) for w in range(WORKERS)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(120)
    assert not any(thread.is_alive() for thread in threads)
    failed = [a for a in answers if not a.get("ok")]
    assert failed == [] and len(answers) == WORKERS * EDITS
    assert _landed(target, WORKERS, EDITS) == WORKERS * EDITS


WORKER_SCRIPT = textwrap.dedent("""
    import json, sys
    from corral.tools import Toolbox
    root, worker, edits, go = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
    with Toolbox(root) as toolbox:
        while not __import__("os").path.exists(go):
            pass
        bad = []
        for e in range(edits):
            result = toolbox.call("edit_file", {"path": "shared.py",
                                                "oldText": f"slot_{worker}_{e} = 'old'",
                                                "newText": f"slot_{worker}_{e} = 'new'"})
            if not result.get("ok"):
                bad.append(result)
    print(json.dumps(bad))
""")


def test_two_processes_editing_one_file_lose_nothing(tmp_path):
    processes, edits = 2, WORKERS * EDITS // 2
    target = tmp_path / "shared.py"
    _seed(target, processes, edits)
    go = tmp_path.parent / f"{tmp_path.name}.go"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in sys.path if p)}
    children = [subprocess.Popen([sys.executable, "-c", WORKER_SCRIPT, str(tmp_path), str(w),
                                  str(edits), str(go)], stdout=subprocess.PIPE, text=True,
                                 env=env) for w in range(processes)]
    go.write_text("")  # both start editing at once
    try:
        outputs = [child.communicate(timeout=180)[0] for child in children]
    finally:
        go.unlink()
    assert [child.returncode for child in children] == [0] * processes
    assert [out.strip() for out in outputs] == ["[]"] * processes
    assert _landed(target, processes, edits) == processes * edits
