"""An independent red-team pass over THREATS row 19 (no fd outlives a call)
where a walk of the tree stops before its end: a glob or grep that reaches
its cap, and the calls that try a glob before they suggest it (a read, an
edit or a patch of a directory's name).

The walk opened the next subdirectory, then handed out the entries before
it; a caller that stopped there closed the walk with that directory not
yet among those it closes.  One descriptor a call stayed open for the life
of the process (to a directory since removed, too): a model repeating
``read_file`` of a folder, or any glob that hits its limit, ran the server
out of open files in about a thousand calls.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from corral.contained import Tree, TreeVisitor
from corral.tools import Toolbox

REPEAT = 5


def _open_fds(tree: Path) -> int:
    """The fds open on ``tree`` or below (all fds where a descriptor's path
    cannot be read back): a view another test left to the garbage
    collector may close its own meanwhile."""
    here = os.path.realpath(tree)
    if not os.path.isdir("/proc/self/fd"):
        return len(os.listdir("/dev/fd"))
    count = 0
    for fd in os.listdir("/proc/self/fd"):
        try:
            target = os.readlink(f"/proc/self/fd/{fd}")
        except OSError:
            continue  # closed since the listing
        if target == here or target.startswith(here + "/"):
            count += 1
    return count


def _tree(base: Path) -> None:
    (base / "y" / "t" / "q").mkdir(parents=True)  # a folder whose first entry is a folder
    (base / "many" / "zz" / "deeper").mkdir(parents=True)
    for i in range(300):  # past glob's 200 and grep's limit, before the folder zz
        (base / "many" / f"f{i:03d}.py").write_text("needle\n")
    for i in range(3):
        (base / "many" / "zz" / f"g{i}.py").write_text("needle\n")


CALLS: list[tuple[str, dict[str, object]]] = [
    ("read_file", {"path": "y/t"}),
    ("edit_file", {"path": "y/t", "oldText": "a", "newText": "b"}),
    ("apply_patch", {"input": "*** Begin Patch\n*** Update File: y/t\n@@\n-a\n+b\n"
                              "*** End Patch\n"}),
    ("read_files", {"paths": ["many", "y/t"]}),
    ("glob", {"pattern": "**/*"}),
    ("glob", {"pattern": "**/*.py", "path": "many"}),
    ("grep", {"pattern": "needle", "limit": 5}),
    ("grep", {"pattern": "needle", "outputMode": "files", "limit": 3}),
]


@pytest.mark.parametrize("tool,args", CALLS, ids=[f"{t}-{i}" for i, (t, _) in enumerate(CALLS)])
def test_a_walk_stopped_early_leaves_no_fd_open(tmp_path: Path, make_root, tool, args):
    _tree(tmp_path)
    toolbox = Toolbox(make_root(str(tmp_path)))
    toolbox.call(tool, args)  # the first call may open what the toolbox keeps
    before = _open_fds(tmp_path)
    for _ in range(REPEAT):
        toolbox.call(tool, args)
    assert _open_fds(tmp_path) == before, f"{tool}: {_open_fds(tmp_path) - before} fds left open"


def test_a_tree_closed_after_its_first_entries_closes_every_fd(tmp_path: Path, make_root):
    """The core's walk itself: stopped at each entry in turn, every
    directory it opened is closed."""
    _tree(tmp_path)
    root = make_root(str(tmp_path))
    fd = os.open(tmp_path, os.O_RDONLY | os.O_DIRECTORY)
    try:
        stops = 0
        for stop in range(1, 12):
            before = _open_fds(tmp_path)
            with Tree(root, fd, 0, TreeVisitor(), yield_dirs=True) as tree:
                for seen, _ in enumerate(tree, 1):
                    if seen == stop:
                        stops += 1
                        break
            assert _open_fds(tmp_path) == before, f"stopped after {stop}: fds left open"
        assert stops >= 5  # the walk really was stopped part way, again and again
    finally:
        os.close(fd)
