"""Hostile inputs for glob and grep (issue 12, THREATS row 24), in one run.

    python benchmarks/bench_hostile_search.py [--rounds 3] [--quick]

Each family is measured at three sizes, next to the same tool on a benign
input of the same size (the same files, a plain pattern), through
``Toolbox.call``; samples of the two are interleaved.  Per size the row
gives the hostile/benign ratio (target <= 5); per family one more row
gives the growth exponent of the hostile time with size, fitted on the
three sizes (target <= 1.2: linear, not polynomial or exponential).

Families: grep ``.*.*.*.*.*b`` and ``a*a*a*a*a*a*a*c`` on one long line of
``a``; grep with lookaheads (refused: RE2 does not run them, so the cost is
the refusal); grep ``a?``x30 + ``a``x30; glob ``*a*a*a*a*a*a*a*a*b`` over
many long names; glob ``**/a/**/a/**/a/**/a/b`` over chains of ``a``
directories 40 deep (the size is the number of chains: at a growing depth
every path grows too, so the output alone would be quadratic); a hostile
``.gitignore`` line (the same shape) in force while globbing; grep with the
same shape as ``include``.

``collect(quick)`` returns the rows for ``benchmarks/run.py`` (group
``hostile``); ``--quick`` and ``quick=True`` use smaller sizes.  The
default sizes take well under a minute here; ``CORRAL_HOSTILE_SCALE=N``
multiplies them (a documented longer profile).
"""

from __future__ import annotations

import argparse
import math
import os
import shutil
import statistics
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from _common import Record, interleave, record, time_for

STAR_NAME = "*a*a*a*a*a*a*a*a*b"
LONG_NAME = "a" * 200 + "c.txt"  # never ends in b: every star is tried


def _toolbox(root: Path) -> Any:
    from corral.tools import Limits, Toolbox
    return Toolbox(root, limits=Limits(search_results=10 ** 6, search_files=10 ** 7))


def _call(box: Any, tool: str, args: dict[str, Any]) -> Callable[[], object]:
    def run() -> object:
        out = box.call(tool, args)
        assert out["ok"] or out["code"] == "INVALID_ARGUMENT", out
        return out
    return run


# -- the inputs: (hostile call, benign call) on a tree of the given size ----------------

def _long_line(root: Path, size: int) -> None:
    (root / "line.txt").write_bytes(b"a" * size + b"\n")


def _long_names(root: Path, count: int) -> None:
    for i in range(count):
        (root / f"{i:06}{LONG_NAME}").write_bytes(b"x\n")


def _deep(root: Path, chains: int, depth: int = 40) -> None:
    """``chains`` directory chains ``c<i>/a/a/.../a``, ``depth`` deep, a file
    at every level: the tree grows with ``chains`` at a fixed depth."""
    for i in range(chains):
        here = root / f"c{i}"
        for _ in range(depth):
            here = here / "a"
            here.mkdir(parents=True)
            (here / "f.txt").write_bytes(b"x\n")


def _regex(pattern: str) -> Callable[[Path, int], tuple[dict, dict, str]]:
    def make(root: Path, size: int) -> tuple[dict, dict, str]:
        _long_line(root, size)
        # benign: a plain regex that has to read the line too (a literal such
        # as "needle" would be found absent by memchr at memory speed)
        return ({"pattern": pattern}, {"pattern": "[0-9]{3}x"}, "grep")
    return make


def _glob_names(root: Path, size: int) -> tuple[dict, dict, str]:
    _long_names(root, size)
    return ({"pattern": STAR_NAME}, {"pattern": "*.txt"}, "glob")


def _glob_deep(root: Path, size: int) -> tuple[dict, dict, str]:
    _deep(root, size)
    return ({"pattern": "**/a/**/a/**/a/**/a/**/a/b"}, {"pattern": "**/*.txt"}, "glob")


def _gitignore(root: Path, size: int) -> tuple[dict, dict, str]:
    _long_names(root, size)
    (root / "hostile").mkdir()
    (root / "hostile" / ".gitignore").write_text(STAR_NAME + "\n")
    for p in list(root.glob("*.txt")):
        p.rename(root / "hostile" / p.name)
    (root / "benign").mkdir()
    (root / "benign" / ".gitignore").write_text("*.log\n")
    for p in list((root / "hostile").glob("*.txt")):
        shutil.copy(p, root / "benign" / p.name)
    return ({"pattern": "**/*", "path": "hostile"}, {"pattern": "**/*", "path": "benign"}, "glob")


def _include(root: Path, size: int) -> tuple[dict, dict, str]:
    _long_names(root, size)
    return ({"pattern": "x", "include": STAR_NAME}, {"pattern": "x", "include": "*.txt"}, "grep")


# family -> (label, maker, sizes, quick sizes)
FAMILIES: dict[str, tuple[str, Callable[[Path, int], tuple[dict, dict, str]], list[int],
                          list[int]]] = {
    "dotstar": ("grep .*.*.*.*.*b, one long line", _regex(".*.*.*.*.*b"),
                [100_000, 400_000, 1_600_000], [20_000, 40_000, 80_000]),
    "astar": ("grep a*a*a*a*a*a*a*c, one long line", _regex("a*a*a*a*a*a*a*c"),
              [100_000, 400_000, 1_600_000], [20_000, 40_000, 80_000]),
    "lookahead": ("grep (?=.*a)(?=.*b)(?=.*c).*d (refused)", _regex("(?=.*a)(?=.*b)(?=.*c).*d"),
                  [100_000, 400_000, 1_600_000], [20_000, 40_000, 80_000]),
    "optional": ("grep a?x30 a x30, one long line", _regex("a?" * 30 + "a" * 30),
                 [100_000, 400_000, 1_600_000], [20_000, 40_000, 80_000]),
    "glob_stars": (f"glob {STAR_NAME}, long names", _glob_names, [500, 2000, 8000],
                   [200, 400, 800]),
    "glob_deep": ("glob **/a/**/a/**/a/**/a/**/a/b, chains 40 deep", _glob_deep, [4, 16, 64],
                  [2, 4, 8]),
    "gitignore": (f".gitignore line {STAR_NAME}, glob **/*", _gitignore, [500, 2000, 8000],
                  [200, 400, 800]),
    "include": (f"grep include {STAR_NAME}", _include, [500, 2000, 8000], [200, 400, 800]),
}


def growth_exponent(sizes: list[int], times: list[float]) -> float:
    """The least-squares slope of log(time) over log(size)."""
    xs = [math.log(s) for s in sizes]
    ys = [math.log(max(t, 1e-9)) for t in times]
    mx, my = statistics.fmean(xs), statistics.fmean(ys)
    return sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / sum((x - mx) ** 2 for x in xs)


def _measure(name: str, size: int, rounds: int) -> tuple[list[float], list[float]]:
    _label, make, _sizes, _quick = FAMILIES[name]
    with tempfile.TemporaryDirectory(prefix="corral-hostile-") as tmp:
        root = Path(tmp)
        hostile, benign, tool = make(root, size)
        box = _toolbox(root)
        try:
            runners = {"hostile": lambda: time_for(_call(box, tool, hostile), 0.05, 2),
                       "benign": lambda: time_for(_call(box, tool, benign), 0.05, 2)}
            samples = interleave(runners, rounds)
        finally:
            box.close()
    return samples["hostile"], samples["benign"]


GROUP, SOURCE, RATIO, EXPONENT = "hostile", "issue 12", ("<=", 5.0), 1.2


def _family_records(label: str, sizes: list[int], rounds: int, name: str) -> list[Record]:
    out: list[Record] = []
    medians = []
    for size in sizes:
        hostile, benign = _measure(name, size, rounds)
        medians.append(statistics.median(hostile))
        case = f"{label} @ {size:,}"
        base = f"{case}: benign input of the same size"
        out.append(record(GROUP, base, benign, unit="ms", scale=1e3))
        out.append(record(GROUP, f"{case}: hostile", hostile, unit="ms", scale=1e3,
                          baseline=base, base_values=benign, target=RATIO, source=SOURCE))
    slope = growth_exponent(sizes, medians)
    rec = record(GROUP, f"{label}: growth exponent of the hostile time with N is {slope:.2f}",
                 [slope], unit="", note="least squares of log time on log N over N = "
                 + ", ".join(f"{s:,}" for s in sizes))
    rec.update(target=f"exponent <= {EXPONENT}", source=SOURCE, met=slope <= EXPONENT)
    out.append(rec)
    return out


def collect(quick: bool = False, rounds: int | None = None) -> list[Record]:
    """Rows for RESULTS.md (run.py's group ``hostile``): per family and size
    the benign row and the hostile row against it, and per family the
    fitted growth exponent."""
    scale = max(1, int(os.environ.get("CORRAL_HOSTILE_SCALE", "1") or 1))
    rounds = rounds or 3
    records: list[Record] = []
    for name, (label, _make, sizes, quick_sizes) in FAMILIES.items():
        chosen = [s * scale for s in (quick_sizes if quick else sizes)]
        records += _family_records(label, chosen, rounds, name)
    return records


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args()
    for row in collect(args.quick, args.rounds):
        ratio = f"; {row['ratio']:.2f}x" if row.get("ratio") else ""
        met = "" if row.get("met") is None else \
            f" (target {row['target']}: {'met' if row['met'] else 'MISSED'})"
        print(f"{row['case']}: {row['median']:.3g} {row['unit']}{ratio}{met}")


if __name__ == "__main__":
    main()
