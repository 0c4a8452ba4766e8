"""One differential property per public strategy of ``corral.testing.strategies``.

Each ``run_*`` function runs a ``@given`` test built from one strategy
against a list of configs, using the harness's checks (kernel oracle,
config agreement, outside snapshot).  ``test_strategies.py`` runs them on
corral's real backends (they must pass); ``test_meta.py`` runs them on
broken resolvers (they must fail).
"""

from __future__ import annotations

from typing import Callable, Sequence

from hypothesis import given, settings
from hypothesis import strategies as st

from corral.testing.strategies import components, names, paths, symlink_targets, trees
from .harness import OPERATIONS, Config, Harness
from .machine import (ABSOLUTE_PREFIXES, ABSOLUTE_TARGETS, CLIMB_TAILS, POOL, SEED_DIRS,
                         SEED_ENTRIES)

READ_OPS = [op for op in OPERATIONS if not op.mutates]
WRITE_OPS = [op for op in OPERATIONS if op.mutates and op.arity == 1]
SUFFIXES = ("", "/", "/.", "//", "/..", "/f", "/a/f", "/secret", "/new")


def seeded(configs: Sequence[Config], chains: bool = True) -> Harness:
    """A harness with the state machine's seed tree (links in and out, a
    FIFO) and, with ``chains``, chains of 40 and 41 links to ``a``."""
    h = Harness(configs)
    try:
        for path in SEED_DIRS:
            assert h.make("dir", path)
        for kind, path, target in SEED_ENTRIES:
            assert h.make(kind, path, target)
        # a 40-link chain (followed) and a 41-link one (ELOOP)
        for length in (40, 41) if chains else ():
            chain = [f"c{length}_{i}" for i in range(length)] + ["a"]
            for link, nxt in zip(chain, chain[1:]):
                assert h.make("symlink", link, nxt)
    except BaseException:
        h.close()
        raise
    return h


def _args(op, path: str) -> tuple[str, ...]:
    return (path,) if op.arity == 1 else (path, "a/moved")


def _read_checks(h: Harness, path: str) -> None:
    for op in READ_OPS:
        h.check(op, path)


def run_paths(configs: Sequence[Config], settings_: settings) -> None:
    """paths(): every read-only operation on one generated path, fixed tree."""
    h = seeded(configs)
    try:
        @settings_
        @given(path=paths(POOL, absolute_prefixes=ABSOLUTE_PREFIXES,
                          prefixes=st.sampled_from(("c40_0", "c41_0", "a/b/fifo"))))
        def prop(path):
            _read_checks(h, path)
        prop()
        h.check_invariants()
    finally:
        h.close()


def run_components(configs: Sequence[Config], settings_: settings) -> None:
    """components(): paths joined from them by hand, fixed tree."""
    h = seeded(configs)
    try:
        @settings_
        @given(parts=st.lists(components(POOL), min_size=1, max_size=4))
        def prop(parts):
            _read_checks(h, "/".join(parts))
        prop()
        h.check_invariants()
    finally:
        h.close()


def _fresh(configs: Sequence[Config], body: Callable[[Harness], None]) -> None:
    h = seeded(configs, chains=False)  # fresh per example: keep it cheap
    try:
        body(h)
        h.check_invariants()
    finally:
        h.close()


def run_names(configs: Sequence[Config], settings_: settings) -> None:
    """names(): entries made with generated names (a file at the top, a
    directory in ``a``), then every operation on them with each suffix."""
    @settings_
    @given(name=names(POOL), suffix=st.sampled_from(SUFFIXES), op=st.sampled_from(OPERATIONS))
    def prop(name, suffix, op):
        def body(h):
            h.make("file", name)
            h.make("dir", f"a/b/{name}")
            for path in (name + suffix, f"a/b/{name}{suffix}"):
                h.check(op, *_args(op, path))
        _fresh(configs, body)
    prop()


def run_symlink_targets(configs: Sequence[Config], settings_: settings) -> None:
    """symlink_targets(): a link ``t`` (and ``a/t``) with a generated target,
    then one operation on it with each suffix."""
    @settings_
    @given(target=symlink_targets(POOL, absolute=ABSOLUTE_TARGETS, climb_tails=CLIMB_TAILS),
           suffix=st.sampled_from(SUFFIXES), op=st.sampled_from(OPERATIONS))
    def prop(target, suffix, op):
        def body(h):
            assert h.make("symlink", "t", target)
            assert h.make("symlink", "a/t", target)
            for path in ("t" + suffix, "a/t" + suffix):
                h.check(op, *_args(op, path))
        _fresh(configs, body)
    prop()


def run_trees(configs: Sequence[Config], settings_: settings) -> None:
    """trees(): a generated tree built with corral.testing.build_tree in every
    world, then one operation on a generated path."""
    path_s = paths(POOL, absolute_prefixes=ABSOLUTE_PREFIXES)

    @settings_
    @given(tree=trees(POOL, absolute=ABSOLUTE_TARGETS, climb_tails=CLIMB_TAILS),
           op=st.sampled_from(OPERATIONS), args=st.tuples(path_s, path_s))
    def prop(tree, op, args):
        h = Harness(configs)
        try:
            h.build(tree)
            h.check(op, *args[:op.arity])
            h.check_invariants()
        finally:
            h.close()
    prop()


PROPERTIES = {"paths": run_paths, "components": run_components, "names": run_names,
              "symlink_targets": run_symlink_targets, "trees": run_trees}
