"""The shortcuts edit_file and write_file take on hostile shapes (issue 12's
rows) give the answers of the general way: the lines no tolerant rung can
match, the probe for lines reordered, the placeholder scan's limit of
candidate lines, the fence look."""

from __future__ import annotations

from hypothesis import given, settings, strategies as st

from corral.tools._edit.content import MAX_CANDIDATES, fenced, is_placeholder, placeholder_lines
from corral.tools._edit.diff import _probed, _reordered
from corral.tools._edit.match import _absent_lines, blank_free_lines
from corral.tools._edit.text import Lines

_LINE = st.text(st.sampled_from("ab \t\x0c\u00a0\u3000x"), max_size=6)
_BREAK = st.sampled_from(["\n", "\r\n"])


def _absent_by_sets(lines: Lines, old: str) -> tuple[bool, bool]:
    """The rule: oldText lines (without whitespace) no file line equals."""
    parts = blank_free_lines(old)
    whole = parts[:-1] if len(parts) > 1 and parts[-1] == "" else parts
    missing = set(whole).difference(blank_free_lines(lines.normalized))
    return not missing.isdisjoint(parts[1:-1]), bool(missing)


@settings(max_examples=400, deadline=None)
@given(st.lists(_LINE, max_size=30), _BREAK, st.lists(_LINE, min_size=1, max_size=12),
       st.booleans())
def test_the_lines_no_tolerant_rung_can_match_are_those_of_the_rule(file_lines, eol, old_lines,
                                                                    final):
    lines = Lines(eol.join(file_lines))
    old = "\n".join(old_lines) + ("\n" if final else "")
    assert tuple(_absent_lines(lines, old)) == _absent_by_sets(lines, old)


def test_many_lines_not_in_the_file_as_written_are_looked_for_in_a_set():
    file_lines = [f"line {i}" for i in range(40)]
    lines = Lines("\n".join(file_lines) + "\n")
    spaced = [f" line  {i} " for i in range(20)]  # 20 differ but for blanks: none absent
    old = "\n".join(spaced) + "\n"
    assert tuple(_absent_lines(lines, old)) == _absent_by_sets(lines, old) == (False, False)
    old = "\n".join([*spaced[:10], "typo", *spaced[10:]]) + "\n"
    assert tuple(_absent_lines(lines, old)) == _absent_by_sets(lines, old) == (True, True)


_RUN = st.lists(st.sampled_from([b"a", b"b", b"c", b"d", b"", b"e f"]), min_size=1,
                max_size=90)


@settings(max_examples=400, deadline=None)
@given(_RUN, _RUN, st.data())
def test_lines_reordered_are_found_as_the_probe_after_the_split_finds_them(removed, added, data):
    removed = removed + data.draw(st.lists(st.just(b"z"), max_size=70))
    text_removed, text_added = (b"".join(line + b"\n" for line in run) for run in (removed, added))
    if _reordered(text_removed, text_added):
        assert removed[0] != added[0] and removed[-1] != added[-1]
        assert _probed(removed, added)
    elif removed[0] != added[0] and removed[-1] != added[-1]:
        assert not _probed(removed, added)


def test_swapped_pairs_are_found_reordered_without_a_split():
    lines = [b"line %d" % i for i in range(200)]
    swapped = [x for i in range(0, 200, 2) for x in (lines[i + 1], lines[i])]
    assert _reordered(b"".join(x + b"\n" for x in lines), b"".join(x + b"\n" for x in swapped))


def _ellipsis_text(placed: list[int], total: int) -> str:
    """``total`` lines with "...", the ``placed`` (0-based among them)
    being placeholders."""
    plain, placeholder = "x = f(a, ...)  # not one", "# ... rest of the code unchanged ..."
    return "".join((placeholder if k in placed else plain) + "\n" for k in range(total))


def test_only_the_first_candidate_lines_with_an_ellipsis_are_judged():
    placed = [3, MAX_CANDIDATES - 17, MAX_CANDIDATES - 1, MAX_CANDIDATES, MAX_CANDIDATES + 50]
    text = _ellipsis_text(placed, MAX_CANDIDATES + 100)
    expected = [(k, line) for k, line in enumerate(text.split("\n")[:MAX_CANDIDATES])
                if is_placeholder(line)]
    assert placeholder_lines(text) == expected
    assert [k for k, _ in expected] == placed[:3]


def test_a_fence_needs_a_backtick_or_tilde_and_blanks_before_it_are_allowed():
    assert fenced(" " * 100_000, "a.py") is None
    assert fenced(" " * 1000 + "x\n", "a.py") is None
    assert fenced("  ```py\nx = 1\n```\n", "a.py") == "x = 1\n"
    assert fenced("\t~~~\nx = 1\n~~~", "a.py") == "x = 1\n"
