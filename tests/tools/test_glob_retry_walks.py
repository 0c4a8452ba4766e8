"""A glob that finds nothing walks the tree once when no directory it names
is shown: the retry's probe for such directories (``pattern/``) would walk
the same directories, decided the same way, so the first walk's answer
stands for it (counted system calls, deterministic; every backend)."""

from __future__ import annotations

from pathlib import Path

import pytest

from corral.contained import Root, available_backends, backend_by_name
from corral.testing.backends import CountingBackend
from corral.tools import Toolbox

HOSTILE = "**/a/**/a/**/a/b"


def _chains(base: Path) -> None:
    for chain in range(3):
        here = base / f"c{chain}"
        for _ in range(8):
            here = here / "a"
            here.mkdir(parents=True)
            (here / "f.txt").write_text("x\n")


def _syscalls(base: Path, backend_name: str, pattern: str, deny: list[str]) -> tuple[int, dict]:
    backend = CountingBackend(backend_by_name(backend_name))
    with Toolbox(Root(str(base), backend=backend), deny=deny) as box:
        box.call("glob", {"pattern": pattern})  # warm: the ignore files above, the watch
        with backend.counting() as tally:
            answer = box.call("glob", {"pattern": pattern})
    return tally.syscalls, answer


@pytest.mark.parametrize("backend_name", available_backends())
@pytest.mark.parametrize("deny", [[], ["c1/"]])
def test_nothing_found_and_no_directory_named_walks_once(tmp_path, backend_name, deny):
    _chains(tmp_path)
    # the same directories walked once for directories only: no retry follows it
    once, dirs = _syscalls(tmp_path, backend_name, HOSTILE + "/", deny)
    count, answer = _syscalls(tmp_path, backend_name, HOSTILE, deny)
    assert answer["ok"] and answer["paths"] == [] and dirs["paths"] == []
    assert "suggestedArgs" not in answer
    assert count == once, (count, once)


@pytest.mark.parametrize("backend_name", available_backends())
def test_a_directory_named_is_still_suggested(tmp_path, backend_name):
    _chains(tmp_path)
    (tmp_path / "c2" / "a" / "a" / "b").mkdir()
    (tmp_path / "c2" / "a" / "a" / "b" / "g.txt").write_text("x\n")
    _, answer = _syscalls(tmp_path, backend_name, "**/a/**/a/b", [])
    assert answer["paths"] == []
    assert answer["suggestedArgs"] == {"pattern": "**/a/**/a/b/**"}
    assert answer["diagnosis"] == "directory"
    # hidden by the host's rules: no directory shown, nothing suggested
    _, hidden = _syscalls(tmp_path, backend_name, "**/a/**/a/b", ["c2/a/a/b/"])
    assert hidden["paths"] == [] and "suggestedArgs" not in hidden
