"""Hostile input against "every call is bounded" (THREATS row 24).

Each test is an order-of-magnitude hang detector, not a speed test: the
call may spend a budget of CPU time many times what its input costs to
read and match once, and must answer in full within it (no ``time_limit``,
no overrun).  CPU time, not the wall clock: on a loaded machine the wall
clock runs ten times the work and more; the call's deadline only stops a
hang.  The hostile input is one a model can write with write_file.
Sizes are chosen so that a cost growing faster than the input would be at
least four times the budget.

Backend-independent (the cost is in the tools' matching): one backend
config, the default.
"""

from __future__ import annotations

import json
import os
import pathlib
import stat
import tempfile
import time

import pytest

from corral.tools import Toolbox
from .helpers.settings import TMP_BASE
from .helpers.world import make_repository

CPU_BUDGET = 2.0  # CPU seconds; each input below is about 100-500 KB
BACKSTOP = 60.0  # the call's deadline, in wall-clock seconds: a hang's end


@pytest.fixture
def deep_tmp():
    """A private directory for trees deeper than shutil.rmtree can remove
    (its recursion stops near 1,000 levels): never under pytest's shared
    base temp, whose cleanup would fail on them in every later session;
    removed here iteratively, by fd.  On the suite's tmpfs (TMP_BASE) where
    present: an rmdir on the CI disk costs milliseconds."""
    path = tempfile.mkdtemp(prefix="corral-redteam-deep-", dir=TMP_BASE)
    try:
        yield pathlib.Path(path)
    finally:
        remove_tree(path)


def remove_tree(path: str) -> None:
    """Remove ``path`` and everything below it, however deep, bottom-up by fd."""
    stack: list[tuple[int, str | None]] = [(os.open(path, os.O_RDONLY | os.O_DIRECTORY), None)]
    try:
        while stack:
            fd = stack[-1][0]
            for name in os.listdir(fd):
                if stat.S_ISDIR(os.stat(name, dir_fd=fd, follow_symlinks=False).st_mode):
                    stack.append((os.open(name, os.O_RDONLY | os.O_DIRECTORY, dir_fd=fd), name))
                    break
                os.unlink(name, dir_fd=fd)
            else:
                fd, name = stack.pop()
                os.close(fd)
                if stack and name is not None:
                    os.rmdir(name, dir_fd=stack[-1][0])
    finally:
        for fd, _ in stack:
            os.close(fd)
    os.rmdir(path)


def _call_within_budget(toolbox: Toolbox, tool: str, args: dict, what: str) -> dict:
    started = time.process_time()
    answer = toolbox.call(tool, args, timeout=BACKSTOP)
    seconds = time.process_time() - started
    assert answer["ok"] is True and seconds <= CPU_BUDGET, (
        f"{what}: ok={answer['ok']} {answer.get('code')} {answer.get('details', {}).get('kind')} "
        f"after {seconds:.1f} CPU s (budget {CPU_BUDGET} s)")
    return answer


def test_one_large_gitignore_over_a_wide_directory(tmp_path):
    """One .gitignore of 10,000 name rules (110 KB: under MAX_RULES and
    MAX_IGNORE_BYTES) beside 500 small files: glob tests each name against
    every rule in Python, 5 M glob tests (5-10 s here, load-dependent; 1,000
    files 9-23 s).  It also runs past its deadline (18 s on a 2 s deadline
    seen): no checkpoint in the rule loop."""
    make_repository(tmp_path)
    (tmp_path / ".gitignore").write_text("".join(f"*x{j}*y*\n" for j in range(10_000)))
    for i in range(500):
        (tmp_path / f"f{i}.txt").write_text("hay\n")
    with Toolbox(str(tmp_path)) as toolbox:
        answer = _call_within_budget(toolbox, "glob", {"pattern": "*.txt"},
                                       "glob over 500 files beside a 10,000-rule .gitignore")
    assert answer["truncated"] is True and len(answer["paths"]) == 200


def test_a_gitignore_at_every_level_of_a_deep_tree(tmp_path):
    """64 nested directories, each with an 800-rule .gitignore and one file
    (450 KB in all): every entry is tested against the rules of every
    ancestor, depth^2 x rules (grep 12 s here; 30 s when nothing matches,
    where the zero-result diagnosis searches again)."""
    here = make_repository(tmp_path)
    rules = "".join(f"*x{j}*y*\n" for j in range(800))
    for level in range(64):
        here = here / f"d{level}"
        here.mkdir()
        (here / ".gitignore").write_text(rules)
        (here / "hay.txt").write_text("hay\n")
    (here / "leaf.txt").write_text("needle\n")
    with Toolbox(str(tmp_path)) as toolbox:
        answer = _call_within_budget(toolbox, "grep", {"pattern": "needle"},
                                       "grep in a 64-deep tree with 800 rules per level")
    assert [m["path"].rsplit("/", 1)[-1] for m in answer["matches"]] == ["leaf.txt"]


REPLY_CAP = 64 * 1024  # bytes; the request is a 4 KB path


@pytest.mark.parametrize("tool,args", [
    ("write_file", {"path": "/".join(["m"] * 2000) + "/x", "content": "x"}),
    ("make_directory", {"path": "/".join(["m"] * 2000)}),
    ("move_file", {"source": "src.txt", "destination": "/".join(["m"] * 2000) + "/y"}),
], ids=["write_file", "make_directory", "move_file"])
def test_created_directories_reply_is_capped(deep_tmp, tool, args):
    """A 4,000-byte path (under max_path_bytes) through 2,000 missing
    directories: listing every one with its full path would make a 4 MB reply
    (and authorization request) for 4 KB of input, so the lists are capped,
    with a count of what was left out."""
    (deep_tmp / "src.txt").write_text("x")
    with Toolbox(str(deep_tmp)) as toolbox:
        answer = toolbox.call(tool, args)
        assert answer["ok"] is True, answer
        assert stat.S_ISDIR(toolbox.root.stat("/".join(["m"] * 2000)).st_mode)
    size = len(json.dumps(answer))
    assert size <= REPLY_CAP, f"{tool} answered {size} bytes for a {len(str(args))}-byte call"
    listed = len(answer["createdDirectories"])
    counts = [v for v in answer.values() if isinstance(v, int) and not isinstance(v, bool)]
    assert 2000 in counts or any(listed + v == 2000 for v in counts), \
        f"the answer does not say that 2000 directories were made: {sorted(answer)}"


def test_moving_a_deep_tree_is_linear_in_its_size(deep_tmp):
    tmp_path = deep_tmp
    """A 4,000-level tree (one move_file of a 2,000-level tree into another
    makes one): moving it checks every entry inside against the policy, and
    each check splits the entry's whole path: depth^2 (6.6 s here; 2,000
    levels 1.9 s, 8,000 about 26 s)."""
    fd = os.open(tmp_path, os.O_RDONLY | os.O_DIRECTORY)
    try:
        for name in ["top"] + ["d"] * 4000:
            os.mkdir(name, dir_fd=fd)
            deeper = os.open(name, os.O_RDONLY | os.O_DIRECTORY, dir_fd=fd)
            os.close(fd)
            fd = deeper
    finally:
        os.close(fd)
    with Toolbox(str(tmp_path)) as toolbox:
        _call_within_budget(toolbox, "move_file", {"source": "top", "destination": "top2"},
                              "move_file of a 4,000-level tree")
    assert (tmp_path / "top2" / "d").is_dir()
