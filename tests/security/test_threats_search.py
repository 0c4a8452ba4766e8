"""THREATS.md row 24, search parts, on every backend config: a regex, glob,
``.gitignore`` line or ``include`` built to backtrack or blow up runs in
bounded time (each call within :data:`CALL_TIMEOUT`, an order-of-magnitude
bound; benchmarks/bench_hostile_search.py measures the ratios), and the
answer is a real one (the match found where there is one, a typed refusal
where RE2 cannot run the pattern).  Rows 12, 15 and 16 for glob and grep
are in tests/tools/test_glob.py, test_grep.py and test_threats_tools.py."""

from __future__ import annotations

from pathlib import Path

import pytest
from .helpers.world import (
    CALL_TIMEOUT,
    CONFIG_IDS,
    CONFIGS,
    assert_contract,
    call_bounded,
    make_repository,
)

from corral.tools import Limits, Toolbox

per_config = pytest.mark.parametrize("config", CONFIGS, ids=CONFIG_IDS)
LINE = 100_000  # one line of "a": seconds to hours for a backtracking engine
STARS = "*a*a*a*a*a*a*a*a*b"
REGEXES = [".*.*.*.*.*b", "a*a*a*a*a*a*a*c", "(a+)+$", "(a|aa)*c", "a?" * 30 + "a" * 30,
           "(.*a){20}c", r"(\w+\s?)*$"]


def _toolbox(config, root: Path) -> Toolbox:
    return Toolbox(config.factory(str(root)), limits=Limits(search_results=100_000))


def _call(toolbox: Toolbox, tool: str, args: dict) -> dict:
    envelope = call_bounded(lambda: toolbox.call(tool, args), CALL_TIMEOUT, f"{tool} {args}")
    assert_contract(envelope)
    return envelope


@per_config
@pytest.mark.parametrize("pattern", REGEXES)
def test_backtracking_regex_is_bounded(config, tmp_path, pattern):
    (tmp_path / "long.txt").write_bytes(b"a" * LINE + b"\nend\n")
    out = _call(_toolbox(config, tmp_path), "grep", {"pattern": pattern})
    assert out["ok"] is True, out
    # the line of "a" matches exactly the patterns that can match it
    expected = pattern in ("a?" * 30 + "a" * 30, "(a+)+$", r"(\w+\s?)*$")
    assert bool(out["matches"]) == expected, (pattern, out)


@per_config
@pytest.mark.parametrize("pattern", ["(?=.*a)(?=.*b)(?=.*c).*d", r"(a*)*\1b", "(?>a+)+b"])
def test_constructs_that_need_backtracking_are_refused_at_once(config, tmp_path, pattern):
    (tmp_path / "long.txt").write_bytes(b"a" * LINE + b"\n")
    out = _call(_toolbox(config, tmp_path), "grep", {"pattern": pattern})
    assert out["code"] == "INVALID_ARGUMENT"
    assert out["details"]["kind"] == "regex_unsupported"


def _long_names(root: Path, count: int = 300) -> None:
    for i in range(count):
        (root / f"{i:04}{'a' * 200}c.txt").write_bytes(b"x\n")


@per_config
def test_star_glob_against_long_names_is_bounded(config, tmp_path):
    _long_names(tmp_path)
    (tmp_path / ("a" * 100 + "b")).write_bytes(b"")
    out = _call(_toolbox(config, tmp_path), "glob", {"pattern": STARS})
    assert out["paths"] == ["a" * 100 + "b"]


@per_config
def test_deep_double_star_glob_is_bounded(config, tmp_path):
    here = tmp_path
    for _ in range(100):
        here = here / "a"
        here.mkdir()
    (here / "b").write_bytes(b"")
    out = _call(_toolbox(config, tmp_path), "glob",
                {"pattern": "**/a/**/a/**/a/**/a/**/a/**/a/**/a/**/b"})
    assert out["paths"] == ["/".join(["a"] * 100) + "/b"]


@per_config
def test_hostile_gitignore_line_is_bounded(config, tmp_path):
    _long_names(tmp_path)
    make_repository(tmp_path)
    (tmp_path / ".gitignore").write_text(STARS + "\n" + ("*a" * 500) + "b\n")
    (tmp_path / ("a" * 100 + "b")).write_bytes(b"")
    out = _call(_toolbox(config, tmp_path), "glob", {"pattern": "*"})
    assert len(out["paths"]) == 301  # the .gitignore and the long names; the "...b" is ignored
    assert out["ignored"]["paths"] == 1


@per_config
def test_hostile_include_is_bounded(config, tmp_path):
    _long_names(tmp_path)
    (tmp_path / ("a" * 100 + "b")).write_bytes(b"needle\n")
    out = _call(_toolbox(config, tmp_path), "grep", {"pattern": "needle", "include": STARS})
    assert [m["path"] for m in out["matches"]] == ["a" * 100 + "b"]
