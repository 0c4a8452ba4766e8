"""The patience anchors of edit_file's line alignment (issue 12's swap
rows): pairs of items once on each side, the longest run increasing in both."""

from __future__ import annotations

from collections import Counter

from hypothesis import given, settings, strategies as st

from corral.tools._edit.align import _anchors, _unique_pairs, align
from corral.tools._edit.budget import Work

_ITEMS = st.lists(st.integers(0, 30), max_size=60)


def _longest_run(pairs: list[tuple[int, int]]) -> int:
    best = [1] * len(pairs)
    for k, (i, j) in enumerate(pairs):
        for q in range(k):
            if pairs[q][0] < i and pairs[q][1] < j:
                best[k] = max(best[k], best[q] + 1)
    return max(best, default=0)


@settings(max_examples=500, deadline=None)
@given(_ITEMS, _ITEMS, st.data())
def test_anchors_are_a_longest_increasing_run_of_pairs_once_on_each_side(a, b, data):
    alo = data.draw(st.integers(0, len(a)))
    ahi = data.draw(st.integers(alo, len(a)))
    blo = data.draw(st.integers(0, len(b)))
    bhi = data.draw(st.integers(blo, len(b)))
    in_a, in_b = Counter(a[alo:ahi]), Counter(b[blo:bhi])
    unique = [(i, j) for i in range(alo, ahi) for j in range(blo, bhi)
              if a[i] == b[j] and in_a[a[i]] == 1 and in_b[b[j]] == 1]
    run = list(zip(*_anchors(a, b, alo, ahi, blo, bhi, set(a[alo:ahi]), Work().budget(10**9))))
    assert set(run) <= set(unique)
    assert all(p[0] < q[0] and p[1] < q[1] for p, q in zip(run, run[1:]))
    assert len(run) == _longest_run(unique)


@settings(max_examples=500, deadline=None)
@given(st.one_of(_ITEMS, st.lists(st.integers(0, 80), max_size=60, unique=True)),
       st.one_of(_ITEMS, st.lists(st.integers(0, 80), max_size=60, unique=True)), st.data())
def test_unique_pairs_are_the_items_once_on_each_side_with_their_index_in_b(a, b, data):
    # sides whose items all differ (no counting) and sides that repeat some
    alo = data.draw(st.integers(0, len(a)))
    ahi = data.draw(st.integers(alo, len(a)))
    blo = data.draw(st.integers(0, len(b)))
    bhi = data.draw(st.integers(blo, len(b)))
    in_a, in_b = Counter(a[alo:ahi]), Counter(b[blo:bhi])
    expected = {b[j]: j for j in range(blo, bhi) if in_a[b[j]] <= 1 and in_b[b[j]] == 1}
    assert _unique_pairs(a, b, alo, ahi, blo, bhi, set(a[alo:ahi])) == expected


@settings(max_examples=300, deadline=None)
@given(st.lists(st.integers(0, 400), min_size=65, max_size=300), st.data())
def test_an_alignment_of_long_sequences_matches_only_equal_items(a, data):
    b = list(a)
    for _ in range(data.draw(st.integers(0, 20))):
        k = data.draw(st.integers(0, len(b) - 2))
        b[k], b[k + 1] = b[k + 1], b[k]
    found = align(a, b, Work().budget(10**9))
    assert found.complete
    for i, j, size in found.blocks:
        assert a[i:i + size] == b[j:j + size]
