"""The tree lock's directory inside a root the model works in.

corral keeps each root's cross-process tree lock in a file of this user's
lock directory (``corral-locks-<uid>`` in the temporary directory).  A
root that holds that directory (a server opened at ``/``, at ``/tmp``, at
the home directory holding the cache fallback) must not let the model
read, replace, delete or move those files: a lock file replaced or
removed is a new inode, and a process that opens it afterwards no longer
excludes the processes holding the old one, so a move in one and a write
in another are checked and made apart again (for this root, and for every
other root this user serves).

Each case runs in a process of its own whose temporary directory lies
inside the root it opens, on every backend config.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

SRC = str(Path(__file__).resolve().parents[2] / "src")

# Opens a Toolbox on the root (which holds the lock directory), lets it
# make its lock file, then answers each call given on stdin (one JSON
# array [tool, args] a line) with one JSON line.
_SERVER = """
import json, sys
from corral.contained import Root, backend_by_name
from corral.tools import Toolbox
path, backend, fast = sys.argv[1:4]
box = Toolbox(Root(path, backend=backend_by_name(backend), fast_path=fast == "1"))
assert box.call("list_directory", {"path": "."})["ok"]
print("open", flush=True)
for line in sys.stdin:
    tool, args = json.loads(line)
    print(json.dumps(box.call(tool, args)), flush=True)
"""


def _env(tmp: Path) -> dict[str, str]:
    return {**os.environ, "TMPDIR": str(tmp),
            "PYTHONPATH": SRC + os.pathsep + os.environ.get("PYTHONPATH", "")}


def _calls(make_root, root: Path, tmp: Path, calls: list[tuple[str, dict]]) -> list[dict]:
    env = _env(tmp)
    lines = "".join(json.dumps([tool, args]) + "\n" for tool, args in calls)
    done = subprocess.run([sys.executable, "-c", _SERVER, str(root), make_root.backend_name,
                           "1" if make_root.fast_path else "0"],
                          input=lines, capture_output=True, text=True, timeout=120, env=env,
                          check=True)
    first, *answers = done.stdout.splitlines()
    assert first == "open", done.stdout
    return [json.loads(answer) for answer in answers]


def test_the_lock_directory_inside_the_root_is_out_of_the_models_reach(tmp_path, make_root):
    root = tmp_path / "root"
    tmp = root / "scratch" / "tmp"
    tmp.mkdir(parents=True)
    locks = f"scratch/tmp/corral-locks-{os.getuid()}"
    # a server of the root, open throughout: the lock directory and the
    # root's lock file made (and kept: its last server removes it)
    holder = subprocess.Popen([sys.executable, "-c", _SERVER, str(root), make_root.backend_name,
                               "1" if make_root.fast_path else "0"],
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
                              env=_env(tmp))
    try:
        assert holder.stdout is not None
        assert holder.stdout.readline().strip() == "open"
        _attack(make_root, root, tmp, locks)
    finally:
        assert holder.stdin is not None
        holder.stdin.close()
        holder.wait(timeout=120)


def _attack(make_root, root: Path, tmp: Path, locks: str) -> None:
    made = sorted(p.name for p in (tmp / f"corral-locks-{os.getuid()}").iterdir())
    (lock_file,) = (tmp / f"corral-locks-{os.getuid()}").glob("*.lock")
    name = f"{locks}/{lock_file.name}"
    before = lock_file.stat()
    answers = _calls(make_root, root, tmp, [
        ("read_file", {"path": name}),
        ("file_info", {"path": name}),
        ("list_directory", {"path": locks}),
        ("write_file", {"path": name, "content": "x"}),
        ("write_file", {"path": f"{locks}/other.lock", "content": "x"}),
        ("delete_file", {"path": name}),
        ("move_file", {"source": name, "destination": "stolen.lock"}),
        ("move_file", {"source": locks, "destination": "stolen"}),
        ("move_file", {"source": "scratch/tmp", "destination": "elsewhere"}),
        ("move_file", {"source": "scratch", "destination": "elsewhere"}),
        ("make_directory", {"path": f"{locks}/d"}),
    ])
    for answer in answers:
        assert not answer["ok"], answer
    after = lock_file.stat()
    assert (after.st_dev, after.st_ino) == (before.st_dev, before.st_ino)
    assert sorted(p.name for p in lock_file.parent.iterdir()) == made
    assert not (root / "stolen.lock").exists() and not (root / "stolen").exists()
    assert not (root / "elsewhere").exists()
    # what lies beside the lock directory stays the model's
    (ok,) = _calls(make_root, root, tmp, [("write_file", {"path": "scratch/tmp/notes.txt",
                                                          "content": "fine\n"})])
    assert ok["ok"], ok
    assert (tmp / "notes.txt").read_text() == "fine\n"
