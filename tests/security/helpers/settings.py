"""Hypothesis profiles and run-size knobs of the security suite.

``CORRAL_HYPOTHESIS_PROFILE`` picks a profile (default ``ci``):

* ``ci``: every CI run; the state machine runs at least 2,000 steps in
  total (figures in ``tests/security/README.md``).
* ``nightly``: 20x the examples and longer programs, for scheduled runs.
* ``dev``: a quick smoke run while editing (not enough steps for CI's bar).

All use ``deadline=None``: file-system calls have no stable latency.  The
profiles are registered here and applied to this suite's tests explicitly
(:data:`PROFILE`), not loaded globally, so other suites keep their own
settings.  ``CORRAL_RACE_ITERATIONS`` sets the race harness's iterations per
operation (default 20,000).
"""

from __future__ import annotations

import os

from hypothesis import HealthCheck, settings

_COMMON = dict(deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                     HealthCheck.filter_too_much])

# CI explores the same examples on every run (derandomize): a red CI is a
# regression, never a coin toss, and the outcome-mix checks are stable.
# nightly draws new examples each run to find what CI's fixed set misses.
settings.register_profile("corral-ci", max_examples=200, stateful_step_count=50,
                          derandomize=True, database=None, **_COMMON)
settings.register_profile("corral-nightly", max_examples=2000, stateful_step_count=80, **_COMMON)
settings.register_profile("corral-dev", max_examples=15, stateful_step_count=20, **_COMMON)

PROFILE_NAME = os.environ.get("CORRAL_HYPOTHESIS_PROFILE", "ci").strip() or "ci"
if PROFILE_NAME not in ("ci", "nightly", "dev"):
    raise ValueError(f"CORRAL_HYPOTHESIS_PROFILE must be ci, nightly or dev, not {PROFILE_NAME!r}")
PROFILE = settings.get_profile(f"corral-{PROFILE_NAME}")

#: state-machine steps a run must reach (the CI bar is 2,000)
MIN_STEPS = {"ci": 2000, "nightly": 40000, "dev": 0}[PROFILE_NAME]

RACE_ITERATIONS = int(os.environ.get("CORRAL_RACE_ITERATIONS", "20000"))


def _tmp_base() -> str | None:
    """Where the suite makes its trees: ``CORRAL_SECURITY_TMPDIR`` if set,
    else ``/dev/shm`` (tmpfs) where present, else the system default.

    tmpfs because the suite makes and removes hundreds of thousands of
    entries: on the CI VM's ext4 (mounted with ``discard``) a ``mkdir`` or
    ``rmdir`` costs 1-3 ms, on tmpfs ~25 us.  Resolution is the VFS's, the
    same on both; set the variable to a disk directory to run there."""
    forced = os.environ.get("CORRAL_SECURITY_TMPDIR", "").strip()
    if forced:
        return forced
    shm = "/dev/shm"
    if os.path.isdir(shm) and os.access(shm, os.W_OK | os.X_OK):
        return shm
    return None


TMP_BASE = _tmp_base()

#: filled by test_races.py; printed by conftest.py at the end of the run
RACE_REPORT: list[dict] = []
