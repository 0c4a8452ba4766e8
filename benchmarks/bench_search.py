"""Benchmark glob and grep against unprotected and native baselines.

    python benchmarks/bench_search.py [--rounds 5] [--files 20000] [--regen]

Generates (once, then reuses) a tree under ``benchmarks/_fixtures/`` of
20,000 files, about 100 MB, nested up to depth 10, with some symlinks (to
files and directories inside, and to a small directory outside), a few
binary files, a ``.git`` directory and a root ``.gitignore`` (so ripgrep,
which honours ignore files only in a repository, does the same filtering as
corral).  Then, in one run, each measurement in its own subprocess (so its
peak RSS is its own, read from ``wait4``):

* ``glob "**/*.py"`` through ``Toolbox.call`` vs an unprotected
  ``os.walk`` + ``fnmatch`` (target, issue 19: at most 1.1x) and vs
  ``pathlib.Path.rglob``;
* ``grep`` of a literal and of a regex through ``Toolbox.call`` vs
  ``rg -j1`` (targets, issue 19: literal at most 1.2x, regex 1.5x) and
  ``rg`` with its default threads;
* a scaling section (``--scaling``; always in ``collect()``; in a child
  process of its own, as the rows above): glob over
  5k / 20k / 80k entries and grep over 4 / 16 / 64 MB, with the fitted
  growth exponent (target <= 1.1); ``CORRAL_BENCH_SCALE=full`` uses issue
  19's 10k / 100k / 1M entries and 10 MB / 100 MB / 1 GB (minutes to make
  the fixtures, then cached in ``benchmarks/_fixtures``).

The corral calls run with limits raised so that every tool walks and
reports everything, as the baselines do (the default cap of 200 results
would let it stop early).  Times for Python operations are measured inside
the child around the operation (interpreter start-up excluded); ripgrep's
are the wall time of its process.  The printed table gives the median of
the rounds, min and max, the ratio of medians to the baseline, peak RSS,
and the result count (which must agree between tools that do the same job).
Page cache is warm (a warm-up pass reads the tree first).
"""

from __future__ import annotations

import argparse
import fnmatch
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

from _common import Record, interleave, record, skipped, spawn

HERE = Path(__file__).resolve().parent
FIXTURES = HERE / "_fixtures"
LITERAL = "needle_literal_42"
REGEX = r"def \w+_handler\("
GLOB = "**/*.py"
FIXTURE_VERSION = 1

WORDS = ("self", "value", "result", "count", "data", "items", "config", "path", "name", "index",
         "buffer", "request", "response", "handler", "token", "parse", "render", "update",
         "return", "import", "from", "class", "if", "else", "for", "while", "in", "not", "None")
EXTENSIONS = (".py",) * 8 + (".js", ".js", ".md", ".txt", ".json", ".c", ".h", ".rs")


# -- the tree ---------------------------------------------------------------------

def _line(rng: random.Random) -> str:
    indent = "    " * rng.randrange(4)
    return indent + " ".join(rng.choice(WORDS) for _ in range(rng.randrange(3, 12)))


def generate(tree: Path, files: int, total_bytes: int, seed: int = 7) -> None:
    rng = random.Random(seed)
    if tree.exists():
        shutil.rmtree(tree)
    tree.mkdir(parents=True)
    (tree / ".git").mkdir()
    (tree / ".git" / "HEAD").write_text("ref: refs/heads/main\n")
    (tree / ".gitignore").write_text("*.log\n/generated/\n")
    outside = tree.parent / (tree.name + "-outside")
    if outside.exists():
        shutil.rmtree(outside)
    outside.mkdir()
    for i in range(20):
        (outside / f"outside_{i}.py").write_text(f"{LITERAL} outside {i}\n")
    # directories: a random tree, depth <= 10
    dirs = [tree]
    for i in range(files // 10):
        parent = rng.choice(dirs)
        depth = len(parent.relative_to(tree).parts)
        if depth >= 10:
            parent = tree
        child = parent / f"d{i}_{rng.choice(WORDS)}"
        child.mkdir()
        dirs.append(child)
    (tree / "generated").mkdir()
    dirs.append(tree / "generated")
    average = total_bytes // files
    lines_cache = [_line(rng) for _ in range(5000)]
    written = []
    for i in range(files):
        directory = rng.choice(dirs)
        ext = ".log" if i % 200 == 0 else rng.choice(EXTENSIONS)
        path = directory / f"f{i}_{rng.choice(WORDS)}{ext}"
        if i % 150 == 7:
            path.write_bytes(b"\x00BIN" + rng.randbytes(average))
            continue
        size = int(rng.expovariate(1 / average))
        out, n = [], 0
        while n < size:
            line = rng.choice(lines_cache)
            out.append(line)
            n += len(line) + 1
        if i % 97 == 3:
            out.insert(rng.randrange(len(out) + 1), f"x = {LITERAL}(1)")
        if i % 89 == 5:
            out.insert(rng.randrange(len(out) + 1), f"def on_{rng.choice(WORDS)}_handler(event):")
        path.write_text("\n".join(out) + "\n")
        written.append(path)
    # symlinks: to files, to directories inside, to the outside directory
    for i in range(40):
        directory = rng.choice(dirs)
        target = rng.choice(written)
        os.symlink(os.path.relpath(target, directory), directory / f"link{i}.py")
    for i in range(10):
        directory = rng.choice(dirs)
        os.symlink(os.path.relpath(rng.choice(dirs), directory), directory / f"dirlink{i}")
    for i in range(5):
        os.symlink(outside, rng.choice(dirs) / f"outlink{i}")
    (tree / ".fixture").write_text(json.dumps({"version": FIXTURE_VERSION, "files": files}))


def ensure_tree(files: int, regen: bool) -> Path:
    tree = FIXTURES / f"search-{files}"
    marker = tree / ".fixture"
    want = {"version": FIXTURE_VERSION, "files": files}
    if regen or not marker.exists() or json.loads(marker.read_text()) != want:
        print(f"generating {tree} ...", flush=True)
        started = time.perf_counter()
        generate(tree, files, files * 5000)
        print(f"  done in {time.perf_counter() - started:.1f} s", flush=True)
    return tree


def tree_facts(tree: Path) -> tuple[int, int, int]:
    files = size = dirs = 0
    for dirpath, dirnames, filenames in os.walk(tree):
        dirs += len(dirnames)
        for name in filenames:
            p = os.path.join(dirpath, name)
            if not os.path.islink(p):
                files += 1
                size += os.path.getsize(p)
    return files, dirs, size


# -- the measured operations (run in a child) ----------------------------------------
# Each op does its set-up (a Toolbox is made once per session) and returns the
# measured call, which returns the number of results.

def _toolbox(tree: str):
    from corral.tools import Limits, Toolbox
    return Toolbox(tree, limits=Limits(search_results=10 ** 7, search_files=10 ** 7))


def op_noop(tree: str):
    import corral.tools  # noqa: F401 - the import is part of the RSS floor
    return lambda: 0


def op_glob_tool(tree: str):
    box = _toolbox(tree)

    def call() -> int:
        out = box.call("glob", {"pattern": GLOB})
        assert out["ok"] and not out["truncated"], out
        return len(out["paths"])
    return call


def op_glob_tool_default(tree: str):
    from corral.tools import Toolbox
    box = Toolbox(tree)

    def call() -> int:
        out = box.call("glob", {"pattern": GLOB})
        assert out["ok"], out
        return len(out["paths"])
    return call


def op_os_walk(tree: str):
    def call() -> int:
        found = []
        for dirpath, _dirs, files in os.walk(tree):
            for name in fnmatch.filter(files, "*.py"):
                found.append(os.path.join(dirpath, name))
        found.sort()
        return len(found)
    return call


def op_rglob(tree: str):
    return lambda: len(sorted(Path(tree).rglob("*.py")))


def _grep(tree: str, pattern: str, regex: bool):
    box = _toolbox(tree)

    def call() -> int:
        out = box.call("grep", {"pattern": pattern, "regex": regex})
        assert out["ok"] and not out["truncated"], out
        return len(out["matches"])
    return call


def op_grep_literal(tree: str):
    return _grep(tree, LITERAL, False)


def op_grep_regex(tree: str):
    return _grep(tree, REGEX, True)


PY_OPS = {"noop": op_noop, "glob_tool": op_glob_tool, "glob_tool_default": op_glob_tool_default,
          "os_walk_fnmatch": op_os_walk, "pathlib_rglob": op_rglob,
          "grep_tool_literal": op_grep_literal, "grep_tool_regex": op_grep_regex}


def child(op: str, tree: str) -> None:
    call = PY_OPS[op](tree)
    cpu = time.process_time()
    started = time.perf_counter()
    count = call()
    seconds = time.perf_counter() - started
    cpu = time.process_time() - cpu
    print(json.dumps({"seconds": seconds, "count": count, "cpu": cpu}))


# -- the parent ---------------------------------------------------------------------------

def find_rg() -> str | None:
    """ripgrep: the one installed beside this Python (the ``ripgrep`` wheel), else on PATH."""
    return shutil.which("rg", path=os.path.dirname(sys.executable)) or shutil.which("rg")


def rg_version(rg: str) -> str:
    return subprocess.run([rg, "--version"], capture_output=True, text=True,
                          check=False).stdout.split()[1]


def run_python(op: str, tree: Path) -> tuple[float, int, int, float | None]:
    """(seconds, peak RSS in KiB, results, the child's CPU seconds) of the operation."""
    _, rss, out = spawn([sys.executable, __file__, "--child", op, str(tree)])
    data = json.loads(out)
    return data["seconds"], rss, data["count"], data["cpu"]


def run_rg(args: list[str]) -> tuple[float, int, int, float | None]:
    seconds, rss, out = spawn(args, ok_codes=(0, 1))  # 1: nothing matched
    return seconds, rss, len(out.splitlines()), None  # its CPU time is not taken apart


def warm(tree: Path) -> None:
    for dirpath, _dirs, files in os.walk(tree):
        for name in files:
            p = os.path.join(dirpath, name)
            if not os.path.islink(p):
                with open(p, "rb") as f:
                    while f.read(1 << 20):
                        pass


BASELINES = {"glob_tool": "os_walk_fnmatch", "glob_tool_default": "os_walk_fnmatch",
             "pathlib_rglob": "os_walk_fnmatch", "grep_tool_literal": "rg_j1_literal",
             "rg_literal": "rg_j1_literal", "grep_tool_regex": "rg_j1_regex",
             "rg_regex": "rg_j1_regex"}


Sample = tuple[float, int, int, float | None]


def measure(tree: Path, rounds: int, rg: str | None) -> dict[str, list[Sample]]:
    """(seconds, peak RSS in KiB, results, CPU seconds of a Python case)
    per case, one per round; the ripgrep cases only when ``rg`` is given."""
    warm(tree)
    cases: dict[str, Callable[[], Sample]] = {
        "noop": lambda: run_python("noop", tree),
        "glob_tool": lambda: run_python("glob_tool", tree),
        "glob_tool_default": lambda: run_python("glob_tool_default", tree),
        "os_walk_fnmatch": lambda: run_python("os_walk_fnmatch", tree),
        "pathlib_rglob": lambda: run_python("pathlib_rglob", tree),
        "grep_tool_literal": lambda: run_python("grep_tool_literal", tree),
        "grep_tool_regex": lambda: run_python("grep_tool_regex", tree),
    }
    if rg is not None:
        cases.update({
            "rg_j1_literal": lambda: run_rg([rg, "-j1", "-n", "-F", LITERAL, str(tree)]),
            "rg_literal": lambda: run_rg([rg, "-n", "-F", LITERAL, str(tree)]),
            "rg_j1_regex": lambda: run_rg([rg, "-j1", "-n", REGEX, str(tree)]),
            "rg_regex": lambda: run_rg([rg, "-n", REGEX, str(tree)]),
        })
    # interleaved (rotating order), so drift hits every case alike
    runs: dict[str, list[Sample]] = {name: [] for name in cases}

    def runner(name: str) -> Callable[[], float]:
        def run() -> float:
            runs[name].append(cases[name]())
            return runs[name][-1][0]
        return run
    interleave({name: runner(name) for name in cases}, rounds)
    return runs


# run.py's names for the cases, and the targets (issue 5)
LABELS = {
    "noop": "python -c 'import corral.tools' (RSS floor)",
    "os_walk_fnmatch": "glob **/*.py: os.walk + fnmatch",
    "glob_tool": "glob **/*.py: Toolbox.call glob (no cap)",
    "glob_tool_default": "glob **/*.py: Toolbox.call glob (default cap 200)",
    "pathlib_rglob": "glob **/*.py: pathlib.Path.rglob",
    "rg_j1_literal": "grep literal: rg -j1",
    "grep_tool_literal": "grep literal: Toolbox.call grep",
    "rg_literal": "grep literal: rg",
    "rg_j1_regex": "grep regex: rg -j1",
    "grep_tool_regex": "grep regex: Toolbox.call grep",
    "rg_regex": "grep regex: rg",
}
TARGETS = {"glob_tool": ("<=", 1.1), "grep_tool_literal": ("<=", 1.2),
           "grep_tool_regex": ("<=", 1.5)}
SECOND_BASELINE = {"glob_tool": "pathlib_rglob", "grep_tool_literal": "rg_literal",
                   "grep_tool_regex": "rg_regex"}


def collect(quick: bool = False) -> list[Record]:
    """The figures as records (for run.py), on the 20,000-file tree
    (generated if missing; 2,000 files when ``quick``)."""
    tree = ensure_tree(2000 if quick else 20000, False)
    rg = find_rg()
    runs = measure(tree, 1 if quick else 5, rg)
    times = {name: [r[0] for r in samples] for name, samples in runs.items()}
    records = []
    for name, label in LABELS.items():
        if name not in runs:
            records.append(skipped("search", label, "ripgrep not found: pip install ripgrep "
                                   "(the 'bench' extra)"))
            continue
        base = BASELINES.get(name) if BASELINES.get(name) in runs else None
        notes = []
        other = SECOND_BASELINE.get(name)
        if other in times:
            ratio = statistics.median(times[name]) / statistics.median(times[other])
            notes.append(f"{ratio:.2f}x {LABELS[other].split(': ')[1]}")
        cpu = _cpu_ratio(runs, name, base)
        if cpu is not None:
            notes.append(f"{cpu:.2f}x by the children's CPU time (steadier when the machine "
                         "is busy)")
        if name == "noop":
            notes.append("an empty call: this row is the RSS floor of a Python child")
        records.append(record(
            "search", label, times[name], unit="ms", scale=1e3,
            baseline=LABELS[base] if base else None, base_values=times[base] if base else None,
            target=TARGETS.get(name) if base else None,
            source="issue 19" if name in TARGETS and base else None,
            rss_mb=max(r[1] for r in runs[name]) / 1024,
            count=sorted({r[2] for r in runs[name]}), note="; ".join(notes) or None))
    if not quick:
        records += scaling_in_child()
    return records


def _cpu_ratio(runs: dict[str, list[Sample]], name: str, base: str | None) -> float | None:
    """The ratio of the medians of the CPU time of the case and its baseline
    (``None`` unless both are Python cases, whose CPU time is taken)."""
    if base is None or base not in runs:
        return None
    ours = [r[3] for r in runs[name] if r[3] is not None]
    theirs = [r[3] for r in runs[base] if r[3] is not None]
    if not ours or not theirs:
        return None
    return statistics.median(ours) / statistics.median(theirs)


# -- scaling: growth with the size of the tree / of the data ---------------------------------

# CORRAL_BENCH_SCALE=full: the sizes issue 19 names (1M entries and 1 GB take minutes to make)
SCALE_FULL = os.environ.get("CORRAL_BENCH_SCALE") == "full"
GLOB_SIZES = [10_000, 100_000, 1_000_000] if SCALE_FULL else [5_000, 20_000, 80_000]
GREP_SIZES = [10 << 20, 100 << 20, 1 << 30] if SCALE_FULL else [4 << 20, 16 << 20, 64 << 20]
EXPONENT_TARGET = 1.1


def _fixture(name: str, make: Callable[[Path], None]) -> Path:
    """``benchmarks/_fixtures/<name>``, made once by ``make`` (then cached)."""
    tree = FIXTURES / name
    marker = tree / ".fixture"
    if not marker.exists():
        if tree.exists():
            shutil.rmtree(tree)
        tree.mkdir(parents=True)
        make(tree)
        marker.write_text(name)
    return tree


def _scaling_tree(entries: int) -> Path:
    """``entries`` empty files (half of them .py), 100 per directory."""
    def make(tree: Path) -> None:
        for i in range(entries):
            d = tree / f"d{i // 10_000:03}" / f"e{i // 100 % 100:03}"
            if i % 100 == 0:
                d.mkdir(parents=True, exist_ok=True)
            (d / (f"f{i}.py" if i % 2 else f"f{i}.txt")).touch()
    return _fixture(f"scale-glob-{entries}", make)


def _scaling_data(size: int) -> Path:
    """``size`` bytes of code-like lines in files of 8 MB, a literal every 4 MB."""
    def make(tree: Path) -> None:
        rng = random.Random(size)
        block = ("\n".join(_line(rng) for _ in range(2000)) + "\n").encode()
        hit = block.replace(b"render", LITERAL.encode(), 1)
        per_file = min(8 << 20, size)
        for f in range(size // per_file):
            with open(tree / f"data{f:04}.txt", "wb") as out:
                written = 0
                while written < per_file:
                    chunk = hit if written % (4 << 20) < len(block) else block
                    out.write(chunk)
                    written += len(chunk)
    return _fixture(f"scale-grep-{size >> 20}M", make)


def _timed_call(box, tool: str, args: dict, cpu: list[float]) -> Callable[[], float]:
    """A runner giving the wall time of one call; its CPU time (this
    process, every thread) goes to ``cpu``."""
    def run() -> float:
        started, used = time.perf_counter(), time.process_time()
        out = box.call(tool, args)
        cpu.append(time.process_time() - used)
        assert out["ok"] and not out["truncated"], str(out)[:300]
        return time.perf_counter() - started
    return run


def growth_exponent(sizes: list[int], times: list[float]) -> float:
    """The least-squares slope of log(time) over log(size)."""
    import math
    xs, ys = [math.log(v) for v in sizes], [math.log(t) for t in times]
    mx, my = statistics.fmean(xs), statistics.fmean(ys)
    return sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / sum((x - mx) ** 2 for x in xs)


def scaling(rounds: int = 3) -> list[Record]:
    """glob **/*.py over growing trees and grep of a literal over growing
    data through Toolbox.call: a row per size and the fitted growth exponent
    (target <= 1.1).  CORRAL_BENCH_SCALE=full uses issue 19's sizes.

    The exponent is fitted on the calls' CPU time (median per size): on a
    shared, loaded machine the wall time of a call also holds the time
    other processes ran, which changes over the minutes this section takes
    and says nothing about how the work grows; the wall-time exponent is
    given in the row's note."""
    from corral.tools import Limits, Toolbox
    limits = Limits(search_results=10 ** 7, search_files=10 ** 8)
    records: list[Record] = []
    plans = (("glob **/*.py", GLOB_SIZES, _scaling_tree, "glob", {"pattern": GLOB}),
             ("grep literal", GREP_SIZES, _scaling_data, "grep",
              {"pattern": LITERAL, "regex": False}))
    for what, sizes, make, tool, args in plans:
        walls, cpus = [], []
        for size in sizes:
            box = Toolbox(make(size), limits=limits)
            box.call(tool, args)  # warm the page cache
            cpu: list[float] = []
            samples = interleave({"call": _timed_call(box, tool, args, cpu)}, rounds)["call"]
            box.close()
            walls.append(statistics.median(samples))
            cpus.append(statistics.median(cpu))
            shown = f"{size:,} entries" if tool == "glob" else f"{size >> 20} MB"
            records.append(record("search scaling", f"{what} over {shown}", samples, unit="ms",
                                  scale=1e3, note=f"CPU {cpus[-1] * 1e3:.1f} ms"))
        slope = growth_exponent(sizes, cpus)
        rec = record("search scaling", f"{what}: growth exponent with size is {slope:.2f}",
                     [slope], unit="", note="least squares of log CPU time on log size over "
                     + ", ".join(map(str, sizes))
                     + f"; of wall time: {growth_exponent(sizes, walls):.2f}")
        rec.update(target=f"exponent <= {EXPONENT_TARGET}", source="issue 19",
                   met=slope <= EXPONENT_TARGET)
        records.append(rec)
    return records


def scaling_in_child(rounds: int = 3) -> list[Record]:
    """:func:`scaling` in a process of its own, as every other search row:
    its figures then do not depend on which groups ran before it in
    run.py's process (what they leave: Toolboxes not yet collected, their
    watches in the process's one inotify instance, the tree-lock thread,
    the allocator's and the collector's state)."""
    _, _, out = spawn([sys.executable, __file__, "--scaling-child", "--rounds", str(rounds)])
    return json.loads(out)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--files", type=int, default=20000)
    parser.add_argument("--regen", action="store_true")
    parser.add_argument("--scaling", action="store_true",
                        help="also the scaling section (CORRAL_BENCH_SCALE=full: issue 19's sizes)")
    parser.add_argument("--child", nargs=2, metavar=("OP", "TREE"), help=argparse.SUPPRESS)
    parser.add_argument("--scaling-child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(*args.child)
        return
    if args.scaling_child:
        print(json.dumps(scaling(args.rounds)))
        return
    tree = ensure_tree(args.files, args.regen)
    files, dirs, size = tree_facts(tree)
    rg = find_rg()
    if not rg:
        sys.exit("ripgrep not found: pip install ripgrep (the 'bench' extra)")
    print(f"tree: {tree}\n  {files} files, {dirs} directories, {size / 1e6:.1f} MB; "
          f"{os.cpu_count()} CPUs; Python {sys.version.split()[0]}; {rg_version(rg)} ripgrep")
    samples = measure(tree, args.rounds, rg)
    baselines = BASELINES
    medians = {name: statistics.median(s[0] for s in runs) for name, runs in samples.items()}
    minimums = {name: min(s[0] for s in runs) for name, runs in samples.items()}
    print(f"\n{args.rounds} rounds; times in ms; ratios of medians (and of minimums, less "
          "sensitive to a loaded machine) to the baseline; RSS = peak of the process")
    print(f"{'case':<20} {'median':>8} {'min':>8} {'max':>8} {'ratio':>14} {'min ratio':>10} "
          f"{'peak RSS':>10} {'results':>8}")
    for name, runs in samples.items():
        times = [s[0] * 1000 for s in runs]
        rss = max(s[1] for s in runs) / 1024
        counts = sorted({s[2] for s in runs})
        base = baselines.get(name)
        ratio = f"{medians[name] / medians[base]:.2f}x {base.split('_')[0]}" if base else ""
        low = f"{minimums[name] / minimums[base]:.2f}x" if base else ""
        print(f"{name:<20} {statistics.median(times):8.1f} {min(times):8.1f} {max(times):8.1f} "
              f"{ratio:>14} {low:>10} {rss:8.1f}MB {','.join(map(str, counts)):>8}")
    print("\ntargets (issue 19): glob_tool <= 1.1x os_walk_fnmatch; grep_tool_literal <= 1.2x "
          "rg_j1_literal; grep_tool_regex <= 1.5x rg_j1_regex")
    print(f"glob_tool / os_walk_fnmatch = {medians['glob_tool'] / medians['os_walk_fnmatch']:.2f}x;"
          f" grep_tool_literal / rg_j1_literal = "
          f"{medians['grep_tool_literal'] / medians['rg_j1_literal']:.2f}x; "
          f"grep_tool_regex / rg_j1_regex = "
          f"{medians['grep_tool_regex'] / medians['rg_j1_regex']:.2f}x")
    cpu = _cpu_ratio(samples, "glob_tool", "os_walk_fnmatch")
    if cpu is not None:
        print(f"glob_tool / os_walk_fnmatch by the children's CPU time = {cpu:.2f}x")
    if args.scaling:
        for rec in scaling_in_child(args.rounds):
            met = "" if rec.get("met") is None else f" (target {rec['target']}: " + \
                ("met)" if rec["met"] else "MISSED)")
            note = f" ({rec['note']})" if rec.get("note") else ""
            print(f"{rec['case']}: {rec['median']:.3g} {rec['unit']}{met}{note}")


if __name__ == "__main__":
    main()
