"""Every fd the core opens has FD_CLOEXEC, and none outlives the call that
opened it (THREATS.md row 19), whether the call succeeds or fails.

The Root table (test_root_table.py) runs every call through a
:class:`helpers.table.RecordingBackend`, which checks ``FD_CLOEXEC`` on each fd
the moment a backend call returns it (``open_at``, ``openat2``,
``create_directory_at``), and compares ``/proc/self/fd`` before and after
each call, succeeding or failing.  This file proves that check can fail,
and adds faults: the n-th backend call of an op fails with ``EIO``, for
every n up to the number of calls the op makes, which exercises the
clean-up of every partly built fd stack.
"""

from __future__ import annotations

import os

import pytest

from ..helpers import fds_opened_since, open_fds
from .helpers.trees import build
from .helpers.operations import OPS, prepare
from .helpers.table import RecordingBackend, recording_root
from .test_root_table import CONSISTENCY, RESOLUTION, SPECIAL

ALL_CASES = RESOLUTION + CONSISTENCY + SPECIAL


def test_the_recorder_sees_every_fd_and_flags_a_missing_cloexec(make_root, scratch):
    tree = build(scratch / "t", ["a/b/", "a/b/f", "l -> a"])
    root, recorder = recording_root(make_root, tree.ws)
    with root:
        fd = root.open("l/b/f")
        try:
            if not make_root.fast_path:
                method = "open_at"
            else:  # the native backend's fast path is one C call
                method = "open_text_beneath" if make_root.backend_name == "native" else "openat2"
            assert (method, fd, True) in recorder.opened, recorder.opened
        finally:
            os.close(fd)
        root.makedirs("a/n1/n2/n3")  # n1 and n2 are made and opened, n3 only made
        assert [m for m, _, _ in recorder.opened].count("create_directory_at") == 2
    # an fd without the flag is reported as such
    def open_inheritable(dir_fd, name, flags, mode=0o666):
        fd = os.open(tree.ws, os.O_RDONLY | os.O_DIRECTORY)
        os.set_inheritable(fd, True)  # what a missing O_CLOEXEC looks like
        return fd

    sneaky = RecordingBackend(type("Leaky", (), {"name": "leaky",
                                                 "open_at": staticmethod(open_inheritable)})())
    leaked = sneaky.open_at(0, "x", 0)
    os.close(leaked)
    assert sneaky.opened == [("open_at", leaked, False)]


# Cases whose ops walk deep stacks, follow links, create, and fail late.
FAULT_CASES = [c for c in ALL_CASES if c.name in (
    "ten deep", "chain through dirs", "up and down again", "dangling link, created through",
    "chain ending outside", "fifo", "dir with entries of every kind", "missing parents")]


@pytest.mark.parametrize("op", OPS, ids=[op.name for op in OPS])
def test_no_fd_leaks_when_any_backend_call_fails(op, make_root, scratch):
    failures = []
    runs = 0
    for i, case in enumerate(FAULT_CASES):
        tree = None
        n = 1
        while n <= 200:
            if tree is None or op.mutates:  # read-only ops can share one tree
                tree = build(scratch / f"{i}-{n}", case.fs)
                prepare(tree, op, case.target)
            root, recorder = recording_root(make_root, tree.ws)
            recorder.fail_at = n
            before = open_fds()
            try:
                op.root(root, tree, tree.subst(case.path))
            except OSError:
                pass
            left = fds_opened_since(before)
            root.close()
            runs += 1
            if left:
                failures.append(f"{case.name}: fault at call {n}: fds left open {sorted(left)}")
            if recorder.calls < n:
                break  # fewer than n calls: every call has had its fault
            n += 1
        else:
            failures.append(f"{case.name}: more than 200 backend calls")
    assert runs > 2 * len(FAULT_CASES), "the fault loop did not run"
    assert not failures, "\n".join(failures)
