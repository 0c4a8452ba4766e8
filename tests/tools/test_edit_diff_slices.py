"""The diff's two ways of writing a hunk give the same text: runs of lines
cut from the texts (split texts without ``\\r``, the windowed diff) and
runs joined from lists of lines (any other), on a table of edits: lines
swapped in pairs, moved, removed, added, replaced, repeated, with and
without a final line break, at the texts' ends and in their middle."""

from __future__ import annotations

import random

import pytest

from corral.tools._edit.budget import Work
from corral.tools._edit.diff import _general
from corral.tools._edit.text import Lines


def _edits() -> list[tuple[str, str]]:
    rng = random.Random(21)
    table: list[tuple[str, str]] = []
    for size in (1, 2, 3, 7, 20, 90, 400):
        for vocab in (2, 12, 10**6):
            lines = [f"w{rng.randrange(vocab)} x\n" for _ in range(size)]
            swapped = list(lines)
            for i in range(0, size - 1, 2):
                swapped[i], swapped[i + 1] = swapped[i + 1], swapped[i]
            moved = lines[size // 2:] + lines[:size // 2]
            mixed = list(lines)
            for _ in range(max(1, size // 5)):
                at = rng.randrange(len(mixed) + 1)
                choice = rng.randrange(3)
                if choice == 0 and mixed:
                    del mixed[min(at, len(mixed) - 1)]
                elif choice == 1:
                    mixed.insert(at, f"new {rng.randrange(9)}\n")
                elif mixed:
                    mixed[min(at, len(mixed) - 1)] = f"changed {rng.randrange(9)}\n"
            for new in (swapped, moved, mixed, lines[::-1], lines[1:], ["top\n", *lines]):
                old_text, new_text = "".join(lines), "".join(new)
                table.append((old_text, new_text))
                table.append((old_text[:-1], new_text[:-1]))  # no final break
                table.append((old_text, new_text + "tail"))
    return table


EDITS = _edits()


@pytest.mark.parametrize("context", [0, 1, 3])
def test_sliced_runs_write_the_same_diff_as_joined_lines(context: int) -> None:
    compared = 0
    for old, new in EDITS:
        if old == new:
            continue
        spans = [(0, len(old), 0, len(new))]
        sliced = _general("f.txt", Lines(old).presplit(), Lines(new).presplit(), spans, Work(),
                          context, first_line=4, split=True)
        joined = _general("f.txt", Lines(old), Lines(new), spans, Work(), context,
                          first_line=4, split=False)
        assert sliced == joined, (old, new)
        compared += bool(sliced.text)
    assert compared > len(EDITS) // 2


def _random_lines(rng: random.Random, size: int, vocab: int) -> list[str]:
    return [f"v{rng.randrange(vocab)}\n" for _ in range(size)]


def _random_edit(rng: random.Random) -> tuple[str, str]:
    """Two texts: random lines (repeated or not), then lines swapped in
    pairs, moved, inserted, removed, replaced; either side may be empty or
    lack its final break."""
    size = rng.choice((0, 1, 2, 5, 30, 150))
    lines = _random_lines(rng, size, rng.choice((2, 8, 10**9)))
    new = list(lines)
    for _ in range(rng.randrange(1, 6)):
        choice = rng.randrange(5)
        at = rng.randrange(len(new) + 1)
        if choice == 0 and len(new) > 1:  # swap lines in pairs over a stretch
            stop = min(len(new) - 1, at + rng.randrange(1, 40))
            for i in range(min(at, len(new) - 2), stop, 2):
                new[i], new[i + 1] = new[i + 1], new[i]
        elif choice == 1:
            new[at:at] = _random_lines(rng, rng.randrange(1, 5), 10**9)
        elif choice == 2:
            del new[at:at + rng.randrange(1, 5)]
        elif choice == 3 and new:
            new[min(at, len(new) - 1)] = f"changed {rng.randrange(4)}\n"
        else:
            cut = rng.randrange(len(new) + 1)
            new = new[cut:] + new[:cut]
    old_text, new_text = "".join(lines), "".join(new)
    if rng.random() < 0.3:
        old_text = old_text[:-1]
    if rng.random() < 0.3:
        new_text = new_text[:-1]
    return old_text, new_text


@pytest.mark.parametrize("seed", range(4))
def test_random_edits_write_the_same_diff_both_ways(seed: int) -> None:
    rng = random.Random(seed)
    compared = 0
    for _ in range(300):
        old, new = _random_edit(rng)
        if old == new:
            continue
        spans = [(0, len(old), 0, len(new))]
        context = rng.choice((0, 1, 3))
        sliced = _general("f.txt", Lines(old).presplit(), Lines(new).presplit(), spans, Work(),
                          context, first_line=2, split=True)
        joined = _general("f.txt", Lines(old), Lines(new), spans, Work(), context,
                          first_line=2, split=False)
        assert sliced == joined, (old, new)
        compared += bool(sliced.text)
    assert compared > 150
