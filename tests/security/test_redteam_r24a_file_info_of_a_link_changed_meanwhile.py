"""An independent red-team pass (round twenty-four, first team):
``file_info`` of a symlink that is removed or replaced between the look at
the link and the look at where it leads (another program, or the model's
own ``delete_file`` or ``move_file`` of it sent in the same turn: the
battery of ``test_redteam_r24a_answers_agree_sent_at_once.py`` met it with
``file_info x`` beside ``delete_file x``; THREATS row 42).

The answer must be one the disk gave at some instant: the link as it was
(its kind, and where it leads as then), not found, or ``STALE``.  On main
the look at where it leads resolved the name again and described what it
found there as the link's target: ``"target": "x", "targetKind": "missing"``
for a link to ``t`` (a link to itself, which never was), a link into the
denied folder answered ``targetKind`` (``missing``, ``directory``) where
nothing of its target is told, or the new link's target (``tf``) given as
the old link's, beside the old link's mode and times.

The window is made every time: a ``FaultBackend`` hook runs the change
right after the first, second or third look at ``x`` succeeds (the look,
the description, the look at where it leads), on every backend config; the
link leads to a plain folder or into the denied ``vault`` (whose target is
never told).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import pytest

from corral.contained import Backend, Root, backend_by_name
from corral.testing.backends import FaultBackend
from corral.tools import Toolbox


class ChangedAfterLooks(FaultBackend):
    """``inner``, running ``change`` once right after the ``looks``-th call
    that succeeds on an entry named ``name`` (opened, looked at, its link
    read), once armed."""

    def __init__(self, inner: Backend, name: str, looks: int,
                 change: Callable[[], None]) -> None:
        super().__init__(inner)
        self._name = name
        self._looks = looks
        self._change = change
        self.armed = False
        self.changed = False

    def _looked(self, name: str) -> None:
        if self.armed and not self.changed and name.rstrip("/").rsplit("/", 1)[-1] == self._name:
            self._looks -= 1
            if self._looks == 0:
                self.changed = True
                self._change()

    def open_at(self, dir_fd: int, name: str, flags: int, mode: int = 0o666) -> int:
        fd = super().open_at(dir_fd, name, flags, mode)
        self._looked(name)
        return fd

    def openat2(self, dir_fd: int, path: str, flags: int, mode: int, resolve: int) -> int:
        fd = super().openat2(dir_fd, path, flags, mode, resolve)
        self._looked(path)
        return fd

    def lstat_at(self, dir_fd: int, name: str) -> os.stat_result:
        info = super().lstat_at(dir_fd, name)
        self._looked(name)
        return info

    def readlink_at(self, dir_fd: int, name: str) -> str:
        text = super().readlink_at(dir_fd, name)
        self._looked(name)
        return text


def _replace(link: Path, make: Callable[[Path], None]) -> Callable[[], None]:
    def change() -> None:
        spare = link.with_name("spare")
        make(spare)
        os.rename(spare, link)
    return change


CHANGES: dict[str, Callable[[Path], Callable[[], None]]] = {
    "removed": lambda link: lambda: os.unlink(link),
    "replaced_by_a_file": lambda link: _replace(link, lambda p: p.write_text("file\n")),
    "replaced_by_a_folder": lambda link: lambda: (os.unlink(link), os.mkdir(link)),
    "replaced_by_a_link_to_a_file": lambda link: _replace(link, lambda p: os.symlink("tf", p)),
}

#: what the link led to before the change: (its text, the target said, its kind)
LINKS = {"to_a_folder": ("t", "t", "directory"), "into_denied": ("vault/s", None, None)}


@pytest.mark.parametrize("looks", [1, 2, 3])
@pytest.mark.parametrize("link", list(LINKS))
@pytest.mark.parametrize("change", list(CHANGES))
def test_file_info_describes_one_state_of_the_link(tmp_path, make_root, link, change, looks):
    (tmp_path / "t").mkdir()
    (tmp_path / "vault" / "s").mkdir(parents=True)
    (tmp_path / "tf").write_text("a file\n")
    text, said, kind = LINKS[link]
    os.symlink(text, tmp_path / "x")
    backend = ChangedAfterLooks(backend_by_name(make_root.backend_name), "x", looks,
                                CHANGES[change](tmp_path / "x"))
    root = Root(str(tmp_path), backend=backend, fast_path=make_root.fast_path)
    try:
        with Toolbox(root, deny=["vault/**"]) as box:
            backend.armed = True
            answer = box.call("file_info", {"path": "x"})
    finally:
        root.close()
    assert backend.changed, "the change never ran"
    assert "vault" not in repr(answer), answer
    if not answer["ok"]:
        assert answer["code"] in ("NOT_FOUND", "STALE"), answer
        return
    if answer["kind"] == "symlink":
        # the link as it was: where it led then, or nothing where that is hidden
        assert answer.get("target") == said, answer
        assert answer.get("targetKind") == kind, answer
    else:
        # what is at the name now, described as itself
        assert "target" not in answer and "targetKind" not in answer, answer
