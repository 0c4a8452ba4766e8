"""The lint gate of .ci/run: ``mypy --strict`` and ``ruff check`` over
src/corral (both configured in pyproject.toml), held to a ratchet.

The goal is zero findings.  While owners clean their modules,
``.ci/lint-baseline.json`` lists each file that still has findings, with
their count.  The gate fails when

* a file not in the baseline has any finding (new code is clean), or
* a file has more findings than its baseline allows (nothing gets worse),
* a file has fewer findings than its baseline says (lower the number, so the
  gain is kept: ``python scripts/lint_ratchet.py --update``).

It prints every finding of files over their allowance, and a summary line
per tool naming what remains, so the debt stays visible until it is gone.
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
from collections import Counter
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
BASELINE = REPO / ".ci" / "lint-baseline.json"
TOOLS = {
    # tool -> (command, regex for one finding's file at the start of a line)
    "mypy": (["mypy"], r"^(src/[^:]+\.pyi?):\d+: error:"),
    "ruff": (["ruff", "check", "--output-format", "concise", "src/corral"],
             r"^(src/[^:]+\.pyi?):\d+:\d+: "),
}


def _findings(tool: str, bindir: Path) -> tuple[Counter[str], list[str]]:
    command, pattern = TOOLS[tool]
    done = subprocess.run([str(bindir / command[0]), *command[1:]], cwd=REPO,
                          capture_output=True, text=True, check=False)
    lines = (done.stdout + done.stderr).splitlines()
    counts: Counter[str] = Counter()
    kept = []
    for line in lines:
        match = re.match(pattern, line)
        if match:
            counts[match.group(1)] += 1
            kept.append(line)
    if done.returncode not in (0, 1) or (done.returncode == 1 and not counts):
        raise SystemExit(f"{tool} did not run cleanly (exit {done.returncode}):\n"
                         + "\n".join(lines[-20:]))
    return counts, kept


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="mypy --strict and ruff, held to a ratchet.")
    parser.add_argument("--bin", type=Path, default=Path(sys.executable).parent,
                        help="where mypy and ruff are (default: beside this python)")
    parser.add_argument("--update", action="store_true",
                        help="write the current counts as the new baseline")
    args = parser.parse_args(argv)
    baseline = json.loads(BASELINE.read_text()) if BASELINE.exists() else {}
    failed = False
    current: dict[str, dict[str, int]] = {}
    for tool in TOOLS:
        counts, lines = _findings(tool, args.bin)
        current[tool] = dict(sorted(counts.items()))
        allowed = baseline.get(tool, {})
        worse = {f: n for f, n in counts.items() if n > allowed.get(f, 0)}
        better = {f: n for f, n in allowed.items() if counts.get(f, 0) < n}
        for line in lines:
            if line.split(":", 1)[0] in worse:
                print(line)
        for file, n in sorted(worse.items()):
            print(f"lint: {tool}: {file} has {n} findings, {allowed.get(file, 0)} allowed")
        for file, n in sorted(better.items()):
            print(f"lint: {tool}: {file} is down to {counts.get(file, 0)} from {n}: "
                  f"run scripts/lint_ratchet.py --update to keep the gain")
        failed = failed or bool(worse) or (bool(better) and not args.update)
        left = ", ".join(f"{Path(f).relative_to('src/corral')} {n}" for f, n in
                         sorted(counts.items())) or "none"
        print(f"lint: {tool}: {sum(counts.values())} findings left ({left})")
    if args.update:
        BASELINE.write_text(json.dumps(current, indent=2) + "\n")
        print(f"lint: baseline written to {BASELINE.relative_to(REPO)}")
        return 0
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
