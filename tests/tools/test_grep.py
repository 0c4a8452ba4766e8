"""grep: results against a brute-force oracle in every output mode, context,
include, one-file paths, streaming of large files, skipped and counted
files (binary, FIFO, unreadable, hard links, symlinks), regex refusals and
THREATS rows 12 and 16, and the agent-tool-anchors mistakes that apply."""

from __future__ import annotations

import errno
import json
import os
import random
import re
import socket
import tracemalloc
from pathlib import Path

import pytest

from .helpers.envelope import assert_valid_envelope
from .helpers.faults import FaultBackend
from ..helpers import make_repository

from corral.contained import Root
from corral.tools import GrepRequest, Limits, Toolbox
from corral.tools._builtin.grep import CHUNK

WORDS = ["alpha", "beta", "Gamma", "delta", "needle", "NEEDLE", "x", "def", "foo_handler(",
         "é", "École", "école", "  ", "\t", "return", "42", "needle42"]


def random_tree(root: Path, seed: int, files: int = 40) -> None:
    rng = random.Random(seed)
    dirs = [root]
    for i in range(8):
        d = rng.choice(dirs) / f"d{i}"
        d.mkdir()
        dirs.append(d)
    for i in range(files):
        lines = [" ".join(rng.choice(WORDS) for _ in range(rng.randrange(0, 8)))
                 for _ in range(rng.randrange(0, 30))]
        ending = rng.choice(["\n", "\r\n"])
        text = ending.join(lines) + rng.choice(["", ending])
        name = f"f{i}" + rng.choice([".py", ".txt", ".md"])
        (rng.choice(dirs) / name).write_bytes(text.encode("utf-8"))


def oracle(root: Path, regex: re.Pattern, include: str | None = None) -> list[tuple[str, int, str]]:
    """Every (path, line, text) whose line matches, by reading every file
    whole and splitting it: the obvious way."""
    import fnmatch
    out = []
    for dirpath, dirnames, filenames in os.walk(root):
        for name in filenames:
            if include and not fnmatch.fnmatchcase(name, include):
                continue
            full = Path(dirpath, name)
            data = full.read_bytes()
            if b"\0" in data[:8000]:
                continue
            rel = full.relative_to(root).as_posix()
            if not data:
                continue  # an empty file has no lines
            for number, line in enumerate(data.decode("utf-8", "replace").split("\n"), 1):
                line = line.rstrip("\r")
                if regex.search(line):
                    out.append((rel, number, line))
            if data.endswith(b"\n") and out and out[-1][0] == rel and \
                    out[-1][1] == data.count(b"\n") + 1:
                out.pop()  # the empty "line" after the final newline is not a line
    return sorted(out)


def grep(toolbox: Toolbox, **args) -> dict:
    out = toolbox.call("grep", args)
    assert_valid_envelope(out)
    return out


BIG = Limits(search_results=100_000)
SEARCHES = [  # (args, the oracle's regex)
    ({"pattern": "needle"}, re.compile("needle")),
    ({"pattern": "needle", "caseInsensitive": True}, re.compile("needle", re.I)),
    ({"pattern": "foo_handler(", "regex": False}, re.compile(re.escape("foo_handler("))),
    ({"pattern": r"\bdef\s+\w+_handler\("}, re.compile(r"\bdef\s+\w+_handler\(")),
    ({"pattern": "^return"}, re.compile("^return")),
    ({"pattern": "42$"}, re.compile("42$")),
    ({"pattern": "^$"}, re.compile("^$")),
    ({"pattern": "école", "caseInsensitive": True}, re.compile("école", re.I)),
    ({"pattern": "É", "regex": False}, re.compile("É")),
    ({"pattern": r"\t"}, re.compile(r"\t")),
    ({"pattern": "a.p", "regex": True}, re.compile("a.p")),
    ({"pattern": "a.p", "regex": False}, re.compile(r"a\.p")),
]


@pytest.mark.parametrize("seed", [1, 2])
def test_every_mode_matches_the_oracle(tmp_path, make_toolbox, seed):
    random_tree(tmp_path, seed)
    toolbox = make_toolbox(tmp_path, limits=BIG)
    for args, regex in SEARCHES:
        expected = oracle(tmp_path, regex)
        out = grep(toolbox, **args)
        got = [(m["path"], m["line"], m["text"]) for m in out["matches"]]
        assert got == expected, args
        assert out["truncated"] is False
        files = grep(toolbox, **args, outputMode="files")
        assert files["files"] == sorted({p for p, _, _ in expected}), args
        counts = grep(toolbox, **args, outputMode="counts")
        want = {}
        for path, _, _ in expected:
            want[path] = want.get(path, 0) + 1
        assert counts["counts"] == [{"path": p, "count": c} for p, c in sorted(want.items())]


def test_include_filters_names_in_a_tree_and_for_one_file(tmp_path, make_toolbox):
    random_tree(tmp_path, 3)
    toolbox = make_toolbox(tmp_path, limits=BIG)
    for include in ("*.py", "*.{md,txt}", "f1*"):
        import fnmatch
        regex = re.compile("needle")
        allowed = [pat for pat in include.strip("*.{}").split(",")] if "{" in include else None
        out = grep(toolbox, pattern="needle", include=include)
        got = [(m["path"], m["line"]) for m in out["matches"]]
        if allowed:
            want = [(p, n) for p, n, _ in oracle(tmp_path, regex)
                    if p.rsplit(".", 1)[-1] in allowed]
        else:
            want = [(p, n) for p, n, _ in oracle(tmp_path, regex, include)]
        assert got == want, include
        assert all(fnmatch.fnmatchcase(p.rsplit("/", 1)[-1], "*") for p, _ in got)
    one = next(p for p, _, _ in oracle(tmp_path, re.compile("needle")) if p.endswith(".py"))
    hit = grep(toolbox, pattern="needle", path=one, include="*.py")
    assert hit["matches"] and all(m["path"] == one for m in hit["matches"])
    assert hit["filesSearched"] == 1
    miss = grep(toolbox, pattern="needle", path=one, include="*.md")
    assert miss["matches"] == [] and miss["filesSearched"] == 0
    assert miss["note"] == (f"No line matches 'needle'. include '*.md' does not match the name "
                            f"of {one}, so it was not searched. Without include the pattern finds "
                            "matches.")
    # the call that finds it, verified before it is offered
    assert miss["suggestedTool"] == "grep"
    assert miss["suggestedArgs"] == {"pattern": "needle", "path": one}
    assert grep(toolbox, **miss["suggestedArgs"])["matches"]


def test_include_with_a_slash_is_matched_below_path(tmp_path, make_toolbox):
    for rel in ("src/a.py", "src/sub/b.py", "lib/c.py"):
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text("hit\n")
    out = grep(make_toolbox(tmp_path), pattern="hit", include="src/**/*.py", outputMode="files")
    assert out["files"] == ["src/a.py", "src/sub/b.py"]


def test_one_file_or_a_tree(tmp_path, make_toolbox):
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "a.py").write_text("one\ntwo needle\nthree\n")
    (tmp_path / "src" / "b.py").write_text("needle\n")
    toolbox = make_toolbox(tmp_path)
    one = grep(toolbox, pattern="needle", path="src/a.py")
    assert one["path"] == "src/a.py"
    assert one["matches"] == [{"path": "src/a.py", "line": 2, "text": "two needle"}]
    tree = grep(toolbox, pattern="needle", path="src")
    assert [(m["path"], m["line"]) for m in tree["matches"]] == [("src/a.py", 2), ("src/b.py", 1)]
    absolute = grep(toolbox, pattern="needle", path=str(tmp_path / "src" / "a.py"))
    assert absolute["path"] == "src/a.py" and absolute["matches"] == one["matches"]


# -- context ---------------------------------------------------------------------------


def test_context_lines_never_repeat_and_stop_at_the_file_edges(tmp_path, make_toolbox):
    lines = [f"line {i}" for i in range(1, 21)]
    for i in (2, 5, 6, 19):
        lines[i - 1] += " HIT"
    (tmp_path / "f.txt").write_text("\n".join(lines) + "\n")
    out = grep(make_toolbox(tmp_path), pattern="HIT", context=2)
    got = {m["line"]: (m["before"], m["after"]) for m in out["matches"]}
    assert got == {
        2: (["line 1"], ["line 3", "line 4"]),
        5: ([], []),  # line 3 and 4 were shown after line 2; line 6 is a match
        6: ([], ["line 7", "line 8"]),
        19: (["line 17", "line 18"], ["line 20"]),
    }
    assert out["context"] == 2


def test_context_is_capped(tmp_path, make_toolbox):
    (tmp_path / "f.txt").write_text("\n".join(f"l{i}" for i in range(50)) + "\nHIT\n")
    out = grep(make_toolbox(tmp_path, limits=Limits(grep_context=3)), pattern="HIT", context=30)
    assert out["matches"][0]["before"] == ["l47", "l48", "l49"]
    assert out["context"] == 3
    assert out["note"] == "context was capped at 3 lines."


def test_context_across_chunks_of_a_large_file(tmp_path, make_toolbox):
    lines = [f"{i:07d} " + "x" * 60 for i in range(40_000)]  # ~2.7 MB: several chunks
    targets = [1, 15_000, 15_001, 39_999, 40_000]
    for t in targets:
        lines[t - 1] += " HIT"
    (tmp_path / "big.txt").write_text("\n".join(lines) + "\n")
    assert (tmp_path / "big.txt").stat().st_size > 2 * CHUNK
    out = grep(make_toolbox(tmp_path), pattern="HIT", context=1)
    assert [m["line"] for m in out["matches"]] == targets
    by_line = {m["line"]: m for m in out["matches"]}
    assert by_line[15_000]["before"] == [lines[14_998]]
    assert by_line[15_000]["after"] == []
    assert by_line[15_001]["after"] == [lines[15_001]]
    assert by_line[40_000]["after"] == []


# -- truncation ---------------------------------------------------------------------------


@pytest.mark.parametrize("mode,key", [("matches", "matches"), ("files", "files"),
                                      ("counts", "counts")])
@pytest.mark.parametrize("hits,truncated", [(3, False), (4, False), (5, True)])
def test_truncated_only_when_there_is_more(tmp_path, make_toolbox, mode, key, hits, truncated):
    for i in range(hits):
        (tmp_path / f"f{i}.txt").write_text("needle\n")
    out = grep(make_toolbox(tmp_path), pattern="needle", limit=4, outputMode=mode)
    assert len(out[key]) == min(hits, 4)
    assert out["truncated"] is truncated
    assert out["limit"] == 4
    assert ("there are more" in out.get("note", "")) is truncated


def test_limit_is_capped_by_the_host(tmp_path, make_toolbox):
    for i in range(5):
        (tmp_path / f"f{i}.txt").write_text("needle\n")
    out = grep(make_toolbox(tmp_path, limits=Limits(search_results=2)), pattern="needle", limit=50)
    assert out["limit"] == 2 and len(out["matches"]) == 2 and out["truncated"] is True
    assert "limit was capped at 2." in out["note"]


# -- large files, long lines (row 17) -------------------------------------------------------


def test_large_file_is_streamed_with_bounded_memory(tmp_path, make_toolbox):
    line = b"0123456789abcdef" * 4 + b"\n"
    block = line * (1 << 14)  # 1 MiB of lines
    with open(tmp_path / "big.log", "wb") as f:
        f.write(b"first needle\n")
        for _ in range(24):
            f.write(block)
        f.write(b"last needle\n")
    size = (tmp_path / "big.log").stat().st_size
    toolbox = make_toolbox(tmp_path)
    tracemalloc.start()
    try:
        out = grep(toolbox, pattern="needle", path="big.log")
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert [m["line"] for m in out["matches"]] == [1, 24 * (1 << 14) + 2]
    assert peak < 8 * CHUNK < size / 3, peak  # never the whole file in memory


def test_very_long_line_is_found_once_and_cut(tmp_path, make_toolbox):
    data = b"a" * (3 * CHUNK) + b"needle" + b"b" * CHUNK + b"needle" + b"c" * 100 + b"\nend\n"
    (tmp_path / "min.js").write_bytes(data)
    out = grep(make_toolbox(tmp_path, limits=Limits(search_line_chars=80)), pattern="needle")
    assert len(out["matches"]) == 1
    match = out["matches"][0]
    assert match["line"] == 1 and match["cut"] is True
    assert len(match["text"]) == 80 and "needle" in match["text"]
    counts = grep(make_toolbox(tmp_path), pattern="needle|end", outputMode="counts")
    assert counts["counts"] == [{"path": "min.js", "count": 2}]


def test_lines_are_cut_around_the_match(tmp_path, make_toolbox):
    (tmp_path / "f.txt").write_text("x" * 300 + "needle" + "y" * 300 + "\nshort needle\n")
    out = grep(make_toolbox(tmp_path, limits=Limits(search_line_chars=50)), pattern="needle")
    first, second = out["matches"]
    assert len(first["text"]) == 50 and "needle" in first["text"] and first["cut"] is True
    assert second == {"path": "f.txt", "line": 2, "text": "short needle"}


def test_crlf_and_missing_final_newline_and_bad_utf8(tmp_path, make_toolbox):
    (tmp_path / "crlf.txt").write_bytes(b"a\r\nneedle one\r\nb\r\nneedle two")
    (tmp_path / "latin.txt").write_bytes(b"caf\xe9 needle\n")
    out = grep(make_toolbox(tmp_path), pattern="needle")
    assert [(m["path"], m["line"], m["text"]) for m in out["matches"]] == [
        ("crlf.txt", 2, "needle one"), ("crlf.txt", 4, "needle two"),
        ("latin.txt", 1, "caf\ufffd needle")]
    json.dumps(out).encode("utf-8")


# -- what is skipped, and counted (rows 18, 20; THREATS 12, 16) --------------------------------


def test_binary_files_are_skipped_and_counted(tmp_path, make_toolbox):
    (tmp_path / "a.bin").write_bytes(b"\x00\x01needle")
    (tmp_path / "late.bin").write_bytes(b"x" * 9000 + b"\x00needle\n")  # NUL after 8,000
    (tmp_path / "t.txt").write_text("needle\n")
    toolbox = make_toolbox(tmp_path)
    out = grep(toolbox, pattern="needle")
    assert [m["path"] for m in out["matches"]] == ["late.bin", "t.txt"]
    assert out["skipped"] == {"binary": 1, "unreadable": 0}
    one = grep(toolbox, pattern="needle", path="a.bin")
    assert one["matches"] == [] and one["skipped"]["binary"] == 1
    assert one["note"] == ("No line matches 'needle'. a.bin is a binary file; it was not "
                           "searched. Also tried, finding nothing: case-insensitively.")


def test_fifo_socket_and_symlinks_are_skipped_and_never_block(tmp_path, make_toolbox, monkeypatch):
    outside = tmp_path / "outside"
    (outside / "d").mkdir(parents=True)
    (outside / "secret.txt").write_text("needle outside\n")
    (outside / "d" / "deep.txt").write_text("needle deep outside\n")
    root = tmp_path / "root"
    root.mkdir()
    (root / "real.txt").write_text("needle\n")
    os.mkfifo(root / "pipe")
    sock = socket.socket(socket.AF_UNIX)
    monkeypatch.chdir(root)  # a relative name: macOS caps socket paths at 104 bytes
    sock.bind("sock")
    try:
        os.symlink("../outside", root / "out")
        os.symlink(str(outside / "secret.txt"), root / "stolen.txt")
        os.symlink("real.txt", root / "alias.txt")  # in-root: not searched twice
        os.symlink(".", root / "loop")
        out = grep(make_toolbox(root), pattern="needle", includeIgnored=True)
    finally:
        sock.close()
    assert out["matches"] == [{"path": "real.txt", "line": 1, "text": "needle"}]
    assert out["skipped"] == {"binary": 0, "unreadable": 0, "symlinks": 4, "special": 2}
    assert out["filesSearched"] == 1
    assert "outside" not in json.dumps(out)


def test_hard_linked_files_are_skipped_unless_allowed(tmp_path, make_toolbox):
    outside = tmp_path / "outside.txt"
    outside.write_text("needle from outside\n")
    root = tmp_path / "root"
    root.mkdir()
    os.link(outside, root / "linked.txt")
    (root / "own.txt").write_text("needle\n")
    out = grep(make_toolbox(root), pattern="needle")
    assert [m["path"] for m in out["matches"]] == ["own.txt"]
    assert out["skipped"]["hardlinks"] == 1
    allowed = grep(make_toolbox(root, allow_hardlinks=True), pattern="needle")
    assert [m["path"] for m in allowed["matches"]] == ["linked.txt", "own.txt"]


def test_unreadable_files_are_counted_and_the_rest_kept(tmp_path):
    for name in ("a.txt", "locked.txt", "z.txt"):
        (tmp_path / name).write_text("needle\n")
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "x.txt").write_text("needle\n")
    backend = FaultBackend(open_faults={"locked.txt": errno.EACCES, "sub": errno.EACCES})
    out = grep(Toolbox(Root(tmp_path, backend=backend)), pattern="needle")
    assert [m["path"] for m in out["matches"]] == ["a.txt", "z.txt"]
    assert out["skipped"] == {"binary": 0, "unreadable": 1, "unreadableDirectories": 1}


def test_gitignore_and_git_are_skipped_and_counted(tmp_path, make_toolbox):
    (tmp_path / ".gitignore").write_text("*.log\ndist/\n")
    for rel in ("a.txt", "b.log", "dist/c.txt", ".git/config", "src/.gitignore", "src/d.txt",
                "src/e.txt"):
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text("needle\n" if "gitignore" not in rel else "e.txt\n")
    toolbox = make_toolbox(tmp_path)
    out = grep(toolbox, pattern="needle", outputMode="files")
    assert out["files"] == ["a.txt", "src/d.txt"]
    assert out["ignored"] == {"paths": 2, "directories": 2, "examples": [".git", "dist"]}
    assert "pass includeIgnored: true" in out["note"]
    everything = grep(toolbox, pattern="needle", outputMode="files", includeIgnored=True)
    assert everything["files"] == [".git/config", "a.txt", "b.log", "dist/c.txt", "src/d.txt",
                                   "src/e.txt"]


def test_deny_rules_hide_contents(tmp_path, make_toolbox):
    (tmp_path / ".env").write_text("TOKEN=needle\n")
    (tmp_path / "a.txt").write_text("needle\n")
    out = grep(make_toolbox(tmp_path, deny=[".env"]), pattern="needle")
    assert [m["path"] for m in out["matches"]] == ["a.txt"]
    assert out["denied"] == 1
    assert "TOKEN" not in json.dumps(out)


# -- patterns --------------------------------------------------------------------------------


@pytest.mark.parametrize("pattern", [r"(foo|bar)+", r"(?:A|ab)+c", r"(a|b|c)*d", r"\d+(\.\d+)?",
                                     r"(?:x{3})+"])
def test_safe_regexes_run(tmp_path, make_toolbox, pattern):
    (tmp_path / "f.txt").write_text("foo, , ,x aab 1.5\n")
    out = grep(make_toolbox(tmp_path), pattern=pattern)
    assert out["ok"] is True, out


# Possessive quantifiers and atomic groups are what a model writes to avoid
# backtracking; RE2 has neither (nor lookaround): each is refused with a rewrite
# RE2 runs, verified to find the line (a typed refusal that says what to do).
@pytest.mark.parametrize("pattern,what,rewrite", [
    (r"(?:,\s*+)*x", "a possessive quantifier", r"(?:,\s*)*x"),
    (r"(?>a+)+b", "an atomic group", r"(?:a+)+b"),
    (r"(?=a)a+", "a lookahead", r"(?:a)a+"),
    (r"(?:\s*+,)+", "a possessive quantifier", r"(?:\s*,)+"),
])
def test_constructs_re2_cannot_run_are_refused_with_a_working_rewrite(tmp_path, make_toolbox,
                                                                       pattern, what, rewrite):
    (tmp_path / "f.txt").write_text("foo, , ,x aab 1.5\n")
    toolbox = make_toolbox(tmp_path)
    out = grep(toolbox, pattern=pattern)
    assert out["code"] == "INVALID_ARGUMENT"
    assert out["details"]["kind"] == "regex_unsupported"
    assert out["details"]["reason"] == what
    assert out["suggestedArgs"] == {"pattern": rewrite}
    follow = grep(toolbox, **out["suggestedArgs"])
    assert follow["matches"], follow


# What a backtracking engine takes exponential time on, RE2 runs in linear time:
# these now run (on a long line, with a generous hang bound), except the
# backreference, which RE2 cannot express.
@pytest.mark.parametrize("pattern", [r"(a+)+$", r"(a*)*b", r"(a|a)*b", r"(a|aa)+$",
                                     r"(\w+\s?)+$", r"(.*a){12}", r"(a?){25}a{25}",
                                     r"(?:(?:a+)b?)+c"])
def test_catastrophic_regexes_run_in_linear_time(tmp_path, make_toolbox, pattern):
    import time
    (tmp_path / "f.txt").write_text("a" * 20_000 + "!\n")
    started = time.monotonic()
    out = grep(make_toolbox(tmp_path), pattern=pattern)
    assert time.monotonic() - started < 10, pattern  # an order-of-magnitude hang detector
    assert out["ok"] is True, out


def test_backreference_is_refused_with_a_superset_rewrite(tmp_path, make_toolbox):
    (tmp_path / "f.txt").write_text("say the the word\n")
    out = grep(make_toolbox(tmp_path), pattern=r"(\w+) \1")
    assert out["code"] == "INVALID_ARGUMENT"
    assert out["details"]["kind"] == "regex_unsupported"
    assert out["details"]["rewrite"] == r"(\w+) (?:\w+)"
    assert out["details"]["rewriteExact"] is False
    assert out["suggestedArgs"] == {"pattern": r"(\w+) (?:\w+)"}


def test_bad_regex_gives_the_parser_reason_and_a_literal_search_works(tmp_path, make_toolbox):
    (tmp_path / "f.py").write_text("print(x\n")
    toolbox = make_toolbox(tmp_path)
    out = grep(toolbox, pattern="print(")
    assert out["code"] == "INVALID_ARGUMENT"
    assert out["details"]["reason"] == "missing )"
    assert out["suggestedArgs"] == {"pattern": "print(", "regex": False}
    literal = grep(toolbox, **out["suggestedArgs"])
    assert literal["matches"] == [{"path": "f.py", "line": 1, "text": "print(x"}]


def test_newline_escape_never_matches_and_says_why(tmp_path, make_toolbox):
    (tmp_path / "f.txt").write_text("a\nb\n")
    out = grep(make_toolbox(tmp_path), pattern=r"a\nb")
    assert out["matches"] == []
    assert out["note"] == ("No line matches 'a\\\\nb'. grep matches one line at a time, so \\n "
                           "never matches. Also tried, finding nothing: as literal text, "
                           "case-insensitively.")


def test_authorization_is_asked_with_path_and_pattern(tmp_path, make_toolbox):
    (tmp_path / "a.txt").write_text("needle\n")
    asked = []
    toolbox = make_toolbox(tmp_path, authorize=lambda request: asked.append(request) or True,
                  read_only=True)
    assert grep(toolbox, pattern="needle", path="a.txt")["ok"]
    assert asked == [GrepRequest("a.txt", "needle")]


# -- agent-tool-anchors section 4, rows that apply to grep ------------------------------------

def _tree(root: Path) -> None:
    for rel, text in (("src/app.py", "def main():\n    return 1\n"), ("src/util.py", "x = 1\n"),
                      ("dist/bundle.js", "def main(){}\n"), ("logo.png", "\x00PNG main\n")):
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    (root / ".gitignore").write_text("dist/\n")


MISTAKES = [
    (1, "path typo", {"pattern": "main", "path": "src/ap.py"}, "NOT_FOUND",
     {"didYouMean": ["src/app.py"]}),
    (1, "directory typo", {"pattern": "main", "path": "scr"}, "NOT_FOUND",
     {"didYouMean": ["src"]}),
    (2, "absolute path inside the root", {"pattern": "main", "path": "@ROOT@/src/app.py"}, "ok",
     {}),
    (3, "dotdot path", {"pattern": "loot", "path": ".."}, "OUTSIDE_ROOT", {"kind": "dotdot"}),
    (3, "sibling sharing the root's prefix", {"pattern": "loot", "path": "@ROOT@-evil"},
     "OUTSIDE_ROOT", {"kind": "absolute"}),
    (3, "sibling by relative path", {"pattern": "loot", "path": "../root-evil/loot.txt"},
     "OUTSIDE_ROOT", {"kind": "dotdot"}),
    (4, "a directory where a file was expected works (either kind is searched)",
     {"pattern": "main", "path": "src"}, "ok", {}),
    (4, "a file where a directory was expected works (either kind is searched)",
     {"pattern": "main", "path": "src/app.py", "include": "*.py"}, "ok", {}),
    (17, "a huge line is cut", {"pattern": "main", "path": "src/app.py"}, "ok", {}),
    (18, "binary file", {"pattern": "main", "path": "logo.png"}, "ok", {}),
    (19, "more matches than the limit", {"pattern": "[a-z]", "limit": 2}, "ok", {}),
    (20, "ignored paths are hidden", {"pattern": "main", "outputMode": "files"}, "ok", {}),
    (23, "context as a quoted number", {"pattern": "main", "context": "2"}, "ok", {}),
    (23, "context as a word", {"pattern": "main", "context": "two"}, "INVALID_ARGUMENT",
     {"field": "context", "expected": "integer"}),
    (23, "regex as a string", {"pattern": "main", "regex": "no"}, "INVALID_ARGUMENT",
     {"field": "regex"}),
    (23, "pattern missing", {"path": "src"}, "INVALID_ARGUMENT", {"field": "pattern"}),
]


@pytest.mark.parametrize("row,what,args,expected,details", MISTAKES,
                         ids=[f"row{m[0]}-{m[1].split(' (')[0].replace(' ', '_')}"
                              for m in MISTAKES])
def test_agent_mistakes(tmp_path, make_toolbox, row, what, args, expected, details):
    root = tmp_path / "root"
    _tree(root)
    make_repository(tmp_path)  # the root is a folder of a repository
    (tmp_path / "root-evil").mkdir()
    (tmp_path / "root-evil" / "loot.txt").write_text("loot\n")
    args = {k: v.replace("@ROOT@", str(root)) if isinstance(v, str) else v
            for k, v in args.items()}
    toolbox = make_toolbox(root, limits=Limits(search_line_chars=10))
    out = grep(toolbox, **args)
    assert str(tmp_path) not in json.dumps(out)
    assert "loot" not in json.dumps(out.get("matches", []))
    if expected != "ok":
        assert out["code"] == expected, out
        for key, value in details.items():
            assert out["details"][key] == value
        if row == 1:
            assert out["suggestedTool"] == "grep"
        if "suggestedTool" in out:
            follow = toolbox.call(out["suggestedTool"], out["suggestedArgs"])
            assert follow["ok"] is True, follow
            if row == 1:
                assert follow["matches"], follow
        return
    assert out["ok"] is True, out
    if row == 23:  # a quoted number is the number
        assert out["context"] == 2 and "before" in out["matches"][0]
    if row == 2:
        assert out["path"] == "src/app.py" and out["matches"][0]["path"] == "src/app.py"
    if row == 4:
        # the 11-character line is cut to 10 around the match
        assert out["matches"][0] == {"path": "src/app.py", "line": 1, "text": "ef main():",
                                     "cut": True}
    if row == 17:
        assert len(out["matches"][0]["text"]) == 10 and out["matches"][0]["cut"] is True
    if row == 18:
        assert out["skipped"]["binary"] == 1 and "binary" in out["note"]
    if row == 19:
        assert out["truncated"] is True and len(out["matches"]) == 2
        assert "there are more" in out["note"]
    if row == 20:
        assert out["files"] == ["src/app.py"]
        assert "includeIgnored: true" in out["note"]
        follow = grep(toolbox, **args, includeIgnored=True)
        assert follow["files"] == ["dist/bundle.js", "src/app.py"]


def test_no_descriptor_leaks_when_stopping_early_or_refusing(tmp_path, make_toolbox):
    for i in range(30):
        (tmp_path / f"d{i}" / "e").mkdir(parents=True)
        (tmp_path / f"d{i}" / "e" / "f.txt").write_text("needle\nneedle\n")
    (tmp_path / "bin.dat").write_bytes(b"\x00needle")
    toolbox = make_toolbox(tmp_path)
    grep(toolbox, pattern="needle", limit=2)  # warm up lazy imports
    before = len(os.listdir("/dev/fd"))
    for args in ({"pattern": "needle", "limit": 2}, {"pattern": "needle", "context": 1,
                                                     "limit": 3},
                 {"pattern": "needle", "outputMode": "files", "limit": 1},
                 {"pattern": "needle", "path": "bin.dat"}, {"pattern": "(a+)+"},
                 {"pattern": "needle", "path": "nope"}):
        grep(toolbox, **args)
    assert len(os.listdir("/dev/fd")) == before
