"""Benchmark: ``read_file`` of a 200-line file through ``Toolbox.call``.

Calls per second, against a plain Python read of the same file in the same
run: ``open`` + ``read`` + ``hashlib.sha256`` + ``decode().split("\\n")``
(no containment, no window, no numbering).  Many short rounds alternate
between the variants (in a rotating order), so each sees the same conditions
on a shared machine; the median and the best round are reported, by the wall clock and by this
process's CPU time (the best round, as ``timeit`` advises, is the one least
disturbed by other work).

    .venv/bin/python benchmarks/bench_tools_read.py [--calls 2000] [--rounds 30]

Not a test: it asserts nothing.  Target (issue 4): at most 2x the plain read.
Also shown, for information: the same call with an ``authorize`` callback and
deny rules (each adds its own checks), and with the openat2 fast path off.
"""

from __future__ import annotations

import argparse
import hashlib
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Callable

from _common import Record, interleave, record
from corral.contained import Root
from corral.tools import Toolbox


def make_file(directory: Path) -> Path:
    """200 lines that look like Python source (about 8 KB)."""
    rows = []
    for n in range(200):
        indent = "    " * (n % 3)
        rows.append(f"{indent}value_{n} = compute(alpha={n}, beta='text {n}')  # line {n}")
    path = directory / "src" / "module.py"
    path.parent.mkdir(parents=True)
    path.write_text("\n".join(rows) + "\n")
    return path


def per_second(fn: Callable[[], object], calls: int) -> tuple[float, float]:
    """Calls per second by the wall clock, and by this process's CPU time
    (user + system; steadier when other work shares the cores)."""
    cpu = time.process_time()
    start = time.perf_counter()
    for _ in range(calls):
        fn()
    wall = time.perf_counter() - start
    return calls / wall, calls / (time.process_time() - cpu)


PLAIN = "plain read+sha256+split"
OURS = "Toolbox.call read_file"


def measure(calls: int, rounds: int) -> dict[str, Any]:
    """Calls per second of each variant, one sample per round by the wall
    clock (``wall``) and by this process's CPU time (``cpu``); the file's
    size, the backend and the measured root's fast-path counters."""
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp)
        path = make_file(base)
        host_path = str(path)
        args = {"path": "src/module.py"}

        def plain() -> object:
            with open(host_path, "rb") as f:
                data = f.read()
            return hashlib.sha256(data).hexdigest(), data.decode("utf-8").split("\n")

        toolbox = Toolbox(base)
        guarded = Toolbox(base, authorize=lambda request: True, deny=[".env", ".git/**"])
        walk = Toolbox(Root(base, fast_path=False))
        size = path.stat().st_size
        check = toolbox.call("read_file", args)
        assert check["ok"] and check["totalLines"] == 200, check
        assert check["sha256"] == hashlib.sha256(path.read_bytes()).hexdigest()

        variants: dict[str, Callable[[], object]] = {
            PLAIN: plain,
            OURS: lambda: toolbox.call("read_file", args),
            "  + authorize + deny rules": lambda: guarded.call("read_file", args),
            "  walk (openat2 off)": lambda: walk.call("read_file", args),
        }
        cpu_results: dict[str, list[float]] = {name: [] for name in variants}
        for fn in variants.values():  # warm up
            per_second(fn, calls // 10)

        def runner(name: str, fn: Callable[[], object]) -> Callable[[], float]:
            def run() -> float:
                wall, cpu = per_second(fn, calls)
                cpu_results[name].append(cpu)
                return wall
            return run
        results = interleave({name: runner(name, fn) for name, fn in variants.items()}, rounds)
    return {"wall": results, "cpu": cpu_results, "size": size,
            "backend": toolbox.root.backend.name, "stats": toolbox.root.stats}


def collect(quick: bool = False) -> list[Record]:
    """The figures as records (for run.py): seconds per call, against the plain read."""
    calls, rounds = (200, 3) if quick else (1000, 15)
    measured = measure(calls, rounds)
    wall, cpu = measured["wall"], measured["cpu"]
    per_call = {name: [1 / rate for rate in rates] for name, rates in wall.items()}
    base = f"read_file: {PLAIN}"
    records = [record("tools", base, per_call[PLAIN], unit="us", scale=1e6)]
    for name, values in per_call.items():
        if name == PLAIN:
            continue
        label = f"read_file: {OURS if name == OURS else 'Toolbox.call ' + name.strip()}"
        records.append(record(
            "tools", label, values, unit="us", scale=1e6,
            baseline=base, base_values=per_call[PLAIN],
            target=("<=", 2.0) if name == OURS else None,
            source="issue 4" if name == OURS else None,
            note=f"{statistics.median(cpu[PLAIN]) / statistics.median(cpu[name]):.2f}x by "
                 "this process's CPU time (steadier when the machine is busy)"))
    return records


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--calls", type=int, default=2000, help="calls per round")
    parser.add_argument("--rounds", type=int, default=30)
    options = parser.parse_args()

    measured = measure(options.calls, options.rounds)
    results, cpu_results = measured["wall"], measured["cpu"]
    print(f"read_file of a 200-line file ({measured['size']} bytes), "
          f"{options.calls} calls x {options.rounds} rounds, Python "
          f"{sys.version.split()[0]}, backend {measured['backend']}")
    plain_name = PLAIN
    for title, table in (("wall clock", results), ("CPU time of this process", cpu_results)):
        baseline = statistics.median(table[plain_name])
        print(f"\n{title}")
        print(f"{'variant':32} {'calls/s (median)':>17} {'min':>9} {'max':>9} "
              f"{'time vs plain':>14}")
        for name, values in table.items():
            median = statistics.median(values)
            print(f"{name:32} {median:17,.0f} {min(values):9,.0f} {max(values):9,.0f} "
                  f"{baseline / median:13.2f}x")
    print(f"\nfast-path counters of the measured root: {measured['stats']} "
          "(EAGAIN: a rename somewhere on the system made openat2 retry)")
    for title, table in (("wall clock", results), ("CPU time", cpu_results)):
        ours = table[OURS]
        median = statistics.median(table[plain_name]) / statistics.median(ours)
        best = max(table[plain_name]) / max(ours)
        print(f"Toolbox.call read_file takes {median:.2f}x (median) / {best:.2f}x (best round) "
              f"the time of the plain read by {title} (target <= 2x)")


if __name__ == "__main__":
    main()
