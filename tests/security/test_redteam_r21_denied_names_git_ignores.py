"""An independent red-team pass (round twenty-one) over a search's
answer about what it did not search, where a denied directory is also one
.gitignore ignores (the usual case: a project ignores the folder of its
secrets, and the host denies it).  ``glob`` and ``grep`` walked a
directory's entries asking .gitignore first and the host's rules second,
so a directory both ignore and deny was reported as ignored: its name
among ``ignored.examples`` and in the note ("3 directories not searched
(.git, build, customer-acme: ...)").  ``--deny`` promises names never
shown: with ``deny=["**/customer-*"]`` the model learnt each customer's
folder name, and with a plain name whether it exists.

On main the name was in both answers.  Now a denied directory is counted
as denied (``denied``, a count a listing of its parent gives by design),
never named, and the answers whether it exists or not differ in that
count only.  With and without ``includeIgnored``, a folder ignored by a
pattern or by name, at the top and deeper; every backend config.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from corral.tools import Toolbox

from ..helpers import make_repository

SECRET_DIR = "customer-acme"
CALLS = [("glob", {"pattern": "**/*"}), ("glob", {"pattern": "**/*.txt"}),
         ("glob", {"pattern": "**/*", "path": "app"}),
         ("grep", {"pattern": "alpha"}), ("grep", {"pattern": "alpha", "outputMode": "files"}),
         ("grep", {"pattern": "alpha", "outputMode": "counts"}),
         ("grep", {"pattern": "alpha", "path": "app"}),
         ("glob", {"pattern": "**/*", "includeIgnored": True}),
         ("grep", {"pattern": "alpha", "includeIgnored": True})]
IGNORES = ["customer-*/\nbuild/\n", f"/{SECRET_DIR}\nbuild/\n", f"{SECRET_DIR}\nbuild\n"]


def _answers(base: Path, make_root, ignore: str, exists: bool) -> list[dict]:
    make_repository(base)
    (base / ".gitignore").write_text(ignore)
    for place in (base, base / "app"):
        (place / "src").mkdir(parents=True)
        (place / "src" / "a.txt").write_text("alpha\n")
        (place / "build").mkdir()
        (place / "build" / "b.txt").write_text("alpha\n")
        if exists:
            (place / SECRET_DIR).mkdir()
            (place / SECRET_DIR / "pw.txt").write_text("alpha pw\n")
    with Toolbox(make_root(str(base)), deny=["**/customer-*"]) as toolbox:
        return [toolbox.call(tool, args) for tool, args in CALLS]


@pytest.mark.parametrize("ignore", IGNORES, ids=["pattern", "anchored", "name"])
def test_a_denied_folder_git_ignores_is_never_named(tmp_path, make_root, ignore):
    there = _answers(tmp_path / "there", make_root, ignore, exists=True)
    absent = _answers(tmp_path / "absent", make_root, ignore, exists=False)
    for (tool, args), seen, unseen in zip(CALLS, there, absent):
        said = json.dumps(seen)
        assert seen["ok"] is True, seen
        assert "customer" not in said, (tool, args, seen)
        assert "alpha pw" not in said
        without_count = {key: value for key, value in seen.items() if key != "denied"}
        assert without_count == unseen, (tool, args, seen, unseen)
