"""An independent red-team pass over the host's open-file limit: every
place a tool opens something (a directory on the way, the file, a
temporary file, a directory it makes, a listing) can meet ``EMFILE`` (the
process may open no more files) or ``ENFILE`` (the system may not), when
other calls hold many or the host's limit is low.  Only a patch naming too
many files and a move of a too-deep folder were answered; anywhere else the
error was ``INTERNAL`` ("a bug in corral", a traceback in the log).  It is
a limit of the host's: the answer is ``TOO_LARGE`` kind ``open_files``,
saying to retry with fewer calls at once or that the limit is reached.

Injected at the n-th open of each call through ``corral.testing``'s
``FaultBackend`` (every open the call makes, one at a time), and met for
real (every descriptor the process may have held) on every backend
config.  And the tree lock's file, opened by the first step of a root:
one the limit kept from opening was remembered as "no lock file here",
so every later step of that root went on without the other processes'
lock (a move another process held exclusively was not waited for).
"""

from __future__ import annotations

import errno
import os
import resource
import subprocess
import sys
from contextlib import contextmanager
from pathlib import Path

import pytest

from corral.contained import Root, backend_by_name
from corral.testing.backends import Fault, FaultBackend
from corral.tools import Toolbox
from corral.tools._runtime.view import tree_lock

from ..helpers import EVERY_TOOL_CALL

CALLS = EVERY_TOOL_CALL
IDS = [f"{n}-{tool}" for n, (tool, _) in enumerate(CALLS)]
OPENING = ("open_at", "create_directory_at", "scandir")  # what makes a descriptor
MOST_OPENS = 40  # the opens of one call tried one at a time


def _tree(base: Path) -> Path:
    (base / "d" / "sub").mkdir(parents=True)
    (base / "d" / "a.txt").write_text("alpha\n")
    (base / "d" / "b.txt").write_text("bravo\n")
    (base / "d" / "sub" / "c.txt").write_text("alpha c\n")
    return base


def _snapshot(base: Path) -> dict[str, bytes | None]:
    out: dict[str, bytes | None] = {}
    for path in sorted(base.rglob("*")):
        out[str(path.relative_to(base))] = None if path.is_dir() else path.read_bytes()
    return out


def _faulty(make_root, base: Path, hook) -> Toolbox:
    backend = FaultBackend(backend_by_name(make_root.backend_name))
    root = Root(str(base), backend=backend, fast_path=make_root.fast_path)
    box = Toolbox(root)
    for method in OPENING:  # after the open: the toolbox's own look is not what is tried
        backend.add(Fault(method, None, times=-1, hook=hook))
    return box


def _answer_of(answer: dict) -> dict:
    """The refusal to look at (read_files: each file's own answer)."""
    if answer.get("ok") is True and "files" in answer:
        refused = [one for one in answer["files"] if one.get("ok") is False]
        return refused[0] if refused else answer
    return answer


def _assert_limit_answer(answer: dict) -> None:
    answer = _answer_of(answer)
    assert answer.get("code") != "INTERNAL", answer
    if answer["ok"] is False:
        assert answer["code"] == "TOO_LARGE", answer
        assert answer["details"]["kind"] == "open_files", answer
        assert "retry" in answer["hint"].lower(), answer


@pytest.mark.parametrize("err", [errno.EMFILE, errno.ENFILE], ids=["EMFILE", "ENFILE"])
@pytest.mark.parametrize(("tool", "args"), CALLS, ids=IDS)
def test_out_of_files_at_each_open_is_a_typed_refusal(tmp_path, make_root, tool, args, err):
    opens = [0]

    def count() -> None:
        opens[0] += 1

    counted = _faulty(make_root, _tree(tmp_path / "count"), count)
    assert counted.call(tool, args)["ok"] is True
    assert opens[0] > 0, (tool, "opened nothing through the backend")
    for nth in range(min(opens[0], MOST_OPENS)):
        base = _tree(tmp_path / f"at{nth}")
        seen = [0]

        def fail_at(nth=nth, seen=seen) -> None:
            seen[0] += 1
            if seen[0] == nth + 1:
                raise OSError(err, os.strerror(err))

        box = _faulty(make_root, base, fail_at)
        before = _snapshot(base)
        answer = box.call(tool, args)
        _assert_limit_answer(answer)
        if _answer_of(answer)["ok"] is False and tool not in ("apply_patch",):
            assert _snapshot(base) == before, (tool, nth, answer)
        assert str(base) not in str(answer)


@contextmanager
def _no_descriptor_free():
    """Every descriptor this process may open held (the soft limit set just
    above what it holds, the rest filled), given back afterwards."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    held = len(os.listdir("/proc/self/fd")) if os.path.isdir("/proc/self/fd") else 64
    resource.setrlimit(resource.RLIMIT_NOFILE, (min(held + 16, hard), hard))
    filled: list[int] = []
    try:
        while True:
            try:
                filled.append(os.open(os.devnull, os.O_RDONLY | os.O_CLOEXEC))
            except OSError:
                break
        yield
    finally:
        for fd in filled:
            os.close(fd)
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))


@pytest.mark.parametrize(("tool", "args"), CALLS, ids=IDS)
def test_out_of_files_for_real_is_a_typed_refusal(tmp_path, make_root, tool, args):
    base = _tree(tmp_path / "tree")
    box = Toolbox(make_root(str(base)))
    assert box.call("read_file", {"path": "d/b.txt"})["ok"] is True  # the look at open is done
    before = _snapshot(base)
    with _no_descriptor_free():
        answer = box.call(tool, args)
    _assert_limit_answer(answer)
    if _answer_of(answer)["ok"] is False and tool != "apply_patch":
        assert _snapshot(base) == before, answer
    assert box.call(tool, args)["ok"] is True  # once files may be opened again, it works


def _lock_file_of(path: Path) -> str:
    directory = tree_lock._lock_directory()
    assert directory is not None
    info = os.stat(path)
    return os.path.join(directory, f"{info.st_dev:x}-{info.st_ino:x}.lock")


def test_a_lock_file_the_limit_kept_from_opening_is_opened_later(tmp_path, make_root):
    """A toolbox whose first step met the limit at the tree lock's file,
    then another one on the root: a write while another process holds the
    tree lock exclusively (as its move does) waits for it."""
    base = tmp_path / "tree"
    (base / "y").mkdir(parents=True)
    root = make_root(str(base))
    with _no_descriptor_free():
        try:
            early = Toolbox(root)
        except OSError as exc:
            assert exc.errno == errno.EMFILE
        else:
            answer = early.call("write_file", {"path": "y/early.txt", "content": "1\n"})
            _assert_limit_answer(answer)
    box = Toolbox(root)
    holder = subprocess.Popen(
        [sys.executable, "-c",
         "import fcntl, os, sys, time\n"
         "fd = os.open(sys.argv[1], os.O_RDWR | os.O_CREAT, 0o600)\n"
         "fcntl.flock(fd, fcntl.LOCK_EX)\n"
         "print('held', flush=True)\n"
         "time.sleep(60)\n", _lock_file_of(base)],
        stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "held"
        answer = box.call("write_file", {"path": "y/late.txt", "content": "2\n"}, timeout=1.0)
        assert answer["ok"] is False, answer
        assert answer["details"]["kind"] == "time_limit", answer
        assert not (base / "y" / "late.txt").exists()
    finally:
        holder.kill()
        holder.wait()
    assert box.call("write_file", {"path": "y/late.txt", "content": "2\n"})["ok"] is True
