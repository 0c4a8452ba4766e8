"""A repository made by another program in a directory where the session
keeps writing a file: the plain write remembers (while the watch reads no
event but the view's own replaces of other names) that no ``HEAD`` is
beside the file, so the next write after the repository came must look
again and refuse, as when the repository was there at open.  The
repository comes between two writes (its events read with the view's own
replace in one read), by a rename of its ``HEAD`` into place, within a
burst of other changes too large for one read, or past a queue overflow."""

from __future__ import annotations

import pytest

from corral.tools import Toolbox

from ..helpers import bare_repository, burst


def _write(box: Toolbox, content: str) -> dict:
    return box.call("write_file", {"path": "r/notes.txt", "content": content,
                                   "overwrite": True})


@pytest.mark.parametrize("how", ["between-writes", "head-moved-in", "in-a-burst",
                                 "past-an-overflow"])
def test_a_repository_made_where_a_file_is_kept_written_is_protected(tmp_path, make_root,
                                                                     how):
    (tmp_path / "r").mkdir()
    (tmp_path / "r" / "notes.txt").write_text("first\n")
    box = Toolbox(make_root(str(tmp_path)))
    for i in range(3):  # the plain write, again and again: no HEAD there, remembered
        assert _write(box, f"note {i}\n")["ok"] is True
    if how == "in-a-burst":
        burst(tmp_path / "busy", 300)  # more than one read of the watch holds
    if how == "past-an-overflow":
        burst(tmp_path / "busy", 9000)  # past the 16,384 events the kernel queues
    bare_repository(tmp_path / "r", head_moved=how == "head-moved-in")
    answer = _write(box, "[core]\n\thooksPath = /tmp/evil\n")
    assert answer["ok"] is False and answer["details"]["kind"] == "protected", answer
    assert (tmp_path / "r" / "notes.txt").read_text() == "note 2\n"


def test_a_repository_made_while_the_view_writes_beside_it_is_protected(tmp_path, make_root):
    """Own replaces in the directory between the repository's events: each
    read holds the view's own events and another program's."""
    (tmp_path / "r").mkdir()
    for name in ("a.txt", "b.txt"):
        (tmp_path / "r" / name).write_text("first\n")
    box = Toolbox(make_root(str(tmp_path)))
    for name in ("a.txt", "b.txt", "a.txt"):
        assert box.call("write_file", {"path": f"r/{name}", "content": "x\n",
                                       "overwrite": True})["ok"] is True
    (tmp_path / "r" / "HEAD").write_text("ref: refs/heads/main\n")
    assert box.call("write_file", {"path": "r/b.txt", "content": "y\n",
                                   "overwrite": True})["ok"] is True  # not a repository yet
    bare_repository(tmp_path / "r")
    answer = box.call("write_file", {"path": "r/a.txt", "content": "evil\n", "overwrite": True})
    assert answer["ok"] is False and answer["details"]["kind"] == "protected", answer
    assert (tmp_path / "r" / "a.txt").read_text() == "x\n"
