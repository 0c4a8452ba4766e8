"""grep's and glob's machinery: the native scanner against its pure-Python
fallback, RE2 and the guarded ``re`` fallback, the dialect reader, the glob
automaton against a brute-force oracle, .gitignore lines, and the
time_limit refusal (with the partial results) for glob and grep."""

from __future__ import annotations

import fnmatch
import random
from pathlib import Path

import pytest
from .helpers.envelope import assert_valid_envelope

from corral.tools import Limits
from corral.tools._search import engine as search_regex
from corral.tools._runtime.context import ToolContext
from corral.tools._refusals.catalogue import Code, Refusal
from corral.tools._search.globs import compile_glob
from corral.tools._search.ignore import parse_ignore
from corral.contained import available_backends, backend_by_name, default_backend
from corral.tools._search.scan import literal_lines, regex_lines
from corral.tools._search.syntax import required_literal, tokenize, translate


def _brute_lines(buf: bytes, needle: bytes) -> list[tuple[int, int, int, int]]:
    out, start = [], 0
    for number, line in enumerate(buf.split(b"\n"), 1):
        at = line.find(needle)
        if at >= 0 and start != len(buf):
            out.append((start, start + len(line), start + at, number))
        start += len(line) + 1
    return out


# -- the scanner -----------------------------------------------------------------------------

NATIVE = "native" in available_backends()


def test_native_scanner_is_built():
    # CI builds the cffi module: the literal path must be the native one there
    assert NATIVE is True
    assert backend_by_name("native").batches is True


@pytest.mark.parametrize("seed", range(6))
def test_native_and_python_scanners_agree_with_brute_force(seed):
    rng = random.Random(seed)
    needle = rng.choice([b"ab", b"a", b"needle", b"\xc3\xa9", b"aa"])
    pieces = [b"ab", b"a", b"\n", b"needle", b"x", b"\xc3\xa9", b"\n\n", b"aa"]
    buf = b"".join(rng.choice(pieces) for _ in range(rng.randrange(0, 3000)))
    want = _brute_lines(buf, needle)
    assert list(literal_lines(needle, buf, backend=backend_by_name("os"))) == want
    if NATIVE:
        assert list(literal_lines(needle, buf, backend=backend_by_name("native"))) == want


def test_native_scanner_resumes_past_its_batch():
    buf = b"hit\n" * 1000
    got = list(literal_lines(b"hit", buf, backend=backend_by_name("native")))
    assert len(got) == 1000 and got[-1] == (3996, 3999, 3996, 1000)


def test_regex_lines_never_span_a_line_and_skip_the_empty_last_line():
    pattern = search_regex.compile_pattern(r"b\s*c|^$", regex=True, ignore_case=False)
    buf = b"ab\nc\n\nbc\n"
    assert [h[3] for h in regex_lines(pattern.searcher, buf)] == [3, 4]


# -- the dialect reader ----------------------------------------------------------------------

@pytest.mark.parametrize("pattern,shown,notes", [
    (r"\<word\>", r"\bword\b", ["GNU \\< (start of word) as \\b", "GNU \\> (end of word) as \\b"]),
    (r"caf\u00e9", r"caf\x{00e9}", ["\\u00e9 as \\x{00e9}"]),
    (r"a\hb", r"a[\t ]b", ["PCRE \\h as [\\t ]"]),
    (r"end\Z", r"end$", ["\\Z as $ (end of line)"]),
    (r"[[:digit:]]+", r"[[:digit:]]+", []),
    (r"(?<name>x)", r"(?<name>x)", []),
])
def test_translation_of_other_dialects(pattern, shown, notes):
    got_shown, _run, got_notes = translate(tokenize(pattern))
    assert (got_shown, got_notes) == (shown, notes)


@pytest.mark.parametrize("pattern,literal", [
    (r"def \w+_handler\(", "_handler("), ("ab+c", "ab"), ("x|y", None), ("(?i)abc", None),
    ("a?bc", "bc"), (r"foo\.bar", "foo.bar"), ("(ab)cd", "cd"), ("[ab]", None),
])
def test_required_literal(pattern, literal):
    assert required_literal(tokenize(pattern)) == literal


def test_translated_pattern_is_said_in_the_answer(tmp_path, make_toolbox):
    (tmp_path / "a.txt").write_text("a word here\nswordfish\n")
    out = make_toolbox(tmp_path).call("grep", {"pattern": r"\<word\>"})
    assert [m["line"] for m in out["matches"]] == [1]
    assert out["translated"] == {"pattern": r"\bword\b", "notes": [
        "GNU \\< (start of word) as \\b", "GNU \\> (end of word) as \\b"]}
    assert out["note"].startswith("The pattern was read as '\\\\bword\\\\b'")


def test_crlf_lines_match_an_end_anchor(tmp_path, make_toolbox):
    (tmp_path / "w.txt").write_bytes(b"one\r\ntwo\r\n")
    out = make_toolbox(tmp_path).call("grep", {"pattern": "one$"})
    assert [(m["line"], m["text"]) for m in out["matches"]] == [(1, "one")]


# -- the re fallback ---------------------------------------------------------------------------

def test_fallback_engine_runs_guarded_patterns_and_says_so(tmp_path, make_toolbox, monkeypatch):
    monkeypatch.setattr(search_regex, "ENGINE", "re")
    monkeypatch.setattr(search_regex, "compile_pattern",
                        _forced(search_regex.compile_pattern, "re"))
    import corral.tools._builtin.grep as grep_tool
    monkeypatch.setattr(grep_tool, "compile_pattern", search_regex.compile_pattern)
    (tmp_path / "a.txt").write_text("x = value_42\n")
    toolbox = make_toolbox(tmp_path)
    out = toolbox.call("grep", {"pattern": r"value_\d+"})
    assert [m["line"] for m in out["matches"]] == [1]
    assert search_regex.FALLBACK_NOTE in out["note"]
    refused = toolbox.call("grep", {"pattern": r"(a+)+b"})
    assert refused["code"] == "INVALID_ARGUMENT"
    assert refused["details"]["kind"] == "unsafe_regex"
    assert search_regex.engine_report()["regex"] == "re"


def _forced(compile_pattern, engine):
    def forced(pattern, *, regex, ignore_case, engine_=engine):
        return compile_pattern(pattern, regex=regex, ignore_case=ignore_case, engine=engine_)
    return forced


def test_engine_report_names_re2_and_the_scanner():
    report = search_regex.engine_report()
    assert report["regex"] == "re2" and report["re2"] is True
    assert report["literalScanner"] == ("native" if default_backend().batches else "python")


# -- the glob automaton ------------------------------------------------------------------------

def _seg_match(pattern: list[str], parts: list[str]) -> bool:
    if not pattern:
        return not parts
    head, rest = pattern[0], pattern[1:]
    if head == "**" and not rest:  # a final ** is what lies below: one name or more
        return bool(parts)
    if head == "**":
        return any(_seg_match(rest, parts[i:]) for i in range(len(parts) + 1))
    return bool(parts) and fnmatch.fnmatchcase(parts[0], head) and _seg_match(rest, parts[1:])


@pytest.mark.parametrize("seed", range(4))
def test_glob_automaton_matches_brute_force(seed):
    rng = random.Random(seed)
    names = ["a", "b", "ab", "ba", "aab", "a.py", "b.txt", "abab", ".x"]
    paths = ["/".join(rng.choice(names) for _ in range(rng.randrange(1, 5))) for _ in range(300)]
    atoms = ["a", "b", "*", "?", "[ab]", "[!a]", "*a*", "a*b", ".py", "*.py"]
    for _ in range(40):
        segs = [rng.choice(atoms + ["**"]) for _ in range(rng.randrange(1, 4))]
        pattern = "/".join(segs)
        oracle = segs if len(segs) > 1 else ["**", *segs]
        merged = [s for i, s in enumerate(oracle)
                  if not (s == "**" and i and oracle[i - 1] == "**")]
        matcher = compile_glob(pattern)
        for path in paths:
            assert matcher.match(path) == _seg_match(merged, path.split("/")), (pattern, path)


def test_hostile_star_glob_is_linear_in_the_name():
    import time
    matcher = compile_glob("*a*a*a*a*a*a*a*a*b")
    name = "a" * 100_000
    started = time.monotonic()
    assert matcher.match_name(name) is False
    assert time.monotonic() - started < 5  # an order-of-magnitude hang detector


@pytest.mark.parametrize("lines,path,is_dir,ignored", [
    ("*.log\n", "x/y.log", False, True), ("/build/\n", "build", True, True),
    ("/build/\n", "build", False, None), ("build/\n", "a/build", True, True),
    ("a/b\n", "x/a/b", False, None), ("a/b\n", "a/b", False, True),
    ("*.log\n!keep.log\n", "keep.log", False, False), ("\\#x\n", "#x", False, True),
    ("# comment\n", "# comment", False, None), ("x \n", "x", False, True),
    ("x\\ \n", "x ", False, True), ("{a,b}\n", "a", False, None), ("{a,b}\n", "{a,b}", False, True),
    ("**/foo\n", "a/b/foo", False, True), ("a/**\n", "a/x/y", False, True),
])
def test_gitignore_lines(lines, path, is_dir, ignored):
    spec = parse_ignore(lines.encode())
    got = None if spec is None else spec.decide(path, path.rsplit("/", 1)[-1], is_dir)
    assert got == ignored


# -- the deadline: time_limit with the partial result ---------------------------------------

def _deadline_after(monkeypatch, calls: int) -> None:
    """Give ToolContext a checkpoint (where a call stops) that passes ``calls`` times."""
    left = {"n": calls}

    def checkpoint(self):
        left["n"] -= 1
        if left["n"] < 0:
            raise Refusal(Code.TOO_LARGE, "the call ran past its deadline",
                          "Narrow the call.", details={"kind": "time_limit"})
    monkeypatch.setattr(ToolContext, "checkpoint", checkpoint, raising=False)


def _many(tmp_path: Path) -> None:
    for d in range(30):
        sub = tmp_path / f"d{d:02}"
        sub.mkdir()
        for f in range(5):
            (sub / f"f{f}.txt").write_text("needle\n")


@pytest.mark.parametrize("tool,args,key", [
    ("glob", {"pattern": "**/*.txt"}, "paths"),
    ("grep", {"pattern": "needle"}, "matches"),
])
def test_time_limit_gives_the_partial_result(tmp_path, make_toolbox, monkeypatch, tool, args, key):
    _many(tmp_path)
    toolbox = make_toolbox(tmp_path, limits=Limits(search_results=10_000))
    _deadline_after(monkeypatch, 12)
    out = toolbox.call(tool, args)
    assert_valid_envelope(out)
    assert out["code"] == "TOO_LARGE"
    assert out["details"]["kind"] == "time_limit"
    assert out["details"]["partial"] is True
    partial = out["details"][key]
    assert 0 < len(partial) < 150  # some found, not all
    assert out["hint"].startswith("Narrow 'path' or the pattern")


def test_time_limit_inside_one_large_file(tmp_path, make_toolbox, monkeypatch):
    from corral.tools._builtin.grep import CHUNK
    (tmp_path / "big.txt").write_bytes((b"x" * 99 + b"\n") * (3 * CHUNK // 100) + b"needle\n")
    _deadline_after(monkeypatch, 2)
    out = make_toolbox(tmp_path).call("grep", {"pattern": "needle"})
    assert out["code"] == "TOO_LARGE" and out["details"]["kind"] == "time_limit"
    assert out["details"]["matches"] == []


@pytest.mark.parametrize("tool,args,key", [
    ("glob", {"pattern": "**/*.txt"}, "paths"),
    ("grep", {"pattern": "needle"}, "matches"),
])
def test_time_limit_through_the_toolbox_deadline(tmp_path, make_toolbox, tool, args, key):
    """The real deadline (every call is bounded): a call given no time answers
    time_limit with its (empty) partial result, and the next call works."""
    _many(tmp_path)
    toolbox = make_toolbox(tmp_path)
    out = toolbox.call(tool, args, timeout=1e-9)
    assert_valid_envelope(out)
    assert out["code"] == "TOO_LARGE" and out["details"]["kind"] == "time_limit", out
    assert out["details"]["partial"] is True and out["details"][key] == []
    assert toolbox.call(tool, args)[key]


@pytest.mark.parametrize("tool,args", [("glob", {"pattern": "**/*.txt"}),
                                       ("grep", {"pattern": "needle"})])
def test_long_walks_report_progress(tmp_path, make_toolbox, tool, args):
    _many(tmp_path)
    seen = []
    out = make_toolbox(tmp_path).call(tool, args, progress=seen.append)
    assert out["ok"] is True
    assert seen and all(p.message == tool and p.done > 0 for p in seen)
    assert [p.done for p in seen] == sorted(p.done for p in seen)
