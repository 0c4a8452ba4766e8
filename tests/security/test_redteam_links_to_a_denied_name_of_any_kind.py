"""An independent red-team pass: a link to a denied name (``--deny
secret.txt``, ``lnk -> secret.txt``, ``sub/lnk -> ../secret.txt``, a chain
``chain -> lnk``) must be answered the same whatever the denied name is:
a regular file, a directory (empty or not), a FIFO, a dangling link, or
missing.  Before the view decided a link on the name it leads to, moving
the link (``move_file lnk x``) and ``make_directory lnk`` were refused or
done by what ``secret.txt`` was: whether a denied name exists, and whether
it is a regular file, told to anyone holding a link to it.

Every call of every tool that takes the link is made on six trees that
differ only in what ``secret.txt`` is, and the answers compared (the
link's own times, which file_info reports, left out); one call at a time,
on every backend config.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pytest

from corral.tools import Toolbox

SHAPES = ("file", "directory", "empty_directory", "fifo", "dangling_link", "missing")


def _tree(base: Path, shape: str) -> Path:
    base.mkdir()
    (base / "a.txt").write_text("a\n")
    (base / "sub").mkdir()
    target = base / "secret.txt"
    if shape == "file":
        target.write_text("TOPSECRET\n")
    elif shape == "directory":
        target.mkdir()
        (target / "in.txt").write_text("TOPSECRET\n")
    elif shape == "empty_directory":
        target.mkdir()
    elif shape == "fifo":
        os.mkfifo(target)
    elif shape == "dangling_link":
        os.symlink("nowhere", target)
    os.symlink("secret.txt", base / "lnk")
    os.symlink("../secret.txt", base / "sub" / "lnk")
    os.symlink("lnk", base / "chain")
    return base


def _calls(link: str) -> list[tuple[str, dict]]:
    return [
        ("write_file", {"path": link, "content": "x"}),
        ("write_file", {"path": link, "content": "x", "overwrite": True}),
        ("write_file", {"path": f"{link}/n.txt", "content": "x"}),
        ("move_file", {"source": link, "destination": "moved"}),
        ("move_file", {"source": link, "destination": "sub/moved"}),
        ("move_file", {"source": "a.txt", "destination": f"{link}/"}),
        ("make_directory", {"path": link}),
        ("make_directory", {"path": f"{link}/n"}),
        ("read_file", {"path": link}),
        ("read_file", {"path": f"{link}/in.txt"}),
        ("file_info", {"path": link}),
        ("file_info", {"path": f"{link}/"}),
        ("list_directory", {"path": link}),
        ("edit_file", {"path": link, "oldText": "TOPSECRET", "newText": "y"}),
        ("glob", {"pattern": "*", "path": link}),
        ("grep", {"pattern": "TOP", "path": link}),
        ("read_files", {"paths": [link, "a.txt"]}),
        ("delete_file", {"path": f"{link}/in.txt"}),
        ("apply_patch", {"input": f"*** Begin Patch\n*** Add File: {link}\n+x\n*** End Patch"}),
        ("apply_patch", {"input": f"*** Begin Patch\n*** Delete File: {link}\n*** End Patch"}),
    ]


CALLS = [call for link in ("lnk", "sub/lnk", "chain") for call in _calls(link)]
_TIMES = re.compile(r'"[acm]time(Ns)?": [^,}]*')


def _answer(tmp_path: Path, make_root, shape: str, tool: str, args: dict) -> str:
    base = _tree(tmp_path / shape, shape)
    answer = Toolbox(make_root(str(base)), deny=["secret.txt"]).call(tool, args)
    assert "TOPSECRET" not in json.dumps(answer)
    return _TIMES.sub("", json.dumps(answer, sort_keys=True).replace(str(base), "ROOT"))


@pytest.mark.parametrize(("tool", "args"), CALLS,
                         ids=[f"{n}-{tool}" for n, (tool, _) in enumerate(CALLS)])
def test_a_link_to_a_denied_name_answers_the_same_whatever_it_is(tmp_path, make_root, tool,
                                                                  args):
    answers = {shape: _answer(tmp_path, make_root, shape, tool, args) for shape in SHAPES}
    assert len(set(answers.values())) == 1, answers
