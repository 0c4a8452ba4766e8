"""An independent red-team pass over ``RootPath`` as an embedder uses it,
on input an attacker shapes: a directory tree deeper than Python's
recursion limit (made by anyone who can write in the root, one ``mkdir`` at
a time), a path of that many components, a glob pattern of that many.

Every call must answer as its ``pathlib`` counterpart would on a shallow
tree, or raise an ``OSError``: never ``RecursionError`` (a
``RuntimeError``), and never leave half a copy behind.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator

import pytest

from corral.contained import RootPath

from ..helpers import deep_tree


_HEADROOM = 150  # frames a call may use whatever the depth (root calls, pathlib, the backend)
DEPTH = 250  # directories, path components, pattern parts: past the limit below


@pytest.fixture(autouse=True)
def _low_recursion_limit() -> Iterator[None]:
    """A recursion limit ``_HEADROOM`` frames above this test's own depth,
    so a call that recurses once per directory or component fails at
    ``DEPTH`` (as it would at ~1,000 under the default limit, on trees
    that take far longer to make and walk)."""
    frame, here = sys._getframe(), 0
    while frame is not None:
        frame, here = frame.f_back, here + 1
    saved = sys.getrecursionlimit()
    sys.setrecursionlimit(here + _HEADROOM)
    try:
        yield
    finally:
        sys.setrecursionlimit(saved)


def _depth() -> int:
    return DEPTH


def test_copy_of_a_tree_deeper_than_the_recursion_limit(tmp_path, make_root):
    depth = _depth()
    deep_tree(tmp_path, depth)
    root = make_root(str(tmp_path))
    copied = RootPath(root, "a").copy("c")
    assert copied == RootPath(root, "c")
    leaf = "c/" + "a/" * (depth - 1) + "f.txt"
    assert root.stat(leaf).st_size == 0
    assert sum(1 for _ in root.walk("c")) == depth


def test_mkdir_parents_of_a_path_deeper_than_the_recursion_limit(tmp_path, make_root):
    depth = _depth()
    root = make_root(str(tmp_path))
    path = RootPath(root, "m/" * depth)
    path.mkdir(parents=True)
    assert path.is_dir()
    path.mkdir(parents=True, exist_ok=True)  # all there: nothing to make


def test_glob_of_a_pattern_with_more_parts_than_the_recursion_limit(tmp_path, make_root):
    (tmp_path / "d").mkdir()
    (tmp_path / "d" / "x.txt").write_text("x\n")
    root = make_root(str(tmp_path))
    pairs = DEPTH // 2
    pattern = "d/../" * pairs + "d/*.txt"
    found = list(RootPath(root, ".").glob(pattern))
    assert [str(p) for p in found] == ["d/../" * pairs + "d/x.txt"]
