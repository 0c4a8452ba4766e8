"""An independent red-team pass over the Toolbox's one boundary as the
front ends and adapters drive it: a call whose deadline passes, or which
the host cancels (``notifications/cancelled``, an agent framework
cancelling its task), while its refusal is being worked out.

``Toolbox.call`` never raises for anything a model can send; a refusal
for a missing path looks for what the model may have meant, under the
call's deadline and cancel tokens.  Past the deadline, or cancelled, in
that look, the call raised ``Refusal`` out of ``call`` (into the
framework running the tool; ``corral serve`` logged a traceback and
answered ``INTERNAL``).  And a call cancelled before it began made its
directory anyway.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from corral.tools import CancelToken, Toolbox

MISSES = [
    ("edit_file", {"path": "d1/nope/x.txt", "oldText": "x", "newText": "y"}),
    ("delete_file", {"path": "d3/nope"}),
    ("move_file", {"source": "zz", "destination": "yy"}),
    ("grep", {"pattern": "x", "path": "nope"}),
    ("read_file", {"path": "d7/g.txt"}),
    ("list_directory", {"path": "d8/nope"}),
    ("file_info", {"path": "d2/F.TXT"}),
]


def _tree(base: Path, dirs: int = 300) -> None:
    for n in range(dirs):  # 300: looking for a near name takes a while
        (base / f"d{n}").mkdir()
        (base / f"d{n}" / "f.txt").write_text("x\n")


@pytest.mark.parametrize("name,args", MISSES, ids=[n for n, _ in MISSES])
def test_a_deadline_passing_while_a_refusal_is_worked_out_is_answered(tmp_path, make_root,
                                                                      name, args):
    _tree(tmp_path)
    toolbox = Toolbox(make_root(str(tmp_path)))
    for timeout in (0.0, 1e-4, 1e-3, 5e-3):
        answer = toolbox.call(name, args, timeout=timeout)
        assert answer["ok"] is False, answer
        assert answer["code"] in ("NOT_FOUND", "TOO_LARGE"), answer
        if answer["code"] == "TOO_LARGE":
            assert answer["details"]["kind"] == "time_limit", answer


class _CancelledAfter(CancelToken):
    """A token that reads as cancelled from its ``reads``-th look on: the
    host's cancel landing at each point of a call in turn."""

    __slots__ = ("_left",)

    def __init__(self, reads: int) -> None:
        super().__init__()
        self._left = reads

    @property
    def cancelled(self) -> bool:
        self._left -= 1
        return self._left < 0


@pytest.mark.parametrize("name,args", MISSES, ids=[n for n, _ in MISSES])
def test_a_cancel_landing_while_a_refusal_is_worked_out_is_answered(tmp_path, make_root,
                                                                   name, args):
    _tree(tmp_path, 40)
    toolbox = Toolbox(make_root(str(tmp_path)))
    for reads in range(0, 30, 3):
        answer = toolbox.call(name, args, cancel=_CancelledAfter(reads))
        assert answer["ok"] is False, answer
        assert answer["code"] in ("NOT_FOUND", "DENIED"), answer
        if answer["code"] == "DENIED":
            assert answer["details"]["kind"] == "cancelled", answer


CHANGES = [
    ("make_directory", {"path": "made/deep"}),
    ("write_file", {"path": "new.txt", "content": "model\n"}),
    ("edit_file", {"path": "d0/f.txt", "oldText": "x", "newText": "y"}),
    ("move_file", {"source": "d1", "destination": "moved"}),
    ("delete_file", {"path": "d2/f.txt"}),
    ("apply_patch", {"input": "*** Begin Patch\n*** Add File: p.txt\n+x\n*** End Patch\n"}),
]


@pytest.mark.parametrize("name,args", CHANGES, ids=[n for n, _ in CHANGES])
def test_a_call_cancelled_before_it_begins_changes_nothing(tmp_path, make_root, name, args):
    for n in range(3):
        (tmp_path / f"d{n}").mkdir()
        (tmp_path / f"d{n}" / "f.txt").write_text("x\n")
    before = sorted((str(p.relative_to(tmp_path)), p.is_dir() or p.read_bytes())
                    for p in tmp_path.rglob("*"))
    toolbox = Toolbox(make_root(str(tmp_path)))
    token = CancelToken()
    token.cancel()
    answer = toolbox.call(name, args, cancel=token)
    assert answer["ok"] is False and answer["details"]["kind"] == "cancelled", answer
    after = sorted((str(p.relative_to(tmp_path)), p.is_dir() or p.read_bytes())
                   for p in tmp_path.rglob("*"))
    assert after == before
