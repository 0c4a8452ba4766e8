"""Ignore decisions against git's own: a generated corpus of .gitignore
files, .git/info/exclude files, nested repositories and folders outside
any repository, where glob's answer and list_directory's tree
(includeIgnored: false) must show exactly the files that ``git
check-ignore`` does not report, each asked of the repository the file
belongs to (its nearest ``.git``); a file outside every repository is
never ignored, whatever .gitignore files lie around it (git and ripgrep
read them only inside one).  ``CORRAL_SOAK_EXAMPLES`` raises the number
of corpora (a documented soak profile).

Three shapes of root: a repository itself; a plain folder holding loose
folders and repositories (some nested in others, some inside loose
folders); and a folder inside a repository whose top is above the root,
where corral honours the root's own and its descendants' ignore files
(it cannot read those above the root, so that corpus puts none there)."""

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
         "notes.txt", "!notes.txt", "**/gen/*.py", "*.py", "!main.py", "*", "!*/", "!*.txt"]
NAMES = ["a.log", "keep.log", "top.txt", "f.tmp", "README.md", "keep.md", "b.txt", "main.py",
         "util.py", "notes.txt", "xfile", "xkeep", "plain.txt"]
DIRS = ["", "build", "docs", "a", "a/q", "a/q/r", "sub", "cache", "deep/one", "deep/two",
        "gen", "src/gen"]
SHAPES = ("repository", "mixed", "inside")


def _git(cwd: Path, *args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "HOME": str(cwd), "XDG_CONFIG_HOME": str(cwd / ".xdg"),
           "GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": os.devnull,
           "GIT_CEILING_DIRECTORIES": str(cwd.parent)}
    return subprocess.run(["git", *args], cwd=cwd, input=stdin, capture_output=True, text=True,
                          env=env, check=False)


def _folder(top: Path, rng: random.Random, dirs: list[str]) -> list[Path]:
    """Files and .gitignore files in ``dirs`` under ``top``; the files made."""
    files = []
    for d in dirs:
        for name in rng.sample(NAMES, 4):
            path = top / d / name
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text("x\n")
            files.append(path)
    for d in rng.sample(dirs, min(4, len(dirs))):
        (top / d).mkdir(parents=True, exist_ok=True)
        (top / d / ".gitignore").write_text("\n".join(rng.sample(LINES, 4)) + "\n")
    return files


def _repository(top: Path, rng: random.Random, *, exclude: bool = True) -> list[Path]:
    """A work tree at ``top`` with files, .gitignore files and an exclude file."""
    top.mkdir(parents=True, exist_ok=True)
    assert _git(top, "init", "-q").returncode == 0
    files = _folder(top, rng, DIRS)
    if exclude:
        (top / ".git" / "info").mkdir(parents=True, exist_ok=True)
        (top / ".git" / "info" / "exclude").write_text("\n".join(rng.sample(LINES, 3)) + "\n")
    return files


def _corpus(base: Path, shape: str, rng: random.Random) -> tuple[Path, list[Path], set[Path]]:
    """The root, every file made, and the repository tops (above the root too)."""
    if shape == "repository":
        root = base / "root"
        files = _repository(root, rng)
        files += _repository(root / "vendor" / "inner", rng)
        return root, files, {root, root / "vendor" / "inner"}
    if shape == "inside":  # the top is above the root: nothing of its own to ignore
        top = base / "outer"
        top.mkdir()
        assert _git(top, "init", "-q").returncode == 0
        root = top / "work" / "root"
        files = _folder(root, rng, DIRS)
        files += _repository(root / "lib" / "nested", rng)
        return root, files, {top, root / "lib" / "nested"}
    root = base / "root"
    files = _folder(root, rng, DIRS)  # loose, with .gitignore files that must not apply
    files += _folder(root / "loose", rng, ["", "build", "sub", "gen"])
    tops = {root / "repo", root / "loose" / "deeper" / "repo2", root / "repo" / "sub" / "inner"}
    files += _repository(root / "repo", rng)
    files += _repository(root / "loose" / "deeper" / "repo2", rng, exclude=rng.random() < 0.5)
    files += _repository(root / "repo" / "sub" / "inner", rng)
    return root, files, tops


def _git_ignored(root: Path, files: list[Path], tops: set[Path]) -> set[Path]:
    """The files git leaves out: each file, and each directory on its way
    down from the root, asked of its nearest repository (a nested
    repository's top of the one around it); a file is left out when it or
    one of those directories is ignored (nothing is looked for below an
    ignored directory, as ``git status`` and ripgrep do)."""
    dirs = {d for p in files for d in p.parents if root in d.parents}
    owned: dict[Path, list[Path]] = {}
    for path in [*files, *dirs]:
        top = max((t for t in tops if t in path.parents), key=lambda t: len(t.parts),
                  default=None)
        if top is not None:
            owned.setdefault(top, []).append(path)
    ignored = set()
    for top, paths in owned.items():
        rels = [str(p.relative_to(top)) for p in paths]
        answer = _git(top, "check-ignore", "--stdin", stdin="\n".join(rels) + "\n")
        assert answer.returncode in (0, 1), answer.stderr
        ignored |= {top / rel for rel in answer.stdout.split()}
    return {p for p in files if p in ignored or any(d in ignored for d in p.parents)}


def _tree_files(entries: list[dict], prefix: str = "") -> set[str]:
    """The files a list_directory tree shows as not ignored."""
    found = set()
    for entry in entries:
        if entry.get("ignored"):
            continue
        path = prefix + entry["name"]
        if entry["kind"] == "file":
            found.add(path)
        assert not entry.get("truncated"), path
        found |= _tree_files(entry.get("entries", []), path + "/")
    return found


@pytest.fixture(params=[(shape, seed) for shape in SHAPES for seed in range(EXAMPLES)],
                ids=lambda p: f"{p[0]}-{p[1]}")
def corpus(tmp_path, request) -> tuple[Path, set[str]]:
    shape, seed = request.param
    root, files, tops = _corpus(tmp_path, shape, random.Random(f"{shape}{seed}"))
    ignored = _git_ignored(root, files, tops)
    expected = {str(p.relative_to(root)) for p in files if p not in ignored}
    assert len(expected) < len(files), "the corpus ignores something"
    return root, expected


@pytest.mark.skipif(GIT is None, reason="git is on every CI machine")
def test_glob_leaves_out_exactly_what_git_ignores(corpus):
    root, expected = corpus
    with Toolbox(root) as box:
        result = box.call("glob", {"pattern": "**/*"})
    assert result["ok"] is True and not result["truncated"]
    listed = {p for p in result["paths"] if not p.endswith(".gitignore")}
    assert listed == expected, (sorted(listed - expected), sorted(expected - listed))


@pytest.mark.skipif(GIT is None, reason="git is on every CI machine")
def test_the_listing_tree_marks_and_leaves_out_exactly_what_git_ignores(corpus):
    root, expected = corpus
    with Toolbox(root) as box:
        result = box.call("list_directory", {"path": ".", "depth": 10})
    assert result["ok"] is True and not result["truncated"]
    shown = {p for p in _tree_files(result["entries"]) if not p.endswith(".gitignore")}
    assert shown == expected, (sorted(shown - expected), sorted(expected - shown))


@pytest.mark.skipif(GIT is None, reason="git is on every CI machine")
def test_each_directory_listed_alone_marks_what_git_ignores(corpus):
    """list_directory at depth 1 of every directory: the same marks as the tree."""
    root, expected = corpus
    with Toolbox(root) as box:
        for directory in sorted({str(Path(p).parent) for p in expected}):
            result = box.call("list_directory", {"path": directory})
            assert result["ok"] is True, result
            prefix = "" if directory == "." else directory + "/"
            shown = {prefix + e["name"] for e in result["entries"]
                     if e["kind"] == "file" and not e.get("ignored")}
            wanted = {p for p in expected if str(Path(p).parent) == directory}
            assert {p for p in shown if not p.endswith(".gitignore")} == wanted, directory
