"""Fixtures of the contained suite.

No test may hang (a FIFO opened the wrong way blocks forever), so each one
runs under an alarm; ``scratch`` is a fast empty directory for the tables.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import tempfile
from pathlib import Path

import pytest

HANG_SECONDS = 20


@pytest.fixture(autouse=True)
def no_hang():
    def hung(signum, frame):
        raise TimeoutError(f"a call blocked for more than {HANG_SECONDS} s")

    previous = signal.signal(signal.SIGALRM, hung)
    signal.alarm(HANG_SECONDS)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


def _scratch_base() -> str | None:
    """Where the tables build their many small trees: ``CORRAL_TEST_SCRATCH``
    if set, else tmpfs (``/dev/shm``) when it is there and writable.  On a
    journaling disk each tiny tree costs milliseconds of metadata writes and
    the tables build tens of thousands; tmpfs is as real a filesystem to the
    code under test.  ``None``: use pytest's ``tmp_path``."""
    forced = os.environ.get("CORRAL_TEST_SCRATCH")
    if forced:
        return forced
    if os.path.isdir("/dev/shm") and os.access("/dev/shm", os.W_OK | os.X_OK):
        return "/dev/shm"
    return None


@pytest.fixture
def scratch(request):
    """A fresh empty directory, removed afterwards (see _scratch_base)."""
    base = _scratch_base()
    if base is None:
        yield request.getfixturevalue("tmp_path")
        return
    path = Path(tempfile.mkdtemp(prefix="corral-test-", dir=base))
    try:
        yield path
    finally:
        # rm is many times faster than shutil.rmtree on these thousands of
        # tiny entries; rmtree stays as the fallback
        if subprocess.run(["rm", "-rf", "--", str(path)], check=False).returncode:
            shutil.rmtree(path, ignore_errors=True)
