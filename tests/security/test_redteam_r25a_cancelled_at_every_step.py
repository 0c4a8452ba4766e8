"""An independent red-team pass (round twenty-five, first team; found
nothing, kept as a guard): a call cancelled at each of its steps.

An agent framework cancels a turn's tasks when it gives up on them
(``acall``'s task cancelled sets the call's token), and a host's own
token may be cancelled at any instant.  Here the token is cancelled just
before the call's n-th system call through the backend, for every n the
call makes: a patch of four sections (an update, a new file whose parent
folders it makes, a move into a new folder, a deletion; its steps take
the tree lock exclusively, lock three folders, ask, write, rename and
remove).  Each time the call answers either as done (the
disk as the uncancelled call leaves it) or ``DENIED`` kind ``cancelled``
with the disk as it was: nothing half done, no temporary file left, and
the next calls on the same Toolbox (a write, a move) are answered at once,
so no lock was kept.  On every backend config.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

from corral.contained import Root, backend_by_name
from corral.tools import CancelToken, Toolbox

from .helpers.disk import entries

PATCH = ("*** Begin Patch\n*** Update File: a.txt\n@@\n-alpha\n+ALPHA\n"
         "*** Add File: new/deep/n.txt\n+n\n"
         "*** Update File: b.txt\n*** Move to: moved/b2.txt\n@@\n-beta\n+BETA\n"
         "*** Delete File: c.txt\n*** End Patch\n")


class _CancelAtCall:
    """A backend that cancels ``token`` just before its ``at``-th call."""

    def __init__(self, inner: Any) -> None:
        self._inner = inner
        self.made = 0
        self.at: int | None = None
        self.token: CancelToken | None = None

    def __getattr__(self, name: str) -> Any:
        value = getattr(self._inner, name)
        if name.startswith("_") or not callable(value):
            return value

        def counted(*args: Any, **kwargs: Any) -> Any:
            self.made += 1
            if self.made == self.at and self.token is not None:
                self.token.cancel()
            return value(*args, **kwargs)
        return counted


def _tree(base: Path) -> None:
    base.mkdir()
    (base / "a.txt").write_text("alpha\n")
    (base / "b.txt").write_text("beta\n")
    (base / "c.txt").write_text("gamma\n")
    (base / "d" / "sub").mkdir(parents=True)
    (base / "d" / "sub" / "f").write_text("f\n")


def _call(base: Path, make_root, tool: str, args: dict[str, Any],
          at: int | None) -> tuple[dict[str, Any], int, Callable[[], list[dict[str, Any]]]]:
    backend = _CancelAtCall(backend_by_name(make_root.backend_name))
    root = Root(str(base), backend=backend, fast_path=make_root.fast_path)
    box = Toolbox(root)
    token = CancelToken()
    backend.token, backend.at = token, at
    answer = box.call(tool, args, cancel=token, timeout=10)
    made = backend.made
    backend.at = None

    def next_calls() -> list[dict[str, Any]]:
        try:
            return [box.call("write_file", {"path": "next.txt", "content": "n\n"}, timeout=5),
                    box.call("move_file", {"source": "next.txt", "destination": "next2.txt"},
                             timeout=5)]
        finally:
            root.close()
    return answer, made, next_calls


def test_a_patch_cancelled_before_any_of_its_system_calls(tmp_path, make_root):
    tool, args = "apply_patch", {"input": PATCH}
    whole = tmp_path / "whole"
    _tree(whole)
    answer, made, next_calls = _call(whole, make_root, tool, args, None)
    done = entries(whole)
    assert all(one["ok"] for one in next_calls())
    assert answer["ok"], answer
    assert made > 10, made  # the backend was the one the call used
    for at in range(1, made + 1):
        base = tmp_path / f"at{at}"
        _tree(base)
        before = entries(base)
        answer, _, next_calls = _call(base, make_root, tool, args, at)
        after = entries(base)
        if answer["ok"]:
            assert after == done, (at, answer)
        else:
            assert (answer["code"], answer["details"]["kind"]) == ("DENIED", "cancelled"), \
                (at, answer)
            assert after == before, (at, answer)
        assert not [name for name in after if ".corral-tmp" in str(name)], (at, after)
        following = next_calls()
        assert all(one["ok"] for one in following), (at, following)
        assert not os.path.exists(base / "next.txt")
