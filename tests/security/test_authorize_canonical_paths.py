"""What the host's ``authorize`` is told: every authorization request uses
the canonical path of the target, of the destination, and of every
directory a call creates.

A host that lets the model write only under ``docs/`` judges the request's
paths.  Were write_file, move_file (both ends) or delete_file to tell it the
model's spelling, ``docs/srclink/x`` (``srclink -> ../src``) or
``docs/../src/x`` would be approved as "under docs/" and act in ``src/``.
edit_file and make_directory are checked the same way.  On every backend config.
"""

from __future__ import annotations

import os

import pytest

from corral.tools import Denied, Toolbox


def docs_only(request) -> None:
    """The host's rule: every path a request names lies under docs/."""
    named = [request.path, getattr(request, "destination", "") or "docs/x",
             *getattr(request, "creates_directories", ())]
    for path in named:
        if not path.startswith("docs/"):
            raise Denied("only docs/ may change")


@pytest.fixture
def tree(tmp_path):
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "app.py").write_text("a = 1\n")
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "guide.md").write_text("guide\n")
    (tmp_path / "docs" / "srclink").symlink_to("../src")
    return tmp_path


def _src_state(tree):
    return sorted((p, (tree / "src" / p).read_bytes()) for p in os.listdir(tree / "src"))


@pytest.mark.parametrize("tool,args", [
    pytest.param("write_file", {"path": "docs/srclink/planted.py", "content": "x = 1\n"},
                 id="write-via-link"),
    pytest.param("write_file", {"path": "docs/../src/planted.py", "content": "x = 1\n"},
                 id="write-dotdot"),
    pytest.param("write_file", {"path": "docs/nx/../../src/planted.py", "content": "x = 1\n"},
                 id="write-missing-dotdot"),
    pytest.param("move_file", {"source": "docs/guide.md", "destination": "docs/srclink/guide.md"},
                 id="move-to-via-link"),
    pytest.param("move_file", {"source": "docs/srclink/app.py", "destination": "docs/app.py"},
                 id="move-from-via-link"),
    pytest.param("delete_file", {"path": "docs/srclink/app.py"}, id="delete-via-link"),
    # the request names src/app.py, as for the tools above
    pytest.param("edit_file", {"path": "docs/srclink/app.py", "oldText": "a = 1",
                               "newText": "a = 2"}, id="edit-via-link"),
    pytest.param("make_directory", {"path": "docs/srclink/made"}, id="mkdir-via-link"),
])
def test_the_host_is_asked_about_where_the_call_acts(tree, make_root, tool, args):
    before = _src_state(tree)
    with Toolbox(make_root(tree), authorize=docs_only) as toolbox:
        answer = toolbox.call(tool, args)
    assert _src_state(tree) == before, f"src/ changed with the host allowing docs/ only: {answer}"
