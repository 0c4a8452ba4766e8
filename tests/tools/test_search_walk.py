"""The search walk's per-directory state and its fast paths, against the
slow, obvious answers:

* the .gitignore scope (IgnoreScope: built once per directory, a child in
  one automaton step per live anchored line) decides every entry as
  IgnoreRules.ignored does on its full path, for random .gitignore files
  and trees (anchored, unanchored, directory-only, negated and hostile
  lines);
* NameIndex (the literal name/end/start index of many name tests) never
  drops a test that matches;
* glob and grep over random trees with random host policies list exactly
  what a brute-force walk with Policy.visible lists (a hidden directory is
  not entered), and count what was hidden, on every backend config (the
  native listing and file scanner, and the per-entry path of the os
  backend)."""

from __future__ import annotations

import os
import random
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from .helpers.envelope import assert_valid_envelope
from ..helpers import make_repository

from corral.tools import Limits, Policy, Toolbox
from corral.tools._policy.rules import Op
from corral.tools._search.globs import NameIndex, compile_segments
from corral.tools._search.ignore import IgnoreRules, IgnoreScope, parse_ignore

NAMES = ["a", "b", "ab", "a.py", "b.py", "x.log", "keep.log", "build", "Build", "node", "src",
         "aaab", "a.b.c", "caf\u00e9", "x y", "[x]", ".env", ".hidden", "z.json", "a.json"]
LINES = ["*.log", "!keep.log", "build/", "/build", "node", "src/*.py", "/a", "a/b", "**/b",
         "a/**", "*.json", "!a.json", "*a*a*b", "[ab]*", "?.py", "x y", "\\[x]", "b/", "!b/",
         "*", "!*/", "/src/**/a", "caf\u00e9", "**/a/**/b", "*.b.*", "!.hidden", ".*",
         "src/*/a", "a/b/c", "/x y/**", "*/build", "a*/b", "**/src/a", "[ab]/x.log", "/node/",
         "!/src/a.py", "build/*.py", "/*/a.json", "a/ab", "!a/b/"]


# -- the .gitignore scope --------------------------------------------------------------------

@st.composite
def ignore_trees(draw: st.DrawFn) -> tuple[list[tuple[str, ...]], dict[tuple[str, ...], str]]:
    dirs: list[tuple[str, ...]] = [()]
    for _ in range(draw(st.integers(0, 6))):
        parent = draw(st.sampled_from(dirs))
        if len(parent) < 4:
            dirs.append((*parent, draw(st.sampled_from(NAMES))))
    files = {}
    for directory in draw(st.lists(st.sampled_from(dirs), max_size=3, unique=True)):
        files[directory] = "\n".join(draw(st.lists(st.sampled_from(LINES), min_size=1,
                                                   max_size=24)))
    return dirs, files


def _rules_above(files: dict[tuple[str, ...], str], parts: tuple[str, ...]) -> IgnoreRules:
    rules = IgnoreRules()
    for depth in range(len(parts)):
        spec = parse_ignore(files[parts[:depth]].encode()) if parts[:depth] in files else None
        if spec is not None:
            rules.push("".join(p + "/" for p in parts[:depth]), spec)
    return rules


@settings(max_examples=300, deadline=None)
@given(ignore_trees())
def test_ignore_scope_agrees_with_rules(tree):
    dirs, files = tree
    for parts in dirs:
        rules = _rules_above(files, parts)
        real = "/".join(parts) or "."
        scope = IgnoreScope.of(rules, real)
        own = parse_ignore(files[parts].encode()) if parts in files else None
        if own is not None:
            rules.push("".join(p + "/" for p in parts), own)
            scope = scope.pushed(own)
        prefix = "".join(p + "/" for p in parts)
        for name in NAMES:
            for is_dir in (False, True):
                assert scope.ignored(name, is_dir) == rules.ignored(prefix + name, is_dir, name), \
                    (parts, name, is_dir, files)
        for end in ("", ".py", ".log", "b", "json"):
            names = [n for n in NAMES if n.endswith(end)]
            kept, count = scope.kept_files(names, end)
            want = [n for n in names if not rules.ignored(prefix + n, False, n)]
            assert (kept, count) == (want, len(names) - len(want)), (parts, end, files)
        for name in NAMES:  # a child's scope, stepped from this one
            child = scope.child(name)
            grand = "".join(p + "/" for p in (*parts, name))
            for leaf in ("a", "b", "a.py", "build", "x.log"):
                for is_dir in (False, True):
                    assert child.ignored(leaf, is_dir) == rules.ignored(grand + leaf, is_dir,
                                                                        leaf)


SEGMENT_PATTERNS = ["*.py", "a*", "*b", "a*b", "ab", "?b", "[ab]", "*", "a?c*", "*.b.*", "\\*x",
                    "caf\u00e9*", "*\u00e9", "x y", "[!a]*", "a*a*a*b", "**", ".*", "*ab*",
                    "*a.b*", "*x1*y*", "*caf*", "*y?*", "*.t*[ab]*", "*?aaab?*", "*\u00e9*",
                    "*b.c*", "*[x]*", "*long-literal-piece*", "*a b*"]


@settings(max_examples=400, deadline=None)
@given(st.lists(st.sampled_from(SEGMENT_PATTERNS), min_size=1, max_size=30),
       st.lists(st.sampled_from(NAMES + ["*x", "zzb", "ac", "a c", "\u00e9", "x1y", "qx1qyq",
                                          "a.t-b", "long-literal-pieces", "caf\u00e9.b.c"]),
                max_size=12))
def test_name_index_keeps_every_test_that_matches(patterns, names):
    segments = [s for s in compile_segments(patterns) if not s.recursive]
    index = NameIndex(segments)
    for name in names:
        matching = [i for i, seg in enumerate(segments) if seg.test(name)]
        candidates = index.candidates(name)
        assert set(matching) <= set(candidates) and candidates == sorted(candidates)
        assert index.may_match(name) == bool(candidates) or not matching
        if matching:
            assert name in index.filter([name])
    for end in ("", ".py", "b", "\u00e9"):
        ending = [n for n in names if n.endswith(end)]
        kept = index.filter(ending, end)
        assert all(n in kept for n in ending if any(seg.test(n) for seg in segments))


def test_name_index_of_many_inner_literals():
    """Past NameIndex.INNER_FROM such tests, pieces of their inner literals
    are indexed; a piece at the very end or start of a name counts."""
    inner = ["*ab*", "*a.b*", "*x1*y*", "*caf*", "*y?*", "*.t*[ab]*", "*?aaab?*", "*b.c*",
             "*[x]*", "*long-literal-piece*", "*a b*", "*\u00e9*"]
    segments = compile_segments(inner)
    index = NameIndex(segments)
    for name in NAMES + ["ab", "xab", "abx", "cafe", "xcaf", "b.c", "qb.c", "\u00e9", "a.t-b"]:
        matching = [i for i, seg in enumerate(segments) if seg.test(name)]
        assert set(matching) <= set(index.candidates(name)), name
        assert index.may_match(name) or not matching, name


# -- whole walks with random host policies ------------------------------------------------------

WALK_NAMES = ["a", "src", "private", "Private", ".env", ".ENV", ".env.example", "id_rsa",
              "k.pem", "K.PEM", "x.secret", "caf\u00e9", "cafe\u0301", ".aws", "credentials",
              "notes.txt", "b.py", "deploy", ".g\u200cit"]
DENY = ["private/**", "*.secret", "/a/**", "caf\u00e9", "**/deploy", "src/*.py", "!src/b.py"]


def _random_tree(root: Path, rng: random.Random) -> None:
    dirs = [root]
    for _ in range(12):
        parent = rng.choice(dirs)
        if len(parent.relative_to(root).parts) >= 4:
            continue
        child = parent / rng.choice(WALK_NAMES)
        if not child.exists():
            child.mkdir()
            dirs.append(child)
    for _ in range(40):
        path = rng.choice(dirs) / rng.choice(WALK_NAMES)
        if not path.exists():
            path.write_text("x needle\n")


def _walk_oracle(root: Path, policy: Policy) -> tuple[list[str], int]:
    """Files a search lists (no .gitignore in play) and how many entries
    the rules hide: a hidden directory counts once and is not entered."""
    found, hidden = [], 0
    for dirpath, dirnames, filenames in os.walk(root):
        rel = os.path.relpath(dirpath, root)
        rel = "" if rel == "." else rel + "/"
        keep = []
        for d in sorted(dirnames):
            if policy.visible(rel + d, Op.SEARCH):
                keep.append(d)
            else:
                hidden += 1
        dirnames[:] = keep
        for name in filenames:
            if policy.visible(rel + name, Op.SEARCH):
                found.append(rel + name)
            else:
                hidden += 1
    return sorted(found), hidden


@pytest.mark.parametrize("seed", range(6))
def test_walks_list_what_policy_visible_lists(tmp_path, make_root, seed):
    rng = random.Random(seed)
    root = tmp_path / "root"
    root.mkdir()
    _random_tree(root, rng)
    policy = Policy.build(defaults=rng.random() < 0.7, deny=rng.sample(DENY, rng.randrange(4)),
                          secrets=rng.sample(["*.txt", ".aws", "!**/notes.txt"],
                                             rng.randrange(3)))
    files, hidden = _walk_oracle(root, policy)
    box = Toolbox(make_root(root), policy=policy, limits=Limits(search_results=10_000))
    out = box.call("glob", {"pattern": "**", "includeIgnored": True})
    assert_valid_envelope(out)
    assert out["paths"] == files
    assert out.get("denied", 0) == hidden
    found = box.call("grep", {"pattern": "needle", "includeIgnored": True,
                              "outputMode": "files"})
    assert found["files"] == files
    assert found.get("denied", 0) == hidden
    assert found["filesSearched"] == len(files)


# -- bounded .gitignore work ------------------------------------------------------------------
# Order-of-magnitude hang detectors, not speed tests: each input costs well
# under a second here once indexed; an unindexed match takes 10-20 s.  The
# work is bounded in CPU time: on a loaded machine the wall clock runs ten
# times the work and more (a deadline, itself wall-clock, is bounded so).

def _timed(box: Toolbox, tool: str, args: dict, timeout: float) -> tuple[dict, float]:
    import time
    started = time.perf_counter()
    out = box.call(tool, args, timeout=timeout)
    return out, time.perf_counter() - started


def _cpu_timed(box: Toolbox, tool: str, args: dict, timeout: float) -> tuple[dict, float]:
    import time
    started = time.process_time()
    out = box.call(tool, args, timeout=timeout)
    return out, time.process_time() - started


def test_many_anchored_gitignore_lines_cost_lookups_not_steps(tmp_path):
    """9,800 anchored lines (``a<j>/*.o``, ``/b<j>``; MAX_RULES is 10,000)
    in force beside 200 directories: each directory and entry looks its
    name up in an index of what the lines wait for, instead of stepping
    every line (about 10 s before)."""
    make_repository(tmp_path)
    (tmp_path / ".gitignore").write_text("".join(f"a{j}/*.o\n/b{j}\n" for j in range(4_900))
                                         + "/d7\nd1*/x.txt\n")
    for i in range(200):
        (tmp_path / f"d{i}").mkdir()
        (tmp_path / f"d{i}" / "x.txt").write_text("x\n")
    box = Toolbox(tmp_path, limits=Limits(search_results=10_000))
    out, seconds = _cpu_timed(box, "glob", {"pattern": "**/*.txt"}, 60)
    assert out["ok"] is True and seconds < 8, (seconds, out.get("details"))
    want = [f"d{i}/x.txt" for i in range(200) if i != 7 and not str(i).startswith("1")]
    assert out["paths"] == sorted(want)
    found, seconds = _cpu_timed(box, "grep", {"pattern": "^x$", "outputMode": "files"}, 60)
    assert found["files"] == sorted(want) and seconds < 8, seconds


def test_gitignore_lines_sharing_a_literal_stop_at_the_deadline(tmp_path):
    """10,000 lines that every name may match by their literals (``*.t*[q<j>]*``):
    each name is decided against all of them, so the call is bounded by its
    deadline, with checkpoints between names: time_limit, partial result."""
    make_repository(tmp_path)
    (tmp_path / ".gitignore").write_text("".join(f"*.t*[q{j}]*\n" for j in range(10_000)))
    for i in range(300):
        (tmp_path / f"f{i}.txt").write_text("hay\n")
    out, seconds = _timed(Toolbox(tmp_path), "glob", {"pattern": "*.txt"}, 0.5)
    assert out["ok"] is True or out["details"]["kind"] == "time_limit", out
    assert seconds < 5  # the deadline plus a few names' worth, never the whole 3 M tests


HOSTILE_IGNORES = {
    # every name may match each line by its literals: decided against all of them
    "literal-class": "".join(f"*.t*[q{j}]*\n" for j in range(10_000)),
    # anchored chains a deep tree keeps alive at every level
    "anchored-chains": "".join(f"**/a/**/a/**/a/**/x{j}\n" for j in range(5_000)),
}


@pytest.mark.parametrize("tool,args", [("glob", {"pattern": "**/*.txt"}),
                                       ("grep", {"pattern": "zzz"})], ids=["glob", "grep"])
@pytest.mark.parametrize("shape", sorted(HOSTILE_IGNORES))
def test_a_cancelled_search_over_a_hostile_gitignore_stops_soon(tmp_path, shape, tool, args):
    """A search of many seconds' work over a hostile .gitignore (a search
    that ran on after its cancel would hold a worker of corral serve) stops at
    its next checkpoint: it answers ``cancelled`` within a few CPU seconds'
    work after the cancel (an order-of-magnitude bound: the whole search
    takes tens of seconds here)."""
    import threading
    import time

    from corral.tools import CancelToken

    make_repository(tmp_path)
    (tmp_path / ".gitignore").write_text(HOSTILE_IGNORES[shape])
    for i in range(500):
        (tmp_path / f"{'a' * 60}t{i}.txt").write_text("hay\n")
    deep = tmp_path
    for _ in range(30):
        deep = deep / "a"
        deep.mkdir()
        (deep / f"{'a' * 60}x.txt").write_text("hay\n")
    token = CancelToken()
    cancelled_at: list[float] = []

    def cancel() -> None:
        cancelled_at.append(time.process_time())
        token.cancel()

    # the work after the cancel is measured in CPU time (this process's): on
    # a loaded machine the wall clock runs ten times the work and more
    timer = threading.Timer(0.3, cancel)
    with Toolbox(tmp_path) as box:
        timer.start()
        try:
            out = box.call(tool, args, cancel=token, timeout=120)
        finally:
            timer.cancel()
        stopped_at = time.process_time()
    assert out["ok"] is False and out["details"]["kind"] == "cancelled", out
    seconds = stopped_at - cancelled_at[0]
    assert seconds < 2.5, f"{tool} spent {seconds:.1f} CPU s after its cancel"
