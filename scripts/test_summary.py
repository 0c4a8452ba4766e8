"""The one summary of scripts/test.sh: each lane's counts from its JUnit
file, then the total over all lanes as the last line, in pytest's own form:
``===== N passed, M failed, K skipped, X xfailed in S.00s =====`` (zero
counts left out, as pytest does).  Exits 1 when a test failed or errored,
a lane's file is missing or unreadable, or no test ran at all."""

from __future__ import annotations

import argparse
import sys
import xml.etree.ElementTree as ET
from dataclasses import dataclass, fields
from pathlib import Path


@dataclass
class Counts:
    passed: int = 0
    failed: int = 0
    errors: int = 0
    skipped: int = 0
    xfailed: int = 0

    def __add__(self, other: Counts) -> Counts:
        return Counts(*(getattr(self, f.name) + getattr(other, f.name) for f in fields(self)))

    def words(self) -> str:
        said = [f"{getattr(self, f.name)} {f.name}" for f in fields(self)
                if getattr(self, f.name) or f.name == "passed"]
        return ", ".join(said)


def _counts(path: Path) -> Counts:
    """One JUnit file's counts, test case by test case (pytest files an
    xfail as a skip of type pytest.xfail; an xpass(strict) as a failure)."""
    root = ET.parse(path).getroot()  # noqa: S314 (pytest's own files, this run's)
    counts = Counts()
    for case in root.iter("testcase"):
        if case.find("failure") is not None:
            counts.failed += 1
        elif case.find("error") is not None:
            counts.errors += 1
        elif (skip := case.find("skipped")) is not None:
            if skip.get("type") == "pytest.xfail":
                counts.xfailed += 1
            else:
                counts.skipped += 1
        else:
            counts.passed += 1
    return counts


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Sum scripts/test.sh's lanes.")
    parser.add_argument("files", nargs="+", type=Path)
    parser.add_argument("--seconds", type=int, default=None)
    args = parser.parse_args(argv)
    total = Counts()
    broken = False
    for path in args.files:
        try:
            counts = _counts(path)
        except (OSError, ET.ParseError) as exc:
            print(f"   lane {path.stem}: no results ({exc})")
            broken = True
            continue
        print(f"   lane {path.stem}: {counts.words()}")
        total = total + counts
    took = f" in {args.seconds:.2f}s" if args.seconds is not None else ""
    print(f"corral, {len(args.files)} lanes: {total.words()}")
    print(f"{'=' * 20} {total.words()}{took} {'=' * 20}")
    return 1 if total.failed or total.errors or broken or total.passed == 0 else 0


if __name__ == "__main__":
    sys.exit(main())
