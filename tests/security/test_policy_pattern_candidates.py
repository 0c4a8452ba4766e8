"""The rules try, at a path, only the patterns that could match a path
ending in its last name (:meth:`_Rules._candidates`); the answer must be the
one every pattern tried in order gives: random pattern lists (anchored,
negated, directory-only, ``**`` below a name, classes, escapes, trailing
spaces) and the default lists, against random folded paths."""

from __future__ import annotations

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from corral.tools._policy.rules import (DEFAULT_PROTECT, DEFAULT_SECRETS, _Rules, fold,
                                        host_pattern)

NAMES = [".env", ".env.local", "id_rsa", "a.py", "x.pem", ".git", "hooks", "config", "private",
         "k.secret", "café", "x", "a", "b", "deploy", "d.tfstate", "gha-creds-1.json", "a b",
         "ab", "ba", "pre-commit", ".vscode", "settings.json", "*", "[ab]"]
SEGMENTS = ["a", "b", "x", "*", "**", "*.py", "*.pem", ".env", ".env.*", "*.secret", "private",
            "[ab]", "?", "a*", "*b", "config*", "hooks", "id_*", "gha-creds-*.json", "a\\*",
            "a ", "a\\ ", "d.tfstate*", "*.*", "a*b*"]


@st.composite
def lines(draw: st.DrawFn) -> str:
    text = "/".join(draw(st.lists(st.sampled_from(SEGMENTS), min_size=1, max_size=3)))
    if draw(st.booleans()):
        text = "/" + text
    if draw(st.integers(0, 3)) == 0:
        text += "/"
    if draw(st.integers(0, 3)) == 0:
        text = "!" + text
    try:
        return fold(host_pattern(text))  # as a policy reads a host's pattern
    except ValueError:
        return "a"


pytestmark = pytest.mark.no_backend

paths = st.lists(st.sampled_from(NAMES), min_size=1, max_size=4).map(lambda p: fold("/".join(p)))


def _every_pattern(rules: _Rules, prefix: str) -> bool:
    for pattern in rules._patterns:
        if pattern.regex.fullmatch(prefix) or pattern.regex.fullmatch(prefix + "/"):
            return pattern.include
    return False


def _agree(rules: _Rules, path: str) -> None:
    parts = path.split("/")
    for depth in range(1, len(parts) + 1):
        prefix = "/".join(parts[:depth])
        assert rules._covers(prefix) == _every_pattern(rules, prefix), (rules._lines, prefix)


@settings(max_examples=400, deadline=None)
@given(st.lists(lines(), min_size=1, max_size=6), st.lists(paths, min_size=1, max_size=8))
# a pattern covering what lies below its last name decides at a name the
# quick test lets through for another pattern that does not match there
@example(["/a", "private/**", "!private"], ["private/a", "private/x/a"])
@example(["a", "x/**/", "!x"], ["x/a", "x/b/a"])
def test_the_patterns_tried_answer_as_every_pattern_does(patterns, tried):
    rules = _Rules(patterns)
    for path in tried:
        _agree(rules, path)


@settings(max_examples=200, deadline=None)
@given(paths)
def test_the_default_lists_answer_as_every_pattern_does(path):
    for patterns in (DEFAULT_PROTECT, DEFAULT_SECRETS):
        _agree(_Rules(patterns), path)


def test_a_name_no_default_pattern_names_tries_few_patterns():
    rules = _Rules(DEFAULT_PROTECT)
    assert len(rules._patterns) > 100  # the defaults are long: the point of the test
    assert len(rules._candidates(fold(".env.example"))) < len(rules._patterns) // 4
    assert len(rules._candidates("settings.json")) < len(rules._patterns) // 4
