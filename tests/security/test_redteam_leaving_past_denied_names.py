"""An independent red-team pass: a denied name told apart by how a path
leaves the root past it.

A denied name is answered identically whatever is there.  The earlier
passes compared a denied file present, an empty denied folder and a
missing one; here the denied entry ``secrets/key.txt`` is also a symlink
leading out of the root (its text absolute, or climbing out with ``..``),
a directory, or a link to itself, reached directly, through
``pub/dl -> ../secrets`` and ``pub/l -> ../secrets/key.txt``, and
through a folder holding such a link.  Before the fix:

* a denied link climbing out (``../../far/f.txt``) was answered
  ``OUTSIDE_ROOT`` by every tool, where any other shape was ``DENIED``:
  the core names ``..`` as the failing component of such an escape, and
  only the component was weighed;
* ``file_info pub/l`` said ``targetKind: "outside"`` for a denied link
  leading out; ``write_file pub/l`` answered ``UNSUPPORTED`` (a link
  leading nowhere) for one leading out or looping, ``DENIED`` otherwise;
  ``move_file pub/l`` and ``move_file hold`` (a folder holding such a
  link) were made for those, refused otherwise;
* ``write_file secrets/key.txt/`` (and ``pub/l/``, ``x/.``, ``x/..``),
  ``delete_file pub/l/`` and ``move_file pub/l/`` were refused by the
  path's shape, or ``DENIED`` when the denied link led out;
* ``read_file secrets/../../x`` under ``deny=secrets``: ``OUTSIDE_ROOT``
  when the denied folder exists, ``DENIED`` when it does not.

On every backend config, under ``secrets/**`` and ``secrets``.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from corral.tools import Toolbox

SECRET = "TOPSECRET-7f3a"
SHAPES = ("file", "missing", "directory", "out_absolute", "out_climbing", "loop")


def _patch(body: str) -> str:
    return f"*** Begin Patch\n{body}\n*** End Patch"


def _tree(base: Path, shape: str) -> Path:
    """``base/ws`` (the root) with ``secrets/key.txt`` of ``shape``, and
    ``base/far/f.txt`` outside it."""
    root = base / "ws"
    (base / "far").mkdir(parents=True)
    (base / "far" / "f.txt").write_text(SECRET + "\n")
    (root / "src").mkdir(parents=True)
    (root / "src" / "a.py").write_text("a = 1\n")
    (root / "secrets").mkdir()
    (root / "pub").mkdir()
    (root / "hold").mkdir()
    os.symlink("../secrets", root / "pub" / "dl")
    os.symlink("../secrets/key.txt", root / "pub" / "l")
    os.symlink("../secrets/key.txt", root / "hold" / "l2")
    key = root / "secrets" / "key.txt"
    if shape == "file":
        key.write_text(SECRET + "\n")
    elif shape == "directory":
        key.mkdir()
        (key / "in.txt").write_text(SECRET + "\n")
    elif shape == "out_absolute":
        os.symlink(str(base / "far" / "f.txt"), key)
    elif shape == "out_climbing":
        os.symlink("../../far/f.txt", key)
    elif shape == "loop":
        os.symlink("key.txt", key)
    return root


CALLS = [
    ("read_file", {"path": "secrets/key.txt"}),
    ("read_file", {"path": "pub/dl/key.txt"}),
    ("read_file", {"path": "pub/l"}),
    ("read_files", {"paths": ["pub/l", "src/a.py"]}),
    ("grep", {"pattern": "TOP", "path": "pub/l"}),
    ("list_directory", {"path": "pub/dl/key.txt"}),
    ("file_info", {"path": "pub/l"}),
    ("file_info", {"path": "secrets/key.txt"}),
    ("edit_file", {"path": "pub/l", "oldText": SECRET, "newText": "x"}),
    ("write_file", {"path": "pub/l", "content": "x"}),
    ("write_file", {"path": "pub/l", "content": "x", "overwrite": True}),
    ("write_file", {"path": "secrets/key.txt/", "content": "x"}),
    ("write_file", {"path": "secrets/key.txt/.", "content": "x"}),
    ("write_file", {"path": "secrets/key.txt/..", "content": "x"}),
    ("write_file", {"path": "pub/l/", "content": "x"}),
    ("write_file", {"path": "pub/dl/key.txt/new", "content": "x"}),
    ("delete_file", {"path": "pub/l/"}),
    ("delete_file", {"path": "pub/dl/key.txt"}),
    ("move_file", {"source": "pub/l/", "destination": "src/m"}),
    ("move_file", {"source": "pub/l", "destination": "src/m"}),
    ("move_file", {"source": "hold", "destination": "hold2"}),
    ("make_directory", {"path": "pub/l"}),
    ("make_directory", {"path": "pub/dl/key.txt/d"}),
    ("apply_patch", {"input": _patch(f"*** Update File: pub/dl/key.txt\n@@\n-{SECRET}\n+x")}),
    ("apply_patch", {"input": _patch("*** Add File: pub/l/n.txt\n+x")}),
]


def _answer(base: Path, make_root, shape: str, deny: list[str], tool: str, args: dict) -> str:
    root = _tree(base / shape, shape)
    box = Toolbox(make_root(str(root)), deny=deny)
    answer = box.call(tool, args)
    text = json.dumps(answer, sort_keys=True)
    assert SECRET not in text, (shape, answer)
    assert (base / shape / "far" / "f.txt").read_text() == SECRET + "\n"
    assert os.path.islink(root / "pub" / "l") and os.path.islink(root / "hold" / "l2"), \
        (shape, answer)
    # times of the link itself (file_info of one) are the tree's, not the shape's
    for stamp in ("atime", "mtime", "ctime"):
        answer.pop(stamp, None)
        answer.pop(stamp + "Ns", None)
    return json.dumps(answer, sort_keys=True).replace(str(base / shape), "BASE")


@pytest.mark.parametrize("deny", [["secrets/**"], ["secrets"]], ids=["contents", "folder"])
@pytest.mark.parametrize(("tool", "args"), CALLS,
                         ids=[f"{n}-{tool}" for n, (tool, _) in enumerate(CALLS)])
def test_a_denied_entry_answers_the_same_whatever_it_is(tmp_path, make_root, deny, tool, args):
    answers = {shape: _answer(tmp_path, make_root, shape, deny, tool, args) for shape in SHAPES}
    assert len(set(answers.values())) == 1, json.dumps(answers, indent=1)


CLIMBS = [
    ("read_file", {"path": "secrets/../../far/f.txt"}),
    ("read_file", {"path": "src/../secrets/../.."}),
    ("list_directory", {"path": "secrets/../.."}),
    ("grep", {"pattern": "TOP", "path": "secrets/../../far"}),
    ("glob", {"pattern": "*", "path": "secrets/../.."}),
    ("file_info", {"path": "secrets/../.."}),
    ("write_file", {"path": "secrets/../../far/n.txt", "content": "x"}),
    ("edit_file", {"path": "secrets/../../far/f.txt", "oldText": SECRET, "newText": "x"}),
    ("delete_file", {"path": "secrets/../../far/f.txt"}),
    ("move_file", {"source": "src/a.py", "destination": "secrets/../../far/a.py"}),
    ("make_directory", {"path": "secrets/../../far/d"}),
]


@pytest.mark.parametrize(("tool", "args"), CLIMBS,
                         ids=[f"{n}-{tool}" for n, (tool, _) in enumerate(CLIMBS)])
def test_climbing_out_through_a_denied_folder_answers_the_same_whether_it_exists(
        tmp_path, make_root, tool, args):
    answers = {}
    for shape in ("present", "missing"):
        root = _tree(tmp_path / shape, "file")
        if shape == "missing":
            (root / "secrets" / "key.txt").unlink()
            (root / "secrets").rmdir()
        box = Toolbox(make_root(str(root)), deny=["secrets"])
        answer = box.call(tool, args)
        assert answer["ok"] is False, answer
        assert (tmp_path / shape / "far" / "f.txt").read_text() == SECRET + "\n"
        assert sorted(os.listdir(tmp_path / shape / "far")) == ["f.txt"]
        answers[shape] = json.dumps(answer, sort_keys=True).replace(str(tmp_path / shape), "BASE")
    assert answers["present"] == answers["missing"], json.dumps(answers, indent=1)


UNROOTED = [
    ("write_file", {"path": "pub/l", "content": "x"}),
    ("read_file", {"path": "pub/l"}),
    ("edit_file", {"path": "pub/l", "oldText": SECRET, "newText": "x"}),
    ("delete_file", {"path": "pub/l"}),
    ("move_file", {"source": "pub/l", "destination": "web/q"}),
    ("read_file", {"path": "hold/l2"}),
]


@pytest.mark.parametrize(("tool", "args"), UNROOTED,
                         ids=[f"{n}-{tool}" for n, (tool, _) in enumerate(UNROOTED)])
def test_a_workspace_offers_a_root_alike_whatever_the_denied_entry_is(tmp_path, make_root,
                                                                      tool, args):
    """A path named without its root (``pub/l``): the root offered
    (``didYouMean``) is the same whatever the denied entry the link leads
    to is (it was offered only where that entry led out or looped)."""
    from corral.tools import Workspace

    answers = {}
    for shape in SHAPES:
        web = _tree(tmp_path / shape, shape)
        (tmp_path / shape / "api").mkdir()
        workspace = Workspace({"web": Toolbox(make_root(str(web)), deny=["secrets"]),
                               "api": Toolbox(make_root(str(tmp_path / shape / "api")))})
        answer = workspace.call(tool, args)
        assert answer["ok"] is False, answer
        assert os.path.islink(web / "pub" / "l")
        answers[shape] = json.dumps(answer, sort_keys=True).replace(str(tmp_path / shape), "BASE")
    assert len(set(answers.values())) == 1, json.dumps(answers, indent=1)
