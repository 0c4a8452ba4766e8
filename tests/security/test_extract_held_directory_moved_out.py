"""THREATS rows 35 and 35b's dance between two members written in one
directory by ``Root.extract``, on every backend config.

The extraction writes ``a/b/c/x1``, then (through the ``progress``
callback, as another program could at any moment) ``a`` is renamed out of
the root and an outside directory ``s`` is put in place of ``c``; then come
``a/b/c/x2`` and ``a/b/c/x3`` and a file at the top.  Whatever order the
extraction acts in (each member resolved again, or the directory ``x1`` was
written in kept open), no member is reported landed unless its file is
beneath the root at its landed path with the member's data, nothing is
written in the outside directory swapped in, and every member is either
landed or refused.  Moved out and back before the next member, the
members all land inside.
"""

from __future__ import annotations

import io
import os
import tarfile
from collections.abc import Callable
from pathlib import Path

from corral.contained import Extraction, ExtractProgress, ExtractReason

from .helpers.walk_dance import OUTSIDE_ONLY, dance, tree

_FILES = {"a/b/c/x1": b"one", "a/b/c/x2": b"two", "a/b/c/x3": b"three", "top": b"top"}


def _archive() -> io.BytesIO:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w", format=tarfile.PAX_FORMAT) as tf:
        for name, data in _FILES.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tf.addfile(info, io.BytesIO(data))
    buf.seek(0)
    return buf


def _snapshot(base: Path) -> dict[str, bytes | None]:
    return {str(p.relative_to(base)): None if p.is_dir() else p.read_bytes()
            for p in sorted(base.rglob("*"))}


def _after_x1(move: Callable[[], None]) -> Callable[[ExtractProgress], None]:
    def meddle(step: ExtractProgress) -> None:
        if step.message == "a/b/c/x1":
            move()
    return meddle


def _landed_inside(root: str, result: Extraction, moved_since: str = "") -> set[str]:
    """The members landed, each checked beneath the root at its landed path
    (but ``moved_since``, which moved out with its directory after it was
    written and shown beneath: the capability's own case)."""
    landed = {one.name: one.path for one in result.landed}
    refused = {one.name for one in result.refused}
    assert set(landed) | refused == set(_FILES) and not set(landed) & refused
    for name, path in landed.items():
        if name != moved_since:
            assert Path(root, path).read_bytes() == _FILES[name], name
    return set(landed)


def test_a_directory_moved_out_between_two_members_is_never_reported_written(
        tmp_path, make_root):
    root, out = tree(str(tmp_path))
    s = Path(out, "s")
    outside = _snapshot(s)
    with make_root(root) as contained:
        result = contained.extract(_archive(), progress=_after_x1(dance(root, out)))
    landed = _landed_inside(root, result, moved_since="a/b/c/x1")
    assert {"a/b/c/x1", "top"} <= landed  # x1 was beneath after it was written
    assert Path(out, "held", "x1").read_bytes() == _FILES["a/b/c/x1"]
    for refused in result.refused:
        assert refused.reason is ExtractReason.OUTSIDE, refused
    # what reached the directory moved out after x1 is reported refused, every one
    reached = set(os.listdir(Path(out, "held"))) - {"f", "inner", "x1"}
    assert {f"a/b/c/{name}" for name in reached} <= {one.name for one in result.refused}
    # the outside directory swapped in for c got nothing
    swapped_in = Path(out, "a", "b", "c")
    assert sorted(os.listdir(swapped_in)) == sorted(OUTSIDE_ONLY)
    assert _snapshot(swapped_in) == outside


def test_a_directory_moved_out_and_back_between_two_members_keeps_them_all(
        tmp_path, make_root):
    root, out = tree(str(tmp_path))

    def out_and_back() -> None:
        os.rename(os.path.join(root, "a"), os.path.join(out, "a"))
        os.rename(os.path.join(out, "a"), os.path.join(root, "a"))

    with make_root(root) as contained:
        result = contained.extract(_archive(), progress=_after_x1(out_and_back))
    assert result.ok, result.refused
    assert _landed_inside(root, result) == set(_FILES)
