"""THREATS.md row 9: renames racing the resolver, on every backend config.

An attacker process swaps a directory with a symlink to outside
(``renameat2(RENAME_EXCHANGE)``), or moves an intermediate directory out of
the root and back, while the root opens, stats, creates, removes, mkdirs,
makedirs, renames and writes through that region (``helpers/race.py``).  Every
result is checked; at the end nothing outside may have changed.  Statistics
(outcomes, ``Root.stats`` EAGAIN/retry counters, renames done) are printed,
shown in the terminal summary and written to ``race-stats.json`` in the
pytest base temporary directory.

``CORRAL_RACE_ITERATIONS`` (default 20,000) sets iterations per operation.
"""

from __future__ import annotations

import json
import sys

import pytest

from .helpers.race import operations, run_scenario
from .helpers.settings import RACE_ITERATIONS, RACE_REPORT

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"),
                                reason="the attacker uses renameat2(RENAME_EXCHANGE)")


@pytest.mark.long
@pytest.mark.parametrize("scenario", ["exchange", "move_out"])
def test_no_escape_under_rename_races(scenario, make_root, sec_tmp, tmp_path_factory):
    config = f"{make_root.backend_name}-{'openat2' if make_root.fast_path else 'walk'}"
    report = run_scenario(scenario, sec_tmp, make_root, RACE_ITERATIONS)
    report["config"] = config
    RACE_REPORT.append(report)
    out = tmp_path_factory.getbasetemp() / "race-stats.json"
    rows = json.loads(out.read_text()) if out.exists() else []
    out.write_text(json.dumps(rows + [report], indent=1, sort_keys=True))
    print(f"\n{json.dumps(report, sort_keys=True)}")

    assert set(report["ops"]) == {op.name for op in operations(scenario)}
    assert report["renames"] > 0, "the attacker never renamed anything"
    if RACE_ITERATIONS >= 1000:
        # the race must have been met, or this tested nothing: some answers
        # differ from the race-free "ok"
        disturbed = sum(n for op in report["ops"].values()
                        for outcome, n in op["outcomes"].items() if outcome != "ok")
        eagain = sum(op.get("openat2_eagain", 0) for op in report["ops"].values())
        assert disturbed + eagain > 0, report
