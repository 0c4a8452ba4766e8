"""The diffs edit_file shows: pure logic, no I/O, bounded.

A diff is computed only over the spans an edit changed (see
:mod:`corral.tools._edit.spans`), and inside them lines are aligned by
:func:`corral.tools._edit.align.align` within a budget proportional to
their size.  When a changed block is too costly to align line by line, it
is shown whole (its old lines removed, its new lines added): still a
correct diff, only coarser, and :attr:`Diff.complete` says so.  The
commonest change, inside one line, is cut straight from the texts around
it (the same diff, by a test that compares the two on generated edits).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

import json

from .align import align, common_prefix, common_suffix
from .budget import Budget, Work, proportional
from .text import Lines

__all__ = ["Diff", "block_diff_of_bytes", "changed_lines", "one_line_diff",
           "one_line_diff_of_bytes", "unified_diff", "window_diff"]

_NO_NEWLINE = "\n\\ No newline at end of file\n"


class Diff(NamedTuple):
    text: str
    complete: bool  # False: some changed blocks are shown whole, not line by line


def _compared(before: Lines, after: Lines, i1: int, i2: int, j1: int, j2: int,
              split: bool) -> tuple[Sequence[str], Sequence[str]]:
    """Lines ``[i1, i2)`` of ``before`` and ``[j1, j2)`` of ``after`` as
    they compare: of split texts, when neither run holds a text's last line
    (the one line that may lack its break), the slices of their contents
    (every line ends with a break: equal contents are equal lines), not a
    copy of each line with its break."""
    if split and i2 < len(before.contents) and j2 < len(after.contents):
        return before.contents[i1:i2], after.contents[j1:j2]
    return before.lines(i1, i2), after.lines(j1, j2)


def _blocks(before: Lines, after: Lines, spans: list[tuple[int, int, int, int]],
            work: Work, split: bool = False) -> list[list[int]]:
    """The changed spans as whole-line blocks ``[i1, i2, j1, j2]`` (0-based,
    end exclusive), merged where they share a line, unchanged ones dropped
    (``split``: the texts' lines are split already)."""
    a_count, b_count = before.count(), after.count()
    blocks: list[list[int]] = []
    for ba, bb, ca, cb in spans:
        work.step()
        i1, j1 = before.line_of(ba) - 1, after.line_of(ca) - 1
        if (bb > ba or cb > ca) and before.at_line_start(bb) and after.at_line_start(cb):
            i2, j2 = before.line_of(bb) - 1, after.line_of(cb) - 1  # ends with a line break
        else:
            i2, j2 = before.line_of(bb), after.line_of(cb)  # ends inside a line: take it all
        i2, j2 = min(i2, a_count), min(j2, b_count)
        if blocks and i1 < blocks[-1][1]:  # shares a line with the previous one
            blocks[-1][1], blocks[-1][3] = max(blocks[-1][1], i2), max(blocks[-1][3], j2)
        else:
            blocks.append([i1, i2, j1, j2])
    kept = []
    for i1, i2, j1, j2 in blocks:
        old, new = _compared(before, after, i1, i2, j1, j2, split)
        if old != new:
            kept.append([i1, i2, j1, j2])
    return kept


def unified_diff(path: str, before: Lines, after: Lines,
                 spans: list[tuple[int, int, int, int]], work: Work,
                 context: int = 3) -> Diff:
    """A git-style unified diff (``\\n`` breaks, ``\\ No newline at end of
    file`` markers) of two texts that agree outside ``spans``: each span is
    ``(ba, bb, ca, cb)``, original offsets where ``before[ba:bb]`` became
    ``after[ca:cb]``.  Only the lines of each span are compared, so the cost
    is the size of the change, not of the file.  A change of only a line's
    terminator does not show (edit_file never makes one)."""
    if len(spans) == 1:
        quick = _one_line(path, before, after, spans[0], context)
        if quick is not None:
            return quick
        if not (before.has_cr or after.has_cr):
            return _windowed(path, before.text, after.text, spans[0], work, context)
    return _general(path, before, after, spans, work, context)


def _windowed(path: str, old: str, new: str, span: tuple[int, int, int, int], work: Work,
              context: int, first_line: int = 0) -> Diff:
    """:func:`_general` of one change of texts without ``\\r``, run on the
    lines around it only: from ``context`` lines before its first line to
    ``context`` lines after its last (or the ends of the texts), each a text
    of its own, split at once (a few lines), the hunks' line numbers then
    shifted to where the window starts."""
    ba, bb, ca, cb = span
    if ba != ca:  # (texts that agree before one change start it at one offset)
        return _general(path, Lines(old), Lines(new), [span], work, context, first_line)
    start = line_start = old.rfind("\n", 0, ba) + 1
    line = old.count("\n", 0, start)
    above = line if line < context else context
    for _ in range(above):
        start = old.rfind("\n", 0, start - 1) + 1
    end, size = bb, len(old)
    for _ in range(context + 1):  # the end of the change's last line, and context lines more
        if end >= size:
            break
        end = old.find("\n", end) + 1 or size
    old_w, new_w = old[start:end], new[start:end + len(new) - size]
    shown = _block_of_window(path, old_w, new_w, line_start - start, bb - start, cb - start,
                             above, context, first_line + line - above)
    if shown is not None:
        return Diff(shown, True)
    return _general(path, Lines(old_w).presplit(), Lines(new_w).presplit(),
                    [(ba - start, bb - start, ca - start, cb - start)], work, context,
                    first_line + line - above, split=True)


def _block_of_window(path: str, old: str, new: str, start: int, old_end: int, new_end: int,
                     line: int, context: int, first_line: int) -> str | None:
    """:func:`block_diff_of_bytes` of a window of lines (``old[start:old_end]``
    became ``new[start:new_end]``, ``start`` beginning its line ``line``,
    the window's first line being ``first_line`` of the texts), on its
    UTF-8 bytes."""
    try:
        old_b, new_b = old.encode("utf-8"), new.encode("utf-8")
    except UnicodeError:  # (a lone surrogate): aligned as text
        return None
    if len(old_b) != len(old):  # offsets in bytes (the texts agree before ``start``)
        start, old_end = len(old[:start].encode("utf-8")), len(old[:old_end].encode("utf-8"))
    if len(new_b) != len(new):
        new_end = len(new[:new_end].encode("utf-8"))
    return block_diff_of_bytes(path, old_b, new_b, start, line, old_end, new_end, context,
                               first_line)


def _one_line(path: str, before: Lines, after: Lines, span: tuple[int, int, int, int],
              context: int) -> Diff | None:
    """The diff of the commonest edit, one change inside one line of a text
    without ``\\r``, cut from the texts around it with a few ``find`` calls
    (what :func:`_general` answers for it, which a property test holds it
    to); ``None`` for any other change."""
    ba, bb, ca, cb = span
    if ba != ca or before.has_cr or after.has_cr:
        return None
    text = one_line_diff(path, before.text, after.text, ba, bb, cb, context)
    return None if text is None else Diff(text, True)


def window_diff(path: str, before: str, after: str, start: int, old_end: int, new_end: int,
                work: Work, first_line: int, context: int = 3) -> str | None:
    """:func:`unified_diff`'s text for one change of two texts without
    ``\\r``, given as windows of their lines: from ``context`` lines before
    the change's first line to ``context`` lines after its last (or the
    texts' ends), the first being line ``first_line`` (0-based) of the
    texts; ``before[start:old_end]`` became ``after[start:new_end]``.
    ``None`` when some block was too costly to compare line by line."""
    one = one_line_diff(path, before, after, start, old_end, new_end, context, first_line)
    if one is not None:
        return one
    diff = _windowed(path, before, after, (start, old_end, start, new_end), work, context,
                     first_line)
    return diff.text if diff.complete else None


def one_line_diff(path: str, old: str, new: str, start: int, old_end: int, new_end: int,
                  context: int = 3, first_line: int = 0) -> str | None:
    """:func:`unified_diff` of two texts without ``\\r`` where
    ``old[start:old_end]`` became ``new[start:new_end]`` (all else the same),
    for a change inside one line (the texts' lines numbered from
    ``first_line``: windows of longer texts); ``None`` for any other change."""
    if old.find("\n", start, old_end) >= 0 or new.find("\n", start, new_end) >= 0:
        return None
    size = len(old)
    start = old.rfind("\n", 0, start) + 1  # the changed line starts here in both texts
    if start >= size or start >= len(new):
        return None  # a line added after a final line break
    old_end, new_end = old.find("\n", old_end) + 1 or size, new.find("\n", new_end) + 1 or len(new)
    removed, added = old[start:old_end], new[start:new_end]
    if removed == added:
        return None
    # the changed line's index (the breaks before it: the text has no \r), and
    # where the hunk starts, up to ``context`` lines before it
    index = old.count("\n", 0, start)
    above = index if index < context else context
    first = start
    for _ in range(above):
        first = old.rfind("\n", 0, first - 1) + 1
    last, below = old_end, 0  # where it ends, and its lines after the change
    while below < context and last < size:
        last = old.find("\n", last) + 1 or size
        below += 1
    count = above + 1 + below
    shown = first_line + index - above + 1
    hunk = f"{shown},{count}" if count != 1 else f"{shown}"
    if last < size or old[-1] == "\n":  # every line shown ends with its break
        body = "-" + removed + "+" + added
        if above:
            body = " " + old[first:start].replace("\n", "\n ")[:-1] + body
        if below:
            body += " " + old[old_end:last].replace("\n", "\n ")[:-1]
    else:  # the file's last line, without a break, is shown
        body = (f"{_context(old[first:start])}{_line('-', removed)}{_line('+', added)}"
                f"{_context(old[old_end:last])}")
    return f"{_head(path)}@@ -{hunk} +{hunk} @@\n{body}"


def one_line_diff_of_bytes(path: str, old: bytes, new: bytes, start: int, line: int,
                           old_end: int, context: int = 3) -> str | None:
    """:func:`one_line_diff` of two UTF-8 texts without ``\\r`` given as
    their bytes, for a change inside line ``line`` (0-based), which starts
    at ``start`` in both and ends, its break included, ``len(new) -
    len(old)`` later in ``new`` than in ``old`` (``old[old_end:]`` is
    ``new``'s tail): the lines around it sliced and decoded alone.  The
    caller knows the changed line holds no break on either side.  ``None``
    where the hunk would show a last line without its break (or a line
    added after a final one), which :func:`one_line_diff` says otherwise."""
    size = len(old)
    if start >= size or start >= len(new):
        return None
    old_end = last = old.find(b"\n", old_end) + 1 or size
    if context == 3:  # the commonest hunk: three lines after the change, up to three before
        # each find starts past the break the one before found (a -1 wraps
        # to the text's start, before old_end: the file ends sooner)
        last = old.find(b"\n", old.find(b"\n", old.find(b"\n", old_end) + 1) + 1) + 1
        if last > old_end:
            above = line if line < 3 else 3
            first = old.rfind(b"\n", 0, old.rfind(b"\n", 0, old.rfind(b"\n", 0, start - 1))) \
                + 1 if above == 3 else 0
            # every line of the hunk after " " (each break before the changed
            # line moved it one byte on), the changed line then cut out
            lines = b" " + old[first:last].replace(b"\n", b"\n ")
            at = start - first + above
            body = (lines[:at] + b"-" + old[start:old_end] + b"+"
                    + new[start:old_end + len(new) - size] + lines[at + old_end - start + 1:-1])
            shown = line - above + 1
            return (f"{_head(path)}@@ -{shown},{above + 4} +{shown},{above + 4} @@\n"
                    f"{body.decode('utf-8')}")
        last = old_end
    above = line if line < context else context
    first = start
    for _ in range(above):
        first = old.rfind(b"\n", 0, first - 1) + 1
    below = 0
    while below < context and last < size:
        last = old.find(b"\n", last) + 1 or size
        below += 1
    if last == size and old[-1:] != b"\n":
        return None
    body = b"-" + old[start:old_end] + b"+" + new[start:old_end + len(new) - size]
    if above:
        body = b" " + old[first:start].replace(b"\n", b"\n ")[:-1] + body
    if below:
        body += b" " + old[old_end:last].replace(b"\n", b"\n ")[:-1]
    count = above + 1 + below
    shown = line - above + 1
    hunk = f"{shown},{count}" if count != 1 else f"{shown}"
    return f"{_head(path)}@@ -{hunk} +{hunk} @@\n{body.decode('utf-8')}"


def block_diff_of_bytes(path: str, old: bytes, new: bytes, start: int, line: int,
                        old_end: int, new_end: int, context: int = 3,
                        first_line: int = 0) -> str | None:
    """:func:`unified_diff` of two UTF-8 texts without ``\\r`` given as
    their bytes, for one change of whole lines or across lines: the text
    from ``start`` (where line ``line``, 0-based, starts in both) to
    ``old_end`` became the text to ``new_end``, all else the same.  The
    changed lines are trimmed of the ones they share at either end, as
    the alignment trims them; what is left must share no line, so the
    alignment has nothing more to find (one run of lines removed and
    added), and the hunk is cut from the texts around it.  ``None`` for
    any other change (lines left that align otherwise, a line shown
    without its break): the general diff answers it.  ``first_line``: the
    line (0-based) of the texts the first of ``old`` is (a window of
    longer texts, cut from ``context`` lines before the change's first
    line to ``context`` lines after its last, or the ends)."""
    size, new_size = len(old), len(new)
    # the changed block, as _blocks takes it: whole lines, to the change's
    # end where that starts a line on both sides, else through its line
    if (old_end == 0 or old[old_end - 1] == 10) and (new_end == 0 or new[new_end - 1] == 10):
        old_stop, new_stop = old_end, new_end
    else:
        old_stop = old.find(b"\n", old_end) + 1 or size
        new_stop = new.find(b"\n", new_end) + 1 or new_size
    if (old_stop > start and old[old_stop - 1] != 10) or \
            (new_stop > start and new[new_stop - 1] != 10):
        return None  # a last line without its break is shown: said otherwise
    if _reordered(old[start:old_stop], new[start:new_stop]):
        return None  # as the probe below finds it, before any line is split
    # the block's lines (each ends with its break)
    a = old[start:old_stop - 1].split(b"\n") if old_stop > start else []
    b = new[start:new_stop - 1].split(b"\n") if new_stop > start else []
    if a == b:
        return None
    n, m = len(a), len(b)
    head = common_prefix(a, b, 0, 0, min(n, m))
    tail = common_suffix(a, b, n, m, min(n, m) - head)
    middle, inserted = a[head:n - tail], b[head:m - tail]
    if middle and inserted and (n > 1 or m > 1) and \
            (_probed(middle, inserted) or not set(middle).isdisjoint(inserted)):
        return None  # lines in common left in the middle: aligned in full
    # the run's ends: after the shared head, before the shared tail
    first = start + sum(map(len, a[:head])) + head
    tail_size = sum(map(len, a[n - tail:])) + tail
    old_last, new_last = old_stop - tail_size, new_stop - tail_size
    x1 = line + head
    above = x1 if x1 < context else context
    top = first
    for _ in range(above):
        top = old.rfind(b"\n", 0, top - 1) + 1
    bottom, below = old_last, 0
    while below < context and bottom < size:
        bottom = old.find(b"\n", bottom) + 1 or size
        below += 1
    if bottom == size and old[-1:] != b"\n":
        return None
    removed, added = n - tail - head, m - tail - head
    body = b""
    if above:
        body = b" " + old[top:first].replace(b"\n", b"\n ")[:-1]
    if removed:
        body += b"-" + old[first:old_last].replace(b"\n", b"\n-")[:-1]
    if added:
        body += b"+" + new[first:new_last].replace(b"\n", b"\n+")[:-1]
    if below:
        body += b" " + old[old_last:bottom].replace(b"\n", b"\n ")[:-1]
    shown = first_line + x1 - above
    return (f"{_head(path)}@@ -{_range(shown, above + removed + below)} "
            f"+{_range(shown, above + added + below)} @@\n{body.decode('utf-8')}")


_PROBED = 64  # removed lines from which a few added ones are looked for first


def _probed(removed: list[bytes], added: list[bytes]) -> bool:
    """Whether the first or last added line is one of many removed lines,
    found by two searches of their text (lines reordered or moved show at
    once), before a set of every removed line is made."""
    if len(removed) <= _PROBED:
        return False
    text = b"\n" + b"\n".join(removed) + b"\n"
    return any(b"\n" + line + b"\n" in text for line in (added[0], added[-1]))


def _reordered(removed: bytes, added: bytes) -> bool:
    """:func:`_probed` of two runs of whole lines (each ends with its
    break) that share neither their first line nor their last: the
    trimmed lines are the runs' own, so their first and last added lines
    are looked for in the removed run's text as it is, no line split."""
    if not removed or not added or removed.count(b"\n") <= _PROBED:
        return False
    first_a, first_b = removed[:removed.find(b"\n") + 1], added[:added.find(b"\n") + 1]
    last_a = removed[removed.rfind(b"\n", 0, len(removed) - 1) + 1:]
    last_b = added[added.rfind(b"\n", 0, len(added) - 1) + 1:]
    if first_a == first_b or last_a == last_b:
        return False  # a line shared at an end: trimmed first, then probed
    text = b"\n" + removed
    return b"\n" + first_b in text or b"\n" + last_b in text


def _context(text: str) -> str:
    """Whole lines of a text as a diff's context lines, each marked ``" "``
    (the last may lack its break: the file's last line)."""
    if not text:
        return ""
    marked = " " + text.replace("\n", "\n ")
    # a final break leaves a mark after it that starts no line
    return marked[:-1] if text[-1] == "\n" else marked + _NO_NEWLINE


def _line(sign: str, line: str) -> str:
    """One changed line of a diff (the file's last may lack its break)."""
    return sign + line if line[-1:] == "\n" else sign + line + _NO_NEWLINE


def _general(path: str, before: Lines, after: Lines, spans: list[tuple[int, int, int, int]],
             work: Work, context: int, first_line: int = 0, split: bool = False) -> Diff:
    """:func:`unified_diff` of any change (the texts' lines numbered from
    ``first_line``, 0-based: a window of longer texts; ``split``: their
    lines are split already)."""
    blocks = _blocks(before, after, spans, work, split)
    size = sum(blk[1] - blk[0] + blk[3] - blk[2] for blk in blocks)
    budget = work.budget(proportional(size, per=8))
    out = [_head(path)]
    # split texts without \r: runs of lines are joined from their contents
    joined = split and not (before.has_cr or after.has_cr)
    for hunk in _hunks(before, after, blocks, budget, split, context):
        i1, j1, i2, j2 = hunk[0], hunk[2], hunk[-3], hunk[-1]
        hs, he = max(0, i1 - context), min(before.count(), i2 + context)
        js, je = j1 - (i1 - hs), j2 + (he - i2)
        out.append(f"@@ -{_range(first_line + hs, he - hs)} "
                   f"+{_range(first_line + js, je - js)} @@\n")
        work.step(he - hs + je - js)  # the hunk's lines, each written once below
        if joined:
            _write_contents(out, hunk, before.contents, after.contents, hs, he)
        else:
            _write_lines(out, hunk, before.lines(hs, he), after.lines(js, je), hs, he, js)
        if he == before.count() or je == after.count():
            # only a texts' last line can lack its break, and it ends its run
            out[-3:] = [run if run[-1] == "\n" else run + _NO_NEWLINE for run in out[-3:]]
    return Diff("".join(out) if len(out) > 1 else "", not budget.cut)


def _write_lines(out: list[str], hunk: list[int], olds: list[str],
                 news: list[str], hs: int, he: int, js: int) -> None:
    """A hunk's body (its runs' bounds, four by four, as :func:`_hunks`
    gives them; its lines ``olds``, from line ``hs`` to ``he`` of the old
    text, and ``news``, from ``js`` of the new): each run of lines as
    one string, its mark, then the lines joined by the mark (every line but
    the texts' last ends with its break); the runs' bounds taken relative
    to the hunk's first lines."""
    pos, append = 0, out.append
    runs = iter(hunk)
    for ai, aj, bi, bj in zip(runs, runs, runs, runs):
        x1, x2, y1, y2 = ai - hs, aj - hs, bi - js, bj - js
        if x1 > pos:
            append(" " + " ".join(olds[pos:x1]))
        if x2 > x1:
            append("-" + "-".join(olds[x1:x2]))
        if y2 > y1:
            append("+" + "+".join(news[y1:y2]))
        pos = x2
    if he - hs > pos:
        append(" " + " ".join(olds[pos:]))


def _write_contents(out: list[str], hunk: list[int], olds: list[str],
                    news: list[str], hs: int, he: int) -> None:
    """:func:`_write_lines` of split texts without ``\r`` (``olds`` and
    ``news``: every line's contents, without its break): a run of lines is
    its contents joined by a break and the mark, so no line's start is
    needed and no string is made per line."""
    pos, append = hs, out.append
    n_old, n_new = len(olds), len(news)
    runs = iter(hunk)
    for ai, aj, bi, bj in zip(runs, runs, runs, runs):
        # one line with its break (most runs of a hunk) written at once
        if ai > pos:
            append(f" {olds[pos]}\n" if ai - pos == 1 and ai < n_old
                   else _run(" ", olds, pos, ai))
        if aj > ai:
            append(f"-{olds[ai]}\n" if aj - ai == 1 and aj < n_old else _run("-", olds, ai, aj))
        if bj > bi:
            append(f"+{news[bi]}\n" if bj - bi == 1 and bj < n_new else _run("+", news, bi, bj))
        pos = aj
    if he > pos:
        append(_run(" ", olds, pos, he))


def _run(mark: str, contents: list[str], start: int, end: int) -> str:
    """Lines ``[start, end)`` of a text split into ``contents``, each after
    ``mark`` and with its break (but the text's last line: it has none)."""
    if end - start == 1:
        run = mark + contents[start]
    else:
        run = mark + ("\n" + mark).join(contents[start:end])
    return run + "\n" if end < len(contents) else run


def _hunks(before: Lines, after: Lines, blocks: list[list[int]], budget: Budget,
           split: bool, context: int) -> list[list[int]]:
    """The changed runs ``(i1, i2, j1, j2)`` of whole lines (0-based, end
    exclusive), in order, grouped into hunks (runs closer than twice the
    context share one): each block aligned line by line while the budget
    lasts (a block it cannot pay for is one run).  One pass over the
    alignment's blocks as found (merging them would not move a gap), each
    run put in its hunk as it is found.  A hunk is its runs' bounds written
    one after another (``i1, i2, j1, j2`` of its first run, then of the
    next...): no tuple per run outlives its line, so thousands of runs (lines
    swapped) start no garbage collection, each of which would walk the
    texts' long lists of lines made for this diff."""
    hunks: list[list[int]] = []
    hunk: list[int] = []
    apart = 2 * context
    end = -apart - 1  # where the run before ended (none: far enough before any)
    for i1, i2, j1, j2 in blocks:
        if i2 - i1 <= 1 and j2 - j1 <= 1:
            runs = [(0, 0, 0), (i2 - i1, j2 - j1, 0)]
        else:
            old, new = _compared(before, after, i1, i2, j1, j2, split)
            runs = [*align(old, new, budget).runs, (i2 - i1, j2 - j1, 0)]
        # the gaps between the matching blocks (the opcodes not "equal")
        x = y = 0
        for bx, by, size in runs:
            if x < bx or y < by:
                if i1 + x - end <= apart:
                    hunk += (i1 + x, i1 + bx, j1 + y, j1 + by)
                else:
                    hunk = [i1 + x, i1 + bx, j1 + y, j1 + by]
                    hunks.append(hunk)
                end = i1 + bx
            x, y = bx + size, by + size
    return hunks


def _range(start: int, length: int) -> str:
    first = start + 1 if length else start
    return f"{first}" if length == 1 else f"{first},{length}"


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


def _head(path: str) -> str:
    """A diff's ``---``/``+++`` lines naming ``path``: as it is, or, when
    it holds a control character or a line separator (a name could add
    lines of its choosing), quoted and escaped on one line, as git quotes
    such a name."""
    if path.isprintable():
        return f"--- a/{path}\n+++ b/{path}\n"
    old, new = json.dumps("a/" + path), json.dumps("b/" + path)
    return f"--- {old}\n+++ {new}\n"
