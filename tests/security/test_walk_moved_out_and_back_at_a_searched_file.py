"""THREATS row 35b's dance at a file a search reads in a directory it
entered: ``grep`` walks into ``a/b/c`` (shown beneath the root as it is
opened), and just before it reads ``c/f``, ``a`` is renamed out of the
root and the outside file ``s/g`` put in ``c`` as ``f``.  ``c`` is still
held by its fd, now outside; ``f`` opened by name in it is the outside
file, which never was beneath the root.  Its content must not be
answered: no match of what only the outside file holds; the call is
refused as one whose path changed meanwhile (``STALE``).

The move is put in that one window by a :class:`FaultBackend` hook on the
open of ``f`` (the search's file-by-file path, every config), and for the
native backend's batched scanner (C opens and reads a directory's files in
one call) by a scanner that runs the move before its first batch.
"""

from __future__ import annotations

import os
from collections.abc import Callable

import pytest

from corral.contained import FileScan, Root, backend_by_name
from corral.testing.backends import Fault, FaultBackend
from corral.tools import Toolbox

from ..helpers import BACKEND_CONFIGS, BACKEND_IDS
from .helpers.walk_dance import tree as _tree

NATIVE_CONFIGS = [(config, ident) for config, ident in zip(BACKEND_CONFIGS, BACKEND_IDS)
                  if config[0] == "native"]


def _file_dance(root: str, out: str) -> Callable[[], None]:
    """``a`` out of the root; the outside ``s/g`` in place of ``a/b/c/f``."""
    def move() -> None:
        os.rename(os.path.join(root, "a"), os.path.join(out, "a"))
        os.rename(os.path.join(out, "a", "b", "c", "f"), os.path.join(out, "held"))
        os.rename(os.path.join(out, "s", "g"), os.path.join(out, "a", "b", "c", "f"))
    return move


def _grep(root: Root, path: str) -> dict:
    with Toolbox(root) as box:
        return box.call("grep", {"pattern": "OUTSIDE", "path": path,
                                 "outputMode": "matches"})


def _assert_not_answered(answer: dict, out: str) -> None:
    # refused as a change during the call (typed, retryable), not a failure of the tool
    assert (answer["ok"], answer.get("code")) == (False, "STALE"), answer
    assert "OUTSIDE" not in repr(answer.get("matches")), answer
    assert not answer.get("files") and not answer.get("counts"), answer
    # the outside file is where the move left it, unchanged
    with open(os.path.join(out, "a", "b", "c", "f"), "rb") as fh:
        assert fh.read() == b"OUTSIDE"


@pytest.mark.parametrize("path", [".", "a", "a/b/c"])
def test_a_file_grep_reads_in_a_directory_moved_out_is_not_answered(make_root, tmp_path,
                                                                     path):
    """File by file (a backend that must see every call: the os backend's
    way, and the native one's under a wrapper)."""
    root_dir, out = _tree(str(tmp_path))
    backend = FaultBackend(backend_by_name(make_root.backend_name))
    root = Root(root_dir, backend=backend, fast_path=make_root.fast_path)
    hook = backend.add(Fault("open_at", None, name="f", hook=_file_dance(root_dir, out)))
    try:
        answer = _grep(root, path)
        assert hook.fired == 1, backend.fired  # moved just before f was opened
    finally:
        root.close()
    _assert_not_answered(answer, out)


class _MovingScanner:
    """The native scanner, the move run before its first batch (after the
    walk entered the directory and listed it)."""

    def __init__(self, inner: FileScan, move: Callable[[], None]) -> None:
        self._inner = inner
        self._move: list[Callable[[], None]] = [move]
        self.moved = 0

    def scan(self, dir_fd: int, names: bytes, offset: int, count: int
             ) -> tuple[list[int], int]:
        if self._move and b"f\0" in names:
            self._move.pop()()
            self.moved += 1
        return self._inner.scan(dir_fd, names, offset, count)


def _native_scanner_case(tmp_path, config, path):
    name, fast = config
    root_dir, out = _tree(str(tmp_path))
    native = type(backend_by_name(name))
    scanners: list[_MovingScanner] = []

    class Moving(native):  # type: ignore[misc,valid-type]
        def file_scanner(self, needle: bytes | None, *, sniff: int, keep_links: bool,
                         chunk: int) -> FileScan:
            scanner = _MovingScanner(super().file_scanner(needle, sniff=sniff,
                                                          keep_links=keep_links, chunk=chunk),
                                     _file_dance(root_dir, out))
            scanners.append(scanner)
            return scanner

    root = Root(root_dir, backend=Moving(), fast_path=fast)
    try:
        answer = _grep(root, path)
        assert sum(s.moved for s in scanners) == 1, answer  # moved just before c's batch
    finally:
        root.close()
    _assert_not_answered(answer, out)


if NATIVE_CONFIGS:  # none in the os-only lane (CORRAL_BACKEND=os): the main lane ran them
    test_a_file_the_native_scanner_reads_in_a_directory_moved_out_is_not_answered = \
        pytest.mark.parametrize("path", [".", "a", "a/b/c"])(
            pytest.mark.parametrize("config", [c for c, _ in NATIVE_CONFIGS],
                                    ids=[i for _, i in NATIVE_CONFIGS])(_native_scanner_case))


def _ignore_dance(root: str, out: str) -> Callable[[], None]:
    """``a`` out of the root; an outside ``.gitignore`` in place of ``c``'s."""
    def move() -> None:
        os.rename(os.path.join(root, "a"), os.path.join(out, "a"))
        os.rename(os.path.join(out, "a", "b", "c", ".gitignore"), os.path.join(out, "held"))
        os.rename(os.path.join(out, "outside-ignore"),
                  os.path.join(out, "a", "b", "c", ".gitignore"))
    return move


def test_a_gitignore_the_search_reads_in_a_directory_moved_out_is_not_applied(make_root,
                                                                              tmp_path):
    """The .gitignore of a directory entered is read by its name there as
    the walk lists it: the outside one swapped in says ``inner/``, which
    would leave ``inner``'s match out of the answer (a fact about the
    outside file).  Refused instead."""
    root_dir, out = _tree(str(tmp_path))
    os.mkdir(os.path.join(root_dir, ".git"))
    c = os.path.join(root_dir, "a", "b", "c")
    os.remove(os.path.join(c, "f"))
    with open(os.path.join(c, ".gitignore"), "w") as fh:
        fh.write("# nothing ignored\n")
    with open(os.path.join(c, "inner", "x"), "w") as fh:
        fh.write("inside\n")
    with open(os.path.join(out, "outside-ignore"), "w") as fh:
        fh.write("inner/\n")
    backend = FaultBackend(backend_by_name(make_root.backend_name))
    root = Root(root_dir, backend=backend, fast_path=make_root.fast_path)
    hook = backend.add(Fault("open_at", None, name=".gitignore",
                             hook=_ignore_dance(root_dir, out)))
    try:
        with Toolbox(root) as box:
            answer = box.call("grep", {"pattern": "inside", "path": ".",
                                       "outputMode": "files"})
        assert hook.fired == 1, backend.fired
    finally:
        root.close()
    assert (answer["ok"], answer.get("code")) == (False, "STALE"), answer


def _sibling_case(tmp_path, config, path):
    """As :func:`_native_scanner_case`, with a directory ``a/b/d`` after
    ``c``: the check of ``c`` (left, ``f`` read in it) rides on the step
    into ``d`` (one native call on the fast path), which must find ``c``
    outside and refuse, as the check alone would."""
    os.makedirs(os.path.join(str(tmp_path), "root", "a", "b", "d"))
    with open(os.path.join(str(tmp_path), "root", "a", "b", "d", "e"), "wb") as fh:
        fh.write(b"inside")
    _native_scanner_case(tmp_path, config, path)


if NATIVE_CONFIGS:
    test_a_directory_moved_out_is_refused_at_the_step_into_its_sibling = \
        pytest.mark.parametrize("path", [".", "a"])(
            pytest.mark.parametrize("config", [c for c, _ in NATIVE_CONFIGS],
                                    ids=[i for _, i in NATIVE_CONFIGS])(_sibling_case))
