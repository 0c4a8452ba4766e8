"""The diffs edit_file shows: pure logic, no I/O, bounded.

A diff is computed only over the spans an edit changed (see
:mod:`corral.tools._edit_spans`), and inside them lines are aligned by
:func:`corral.tools._edit_align.align` within a budget proportional to
their size.  When a changed block is too costly to align line by line, it
is shown whole (its old lines removed, its new lines added): still a
correct diff, only coarser, and :attr:`Diff.complete` says so.
"""

from __future__ import annotations

from dataclasses import dataclass

from ._edit_align import align, common_prefix, common_suffix
from ._edit_budget import Budget, Work, proportional
from ._edit_text import Lines

__all__ = ["Diff", "changed_lines", "unified_diff"]


@dataclass(frozen=True)
class Diff:
    text: str
    complete: bool  # False: some changed blocks are shown whole, not line by line


def _at_line_start(lines: Lines, pos: int) -> bool:
    return lines.starts[lines.line_of(pos) - 1] == pos


def _blocks(before: Lines, after: Lines, spans: list[tuple[int, int, int, int]],
            work: Work) -> list[list[int]]:
    """The changed spans as whole-line blocks ``[i1, i2, j1, j2]`` (0-based,
    end exclusive), merged where they share a line, unchanged ones dropped."""
    a_count, b_count = before.count(), after.count()
    blocks: list[list[int]] = []
    for ba, bb, ca, cb in spans:
        work.step()
        i1, j1 = before.line_of(ba) - 1, after.line_of(ca) - 1
        if (bb > ba or cb > ca) and _at_line_start(before, bb) and _at_line_start(after, cb):
            i2, j2 = before.line_of(bb) - 1, after.line_of(cb) - 1  # ends with a line break
        else:
            i2, j2 = before.line_of(bb), after.line_of(cb)  # ends inside a line: take it all
        i2, j2 = min(i2, a_count), min(j2, b_count)
        if blocks and i1 < blocks[-1][1]:  # shares a line with the previous one
            blocks[-1][1], blocks[-1][3] = max(blocks[-1][1], i2), max(blocks[-1][3], j2)
        else:
            blocks.append([i1, i2, j1, j2])
    return [blk for blk in blocks if before.lines(blk[0], blk[1]) != after.lines(blk[2], blk[3])]


def unified_diff(path: str, before: Lines, after: Lines,
                 spans: list[tuple[int, int, int, int]], work: Work,
                 context: int = 3) -> Diff:
    """A git-style unified diff (``\\n`` breaks, ``\\ No newline at end of
    file`` markers) of two texts that agree outside ``spans``: each span is
    ``(ba, bb, ca, cb)``, original offsets where ``before[ba:bb]`` became
    ``after[ca:cb]``.  Only the lines of each span are compared, so the cost
    is the size of the change, not of the file.  A change of only a line's
    terminator does not show (edit_file never makes one)."""
    a_count = before.count()
    blocks = _blocks(before, after, spans, work)
    size = sum(blk[1] - blk[0] + blk[3] - blk[2] for blk in blocks)
    budget = work.budget(proportional(size))
    out = [f"--- a/{path}\n", f"+++ b/{path}\n"]
    k = 0
    while k < len(blocks):
        group = [blocks[k]]
        k += 1
        while k < len(blocks) and blocks[k][0] - group[-1][1] <= 2 * context:
            group.append(blocks[k])
            k += 1
        hs = max(0, group[0][0] - context)
        he = min(a_count, group[-1][1] + context)
        js = group[0][2] - (group[0][0] - hs)
        je = group[-1][3] + (he - group[-1][1])
        out.append(f"@@ -{_range(hs, he - hs)} +{_range(js, je - js)} @@\n")
        pos = hs
        for i1, i2, j1, j2 in group:
            out.extend(_marked(" ", before.lines(pos, i1)))
            out.extend(_block(before.lines(i1, i2), after.lines(j1, j2), budget))
            pos = i2
        out.extend(_marked(" ", before.lines(pos, he)))
    return Diff("".join(out) if len(out) > 2 else "", not budget.cut)


def _block(old: list[str], new: list[str], budget: Budget) -> list[str]:
    """The -/+ lines of one changed block (aligned line by line while the
    budget lasts)."""
    if len(old) <= 1 and len(new) <= 1:
        return _marked("-", old) + _marked("+", new)
    out = []
    for tag, x1, x2, y1, y2 in align(old, new, budget).opcodes():
        if tag == "equal":
            out.extend(_marked(" ", old[x1:x2]))
        else:
            out.extend(_marked("-", old[x1:x2]))
            out.extend(_marked("+", new[y1:y2]))
    return out


def _range(start: int, length: int) -> str:
    first = start + 1 if length else start
    return f"{first}" if length == 1 else f"{first},{length}"


def _marked(sign: str, lines: list[str]) -> list[str]:
    out = []
    for line in lines:
        if line.endswith("\n"):
            out.append(sign + line)
        else:
            out.append(f"{sign}{line}\n\\ No newline at end of file\n")
    return out


def changed_lines(before: Lines, after: Lines, work: Work,
                  limit: int = 20) -> list[list[int]]:
    """Line ranges ``[first, last]`` of ``after`` (1-based) that differ from
    ``before``; a deletion is given as the one line where it happened.  When
    the middle is too costly to align, one range covering it says enough."""
    a, b = before.contents, after.contents
    head = common_prefix(a, b)
    tail = common_suffix(a, b, len(a), len(b), min(len(a), len(b)) - head)
    a_mid, b_mid = a[head:len(a) - tail], b[head:len(b) - tail]
    last = max(1, len(b))
    budget = work.budget(proportional(len(a_mid) + len(b_mid), per=4, floor=50_000))
    alignment = align(a_mid, b_mid, budget)
    if not alignment.complete:
        first = min(head + 1, last)
        return [[first, max(first, len(b) - tail)]]
    out: list[list[int]] = []
    for tag, _, _, j1, j2 in alignment.opcodes():
        if tag == "equal":
            continue
        first = min(head + j1 + 1, last)
        out.append([first, max(first, head + j2)])
        if len(out) == limit:
            break
    return out
