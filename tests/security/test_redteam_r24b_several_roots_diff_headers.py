"""An independent red-team pass (round twenty-four, second team) over the
paths a Workspace of several roots answers: every path field named its
root (``web/src/a.py``), but the unified diff ``edit_file`` answers kept
the root-relative header (``--- a/src/a.py`` / ``+++ b/src/a.py``), which
names a file of the same path in every root: a model reading the diff
(the envelope's ``diff``, a client's structured content) could take an
edit of ``web``'s file for one of ``api``'s, and the header disagreed with
the answer's ``path``.

The header now names the path as the answer does, root first, for an
edit and a dry run, through a link (the header names the path asked, as
with one root), for a path spelled with ``./`` or doubled slashes.
Every backend config.
"""

from __future__ import annotations

import pytest

from corral.tools import Toolbox, Workspace

SPELLINGS = ("web/src/a.py", "./web/src/a.py", "web//src/a.py", "web/./src/a.py", "web/link.py")


@pytest.fixture
def workspace(tmp_path, make_root):
    for name in ("web", "api"):
        (tmp_path / name / "src").mkdir(parents=True)
        (tmp_path / name / "src" / "a.py").write_text("x = 1\ny = 2\n")
    (tmp_path / "web" / "link.py").symlink_to("src/a.py")
    boxes = {name: Toolbox(make_root(str(tmp_path / name))) for name in ("web", "api")}
    with Workspace(boxes) as workspace:
        yield workspace


def _header(diff: str) -> list[str]:
    return diff.split("\n")[:2]


@pytest.mark.parametrize("dry_run", [True, False])
@pytest.mark.parametrize("spelling", SPELLINGS)
def test_an_edits_diff_names_the_root(workspace, spelling, dry_run):
    out = workspace.call("edit_file", {"path": spelling, "oldText": "y = 2",
                                       "newText": "y = 3", "dryRun": dry_run})
    assert out["ok"] is True, out
    assert out["path"].startswith("web/"), out
    assert _header(out["diff"]) == [f"--- a/{out['path']}", f"+++ b/{out['path']}"], out
    # the body is the edit's, unchanged
    assert "\n-y = 2\n+y = 3\n" in out["diff"], out


def test_the_same_edit_in_two_roots_answers_two_diffs(workspace):
    diffs = [workspace.call("edit_file", {"path": f"{root}/src/a.py", "oldText": "x = 1",
                                          "newText": "x = 2"})["diff"] for root in ("web", "api")]
    assert _header(diffs[0]) != _header(diffs[1]), diffs
    assert _header(diffs[1]) == ["--- a/api/src/a.py", "+++ b/api/src/a.py"], diffs
