"""Hostile-input benchmark, edit families (issue 12): inputs built to make
edit_file and write_file work hard, each at three sizes, next to the same
tool on a benign input of the same size, in one run.

Families:

* ``near-miss``: edit_file whose oldText is N lines of the file with one
  typo in the middle (the not-found diagnosis); benign: the same oldText
  without the typo, one line changed in newText (a real edit).
* ``swap``: a dryRun edit_file whose newText swaps N pairs of lines (the
  diff); benign: a dryRun of the same oldText with one line changed.
* ``huge``: edit_file whose oldText is a whole file of N bytes with one
  typo near its end; benign: the same without the typo (a real edit).
* ``spaces``, ``dots``, ``ellipsis lines``: write_file content of N spaces,
  N dots on one line, N bytes of lines that look like placeholders but are
  not (the placeholder scan); benign: write_file of N bytes of code.

Targets: every hostile/benign ratio <= 5, and the growth exponent of the
hostile time with size (least squares over the three sizes, log-log) <=
1.2.  ``collect(quick)`` returns the rows for ``benchmarks/run.py`` (group
``hostile``, shared with the search families).

    python benchmarks/bench_hostile_edit.py [--quick]
"""

from __future__ import annotations

import itertools
import math
import os
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from _common import Record, interleave, record  # noqa: E402

GROUP = "hostile"
SOURCE = "issue 12"
RATIO = ("<=", 5.0)
EXPONENT = 1.2

Call = Callable[[], dict[str, Any]]


@dataclass(frozen=True)
class Family:
    name: str  # as the table shows it, with N for the size
    sizes: tuple[int, int, int]
    quick_sizes: tuple[int, int, int]
    make: Callable[[Any, Path, int], tuple[Call, Call]]  # (toolbox, dir, N) -> (hostile, benign)


def _code_lines(count: int, start: int = 0) -> list[str]:
    return [f"    value_{i} = compute(alpha={i}, beta={i * 7}, name='item {i}')\n"
            for i in range(start, start + count)]


def _expect(box: Any, name: str, args: dict[str, Any], ok: bool, code: str | None = None) -> Call:
    def call() -> dict[str, Any]:
        out: dict[str, Any] = box.call(name, args)
        if out["ok"] is not ok or (code is not None and out.get("code") != code):
            raise RuntimeError(f"{name} answered {str(out)[:300]}")
        return out
    return call


def _toggling(box: Any, path: str, old: str, changed: str) -> Call:
    """A real edit that alternates between two versions of the file."""
    states = itertools.cycle([(old, changed), (changed, old)])

    def call() -> dict[str, Any]:
        a, b = next(states)
        out: dict[str, Any] = box.call("edit_file", {"path": path, "oldText": a, "newText": b})
        if not out["ok"]:
            raise RuntimeError(f"benign edit_file answered {str(out)[:300]}")
        return out
    return call


def _one_changed(lines: list[str]) -> str:
    changed = list(lines)
    middle = len(changed) // 2
    changed[middle] = changed[middle].replace("compute", "recompute")
    return "".join(changed)


def _near_miss(box: Any, base: Path, n: int) -> tuple[Call, Call]:
    lines = _code_lines(n)
    text = "".join(lines)
    (base / "near.py").write_text(text)
    (base / "near_ok.py").write_text(text)
    typo = list(lines)
    typo[n // 2] = typo[n // 2].replace("compute", "compote")
    hostile = _expect(box, "edit_file", {"path": "near.py", "oldText": "".join(typo),
                                         "newText": "x = 1\n"}, False, "NOT_FOUND")
    return hostile, _toggling(box, "near_ok.py", text, _one_changed(lines))


def _swap(box: Any, base: Path, pairs: int) -> tuple[Call, Call]:
    lines = [f"line {i} of the file, with some words\n" for i in range(2 * pairs)]
    text = "".join(lines)
    (base / "swap.txt").write_text(text)
    swapped = "".join(lines[i + 1] + lines[i] for i in range(0, 2 * pairs, 2))
    changed = list(lines)
    changed[pairs] = "a changed line\n"
    hostile = _expect(box, "edit_file", {"path": "swap.txt", "oldText": text,
                                         "newText": swapped, "dryRun": True}, True)
    benign = _expect(box, "edit_file", {"path": "swap.txt", "oldText": text,
                                        "newText": "".join(changed), "dryRun": True}, True)
    return hostile, benign


def _huge(box: Any, base: Path, size: int) -> tuple[Call, Call]:
    lines = _code_lines(max(1, size // len(_code_lines(1)[0])))
    text = "".join(lines)
    (base / "huge.py").write_text(text)
    (base / "huge_ok.py").write_text(text)
    typo = list(lines)
    typo[-3] = typo[-3].replace("compute", "compote")
    hostile = _expect(box, "edit_file", {"path": "huge.py", "oldText": "".join(typo),
                                         "newText": "x = 1\n"}, False, "NOT_FOUND")
    return hostile, _toggling(box, "huge_ok.py", text, _one_changed(lines))


def _writer(content_of: Callable[[int], str]) -> Callable[[Any, Path, int], tuple[Call, Call]]:
    def make(box: Any, base: Path, size: int) -> tuple[Call, Call]:
        code = "".join(_code_lines(size // 60 + 1))[:size]
        hostile = _expect(box, "write_file", {"path": "hostile.txt", "content": content_of(size),
                                              "overwrite": True}, True)
        benign = _expect(box, "write_file", {"path": "benign.py", "content": code,
                                             "overwrite": True}, True)
        return hostile, benign
    return make


def _ellipsis_lines(size: int) -> str:
    line = "# ... not a placeholder: no phrase here ...\n"
    return (line * (size // len(line) + 1))[:size]


FAMILIES = (
    Family("edit_file near-miss oldText, one typo in N lines", (600, 2400, 9600),
           (150, 600, 2400), _near_miss),
    Family("edit_file dryRun diff of N swapped line pairs", (1250, 5000, 20000),
           (300, 1200, 4800), _swap),
    Family("edit_file oldText of N bytes, one typo near its end", (256 * 1024, 1 << 20, 4 << 20),
           (64 * 1024, 256 * 1024, 1 << 20), _huge),
    Family("write_file content of N spaces", (62_500, 250_000, 1_000_000),
           (16_000, 64_000, 256_000), _writer(lambda n: " " * n)),
    Family("write_file content of N dots on one line", (62_500, 250_000, 1_000_000),
           (16_000, 64_000, 256_000), _writer(lambda n: "." * n)),
    Family("write_file content of N bytes of placeholder-like lines", (62_500, 250_000, 1_000_000),
           (16_000, 64_000, 256_000), _writer(_ellipsis_lines)),
)


def _timed(call: Call) -> Callable[[], float]:
    call()  # the first call pays for imports and caches

    def run() -> float:
        start = time.perf_counter()
        call()
        return time.perf_counter() - start
    return run


def exponent(sizes: list[int], seconds: list[float]) -> float:
    """The slope of log(time) over log(size), least squares."""
    xs = [math.log(s) for s in sizes]
    ys = [math.log(t) for t in seconds]
    mx, my = sum(xs) / len(xs), sum(ys) / len(ys)
    return sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / sum((x - mx) ** 2 for x in xs)


def _family_records(family: Family, sizes: tuple[int, int, int],
                    samples: dict[tuple[int, str], list[float]]) -> list[Record]:
    import statistics

    out: list[Record] = []
    for n in sizes:
        label = family.name.replace(" N ", f" {n:,} ")
        benign = f"{label}: benign input of the same size"
        out.append(record(GROUP, benign, samples[(n, "benign")], unit="ms", scale=1e3))
        out.append(record(GROUP, f"{label}: hostile", samples[(n, "hostile")], unit="ms",
                          scale=1e3, baseline=benign, base_values=samples[(n, "benign")],
                          target=RATIO, source=SOURCE))
    medians = [statistics.median(samples[(n, "hostile")]) for n in sizes]
    slope = exponent(list(sizes), medians)
    rec = record(GROUP, f"{family.name}: growth exponent of the hostile time with N is "
                        f"{slope:.2f}", [slope], unit="",
                 note=f"least squares of log time on log N over N = {', '.join(map(str, sizes))}")
    rec.update(target=f"exponent <= {EXPONENT}", source=SOURCE, met=slope <= EXPONENT)
    out.append(rec)
    return out


def collect(quick: bool) -> list[Record]:
    from corral.tools import Toolbox

    rounds = 3 if quick else 7
    records: list[Record] = []
    for family in FAMILIES:
        sizes = family.quick_sizes if quick else family.sizes
        with tempfile.TemporaryDirectory(prefix="corral-hostile-") as tmp:
            runners: dict[tuple[int, str], Callable[[], float]] = {}
            boxes = []
            for n in sizes:
                base = Path(os.path.realpath(tmp)) / f"n{n}"
                base.mkdir()
                box = Toolbox(base)
                boxes.append(box)
                hostile, benign = family.make(box, base, n)
                runners[(n, "hostile")] = _timed(hostile)
                runners[(n, "benign")] = _timed(benign)
            samples = interleave(runners, rounds)
            for box in boxes:
                box.close()
        records += _family_records(family, sizes, samples)
    return records


def main() -> int:
    quick = "--quick" in sys.argv
    for rec in collect(quick):
        ratio = f"; {rec['ratio']:.2f}x" if rec.get("ratio") else ""
        met = "" if rec.get("met") is None else f" (target {rec['target']}: "
        met += "" if rec.get("met") is None else ("met)" if rec["met"] else "MISSED)")
        print(f"{rec['case']}: {rec['median']:.3g} {rec['unit']}{ratio}{met}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
