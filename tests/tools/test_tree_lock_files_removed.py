"""The tree lock's files do not pile up in this user's lock directory.

Each root a view holds open has a lock file (``<device>-<inode>.lock``)
and a served mark (``served/<device>-<inode>``) in the lock directory; the
last process serving a root removes both, so after any number of Toolboxes
the directory holds the files of the roots open now.  A removal never lets
two processes each hold a lock on a file of their own: the remover holds
the file exclusively and marks it gone before the unlink, and a process
that took the flock on a file marked gone and unlinked opens the path
again.

Every case runs in processes of their own whose temporary directory (so
their lock directory) is the test's, on every backend config.  Hang
detectors bound the children's CPU time (``RLIMIT_CPU``).
"""

from __future__ import annotations

import json
import os
import resource
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any, NamedTuple

import pytest

SRC = str(Path(__file__).resolve().parents[2] / "src")
CPU_SECONDS = 120  # a hang detector: the slowest case takes a few seconds of CPU


def _cpu_bound() -> None:
    resource.setrlimit(resource.RLIMIT_CPU, (CPU_SECONDS, CPU_SECONDS))


def _env(tmp: Path) -> dict[str, str]:
    """A child's environment: its temporary directory (and so its lock
    directory) ``tmp``, this tree's corral first on its path."""
    return {**os.environ, "TMPDIR": str(tmp),
            "PYTHONPATH": SRC + os.pathsep + os.environ.get("PYTHONPATH", "")}


def _run(script: str, tmp: Path, *args: str, check: bool = True) -> str:
    done = subprocess.run([sys.executable, "-c", script, *args], capture_output=True,
                          text=True, env=_env(tmp), preexec_fn=_cpu_bound, timeout=1800)
    if check:
        assert done.returncode == 0, done.stderr
    return done.stdout


def _start(script: str, tmp: Path, *args: str) -> subprocess.Popen[str]:
    return subprocess.Popen([sys.executable, "-c", script, *args], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env=_env(tmp), preexec_fn=_cpu_bound)


def _go_on(process: subprocess.Popen[str]) -> None:
    """Let a child waiting on its stdin take its next step."""
    assert process.stdin is not None
    process.stdin.write("\n")
    process.stdin.flush()


class Places(NamedTuple):
    tmp: Path  # the children's temporary directory, holding their lock directory
    tree: Path  # the root they open
    configs: tuple[str, str]  # the backend's name, and "1" where it takes the fast path


@pytest.fixture
def places(tmp_path: Path, make_root: Any) -> Places:
    tmp, tree = tmp_path / "tmp", tmp_path / "tree"
    tmp.mkdir()
    tree.mkdir()
    return Places(tmp, tree, (make_root.backend_name, "1" if make_root.fast_path else "0"))


def _lock_directory(tmp: Path) -> Path:
    return tmp / f"corral-locks-{os.getuid()}"


def _files(tmp: Path) -> tuple[list[str], list[str]]:
    """The lock files and the served marks in the lock directory."""
    directory = _lock_directory(tmp)
    locks = sorted(p.name for p in directory.glob("*.lock")) if directory.exists() else []
    served = sorted(p.name for p in (directory / "served").iterdir()) \
        if (directory / "served").exists() else []
    return locks, served


def _name(path: Path) -> str:
    info = os.stat(path)
    return f"{info.st_dev:x}-{info.st_ino:x}"


_HEAD = """
import json, os, sys, tempfile
from corral.contained import Root, backend_by_name
from corral.tools import Toolbox
backend, fast = sys.argv[1], sys.argv[2] == "1"
locks = os.path.join(tempfile.gettempdir(), f"corral-locks-{os.getuid()}")
def root(path):
    return Root(path, backend=backend_by_name(backend), fast_path=fast)
def files():
    return (sum(name.endswith(".lock") for name in os.listdir(locks)),
            len(os.listdir(os.path.join(locks, "served"))))
"""

# N Toolboxes on N roots, one after another, each writing and moving (an
# exclusive take), while one Toolbox stays open; what the directory holds
# after each is closed; the kept one is never closed (the process's exit
# lets it go)
_MANY = _HEAD + """
base, n = sys.argv[3], int(sys.argv[4])
os.makedirs(os.path.join(base, "kept"))
kept = Toolbox(root(os.path.join(base, "kept")))
assert kept.call("write_file", {"path": "k.txt", "content": "k\\n"})["ok"]
seen = []
for i in range(n):
    path = os.path.join(base, f"r{i}")
    os.makedirs(os.path.join(path, "d"))
    with Toolbox(root(path)) as box:
        assert box.call("write_file", {"path": "d/a.txt", "content": f"{i}\\n"})["ok"]
        assert box.call("move_file", {"source": "d", "destination": "e"})["ok"]
        seen.append(files())
    seen.append(files())
print(json.dumps(seen))
"""


def test_many_toolboxes_leave_the_files_of_the_roots_open_only(tmp_path, places):
    tmp, _, configs = places
    n = 12
    seen = json.loads(_run(_MANY, tmp, *configs, str(tmp_path / "trees"), str(n)))
    # two roots open while a Toolbox works, the kept one once it is closed
    assert seen == [[2, 2], [1, 1]] * n
    assert _files(tmp) == ([], [])  # the kept root let go at the process's exit


_CRASH = _HEAD + """
box = Toolbox(root(sys.argv[3]))
assert box.call("write_file", {"path": "a.txt", "content": "a\\n", "overwrite": True})["ok"]
print("held", flush=True)
sys.stdin.readline()
os._exit(0)  # as a crash: nothing let go
"""

_OPEN_CLOSE = _HEAD + """
with Toolbox(root(sys.argv[3])) as box:
    assert box.call("write_file", {"path": "b.txt", "content": "b\\n"})["ok"]
    print(json.dumps(files()))
"""

# another root's move of a folder looks at the served roots (one may lie in
# the folder): a dead process's served mark is removed, and its lock file
_MOVE_ELSEWHERE = _HEAD + """
with Toolbox(root(sys.argv[3])) as box:
    assert box.call("move_file", {"source": "d", "destination": "e"})["ok"]
"""


def test_a_crashed_process_s_files_are_removed_by_the_next_one(tmp_path, places):
    tmp, tree, configs = places
    for _ in range(2):
        crashed = _start(_CRASH, tmp, *configs, str(tree))
        assert crashed.stdout.readline().strip() == "held", crashed.stderr.read()
        crashed.communicate("\n", timeout=600)
    assert _files(tmp) == ([f"{_name(tree)}.lock"], [_name(tree)])
    # the next process on the root: its lock file is the one left (taken,
    # let go), removed with the served mark once it is done
    assert json.loads(_run(_OPEN_CLOSE, tmp, *configs, str(tree))) == [1, 1]
    assert _files(tmp) == ([], [])
    # a root nobody opens again: a move elsewhere finds its files unheld
    crashed = _start(_CRASH, tmp, *configs, str(tree))
    assert crashed.stdout.readline().strip() == "held", crashed.stderr.read()
    crashed.send_signal(signal.SIGKILL)
    crashed.wait(timeout=600)
    other = tmp_path / "other"
    (other / "d").mkdir(parents=True)
    _run(_MOVE_ELSEWHERE, tmp, *configs, str(other))
    assert _files(tmp) == ([], [])


_SERVE = _HEAD + """
box = Toolbox(root(sys.argv[3]))
assert box.call("write_file", {"path": sys.argv[4], "content": "x\\n"})["ok"]
print("open", flush=True)
sys.stdin.readline()
box.close()
print(json.dumps(files()), flush=True)
sys.stdin.readline()
"""


def test_the_last_server_of_a_root_removes_its_files(places):
    tmp, tree, configs = places
    first = _start(_SERVE, tmp, *configs, str(tree), "first.txt")
    second = _start(_SERVE, tmp, *configs, str(tree), "second.txt")
    try:
        for server in (first, second):
            assert server.stdout.readline().strip() == "open", server.stderr.read()
        assert _files(tmp) == ([f"{_name(tree)}.lock"], [_name(tree)])
        _go_on(first)
        # the other still serves the root: both files stay
        assert json.loads(first.stdout.readline()) == [1, 1]
        _go_on(second)
        assert json.loads(second.stdout.readline()) == [0, 0]  # the last: both removed
        assert _files(tmp) == ([], [])
    finally:
        for server in (first, second):
            server.communicate("\n", timeout=600)


# Hammers one root's lock from a process of its own: each round opens the
# lock file as a view's opening does (its count read first), serves the
# root, holds the lock exclusively while it writes its pid into a shared
# file and reads it back (every third round, shared: it reads the file
# twice), and lets go of the root (the last server removes
# the lock file, while the other process opens it).  A round that saw the file
# change under it held the lock together with a writer of the other process.
_HAMMER = """
import os, sys, time
from corral.contained import Root, backend_by_name
from corral.tools._runtime.view import tree_lock
backend, fast, path, shared, rounds = sys.argv[1], sys.argv[2] == "1", sys.argv[3], \\
    sys.argv[4], int(sys.argv[5])
root = Root(path, backend=backend_by_name(backend), fast_path=fast)
info = os.fstat(root.fileno())
key = (info.st_dev, info.st_ino)
mine = str(os.getpid()).encode()
fd = os.open(shared, os.O_RDWR)
both = 0
def go_on():
    pass
for i in range(rounds):
    tree_lock.moves_made(key, root.backend)  # opened here (a view's open then looks at the tree)
    time.sleep(0.0002)
    tree_lock.use_lock_file(key, root.fileno())
    with tree_lock.tree_file_lock(key, root.backend, exclusive=i % 3 != 2,
                                  checkpoint=go_on) as hold:
        if i % 3 != 2:
            os.pwrite(fd, mine.ljust(16), 0)
            for _ in range(10):
                os.sched_yield()
                if os.pread(fd, 16, 0).strip() != mine:
                    both += 1
        else:  # held shared: no exclusive holder writes meanwhile
            before = os.pread(fd, 16, 0)
            for _ in range(10):
                os.sched_yield()
                if os.pread(fd, 16, 0) != before:
                    both += 1
    tree_lock.let_go_lock_file(key)
print(both)
"""


@pytest.mark.long
def test_two_processes_never_hold_a_removed_lock_apart(tmp_path, places):
    tmp, tree, configs = places
    shared = tmp_path / "shared"
    shared.write_bytes(bytes(16))
    hammers = [_start(_HAMMER, tmp, *configs, str(tree), str(shared), "1000")
               for _ in range(2)]
    outs = [hammer.communicate(timeout=1800) for hammer in hammers]
    for hammer, (out, err) in zip(hammers, outs, strict=True):
        assert hammer.returncode == 0, err
        assert out.strip() == "0", (out, err)
    assert _files(tmp) == ([], [])


# -- the sweep of lock files left behind -------------------------------------------
# A process's first view sweeps a bounded part of the lock directory: lock
# files no process holds, of roots no process serves, are removed (marked
# gone first, as a last server removes one).

_SWEEP_TRIES = 64  # lock files one sweep tries at most (tree_lock._SWEEP_TRIES)


def _leave(tmp: Path, count: int, device: int = 0x7E57) -> list[str]:
    """``count`` lock files no process uses, as a process that died (or a
    version that never removed them) left them; their names."""
    directory = _lock_directory(tmp)
    directory.mkdir(mode=0o700, exist_ok=True)
    names = []
    for inode in range(1, count + 1):
        name = f"{device:x}-{inode:x}.lock"
        (directory / name).write_bytes(bytes(24))
        names.append(name)
    return names


def test_lock_files_left_behind_are_swept_by_the_next_process(places):
    tmp, tree, configs = places
    _leave(tmp, 20)
    directory = _lock_directory(tmp)
    # what the sweep leaves alone: a served root's file (its last server
    # removes it) and names that are no lock files
    (directory / "served").mkdir(mode=0o700)
    (directory / "served" / "5e-1").write_bytes(b"")
    (directory / "5e-1.lock").write_bytes(bytes(24))
    (directory / "notes.txt").write_bytes(b"x")
    (directory / "zz-1.lock").write_bytes(b"x")
    _run(_OPEN_CLOSE, tmp, *configs, str(tree))
    assert _files(tmp) == (["5e-1.lock", "zz-1.lock"], ["5e-1"])
    assert (directory / "notes.txt").exists()


def test_a_sweep_tries_a_bounded_number_of_files(places):
    tmp, tree, configs = places
    left = 2 * _SWEEP_TRIES + 10
    _leave(tmp, left)
    for turn, after in enumerate((left - _SWEEP_TRIES, left - 2 * _SWEEP_TRIES, 0)):
        (tree / str(turn)).mkdir()
        _run(_OPEN_CLOSE, tmp, *configs, str(tree / str(turn)))
        assert len(_files(tmp)[0]) == after


# A process using a root's tree lock without serving it (no served mark):
# it opens the lock file (as a view's open reads the count first), says
# "opened"; then holds it shared until told, says "held" with the inode it
# holds; lets go when told, and ends.
_HOLDER = """
import os, sys
from corral.contained import Root, backend_by_name
from corral.tools._runtime.view import tree_lock
root = Root(sys.argv[3], backend=backend_by_name(sys.argv[1]), fast_path=sys.argv[2] == "1")
info = os.fstat(root.fileno())
key = (info.st_dev, info.st_ino)
tree_lock.keep_idle_for(0.001)  # let go at once when no step holds it
tree_lock.moves_made(key, root.backend)
print("opened", flush=True)
sys.stdin.readline()
hold = tree_lock.take_shared(key, root.backend, lambda: None)
print("held", os.fstat(hold.file.fd).st_ino, flush=True)
sys.stdin.readline()
tree_lock.drop_shared(hold, root.backend)
print("dropped", flush=True)
sys.stdin.readline()
"""

# Another process wanting the same root's tree lock exclusively: "waited"
# if it gave up after many tries (the lock held elsewhere), else "taken"
# and the inode of the file it locked.
_TAKER = """
import os, sys
from corral.contained import Root, backend_by_name
from corral.tools._runtime.view import tree_lock
root = Root(sys.argv[3], backend=backend_by_name(sys.argv[1]), fast_path=sys.argv[2] == "1")
info = os.fstat(root.fileno())
key = (info.st_dev, info.st_ino)
tries = [int(sys.argv[4])]
class GaveUp(Exception):
    pass
def checkpoint():
    tries[0] -= 1
    if tries[0] == 0:
        raise GaveUp()
try:
    with tree_lock.tree_file_lock(key, root.backend, exclusive=True,
                                  checkpoint=checkpoint) as hold:
        print("taken", os.fstat(hold.file.fd).st_ino)
except GaveUp:
    print("waited")
"""


# tries of the held lock a taker makes before it says it waited: the holder
# holds it until told (it said "held"), so any count shows the exclusion;
# the tries poll 0.5 ms doubling to 20 ms apart, and 20 of them wait about
# 0.3 s (200 waited 4 s a test, a hang detector's length for nothing)
WAITED_TRIES = "20"


def _say(process: subprocess.Popen[str], expect: str) -> str:
    line = process.stdout.readline().strip()
    assert line.split(" ")[0] == expect, (line, process.stderr.read())
    return line


def test_a_sweep_keeps_a_file_another_process_holds_and_it_still_excludes(tmp_path, places):
    tmp, tree, configs = places
    other = tmp_path / "other"
    other.mkdir()
    lock = _lock_directory(tmp) / f"{_name(tree)}.lock"
    holder = _start(_HOLDER, tmp, *configs, str(tree))
    try:
        _say(holder, "opened")
        _go_on(holder)
        held = int(_say(holder, "held").split()[1])
        _leave(tmp, 5)
        # a process's first view sweeps: the held file stays, the others go
        _run(_OPEN_CLOSE, tmp, *configs, str(other))
        assert _files(tmp) == ([lock.name], [])
        assert os.stat(lock).st_ino == held
        # and it still excludes: an exclusive taker waits while it is held...
        assert _run(_TAKER, tmp, *configs, str(tree), WAITED_TRIES).strip() == "waited"
        _go_on(holder)
        _say(holder, "dropped")
        # ...and takes that very file once it is let go
        assert _run(_TAKER, tmp, *configs, str(tree), "0").split() == ["taken", str(held)]
    finally:
        holder.communicate("\n", timeout=600)


def test_a_file_swept_while_a_process_had_it_open_is_opened_again_by_it(tmp_path, places):
    """Opened but not held when the sweep removed it: the process takes the
    path's file when it next takes the lock, the one every other process
    takes, never the removed one."""
    tmp, tree, configs = places
    other = tmp_path / "other"
    other.mkdir()
    lock = _lock_directory(tmp) / f"{_name(tree)}.lock"
    holder = _start(_HOLDER, tmp, *configs, str(tree))
    try:
        _say(holder, "opened")
        removed = os.stat(lock).st_ino
        _run(_OPEN_CLOSE, tmp, *configs, str(other))
        assert not lock.exists()  # swept: opened by the holder, held by none
        _go_on(holder)
        held = int(_say(holder, "held").split()[1])
        assert os.stat(lock).st_ino == held != removed
        assert _run(_TAKER, tmp, *configs, str(tree), WAITED_TRIES).strip() == "waited"
        _go_on(holder)
        _say(holder, "dropped")
        assert _run(_TAKER, tmp, *configs, str(tree), "0").split() == ["taken", str(held)]
    finally:
        holder.communicate("\n", timeout=600)


# A directory holding many thousands of files left behind (a machine's
# temporary directory after months of processes that died): 64 a process
# cannot keep up.  A sweep removes a share of what it read (at least 64, at
# most a bound a run), so the leftovers shrink by a share each process.
# The sweep is run alone here (a process's own sweep runs on a thread its
# exit waits for a bounded time): nothing in it depends on a backend.
_SWEEP_SHARE = 8  # one in this many of the lock files a sweep read (tree_lock._SWEEP_SHARE)
_SWEEP_MOST = 4096  # lock files one sweep tries at most (tree_lock._SWEEP_TRIES_MOST)
_SWEEP_ALONE = """
from corral.tools._runtime.view import tree_lock
print(tree_lock.sweep_lock_files())
"""


@pytest.mark.parametrize(("left", "removed"), [
    (3 * _SWEEP_MOST, 3 * _SWEEP_MOST // _SWEEP_SHARE),  # a share of them
    (_SWEEP_SHARE * _SWEEP_MOST + 100, _SWEEP_MOST),  # bounded however many
    (2 * _SWEEP_TRIES, _SWEEP_TRIES),  # and at least a few
])
def test_a_sweep_removes_a_share_of_the_files_left_behind(tmp_path, left, removed):
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    _leave(tmp, left)
    assert int(_run(_SWEEP_ALONE, tmp)) == removed
    assert len(_files(tmp)[0]) == left - removed


# Lock files the sweep read that their last servers removed before it
# reached them (every other one here, gone between the listing and the
# tries): a file not there costs no try, so the sweep still removes as many
# of those left as it would have tried.
_SWEEP_WHILE_SERVERS_REMOVE = """
import os
from corral.tools._runtime.view import tree_lock
listing = os.scandir
def listed_then_half_removed(path):
    names = sorted(entry.name for entry in listing(path))
    for name in names[::2]:
        os.unlink(os.path.join(path, name))
    return _Listed(path, names)
class _Listed:
    def __init__(self, path, names):
        self.entries = [_Entry(name) for name in names]
    def __enter__(self):
        return iter(self.entries)
    def __exit__(self, *exc):
        return False
class _Entry:
    def __init__(self, name):
        self.name = name
os.scandir = listed_then_half_removed
print(tree_lock.sweep_lock_files())
"""


def test_a_file_removed_before_the_sweep_reaches_it_costs_no_try(tmp_path):
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    _leave(tmp, 2 * _SWEEP_TRIES)  # read: 128, so 64 tries
    assert int(_run(_SWEEP_WHILE_SERVERS_REMOVE, tmp)) == _SWEEP_TRIES
    assert _files(tmp)[0] == []


# What the sweep must leave alone (the roots this process used) is kept only
# while it runs: a process opening root after root for weeks keeps nothing
# for each root it closed.
_ROOTS_FORGOTTEN = """
import os, sys
from corral.contained import Root, backend_by_name
from corral.tools import Toolbox
from corral.tools._runtime.view import tree_lock
backend, fast, top = backend_by_name(sys.argv[1]), sys.argv[2] == "1", sys.argv[3]
def open_close(name):
    path = os.path.join(top, name)
    os.mkdir(path)
    with Root(path, backend=backend, fast_path=fast) as root, Toolbox(root) as box:
        assert box.call("write_file", {"path": "f.txt", "content": "x"})["ok"]
open_close("first")
for sweeper in tree_lock._sweeper:
    sweeper.join(60)
print(len(tree_lock._used_here))
for turn in range(20):
    open_close(f"later{turn}")
print(len(tree_lock._used_here))
"""


def test_the_roots_a_sweep_left_alone_are_forgotten_after_it(places):
    tmp, tree, configs = places
    _leave(tmp, 10)
    assert _run(_ROOTS_FORGOTTEN, tmp, *configs, str(tree)).split() == ["0", "0"]
    assert _files(tmp)[0] == []  # the sweep removed what was left, each view its own


# A process making a root's lock file (the path gone: its last server
# removed it) and another process's last server removing that new file
# before the first wrote its counts: the remover's gone mark is written
# over by the counts, so a taker that looks only at the mark holds a file
# no longer named while the next process holds the one at the path.  The
# removal is made to land there (in the maker's first write); then, holding
# the lock exclusively, the maker must exclude a process taking the path's
# file.
_MAKER_RACED_BY_A_REMOVAL = """
import fcntl, os, sys
from corral.contained import Root, backend_by_name
from corral.tools._runtime.view import tree_lock
root = Root(sys.argv[3], backend=backend_by_name(sys.argv[1]), fast_path=sys.argv[2] == "1")
info = os.fstat(root.fileno())
key = (info.st_dev, info.st_ino)
name = tree_lock._lock_file_name(key)
real_pwrite = os.pwrite
removals = []
def write_after_a_removal(fd, data, offset):
    if not removals:  # the maker's first write: its counts of the file it made
        removals.append(None)
        removals[0] = tree_lock._remove_lock_file(key)  # as another process's last server
    return real_pwrite(fd, data, offset)
os.pwrite = write_after_a_removal
tree_lock._lock_file(key)
os.pwrite = real_pwrite
with tree_lock.tree_file_lock(key, root.backend, exclusive=True, checkpoint=lambda: None):
    other = os.open(name, os.O_RDWR | os.O_CREAT, 0o600)  # a next process's
    try:
        fcntl.flock(other, fcntl.LOCK_EX | fcntl.LOCK_NB)
        print(removals[0].value, "both held")
    except BlockingIOError:
        print(removals[0].value, "excluded")
"""


def test_a_file_removed_while_its_maker_wrote_its_counts_is_not_held_apart(places):
    tmp, tree, configs = places
    assert _run(_MAKER_RACED_BY_A_REMOVAL, tmp, *configs, str(tree)).split() == \
        ["removed", "excluded"]
