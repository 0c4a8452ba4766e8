"""Compare two corral trees' benchmark ratios fairly, in one sitting.

    python benchmarks/compare_trees.py OLD_TREE NEW_TREE --only search,tools --repeat 4

Runs each tree's own ``benchmarks/run.py`` (``--only GROUPS``) ``--repeat``
times each, in ABBA order (old new, new old, old new, ...), so that a drift
of the machine or of the disk's state during the comparison lands on both
trees alike instead of on whichever tree ran second.  Each tree runs with
its own ``.venv/bin/python`` when it has one (else this Python), and with
``PYTHONPATH`` pointing at its ``src/`` first, so the tree's own code is what
is imported whatever the venv has installed.  ``--bench-from new`` runs the
new tree's ``run.py`` for both trees (the same benchmark definitions against
each tree's code) instead of each tree's own.

Every row of a run is a ratio against a baseline measured in the same run
(see README.md).  For each row this prints each tree's median ratio over the
runs, the change (new's median over old's, inverted for rates, so above 1
is always worse), the spread of the per-pair changes (each new run against
the old run next to it) and how many pairs were worse; rows worse by more
than ``--threshold`` (5 %) are marked ``<<``.  Nothing here fails because a
figure is slow: the exit status is non-zero only when a run failed.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

Key = tuple[str, str]
SIDES = ("old", "new")


def python_for(tree: Path, given: str | None) -> str:
    """The interpreter to run ``tree``'s benchmarks with: ``given``, else the
    tree's own venv's, else this one."""
    if given:
        return given
    own = tree / ".venv" / "bin" / "python"
    return str(own) if own.exists() else sys.executable


def run_once(side: str, tree: Path, python: str, runner: Path, groups: str, quick: bool,
             work: Path, index: int) -> dict[str, Any]:
    """One ``run.py`` of ``tree``; its records and how the run went."""
    name = f"{index:02d}-{side}"
    out_dir, json_path, log_path = work / name, work / f"{name}.json", work / f"{name}.log"
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(
        [str(tree / "src")] + ([env["PYTHONPATH"]] if env.get("PYTHONPATH") else []))
    cmd = [python, str(runner), "--only", groups, "--out", str(out_dir), "--json", str(json_path)]
    if quick:
        cmd.append("--quick")
    load = os.getloadavg()[0]
    started = time.perf_counter()
    with open(log_path, "w") as log:
        code = subprocess.call(cmd, cwd=tree, env=env, stdout=log, stderr=subprocess.STDOUT)
    seconds = time.perf_counter() - started
    records = json.loads(json_path.read_text())["records"] if json_path.exists() else []
    print(f"  run {index + 1} {side}: {seconds:.0f} s, load {load:.1f} -> "
          f"{os.getloadavg()[0]:.1f}" + (f", EXIT {code} (see {log_path})" if code else ""),
          flush=True)
    return {"side": side, "tree": str(tree), "exit": code, "seconds": seconds,
            "load_start": load, "records": records, "log": str(log_path)}


def ratios(run: dict[str, Any]) -> dict[Key, tuple[float, bool]]:
    """(ratio, higher is better) of each row of a run that has one."""
    out: dict[Key, tuple[float, bool]] = {}
    for rec in run["records"]:
        if rec.get("ratio") and not rec.get("skipped"):
            out[(rec["group"], rec["case"])] = (rec["ratio"], bool(rec.get("higher_is_better")))
    return out


def cost(ratio: float, higher_is_better: bool) -> float:
    """A ratio as a cost: lower is better for every row."""
    return 1 / ratio if higher_is_better else ratio


def compare(runs: list[dict[str, Any]], threshold: float) -> tuple[list[dict[str, Any]], str]:
    """Per row: each tree's median ratio, the change and the per-pair changes;
    and the table as text, worst change first."""
    per_side: dict[str, list[dict[Key, tuple[float, bool]]]] = {
        side: [ratios(r) for r in runs if r["side"] == side] for side in SIDES}
    every = per_side["old"] + per_side["new"]
    keys = [k for k in per_side["new"][0] if all(k in rs for rs in every)] \
        if per_side["new"] and per_side["old"] else []
    rows: list[dict[str, Any]] = []
    for key in keys:
        hib = per_side["new"][0][key][1]
        old = [cost(*rs[key]) for rs in per_side["old"]]
        new = [cost(*rs[key]) for rs in per_side["new"]]
        change = statistics.median(new) / statistics.median(old)
        pairs = [n / o for o, n in zip(old, new)]  # run k of each side ran next to each other
        rows.append({
            "group": key[0], "case": key[1], "higher_is_better": hib,
            "old_ratios": [rs[key][0] for rs in per_side["old"]],
            "new_ratios": [rs[key][0] for rs in per_side["new"]],
            "old": statistics.median(rs[key][0] for rs in per_side["old"]),
            "new": statistics.median(rs[key][0] for rs in per_side["new"]),
            "change": change, "pairs": pairs, "worse": change > 1 + threshold})
    rows.sort(key=lambda r: -r["change"])
    lines = [f"{'change':>6}  {'pairs min..max':>13} {'worse':>5}  {'group':8} {'case':70} "
             f"{'old':>8}    {'new':>8}"]
    for r in rows:
        worse = sum(p > 1 for p in r["pairs"])
        lines.append(
            f"{r['change']:6.3f}  {min(r['pairs']):6.3f}..{max(r['pairs']):5.3f} "
            f"{worse:>2}/{len(r['pairs']):<2}  {r['group']:8} {r['case'][:70]:70} "
            f"{r['old']:8.3g} -> {r['new']:8.3g}{' <<' if r['worse'] else ''}")
    lines.append(f"worse by more than {threshold:.0%}: {sum(r['worse'] for r in rows)} of "
                 f"{len(rows)} (change: new's median ratio over old's, rates inverted; "
                 "above 1 is worse)")
    missing = sorted({k for rs in every for k in rs} - set(keys))
    if missing:
        lines.append("rows not in every run (not compared): "
                     + "; ".join(f"{g}: {c}" for g, c in missing))
    return rows, "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("old", type=Path, help="the baseline tree (a checkout of corral)")
    parser.add_argument("new", type=Path, help="the tree to compare with it")
    parser.add_argument("--only", required=True,
                        help="comma-separated groups of run.py (both trees must have them)")
    parser.add_argument("--repeat", type=int, default=2,
                        help="runs of each tree (default 2: old new new old)")
    parser.add_argument("--old-python", help="interpreter for the old tree "
                        "(default: OLD/.venv/bin/python if present, else this one)")
    parser.add_argument("--new-python", help="likewise for the new tree")
    parser.add_argument("--bench-from", choices=("own", "old", "new"), default="own",
                        help="whose benchmarks/run.py runs: each tree's own (default), or one "
                        "tree's for both (the same benchmark definitions on each tree's code)")
    parser.add_argument("--quick", action="store_true", help="pass --quick to run.py")
    parser.add_argument("--threshold", type=float, default=0.05,
                        help="mark rows whose change exceeds 1 + this (default 0.05)")
    parser.add_argument("--work", type=Path,
                        help="keep each run's log, RESULTS.md and JSON here (default: a "
                        "temporary directory, deleted)")
    parser.add_argument("--json", type=Path, help="write the runs and the comparison here")
    args = parser.parse_args(argv)
    if args.repeat < 1:
        parser.error("--repeat must be at least 1")
    trees = {"old": args.old.resolve(), "new": args.new.resolve()}
    for side, tree in trees.items():
        if not (tree / "benchmarks" / "run.py").exists():
            parser.error(f"{side} tree {tree} has no benchmarks/run.py")
    pythons = {"old": python_for(trees["old"], args.old_python),
               "new": python_for(trees["new"], args.new_python)}
    runners = {side: trees[side if args.bench_from == "own" else args.bench_from]
               / "benchmarks" / "run.py" for side in SIDES}
    for side in SIDES:
        print(f"{side}: {trees[side]} (python {pythons[side]}, runs {runners[side]})")
    with tempfile.TemporaryDirectory(prefix="corral-compare-") as tmp:
        work = args.work or Path(tmp)
        work.mkdir(parents=True, exist_ok=True)
        runs: list[dict[str, Any]] = []
        for k in range(args.repeat):
            order = SIDES if k % 2 == 0 else SIDES[::-1]  # ABBA: drift lands on both
            for side in order:
                runs.append(run_once(side, trees[side], pythons[side], runners[side], args.only,
                                     args.quick, work, len(runs)))
        rows, table = compare(runs, args.threshold)
    print()
    print(table)
    if args.json:
        args.json.write_text(json.dumps({"trees": {k: str(v) for k, v in trees.items()},
                                         "groups": args.only, "repeat": args.repeat,
                                         "runs": runs, "rows": rows}, indent=1) + "\n")
    failed = [r for r in runs if r["exit"]]
    if failed:
        print("failed runs: " + ", ".join(f"{r['side']} (exit {r['exit']}, {r['log']})"
                                          for r in failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
