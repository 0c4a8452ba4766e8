"""edit_file's not-found path: the checks that rule tolerant rungs out
cheaply answer as the rungs themselves do (issue 12's near-miss rows)."""

from __future__ import annotations

import sys

from hypothesis import given, settings, strategies as st

from corral.tools._edit import match
from corral.tools._edit.budget import Work
from corral.tools._edit.text import Lines

_BLANKS = [" ", "  ", "\t", " \t", "\x0b", "\x0c", "\x1c", "\x85", "\u2028", "\u3000", "\u00a0", ""]
_WORDS = ["x", "f(a, b)", "f( a,b )", "{", "}", "= 1", "é", "compute", "compote", "# ..."]


def test_the_deleted_blanks_are_every_whitespace_but_the_line_break():
    every = {i for i in range(sys.maxunicode + 1) if chr(i).isspace()} - {10}
    assert set(match._NO_BLANKS) == every
    assert all(v is None for v in match._NO_BLANKS.values())


@settings(max_examples=400, deadline=None)
@given(st.lists(st.sampled_from(_BLANKS + _WORDS + ["\n"]), max_size=40))
def test_blank_free_lines_are_each_lines_without_whitespace(pieces):
    text = "".join(pieces)
    assert match.blank_free_lines(text) == ["".join(line.split()) for line in text.split("\n")]


@st.composite
def _line(draw: st.DrawFn) -> str:
    return "".join(draw(st.lists(st.sampled_from(_BLANKS + _WORDS), min_size=0, max_size=4)))


@st.composite
def _near_misses(draw: st.DrawFn) -> tuple[str, str]:
    """A file of lines from a small pool, and an oldText cut from it (whole
    lines, or any start and end) with some lines respaced, squeezed, widened,
    replaced or swapped."""
    pool = draw(st.lists(_line(), min_size=1, max_size=6))
    lines = draw(st.lists(st.sampled_from(pool), min_size=1, max_size=12))
    text = "\n".join(lines) + draw(st.sampled_from(["", "\n", "\r\n"]))
    if draw(st.booleans()):
        text = text.replace("\n", "\r\n")
    if draw(st.booleans()):  # whole lines, as a model mostly sends
        first = draw(st.integers(0, len(lines) - 1))
        last = draw(st.integers(first + 1, len(lines)))
        old_lines = lines[first:last] + ([""] if draw(st.booleans()) else [])
    else:  # any start and end
        a = draw(st.integers(0, len(text)))
        b = draw(st.integers(a, len(text)))
        old_lines = text[a:b].replace("\r\n", "\n").split("\n")
    for _ in range(draw(st.integers(0, 3))):
        at = draw(st.integers(0, len(old_lines) - 1))
        change = draw(st.sampled_from(["respace", "squeeze", "widen", "replace", "swap"]))
        if change == "squeeze":
            old_lines[at] = old_lines[at].replace(" ", "")
        elif change == "widen":
            old_lines[at] = old_lines[at].replace(" ", "  ")
        elif change == "respace":
            old_lines[at] = draw(st.sampled_from(_BLANKS)) + " ".join(old_lines[at].split()) \
                + draw(st.sampled_from(_BLANKS))
        elif change == "replace":
            old_lines[at] = draw(_line())
        elif at + 1 < len(old_lines):
            old_lines[at], old_lines[at + 1] = old_lines[at + 1], old_lines[at]
    return text, "\n".join(old_lines)


@settings(max_examples=600, deadline=None)
@given(_near_misses(), st.booleans())
def test_the_search_answers_as_it_does_with_every_rung_tried(case, every):
    text, old = case
    quick = match.search(Lines(text), old, "y = 2\n", 3, Work(), every=every)
    checked = match._absent_lines
    try:
        match._absent_lines = lambda lines, old: match._Absent(False, False)  # type: ignore[assignment]
        full = match.search(Lines(text), old, "y = 2\n", 3, Work(), every=every)
    finally:
        match._absent_lines = checked  # type: ignore[assignment]
    assert quick == full, (text, old)
