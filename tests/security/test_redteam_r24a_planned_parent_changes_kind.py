"""An independent red-team pass (round twenty-four, first team; held, kept
for the shapes): a directory a call plans to make (``make_directory a/b/c``,
``write_file a/b/f.txt``, ``make_directory a/b``, ``move_file x.txt ->
a/b/y.txt``) is made first by another program, just before the call's own
``mkdir`` of ``b`` (a ``FaultBackend`` hook), as a directory, a file, a link
to a plain directory, or a link to ``e``, the folder ``.vscode`` leads to
(so ``a/b/tasks.json`` would be VS Code's).

The answer must agree with the disk: ``ok`` only where the call's own
entries are there, and ``createdDirectories`` never names the directory the
other program made; otherwise a refusal, nothing of the call made; never
anything made through a link (``t/c``, ``e/c``, ``e/tasks.json``: a
``mkdir`` following the planted link), never ``INTERNAL``.  Every backend
config.  Held on main (kept: it would catch a walk that follows a link
planted at a name it planned, or an answer claiming the other program's
directory as made).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import pytest

from corral.contained import Backend, Root, backend_by_name
from corral.testing.backends import FaultBackend
from corral.tools import Toolbox


class BeforeMake(FaultBackend):
    """``inner``, running ``plant`` once just before the first ``mkdir`` of
    ``name`` (either way the walk makes a directory), once armed."""

    def __init__(self, inner: Backend, name: str, plant: Callable[[], None]) -> None:
        super().__init__(inner)
        self._name = name
        self._plant = plant
        self.armed = False
        self.planted = False

    def _before(self, name: str) -> None:
        if self.armed and not self.planted and name == self._name:
            self.planted = True
            self._plant()

    def mkdir_at(self, dir_fd: int, name: str, mode: int) -> None:
        self._before(name)
        super().mkdir_at(dir_fd, name, mode)

    def create_directory_at(self, dir_fd: int, name: str, mode: int) -> int:
        self._before(name)
        return super().create_directory_at(dir_fd, name, mode)


PLANTS: dict[str, Callable[[Path], None]] = {
    "directory": lambda b: b.mkdir(),
    "file": lambda b: b.write_text("the other program's\n"),
    "link_to_a_directory": lambda b: os.symlink("../t", b),
    "link_to_what_vscode_leads_to": lambda b: os.symlink("../e", b),
}

CALLS = {
    "make_directory_below": ("make_directory", {"path": "a/b/c"}, ["a/b/c"]),
    "write_file_below": ("write_file", {"path": "a/b/tasks.json", "content": "{}\n"},
                         ["a/b/tasks.json"]),
    "make_directory_itself": ("make_directory", {"path": "a/b"}, []),
    "move_file_below": ("move_file", {"source": "x.txt", "destination": "a/b/tasks.json"},
                        ["a/b/tasks.json"]),
}


def _tree(base: Path) -> None:
    for folder in ("a", "t", "e"):
        (base / folder).mkdir()
    os.symlink("e", base / ".vscode")
    (base / "x.txt").write_text("{}\n")


def _snapshot(base: Path) -> set[str]:
    return {os.path.relpath(os.path.join(top, name), base)
            for top, dirs, files in os.walk(base) for name in dirs + files}


@pytest.mark.parametrize("plant", list(PLANTS))
@pytest.mark.parametrize("call", list(CALLS))
def test_what_another_program_made_first_is_never_claimed_nor_followed(tmp_path, make_root,
                                                                        plant, call):
    _tree(tmp_path)
    tool, args, made = CALLS[call]
    backend = BeforeMake(backend_by_name(make_root.backend_name), "b",
                         lambda: PLANTS[plant](tmp_path / "a" / "b"))
    root = Root(str(tmp_path), backend=backend, fast_path=make_root.fast_path)
    try:
        with Toolbox(root) as box:
            backend.armed = True
            answer = box.call(tool, args)
    finally:
        root.close()
    assert backend.planted, "the other program never ran"
    after = _snapshot(tmp_path)
    # nothing ever made through the planted link
    assert not {"t/c", "t/tasks.json", "e/c", "e/tasks.json"} & after, (answer, sorted(after))
    assert answer.get("code") != "INTERNAL", answer
    if answer["ok"]:
        assert "a/b" not in answer.get("createdDirectories", []), answer
        for entry in made:
            assert entry in after, (answer, sorted(after))
        assert plant == "directory", answer  # only a directory can stand for the one planned
    else:
        assert not any(entry in after for entry in made), (answer, sorted(after))
        if tool == "move_file":
            assert (tmp_path / "x.txt").exists(), answer
