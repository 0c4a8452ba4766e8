"""glob: behaviour against brute-force oracles, .gitignore (also against git
itself), honest truncation, symlinks and THREATS rows 12, 15 and 16, and the
agent-tool-anchors mistakes (section 4) that apply to glob."""

from __future__ import annotations

import errno
import fnmatch
import itertools
import json
import os
import random
import re
import shutil
import subprocess
from collections import Counter
from pathlib import Path

import pathspec
import pytest

from .helpers.envelope import assert_valid_envelope
from ..helpers import fds_opened_since, make_repository, open_fds

from corral.contained import Backend, Root, available_backends, backend_by_name
from corral.tools import GlobRequest, Limits, Toolbox

# -- oracles -------------------------------------------------------------------------


def expand(pattern: str) -> list[str]:
    """Brace alternatives, the slow obvious way (no nesting needed here)."""
    m = re.search(r"\{([^{}]*,[^{}]*)\}", pattern)
    if not m:
        return [pattern]
    return list(itertools.chain.from_iterable(
        expand(pattern[:m.start()] + choice + pattern[m.end():])
        for choice in m.group(1).split(",")))


def seg_match(pattern: list[str], parts: list[str]) -> bool:
    """Segment-wise glob: ``**`` is any number of segments, every other
    segment is an fnmatch pattern of one name."""
    if not pattern:
        return not parts
    head, rest = pattern[0], pattern[1:]
    if head == "**":
        return any(seg_match(rest, parts[i:]) for i in range(len(parts) + 1))
    return bool(parts) and fnmatch.fnmatchcase(parts[0], head) and seg_match(rest, parts[1:])


def glob_oracle(files: list[str], pattern: str) -> list[str]:
    out = set()
    for alt in expand(pattern):
        segs = [s for s in alt.split("/") if s not in ("", ".")]
        if len(segs) == 1:
            segs = ["**", *segs]
        out.update(f for f in files if seg_match(segs, f.split("/")))
    return sorted(out)


def ignore_oracle(root: Path) -> set[str]:
    """Root-relative regular files not ignored, by brute force: a path is
    ignored if it, or a directory above it, is ignored by the .gitignore
    files of the directories above it (deepest decides).  ``.git`` is
    skipped."""
    specs: dict[str, pathspec.GitIgnoreSpec] = {}
    for dirpath, dirnames, filenames in os.walk(root):
        rel = os.path.relpath(dirpath, root)
        rel = "" if rel == "." else rel + "/"
        if ".gitignore" in filenames and not os.path.islink(os.path.join(dirpath, ".gitignore")):
            specs[rel] = pathspec.GitIgnoreSpec.from_lines(
                Path(dirpath, ".gitignore").read_text().splitlines())

    def ignored(path: str, is_dir: bool) -> bool:
        parts = path.split("/")
        for depth in range(len(parts) - 1, -1, -1):
            prefix = "/".join(parts[:depth]) + "/" if depth else ""
            spec = specs.get(prefix)
            if spec is None:
                continue
            result = spec.check_file(path[len(prefix):] + ("/" if is_dir else ""))
            if result.include is not None:
                return bool(result.include)
        return False

    out = set()
    for dirpath, dirnames, filenames in os.walk(root):
        rel = os.path.relpath(dirpath, root)
        rel = "" if rel == "." else rel + "/"
        dirnames[:] = [d for d in dirnames if d != ".git" and not ignored(rel + d, True)]
        for name in filenames:
            full = os.path.join(dirpath, name)
            if os.path.islink(full) or not os.path.isfile(full):
                continue
            if not ignored(rel + name, False):
                out.add(rel + name)
    return out


def all_files(root: Path) -> list[str]:
    out = []
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = [d for d in dirnames if d != ".git"]
        for name in filenames:
            full = os.path.join(dirpath, name)
            if not os.path.islink(full) and os.path.isfile(full):
                out.append(os.path.relpath(full, root))
    return sorted(out)


NAMES = ["a", "b", "src", "lib", "test_1", "test_x", "Main", ".hidden", "x y", "[x]", "é",
         "data.v2", "node"]
EXTS = [".py", ".md", ".txt", ".PY", "", ".log", ".json"]


def random_tree(root: Path, seed: int, files: int = 120, ignores: bool = False) -> None:
    rng = random.Random(seed)
    dirs = [root]
    for _ in range(25):
        parent = rng.choice(dirs)
        if len(parent.relative_to(root).parts) >= 5:
            continue
        child = parent / rng.choice(NAMES)
        child.mkdir(exist_ok=True)
        if child not in dirs:
            dirs.append(child)
    for _ in range(files):
        path = rng.choice(dirs) / (rng.choice(NAMES) + rng.choice(EXTS))
        if not path.is_dir():
            path.write_text("x\n")
    if ignores:
        lines = ["*.log", "node/", "!keep.log", "/b", "*.json", "!a.json", "lib/*.md", "x y*"]
        for directory in rng.sample(dirs, min(6, len(dirs))):
            chosen = rng.sample(lines, rng.randrange(1, 4))
            (directory / ".gitignore").write_text("\n".join(chosen) + "\n")


PATTERNS = ["*.py", "**/*.py", "*.PY", "src/**/*.py", "*/*.md", "**/test_?.py", "[ab]*",
            "**/[!tab]*.txt", "{src,lib}/**/*.{py,md}", "**", "*", "a/**", "**/b/*",
            "**/lib/**/*.md", ".hidden*", "x y*", "[[]x]*", "é*", "*.v2*", "src/*",
            "**/*/test_*", "a/b/**/*"]


def call(toolbox: Toolbox, args: dict) -> dict:
    out = toolbox.call("glob", args)
    assert_valid_envelope(out)
    return out


# -- matching ---------------------------------------------------------------------------


@pytest.mark.parametrize("seed", [1, 2])
def test_matches_brute_force_oracle(tmp_path, make_toolbox, seed):
    random_tree(tmp_path, seed)
    files = all_files(tmp_path)
    toolbox = make_toolbox(tmp_path, limits=Limits(search_results=10_000))
    for pattern in PATTERNS:
        out = call(toolbox, {"pattern": pattern})
        assert out["ok"], out
        assert out["paths"] == glob_oracle(files, pattern), pattern
        assert out["truncated"] is False


def test_pattern_relative_to_path(tmp_path, make_toolbox):
    random_tree(tmp_path, 3)
    files = all_files(tmp_path)
    toolbox = make_toolbox(tmp_path, limits=Limits(search_results=10_000))
    for base in sorted({f.split("/")[0] for f in files if "/" in f}):
        below = [f[len(base) + 1:] for f in files if f.startswith(base + "/")]
        for pattern in ("*.py", "*/*", "**/*.md", "*"):
            out = call(toolbox, {"pattern": pattern, "path": base})
            assert out["path"] == base
            assert out["paths"] == [f"{base}/{p}" for p in glob_oracle(below, pattern)]


@pytest.mark.parametrize("seed", [4, 5, 6])
def test_gitignore_matches_brute_force_oracle(tmp_path, make_toolbox, seed):
    root = make_repository(tmp_path) / "work"  # a folder of a repository whose top is above
    root.mkdir()
    random_tree(root, seed, ignores=True)
    visible = sorted(ignore_oracle(root))
    toolbox = make_toolbox(root, limits=Limits(search_results=10_000))
    out = call(toolbox, {"pattern": "**"})
    assert out["paths"] == visible
    everything = call(toolbox, {"pattern": "**", "includeIgnored": True})
    assert everything["paths"] == all_files(root)
    assert everything["ignored"] == {"paths": 0, "directories": 0}
    for pattern in ("*.log", "*.json", "**/*.md", "*"):
        out = call(toolbox, {"pattern": pattern})
        assert out["paths"] == glob_oracle(visible, pattern), pattern


def _git_visible(root: Path) -> set[str]:
    git = shutil.which("git")
    assert git, "git is needed to check .gitignore semantics against git itself"
    subprocess.run([git, "init", "-q", str(root)], check=True)
    out = subprocess.run([git, "-C", str(root), "ls-files", "--others", "--exclude-standard",
                          "-z"], check=True, capture_output=True).stdout
    return {os.fsdecode(p) for p in out.split(b"\0") if p}


def test_nested_gitignore_agrees_with_git(tmp_path, make_toolbox):
    tree = {
        ".gitignore": "*.log\nbuild/\n/top-only.txt\ndocs/*.md\n!docs/keep.md\nsecret*\n",
        "app.log": "", "top-only.txt": "", "keep/top-only.txt": "", "build/out.js": "",
        "src/build/x.js": "", "docs/a.md": "", "docs/keep.md": "", "docs/deep/b.md": "",
        "src/.gitignore": "!important.log\n*.tmp\n/local/\n", "src/important.log": "",
        "src/other.log": "", "src/a.tmp": "", "src/local/x.py": "", "src/sub/local/y.py": "",
        "src/sub/.gitignore": "!*.tmp\n", "src/sub/b.tmp": "", "src/sub/c.py": "",
        "secrets/key.txt": "", "src/secret.py": "", "ok.py": "",
        "lib/.gitignore": "*.txt\n!keep.txt\nz/\n", "lib/a.py": "", "lib/a.txt": "",
        "lib/keep.txt": "", "lib/z/b.py": "", "lib/y/z/c.py": "", "lib/y/z.py": "",
    }
    for rel, text in tree.items():
        path = tmp_path / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    oracle = ignore_oracle(tmp_path)
    git = _git_visible(tmp_path)
    assert oracle == git  # the brute-force oracle is git's semantics here
    toolbox = make_toolbox(tmp_path)
    out = call(toolbox, {"pattern": "**"})
    assert set(out["paths"]) == git
    assert out["ignored"]["directories"] >= 3  # .git, build, secrets, src/build, src/local


def test_ignored_counts_and_how_to_include_them(tmp_path, make_toolbox):
    (tmp_path / ".gitignore").write_text("*.log\nbuild/\n")
    for rel in ("a.py", "b.log", "c.log", "build/x.py", "build/y.log", ".git/HEAD",
                "src/d.log", "src/e.py"):
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text("")
    toolbox = make_toolbox(tmp_path)
    out = call(toolbox, {"pattern": "*.log"})
    assert out["paths"] == []
    assert out["ignored"] == {"paths": 3, "directories": 2, "examples": [".git", "build"]}
    assert out["note"] == ("No files match '*.log' under the root. 3 matching paths ignored by "
                           ".gitignore and 2 directories not searched (.git, build: .gitignore "
                           "or .git); pass includeIgnored: true to include them. Paths ignored "
                           "by .gitignore were left out; with includeIgnored: true the pattern "
                           "finds them.")
    assert out["suggestedArgs"] == {"pattern": "*.log", "includeIgnored": True}
    following = call(toolbox, {"pattern": "*.log", "includeIgnored": True})
    assert following["paths"] == ["b.log", "build/y.log", "c.log", "src/d.log"]
    assert following["ignored"] == {"paths": 0, "directories": 0}
    assert "note" not in following
    py = call(toolbox, {"pattern": "*.py", "includeIgnored": True})
    assert py["paths"] == ["a.py", "build/x.py", "src/e.py"]
    git = call(toolbox, {"pattern": ".git/*", "includeIgnored": True})
    assert git["paths"] == [".git/HEAD"]


def test_gitignore_above_path_applies_and_a_named_ignored_path_is_searched(tmp_path, make_toolbox):
    make_repository(tmp_path)
    (tmp_path / ".gitignore").write_text("gen/\n*.bak\n")
    for rel in ("src/a.py", "src/a.bak", "src/gen/g.py", "gen/top.py"):
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text("")
    toolbox = make_toolbox(tmp_path)
    out = call(toolbox, {"pattern": "*", "path": "src"})
    assert out["paths"] == ["src/a.py"]
    assert out["ignored"] == {"paths": 1, "directories": 1, "examples": ["src/gen"]}
    named = call(toolbox, {"pattern": "*", "path": "src/gen"})
    assert named["paths"] == ["src/gen/g.py"]
    assert named["note"] == ("src/gen is ignored by .gitignore; it was searched because it was "
                             "named.")


def test_symlinked_gitignore_is_not_honoured(tmp_path, make_toolbox):
    (tmp_path / "rules").write_text("*.py\n")
    os.symlink("rules", tmp_path / ".gitignore")
    (tmp_path / "a.py").write_text("")
    assert call(make_toolbox(tmp_path), {"pattern": "*.py"})["paths"] == ["a.py"]


def test_directories_with_trailing_slash(tmp_path, make_toolbox):
    for rel in ("src/a/x.py", "src/b/y.py", "src/c.py", "lib/d/z.py"):
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text("")
    os.symlink("src/a", tmp_path / "src" / "linkdir")
    toolbox = make_toolbox(tmp_path)
    assert call(toolbox, {"pattern": "src/*/"})["paths"] == ["src/a/", "src/b/"]
    assert call(toolbox, {"pattern": "*/"})["paths"] == ["lib/", "lib/d/", "src/", "src/a/",
                                                         "src/b/"]


def test_hidden_files_match_and_sorting_is_code_point_order(tmp_path, make_toolbox):
    names = ["B.txt", "a.txt", "a-b.txt", "a/b.txt", "é.txt", "Z/z.txt", ".hidden.txt", "a b.txt"]
    for rel in names:
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text("")
    out = call(make_toolbox(tmp_path), {"pattern": "*.txt"})
    assert out["paths"] == sorted(names)
    assert out["paths"][0] == ".hidden.txt"  # (.env.txt would be a secret file now)


def test_absolute_pattern_inside_root(tmp_path, make_toolbox):
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "a.py").write_text("")
    (tmp_path / "a.py").write_text("")
    toolbox = make_toolbox(tmp_path)
    out = call(toolbox, {"pattern": f"{tmp_path}/src/*.py"})
    assert out["paths"] == ["src/a.py"]
    anchored = call(toolbox, {"pattern": f"{tmp_path}/*.py"})
    assert anchored["paths"] == ["a.py"]  # anchored: not "*.py" at any depth
    under = call(toolbox, {"pattern": f"{tmp_path}/src/*.py", "path": "src"})
    assert under["paths"] == ["src/a.py"]
    (tmp_path / "lib").mkdir()
    refused = call(toolbox, {"pattern": f"{tmp_path}/src/*.py", "path": "lib"})
    assert refused["code"] == "INVALID_ARGUMENT"
    assert refused["details"]["kind"] == "pattern_outside_path"
    assert str(tmp_path) not in json.dumps(refused)


# -- truncation ----------------------------------------------------------------------------


@pytest.mark.parametrize("count,truncated", [(4, False), (5, False), (6, True), (9, True)])
def test_truncated_only_when_more_than_the_cap(tmp_path, make_toolbox, count, truncated):
    for i in range(count):
        (tmp_path / f"f{i}.py").write_text("")
    out = call(make_toolbox(tmp_path, limits=Limits(search_results=5)), {"pattern": "*.py"})
    assert out["truncated"] is truncated
    assert out["paths"] == [f"f{i}.py" for i in range(min(count, 5))]
    if truncated:
        assert out["note"].startswith("More than 5 paths match; the first 5 in sorted order are "
                                      "listed.")
    else:
        assert "note" not in out


def test_file_limit_stops_the_walk_and_says_so(tmp_path, make_toolbox):
    for i in range(12):
        (tmp_path / f"f{i:02}.txt").write_text("")
    out = call(make_toolbox(tmp_path, limits=Limits(search_files=10)), {"pattern": "*.txt"})
    assert out["truncated"] is True
    assert out["paths"] == [f"f{i:02}.txt" for i in range(10)]
    assert "stopped after 10 files" in out["note"]


# -- symlinks, specials, containment (THREATS 12, 15, 16) ---------------------------------


def _outside_and_root(tmp_path: Path) -> tuple[Path, Path]:
    outside = tmp_path / "outside"
    (outside / "deep").mkdir(parents=True)
    (outside / "secret.py").write_text("")
    (outside / "deep" / "more.py").write_text("")
    root = tmp_path / "root"
    (root / "src").mkdir(parents=True)
    (root / "src" / "real.py").write_text("")
    return outside, root


def test_symlinks_never_followed_out_and_listed_only_when_they_lead_to_a_file(tmp_path,
                                                                                make_toolbox):
    outside, root = _outside_and_root(tmp_path)
    os.symlink("../outside", root / "out")  # relative, climbing out
    os.symlink(str(outside), root / "src" / "abs_out")  # absolute
    os.symlink("..", root / "src" / "up")  # to the root: a directory, never entered
    os.symlink("../..", root / "src" / "upup")  # above the root
    os.symlink("real.py", root / "src" / "alias.py")  # in-root file: listed
    os.symlink(str(outside / "secret.py"), root / "src" / "stolen.py")  # outside file: not
    os.symlink("missing.py", root / "src" / "dangling.py")
    os.symlink("../src", root / "src" / "self_dir.py")  # a directory named like a file
    out = call(make_toolbox(root), {"pattern": "**/*.py"})
    assert out["paths"] == ["src/alias.py", "src/real.py"]
    assert out["skipped"] == {"symlinks": 3}
    everything = call(make_toolbox(root), {"pattern": "**", "includeIgnored": True})
    assert everything["paths"] == ["src/alias.py", "src/real.py"]
    assert all("secret" not in p and "more" not in p for p in everything["paths"])


def test_a_link_is_decided_on_the_file_it_reaches_by_its_text_read_where_it_lies(tmp_path,
                                                                                  make_toolbox):
    """A link's text is read relative to its own directory, through
    directory links and '..' alike: the file it reaches is listed under the
    link's name unless a rule hides that file (it is then hidden, as the
    file is), and a link reaching no file is counted as a link."""
    root = tmp_path / "root"
    (root / "a" / "b").mkdir(parents=True)
    (root / "keys").mkdir()
    (root / "keys" / "plain.txt").write_text("x")
    (root / "keys" / ".env").write_text("TOKEN=1")
    (root / "keys" / "sub").mkdir()
    os.symlink("../keys", root / "a" / "dl")  # a directory link the walk does not enter
    os.symlink("../dl/plain.txt", root / "a" / "b" / "up_through_link.py")  # .. then a link
    os.symlink("../dl/.env", root / "a" / "b" / "to_secret.py")  # reaches a secret file
    os.symlink("../../keys/.env", root / "a" / "b" / "dotdot_secret.py")
    os.symlink("../../keys/plain.txt", root / "a" / "b" / "dotdot_plain.py")
    os.symlink("../dl/sub", root / "a" / "b" / "to_dir.py")  # a directory: a link
    os.symlink(str(root / "keys" / "plain.txt"), root / "a" / "b" / "absolute.py")
    os.symlink("../dl/none.txt", root / "a" / "b" / "dangling.py")
    out = call(make_toolbox(root), {"pattern": "**/*.py"})
    assert out["paths"] == ["a/b/dotdot_plain.py", "a/b/up_through_link.py"], out
    assert out["skipped"]["symlinks"] == 3, out  # the directory, the absolute, the dangling
    # the two that reach keys/.env, hidden as it is, and keys/.env itself: a
    # search counts every hidden file of a directory it walks, whatever the
    # pattern names (a count of the matching ones would be an oracle)
    assert out["denied"] == 3, out


def _raced_backend(name: str, races: int) -> tuple[Backend, Counter[str]]:
    """Backend ``name`` whose openat2 of a path through '..' answers EAGAIN
    (a rename somewhere in the system raced it) ``races`` times per path."""
    kind = type(backend_by_name(name))
    seen: Counter[str] = Counter()

    class Raced(kind):  # type: ignore[valid-type,misc]
        def openat2_or_errno(self, dir_fd: int, path: str, flags: int, mode: int,
                             resolve: int) -> int:
            if ".." in path.split("/") and seen[path] < races:
                seen[path] += 1
                return -errno.EAGAIN
            return super().openat2_or_errno(dir_fd, path, flags, mode, resolve)
    return Raced(openat2=True), seen


_OPENAT2 = [name for name in available_backends()
            if type(backend_by_name(name))(openat2=True).has_openat2]


@pytest.mark.parametrize("races", [1, 1000], ids=["once", "always"])
@pytest.mark.parametrize("backend_name", _OPENAT2)
def test_a_link_probe_raced_by_a_rename_decides_as_an_unraced_one(tmp_path, backend_name,
                                                                  races):
    """openat2 through '..' fails with EAGAIN when any rename races it: the
    link is asked once more, then resolved the long way; either way the
    file it reaches is listed, hidden or counted as without the race."""
    root = tmp_path / "root"
    (root / "a" / "b").mkdir(parents=True)
    (root / "keys").mkdir()
    (root / "keys" / "plain.txt").write_text("x")
    (root / "keys" / ".env").write_text("TOKEN=1")
    os.symlink("../../keys/.env", root / "a" / "b" / "dotdot_secret.py")
    os.symlink("../../keys/plain.txt", root / "a" / "b" / "dotdot_plain.py")
    os.symlink("../../keys/none.txt", root / "a" / "b" / "dangling.py")
    raced, seen = _raced_backend(backend_name, races)
    answers = []
    for backend in (type(backend_by_name(backend_name))(openat2=True), raced):
        with Root(str(root), backend=backend, fast_path=True) as opened, \
                Toolbox(opened) as box:
            answers.append(box.call("glob", {"pattern": "**/*.py"}))
    assert answers[0]["paths"] == ["a/b/dotdot_plain.py"], answers[0]
    # the dangling link is a link; the secret, and the link reaching it, hidden
    assert answers[0]["skipped"] == {"symlinks": 1} and answers[0]["denied"] == 2, answers[0]
    assert answers[1] == answers[0]
    assert seen, "no probe through '..' was raced"


@pytest.mark.parametrize("pattern", ["../*", "../outside/*.py", "**/../..", "**/../../**",
                                     "src/../../outside/*", "{..,src}/*.py"])
def test_patterns_never_reach_outside(tmp_path, make_toolbox, pattern):
    _, root = _outside_and_root(tmp_path)
    out = call(make_toolbox(root), {"pattern": pattern})
    assert out["code"] == "INVALID_ARGUMENT"
    assert out["details"]["kind"] == "dotdot"


@pytest.mark.parametrize("pattern", ["/**/*.py", "/*", "//outside/*.py"])
def test_absolute_patterns_outside_are_refused(tmp_path, make_toolbox, pattern):
    _, root = _outside_and_root(tmp_path)
    out = call(make_toolbox(root), {"pattern": pattern})
    assert out["code"] == "OUTSIDE_ROOT"
    assert str(tmp_path) not in json.dumps(out)


def test_absolute_pattern_of_the_outside_directory(tmp_path, make_toolbox):
    outside, root = _outside_and_root(tmp_path)
    out = call(make_toolbox(root), {"pattern": f"{outside}/**/*.py"})
    assert out["code"] == "OUTSIDE_ROOT"
    sibling = call(make_toolbox(root), {"pattern": f"{root}-evil/*.py"})  # shares the root's prefix
    assert sibling["code"] == "OUTSIDE_ROOT"


def test_fifo_and_socket_are_skipped_and_counted_without_blocking(tmp_path, make_toolbox,
                                                                   monkeypatch):
    os.mkfifo(tmp_path / "pipe.py")
    import socket
    sock = socket.socket(socket.AF_UNIX)
    monkeypatch.chdir(tmp_path)  # a relative name: macOS caps socket paths at 104 bytes
    try:
        sock.bind("sock.py")
        (tmp_path / "real.py").write_text("")
        out = call(make_toolbox(tmp_path), {"pattern": "*.py"})
    finally:
        sock.close()
    assert out["paths"] == ["real.py"]
    assert out["skipped"] == {"special": 2}


def test_undecodable_names_are_skipped_and_counted(tmp_path, make_toolbox):
    (tmp_path / "ok.py").write_text("")
    os.close(os.open(os.fsencode(tmp_path) + b"/bad\xff.py", os.O_CREAT | os.O_WRONLY))
    out = call(make_toolbox(tmp_path), {"pattern": "*.py"})
    assert out["paths"] == ["ok.py"]
    assert out["skipped"] == {"undecodableNames": 1}
    json.dumps(out).encode("utf-8")


def test_deny_rules_hide_and_count(tmp_path, make_toolbox):
    for rel in ("a.py", "secrets/b.py", "c/.env.py"):
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text("")
    out = call(make_toolbox(tmp_path, deny=["secrets/", ".env*"]), {"pattern": "**/*.py"})
    assert out["paths"] == ["a.py"]
    assert out["denied"] == 2


def test_authorization_is_asked_with_path_and_pattern(tmp_path, make_toolbox):
    (tmp_path / "src").mkdir()
    asked = []
    toolbox = make_toolbox(tmp_path, authorize=lambda request: asked.append(request) or True,
                  read_only=True)
    assert call(toolbox, {"pattern": "*.py", "path": "./src/"})["ok"]
    assert asked == [GlobRequest("src", "*.py")]


# -- agent-tool-anchors section 4, rows that apply to glob --------------------------------

def _tree(root: Path) -> None:
    for rel in ("src/app.py", "src/lib/util.py", "README.md", "build/gen.py"):
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text("")
    (root / ".gitignore").write_text("build/\n")


MISTAKES = [
    # (row, what the model did, args, expected code or "ok", details subset)
    (1, "path typo", {"pattern": "*.py", "path": "scr"}, "NOT_FOUND", {"didYouMean": ["src"]}),
    (1, "missing nested path", {"pattern": "*.py", "path": "src/lbi"}, "NOT_FOUND",
     {"didYouMean": ["src/lib"]}),
    (2, "absolute path inside the root", {"pattern": "*.py", "path": "@ROOT@/src"}, "ok", {}),
    (2, "relative path with ./ and trailing /", {"pattern": "*.py", "path": "./src/"}, "ok", {}),
    (3, "dotdot path", {"pattern": "*", "path": "../"}, "OUTSIDE_ROOT", {"kind": "dotdot"}),
    (3, "absolute path elsewhere", {"pattern": "*", "path": "/usr"}, "OUTSIDE_ROOT",
     {"kind": "absolute"}),
    (3, "sibling sharing the root's prefix", {"pattern": "*", "path": "@ROOT@-evil"},
     "OUTSIDE_ROOT", {"kind": "absolute"}),
    (3, "sibling by relative path", {"pattern": "*", "path": "../root-evil"}, "OUTSIDE_ROOT",
     {"kind": "dotdot"}),
    (3, "dotdot in the pattern", {"pattern": "../root-evil/*"}, "INVALID_ARGUMENT",
     {"kind": "dotdot"}),
    (5, "file given as the directory", {"pattern": "*.py", "path": "src/app.py"},
     "INVALID_ARGUMENT", {"kind": "not_directory"}),
    (19, "more matches than the cap", {"pattern": "**/*"}, "ok", {}),
    (20, "ignored paths are hidden", {"pattern": "gen.py"}, "ok", {}),
    (23, "pattern of the wrong type", {"pattern": ["*.py"]}, "INVALID_ARGUMENT",
     {"field": "pattern", "expected": "string"}),
    (23, "pattern missing", {"path": "src"}, "INVALID_ARGUMENT", {"field": "pattern"}),
    (23, "path of the wrong type", {"pattern": "*", "path": 3}, "INVALID_ARGUMENT",
     {"field": "path"}),
]


@pytest.mark.parametrize("row,what,args,expected,details", MISTAKES,
                         ids=[f"row{m[0]}-{m[1].replace(' ', '_')}" for m in MISTAKES])
def test_agent_mistakes(tmp_path, make_toolbox, row, what, args, expected, details):
    root = tmp_path / "root"
    _tree(root)
    make_repository(tmp_path)  # the root is a folder of a repository
    (tmp_path / "root-evil").mkdir()
    (tmp_path / "root-evil" / "loot.py").write_text("")
    args = {k: v.replace("@ROOT@", str(root)) if isinstance(v, str) else v
            for k, v in args.items()}
    toolbox = make_toolbox(root, limits=Limits(search_results=3))
    out = call(toolbox, args)
    assert str(tmp_path) not in json.dumps(out)
    if expected != "ok":
        assert out["code"] == expected, out
        for key, value in details.items():
            assert out["details"][key] == value
        if "suggestedTool" in out:  # following the suggestion succeeds
            follow = call(toolbox, out["suggestedArgs"]) if out["suggestedTool"] == "glob" \
                else toolbox.call(out["suggestedTool"], out["suggestedArgs"])
            assert follow["ok"] is True, follow
        if row in (1, 5):
            assert "suggestedTool" in out
        return
    assert out["ok"] is True
    if row == 2:
        assert out["path"] == "src" and out["paths"] == ["src/app.py", "src/lib/util.py"]
    if row == 19:  # 4 files, cap 3: honest
        assert out["truncated"] is True and len(out["paths"]) == 3
        assert "More than 3 paths match" in out["note"]
    if row == 20:  # the note says how to include them, and that works
        assert out["paths"] == []
        assert out["ignored"]["directories"] == 1 and "includeIgnored: true" in out["note"]
        follow = call(toolbox, {**args, "includeIgnored": True})
        assert follow["paths"] == ["build/gen.py"]


def test_no_descriptor_leaks_when_stopping_early_or_refusing(tmp_path, make_toolbox):
    for i in range(30):
        (tmp_path / f"d{i}" / "e").mkdir(parents=True)
        (tmp_path / f"d{i}" / "e" / "f.py").write_text("")
    toolbox = make_toolbox(tmp_path, limits=Limits(search_results=3))
    call(toolbox, {"pattern": "*.py"})  # warm up lazy imports
    before = open_fds()
    for args in ({"pattern": "*.py"}, {"pattern": "**/e/*.py", "path": "d1"},
                 {"pattern": "../*"}, {"pattern": "*", "path": "d1/e/f.py"},
                 {"pattern": "*", "path": "nope"}):
        call(toolbox, args)
    assert not fds_opened_since(before)
