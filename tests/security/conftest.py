"""Security suite: profiles live in ``sec_settings.py``; this prints the race
statistics (``test_races.py``) in the terminal summary of every run."""

from __future__ import annotations

import json
import shutil
import tempfile

import pytest

from sec_settings import RACE_REPORT, TMP_BASE


@pytest.fixture
def sec_tmp():
    """A fresh directory under the suite's tree base (``sec_settings.TMP_BASE``:
    tmpfs where present), removed afterwards."""
    path = tempfile.mkdtemp(prefix="corral-sec-", dir=TMP_BASE)
    yield path
    shutil.rmtree(path, ignore_errors=True)


def pytest_terminal_summary(terminalreporter):
    if not RACE_REPORT:
        return
    terminalreporter.section("corral race statistics")
    for row in RACE_REPORT:
        terminalreporter.write_line(json.dumps(row, sort_keys=True))
