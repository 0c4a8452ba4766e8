"""The state machine: grow a hostile tree, check every operation after every step.

:func:`make_machine` builds a ``RuleBasedStateMachine`` class for a list of
configs (the real backends, or a deliberately broken resolver in
``test_meta.py``) and a list of operations (:data:`helpers.harness.OPERATIONS`;
tool-level operations can be appended later).  Rules either add to the tree
(directories, files, FIFOs, symlinks from
:func:`corral.testing.strategies.symlink_targets`, links to existing entries,
chains of 2/39/40/41 links) or run one operation on generated paths through
:meth:`helpers.harness.Harness.check`; after every step an invariant checks the
outside and that the worlds are still identical.
"""

from __future__ import annotations

from typing import Sequence

from hypothesis import strategies as st
from hypothesis.stateful import (Bundle, RuleBasedStateMachine, initialize, invariant, multiple,
                                 rule)

from corral.testing.strategies import DEFAULT_POOL, names, paths, symlink_targets, weighted
from .harness import OPERATIONS, TOKEN, Config, Harness, Operation, Totals

POOL = DEFAULT_POOL
# absolute things that exist: the root itself, its prefix-sharing sibling,
# the secret one level further out
ABSOLUTE_TARGETS = (f"{TOKEN}/ws", f"{TOKEN}/ws-evil", f"{TOKEN}/ws-evil/a", f"{TOKEN}/..")
ABSOLUTE_PREFIXES = (f"{TOKEN}/ws/", f"{TOKEN}/ws-evil/", f"{TOKEN}/")
CLIMB_TAILS = ("ws-evil", "ws-evil/secret", "ws-evil/a", "ws", "ws/a", "secret")

SEED_DIRS = ("a", "a/b", "b")
# pool names, so that generated paths meet them: a FIFO at the top ("é"), a
# link in and links out, a self-loop ("a/b/A")
SEED_ENTRIES = (("file", "f", ""), ("file", "a/f", ""), ("fifo", "a/b/fifo", ""),
                ("fifo", "\u00e9", ""), ("symlink", "l", "a"),
                ("symlink", "a/l", "../../ws-evil"), ("symlink", "b/l", "../a/b/"),
                ("symlink", "b/A", f"{TOKEN}/ws-evil"), ("symlink", "a/b/A", "A"))


def _join(parent: str, name: str) -> str:
    return f"{parent}/{name}" if parent else name


def make_machine(configs: Sequence[Config], totals: Totals,
                 operations: Sequence[Operation] = OPERATIONS) -> type[RuleBasedStateMachine]:
    """A machine class checking ``operations`` on ``configs``; ``totals``
    collects the outcome mix over every example it runs."""

    class ContainedMachine(RuleBasedStateMachine):
        dirs = Bundle("dirs")
        entries = Bundle("entries")
        fifos = Bundle("fifos")  # also in entries; apart so that operations meet them

        def __init__(self) -> None:
            super().__init__()
            self.h = Harness(configs, totals)
            self.serial = 0
            totals.examples += 1
            for path in SEED_DIRS:
                assert self.h.make("dir", path)
            for kind, path, target in SEED_ENTRIES:
                assert self.h.make(kind, path, target)

        @initialize(target=dirs)
        def seed_dirs(self):
            return multiple(*SEED_DIRS)

        @initialize(target=entries)
        def seed_entries(self):
            return multiple(*SEED_DIRS, *(path for _, path, _ in SEED_ENTRIES))

        @initialize(target=fifos)
        def seed_fifos(self):
            return multiple(*(path for kind, path, _ in SEED_ENTRIES if kind == "fifo"))

        # -- growing the tree ----------------------------------------------------
        @rule(target=dirs, parent=st.just("") | dirs, name=names(POOL))
        def mkdir(self, parent, name):
            path = _join(parent, name)
            return path if self.h.make("dir", path) else multiple()

        @rule(target=entries, parent=st.just("") | dirs, name=names(POOL))
        def touch(self, parent, name):
            path = _join(parent, name)
            return path if self.h.make("file", path) else multiple()

        @rule(targets=(entries, fifos), parent=st.just("") | dirs, name=names(POOL))
        def fifo(self, parent, name):
            path = _join(parent, name)
            return path if self.h.make("fifo", path) else multiple()

        @rule(target=entries, parent=st.just("") | dirs, name=names(POOL),
              link_to=symlink_targets(POOL, absolute=ABSOLUTE_TARGETS, climb_tails=CLIMB_TAILS))
        def symlink(self, parent, name, link_to):
            path = _join(parent, name)
            return path if self.h.make("symlink", path, link_to) else multiple()

        @rule(target=entries, parent=st.just("") | dirs, name=names(POOL), to=entries,
              trailing=st.sampled_from(("", "", "/", "/.")))
        def symlink_to_entry(self, parent, name, to, trailing):
            # a relative link to something that exists (or existed): "ok" answers
            depth = parent.count("/") + 1 if parent else 0
            path = _join(parent, name)
            made = self.h.make("symlink", path, "../" * depth + to + trailing)
            return path if made else multiple()

        @rule(target=entries, length=st.sampled_from((2, 39, 40, 41)),
              end=st.sampled_from(("a", "a/", "f", "../ws-evil", f"{TOKEN}/ws-evil", "a/b/fifo")))
        def chain(self, length, end):
            # 40 links are followed; the 41st is ELOOP (the kernel's MAXSYMLINKS)
            self.serial += 1
            link_names = [f"c{self.serial}_{i}" for i in range(length)]
            for i, link in enumerate(link_names):
                nxt = link_names[i + 1] if i + 1 < length else end
                assert self.h.make("symlink", link, nxt)
            return link_names[0]

        @invariant()
        def nothing_outside_changed(self):
            totals.steps += 1
            self.h.check_invariants()

        def teardown(self):
            self.h.close()

    # generated paths, and (since those are rarely good for creating or
    # moving) a name in a directory that exists, or an entry that exists,
    # each with a suffix
    suffix_s = st.sampled_from(("", "", "", "/", "/.", "//"))
    fresh_s = st.tuples(st.just("") | ContainedMachine.dirs, names(POOL), suffix_s).map(
        lambda t: _join(t[0], t[1]) + t[2])
    existing_s = st.tuples(ContainedMachine.entries, suffix_s).map(lambda t: t[0] + t[1])
    path_s = weighted(
        (2, paths(POOL, absolute_prefixes=ABSOLUTE_PREFIXES, prefixes=ContainedMachine.entries)),
        (1, fresh_s), (1, existing_s))

    def op_rule(op: Operation):
        if op.arity == 1:
            def run(self, path):
                self.h.check(op, path)
        else:
            def run(self, src, dst):
                self.h.check(op, src, dst)
        # the name shows in a failing example's replay: op_stat(path='a/')
        run.__name__ = run.__qualname__ = f"op_{op.name}"
        return rule(path=path_s)(run) if op.arity == 1 else rule(src=path_s, dst=path_s)(run)

    def on_fifo(self, op, fifo, suffix):
        # FIFOs must be refused, never waited on (THREATS row 12); generated
        # paths seldom name one
        self.h.check(op, *((fifo + suffix,) if op.arity == 1 else (fifo + suffix, "moved")))

    ContainedMachine.op_on_fifo = rule(
        op=st.sampled_from(list(operations)), fifo=ContainedMachine.fifos,
        suffix=st.sampled_from(("", "", "/", "/.")))(on_fifo)

    for op in operations:
        setattr(ContainedMachine, f"op_{op.name}", op_rule(op))
    return ContainedMachine
