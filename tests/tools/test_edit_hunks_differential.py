"""The diff's one pass from an alignment to its hunks answers as the three
passes it replaced (the blocks merged, the gaps between them listed, the
gaps grouped into hunks), kept here as they were: on random texts (few
distinct lines and many, swapped, moved, repeated, cut), under budgets
from none to plenty, the same hunks, the same budget left, the same
diff text; and an alignment's merged blocks are the old merge's."""

from __future__ import annotations

import random

import pytest

from corral.tools._edit import diff as diff_module
from corral.tools._edit.align import Block, align
from corral.tools._edit.budget import Budget, Work
from corral.tools._edit.diff import _blocks, _compared, _general, _hunks
from corral.tools._edit.text import Lines

Run = tuple[int, int, int, int]


def _merged_before(blocks: list[Block]) -> list[Block]:
    out: list[Block] = []
    pi = pj = -1
    psize = 0
    for i, j, size in blocks:
        if i == pi + psize and j == pj + psize:
            psize += size
        else:
            if psize:
                out.append((pi, pj, psize))
            pi, pj, psize = i, j, size
    if psize:
        out.append((pi, pj, psize))
    return out


def _changes_before(before: Lines, after: Lines, blocks: list[list[int]], budget: Budget,
                    split: bool) -> list[Run]:
    out = []
    for i1, i2, j1, j2 in blocks:
        if i2 - i1 <= 1 and j2 - j1 <= 1:
            out.append((i1, i2, j1, j2))
            continue
        old, new = _compared(before, after, i1, i2, j1, j2, split)
        merged = _merged_before(align(old, new, budget).runs)
        x = y = 0
        for bx, by, size in [*merged, (i2 - i1, j2 - j1, 0)]:
            if x < bx or y < by:
                out.append((i1 + x, i1 + bx, j1 + y, j1 + by))
            x, y = bx + size, by + size
    return out


def _hunks_before(changes: list[Run], context: int) -> list[list[int]]:
    """The changes grouped into hunks, each hunk's runs written one after
    another (``i1, i2, j1, j2`` of its first, then of the next...), as the
    one pass gives them."""
    hunks: list[list[int]] = []
    hunk: list[int] = []
    apart = 2 * context
    end = -apart - 1
    for change in changes:
        if change[0] - end <= apart:
            hunk.extend(change)
        else:
            hunk = list(change)
            hunks.append(hunk)
        end = change[1]
    return hunks


def _texts(rng: random.Random) -> tuple[str, str]:
    size = rng.choice([1, 2, 5, 30, 200, 1500])
    vocab = rng.choice([2, 5, 40, 10**6])
    lines = [f"w{rng.randrange(vocab)}\n" for _ in range(size)]
    new = list(lines)
    for _ in range(rng.randint(1, 6)):
        kind = rng.randrange(5)
        at = rng.randrange(len(new) + 1)
        if kind == 0 and len(new) > 1:  # swap pairs in a stretch
            stop = min(len(new) - 1, at + rng.randint(2, 400))
            for i in range(min(at, len(new) - 2), stop, 2):
                new[i], new[i + 1] = new[i + 1], new[i]
        elif kind == 1:  # move a stretch
            stretch = new[at:at + rng.randint(1, 300)]
            del new[at:at + len(stretch)]
            where = rng.randrange(len(new) + 1)
            new[where:where] = stretch
        elif kind == 2:
            new[at:at + rng.randint(0, 50)] = []
        elif kind == 3:
            new[at:at] = [f"new {rng.randrange(vocab)}\n" for _ in range(rng.randint(1, 40))]
        else:
            new = new[::-1] if rng.random() < 0.2 else new
    old_text, new_text = "".join(lines), "".join(new)
    if rng.random() < 0.3:
        old_text, new_text = old_text[:-1], new_text[:-1] + rng.choice(["", "tail"])
    return old_text, new_text


@pytest.mark.parametrize("seed", range(6))
def test_one_pass_to_hunks_answers_as_the_passes_it_replaced(seed: int) -> None:
    rng = random.Random(seed)
    compared = 0
    for _ in range(120):
        old, new = _texts(rng)
        if old == new:
            continue
        units = rng.choice([0, 10, 200, 5_000, 10**9])
        context = rng.choice([0, 1, 3, 5])
        split = rng.random() < 0.5
        spans = [(0, len(old), 0, len(new))]
        answers = []
        for one_pass in (True, False):
            before, after = Lines(old), Lines(new)
            if split:
                before.presplit(), after.presplit()
            work = Work()
            blocks = _blocks(before, after, spans, work, split)
            budget = work.budget(units)
            if one_pass:
                hunks = _hunks(before, after, blocks, budget, split, context)
            else:
                hunks = _hunks_before(_changes_before(before, after, blocks, budget, split),
                                      context)
            answers.append((hunks, budget.left, budget.cut))
        assert answers[0] == answers[1], (old, new, units, context, split)
        compared += bool(answers[0][0])
    assert compared > 100


@pytest.mark.parametrize("seed", range(3))
def test_the_general_diff_is_the_same_text_as_before(seed: int,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    rng = random.Random(100 + seed)
    cases = [_texts(rng) for _ in range(80)]

    def diffs() -> list[tuple[str, bool]]:
        out = []
        for old, new in cases:
            split = len(old) % 2 == 0
            before, after = Lines(old), Lines(new)
            if split:
                before.presplit(), after.presplit()
            out.append(tuple(_general("f.py", before, after, [(0, len(old), 0, len(new))],
                                      Work(), 3, first_line=2, split=split)))
        return out

    now = diffs()

    def passes_before(before: Lines, after: Lines, blocks: list[list[int]], budget: Budget,
                      split: bool, context: int) -> list[list[int]]:
        return _hunks_before(_changes_before(before, after, blocks, budget, split), context)

    monkeypatch.setattr(diff_module, "_hunks", passes_before)
    assert now == diffs()
    assert sum(1 for text, _ in now if text.count("@@ -") > 1) > 10  # hunks of many runs


@pytest.mark.parametrize("seed", range(3))
def test_merged_blocks_are_the_old_merge_of_the_blocks_found(seed: int) -> None:
    rng = random.Random(200 + seed)
    for _ in range(150):
        old, new = _texts(rng)
        a, b = old.split("\n"), new.split("\n")
        alignment = align(a, b, Work().budget(rng.choice([0, 50, 10**9])))
        assert alignment.blocks == _merged_before(alignment.runs)
        assert alignment.runs == sorted(alignment.runs)
        for i, j, size in alignment.blocks:
            assert a[i:i + size] == b[j:j + size]
