"""A Root's fd is never used after close (THREATS.md row 22).

Worker threads open, create, make directories and stat through whatever
Root is current, while the main thread closes it and at once opens new
directories outside the root, which take the lowest free fd numbers: the
number the closed Root had, if it was released.  A call that acted on a
reused number would create its file in ``outside``.  Required: every call
either works inside the root or fails with ``EBADF`` naming its path, and
``outside`` stays empty, over ``CORRAL_CLOSE_RACE_ITERATIONS`` close cycles
(default 10,000) per backend config.
"""

from __future__ import annotations

import errno
import os
import threading

from .helpers.trees import build

ITERATIONS = int(os.environ.get("CORRAL_CLOSE_RACE_ITERATIONS", "10000"))
WORKERS = 3
BURST = 8
BAIT = 4  # directory fds opened outside right after each close


def _work(state: dict, stop: threading.Event, errors: list[str], counts: dict[str, int],
          worker: int) -> None:
    i = 0
    while not stop.is_set():
        root = state["root"]
        for _ in range(BURST):  # a burst on one Root: the close lands in the middle of some
            i += 1
            _call(root, f"w{worker}-{i % 50}", i, errors, counts)


def _call(root, name: str, i: int, errors: list[str], counts: dict[str, int]) -> None:
    try:
        if i % 4 == 0:
            os.close(root.open(name, os.O_CREAT | os.O_WRONLY, 0o644))
        elif i % 4 == 1:
            root.makedirs(f"{name}.d/sub", exist_ok=True)
        elif i % 4 == 2:
            root.stat("d")
        else:
            with root.open_handle("d") as handle:
                handle.stat()
        counts["ok"] += 1
    except OSError as exc:
        if exc.errno != errno.EBADF or exc.filename is None:
            errors.append(f"{type(exc).__name__}: {exc!r}")
        counts["ebadf"] += 1


def test_close_during_calls_never_reuses_the_fd(make_root, scratch):
    tree = build(scratch / "t", ["d/"])
    state = {"root": make_root(tree.ws)}
    stop = threading.Event()
    errors: list[str] = []
    counts = {"ok": 0, "ebadf": 0}
    threads = [threading.Thread(target=_work, args=(state, stop, errors, counts, w))
               for w in range(WORKERS)]
    for thread in threads:
        thread.start()
    try:
        for _ in range(ITERATIONS):
            old = state["root"]
            state["root"] = make_root(tree.ws)
            old.close()
            bait = [os.open(tree.out, os.O_RDONLY | os.O_DIRECTORY) for _ in range(BAIT)]
            for fd in bait:
                os.close(fd)
            if errors:
                break
    finally:
        stop.set()
        for thread in threads:
            thread.join(60)
        state["root"].close()
    assert not any(t.is_alive() for t in threads), "a call blocked"
    assert errors == [], errors[:5]
    assert sorted(os.listdir(tree.out)) == ["secret", "sub"], "a call acted outside the root"
    assert counts["ok"] > 0 and counts["ebadf"] > 0, counts
