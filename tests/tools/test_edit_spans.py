"""edit_file's pure core, by property: replacing regions keeps every byte
outside them (line endings included), placements and composed spans agree
with the text, and the diff over the composed spans reproduces the result
when applied to the base."""

from __future__ import annotations

import re

from hypothesis import given, settings, strategies as st

from corral.tools._edit.budget import Work
from corral.tools._edit.diff import unified_diff
from corral.tools._edit.spans import Region, apply_regions, compose, remap
from corral.tools._edit.text import Lines


_HUNK = re.compile(r"@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@")


def _keep(text: str) -> list[str]:
    lines = [line + "\n" for line in text.split("\n")]
    lines[-1] = lines[-1][:-1]
    return lines if lines[-1] else lines[:-1]


def apply_patch(text: str, diff: str) -> str:
    """Apply a unified diff of normalized texts (strictly: context must match)."""
    if not diff:
        return text
    src, out, cursor = _keep(text), [], 0
    rows = diff.split("\n")
    assert rows[0].startswith("--- a/") and rows[1].startswith("+++ b/")
    i = 2
    while i < len(rows) and rows[i]:
        m = _HUNK.fullmatch(rows[i])
        assert m, rows[i]
        start, length = int(m[1]), int(m[2] if m[2] is not None else 1)
        first = start - 1 if length else start
        assert first >= cursor
        out += src[cursor:first]
        cursor = first
        i += 1
        seen = {"-": 0, "+": 0, " ": 0}
        while i < len(rows) and rows[i][:1] in ("-", "+", " "):
            sign, body = rows[i][0], rows[i][1:]
            i += 1
            if i < len(rows) and rows[i] == "\\ No newline at end of file":
                i += 1
            else:
                body += "\n"
            seen[sign] += 1
            if sign in " -":
                assert src[cursor] == body, (src[cursor], body)
                cursor += 1
            if sign in " +":
                out.append(body)
        assert seen[" "] + seen["-"] == length
        assert seen[" "] + seen["+"] == int(m[4] if m[4] is not None else 1)
    return "".join(out + src[cursor:])


def _texts(eols: list[str]) -> st.SearchStrategy[str]:
    line = st.text(alphabet="ab \t", max_size=4)
    return st.builds(lambda rows, last: "".join(c + e for c, e in rows) + last,
                     st.lists(st.tuples(line, st.sampled_from(eols)), max_size=10), line)


@st.composite
def edit_runs(draw):
    text = draw(st.one_of(_texts(["\n"]), _texts(["\r\n"]), _texts(["\n", "\r\n"]),
                          _texts(["\r"])))
    steps = []
    for _ in range(draw(st.integers(1, 4))):
        cuts = sorted(draw(st.lists(st.integers(0, 60), max_size=6)))
        news = [draw(st.text(alphabet="ab\n", max_size=5)) for _ in range(len(cuts) // 2)]
        steps.append((cuts, news))
    return text, steps


@settings(max_examples=150, deadline=None)
@given(edit_runs())
def test_property_edits_keep_bytes_and_diff_reproduces_them(run):
    text, steps = run
    base = Lines(text)
    lines, spans, landed = base, [], []
    for cuts, news in steps:
        n = len(lines.normalized)
        points = sorted({min(c, n) for c in cuts})
        regions = [Region(points[k], points[k + 1], news[k // 2 % max(1, len(news))] if news
                          else "")
                   for k in range(0, len(points) - 1, 2)]
        new_text, placements = apply_regions(lines, regions, Work())
        for region, (a, b, na, nb) in zip(regions, placements):
            # the original characters of the region are what it covers, nothing else
            assert Lines(lines.text[a:b]).normalized == lines.normalized[region.start:region.end]
            assert Lines(new_text[na:nb]).normalized == region.replacement
            # a line break written is one the file already used
            assert set(re.findall(r"\r\n|\r|\n", new_text[na:nb])) <= \
                set(lines.eols[:-1]) | ({"\n"} if not lines.eols[:-1] else set())
        # bytes between regions are kept exactly
        prev_b = prev_nb = 0
        for a, b, na, nb in placements:
            assert new_text[prev_nb:na] == lines.text[prev_b:a]
            prev_b, prev_nb = b, nb
        assert new_text[prev_nb:] == lines.text[prev_b:]
        landed = remap(landed, placements, Work()) + [(p[2], p[3]) for p in placements]
        spans = compose(spans, placements, Work())
        lines = Lines(new_text)
    # outside the composed spans the base and the result agree
    prev_b = prev_c = 0
    for ba, bb, ca, cb in spans:
        assert lines.text[prev_c:ca] == text[prev_b:ba]
        prev_b, prev_c = bb, cb
    assert lines.text[prev_c:] == text[prev_b:]
    assert all(0 <= x <= y <= len(lines.text) for x, y in landed)
    diff = unified_diff("f", base, lines, spans, Work()).text
    assert apply_patch(base.normalized, diff) == lines.normalized
    assert (diff == "") == (base.normalized == lines.normalized)
