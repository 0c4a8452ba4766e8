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


def _rm_rf(path: str) -> None:
    # rm is many times faster than shutil.rmtree on thousands of tiny
    # entries; rmtree stays as the fallback
    if subprocess.run(["rm", "-rf", "--", path], check=False).returncode:
        shutil.rmtree(path, ignore_errors=True)


@pytest.fixture(scope="session")
def _scratch_session():
    base = _scratch_base()
    if base is None:
        yield None
        return
    top = tempfile.mkdtemp(prefix="corral-test-", dir=base)
    state = {"top": top, "trash": os.path.join(top, "trash"), "count": 0}
    os.mkdir(state["trash"])
    try:
        yield state
    finally:
        _rm_rf(top)


@pytest.fixture
def scratch(request, _scratch_session):
    """A fresh empty directory (see _scratch_base).  Used ones are moved to a
    trash directory that is emptied every 50 tests: one rm for many."""
    from .helpers.trees import unmount_all

    state = _scratch_session
    if state is None:
        try:
            yield request.getfixturevalue("tmp_path")
        finally:
            unmount_all()
        return
    state["count"] += 1
    path = Path(state["top"]) / f"t{state['count']}"
    path.mkdir()
    try:
        yield path
    finally:
        unmount_all()
        os.rename(path, os.path.join(state["trash"], path.name))
        if state["count"] % 50 == 0:
            _rm_rf(state["trash"])
            os.mkdir(state["trash"])


@pytest.fixture(scope="session")
def native_test_module():
    """The native module's C built with its test hooks, as module
    ``_corral_native_test`` (``native/_native_build.py``: ``cached_variant``,
    built once per source text).  The installed module has no hooks."""
    import importlib
    import runpy
    import sys

    # the sanitizer lane (scripts/sanitize.py) passes its own build of it
    folder = os.environ.get("CORRAL_NATIVE_TEST_MODULE_DIR")
    if not folder:
        build = runpy.run_path(str(Path(__file__).resolve().parents[2] / "native" /
                                   "_native_build.py"))
        folder = build["cached_variant"]("_corral_native_test")
    if folder not in sys.path:
        sys.path.insert(0, folder)
    return importlib.import_module("_corral_native_test")
