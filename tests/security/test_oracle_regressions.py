"""Cases the state machine and the strategy properties found, pinned.

Each was a disagreement between corral and the kernel oracle: all but the
two marked "oracle" were core bugs (fixed; they fail on the core of commit
f216d4b); those two settled what the oracle means by ``makedirs``.  They run through the same differential check as the fuzzers
(every backend config against openat2, outside snapshot), on the state
machine's seed tree: ``a/``, ``a/b/``, ``b/``, ``f``, ``a/f``,
``a/b/fifo``, ``l -> a``, ``a/l -> ../../ws-evil`` (out),
``b/l -> ../a/b/``, ``b/A -> <abs>/ws-evil`` (out), and chains
``c40_0`` (40 links to ``a``) and ``c41_0`` (41); plus ``b/B -> ../f/.`` and
``b/C -> ../a/.``.
"""

from __future__ import annotations

import pytest

from .helpers.harness import ORACLE, corral_configs
from .helpers.properties import seeded

pytestmark = [pytest.mark.skipif(not ORACLE, reason="needs the Linux openat2 oracle"),
              pytest.mark.every_config]  # each case on corral_configs()

CASES = [
    ("makedirs", ""),  # was EEXIST; an empty path names nothing: ENOENT
    ("open_creat", ".."),  # was EISDIR before resolving: the escape must win
    ("open_creat", "/"),
    ("open_creat", "f/."),  # ENOTDIR, as the kernel
    ("write_bytes", "../x/"),  # was EISDIR: EXDEV
    ("write_bytes", "a/f/.."),  # ENOTDIR
    ("write_bytes", "a/b/fifo/b/"),  # ENOTDIR
    ("open_rdonly", "a/b/fifo/"),  # was SpecialFileError: "fifo/" is ENOTDIR
    ("mkdir", "./"),  # was ENOENT: EEXIST
    ("remove", "a/."),  # was EINVAL: EISDIR
    ("remove", "././"),  # was ENOENT: EISDIR
    ("remove", "a/l/.///"),  # was ENOTDIR without following: EXDEV (a/l leads out)
    ("makedirs", "f"),  # the leaf exists as a file: EEXIST
    ("makedirs", "f/."),  # oracle: "f/." needs f to be a directory: ENOTDIR
    ("makedirs", "x/x//../x"),  # oracle: made x and x/x, then named x/x again: ok
    ("rename", "a/b/b/", "//e/"),  # was ENOENT (src) before dst was resolved: EXDEV
    ("rename", "a/é//", "a/l/é"),  # was ENOENT: EXDEV (a/l leads out)
    ("rename", "a/..", "/a/a"),  # was EBUSY: EXDEV
    ("rename", "l/", ""),  # was ENOTDIR: ENOENT (dst names nothing)
    ("rename", "l/f", "b/"),  # was EISDIR: ENOTDIR (a "/" on dst, src a file)
    ("rename", "./.", "a/f"),  # EBUSY
    ("rename", "a", "a/f/"),  # was ENOTDIR: EINVAL (a directory into itself comes first)
    ("open_creat", "b/B"),  # b/B -> f/. : was EISDIR ("f/." taken as "f/"): ENOTDIR
    ("write_bytes", "b/B"),
    ("open_creat", "b/C"),  # b/C -> a/. : EISDIR
    # kernel quirk, not a core bug: after 21-40 links an escaping ".." is
    # ELOOP from openat2 (helpers.oracle._counted); EXDEV is the answer
    ("open_rdonly", "c40_0/../.."),
    ("stat", "c40_0/../../x"),
    ("open_rdonly", "c41_0/../.."),  # 41 links: ELOOP
]


@pytest.fixture(scope="module")
def harness():
    h = seeded(corral_configs())
    assert h.make("symlink", "b/B", "../f/.") and h.make("symlink", "b/C", "../a/.")
    yield h
    h.close()


@pytest.mark.parametrize("case", CASES, ids=[repr(c[1:]) + c[0] for c in CASES])
def test_found_case_agrees_with_kernel(harness, case):
    op, *paths = case
    harness.check(op, *paths)
    harness.check_invariants()
