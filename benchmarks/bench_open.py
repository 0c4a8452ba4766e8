"""Root.open + read + close of a 4 KiB file, against plain open() and
os.open of the same absolute path, at depths 1, 5 and 10, for every backend
and path present.

    python benchmarks/bench_open.py [--batch N] [--rounds R] [--clock cpu|wall] [--json]

Depth d means the file is the d-th component (``d1/.../d{d-1}/f``).  Each
round times a batch of each candidate and of both baselines back to back
(in a rotating order), so drift on a busy machine hits them alike; a
figure is the median of the rounds, and a ratio is a median against the
median of a baseline measured in the same run.  The clock is this thread's
CPU time by default (``--clock wall`` for ``perf_counter``): on a shared
machine the wall clock also counts the time other processes held the CPU,
which the CPU clock does not, while the system calls (the kernel's part of
every candidate and baseline) count in both.

Baselines: ``open()`` is the builtin, ``with open(path, "rb") as f:
f.read()``; ``os.open`` is ``os.open`` + ``os.read`` + ``os.close``, the
cheapest unprotected way to read a file, which Root.open + ``os.read`` +
``os.close`` is closest to.  Targets (issue 18): native openat2 <= 1.3 x
``os.open``; the walk <= 1 + 0.6 x depth of ``open()``; the os backend's
openat2 (ctypes) <= 1.3 x ``open()``.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from typing import Callable

from _common import Record, interleave, record, time_batch
from corral.contained import Root, available_backends, backend_by_name

DEPTHS = (1, 5, 10)
SIZE = 4096


def _make_tree(base: str) -> dict[int, str]:
    """The file at each depth, root-relative."""
    paths = {}
    for depth in DEPTHS:
        rel = "/".join([f"d{depth}-{i}" for i in range(1, depth)] + ["f"])
        full = os.path.join(base, rel)
        os.makedirs(os.path.dirname(full), exist_ok=True)
        with open(full, "wb") as f:
            f.write(os.urandom(SIZE))
        paths[depth] = rel
    return paths


def _candidates(base: str) -> list[tuple[str, Root]]:
    roots = []
    for name in available_backends():
        backend = backend_by_name(name)
        if backend.has_openat2:
            roots.append((f"{name}-openat2", Root(base, backend=backend, fast_path=True)))
        roots.append((f"{name}-walk", Root(base, backend=backend, fast_path=False)))
    return roots


def target_for(label: str, depth: int) -> tuple[str, float]:
    """The baseline a candidate is held to and the most it may take, as a
    multiple of that baseline (issue 18)."""
    if label == "native-openat2":
        return "os.open", 1.3
    if label.endswith("openat2"):
        return "open()", 1.3
    return "open()", 1 + 0.6 * depth


def cpu_batch(fn: Callable[[str], object], arg: str, batch: int) -> float:
    """CPU seconds of this thread per call of ``fn(arg)`` over one batch."""
    clock = time.thread_time
    start = clock()
    for _ in range(batch):
        fn(arg)
    return (clock() - start) / batch


def measure(batch: int, rounds: int, clock: str = "cpu"
            ) -> tuple[dict[int, dict[str, list[float]]], list[str]]:
    """Seconds per call, one sample per round, per depth and runner (the two
    baselines and every candidate); and the candidates' labels."""
    timer = cpu_batch if clock == "cpu" else time_batch
    read, close, osopen = os.read, os.close, os.open
    rdonly = os.O_RDONLY | os.O_CLOEXEC

    def builtin_open(path: str) -> None:
        with open(path, "rb") as f:
            f.read()

    def os_open(path: str) -> None:
        fd = osopen(path, rdonly)
        read(fd, 65536)
        close(fd)

    with tempfile.TemporaryDirectory(prefix="corral-bench-") as tmp:
        base = os.path.realpath(tmp)
        paths = _make_tree(base)
        candidates = _candidates(base)

        def root_reader(root: Root):
            ropen = root.open

            def run(rel: str) -> None:
                fd = ropen(rel)
                read(fd, 65536)
                close(fd)
            return run

        runners = [("open()", builtin_open, True), ("os.open", os_open, True)]
        runners += [(label, root_reader(root), False) for label, root in candidates]
        samples: dict[int, dict[str, list[float]]] = {}
        for depth in DEPTHS:
            rel = paths[depth]
            absolute = os.path.join(base, rel)
            for label, fn, is_abs in runners:  # warm up (dentry cache, probes)
                timer(fn, absolute if is_abs else rel, 200)
            samples[depth] = interleave(
                {label: (lambda fn=fn, arg=absolute if is_abs else rel:
                         timer(fn, arg, batch))
                 for label, fn, is_abs in runners}, rounds)
        for _, root in candidates:
            root.close()
    return samples, [label for label, _ in candidates]


def collect(quick: bool = False) -> list[Record]:
    """The figures as records (for run.py): each candidate against open()."""
    batch, rounds = (200, 3) if quick else (1000, 21)
    samples, labels = measure(batch, rounds)
    records = []
    for base in ("open()", "os.open"):
        for depth in DEPTHS:
            records.append(record("open", f"{base} depth {depth}", samples[depth][base],
                                  unit="us", scale=1e6))
    for label in labels:
        for depth in DEPTHS:
            s = samples[depth]
            base, limit = target_for(label, depth)
            other = "open()" if base == "os.open" else "os.open"
            vs_other = statistics.median(s[label]) / statistics.median(s[other])
            records.append(record(
                "open", f"Root.open {label} depth {depth}", s[label], unit="us", scale=1e6,
                baseline=f"{base} depth {depth}", base_values=s[base],
                target=("<=", limit), source="issue 18",
                note=f"{vs_other:.2f}x {other}; CPU time"))
    return records


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--batch", type=int, default=2000, help="calls per timed batch")
    parser.add_argument("--rounds", type=int, default=21, help="timed rounds per figure")
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    parser.add_argument("--clock", choices=("cpu", "wall"), default="cpu",
                        help="thread CPU time (default) or perf_counter")
    args = parser.parse_args(argv)

    samples, labels = measure(args.batch, args.rounds, args.clock)
    results = {depth: {label: statistics.median(v) for label, v in runs.items()}
               for depth, runs in samples.items()}
    if args.json:
        json.dump({"python": sys.version.split()[0], "platform": sys.platform,
                   "us_per_call": {d: {k: v * 1e6 for k, v in r.items()}
                                   for d, r in results.items()}}, sys.stdout, indent=2)
        print()
        return 0
    print(f"Root.open + read + close of a {SIZE}-byte file vs the same absolute path "
          f"(median of {args.rounds} rounds x {args.batch} calls, {args.clock} clock; Python "
          f"{sys.version.split()[0]}, {sys.platform})")
    print()
    print(f"{'depth':>5}  {'open()':>9}  {'os.open':>9}")
    for depth in DEPTHS:
        r = results[depth]
        print(f"{depth:>5}  {r['open()'] * 1e6:7.2f}us  {r['os.open'] * 1e6:7.2f}us")
    print()
    print(f"{'path':<16}{'depth':>6}{'time':>11}{'vs open()':>11}{'vs os.open':>12}  target")
    for label in labels:
        for depth in DEPTHS:
            r = results[depth]
            ratio, ratio_os = r[label] / r["open()"], r[label] / r["os.open"]
            base, limit = target_for(label, depth)
            mark = "ok" if r[label] / r[base] <= limit else "OVER"
            print(f"{label:<16}{depth:>6}{r[label] * 1e6:9.2f}us{ratio:>11.2f}{ratio_os:>12.2f}"
                  f"  <= {limit:.2f} x {base} {mark}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
