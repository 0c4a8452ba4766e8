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

import os
import resource
from collections.abc import Iterator
from pathlib import Path

import pytest

from corral.tools import Toolbox

DEPTH = 1_100


@pytest.fixture
def usual_open_file_limit() -> Iterator[None]:
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (min(1024, hard), hard))
    try:
        yield
    finally:
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))


def _deep(base: Path) -> None:
    fd = os.open(base, os.O_RDONLY | os.O_DIRECTORY)
    try:
        for _ in range(DEPTH):
            os.mkdir("a", dir_fd=fd)
            inner = os.open("a", os.O_RDONLY | os.O_DIRECTORY, dir_fd=fd)
            os.close(fd)
            fd = inner
        os.close(os.open("f.txt", os.O_WRONLY | os.O_CREAT, 0o644, dir_fd=fd))
    finally:
        os.close(fd)


def _remove(base: Path) -> None:
    """Bottom-up by descriptor (shutil.rmtree's recursion stops near 1,000)."""
    fds = [os.open(base, os.O_RDONLY | os.O_DIRECTORY)]
    try:
        while True:
            names = os.listdir(fds[-1])
            if "a" in names and len(fds) < DEPTH + 2:
                fds.append(os.open("a", os.O_RDONLY | os.O_DIRECTORY, dir_fd=fds[-1]))
                continue
            for name in names:
                os.unlink(name, dir_fd=fds[-1])
            break
        while len(fds) > 1:
            os.close(fds.pop())
            os.rmdir("a", dir_fd=fds[-1])
    finally:
        for fd in fds:
            os.close(fd)


@pytest.mark.parametrize("destination", ["b", "deeper/b"])
def test_moving_a_folder_too_deep_to_walk_is_refused_typed(
        tmp_path: Path, make_root, usual_open_file_limit, destination: str) -> None:
    root = tmp_path / "root"
    root.mkdir()
    _deep(root)
    try:
        tools = Toolbox(make_root(str(root)))
        answer = tools.call("move_file", {"source": "a", "destination": destination})
        assert answer["ok"] is False, answer
        assert answer["code"] == "TOO_LARGE", answer
        assert (root / "a").is_dir() and not (root / "b").exists()
        assert tools.call("list_directory", {"path": "."})["ok"] is True
    finally:
        _remove(root)
