"""Aligning two sequences of lines within a work budget: pure logic, no I/O.

edit_file aligns lines to write a diff, to find the window of a file
closest to an oldText that is not there, and to say what differs.
``difflib.SequenceMatcher`` is quadratic (or worse) on hostile input, so
this module aligns in steps a caller can bound:

1. the common head and tail are matched (compared in C, in chunks);
2. a few lines are aligned by Myers' ``O((n + m) d)`` greedy algorithm (a
   shortest edit script);
3. more lines are anchored by the lines that occur exactly once on each
   side (patience diff: the longest increasing run of such pairs, ``n log
   n``), and the gaps between anchors are aligned the same way; where such
   lines are too few to trust, Myers is tried first at a small cost;
4. a large gap without such lines is aligned by Myers while the budget
   lasts.

Every step is charged to a :class:`~corral.tools._edit.budget.Budget`; a
gap the budget cannot pay for is left unaligned (a whole replacement), and
:attr:`Alignment.complete` is then ``False``: the alignment is still correct
(everything it calls equal is equal), only not minimal.
"""

from __future__ import annotations

from bisect import bisect_left
from math import isqrt
from collections import Counter
from itertools import compress
from collections.abc import Hashable, Sequence
from dataclasses import dataclass

from .budget import Budget

__all__ = ["Alignment", "Block", "Opcode", "align", "common_prefix", "common_suffix",
           "first_difference"]

Block = tuple[int, int, int]  # a[i:i+size] == b[j:j+size]
Opcode = tuple[str, int, int, int, int]  # as difflib's: tag, i1, i2, j1, j2
_CHUNK = 256
_SMALL = 64  # ranges of at most this many items go straight to Myers
_MEDIUM = 4000  # ranges of at most this many items try Myers first, at a small cost
_MANY = (1).__lt__


def common_prefix(a: Sequence[Hashable], b: Sequence[Hashable], i: int = 0, j: int = 0,
                  limit: int | None = None) -> int:
    """How many items ``a[i:]`` and ``b[j:]`` share at their start (at most ``limit``)."""
    n = min(len(a) - i, len(b) - j)
    if limit is not None:
        n = min(n, limit)
    k = 0
    while k + _CHUNK <= n and a[i + k:i + k + _CHUNK] == b[j + k:j + k + _CHUNK]:
        k += _CHUNK  # slices compare in C
    while k < n and a[i + k] == b[j + k]:
        k += 1
    return k


def common_suffix(a: Sequence[Hashable], b: Sequence[Hashable], i_end: int, j_end: int,
                  limit: int) -> int:
    """How many items ``a[:i_end]`` and ``b[:j_end]`` share at their end (at most ``limit``)."""
    k = 0
    while k + _CHUNK <= limit and \
            a[i_end - k - _CHUNK:i_end - k] == b[j_end - k - _CHUNK:j_end - k]:
        k += _CHUNK
    while k < limit and a[i_end - k - 1] == b[j_end - k - 1]:
        k += 1
    return k


def first_difference(a: str, b: str) -> int:
    """The index of the first character where ``a`` and ``b`` differ (the
    shorter length if one starts the other), found by halving in C."""
    n = min(len(a), len(b))
    lo, hi = 0, n  # a[:lo] == b[:lo]; the first difference is < hi, or there is none
    if a[:n] == b[:n]:
        return n
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if a[lo:mid] == b[lo:mid]:
            lo = mid
        else:
            hi = mid
    return lo


@dataclass
class Alignment:
    """How two line sequences (``n`` and ``m`` lines long) match, block by block."""

    runs: list[Block]  # matching blocks, increasing in both sequences, as found (not merged)
    n: int
    m: int
    complete: bool  # False: a part the budget could not pay for is left unaligned

    @property
    def blocks(self) -> list[Block]:
        """The matching blocks merged: a block that continues the one
        before (on both sides) joined to it (the gaps between blocks, all
        a diff needs, are the same in :attr:`runs`)."""
        merged: list[Block] | None = self.__dict__.get("_merged")
        if merged is None:
            merged = self.__dict__["_merged"] = _merged(self.runs)
        return merged

    def opcodes(self) -> list[Opcode]:
        """``equal``/``replace``/``delete``/``insert`` runs covering both sequences."""
        out: list[Opcode] = []
        i = j = 0
        for bi, bj, size in [*self.blocks, (self.n, self.m, 0)]:
            if i < bi and j < bj:
                out.append(("replace", i, bi, j, bj))
            elif i < bi:
                out.append(("delete", i, bi, j, j))
            elif j < bj:
                out.append(("insert", i, i, j, bj))
            if size:
                out.append(("equal", bi, bi + size, bj, bj + size))
            i, j = bi + size, bj + size
        return out

    def matched(self) -> int:
        return sum(size for _, _, size in self.blocks)


Range = tuple[int, int, int, int]  # a[alo:ahi] against b[blo:bhi]


def align(a: Sequence[Hashable], b: Sequence[Hashable], budget: Budget) -> Alignment:
    """Matching blocks of ``a`` and ``b`` (see the module's docstring)."""
    found: list[Block] = []
    ranges: list[Range] = [(0, len(a), 0, len(b))]
    while ranges:
        trimmed = _trim(a, b, ranges.pop(), found, budget)
        if trimmed is not None:
            ranges += _split(a, b, trimmed, found, budget)
    found.sort()
    return Alignment(found, len(a), len(b), not budget.cut)


def _trim(a: Sequence[Hashable], b: Sequence[Hashable], where: Range, found: list[Block],
          budget: Budget) -> Range | None:
    """The range without its common head and tail (added to ``found``);
    ``None`` when nothing is left to align or the budget cannot pay for it."""
    alo, ahi, blo, bhi = where
    head = common_prefix(a, b, alo, blo, min(ahi - alo, bhi - blo))
    if head:
        found.append((alo, blo, head))
        alo, blo = alo + head, blo + head
    tail = common_suffix(a, b, ahi, bhi, min(ahi - alo, bhi - blo))
    if tail:
        found.append((ahi - tail, bhi - tail, tail))
        ahi, bhi = ahi - tail, bhi - tail
    budget.work.step(head + tail + 1)
    if alo == ahi or blo == bhi or not budget.spend(ahi - alo + bhi - blo):
        return None
    return alo, ahi, blo, bhi


def _split(a: Sequence[Hashable], b: Sequence[Hashable], where: Range, found: list[Block],
           budget: Budget) -> list[Range]:
    """Align a trimmed range: its blocks go to ``found``; the gaps still
    to align are returned."""
    alo, ahi, blo, bhi = where
    size = ahi - alo + bhi - blo
    if size <= _SMALL:  # a few lines: the shortest script at once
        if _disjoint(a, b, alo, ahi, blo, bhi, budget):
            return []
        found += _myers(a, b, alo, ahi, blo, bhi, budget, budget.left) or []
        return []
    in_a = set(a[alo:ahi])
    if in_a.isdisjoint(b[blo:bhi]):
        return []  # nothing in common: one replacement is the whole answer
    anchor_is, anchor_js = _anchors(a, b, alo, ahi, blo, bhi, in_a, budget)
    if size <= _MEDIUM and len(anchor_is) * 4 < min(ahi - alo, bhi - blo):
        # too few anchors to trust: the shortest script, if it is cheap to find
        blocks = _myers(a, b, alo, ahi, blo, bhi, budget, 4 * size + 1000)
        if blocks is not None:
            found += blocks
            return []
    if anchor_is:
        return _gaps(a, b, where, anchor_is, anchor_js, found)
    blocks = _myers(a, b, alo, ahi, blo, bhi, budget, budget.left)
    if blocks is None:
        budget.cut = True  # left unaligned: a whole replacement
    else:
        found += blocks
    return []


def _disjoint(a: Sequence[Hashable], b: Sequence[Hashable], alo: int, ahi: int, blo: int,
              bhi: int, budget: Budget) -> bool:
    """Whether the ranges share no item (a block of lines all rewritten),
    then charged what :func:`_myers` would find that out for: one step per
    diagonal of every round up to ``n + m``, or the rounds the budget
    pays for (it then gives up, with the same answer: nothing matches)."""
    if not set(a[alo:ahi]).isdisjoint(b[blo:bhi]):
        return False
    rounds = ahi - alo + bhi - blo + 1
    cost = rounds * (rounds + 1) // 2
    if cost > budget.left:
        rounds = (isqrt(8 * budget.left + 1) - 1) // 2  # the most whose cost it pays
        cost = rounds * (rounds + 1) // 2
    if cost:
        budget.spend(cost)
    return True


def _gaps(a: Sequence[Hashable], b: Sequence[Hashable], where: Range, anchor_is: list[int],
          anchor_js: list[int], found: list[Block]) -> list[Range]:
    """The anchors (``a[anchor_is[k]] == b[anchor_js[k]]``) as blocks, and
    the gaps between them still to align."""
    alo, ahi, blo, bhi = where
    gaps: list[Range] = []
    add_block = found.append
    pi, pj = alo, blo
    for i, j in zip(anchor_is, anchor_js):
        if i - pi == 1 and j - pj == 1:  # one line each side: no need to look closer
            if a[pi] == b[pj]:
                add_block((pi, pj, 1))
        elif i > pi and j > pj:  # a gap with lines on both sides
            gaps.append((pi, i, pj, j))
        add_block((i, j, 1))
        pi, pj = i + 1, j + 1
    if ahi - pi == 1 and bhi - pj == 1:  # the gap after the last anchor, as those before
        if a[pi] == b[pj]:
            add_block((pi, pj, 1))
    elif ahi > pi and bhi > pj:
        gaps.append((pi, ahi, pj, bhi))
    return gaps


def _merged(blocks: list[Block]) -> list[Block]:
    out: list[Block] = []
    # the block being grown (none yet: it ends before the first), and the
    # block it started as (kept as it is while nothing joins it: most
    # blocks, when lines are swapped or moved, join none)
    pi = pj = -1
    psize = 0
    first: Block = (pi, pj, psize)
    for block in blocks:
        i, j, size = block
        if i == pi + psize and j == pj + psize:
            psize += size
        else:
            if psize:
                out.append(first if first[2] == psize else (pi, pj, psize))
            pi, pj, psize = block
            first = block
    if psize:
        out.append(first if first[2] == psize else (pi, pj, psize))
    return out


def _anchors(a: Sequence[Hashable], b: Sequence[Hashable], alo: int, ahi: int, blo: int,
             bhi: int, in_a: set[Hashable], budget: Budget) -> tuple[list[int], list[int]]:
    """Pairs ``(i, j)`` of items unique on both sides of the ranges (``in_a``:
    the items of ``a``'s), the longest run increasing in both (patience
    sorting): their ``i`` and their ``j``, as two lists."""
    where = _unique_pairs(a, b, alo, ahi, blo, bhi, in_a)
    if not where:
        return [], []
    # two lists of ints rather than a list of pairs: no tuple per line for
    # the garbage collector to walk
    items = a[alo:ahi]
    kept = list(map(where.__contains__, items))
    if all(kept):  # (lines reordered: every one is an anchor's candidate)
        iis, jjs = list(range(alo, ahi)), list(map(where.__getitem__, items))
    else:
        iis = list(compress(range(alo, ahi), kept))
        jjs = list(map(where.__getitem__, compress(items, kept)))
    budget.work.step(len(iis) + (ahi - alo) + (bhi - blo))
    # patience sorting: tops[k] is the smallest j ending a run of k pairs and
    # ends[k] the index in iis/jjs of that run's last pair (-1 below every j:
    # a run of none); back[index] is the pair before pair index in its run
    tops, ends = [-1], [-1]
    back = [-1] * len(jjs)
    # tops[-1] and tops[-2] (the two branches most pairs take compare with
    # them) kept in locals too: -1 below every j stands for a run of none
    top = second = -1
    for index, j in enumerate(jjs):
        if j > top:  # the longest run so far grows (pairs mostly in order)
            back[index] = ends[-1]
            tops.append(j)
            ends.append(index)
            second, top = top, j
        elif j > second:  # a run as long, ending lower (a pair swapped with the one before)
            back[index] = ends[-2]
            tops[-1] = top = j
            ends[-1] = index
        else:
            at = bisect_left(tops, j)
            back[index] = ends[at - 1]
            tops[at], ends[at] = j, index
            second = tops[-2]
    run: list[int] = []  # the longest run's pairs (their index in iis/jjs), last first
    k = ends[-1]
    while k >= 0:
        run.append(k)
        k = back[k]
    run.reverse()
    return list(map(iis.__getitem__, run)), list(map(jjs.__getitem__, run))


def _unique_pairs(a: Sequence[Hashable], b: Sequence[Hashable], alo: int, ahi: int, blo: int,
                  bhi: int, in_a: set[Hashable]) -> dict[Hashable, int]:
    """The items once in ``b[blo:bhi]`` and not more than once in
    ``a[alo:ahi]`` (whose items ``in_a`` are), each with its index in
    ``b``: looked up by ``a``'s items, the pairs once on each side."""
    # the items more than once on a side (mostly few) are found by counting
    # that side's, only when it has some (a side's items all differ when
    # there are as many as its length), then dropped by map and compress in
    # C (a Counter's keys and values run in the same order)
    where = dict(zip(b[blo:bhi], range(blo, bhi)))
    for repeats, side, lo, hi in ((len(where) < bhi - blo, b, blo, bhi),
                                  (len(in_a) < ahi - alo, a, alo, ahi)):
        if repeats:
            counts = Counter(side[lo:hi])
            for item in compress(counts, map(_MANY, counts.values())):
                where.pop(item, None)
    return where


def _myers(a: Sequence[Hashable], b: Sequence[Hashable], alo: int, ahi: int, blo: int, bhi: int,
           budget: Budget, cap: int) -> list[Block] | None:
    """Matching blocks of a shortest edit script, or ``None`` when it costs
    more than ``cap`` steps or the budget runs out first."""
    n, m = ahi - alo, bhi - blo
    v: dict[int, int] = {1: 0}
    trace: list[dict[int, int]] = []
    for d in range(n + m + 1):
        cap -= d + 1
        if cap < 0 or not budget.spend(d + 1):
            return None
        now: dict[int, int] = {}
        for k in range(-d, d + 1, 2):
            x = v[k + 1] if k == -d or (k != d and v[k - 1] < v[k + 1]) else v[k - 1] + 1
            y = x - k
            start = x
            while x < n and y < m and a[alo + x] == b[blo + y]:
                x += 1
                y += 1
            if x > start:
                cap -= x - start
                if cap < 0 or not budget.spend(x - start):
                    return None
            now[k] = x
            if x >= n and y >= m:
                trace.append(now)
                return _backtrack(trace, n, m, alo, blo)
        trace.append(now)
        v = now
    return None  # not reached: d = n + m always ends


def _backtrack(trace: list[dict[int, int]], n: int, m: int, alo: int, blo: int) -> list[Block]:
    blocks: list[Block] = []
    x, y = n, m
    for d in range(len(trace) - 1, 0, -1):
        before = trace[d - 1]
        k = x - y
        down = k == -d or (k != d and before[k - 1] < before[k + 1])
        px = before[k + 1] if down else before[k - 1]
        py = px - (k + 1 if down else k - 1)
        sx, sy = (px, py + 1) if down else (px + 1, py)
        if x > sx:
            blocks.append((alo + sx, blo + sy, x - sx))
        x, y = px, py
    if x > 0:
        blocks.append((alo, blo, x))
    return blocks
