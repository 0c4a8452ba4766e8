"""An independent red-team pass over the search path's pattern classes: a
``[...]`` whose range ends before it starts (``[z-a]``, ``[--*]``: ``-``
is 0x2D, ``*`` 0x2A), written by the model into ``.gitignore`` (or sent
as a glob, or grep's ``include``), made the tools' regex fail to compile.
Every later grep, glob and list_directory of the root answered
``INTERNAL``; one line of a file the model may write took searching and
listing away for the whole session.  git reads such a class as its first
character alone (``[z-a].py`` ignores ``z.py``; ``[!--*]x`` ignores
``ax`` but not ``-x``: checked with ``git check-ignore``), and so must
the tools.

Every test runs on every backend config.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from corral.tools import Toolbox


def _repository(base: Path) -> None:
    git = base / ".git"
    (git / "objects").mkdir(parents=True)
    (git / "refs").mkdir()
    (git / "HEAD").write_text("ref: refs/heads/main\n")


def _tree(base: Path) -> None:
    _repository(base)
    for name in ("z.py", "a.py", "-", "ax", "-x"):
        (base / name).write_text("hello\n")


# line of .gitignore -> the files git ignores of _tree's (git check-ignore)
GITIGNORE_LINES = {
    "[--*]": {"-"},
    "[z-a].py": {"z.py"},
    "[!--*]x": {"ax"},
}


@pytest.mark.parametrize("line", sorted(GITIGNORE_LINES))
def test_a_reversed_range_in_gitignore_is_read_as_git_reads_it(tmp_path, make_root,
                                                               line: str) -> None:
    _tree(tmp_path)
    box = Toolbox(make_root(str(tmp_path)))
    written = box.call("write_file", {"path": ".gitignore", "content": line + "\n"})
    assert written["ok"], written
    files = {"z.py", "a.py", "-", "ax", "-x"}
    shown = files - GITIGNORE_LINES[line]

    found = box.call("grep", {"pattern": "hello", "outputMode": "files"})
    assert found["ok"], found
    assert {Path(p).name for p in found["files"]} == shown, found

    globbed = box.call("glob", {"pattern": "*"})
    assert globbed["ok"], globbed
    assert {Path(p).name for p in globbed["paths"]} & files == shown, globbed

    listed = box.call("list_directory", {"path": "."})
    assert listed["ok"], listed
    assert {e["name"] for e in listed["entries"]} >= files, listed
    assert {e["name"] for e in listed["entries"] if e.get("ignored")} & files == \
        GITIGNORE_LINES[line], listed


@pytest.mark.parametrize("args", [
    ("glob", {"pattern": "[z-a]*"}),
    ("glob", {"pattern": "[--*]"}),
    ("grep", {"pattern": "hello", "include": "[--*]"}),
    ("grep", {"pattern": "hello", "include": "[z-a].py"}),
], ids=["glob-z-a", "glob-dash-star", "grep-dash-star", "grep-z-a"])
def test_a_reversed_range_in_a_pattern_argument_is_answered(tmp_path, make_root,
                                                            args: tuple[str, dict]) -> None:
    _tree(tmp_path)
    box = Toolbox(make_root(str(tmp_path)))
    name, call = args
    answer = box.call(name, call)
    assert answer["ok"], answer
