"""The alignment and the diffs written from it, pinned by digest: on
seeded random line sequences (pairs swapped, stretches moved, lines
repeated, cut, added, reversed; few distinct lines and many), under
budgets from none to plenty, every answer (the blocks found, the budget
left, whether it was cut; each general diff's text and completeness) is
hashed, and the sha256 of them all is the one the code gave before the
alignment and the diff writing were made cheaper (round 27): any change
of an answer, however small, changes it."""

from __future__ import annotations

import hashlib
import random

from corral.tools._edit.align import align
from corral.tools._edit.budget import Work
from corral.tools._edit.diff import _general
from corral.tools._edit.text import Lines

# The digests the code answered before the round-27 changes (commit 40cd8c9d).
ALIGNMENTS = "09d6775d0b7ca0c46df7018e67ca02bb767d6da6cc61fbe119f777938ccf0085"
DIFFS = "d70ce8e8e4d50bbf3f813d141569ca516a5cf3ceb7ae91660209d63333e91519"


def _lines(rng: random.Random, longest: int) -> tuple[list[str], list[str]]:
    size = rng.choice([0, 1, 2, 7, 40, 300, longest])
    vocab = rng.choice([1, 3, 30, 10**6])
    old = [f"line {rng.randrange(vocab)}" for _ in range(size)]
    new = list(old)
    for _ in range(rng.randint(1, 5)):
        kind = rng.randrange(6)
        at = rng.randrange(len(new) + 1)
        if kind == 0 and len(new) > 1:  # pairs swapped over a stretch
            stop = min(len(new) - 1, at + rng.randint(2, 2000))
            for i in range(min(at, len(new) - 2), stop, 2):
                new[i], new[i + 1] = new[i + 1], new[i]
        elif kind == 1:  # a stretch moved
            stretch = new[at:at + rng.randint(1, 400)]
            del new[at:at + len(stretch)]
            where = rng.randrange(len(new) + 1)
            new[where:where] = stretch
        elif kind == 2:  # lines cut
            del new[at:at + rng.randint(0, 60)]
        elif kind == 3:  # lines added, some already in the text
            new[at:at] = [f"line {rng.randrange(vocab * 2)}" for _ in range(rng.randint(1, 50))]
        elif kind == 4:  # one line changed
            if new:
                new[min(at, len(new) - 1)] += " changed"
        elif rng.random() < 0.3:
            new.reverse()
    return old, new


def test_alignments_are_the_ones_pinned() -> None:
    rng = random.Random(27)
    digest = hashlib.sha256()
    cut = 0
    for _ in range(150):
        a, b = _lines(rng, 1200)
        budget = Work().budget(rng.choice([0, 30, 500, 20_000, 200_000]))
        alignment = align(a, b, budget)
        digest.update(repr((alignment.runs, alignment.blocks, budget.left, budget.cut,
                            alignment.complete)).encode())
        cut += budget.cut and len(alignment.runs) > 1
    assert digest.hexdigest() == ALIGNMENTS
    assert cut > 10  # budgets that ran out after some blocks were found


def test_general_diffs_are_the_ones_pinned() -> None:
    rng = random.Random(2700)
    digest = hashlib.sha256()
    hunks = 0
    for case in range(60):
        a, b = _lines(rng, 600)
        old = "".join(line + "\n" for line in a)
        new = "".join(line + "\n" for line in b)
        if case % 3 == 0 and old and new:  # a last line without its break
            old, new = old[:-1], new[:-1] + rng.choice(["", "tail"])
        split = case % 2 == 0
        before, after = Lines(old), Lines(new)
        if split:
            before.presplit(), after.presplit()
        work = Work()
        context = rng.choice([0, 1, 3, 5])
        diff = _general("f.py", before, after, [(0, len(old), 0, len(new))], work, context,
                        first_line=rng.choice([0, 4]), split=split)
        digest.update(repr(tuple(diff)).encode())
        hunks += diff.text.count("@@ -") > 1
    assert digest.hexdigest() == DIFFS
    assert hunks > 10  # diffs of many hunks
