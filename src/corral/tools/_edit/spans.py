"""Span arithmetic of edit_file: where replacements go and what they move.

Pure logic, no I/O.  A :class:`Region` is a ``[start, end)`` range of the
line-ending-normalized text and what replaces it; :func:`apply_regions`
writes them into the original text (line breaks as the file writes them)
and gives each one's *placement*; :func:`remap` moves earlier ranges
through a placement and :func:`compose` keeps the changed spans of several
edits in one call, so a diff looks only inside them.
"""

from __future__ import annotations

from bisect import bisect_right
from dataclasses import dataclass

from .budget import Work
from .text import Lines

__all__ = ["Placement", "Region", "Span", "apply_regions", "compose", "remap"]


@dataclass
class Region:
    """``[start, end)`` in the normalized text, and what replaces it (``\\n`` breaks)."""

    start: int
    end: int
    replacement: str


Placement = tuple[int, int, int, int]  # original [a, b) became [na, nb) in the new text


def _with_breaks(lines: Lines, region: Region) -> str:
    """The replacement with its line breaks written as the file writes them:
    the k-th break takes the terminator of the k-th break it replaces (so a
    mixed file stays mixed line by line), extra ones the last of those, and
    with none replaced the terminator of the line it lands in."""
    text = region.replacement
    if not lines.has_cr or "\n" not in text:
        return text
    replaced = lines.breaks_in(region.start, region.end)
    fallback = replaced[-1] if replaced else lines.local_eol(region.start)
    if all(e == fallback for e in replaced):
        return text.replace("\n", fallback)
    parts = text.split("\n")
    out = [parts[0]]
    for k, part in enumerate(parts[1:]):
        out.append(replaced[k] if k < len(replaced) else fallback)
        out.append(part)
    return "".join(out)


def apply_regions(lines: Lines, regions: list[Region], work: Work
                  ) -> tuple[str, list[Placement]]:
    """The original text with ``regions`` (sorted, not overlapping) replaced,
    line breaks written as the file writes them (see :func:`_with_breaks`:
    an ``\\n`` newText in a CRLF file is written with CRLF)."""
    text = lines.text
    pieces = []
    placements: list[Placement] = []
    cursor = 0
    size = 0
    for region in regions:
        work.step()
        a, b = lines.to_original(region.start), lines.to_original(region.end)
        new = _with_breaks(lines, region)
        pieces.append(text[cursor:a])
        size += a - cursor
        placements.append((a, b, size, size + len(new)))
        pieces.append(new)
        size += len(new)
        cursor = b
    pieces.append(text[cursor:])
    return "".join(pieces), placements


def remap(ranges: list[tuple[int, int]], placements: list[Placement],
          work: Work) -> list[tuple[int, int]]:
    """Where ranges of the old text are in the new one: moved by the
    replacements before them, widened over a replacement they overlap."""
    if not placements:
        return ranges
    starts = [p[0] for p in placements]

    def start(x: int) -> int:
        i = bisect_right(starts, x) - 1
        if i < 0:
            return x
        a, b, na, nb = placements[i]
        return na if x < b or a == b == x else x + (nb - b)

    def end(y: int) -> int:
        i = bisect_right(starts, y - 1) - 1  # the last replacement starting before y
        if i < 0:
            return y
        _a, b, _na, nb = placements[i]
        return nb if y <= b else y + (nb - b)

    out = []
    work.step(len(ranges))
    for x, y in ranges:
        nx = start(x)
        out.append((nx, nx) if x == y else (nx, max(nx, end(y))))
    return out


Span = tuple[int, int, int, int]  # base text [ba, bb) is now [ca, cb); outside spans both agree


def compose(spans: list[Span], placements: list[Placement], work: Work) -> list[Span]:
    """The changed spans after one more edit: ``spans`` (base -> current)
    combined with ``placements`` (current -> new), merging what overlaps or
    touches.  Outside the spans the base and the new text are identical, so
    a diff needs to look only inside them."""
    out: list[Span] = []
    i = j = 0
    d_span = d_place = 0  # growth of the spans / placements passed so far
    work.step(len(spans) + len(placements))
    while i < len(spans) or j < len(placements):
        if j >= len(placements) or (i < len(spans) and spans[i][2] <= placements[j][0]):
            ga, gb = spans[i][2], spans[i][3]
        else:
            ga, gb = placements[j][0], placements[j][1]
        span_before, place_before = d_span, d_place
        while True:
            if i < len(spans) and spans[i][2] <= gb:
                ba, bb, ca, cb = spans[i]
                gb = max(gb, cb)
                d_span += (cb - ca) - (bb - ba)
                i += 1
            elif j < len(placements) and placements[j][0] <= gb:
                a, b, na, nb = placements[j]
                gb = max(gb, b)
                d_place += (nb - na) - (b - a)
                j += 1
            else:
                break
        out.append((ga - span_before, gb - d_span, ga + place_before, gb + d_place))
    return out
