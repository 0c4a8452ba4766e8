"""The lock on the directory a step acts in is released by closing that
directory (no ``LOCK_UN`` first): a child forked while a step holds it
closes its copy of the fd, so the lock goes when the step ends, not when
the child does."""

from __future__ import annotations

import fcntl
import os
from pathlib import Path

from corral.tools import Toolbox

from ..helpers import fds_opened_since, open_fds


def _lockable_now(directory: Path) -> bool:
    fd = os.open(directory, os.O_RDONLY | os.O_DIRECTORY)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        return True
    except BlockingIOError:
        return False
    finally:
        os.close(fd)


def test_a_child_forked_mid_step_does_not_keep_the_directory_locked(tmp_path, make_root):
    (tmp_path / "d").mkdir()
    (tmp_path / "d" / "f.txt").write_text("old\n")
    children: list[int] = []
    release_read, release_write = os.pipe()
    ready_read, ready_write = os.pipe()
    held_during_step: list[bool] = []

    def authorize(request) -> None:  # runs inside the step, its locks held
        held_during_step.append(not _lockable_now(tmp_path / "d"))
        pid = os.fork()
        if pid == 0:  # the child waits, holding whatever copies it kept
            try:
                os.close(release_write)
                # past the fork handlers (they run before fork returns here):
                # the parent goes on only now, whatever the machine's load
                os.write(ready_write, b"r")
                os.read(release_read, 1)
            finally:
                os._exit(0)
        children.append(pid)
        assert os.read(ready_read, 1) == b"r"

    box = Toolbox(make_root(tmp_path), authorize=authorize)
    try:
        answer = box.call("write_file", {"path": "d/f.txt", "content": "new\n",
                                         "overwrite": True})
        assert answer["ok"], answer
        assert held_during_step == [True]
        assert _lockable_now(tmp_path / "d")  # the child is alive, the lock is gone
    finally:
        for fd in (release_read, release_write, ready_read, ready_write):
            os.close(fd)
        for pid in children:
            os.waitpid(pid, 0)
    assert (tmp_path / "d" / "f.txt").read_text() == "new\n"


def test_a_step_that_fails_part_way_lets_go_of_every_lock(tmp_path, make_root):
    """A step refused by its decision (after its locks were taken), and an
    edit whose first try meets a link at the final name and is made again
    following it, each leave nothing held: the directory can be locked,
    and a move (which takes the tree lock exclusively, in this process and
    for others) goes through at once rather than wait out its deadline."""
    (tmp_path / "d").mkdir()
    (tmp_path / "d" / "f.txt").write_text("one\n")
    os.symlink("f.txt", tmp_path / "d" / "link.txt")
    box = Toolbox(make_root(tmp_path), deny=["d/secret.txt"])
    refused = box.call("write_file", {"path": "d/secret.txt", "content": "x\n"})
    assert not refused["ok"] and refused["code"] == "DENIED", refused
    assert _lockable_now(tmp_path / "d")
    assert not (tmp_path / "d" / "secret.txt").exists()
    edited = box.call("edit_file", {"path": "d/link.txt", "oldText": "one", "newText": "two"})
    assert edited["ok"], edited
    assert _lockable_now(tmp_path / "d")
    assert (tmp_path / "d" / "f.txt").read_text() == "two\n"
    assert (tmp_path / "d" / "link.txt").is_symlink()
    moved = box.call("move_file", {"source": "d/f.txt", "destination": "d/g.txt"}, timeout=5)
    assert moved["ok"], moved
    assert (tmp_path / "d" / "g.txt").read_text() == "two\n"



def test_without_flock_a_thread_lock_still_keeps_two_steps_on_a_directory_apart(
        tmp_path, make_root):
    """On a filesystem that has no locks (every ``flock`` fails, here
    ``ENOLCK`` injected), a step still holds the directory it acts in
    against another thread's step there: the second step is not let in
    (its host question not asked) until the first one ends."""
    import errno
    import threading
    import time

    from corral.contained import Root, backend_by_name
    from corral.testing.backends import Fault, FaultBackend

    (tmp_path / "d").mkdir()
    (tmp_path / "d" / "a.txt").write_text("a\n")
    (tmp_path / "d" / "b.txt").write_text("b\n")
    tried: list[str] = []  # the thread of each refused flock

    def refused() -> None:
        tried.append(threading.current_thread().name)

    faulty = FaultBackend(backend_by_name(make_root.backend_name),
                          Fault("flock", errno.ENOLCK, times=-1, hook=refused))
    root = Root(tmp_path, backend=faulty, fast_path=make_root.fast_path)
    inside: list[str] = []
    overlapped: list[bool] = []
    first_in = threading.Event()

    def authorize(request) -> None:  # runs inside the step, its locks held
        inside.append(request.path)
        if request.path == "d/a.txt":
            first_in.set()
            deadline = time.monotonic() + 30
            while "second" not in tried and time.monotonic() < deadline:
                time.sleep(0.01)
            # the second step has begun taking its locks: unheld, it would
            # be in its own host question well within this pause
            time.sleep(0.3)
            overlapped.append("d/b.txt" in inside)

    box = Toolbox(root, authorize=authorize)
    answers: dict[str, dict] = {}

    def write(name: str) -> None:
        answers[name] = box.call("write_file", {"path": f"d/{name}", "content": "new\n",
                                                "overwrite": True})

    try:
        first = threading.Thread(target=write, args=("a.txt",), name="first")
        first.start()
        assert first_in.wait(30)
        second = threading.Thread(target=write, args=("b.txt",), name="second")
        second.start()
        first.join(60)
        second.join(60)
        assert answers["a.txt"]["ok"] and answers["b.txt"]["ok"], answers
        assert "second" in tried
        assert overlapped == [False], inside
        assert inside == ["d/a.txt", "d/b.txt"]
        assert (tmp_path / "d" / "b.txt").read_text() == "new\n"
    finally:
        box.close()
        root.close()


def test_a_closed_or_collected_toolbox_leaves_no_lock_file_open(tmp_path):
    # the tree-lock file was kept per root for the process's life: a server
    # opening each client's roots, or a test run, piled up one fd per root
    import gc

    def use(box: Toolbox) -> None:
        assert box.call("write_file", {"path": "a.txt", "content": "b\n",
                                       "overwrite": True})["ok"]

    def open_and_close_one(name: str) -> None:
        # a collected view is let go at the next open or close of a view
        (tmp_path / name).mkdir()
        Toolbox(tmp_path / name).close()

    gc.collect()
    gc.disable()  # what earlier tests dropped is collected above, not mid-count
    try:
        open_and_close_one("flush")
        before = open_fds()
        for i in range(100):
            root = tmp_path / f"closed{i}"
            root.mkdir()
            with Toolbox(root) as box:
                use(box)
        assert not fds_opened_since(before)
        for i in range(100):
            root = tmp_path / f"dropped{i}"
            root.mkdir()
            use(Toolbox(root))
        gc.collect()
        open_and_close_one("after")
        assert not fds_opened_since(before)
    finally:
        gc.enable()


def test_a_root_still_open_in_another_toolbox_keeps_its_lock_file(tmp_path):
    (tmp_path / "a.txt").write_text("a\n")
    first, second = Toolbox(tmp_path), Toolbox(tmp_path)
    try:
        assert first.call("write_file", {"path": "a.txt", "content": "1\n",
                                         "overwrite": True})["ok"]
        first.close()
        # the lock file the second still uses stays open and usable
        assert second.call("move_file", {"source": "a.txt", "destination": "b.txt"})["ok"]
        assert second.call("write_file", {"path": "b.txt", "content": "2\n",
                                          "overwrite": True})["ok"]
    finally:
        second.close()
    assert (tmp_path / "b.txt").read_text() == "2\n"


_MOVE_IN_ANOTHER_PROCESS = """
import json, sys, time
from corral.tools import Toolbox
with Toolbox(sys.argv[1]) as box:
    started = time.monotonic()
    answer = box.call("move_file", {"source": "m.txt", "destination": "n.txt"}, timeout=20)
    print(json.dumps([answer, time.monotonic() - started]))
"""


def test_a_kept_tree_lock_lets_another_processs_move_through(tmp_path):
    """The shared tree lock a process keeps between its steps must not hold
    up another process's move (which takes it exclusively): neither while
    the keeper is idle (let go after a moment) nor while it writes without
    pause (it reads the other's want at its next step and lets go)."""
    import json
    import subprocess
    import sys
    import threading

    (tmp_path / "a.txt").write_text("a\n")
    box = Toolbox(tmp_path)
    try:
        assert box.call("write_file", {"path": "a.txt", "content": "b\n",
                                       "overwrite": True})["ok"]  # kept from here
        for busy in (False, True):
            (tmp_path / "m.txt").write_text("m\n")
            stop = threading.Event()

            def write_on() -> None:
                while not stop.is_set():
                    assert box.call("write_file", {"path": "a.txt", "content": "c\n",
                                                   "overwrite": True})["ok"]

            writer = threading.Thread(target=write_on)
            if busy:
                writer.start()
            try:
                done = subprocess.run([sys.executable, "-c", _MOVE_IN_ANOTHER_PROCESS,
                                       str(tmp_path)], capture_output=True, text=True,
                                      timeout=60, check=True)
            finally:
                stop.set()
                if busy:
                    writer.join()
            answer, _ = json.loads(done.stdout)
            assert answer["ok"], (busy, answer)
            assert (tmp_path / "n.txt").read_text() == "m\n"
            (tmp_path / "n.txt").unlink()
    finally:
        box.close()
