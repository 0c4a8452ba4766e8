"""A repository made by another program in a directory where the session
keeps editing a file: the plain edit may remember (while the watch reads
no event but the view's own replaces of other names) that no ``HEAD`` is
beside the file, so the next edit after the repository came must look
again and refuse, as when the repository was there at open.  The
repository comes between two edits (its events read with the view's own
replace in one read), by a rename of its ``HEAD`` into place, within a
burst of other changes too large for one read, or past a queue overflow;
and between the view's own edits of other files in that directory."""

from __future__ import annotations

import pytest

from corral.tools import Toolbox

from ..helpers import bare_repository, burst


def _edit(box: Toolbox, path: str, old: str, new: str) -> dict:
    return box.call("edit_file", {"path": path, "oldText": old, "newText": new})


@pytest.mark.parametrize("how", ["between-edits", "head-moved-in", "in-a-burst",
                                 "past-an-overflow"])
def test_a_repository_made_where_a_file_is_kept_edited_is_protected(tmp_path, make_root, how):
    (tmp_path / "r").mkdir()
    (tmp_path / "r" / "notes.txt").write_text("title\nnote 0\nend\n")
    box = Toolbox(make_root(str(tmp_path)))
    for i in range(3):  # the plain edit, again and again
        answer = _edit(box, "r/notes.txt", f"note {i}\n", f"note {i + 1}\n")
        assert answer["ok"] is True, answer
    if how == "in-a-burst":
        burst(tmp_path / "busy", 300)  # more than one read of the watch holds
    if how == "past-an-overflow":
        burst(tmp_path / "busy", 9000)  # past the 16,384 events the kernel queues
    bare_repository(tmp_path / "r", head_moved=how == "head-moved-in")
    answer = _edit(box, "r/notes.txt", "note 3\n", "[core]\n\thooksPath = /tmp/evil\n")
    assert answer["ok"] is False and answer["details"]["kind"] == "protected", answer
    assert (tmp_path / "r" / "notes.txt").read_text() == "title\nnote 3\nend\n"


def test_a_repository_made_while_the_view_edits_beside_it_is_protected(tmp_path, make_root):
    """Own replaces in the directory between the repository's events: each
    read holds the view's own events and another program's."""
    (tmp_path / "r").mkdir()
    for name in ("a.txt", "b.txt"):
        (tmp_path / "r" / name).write_text("head\nv0\ntail\n")
    box = Toolbox(make_root(str(tmp_path)))
    for name, old, new in (("a.txt", "v0", "v1"), ("b.txt", "v0", "v1"),
                           ("a.txt", "v1", "v2")):
        answer = _edit(box, f"r/{name}", f"{old}\n", f"{new}\n")
        assert answer["ok"] is True, answer
    (tmp_path / "r" / "HEAD").write_text("ref: refs/heads/main\n")
    answer = _edit(box, "r/b.txt", "v1\n", "v2\n")
    assert answer["ok"] is True, answer  # not a repository yet
    bare_repository(tmp_path / "r")
    answer = _edit(box, "r/a.txt", "v2\n", "evil\n")
    assert answer["ok"] is False and answer["details"]["kind"] == "protected", answer
    assert (tmp_path / "r" / "a.txt").read_text() == "head\nv2\ntail\n"
    for name in ("a.txt", "b.txt"):  # each time: the next edit of either is refused
        answer = _edit(box, f"r/{name}", "v2\n", "evil\n")
        assert answer["ok"] is False and answer["details"]["kind"] == "protected", answer
        assert (tmp_path / "r" / name).read_text() == "head\nv2\ntail\n"
