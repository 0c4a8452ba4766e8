"""The checks catch deliberately broken resolvers, so a green run means something.

Every strategy property (helpers/properties.py) and the state machine are run
against the resolvers of helpers/broken.py and must FAIL with an
AssertionError from the harness.  Settings are derandomized (the same
examples every run) and skip shrinking: a failure is all that is asked.
"""

from __future__ import annotations

import pytest
from hypothesis import Phase, settings
from hypothesis.stateful import run_state_machine_as_test

from .helpers.broken import BROKEN, NAIVE, CheckThenUseRoot, DotDotWalkRoot, NaiveRoot
from .helpers.race import operations, run_scenario
from .helpers import harness
from .helpers.harness import ORACLE, Totals
from .helpers.machine import make_machine
from .helpers.properties import PROPERTIES

pytestmark = pytest.mark.skipif(not ORACLE, reason="the broken resolvers are caught by the "
                                "kernel oracle, which needs Linux openat2")

META = settings(max_examples=300, stateful_step_count=30, derandomize=True, database=None,
                deadline=None, phases=[Phase.explicit, Phase.generate],
                report_multiple_bugs=False)

# strategy -> the broken resolvers it must catch
CATCHES = {
    "paths": ["naive", "clamp", "trailing"],
    "components": ["naive", "clamp", "trailing"],
    "names": ["naive", "trailing"],
    "symlink_targets": ["naive", "clamp"],
    "trees": ["naive", "clamp"],
}


@pytest.mark.parametrize("strategy,broken", [(s, b) for s, bs in CATCHES.items() for b in bs])
def test_strategy_catches_broken_resolver(strategy, broken):
    with BROKEN[broken]() as config:
        with pytest.raises(AssertionError):
            PROPERTIES[strategy]([config], META)


@pytest.mark.parametrize("broken", sorted(BROKEN))
def test_state_machine_catches_broken_resolver(broken):
    with BROKEN[broken]() as config:
        with pytest.raises(AssertionError):
            run_state_machine_as_test(make_machine([config], Totals()), settings=META)


@pytest.mark.filterwarnings("ignore:Duplicate name")
@pytest.mark.parametrize("fmt", ["tar", "zip"])
def test_archive_checks_catch_naive_resolver(tmp_path, fmt):
    from .test_archives import hostile_extraction, make_site
    base = tmp_path / "sandbox"  # NaiveRoot's guard keeps it inside tmp_path
    base.mkdir()
    with pytest.raises(AssertionError):
        hostile_extraction(NaiveRoot, make_site(base), fmt)


@pytest.mark.parametrize("scenario,broken", [("exchange", CheckThenUseRoot),
                                             ("move_out", DotDotWalkRoot)])
def test_race_harness_catches_broken_resolver(sec_tmp, scenario, broken):
    """Under the same attacker, a check-then-use resolver reads through the
    exchanged link, and a walk that hands ``..`` to the kernel climbs out of
    the moved directory: the harness reports the escape (within a few
    hundred iterations here; the bound is generous)."""
    reads = [op for op in operations(scenario) if op.name == "open_read"]
    with pytest.raises(AssertionError, match="ESCAPE"):
        run_scenario(scenario, sec_tmp, broken, 200_000, ops=reads)


def test_outside_snapshot_alone_catches_naive_escape(monkeypatch):
    """Without the kernel oracle (as on macOS), the outside snapshot and the
    outside-inode check still catch the naive resolver, by an escape."""
    monkeypatch.setattr(harness, "ORACLE", False)
    with pytest.raises(AssertionError, match="ESCAPE"):
        run_state_machine_as_test(make_machine([NAIVE], Totals()), settings=META)
