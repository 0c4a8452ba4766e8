"""GlobMatcher.accepted (a directory's names at once) agrees with
GlobMatcher.accepts (one name) in every state a walk reaches."""

from __future__ import annotations

import itertools

import pytest

from corral.tools._search.globs import compile_glob

PATTERNS = ["**/*.py", "*.py", "src/**/*.py", "**/a/**/a/**/a/b", "a/*/c", "{a,b}/**/x?.txt",
            "**/{*.py,*.md,README}", "**/test_*", "[ab]*/**/[!x]*", "**", "a/**/", "*/b/**/c*",
            # a name alone decides: its literal start and end are tested before the rest
            "*a*a*b", "x*.txt", "t*_?.py", "a*", "*x*", "R*E", "x?*y.txt", "*.t[x]t", "b.txt"]
NAMES = ["a", "b", "c", "x1.txt", "xy.txt", "README", "test_x.py", "m.md", "x", "src", "ab",
         "a.py", "ca", "cb", ".py", "b.txt", "aab", "ab.b", "xay.txt", "t_.py", "RE"]


def _states_reached(matcher, depth: int = 3):
    """Every state set met by entering up to ``depth`` directories named from NAMES."""
    seen = {matcher.start}
    frontier = [matcher.start]
    for _ in range(depth):
        nxt = []
        for states, name in itertools.product(frontier, NAMES):
            after = matcher.step(states, name)
            if after and after not in seen:
                seen.add(after)
                nxt.append(after)
        frontier = nxt
    return seen


@pytest.mark.parametrize("pattern", PATTERNS)
def test_accepted_is_accepts_of_each_name(pattern: str) -> None:
    matcher = compile_glob(pattern)
    reached = _states_reached(matcher)
    assert reached
    for states in reached:
        for _ in range(2):  # the second time from what it remembered of the states
            assert matcher.accepted(states, NAMES) == \
                [n for n in NAMES if matcher.accepts(states, n)]
    assert any(matcher.accepted(states, NAMES) for states in reached)  # not vacuous
    assert matcher.accepted(matcher.start, []) == []
