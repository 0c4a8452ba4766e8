"""The pieces a canonical path past openat2's length is re-resolved in
(``_resolve._pieces``): joined they are the path; each is at most
``_CHUNK`` characters unless it is one name longer than that; each is as
long as it can be (the next name would not fit)."""

from __future__ import annotations

import random

import pytest

from corral.contained import _resolve

CHUNK = _resolve._CHUNK


def _names(rng: random.Random, count: int) -> list[str]:
    sizes = [1, 2, 12, 255, CHUNK - 1, CHUNK, CHUNK + 3]
    return ["x" * (rng.choice(sizes) if rng.random() < 0.05 else rng.randint(1, 12))
            for _ in range(count)]


@pytest.mark.parametrize("seed", range(20))
def test_pieces_join_to_the_path_fit_and_are_greedy(seed):
    rng = random.Random(seed)
    for _ in range(200):
        path = "/".join(_names(rng, rng.randint(1, 600)))
        pieces = _resolve._pieces(path)
        assert "/".join(pieces) == path
        for at, piece in enumerate(pieces):
            assert len(piece) <= CHUNK or "/" not in piece, len(piece)
            if at + 1 < len(pieces):
                following = pieces[at + 1].split("/", 1)[0]
                assert len(piece) + 1 + len(following) > CHUNK


def test_a_path_of_one_long_name_is_one_piece():
    assert _resolve._pieces("y" * (CHUNK + 10)) == ["y" * (CHUNK + 10)]
    assert _resolve._pieces("a/" + "y" * (CHUNK + 10) + "/b") == ["a", "y" * (CHUNK + 10), "b"]
