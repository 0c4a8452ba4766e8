"""An independent red-team pass: existence oracles for a denied directory
reached through links the tree already has (``pub/dl -> ../secrets``,
``pub/l -> ../secrets/key.txt``, ``pub/chain -> l``), deny ``secrets/**``.

Each call is made on three trees that differ only inside the denied name:
``secrets/key.txt`` there, ``secrets/`` there but empty, ``secrets/``
missing.  A denied name is answered identically whether or not it exists,
so every answer must be the same on the three trees.  Before the fix:

* ``move_file pub/dl`` was refused only when the denied directory held a
  file (the move weighed what the link's target holds): whether a denied
  directory is empty, told to anyone holding a link to it;
* ``write_file pub/l`` was refused as denied when ``secrets/`` existed and
  as a symlink when it did not; ``read_file pub/l/`` (and every tool
  taking a path) echoed the trailing ``/`` only when it did not;
  ``apply_patch`` through ``pub/dl`` named the field ``input`` or ``path``.

On every backend config; one call at a time and one turn's calls at once.
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
from pathlib import Path

import pytest

from corral.tools import Toolbox

DENY = ["secrets/**"]
SHAPES = ("present", "empty", "missing")


def _tree(base: Path, shape: str) -> Path:
    base.mkdir()
    (base / "src").mkdir()
    (base / "src" / "a.py").write_text("a = 1\n")
    (base / "secrets").mkdir()
    (base / "secrets" / "key.txt").write_text("TOPSECRET\n")
    (base / "pub").mkdir()
    os.symlink("../secrets", base / "pub" / "dl")
    os.symlink("../secrets/key.txt", base / "pub" / "l")
    os.symlink("l", base / "pub" / "chain")
    if shape == "empty":
        (base / "secrets" / "key.txt").unlink()
    elif shape == "missing":
        shutil.rmtree(base / "secrets")
    return base


def _patch(body: str) -> str:
    return f"*** Begin Patch\n{body}\n*** End Patch"


CALLS = [
    ("move_file", {"source": "pub/dl", "destination": "src/moved"}),
    ("move_file", {"source": "pub/dl/", "destination": "moved"}),
    ("write_file", {"path": "pub/l", "content": "x"}),
    ("write_file", {"path": "pub/l", "content": "x", "overwrite": True}),
    ("write_file", {"path": "pub/chain", "content": "x"}),
    ("read_file", {"path": "pub/l/"}),
    ("file_info", {"path": "pub/l/"}),
    ("list_directory", {"path": "pub/l/"}),
    ("grep", {"pattern": "TOP", "path": "pub/l/"}),
    ("glob", {"pattern": "**", "path": "pub/l/"}),
    ("edit_file", {"path": "pub/l/", "oldText": "TOPSECRET", "newText": "y", "dryRun": True}),
    ("read_files", {"paths": ["pub/l/", "src/a.py"]}),
    ("apply_patch", {"input": _patch("*** Add File: pub/dl/n.txt\n+x")}),
    ("apply_patch", {"input": _patch("*** Update File: pub/dl/key.txt\n@@\n-TOPSECRET\n+x")}),
    ("apply_patch", {"input": _patch("*** Add File: pub/dl//n.txt\n+x")}),
]


def _refused(answer: dict) -> bool:
    """The call (for read_files: its read of the link) was refused."""
    if "files" in answer and answer["ok"] is True:
        return answer["files"][0]["ok"] is False
    return answer["ok"] is False


def _answer(tmp_path: Path, make_root, shape: str, tool: str, args: dict) -> str:
    base = _tree(tmp_path / shape, shape)
    box = Toolbox(make_root(str(base)), deny=DENY)
    answer = box.call(tool, args)
    assert _refused(answer), (shape, answer)
    return json.dumps(answer, sort_keys=True).replace(str(base), "ROOT")


@pytest.mark.parametrize(("tool", "args"), CALLS,
                         ids=[f"{n}-{tool}" for n, (tool, _) in enumerate(CALLS)])
def test_a_link_into_a_denied_directory_answers_the_same_whatever_it_holds(
        tmp_path, make_root, tool, args):
    answers = {shape: _answer(tmp_path, make_root, shape, tool, args) for shape in SHAPES}
    assert answers["present"] == answers["empty"] == answers["missing"], answers
    assert "TOPSECRET" not in answers["present"]


def test_links_into_a_denied_directory_answer_the_same_under_gather(tmp_path, make_root):
    """One turn's calls sent at once (``asyncio.gather`` over ``acall``)."""
    results: dict[str, list[str]] = {}
    for shape in SHAPES:
        base = _tree(tmp_path / shape, shape)
        box = Toolbox(make_root(str(base)), deny=DENY)

        async def turn() -> list[dict]:
            return list(await asyncio.gather(*(box.acall(tool, args, timeout=10)
                                               for tool, args in CALLS)))

        answers = asyncio.run(turn())
        results[shape] = [json.dumps(answer, sort_keys=True).replace(str(base), "ROOT")
                          for answer in answers]
        assert all(_refused(answer) for answer in answers), answers
        assert os.path.islink(base / "pub" / "dl") and os.path.islink(base / "pub" / "l")
    for at, (tool, _) in enumerate(CALLS):
        assert results["present"][at] == results["empty"][at] == results["missing"][at], \
            (tool, results["present"][at], results["empty"][at], results["missing"][at])
