"""The near-miss diagnosis's line votes, counted in C over the hits on
rare lines, answer as the loop they replaced (kept here as it was): the
same votes in the same order, the same budget left and cut, on random
oldTexts against random files, under budgets from none to plenty."""

from __future__ import annotations

import random
from collections import Counter

import pytest

from corral.tools._edit.budget import Budget, Work
from corral.tools._edit.diagnosis import _COMMON, _PAIRS, _line_votes


def _line_votes_before(old_keys: list[str], file_keys: list[str],
                       budget: Budget) -> Counter[int]:
    wanted: dict[str, list[int]] = {}
    for j, key in enumerate(old_keys):
        if key:
            wanted.setdefault(key, []).append(j)
    counts = Counter(key for key in file_keys if key in wanted)
    rare = {key: js for key, js in wanted.items()
            if 0 < counts[key] <= _COMMON and counts[key] * len(js) <= _PAIRS}
    votes: Counter[int] = Counter()
    for i, key in enumerate(file_keys):
        js = rare.get(key)
        if js is None:
            continue
        if not budget.spend(len(js)):
            break
        for j in js:
            votes[i - j] += 1
    return votes


@pytest.mark.parametrize("seed", range(6))
def test_line_votes_answer_as_the_loop_they_replaced(seed: int) -> None:
    rng = random.Random(seed)
    cut = 0
    for _ in range(300):
        vocab = rng.choice([3, 30, 300, 10**6])
        file_keys = [rng.choice(["", f"k{rng.randrange(vocab)}"]) if rng.random() < 0.1
                     else f"k{rng.randrange(vocab)}" for _ in range(rng.randint(0, 600))]
        start = rng.randrange(len(file_keys) + 1)
        old_keys = file_keys[start:start + rng.randint(0, 80)]
        old_keys = [f"typo{rng.randrange(5)}" if rng.random() < 0.1 else key
                    for key in old_keys] + ["k1"] * rng.randint(0, 3)
        units = rng.choice([0, 1, 5, 40, 300, 10**9])
        answers = []
        for votes_of in (_line_votes, _line_votes_before):
            budget = Work().budget(units)
            votes = votes_of(old_keys, file_keys, budget)
            answers.append((list(votes.items()), budget.left, budget.cut))
        assert answers[0] == answers[1], (old_keys, file_keys, units)
        cut += answers[0][2] and bool(answers[0][0])
    assert cut > 10  # budgets that ran out part of the way were compared
