"""The core's own figures against another checkout of corral, measured
alternately in one sitting: did a change keep ``Root.makedirs``,
``Root.write_bytes``, ``Root.open`` and ``Root.extract`` as fast as they were?

    python benchmarks/bench_versions.py --old /path/to/other/.venv/bin/python \\
        [--new PYTHON] [--rounds R] [CASE ...]

Each side is a long-lived worker process, one per interpreter (each imports
its own corral: give the interpreter of the other checkout's venv); the
driver asks them for the same case in turn (old, new; then new, old in the
next round), so a busy spell on a shared machine hits both.  A worker
answers the least CPU time (``time.process_time``: the system calls'
kernel time counts, other processes' time does not) per operation over a
few batches.  Cases (all by default; spaces as ``_`` on the command line):

- ``makedirs``: ``Root.makedirs`` of 5 new levels below one directory;
- ``write LABEL DEPTH``: ``Root.write_bytes`` of 4 KiB, ``fsync=False``,
  over an existing file at depth 1, 5 or 10;
- ``open LABEL DEPTH``: ``Root.open`` + ``os.read`` + ``os.close`` of a
  4 KiB file at depth 1, 5 or 10;
- ``extract LABEL``: ``Root.extract`` of a 2,000-member tar
  (``bench_extract.make_archive``; ``--members`` for another size).

``LABEL`` is a backend and path as bench_open.py names them
(``native-openat2``, ``native-walk``, ``os-openat2``, ``os-walk``).  Files
live on tmpfs (``/dev/shm``) where there is one, so the disk's journal does
not swamp the figures (``--dir`` for another place).  Not part of run.py:
it needs a second checkout.
"""

from __future__ import annotations

import argparse
import io
import itertools
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from collections.abc import Callable

HERE = Path(__file__).resolve().parent
DEPTHS = (1, 5, 10)


# -- the worker (runs under either checkout's interpreter) ---------------------------

def _cpu_per_call(fn: Callable[[], object], calls: int, batches: int = 3) -> float:
    best = float("inf")
    for _ in range(batches):
        start = time.process_time()
        for _ in range(calls):
            fn()
        best = min(best, (time.process_time() - start) / calls)
    return best


def worker(archive_path: str, base_dir: str | None) -> None:
    """Answer one figure (seconds per operation) per case read on stdin."""
    from corral.contained import Root, available_backends, backend_by_name

    base = tempfile.mkdtemp(prefix="corral-versions-", dir=base_dir)
    archive = Path(archive_path).read_bytes()
    data = os.urandom(4096)
    numbers = itertools.count()
    paths = {}
    for depth in DEPTHS:
        rel = "/".join([f"d{depth}-{i}" for i in range(1, depth)] + ["f"])
        os.makedirs(os.path.join(base, os.path.dirname(rel)), exist_ok=True)
        Path(base, rel).write_bytes(data)
        paths[depth] = rel
    roots = {}
    for name in available_backends():
        backend = backend_by_name(name)
        if backend.has_openat2:
            roots[f"{name}-openat2"] = Root(base, backend=backend, fast_path=True)
        roots[f"{name}-walk"] = Root(base, backend=backend, fast_path=False)
    made = os.path.join(base, "made")

    def makedirs() -> float:
        os.mkdir(made)
        root = roots[next(iter(roots))]
        try:
            return _cpu_per_call(lambda: root.makedirs(f"made/n{next(numbers)}/b/c/d/e"), 200)
        finally:
            shutil.rmtree(made)

    def write(label: str, depth: str) -> float:
        root, rel = roots[label], os.path.join(os.path.dirname(paths[int(depth)]), "w.bin")
        return _cpu_per_call(lambda: root.write_bytes(rel, data, fsync=False), 500)

    def open_read(label: str, depth: str) -> float:
        ropen, rel = roots[label].open, paths[int(depth)]

        def run() -> None:
            fd = ropen(rel)
            os.read(fd, 65536)
            os.close(fd)
        return _cpu_per_call(run, 2000)

    def extract(label: str) -> float:
        name, _, path = label.partition("-")
        backend = backend_by_name(name)
        best = float("inf")
        for _ in range(3):
            dest = os.path.join(base, f"x{next(numbers)}")
            os.mkdir(dest)
            start = time.process_time()
            with Root(dest, backend=backend, fast_path=path == "openat2") as root:
                result = root.extract(io.BytesIO(archive))
            best = min(best, time.process_time() - start)
            shutil.rmtree(dest)
            if not result.ok:
                raise RuntimeError(f"extraction refused {result.refused[:3]}")
        return best

    cases: dict[str, Callable[..., float]] = {"makedirs": makedirs, "write": write,
                                              "open": open_read, "extract": extract}
    makedirs()  # warm up: imports, the native module, the dentry cache
    print(" ".join(roots), flush=True)
    try:
        for line in sys.stdin:
            kind, *args = line.split()
            print(repr(cases[kind](*args)), flush=True)
    finally:
        for root in roots.values():
            root.close()
        shutil.rmtree(base, ignore_errors=True)


# -- the driver ----------------------------------------------------------------------

class _Side:
    def __init__(self, python: str, archive: str, base_dir: str | None) -> None:
        command = [python, str(Path(__file__).resolve()), "--worker", archive]
        if base_dir:
            command += ["--dir", base_dir]
        self.process = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                        text=True, cwd=tempfile.gettempdir())
        self.labels = self._line().split()

    def _line(self) -> str:
        assert self.process.stdout is not None
        line = self.process.stdout.readline()
        if not line:
            raise RuntimeError(f"the worker {self.process.args[0]} stopped")
        return line.strip()

    def ask(self, case: str) -> float:
        assert self.process.stdin is not None
        self.process.stdin.write(case + "\n")
        self.process.stdin.flush()
        return float(self._line())

    def close(self) -> None:
        assert self.process.stdin is not None
        self.process.stdin.close()
        self.process.wait()


def _all_cases(labels: list[str]) -> list[str]:
    return (["makedirs"] + [f"write {label} {d}" for label in labels for d in DEPTHS]
            + [f"open {label} {d}" for label in labels for d in DEPTHS]
            + [f"extract {label}" for label in labels if label.startswith(labels[0][:3])])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--old", help="the other checkout's Python (its venv's)")
    parser.add_argument("--new", default=sys.executable, help="this checkout's Python")
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--members", type=int, default=2000, help="members of the tar")
    parser.add_argument("--dir", default="/dev/shm" if os.access("/dev/shm", os.W_OK) else None,
                        help="where the files are made")
    parser.add_argument("--worker", metavar="ARCHIVE", help=argparse.SUPPRESS)
    parser.add_argument("cases", nargs="*", help="cases as makedirs, open_native-walk_5, ...")
    args = parser.parse_args(argv)
    if args.worker:
        worker(args.worker, args.dir)
        return 0
    if not args.old:
        parser.error("--old is required")
    sys.path.insert(0, str(HERE))
    import bench_extract

    with tempfile.NamedTemporaryFile(suffix=".tar") as tar:
        tar.write(bench_extract.make_archive(args.members))
        tar.flush()
        sides = {"old": _Side(args.old, tar.name, args.dir), "new": _Side(args.new, tar.name,
                                                                           args.dir)}
        try:
            cases = [c.replace("_", " ") for c in args.cases] or _all_cases(sides["new"].labels)
            samples: dict[str, dict[str, list[float]]] = {c: {"old": [], "new": []}
                                                          for c in cases}
            for r in range(args.rounds):
                order = ["old", "new"] if r % 2 == 0 else ["new", "old"]
                for case in cases:
                    for who in order:
                        samples[case][who].append(sides[who].ask(case))
        finally:
            for side in sides.values():
                side.close()
    print(f"CPU time per operation, {args.rounds} alternating rounds (median, min..max); "
          "ratio new/old of the medians and of the minima")
    print(f"{'case':26} {'old':>30} {'new':>30} {'median':>7} {'min':>6}")
    for case, by in samples.items():
        old, new = by["old"], by["new"]

        def cell(xs: list[float]) -> str:
            scale, unit = (1e3, "ms") if min(xs) > 1e-3 else (1e6, "us")
            return (f"{statistics.median(xs) * scale:.1f} {unit} "
                    f"({min(xs) * scale:.1f}..{max(xs) * scale:.1f})")
        print(f"{case:26} {cell(old):>30} {cell(new):>30} "
              f"{statistics.median(new) / statistics.median(old):7.3f} "
              f"{min(new) / min(old):6.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
