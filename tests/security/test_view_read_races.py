"""The read side decides on what it opened or resolved, once: a swap made
right after the file (or the link's target) was first reached changes
nothing that is read or said.

Each test swaps a name for a link into a denied directory (or to a
secret) the moment the tool's first system call on the file returns, on
every backend config, and checks that nothing of the denied or secret
file shows in the answer:

* ``read_file d/../f.txt``: the file opened is decided on, not the path
  resolved again afterwards (``d`` re-pointed from under ``private`` to
  under ``pub`` would make a second resolution say ``pub/f.txt``);
* ``grep`` of one file: searched from the fd the decision was made on
  (the name swapped for a link to ``.env`` after it was checked);
* ``file_info`` of a link: its target's kind is read in the directory the
  one resolution reached (the target's directory swapped for a link into
  ``private``);
* ``grep``'s note on UTF-16 files skipped as binary: the file opened again
  to look at its first bytes is decided on again (its directory swapped
  for a link into ``private``).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

from corral.contained import Backend, Root, backend_by_name
from corral.testing.backends import FaultBackend
from corral.tools import Toolbox

SECRET = "hunter2-password"


class SwapAfterFirstTouch(FaultBackend):
    """``inner``, running ``swap`` once, right after the first call that
    succeeds on an entry named ``name`` (opened, lstat-ed, its link read)
    once :attr:`armed` (the tool's call, not the Toolbox's scan at open)."""

    def __init__(self, inner: Backend, name: str, swap: Callable[[], None]) -> None:
        super().__init__(inner)
        self._name = name
        self._swap = swap
        self.swapped = False
        self.armed = False

    def _touched(self, name: str) -> None:
        if self.armed and not self.swapped and name.rstrip("/").rsplit("/", 1)[-1] == self._name:
            self.swapped = True
            self._swap()

    def open_at(self, dir_fd: int, name: str, flags: int, mode: int = 0o666) -> int:
        fd = super().open_at(dir_fd, name, flags, mode)
        self._touched(name)
        return fd

    def openat2(self, dir_fd: int, path: str, flags: int, mode: int, resolve: int) -> int:
        fd = super().openat2(dir_fd, path, flags, mode, resolve)
        self._touched(path)
        return fd

    def lstat_at(self, dir_fd: int, name: str) -> os.stat_result:
        info = super().lstat_at(dir_fd, name)
        self._touched(name)
        return info

    def readlink_at(self, dir_fd: int, name: str) -> str:
        text = super().readlink_at(dir_fd, name)
        self._touched(name)
        return text


def _write(path: Path, data: str | bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(data, str):
        path.write_text(data)
    else:
        path.write_bytes(data)


def _relink(link: Path, to: str) -> Callable[[], None]:
    """Re-point the link ``link`` at ``to`` (one rename: never absent)."""
    def swap() -> None:
        spare = link.with_name(link.name + ".new")
        os.symlink(to, spare)
        os.rename(spare, link)
    return swap


def _replace_with_link(entry: Path, to: str) -> Callable[[], None]:
    """Move ``entry`` aside and put a link to ``to`` in its place."""
    def swap() -> None:
        os.rename(entry, entry.with_name(entry.name + "-old"))
        os.symlink(to, entry)
    return swap


def _call(tmp_path: Path, make_root, backend: SwapAfterFirstTouch, tool: str,
          args: dict, **options) -> dict:
    root = Root(str(tmp_path), backend=backend, fast_path=make_root.fast_path)
    try:
        with Toolbox(root, **options) as box:
            backend.armed = True
            return box.call(tool, args)
    finally:
        root.close()


def _inner(make_root) -> Backend:
    return backend_by_name(make_root.backend_name)


def test_read_file_decides_on_the_file_it_opened_not_the_path_resolved_again(
        tmp_path, make_root):
    _write(tmp_path / "private" / "f.txt", f"db = {SECRET}\n")
    (tmp_path / "private" / "inner").mkdir()
    _write(tmp_path / "pub" / "f.txt", "nothing to see\n")
    (tmp_path / "pub" / "inner").mkdir()
    os.symlink("private/inner", tmp_path / "d")
    backend = SwapAfterFirstTouch(_inner(make_root), "f.txt",
                                  _relink(tmp_path / "d", "pub/inner"))
    answer = _call(tmp_path, make_root, backend, "read_file", {"path": "d/../f.txt"},
                   deny=["private/**"])
    assert backend.swapped, "the swap never ran"
    assert SECRET not in repr(answer), answer
    assert answer["ok"] is False and answer["code"] == "DENIED", answer


def test_grep_of_one_file_searches_the_file_it_decided_on(tmp_path, make_root):
    _write(tmp_path / ".env", f"TOKEN={SECRET}\n")
    _write(tmp_path / "a.txt", "plain words\n")
    backend = SwapAfterFirstTouch(_inner(make_root), "a.txt",
                                  _replace_with_link(tmp_path / "a.txt", ".env"))
    answer = _call(tmp_path, make_root, backend, "grep", {"pattern": "TOKEN", "path": "a.txt"})
    assert backend.swapped, "the swap never ran"
    assert SECRET not in repr(answer), answer
    if answer["ok"]:
        assert answer["matches"] == [], answer
    else:
        assert answer["code"] in ("DENIED", "STALE"), answer


def test_file_info_of_a_link_describes_its_target_where_resolution_reached(
        tmp_path, make_root):
    _write(tmp_path / "pub" / "x", "a file\n")
    (tmp_path / "private" / "x").mkdir(parents=True)  # a directory: its kind would show
    os.symlink("pub/x", tmp_path / "l")
    backend = SwapAfterFirstTouch(_inner(make_root), "x",
                                  _replace_with_link(tmp_path / "pub", "private"))
    answer = _call(tmp_path, make_root, backend, "file_info", {"path": "l"},
                   deny=["private/**"])
    assert backend.swapped, "the swap never ran"
    assert answer["ok"], answer
    assert answer["kind"] == "symlink", answer
    # what pub/x was when resolution reached it, or nothing: never private/x's kind
    assert answer.get("targetKind") in ("file", None), answer
    assert "private" not in repr(answer), answer


def test_grep_looks_again_at_a_skipped_file_only_where_the_policy_allows(
        tmp_path, make_root):
    _write(tmp_path / "d" / "sub" / "x.bin", b"\x00\x01\x02 binary")
    _write(tmp_path / "private" / "x.bin", b"\xff\xfe" + SECRET.encode("utf-16-le"))
    backend = SwapAfterFirstTouch(_inner(make_root), "x.bin",
                                  _replace_with_link(tmp_path / "d" / "sub", "../private"))
    answer = _call(tmp_path, make_root, backend, "grep", {"pattern": "anything", "path": "d"},
                   deny=["private/**"])
    assert backend.swapped, "the swap never ran"
    assert answer["ok"], answer
    assert "encodings" not in answer, answer
    assert "UTF-16" not in answer.get("note", ""), answer
