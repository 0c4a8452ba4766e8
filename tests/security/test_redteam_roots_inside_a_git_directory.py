"""An independent red-team pass over a root opened inside a git directory:
``.git/hooks`` (a host that lets a model "fix the hooks"), ``.git/info``,
``.git/refs/heads``, a bare repository's ``hooks``, a submodule's git
directory under ``.git/modules``.  Everything under a git directory is
protected when the root holds it, but the look at open sees only the root
and below: opened there, ``write_file pre-commit`` made a hook git runs at
the next commit.  Whatever directory the root is opened at, what lies in a
git directory is protected; a root in a work tree (``src``) stays the
user's.  On every backend config.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from corral.tools import Toolbox


def _repositories(base: Path) -> Path:
    subprocess.run(["git", "init", "-q", str(base / "repo")], check=True)
    subprocess.run(["git", "init", "-q", "--bare", str(base / "remote.git")], check=True)
    repo = base / "repo"
    (repo / "src").mkdir()
    (repo / "src" / "app.py").write_text("app = 1\n")
    modules = repo / ".git" / "modules" / "sub"
    (modules / "hooks").mkdir(parents=True)
    (modules / "objects").mkdir()
    (modules / "refs").mkdir()
    (modules / "HEAD").write_text("ref: refs/heads/main\n")
    (repo / ".git" / "refs" / "heads").mkdir(parents=True, exist_ok=True)
    return base


INSIDE = ["repo/.git/hooks", "repo/.git/info", "repo/.git/refs/heads", "remote.git/hooks",
          "repo/.git/modules/sub/hooks", "repo/.git/modules/sub"]


@pytest.mark.parametrize("where", INSIDE)
@pytest.mark.parametrize("tool", ["write_file", "make_directory", "move_file"])
def test_a_root_inside_a_git_directory_protects_what_is_there(tmp_path, make_root, where, tool):
    base = _repositories(tmp_path)
    root = base / where
    (root / "drop.txt").write_text("#!/bin/sh\necho owned\n")
    before = sorted(p.name for p in root.iterdir())
    args = {"write_file": {"path": "pre-commit", "content": "#!/bin/sh\necho owned\n"},
            "make_directory": {"path": "newdir"},
            "move_file": {"source": "drop.txt", "destination": "pre-push"}}[tool]
    answer = Toolbox(make_root(str(root))).call(tool, args)
    assert answer["ok"] is False, answer
    assert answer["code"] == "DENIED" and answer["details"]["kind"] == "protected", answer
    assert sorted(p.name for p in root.iterdir()) == before


def test_a_root_in_a_work_tree_stays_the_users(tmp_path, make_root):
    base = _repositories(tmp_path)
    box = Toolbox(make_root(str(base / "repo" / "src")))
    answer = box.call("write_file", {"path": "new.py", "content": "x = 1\n"})
    assert answer["ok"] is True, answer
