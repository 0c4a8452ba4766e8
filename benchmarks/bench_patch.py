"""apply_patch against the OpenAI Agents SDK's ``apply_diff`` plus one atomic
replace (issue 35: ratio <= 1.5).

    python benchmarks/bench_patch.py [--lines N] [--hunks H] [--rounds R] [--json]

The file is 10,000 lines of Python-like text, every line distinct; the
patch changes one line in each of 50 places spread through it, each hunk
with three lines of context either side, as a model writes it.  The same
V4A text is given to both:

* corral: ``Toolbox.call("apply_patch", {"input": ..., "dialect": "v4a"})``
  (the envelope around the V4A hunks): parse, resolve and pin the file under
  the policed view, read it, place every hunk (refusing an ambiguous one),
  decide the policy, write it atomically, answer with its digest;
* baseline: read the file, ``agents.apply_diff(text, diff)``, then one atomic
  replace: a temporary file in the same directory, written, fsynced and
  renamed over the file.

Before each timed call the file is put back as it was (not timed).  Both run
on tmpfs where there is one (``/dev/shm``), so the figure is the two
implementations' own cost, not the disk's; the rounds are interleaved (see
``_common.interleave``) and the ratio is of medians measured in the same
run.  ``agents`` comes with the ``bench`` extra (``openai-agents``); without
it the figure is skipped with a line saying so.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Callable

from _common import Record, interleave, record, skipped

LINES = 10_000
HUNKS = 50
BASELINE = "agents.apply_diff + atomic replace"
TARGET = ("<=", 1.5)


def make_file(lines: int) -> list[str]:
    """Distinct lines with the look of a Python module."""
    out: list[str] = []
    for i in range(lines):
        if i % 25 == 0:
            out.append(f"def function_{i}(value):")
        elif i % 25 == 24:
            out.append(f"    return value + {i}")
        else:
            out.append(f"    value = step_{i % 97}(value, {i})  # line {i}")
    return out


def make_diff(lines: list[str], hunks: int) -> tuple[str, list[str]]:
    """A V4A diff changing one line in each of ``hunks`` evenly spread places,
    three lines of context either side; and the lines it makes."""
    new = list(lines)
    parts: list[str] = []
    step = len(lines) // hunks
    for k in range(hunks):
        at = k * step + step // 2
        before, after = lines[at - 3:at], lines[at + 1:at + 4]
        replaced = lines[at] + "  # patched"
        new[at] = replaced
        parts.append("@@\n" + "".join(f" {line}\n" for line in before) + f"-{lines[at]}\n"
                     + f"+{replaced}\n" + "".join(f" {line}\n" for line in after))
    return "".join(parts), new


def _scratch_base() -> str | None:
    shm = "/dev/shm"
    return shm if os.path.isdir(shm) and os.access(shm, os.W_OK | os.X_OK) else None


def _atomic_replace(path: str, data: bytes) -> None:
    directory = os.path.dirname(path)
    fd, temp = tempfile.mkstemp(dir=directory, prefix=".bench-")
    try:
        with os.fdopen(fd, "wb") as out:
            out.write(data)
            out.flush()
            os.fsync(out.fileno())
        os.replace(temp, path)
    except BaseException:
        os.unlink(temp)
        raise


def measure(lines: int, hunks: int, rounds: int) -> dict[str, list[float]]:
    """Seconds per application, one sample per round, per runner."""
    from agents import apply_diff

    from corral.tools import Toolbox

    original = make_file(lines)
    diff, expected_lines = make_diff(original, hunks)
    original_bytes = ("\n".join(original) + "\n").encode()
    expected = ("\n".join(expected_lines) + "\n").encode()
    patch = f"*** Begin Patch\n*** Update File: corral/f.py\n{diff}*** End Patch\n"
    with tempfile.TemporaryDirectory(prefix="corral-bench-patch-", dir=_scratch_base()) as tmp:
        base = os.path.realpath(tmp)
        for name in ("corral", "sdk"):
            os.mkdir(os.path.join(base, name))
        ours_path, sdk_path = os.path.join(base, "corral", "f.py"), os.path.join(base, "sdk",
                                                                                "f.py")
        with Toolbox(base) as box:
            def ours() -> float:
                with open(ours_path, "wb") as out:
                    out.write(original_bytes)
                started = time.perf_counter()
                answer = box.call("apply_patch", {"input": patch, "dialect": "v4a"})
                seconds = time.perf_counter() - started
                if answer.get("ok") is not True:
                    raise RuntimeError(f"apply_patch refused: {answer}")
                return seconds

            def baseline() -> float:
                with open(sdk_path, "wb") as out:
                    out.write(original_bytes)
                started = time.perf_counter()
                with open(sdk_path, encoding="utf-8") as src:
                    text = src.read()
                _atomic_replace(sdk_path, apply_diff(text, diff).encode("utf-8"))
                return time.perf_counter() - started

            runners: dict[str, Callable[[], float]] = {BASELINE: baseline,
                                                       "Toolbox.call apply_patch": ours}
            for run in runners.values():  # warm up, and both give the same bytes
                run()
            with open(ours_path, "rb") as a, open(sdk_path, "rb") as b:
                if not a.read() == b.read() == expected:
                    raise RuntimeError("apply_patch and apply_diff disagree on the result")
            return interleave(runners, rounds)


def collect(quick: bool = False) -> list[Record]:
    """The figures as records (for run.py)."""
    lines, hunks, rounds = (2_000, 10, 5) if quick else (LINES, HUNKS, 21)
    case = f"{hunks} hunks, {lines:,}-line file"
    try:
        import agents  # noqa: F401
    except ImportError:
        return [skipped("patch", f"Toolbox.call apply_patch, {case}",
                        "openai-agents is not installed (pip install -e '.[bench]')",
                        target=TARGET, source="issue 35")]
    samples = measure(lines, hunks, rounds)
    return [
        record("patch", f"{BASELINE}, {case}", samples[BASELINE], unit="ms", scale=1e3),
        record("patch", f"Toolbox.call apply_patch, {case}", samples["Toolbox.call apply_patch"],
               unit="ms", scale=1e3, baseline=f"{BASELINE}, {case}",
               base_values=samples[BASELINE], target=TARGET, source="issue 35"),
    ]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--lines", type=int, default=LINES, help="lines in the file")
    parser.add_argument("--hunks", type=int, default=HUNKS, help="hunks in the patch")
    parser.add_argument("--rounds", type=int, default=21, help="timed rounds per figure")
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    args = parser.parse_args(argv)
    samples = measure(args.lines, args.hunks, args.rounds)
    medians = {label: statistics.median(values) for label, values in samples.items()}
    if args.json:
        json.dump({"lines": args.lines, "hunks": args.hunks, "seconds": medians}, sys.stdout,
                  indent=2)
        print()
        return 0
    base = medians[BASELINE]
    ours = medians["Toolbox.call apply_patch"]
    print(f"a {args.hunks}-hunk patch to a {args.lines:,}-line file (median of {args.rounds} "
          f"rounds; Python {sys.version.split()[0]}, {sys.platform})")
    print(f"{BASELINE:<40}{base * 1e3:9.2f} ms")
    ratio = ours / base
    print(f"{'Toolbox.call apply_patch':<40}{ours * 1e3:9.2f} ms  {ratio:5.2f}x  "
          f"target <= 1.50 {'ok' if ratio <= 1.5 else 'OVER'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
