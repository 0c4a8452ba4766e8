"""An independent red-team pass (round twenty-four, first team): a final
name that is a symlink when the walk opens it (``O_NOFOLLOW``: ``ELOOP``)
and is gone, a directory or a file by the time the walk looks again to
follow it (another program removing or replacing it; THREATS row 41).

No symlink loop was ever there, and no more than one link: the answer must
be what the name is now (the directory, the file, not found), never
``UNSUPPORTED`` kind ``symlink_loop``.  The walk's open of an intermediate
directory already opens again what is there now (``Walk._enter``); the
final open (``_acts.open_final``) took the link's absence as the loop.

The window is made to happen every time: a ``FaultBackend`` hook runs the
change right after the open of the name fails, on every backend config
(the openat2 configs meet it in the walk they fall back to once the
spelled open, which follows no link, fails on the link).
The link leads to a plain directory or into a denied one: the answer is
the same for both.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import pytest

from corral.contained import Backend, Root, backend_by_name
from corral.testing.backends import FaultBackend
from corral.tools import Toolbox


class ChangedAfterFailedOpen(FaultBackend):
    """``inner``, running ``change`` once, right after the walk's open of
    ``name`` fails (its ``O_NOFOLLOW`` open meeting the link), once armed
    (an ``openat2`` failing first, on the configs that have it, falls back
    to the walk: the change waits for the walk's own open)."""

    def __init__(self, inner: Backend, name: str, change: Callable[[], None]) -> None:
        super().__init__(inner)
        self._name = name
        self._change = change
        self.armed = False
        self.changed = False

    def _failed(self, name: str) -> None:
        if self.armed and not self.changed and name.rstrip("/").rsplit("/", 1)[-1] == self._name:
            self.changed = True
            self._change()

    def open_at(self, dir_fd: int, name: str, flags: int, mode: int = 0o666) -> int:
        try:
            return super().open_at(dir_fd, name, flags, mode)
        except OSError:
            self._failed(name)
            raise


def _tree(base: Path, link: str, to: str) -> None:
    for place in ("vault/s", "t"):
        (base / place).mkdir(parents=True)
        (base / place / "k.txt").write_text("alpha\n")
    os.symlink(to, base / link)


NOW = {
    "gone": lambda link: os.unlink(link),
    "directory": lambda link: (os.unlink(link), os.mkdir(link)),
    "file": lambda link: (os.unlink(link), link.write_text("alpha now\n")),
}

CALLS = [("read_file", lambda p: {"path": p}),
         ("read_files", lambda p: {"paths": [p]}),
         ("grep", lambda p: {"pattern": "alpha", "path": p})]

LINKS = [("l", "t"), ("lv", "vault/s")]


def _answer(base: Path, make_root, link: str, now: str, tool: str, args: dict) -> tuple[dict, bool]:
    backend = ChangedAfterFailedOpen(backend_by_name(make_root.backend_name), link,
                                     lambda: NOW[now](base / link))
    root = Root(str(base), backend=backend, fast_path=make_root.fast_path)
    try:
        with Toolbox(root, deny=["vault/**"]) as box:
            backend.armed = True
            answer = box.call(tool, args)
    finally:
        root.close()
    if tool == "read_files" and answer.get("ok"):
        answer = answer["files"][0]
    return answer, backend.changed


@pytest.mark.parametrize("link, to", LINKS, ids=[name for name, _ in LINKS])
@pytest.mark.parametrize("now", list(NOW))
@pytest.mark.parametrize("tool, make_args", CALLS, ids=[name for name, _ in CALLS])
def test_the_answer_is_what_the_name_is_now_never_a_loop(tmp_path, make_root, link, to, now,
                                                          tool, make_args):
    _tree(tmp_path, link, to)
    answer, changed = _answer(tmp_path, make_root, link, now, tool, make_args(link))
    assert changed, "the change never ran"
    assert "loop" not in repr(answer), answer
    if now == "gone":
        assert answer["ok"] is False and answer["code"] == "NOT_FOUND", answer
    elif now == "directory":
        if tool == "grep":
            assert answer["ok"] is True and answer["matches"] == [], answer
        else:
            assert answer["ok"] is False and answer["code"] == "INVALID_ARGUMENT", answer
            assert answer["details"]["kind"] == "directory", answer
    else:
        assert answer["ok"] is True, answer
        if tool == "grep":
            assert [m["text"] for m in answer["matches"]] == ["alpha now"], answer
        else:
            assert "alpha now" in answer["content"], answer
