"""Benchmark: ``write_file`` and ``edit_file`` at depth 1, 5 and 10.

Each against two baselines measured in the same run, on the same file:

* ``Root.write_bytes`` of the same bytes (corral's own contained write:
  atomic replace beneath the root);
* the atomic-replace floor: ``os.open`` of a temporary file by host path,
  ``write``, ``fsync``, ``close``, ``os.rename`` (no containment at all).

Targets (issue 34, tmpfs): ``write_file`` at most 1.5x ``Root.write_bytes``
and ``edit_file`` at most 1.8x; on a disk filesystem ``write_file`` at most
1.3x the floor.  Rounds rotate between the variants (``_common.interleave``)
so a slow spell on a shared machine hits every case alike; ratios are of
medians.  Not a test: it asserts nothing.

    .venv/bin/python benchmarks/bench_tools_write.py [--rounds 15] [--disk DIR]
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from pathlib import Path
from collections.abc import Callable

from _common import Record, interleave, record, time_for
from corral.contained import Root
from corral.tools import Toolbox

DEPTHS = (1, 5, 10)
CONTENT_A = "".join(f"x{i} = 1\n" for i in range(150)).encode()  # about 1.2 KB (issue 34)


def _floor(path: Path) -> Callable[[], object]:
    directory, name = str(path.parent), path.name

    def write() -> None:
        temp = os.path.join(directory, f".{name}.tmp")
        fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o600)
        try:
            os.write(fd, CONTENT_A)
            os.fsync(fd)
        finally:
            os.close(fd)
        os.rename(temp, path)
    return write


def measure(base: Path, depth: int, rounds: int) -> dict[str, list[float]]:
    """Seconds per call of each variant at ``depth`` directories below ``base``."""
    rel = "/".join(f"d{i}" for i in range(depth)) + "/file.py"
    path = base / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(CONTENT_A)
    root = Root(str(base))
    box = Toolbox(root)
    state = {"text": "x0 = 1"}

    def tool_write() -> None:
        answer = box.call("write_file", {"path": rel, "content": CONTENT_A.decode(),
                                         "overwrite": True})
        assert answer["ok"], answer
        state["text"] = "x0 = 1"

    def tool_edit() -> None:
        old = state["text"]
        new = "x0 = 2" if old == "x0 = 1" else "x0 = 1"
        answer = box.call("edit_file", {"path": rel, "oldText": old, "newText": new})
        assert answer["ok"], answer
        state["text"] = new

    floor = _floor(path)

    def contained() -> None:
        root.write_bytes(rel, CONTENT_A)
        state["text"] = "x0 = 1"

    def floor_write() -> None:
        floor()
        state["text"] = "x0 = 1"

    runners: dict[str, Callable[[], float]] = {
        "floor": lambda: time_for(floor_write),
        "Root.write_bytes": lambda: time_for(contained),
        "write_file": lambda: time_for(tool_write),
        "edit_file": lambda: time_for(tool_edit),
    }
    try:
        return interleave(runners, rounds)
    finally:
        box.close()
        root.close()


def collect(quick: bool = False, disk: str | None = None) -> list[Record]:
    rounds = 5 if quick else 15
    records: list[Record] = []
    places = [("tmpfs", "/dev/shm" if os.path.isdir("/dev/shm") else None)]
    places.append(("disk", disk or str(Path.home())))
    for where, parent in places:
        with tempfile.TemporaryDirectory(prefix="corral-bench-write-", dir=parent) as tmp:
            for depth in DEPTHS:
                samples = measure(Path(tmp) / f"depth{depth}", depth, rounds)
                edit = samples["edit_file"]
                group = f"write tools ({where})"
                records.append(record(group, f"write_file depth {depth}", samples["write_file"],
                                      unit="us", scale=1e6, baseline="Root.write_bytes",
                                      base_values=samples["Root.write_bytes"],
                                      target=("<=", 1.5) if where == "tmpfs" else None,
                                      source="issue 34"))
                records.append(record(group, f"edit_file depth {depth}", edit, unit="us",
                                      scale=1e6, baseline="Root.write_bytes",
                                      base_values=samples["Root.write_bytes"],
                                      target=("<=", 1.8) if where == "tmpfs" else None,
                                      source="issue 34"))
                records.append(record(group, f"write_file vs floor depth {depth}",
                                      samples["write_file"], unit="us", scale=1e6,
                                      baseline="atomic-replace floor",
                                      base_values=samples["floor"],
                                      target=("<=", 1.3) if where == "disk" else None,
                                      source="issue 34"))
                records.append(record(group, f"Root.write_bytes depth {depth}",
                                      samples["Root.write_bytes"], unit="us", scale=1e6,
                                      baseline="atomic-replace floor",
                                      base_values=samples["floor"]))
    return records


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--disk", help="a directory on a disk filesystem (default: $HOME)")
    options = parser.parse_args()
    print(f"Python {sys.version.split()[0]}; medians of interleaved rounds")
    print(f"{'group':20} {'case':34} {'median us':>10} {'ratio':>7} {'baseline':>22} "
          f"{'target':>8}")
    for rec in collect(options.quick, options.disk):
        ratio = "" if rec["ratio"] is None else f"{rec['ratio']:.2f}x"
        print(f"{rec['group']:20} {rec['case']:34} {rec['median']:10.1f} {ratio:>7} "
              f"{rec['baseline'] or '':>22} {rec['target'] or '':>8}")
    print("(medians over interleaved rounds: noisy on a shared machine)")


if __name__ == "__main__":
    main()
