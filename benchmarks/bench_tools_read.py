"""Benchmark: ``read_file`` of a 200-line file through ``Toolbox.call``.

Calls per second, against a plain Python read of the same file in the same
run: ``open`` + ``read`` + ``hashlib.sha256`` + ``decode().split("\\n")``
(no containment, no window, no numbering).  Many short rounds alternate
between the variants, so each sees the same conditions on a shared machine;
the median and the best round are reported, by the wall clock and by this
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
from typing import Callable

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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--calls", type=int, default=2000, help="calls per round")
    parser.add_argument("--rounds", type=int, default=30)
    options = parser.parse_args()

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
            "plain read+sha256+split": plain,
            "Toolbox.call read_file": lambda: toolbox.call("read_file", args),
            "  + authorize + deny rules": lambda: guarded.call("read_file", args),
            "  walk (openat2 off)": lambda: walk.call("read_file", args),
        }
        results: dict[str, list[float]] = {name: [] for name in variants}
        cpu_results: dict[str, list[float]] = {name: [] for name in variants}
        for fn in variants.values():  # warm up
            per_second(fn, options.calls // 10)
        for _ in range(options.rounds):
            for name, fn in variants.items():
                wall, cpu = per_second(fn, options.calls)
                results[name].append(wall)
                cpu_results[name].append(cpu)

    print(f"read_file of a 200-line file ({size} bytes), "
          f"{options.calls} calls x {options.rounds} rounds, Python "
          f"{sys.version.split()[0]}, backend {toolbox.root.backend.name}")
    plain_name = "plain read+sha256+split"
    for title, table in (("wall clock", results), ("CPU time of this process", cpu_results)):
        baseline = statistics.median(table[plain_name])
        print(f"\n{title}")
        print(f"{'variant':32} {'calls/s (median)':>17} {'min':>9} {'max':>9} "
              f"{'time vs plain':>14}")
        for name, values in table.items():
            median = statistics.median(values)
            print(f"{name:32} {median:17,.0f} {min(values):9,.0f} {max(values):9,.0f} "
                  f"{baseline / median:13.2f}x")
    print(f"\nfast-path counters of the measured root: {toolbox.root.stats} "
          "(EAGAIN: a rename somewhere on the system made openat2 retry)")
    for title, table in (("wall clock", results), ("CPU time", cpu_results)):
        ours = table["Toolbox.call read_file"]
        median = statistics.median(table[plain_name]) / statistics.median(ours)
        best = max(table[plain_name]) / max(ours)
        print(f"Toolbox.call read_file takes {median:.2f}x (median) / {best:.2f}x (best round) "
              f"the time of the plain read by {title} (target <= 2x)")


if __name__ == "__main__":
    main()
