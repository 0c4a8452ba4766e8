"""``corral_find_from`` (native/read.cdef) checks its own contract, as
test_native_contract.py checks the module's other functions: called straight
through cffi with lengths and starts at and past their edges (a seeded loop),
it answers ``bytes.find(needle, start)`` of ``buf[:len]`` for every argument
inside the contract, and -2 with ``EINVAL`` for a negative length or start or
a NULL pointer.  Every length given is at most its buffer's (C cannot check
that)."""

from __future__ import annotations

import errno
import os
import random

import pytest

try:
    from corral._native import ffi, lib
except ImportError:  # the module was not built: nothing of it to check
    ffi = lib = None

pytestmark = [pytest.mark.skipif(lib is None, reason="the native module is not built"),
              pytest.mark.own_backend]  # the module itself, straight through cffi

ITERATIONS = int(os.environ.get("CORRAL_NATIVE_FUZZ_ITERATIONS", "300"))
INT64_MAX = 2**63 - 1
INT64_MIN = -(2**63)
EDGES64 = [INT64_MIN, INT64_MIN + 1, -(2**32), -2, -1, 0, 1, 2, 7, 8, 9, 63, 64, 65,
           2**31, 2**32, 2**62, INT64_MAX - 1, INT64_MAX]


def _edge(rng: random.Random, *near: int) -> int:
    """An int64 at or past an edge: a fixed edge, or one of ``near`` +-1."""
    if near and rng.random() < 0.5:
        return max(INT64_MIN, min(INT64_MAX, rng.choice(near) + rng.choice((-1, 0, 0, 1))))
    return rng.choice(EDGES64)


def test_find_from_at_and_past_every_edge():
    rng = random.Random(34)
    for _ in range(ITERATIONS * 4):
        buf = bytes(rng.choice(b"ab\n") for _ in range(rng.randint(0, 40)))
        needle = bytes(rng.choice(b"ab\n") for _ in range(rng.randint(0, 4)))
        length = rng.choice((len(buf), rng.randint(0, len(buf)), -1, INT64_MIN))
        nlen = rng.choice((len(needle), rng.randint(0, len(needle)), -1, INT64_MIN))
        start = _edge(rng, 0, length, len(buf)) if rng.random() < 0.5 else \
            rng.randint(0, len(buf) + 1)
        found = lib.corral_find_from(buf, length, needle, nlen, start)
        if length < 0 or nlen < 0 or start < 0:
            assert found == -2 and ffi.errno == errno.EINVAL
        else:
            assert found == buf[:length].find(needle[:nlen], start), (buf, length, needle,
                                                                      nlen, start)


def test_find_from_refuses_a_null_pointer():
    assert lib.corral_find_from(ffi.NULL, 0, b"a", 1, 0) == -2 and ffi.errno == errno.EINVAL
    assert lib.corral_find_from(b"a", 1, ffi.NULL, 0, 0) == -2 and ffi.errno == errno.EINVAL


def test_find_from_finds_the_first_match_at_or_after_start_in_a_long_buffer():
    buf = b"x" * 100000 + b"needle" + b"y" * 100000 + b"needle"
    assert lib.corral_find_from(buf, len(buf), b"needle", 6, 0) == 100000
    assert lib.corral_find_from(buf, len(buf), b"needle", 6, 100001) == 200006
    assert lib.corral_find_from(buf, len(buf), b"needle", 6, 200007) == -1
    assert lib.corral_find_from(buf, len(buf) - 1, b"needle", 6, 100001) == -1
