"""An independent red-team pass over ``move_file`` of a folder nested
deeper than the process may hold directories open: before a folder moves,
the view walks it for what it carries (protected, denied or secret names,
a git repository), one descriptor held per level; a folder 1,100 levels
deep (a model makes one with one ``make_directory`` call) under the usual
soft limit of 1,024 open files ran the process out of descriptors and the
move was answered ``INTERNAL`` with a traceback in the log.  What cannot be
checked is refused, typed, and nothing moves; on every backend config.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from corral.tools import Toolbox

from ..helpers import deep_tree

DEPTH = 1_100


def _remove(base: Path) -> None:
    """The chain lifted one level at a time (``shutil.rmtree``, pytest's
    cleanup included, recurses a frame a level and fails on it; holding a
    descriptor a level fails under the limit the test sets)."""
    top = base / "a"
    while top.is_dir():
        if (top / "a").is_dir():
            (top / "a").rename(base / "lifted")
            for entry in top.iterdir():
                entry.unlink()
            top.rmdir()
            (base / "lifted").rename(top)
        else:
            for entry in top.iterdir():
                entry.unlink()
            top.rmdir()
    for entry in base.iterdir():  # what a move made beside it
        if entry.is_dir() and entry.name != "a":
            _remove_shallow(entry)


def _remove_shallow(path: Path) -> None:
    for entry in path.iterdir():
        if entry.is_dir():
            _remove_shallow(entry)
        else:
            entry.unlink()
    path.rmdir()


@pytest.mark.parametrize("destination", ["b", "deeper/b"])
def test_moving_a_folder_too_deep_to_walk_is_refused_typed(
        tmp_path: Path, make_root, usual_open_file_limit, destination: str) -> None:
    root = tmp_path / "root"
    root.mkdir()
    deep_tree(root, DEPTH)
    try:
        tools = Toolbox(make_root(str(root)))
        answer = tools.call("move_file", {"source": "a", "destination": destination})
        assert answer["ok"] is False, answer
        assert answer["code"] == "TOO_LARGE", answer
        assert (root / "a").is_dir() and not (root / "b").exists()
        assert tools.call("list_directory", {"path": "."})["ok"] is True
    finally:
        _remove(root)
