"""The Hypothesis state machine over real trees, against the kernel oracle.

See ``helpers/machine.py`` (rules) and ``helpers/harness.py`` (checks).  One run of
the machine covers every backend config at once: each step runs the
operation on every config and compares all of them with the kernel.
"""

from __future__ import annotations

import errno

import pytest
from hypothesis import settings
from hypothesis.stateful import run_state_machine_as_test

from .helpers.harness import ORACLE, Totals, corral_configs
from .helpers.machine import make_machine
from .helpers.settings import MIN_STEPS, PROFILE

# what the kernel answered must include each of these over a run: a run that
# never reached them (say, every path ENOENT) tested nothing
REQUIRED_OUTCOMES = {"ok"} | {errno.errorcode[e] for e in (
    errno.ENOENT, errno.EXDEV, errno.ELOOP, errno.ENOTDIR, errno.EEXIST, errno.EISDIR,
    errno.ENAMETOOLONG, errno.EINVAL, errno.EOPNOTSUPP)}


@pytest.mark.every_config
def test_state_machine_against_kernel():
    totals = Totals()
    machine = make_machine(corral_configs(), totals)
    run_state_machine_as_test(machine, settings=settings(PROFILE))
    print(f"\nstate machine: {totals.examples} examples, {totals.steps} steps, "
          f"outcomes {dict(totals.outcomes.most_common())}\nper operation: "
          f"{dict(sorted(totals.ops.items()))}")
    assert totals.steps >= MIN_STEPS
    if ORACLE:
        missing = REQUIRED_OUTCOMES - set(totals.outcomes)
        assert not missing, f"outcome mix degenerate: never saw {missing}: {totals.outcomes}"
    # every operation must have succeeded at least once and failed at least once
    for name in {key.split(":")[0] for key in totals.ops}:
        kinds = {key.split(":")[1] for key in totals.ops if key.startswith(name + ":")}
        assert "ok" in kinds and len(kinds) > 1, f"{name} only ever gave {kinds}"
