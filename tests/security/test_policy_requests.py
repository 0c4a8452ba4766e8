"""What the host's ``authorize`` is told is where the call acts (a
host judges what will happen, not what was spelled): the canonical path the
resolver reached for the target, both ends of a move and every directory
created, never the model's spelling.  On every backend config."""

from __future__ import annotations

import pytest

from corral.tools import DeleteRequest, MoveRequest, Request, Toolbox, WriteRequest


FILES = {"src/app.py": "a = 1\n", "docs/guide.md": "guide\n"}


@pytest.fixture
def tree(tmp_path):
    """src/app.py, docs/guide.md, and docs/srclink -> ../src."""
    for path, text in FILES.items():
        (tmp_path / path).parent.mkdir(exist_ok=True)
        (tmp_path / path).write_text(text)
    (tmp_path / "docs" / "srclink").symlink_to("../src")
    return tmp_path


def _asked(tree, make_root, tool, args) -> tuple[list[Request], dict]:
    asked: list[Request] = []

    def record(request: Request) -> bool:
        asked.append(request)
        return True

    with Toolbox(make_root(tree), authorize=record) as toolbox:
        answer = toolbox.call(tool, args)
    return asked, answer


@pytest.mark.parametrize("path,lands,created", [
    ("docs/srclink/planted.py", "src/planted.py", ()),
    ("docs/../src/planted.py", "src/planted.py", ()),
    ("docs/nx/../../src/planted.py", "src/planted.py", ()),
    ("docs/srclink/new/deeper/planted.py", "src/new/deeper/planted.py",
     ("src/new", "src/new/deeper")),
])
def test_write_request_names_the_canonical_target(tree, make_root, path, lands, created):
    asked, answer = _asked(tree, make_root, "write_file", {"path": path, "content": "x\n"})
    assert answer["ok"] is True, answer
    [request] = asked
    assert isinstance(request, WriteRequest)
    assert (request.path, request.creates_directories) == (lands, created)
    assert (tree / lands).read_text() == "x\n"


@pytest.mark.parametrize("args,source,destination", [
    ({"source": "docs/guide.md", "destination": "docs/srclink/guide.md"},
     "docs/guide.md", "src/guide.md"),
    ({"source": "docs/srclink/app.py", "destination": "docs/x/../app.py"},
     "src/app.py", "docs/app.py"),
    ({"source": "docs/guide.md", "destination": "docs/srclink/"}, "docs/guide.md",
     "src/guide.md"),
])
def test_move_request_names_both_canonical_ends(tree, make_root, args, source, destination):
    asked, answer = _asked(tree, make_root, "move_file", args)
    assert answer["ok"] is True, answer
    [request] = asked
    assert isinstance(request, MoveRequest)
    assert (request.path, request.destination) == (source, destination)
    assert (tree / destination).exists() and not (tree / source).exists()


def test_move_request_names_canonical_created_directories(tree, make_root):
    asked, answer = _asked(tree, make_root, "move_file",
                           {"source": "docs/guide.md", "destination": "docs/srclink/a/b/g.md"})
    assert answer["ok"] is True, answer
    [request] = asked
    assert isinstance(request, MoveRequest)
    assert request.destination == "src/a/b/g.md"
    assert request.creates_directories == ("src/a", "src/a/b")


def test_delete_request_names_the_canonical_entry(tree, make_root):
    asked, answer = _asked(tree, make_root, "delete_file", {"path": "docs/srclink/app.py"})
    assert answer["ok"] is True, answer
    [request] = asked
    assert isinstance(request, DeleteRequest) and request.path == "src/app.py"
    assert not (tree / "src" / "app.py").exists()
