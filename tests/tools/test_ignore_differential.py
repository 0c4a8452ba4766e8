"""Ignore decisions against git's own: a generated corpus of .gitignore
files, .git/info/exclude files and nested repositories, where glob's
answer (includeIgnored: false) must list exactly the files that
``git check-ignore`` does not report.  ``CORRAL_SOAK_EXAMPLES`` raises the
number of corpora (a documented soak profile).

Folders outside any repository are left out of the corpus: corral reads a
.gitignore there too (a deliberate difference, in the README)."""

from __future__ import annotations

import os
import random
import shutil
import subprocess
from pathlib import Path

import pytest

from corral.tools import Toolbox

EXAMPLES = int(os.environ.get("CORRAL_SOAK_EXAMPLES", "6"))
GIT = shutil.which("git")
LINES = ["*.log", "!keep.log", "build/", "/top.txt", "*.tmp", "docs/*.md", "!docs/keep.md",
         "a/**/b.txt", "**/cache", "sub/", "x*", "!xkeep", "*.md", "deep/one/", "/a/",
         "notes.txt", "!notes.txt", "**/gen/*.py", "*.py", "!main.py"]
NAMES = ["a.log", "keep.log", "top.txt", "f.tmp", "README.md", "keep.md", "b.txt", "main.py",
         "util.py", "notes.txt", "xfile", "xkeep", "plain.txt"]
DIRS = ["", "build", "docs", "a", "a/q", "a/q/r", "sub", "cache", "deep/one", "deep/two",
        "gen", "src/gen"]


def _git(cwd: Path, *args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "HOME": str(cwd), "XDG_CONFIG_HOME": str(cwd / ".xdg"),
           "GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": os.devnull}
    return subprocess.run(["git", *args], cwd=cwd, input=stdin, capture_output=True, text=True,
                          env=env, check=False)


def _repository(top: Path, rng: random.Random) -> list[str]:
    """A work tree at ``top`` with files, .gitignore files and an exclude
    file; the files' paths relative to ``top``."""
    top.mkdir(parents=True, exist_ok=True)
    assert _git(top, "init", "-q").returncode == 0
    files = []
    for d in DIRS:
        for name in rng.sample(NAMES, 4):
            rel = f"{d}/{name}" if d else name
            (top / rel).parent.mkdir(parents=True, exist_ok=True)
            (top / rel).write_text("x\n")
            files.append(rel)
    for d in rng.sample(DIRS, 4):
        (top / d).mkdir(parents=True, exist_ok=True)
        (top / d / ".gitignore").write_text("\n".join(rng.sample(LINES, 4)) + "\n")
    (top / ".git" / "info").mkdir(parents=True, exist_ok=True)
    (top / ".git" / "info" / "exclude").write_text("\n".join(rng.sample(LINES, 3)) + "\n")
    return files


def _git_ignored(top: Path, files: list[str]) -> set[str]:
    answer = _git(top, "check-ignore", "--stdin", stdin="\n".join(files) + "\n")
    assert answer.returncode in (0, 1), answer.stderr
    return set(answer.stdout.split())


@pytest.mark.skipif(GIT is None, reason="git is on every CI machine")
@pytest.mark.parametrize("seed", range(EXAMPLES))
def test_glob_leaves_out_exactly_what_git_ignores(tmp_path, seed):
    rng = random.Random(seed)
    root = tmp_path / "root"
    outer = _repository(root, rng)
    inner_top = root / "vendor" / "inner"
    inner = _repository(inner_top, rng)
    # the outer repository does not look into the nested one: its paths are the inner's
    expected = {f for f in outer if f not in _git_ignored(root, outer)}
    expected |= {f"vendor/inner/{f}" for f in inner if f not in _git_ignored(inner_top, inner)}
    # a .gitignore of the outer repository that would hide the nested one's files
    with Toolbox(root) as box:
        result = box.call("glob", {"pattern": "**/*"})
    assert result["ok"] is True and not result["truncated"]
    listed = {p for p in result["paths"] if not p.endswith(".gitignore")}
    assert listed == expected, (sorted(listed - expected), sorted(expected - listed))
