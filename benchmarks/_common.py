"""Shared by the benchmark scripts: interleaved timing rounds, median/min/max,
result records, and the peak RSS of a child process.

A *record* is one measured figure as a plain dict (JSON-able), the unit of
exchange between the scripts' ``collect()`` and ``run.py``:

``group``, ``case``; ``median``, ``min``, ``max`` (in ``unit``) over
``rounds``; ``higher_is_better`` (calls per second) or not (times);
``baseline`` (the case it is compared against, measured in the same run),
``ratio`` (median over the baseline's median; for rates, ours over theirs);
``target`` (e.g. ``"<= 1.30"``), ``source`` (the issue it comes from),
``met`` (``True``/``False``, ``None`` without a target); optional ``rss_mb``,
``count`` (results found, which must agree between tools doing the same
job), ``note``, and ``skipped`` (why nothing was measured).
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import tempfile
import time
from typing import Any, Callable, Sequence

Record = dict[str, Any]


# -- timing ------------------------------------------------------------------

def time_batch(fn: Callable[[Any], object], arg: Any, batch: int) -> float:
    """Seconds per call of ``fn(arg)``, over one batch of ``batch`` calls."""
    clock = time.perf_counter
    start = clock()
    for _ in range(batch):
        fn(arg)
    return (clock() - start) / batch


def time_calls(fn: Callable[[], object], batch: int) -> float:
    """Seconds per call of ``fn()``, over one batch of ``batch`` calls."""
    clock = time.perf_counter
    start = clock()
    for _ in range(batch):
        fn()
    return (clock() - start) / batch


def time_for(fn: Callable[[], object], seconds: float = 0.03, least: int = 3) -> float:
    """Seconds per call of ``fn()``, calling it for about ``seconds`` (and at
    least ``least`` times): a sample that stays short when the machine slows
    down, for operations of a millisecond or so (the clock is read after
    each call)."""
    clock = time.perf_counter
    calls = 0
    start = clock()
    while True:
        fn()
        calls += 1
        elapsed = clock() - start
        if calls >= least and elapsed >= seconds:
            return elapsed / calls


def interleave(runners: dict[Any, Callable[[], float]], rounds: int) -> dict[Any, list[float]]:
    """Call every runner once per round, the order rotating each round, so a
    slow spell on a shared machine hits every case alike.  Each runner
    returns its own sample (it times only what it measures); the samples
    come back per runner, in round order."""
    names = list(runners)
    samples: dict[Any, list[float]] = {name: [] for name in names}
    for r in range(rounds):
        k = r % len(names)
        for name in names[k:] + names[:k]:
            samples[name].append(runners[name]())
    return samples


# -- records -----------------------------------------------------------------

def check(ratio: float | None, target: tuple[str, float] | None) -> bool | None:
    if ratio is None or target is None:
        return None
    op, bound = target
    return ratio <= bound if op == "<=" else ratio >= bound


def record(group: str, case: str, values: Sequence[float], *, unit: str, scale: float = 1.0,
           baseline: str | None = None, base_values: Sequence[float] | None = None,
           target: tuple[str, float] | None = None, source: str | None = None,
           higher_is_better: bool = False, **extra: Any) -> Record:
    """One figure: ``values`` are raw samples (seconds, or calls per second),
    shown times ``scale`` in ``unit``; the ratio is of medians."""
    median = statistics.median(values)
    ratio = None
    if base_values:
        base = statistics.median(base_values)
        ratio = median / base if base else None
    out: Record = {
        "group": group, "case": case, "unit": unit, "rounds": len(values),
        "median": median * scale, "min": min(values) * scale, "max": max(values) * scale,
        "higher_is_better": higher_is_better, "baseline": baseline, "ratio": ratio,
        "target": f"{target[0]} {target[1]:.2f}" if target else None, "source": source,
        "met": check(ratio, target),
    }
    out.update(extra)
    return out


def skipped(group: str, case: str, why: str, *, target: tuple[str, float] | None = None,
            source: str | None = None) -> Record:
    """A figure that could not be measured here, and why."""
    return {"group": group, "case": case, "skipped": why, "ratio": None, "met": None,
            "target": f"{target[0]} {target[1]:.2f}" if target else None, "source": source}


# -- child processes and their peak RSS ----------------------------------------

GNU_TIME = "/usr/bin/time"
_gnu_time: bool | None = None


def have_gnu_time() -> bool:
    """GNU time (``-f %M``) reports the peak RSS of exactly its child."""
    global _gnu_time
    if _gnu_time is None:
        try:
            done = subprocess.run([GNU_TIME, "-f", "%M", "true"], capture_output=True, timeout=10)
            _gnu_time = done.returncode == 0 and done.stderr.strip().isdigit()
        except (OSError, subprocess.SubprocessError):
            _gnu_time = False
    return _gnu_time


def spawn(args: list[str], ok_codes: Sequence[int] = (0,)) -> tuple[float, int, bytes]:
    """Run ``args``; return (wall seconds, peak RSS in KiB, stdout).

    A child's ``ru_maxrss`` starts at its parent's RSS when forked (Linux
    keeps the larger across exec), so it is read through GNU time, whose own
    small RSS is the floor, when it is installed.  Without it the figure is
    ``wait4``'s and only an upper bound (``have_gnu_time()`` says which)."""
    wrap = have_gnu_time()
    with tempfile.NamedTemporaryFile("r") as report_file:
        cmd = [GNU_TIME, "-f", "%M", "-o", report_file.name, *args] if wrap else args
        started = time.perf_counter()
        proc = subprocess.Popen(cmd, stdout=subprocess.PIPE)
        out = proc.stdout.read()  # type: ignore[union-attr]
        _, status, usage = os.wait4(proc.pid, 0)
        seconds = time.perf_counter() - started
        proc.returncode = os.waitstatus_to_exitcode(status)  # reaped: keep Popen quiet
        report = report_file.read().strip().splitlines()
    code = proc.returncode
    if wrap and report and report[0].startswith("Command exited with non-zero status"):
        code = int(report[0].split()[-1])
        report = report[1:]
    if wrap and report:
        rss = int(report[-1])
    else:  # macOS gives bytes, Linux KiB
        rss = usage.ru_maxrss // 1024 if sys.platform == "darwin" else usage.ru_maxrss
    if code not in ok_codes:
        raise RuntimeError(f"{args[:3]}... failed (exit status {code})")
    return seconds, rss, out
