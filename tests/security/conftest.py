"""Security suite: profiles live in ``helpers/settings.py``; the race statistics
(``test_races.py``) go to a file, named by one line of the terminal summary:
``$CORRAL_RACE_STATS`` (JSON lines, appended: scripts/test.sh collects every
lane there), else ``race-stats.jsonl`` in pytest's base temporary directory."""

from __future__ import annotations

import json
import os
import resource
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from corral.tools._runtime.view import freshness

from .helpers.settings import RACE_REPORT, TMP_BASE


@pytest.fixture(params=["watch", "stat"])
def watching(request, monkeypatch) -> str:
    """Toolboxes opened under the process's kernel watch (where the kernel
    has one) or with none to be had (each followed place ``stat``-ed per call)."""
    if request.param == "stat":
        none = freshness._KernelWatch()
        none.tried = True  # as where no watch can be had
        monkeypatch.setattr(freshness, "_KERNEL", none)
    return request.param


@pytest.fixture
def root_alone_followed(monkeypatch) -> None:
    """The view follows one directory (the root): the rest lie beyond."""
    monkeypatch.setattr(freshness, "MAX_WATCHED", 1)
    monkeypatch.setattr(freshness, "MAX_STAMPED", 1)


@pytest.fixture
def sec_tmp():
    """A fresh directory under the suite's tree base (``helpers.settings.TMP_BASE``:
    tmpfs where present), removed afterwards."""
    path = tempfile.mkdtemp(prefix="corral-sec-", dir=TMP_BASE)
    yield path
    shutil.rmtree(path, ignore_errors=True)


@pytest.fixture
def usual_open_file_limit() -> Iterator[None]:
    """The open-file limit a process usually has (1,024) above what this
    one holds now (a suite's worker holds many): where a call that would
    hold a descriptor per file or per level runs out."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    # 1,024 more than this process holds now (a suite's worker holds many)
    held = len(os.listdir("/proc/self/fd")) if os.path.isdir("/proc/self/fd") else 0
    resource.setrlimit(resource.RLIMIT_NOFILE, (min(held + 1024, hard), hard))
    try:
        yield
    finally:
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))


def _race_stats_path() -> Path:
    named = os.environ.get("CORRAL_RACE_STATS")
    return Path(named) if named else Path(tempfile.gettempdir()) / "corral-race-stats.jsonl"


def pytest_sessionfinish(session):
    # runs in each xdist worker too, where the race tests ran: append there
    if RACE_REPORT:
        with _race_stats_path().open("a", encoding="utf-8") as out:
            out.writelines(json.dumps(row, sort_keys=True) + "\n" for row in RACE_REPORT)


def pytest_terminal_summary(terminalreporter):
    path = _race_stats_path()
    if path.exists() and path.stat().st_size:
        terminalreporter.write_line(f"corral race statistics: {path}")
