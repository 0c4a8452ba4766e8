"""The one summary of scripts/test.sh: each lane's counts from its JUnit
file, then the total over all lanes as the last line,
``corral: N passed, M failed, K skipped``.  Exits 1 when a test failed or
errored, a lane's file is missing or unreadable, or no test ran at all."""

from __future__ import annotations

import argparse
import sys
import xml.etree.ElementTree as ET
from pathlib import Path


def _counts(path: Path) -> tuple[int, int, int]:
    """(passed, failed, skipped) of one JUnit file; errors count as failed."""
    root = ET.parse(path).getroot()  # noqa: S314 (pytest's own files, this run's)
    suites = [root] if root.tag == "testsuite" else list(root.iter("testsuite"))
    tests = failed = skipped = 0
    for suite in suites:
        tests += int(suite.get("tests", 0))
        failed += int(suite.get("failures", 0)) + int(suite.get("errors", 0))
        skipped += int(suite.get("skipped", 0))
    return tests - failed - skipped, failed, skipped


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Sum scripts/test.sh's lanes.")
    parser.add_argument("files", nargs="+", type=Path)
    parser.add_argument("--seconds", type=int, default=None)
    args = parser.parse_args(argv)
    total = [0, 0, 0]
    broken = False
    for path in args.files:
        try:
            counts = _counts(path)
        except (OSError, ET.ParseError) as exc:
            print(f"   lane {path.stem}: no results ({exc})")
            broken = True
            continue
        print(f"   lane {path.stem}: {counts[0]} passed, {counts[1]} failed, "
              f"{counts[2]} skipped")
        total = [a + b for a, b in zip(total, counts)]
    passed, failed, skipped = total
    took = f" in {args.seconds} s" if args.seconds is not None else ""
    print(f"== {len(args.files)} lanes{took}")
    print(f"corral: {passed} passed, {failed} failed, {skipped} skipped")
    return 1 if failed or broken or passed == 0 else 0


if __name__ == "__main__":
    sys.exit(main())
