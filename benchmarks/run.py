"""Every corral benchmark in one run, each against its baseline measured in
the same run: writes ``benchmarks/RESULTS.md`` and ``benchmarks/ratios.svg``.

    pip install -e '.[bench]'          # ripgrep, matplotlib, mcp
    python benchmarks/run.py           # about 5 to 8 minutes on 2 cores
    python benchmarks/run.py --quick   # a smoke run: small fixtures, few rounds

Groups (``--only`` picks some): ``open`` (bench_open.py), ``root`` (makedirs
and write_bytes, here), ``tools`` (read_file and list_directory from
bench_tools_read.py; write_file, edit_file here), ``search`` (bench_search.py,
on its generated 20,000-file tree), ``bigfile`` (a read_file window of a
2 GiB file, here), ``mcp`` (bench_mcp.py; the reference server when npm
can install it), ``extract`` (bench_extract.py, a 10,000-member tar) and
``tokens`` (bench_tokens.py: tokens a model reads, against the reference
server; counts, not times), ``patch`` (bench_patch.py, apply_patch
against the Agents SDK's apply_diff) and ``write`` (bench_tools_write.py:
write_file and edit_file at depth 1, 5 and 10 on tmpfs and on the disk,
against Root.write_bytes, the atomic-replace floor and the Agents SDK
sandbox's write).

A run of some groups (``--only``) replaces their sections of RESULTS.md
and keeps the others as an earlier run wrote them; each section says under
its heading which run it came from.

Every figure is the median of several rounds, with min and max; the rounds
of a case and of its baseline are interleaved (the order rotating), so a
busy spell on a shared machine hits both; a ratio is of the medians.  The
exit status is non-zero only when something failed to run, never for a
slow figure.
"""

from __future__ import annotations

import argparse
import datetime
import hashlib
import importlib.metadata
import itertools
import json
import os
import platform
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import traceback
from pathlib import Path
from typing import Any, Callable

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from _common import (Record, have_gnu_time, interleave, record, spawn,  # noqa: E402
                     time_for)

FIXTURES = HERE / "_fixtures"
GROUPS = ("open", "root", "tools", "search", "bigfile", "mcp", "extract", "hostile", "tokens",
          "patch", "write")
TITLES = {
    "open": "Root.open + read + close of a 4 KiB file, against open() of the same absolute path",
    "root": "Root.makedirs and Root.write_bytes, against os.makedirs and a plain write",
    "tools": "Toolbox.call, against the plain-Python equivalent of each tool",
    "search": "glob and grep on the generated tree, against os.walk, pathlib and ripgrep",
    "bigfile": "read_file of a 2,000-line window of a 2 GiB file, in a child process",
    "mcp": "corral serve over MCP stdio, against the reference server "
           "(@modelcontextprotocol/server-filesystem)",
    "extract": "Root.extract of a 10,000-member tar, against tarfile.extractall(filter=\"data\")",
    "patch": "apply_patch of a 50-hunk patch to a 10,000-line file, against the Agents SDK's "
             "apply_diff and one atomic replace",
    "write": "write_file and edit_file at depth 1, 5 and 10, on tmpfs and on the disk, against "
             "Root.write_bytes, the atomic-replace floor and the Agents SDK sandbox's write "
             "(issue 34)",
    "hostile": "inputs built to make a tool work hard, at three sizes, against the same tool "
               "on a benign input of the same size (issue 12)",
    "tokens": "what a model reads (o200k tokens, gpt-tokenizer) from corral serve, against the "
              "reference server on the same fixture and session (issue 28)",
}


# -- root: makedirs and write_bytes ------------------------------------------------

def collect_root(quick: bool) -> list[Record]:
    from corral.contained import Root

    rounds = 3 if quick else 15
    data = os.urandom(4096)
    with tempfile.TemporaryDirectory(prefix="corral-bench-") as tmp:
        base = os.path.realpath(tmp)
        for name in ("mk-root", "mk-os", "w"):
            os.mkdir(os.path.join(base, name))
        root = Root(base)
        numbers = itertools.count()

        def root_makedirs() -> None:
            root.makedirs(f"mk-root/n{next(numbers)}/b/c/d/e")

        def os_makedirs() -> None:
            os.makedirs(f"{base}/mk-os/n{next(numbers)}/b/c/d/e")

        def plain_write() -> None:
            with open(f"{base}/w/plain.bin", "wb") as f:
                f.write(data)

        def plain_write_fsync() -> None:
            with open(f"{base}/w/plain-fsync.bin", "wb") as f:
                f.write(data)
                f.flush()
                os.fsync(f.fileno())

        def root_write() -> None:
            root.write_bytes("w/root.bin", data, fsync=False)

        def root_write_fsync() -> None:
            root.write_bytes("w/root-fsync.bin", data)

        def emptied(name: str) -> Callable[[], None]:
            def empty() -> None:
                shutil.rmtree(os.path.join(base, name))
                os.mkdir(os.path.join(base, name))
            return empty

        cases = {
            "os.makedirs": (os_makedirs, emptied("mk-os")),
            "Root.makedirs": (root_makedirs, emptied("mk-root")),
            "plain write": (plain_write, None),
            "plain write + fsync": (plain_write_fsync, None),
            "write_bytes no fsync": (root_write, None),
            "write_bytes fsync": (root_write_fsync, None),
        }
        samples = interleave({name: _sampler(fn, cleanup) for name, (fn, cleanup) in cases.items()},
                             rounds)
        root.close()

    def rec(case: str, name: str, base_name: str | None = None, **extra: Any) -> Record:
        return record("root", case, samples[name], unit="us", scale=1e6,
                      baseline=LABELS_ROOT[base_name] if base_name else None,
                      base_values=samples[base_name] if base_name else None, **extra)

    return [
        rec(LABELS_ROOT["os.makedirs"], "os.makedirs"),
        rec(LABELS_ROOT["Root.makedirs"], "Root.makedirs", "os.makedirs"),
        rec(LABELS_ROOT["plain write"], "plain write"),
        rec(LABELS_ROOT["plain write + fsync"], "plain write + fsync", "plain write"),
        rec(LABELS_ROOT["write_bytes no fsync"], "write_bytes no fsync", "plain write"),
        rec(LABELS_ROOT["write_bytes fsync"], "write_bytes fsync", "plain write",
            note=f"{_ratio(samples, 'write_bytes fsync', 'plain write + fsync'):.2f}x "
                 "plain write + fsync"),
    ]


LABELS_ROOT = {
    "os.makedirs": "makedirs 5 new levels: os.makedirs (absolute path)",
    "Root.makedirs": "makedirs 5 new levels: Root.makedirs",
    "plain write": "write 4 KiB: plain open/write/close",
    "plain write + fsync": "write 4 KiB: plain open/write/fsync/close",
    "write_bytes no fsync": "write 4 KiB: Root.write_bytes (atomic, fsync=False)",
    "write_bytes fsync": "write 4 KiB: Root.write_bytes (atomic, fsync=True)",
}


def _sampler(fn: Callable[[], object], cleanup: Callable[[], None] | None = None
             ) -> Callable[[], float]:
    """A runner for ``interleave``: seconds per call over about 30 ms of
    calls; ``cleanup`` runs after each sample, untimed."""
    fn()  # the first call pays for imports and caches
    if cleanup:
        cleanup()

    def run() -> float:
        seconds = time_for(fn)
        if cleanup:
            cleanup()
        return seconds
    return run


def _ratio(samples: dict[str, list[float]], a: str, b: str) -> float:
    return statistics.median(samples[a]) / statistics.median(samples[b])


# -- tools: write_file, edit_file (read_file, list_directory: bench_tools_read) ------

def collect_tools(quick: bool) -> list[Record]:
    import bench_tools_read
    from corral.tools import Toolbox

    records = bench_tools_read.collect(quick)
    rounds = 3 if quick else 15
    with tempfile.TemporaryDirectory(prefix="corral-bench-") as tmp:
        base = Path(os.path.realpath(tmp))
        source = bench_tools_read.make_file(base / "edit")  # 200 lines, about 12 KB
        text = source.read_text()
        plain_copy = base / "edit" / "src" / "plain.py"
        plain_copy.write_text(text)
        (base / "out").mkdir()
        box = Toolbox(base)

        write_args = {"path": "out/written.py", "content": text, "overwrite": True}
        edits = [{"path": "edit/src/module.py", "oldText": "value_100 = compute(alpha=100,",
                  "newText": "value_100 = compute(alpha=-100,"}]
        edits.append({**edits[0], "oldText": edits[0]["newText"], "newText": edits[0]["oldText"]})
        toggle = itertools.cycle([0, 1])
        plain_toggle = itertools.cycle([0, 1])

        def call(name: str, args: dict[str, Any]) -> dict[str, Any]:
            out = box.call(name, args)
            if not out.get("ok"):
                raise RuntimeError(f"{name} failed: {json.dumps(out)[:300]}")
            return out

        def tool_write() -> None:
            call("write_file", write_args)

        def plain_write() -> None:
            with open(base / "out" / "plain.py", "w") as f:
                f.write(text)

        def plain_write_fsync() -> None:
            with open(base / "out" / "plain-fsync.py", "w") as f:
                f.write(text)
                f.flush()
                os.fsync(f.fileno())

        def tool_edit() -> None:
            call("edit_file", edits[next(toggle)])

        def plain_edit() -> None:
            edit = edits[next(plain_toggle)]
            with open(plain_copy) as f:
                content = f.read()
            with open(plain_copy, "w") as f:
                f.write(content.replace(edit["oldText"], edit["newText"], 1))

        cases = {"plain write": plain_write, "plain write + fsync": plain_write_fsync,
                 "write_file": tool_write, "plain edit": plain_edit, "edit_file": tool_edit}
        samples = interleave({name: _sampler(fn) for name, fn in cases.items()}, rounds)
        box.close()

    labels = {
        "plain write": "write_file: plain open/write/close",
        "plain write + fsync": "write_file: plain open/write/fsync/close",
        "write_file": "write_file: Toolbox.call write_file (atomic, fsync)",
        "plain edit": "edit_file: plain read + str.replace + write",
        "edit_file": "edit_file: Toolbox.call edit_file (atomic, fsync)",
    }
    baselines = {"plain write + fsync": "plain write", "write_file": "plain write",
                 "edit_file": "plain edit"}
    for name, label in labels.items():
        base_name = baselines.get(name)
        note = None
        if name in ("write_file", "edit_file"):
            note = (f"{_ratio(samples, name, 'plain write + fsync'):.2f}x plain write + fsync "
                    "of the same bytes; the issues set no target")
        elif base_name:
            note = "the issues set no target"
        records.append(record(
            "tools", label, samples[name], unit="us", scale=1e6,
            baseline=labels[base_name] if base_name else None,
            base_values=samples[base_name] if base_name else None, note=note))
    return records


# -- bigfile: a window of a 2 GiB file, time and peak RSS in a child --------------------

LINE_BYTES = 64
BLOCK_LINES = 16384  # a 1 MiB block


def _text_block() -> bytes:
    lines = []
    for i in range(BLOCK_LINES):
        head = f"{i:06d} the quick brown fox jumps over the lazy dog "
        lines.append((head + "." * (LINE_BYTES - 1 - len(head)) + "\n").encode())
    return b"".join(lines)


def _make_bigfile(path: Path, blocks: int) -> int:
    """A text file of ``blocks`` MiB; return its line count."""
    block = _text_block()
    assert len(block) == 1 << 20
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    try:
        for _ in range(blocks):
            os.write(fd, block)
        os.fsync(fd)  # writeback done now, not during the measurements
    finally:
        os.close(fd)
    return blocks * BLOCK_LINES


def _child_bigfile(mode: str, path: str, offset: int) -> None:
    """In the child: one read of the window at ``offset``; prints JSON."""
    limit = 2000
    if mode == "corral":
        from corral.tools import Toolbox
        box = Toolbox(os.path.dirname(path))
        started = time.perf_counter()
        out = box.call("read_file", {"path": os.path.basename(path), "offset": offset,
                                     "limit": limit})
        seconds = time.perf_counter() - started
        result = {"seconds": seconds, "ok": out["ok"], "code": out.get("code"),
                  "lines": out.get("totalLines"), "first": (out.get("content") or "")[:40]}
    else:  # the unprotected equivalent: one streaming pass, digest, count, window
        started = time.perf_counter()
        digest = hashlib.sha256()
        window: list[str] = []
        lineno, end, carry = 1, offset + limit, b""
        with open(path, "rb", buffering=0) as f:
            while chunk := f.read(1 << 20):
                digest.update(chunk)
                n = chunk.count(b"\n")
                if lineno + n >= offset and lineno < end:
                    parts = (carry + chunk).split(b"\n")
                    for i, part in enumerate(parts[:-1]):
                        if offset <= lineno + i < end:
                            window.append(part.decode())
                    carry = parts[-1]
                else:
                    carry = chunk[chunk.rfind(b"\n") + 1:] if n else carry + chunk
                lineno += n
        digest.hexdigest()
        seconds = time.perf_counter() - started
        result = {"seconds": seconds, "ok": True, "lines": lineno - 1 + (1 if carry else 0),
                  "first": f"{offset}\t{window[0]}"[:40] if window else ""}
    print(json.dumps(result))


def collect_bigfile(quick: bool) -> list[Record]:
    blocks = 128 if quick else 2048
    rounds = 1 if quick else 3
    size_mib = blocks
    FIXTURES.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="bigfile-", dir=FIXTURES) as tmp:
        big = Path(tmp) / "big.txt"
        print(f"  writing a {size_mib} MiB text file ...", flush=True)
        lines = _make_bigfile(big, blocks)
        sparse = Path(tmp) / "sparse.txt"
        with open(sparse, "wb") as f:
            f.truncate(blocks << 20)  # all hole: reads as NUL bytes
        windows = {"start": 1, "end": lines - 1999}

        def child(mode: str, path: Path, offset: int) -> Callable[[], float]:
            key = (mode, path.name, offset)

            def run() -> float:
                _, rss, out = spawn([sys.executable, __file__, "--child-bigfile", mode,
                                     str(path), str(offset)])
                data = json.loads(out)
                data["rss"] = rss
                results.setdefault(key, []).append(data)
                return data["seconds"]
            return run

        results: dict[tuple[str, str, int], list[dict[str, Any]]] = {}
        runners = {}
        for where, offset in windows.items():
            runners[f"plain {where}"] = child("plain", big, offset)
            runners[f"corral {where}"] = child("corral", big, offset)
        runners["corral sparse"] = child("corral", sparse, 1)
        samples = interleave(runners, rounds)

    # Issue 4 asks that a window of a multi-GB file is read without loading
    # the file, and sets no number: the peak RSS may exceed that of the same
    # child refusing the sparse file (interpreter, imports, one chunk) by at
    # most a tenth of the file.
    refused = results[("corral", "sparse.txt", 1)]
    floor_mb = statistics.median(d["rss"] for d in refused) / 1024
    budget_mb = size_mib / 10
    records: list[Record] = []
    for where, offset in windows.items():
        plain = results[("plain", "big.txt", offset)]
        ours = results[("corral", "big.txt", offset)]
        for data in ours:
            if not data["ok"] or data["lines"] != lines:
                raise RuntimeError(f"read_file of the big file answered {data}")
        if {d["first"] for d in ours} != {d["first"] for d in plain}:
            raise RuntimeError(f"windows differ: {ours[0]['first']!r} {plain[0]['first']!r}")
        what = f"{size_mib} MiB text, lines {offset}-{offset + 1999}"
        base_label = f"{what}: plain streaming read+sha256+count"
        records.append(record("bigfile", base_label, samples[f"plain {where}"], unit="s",
                              rss_mb=max(d["rss"] for d in plain) / 1024, count=[lines]))
        rss_mb = max(d["rss"] for d in ours) / 1024
        records.append(record(
            "bigfile", f"{what}: Toolbox.call read_file", samples[f"corral {where}"], unit="s",
            baseline=base_label, base_values=samples[f"plain {where}"],
            rss_mb=rss_mb, count=[lines],
            note=f"RSS floor {floor_mb:.1f} MB: the same child refusing the sparse file"))
        records[-1].update(target=f"peak RSS <= floor + {budget_mb:.0f} MB", source="issue 4",
                           met=rss_mb <= floor_mb + budget_mb)
    codes = sorted({str(d.get("code")) for d in refused})
    records.append(record(
        "bigfile", f"{size_mib} MiB sparse file (made with truncate): Toolbox.call read_file",
        samples["corral sparse"], unit="s", rss_mb=max(d["rss"] for d in refused) / 1024,
        note=f"answered {'/'.join(codes)}: a hole reads as NUL bytes, so it is refused as "
             "binary in the first chunk (hence the text file above for the window)"))
    return records


# -- the run ----------------------------------------------------------------------

def collect_open(quick: bool) -> list[Record]:
    import bench_open
    return bench_open.collect(quick)


def collect_search(quick: bool) -> list[Record]:
    import bench_search
    return bench_search.collect(quick)


def collect_mcp(quick: bool) -> list[Record]:
    import bench_mcp
    return bench_mcp.collect(quick)


def collect_extract(quick: bool) -> list[Record]:
    import bench_extract
    return bench_extract.collect(quick)


def collect_tokens(quick: bool) -> list[Record]:
    import bench_tokens
    return bench_tokens.collect(quick)


def collect_patch(quick: bool) -> list[Record]:
    import bench_patch
    return bench_patch.collect(quick)


def collect_write(quick: bool) -> list[Record]:
    import bench_tools_write
    return bench_tools_write.collect(quick)


def collect_hostile(quick: bool) -> list[Record]:
    """The families of every bench_hostile_*.py (search, edit), in one table."""
    import importlib

    records: list[Record] = []
    for path in sorted(HERE.glob("bench_hostile_*.py")):
        records += importlib.import_module(path.stem).collect(quick)
    return records


COLLECTORS: dict[str, Callable[[bool], list[Record]]] = {
    "open": collect_open, "root": collect_root, "tools": collect_tools,
    "search": collect_search, "bigfile": collect_bigfile, "mcp": collect_mcp,
    "extract": collect_extract, "hostile": collect_hostile, "tokens": collect_tokens,
    "patch": collect_patch, "write": collect_write,
}


def _run_text(args: list[str]) -> str | None:
    try:
        done = subprocess.run(args, capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.SubprocessError):
        return None
    return done.stdout.strip() if done.returncode == 0 else None


def _version(dist: str) -> str | None:
    try:
        return importlib.metadata.version(dist)
    except importlib.metadata.PackageNotFoundError:
        return None


def machine() -> dict[str, str]:
    """What the figures were measured on."""
    cpu = None
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
    except OSError:
        cpu = _run_text(["sysctl", "-n", "machdep.cpu.brand_string"])
    cores = os.cpu_count() or 0
    usable = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else cores
    from corral.contained import backend_report
    report = backend_report()
    fast = report.get("fast_path", {})
    native = report.get("native", {})
    available = ", ".join(report.get("available", []))
    backend = (f"default {report.get('backend')}; available {available}"
               f"; openat2 {'yes' if fast.get('openat2') else 'no'}"
               f" ({fast.get('openat2_reason')})"
               f"; native module {'built' if native.get('built') else 'not built'}"
               + (f" ({native.get('reason')})" if native.get("reason") else ""))
    import bench_mcp
    import bench_search
    rg = bench_search.find_rg()
    commit = _run_text(["git", "-C", str(HERE), "rev-parse", "--short", "HEAD"])
    dirty = _run_text(["git", "-C", str(HERE.parent), "status", "--porcelain", "--", "src"])
    return {
        "CPU": cpu or platform.processor() or "unknown",
        "cores": f"{cores} ({usable} usable by this process)",
        "kernel": f"{platform.system()} {platform.release()}",
        "Python": f"{platform.python_implementation()} {platform.python_version()}",
        "corral": f"{_version('corral') or '?'} at {commit or '?'}"
                  + (" (src/ has uncommitted changes)" if dirty else ""),
        "corral backends": backend,
        "ripgrep": bench_search.rg_version(rg) if rg else "not found",
        "node": _run_text(["node", "--version"]) or "not found",
        "reference MCP server": (f"@modelcontextprotocol/server-filesystem "
                                 f"{bench_mcp.reference_version()}"
                                 if bench_mcp.reference_version() else "not installed"),
        "mcp SDK (Python)": _version("mcp") or "not installed",
        "peak RSS from": "GNU time -f %M (the child alone)" if have_gnu_time()
                         else "wait4 ru_maxrss (an upper bound: includes the parent at fork)",
    }


def _num(value: float) -> str:
    if value >= 1000:
        return f"{value:,.0f}"
    if value >= 100:
        return f"{value:.0f}"
    if value >= 10:
        return f"{value:.1f}"
    return f"{value:.2f}" if value >= 0.1 else f"{value:.3g}"


def _unit(unit: str) -> str:
    return {"us": "µs"}.get(unit, unit)


def _met(rec: Record) -> str:
    if rec.get("skipped"):
        return "skipped"
    return {True: "yes", False: "**no**", None: "–"}[rec.get("met")]


def _ratio_text(rec: Record) -> str:
    ratio = rec.get("ratio")
    if ratio is None:
        return "–"
    return f"{ratio:.2f}x" + (" the rate" if rec.get("higher_is_better") else "")


def _target_text(rec: Record) -> str:
    if not rec.get("target"):
        return "–"
    target = rec["target"].replace("<=", "≤").replace(">=", "≥")
    return f"{target} ({rec['source']})" if rec.get("source") else target


def results_markdown(records: list[Record], info: dict[str, str], meta: dict[str, Any],
                     kept: Earlier | None = None) -> str:
    """RESULTS.md for this run's ``records``; with ``kept`` (a run of some
    groups), the sections of the other groups as an earlier run wrote them,
    each still saying which run it came from."""
    ran = _ran(records, meta)
    kept_groups = _kept_groups(records, meta, kept)
    out = ["# corral benchmark results", ""]
    out.append(f"Written by `{meta['command']}` on {meta['date']} in {meta['duration']:.0f} s"
               + (" (**--quick: small fixtures and few rounds, for a smoke test only**)"
                  if meta["quick"] else "") + ".")
    if kept_groups:
        out.append("")
        out.append("That run measured " + ", ".join(f"`{g}`" for g in GROUPS if g in ran)
                   + "; the sections of " + ", ".join(f"`{g}`" for g in kept_groups)
                   + " are kept from earlier runs, and each section's first line says which "
                   "run it came from (the machine table is this run's).")
    out.append("")
    out.append(
        "Each figure is the **median** of the rounds shown, with min and max. The rounds of a "
        "case and of its baseline are interleaved (the order rotating each round), and every "
        "**ratio is the ratio of medians** measured in the same run: for times, ours over the "
        "baseline's (lower is better); for calls per second, ours over theirs (higher is "
        "better). The machine was shared with other work (load average "
        f"{meta['load_start']} at the start, {meta['load_end']} at the end), so absolute "
        "figures drift between runs; the ratios are what to compare. A target comes from the "
        "issue named beside it; *met* says whether this run's ratio meets it.")
    out.append("")
    out += ["## Machine", "", "| | |", "|---|---|"]
    out += [f"| {key} | {value} |" for key, value in info.items()]
    out.append("")
    out += ["## Targets", "", "| figure | against | ratio | target | met |",
            "|---|---|---|---|---|"]
    for group in GROUPS:
        if group in kept_groups:
            assert kept is not None
            out += kept.targets.get(group, [])
            continue
        for rec in records:
            if rec.get("group") == group and rec.get("target"):
                ratio = _ratio_text(rec) if not rec.get("skipped") else rec["skipped"]
                if rec.get("group") == "bigfile" and rec.get("rss_mb") is not None:
                    ratio = f"{ratio} time; peak RSS {rec['rss_mb']:.1f} MB"
                out.append(f"| {rec['case']} | {_short(rec.get('baseline') or '–')} | {ratio} "
                           f"| {_target_text(rec)} | {_met(rec)} |")
    out.append("")
    for group in GROUPS:
        if group in kept_groups:
            assert kept is not None
            out += [kept.sections[group], ""]
            continue
        rows = [r for r in records if r.get("group") == group]
        if not rows:
            continue
        out += [f"## {group}: {TITLES[group]}", "", _provenance(meta), ""]
        if meta.get("errors", {}).get(group):
            out += [f"**Failed to run:** `{meta['errors'][group]}`", ""]
        has_rss = any(r.get("rss_mb") is not None for r in rows)
        head = ["case", "median", "min", "max", "rounds", "against", "ratio", "target", "met"]
        if has_rss:
            head.insert(5, "peak RSS")
        head.append("note")
        out += ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
        for r in rows:
            if r.get("skipped"):
                cells = [r["case"], "–", "–", "–", "–", "–", r["skipped"],
                         _target_text(r), _met(r)]
                if has_rss:
                    cells.insert(5, "–")
                cells.append("")
            else:
                unit = _unit(r["unit"])
                cells = [r["case"], f"{_num(r['median'])} {unit}", _num(r["min"]),
                         _num(r["max"]), str(r["rounds"]), _short(r.get("baseline") or "–"),
                         _ratio_text(r), _target_text(r), _met(r)]
                if has_rss:
                    rss = r.get("rss_mb")
                    cells.insert(5, f"{rss:.1f} MB" if rss is not None else "–")
                notes = [r.get("note") or ""]
                if r.get("count") and group == "search":
                    notes.insert(0, f"{'/'.join(map(str, r['count']))} results")
                cells.append("; ".join(n for n in notes if n))
            out.append("| " + " | ".join(c.replace("|", "\\|") for c in cells) + " |")
        out.append("")
    for group, error in meta.get("errors", {}).items():
        if not any(r.get("group") == group for r in records):
            out += [f"## {group}: {TITLES[group]}", "", _provenance(meta), "",
                    f"**Failed to run:** `{error}`", ""]
    return "\n".join(out)


PROVENANCE = "From the run of "


def _provenance(meta: dict[str, Any]) -> str:
    """The line under a group's heading that says which run measured it."""
    return (f"{PROVENANCE}`{meta['command']}` on {meta['date']}"
            + (f", corral at {meta['commit']}" if meta.get("commit") else "")
            + f" (load average {meta['load_start']} at its start).")


class Earlier:
    """What a RESULTS.md written before holds, by group: its section (the
    heading and all under it, ending with its provenance line), its rows of
    the targets table, and its figures as records (enough to plot them)."""

    def __init__(self, text: str) -> None:
        self.sections: dict[str, str] = {}
        self.targets: dict[str, list[str]] = {}
        self.records: list[Record] = []
        written = re.search(r"^Written by `([^`]*)` on ([^.]*?) in ", text, re.MULTILINE)
        # a section written before sections named their run: the file's run
        fallback = (f"{PROVENANCE}`{written[1]}` on {written[2]}." if written
                    else f"{PROVENANCE}an earlier run (not recorded).")
        cases: dict[str, str] = {}
        target_rows: list[str] = []
        for chunk in _chunks(text):
            heading = re.match(r"(?:<!--[^\n]*-->\n)?## (\w+): ", chunk)
            if chunk.startswith("## Targets"):
                target_rows = [line for line in chunk.splitlines()[4:] if line.startswith("| ")]
            if not heading or heading[1] not in TITLES:
                continue
            group = heading[1]
            body = chunk.rstrip("\n")
            if PROVENANCE not in body and not re.search(r"^Written by ", body, re.MULTILINE):
                head, _, rest = body.partition("\n## ")[2].partition("\n") \
                    if body.startswith("<!--") else body.partition("\n")
                marker = body.partition("\n")[0] + "\n## " if body.startswith("<!--") else ""
                body = f"{marker}{head}\n\n{fallback}\n{rest}"
            self.sections[group] = body
            for row in _table_rows(body):
                cases.setdefault(row["case"], group)
                self.records.append({**row, "group": group})
        # the targets table lists the groups in order: a row whose figure has
        # no row of its own below (a growth exponent) goes with the one before
        group = None
        for line in target_rows:
            group = cases.get(_cells(line)[0], group)
            if group:
                self.targets.setdefault(group, []).append(line)

    @classmethod
    def read(cls, path: Path) -> Earlier | None:
        try:
            return cls(path.read_text())
        except OSError:
            return None


def _chunks(text: str) -> list[str]:
    """``text`` cut before each ``## `` heading; an HTML comment on the line
    just above a heading (another script's marker) goes with it."""
    chunks: list[list[str]] = [[]]
    for line in text.split("\n"):
        if line.startswith("## "):
            marker = chunks[-1].pop() if chunks[-1] and chunks[-1][-1].startswith("<!--") \
                else None
            chunks.append([marker] if marker else [])
        chunks[-1].append(line)
    return ["\n".join(chunk) for chunk in chunks]


def _cells(line: str) -> list[str]:
    return [c.strip().replace("\\|", "|") for c in re.split(r"(?<!\\)\|", line)[1:-1]]


def _table_rows(section: str) -> list[Record]:
    """A group section's table as records: case, ratio, target, met."""
    lines = [line for line in section.splitlines() if line.startswith("|")]
    if len(lines) < 3:
        return []
    head = _cells(lines[0])
    out: list[Record] = []
    for line in lines[2:]:
        row = dict(zip(head, _cells(line)))
        ratio = re.match(r"([0-9.]+)x", row.get("ratio", ""))
        target, source = row.get("target", "–"), None
        named = re.fullmatch(r"(.*) \(([^()]*)\)", target)
        if named:
            target, source = named[1], named[2]
        out.append({
            "case": row.get("case", ""), "ratio": float(ratio[1]) if ratio else None,
            "higher_is_better": "the rate" in row.get("ratio", ""),
            "target": None if target == "–" else target.replace("≤", "<=").replace("≥", ">="),
            "source": source,
            "met": {"yes": True, "**no**": False}.get(row.get("met", "")),
            **({"skipped": row.get("ratio")} if row.get("met") == "skipped" else {})})
    return out


def headline(records: list[Record]) -> str:
    """The targets in a compact table (Root.open folded per backend/path)."""
    lines = ["| figure | ratio | target | met |", "|---|---|---|---|"]
    opens: dict[str, list[Record]] = {}
    for rec in records:
        if rec.get("group") == "open" and rec.get("target"):
            label = rec["case"].rsplit(" depth ", 1)[0]
            opens.setdefault(label, []).append(rec)
    for label, rows in opens.items():
        depths = "/".join(r["case"].rsplit(" ", 1)[1] for r in rows)
        lines.append(
            f"| {label} vs open(), depth {depths} | "
            + " / ".join(f"{r['ratio']:.2f}" for r in rows) + " | "
            + " / ".join(r["target"].replace("<= ", "≤ ") for r in rows)
            + f" ({rows[0]['source']}) | " + " / ".join(_met(r) for r in rows) + " |")
    for rec in records:
        if rec.get("group") == "open" or not rec.get("target"):
            continue
        if rec.get("skipped"):
            ratio = rec["skipped"]
        elif rec.get("group") == "bigfile":
            ratio = f"{_ratio_text(rec)} time; peak RSS {rec['rss_mb']:.1f} MB"
        else:
            ratio = _ratio_text(rec)
        against = f" vs {_short(rec['baseline'])}" if rec.get("baseline") else ""
        lines.append(f"| {rec['case']}{against} | {ratio} | {_target_text(rec)} | {_met(rec)} |")
    return "\n".join(lines)


def _short(case: str) -> str:
    """A baseline's name without the group's prefix ("glob **/*.py: os.walk" -> "os.walk")."""
    return case.split(": ", 1)[-1]


def plot(records: list[Record], path: Path) -> str | None:
    """Every ratio as time relative to its baseline (rates inverted), log
    scale, with the target where there is one; ``None`` or why not."""
    try:
        import matplotlib
    except ImportError:
        return "matplotlib is not installed (pip install -e '.[bench]'): no plot"
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    matplotlib.rcParams["svg.hashsalt"] = "corral-benchmarks"  # stable ids: small diffs

    rows = [r for r in records if r.get("ratio") and not r.get("skipped")]
    if not rows:
        return "no ratios to plot"
    labels, values, colors, targets = [], [], [], []
    for r in rows:
        cost = 1 / r["ratio"] if r.get("higher_is_better") else r["ratio"]
        bound, met, label = None, None, f"[{r['group']}] {r['case']}"
        match = re.fullmatch(r"(<=|>=) ([0-9.]+)", r.get("target") or "")
        if match:  # a target on the ratio itself
            bound = float(match[2]) if match[1] == "<=" else 1 / float(match[2])
            met = r.get("met")
        elif r.get("target"):  # a target on something else (peak RSS): say it in the label
            label += f" [{r['target'].split(' <=')[0]} target {'met' if r.get('met') else 'MISSED'}]"
        if r.get("higher_is_better"):
            label += " (rate)"
        labels.append(label)
        values.append(cost)
        targets.append(bound)
        colors.append({True: "#3a923a", False: "#c8372d", None: "#8c8c8c"}[met])
    fig, ax = plt.subplots(figsize=(12, 0.28 * len(rows) + 1.8))
    y = list(range(len(rows)))[::-1]
    ax.barh(y, values, color=colors, height=0.7)
    for yi, bound in zip(y, targets):
        if bound is not None:
            ax.plot([bound, bound], [yi - 0.45, yi + 0.45], color="black", linewidth=2)
    ax.axvline(1.0, color="black", linewidth=0.8, linestyle=":")
    ax.set_xscale("log")
    ticks = [t for t in (0.125, 0.25, 0.5, 1, 1.5, 2, 3, 5, 10, 20, 50, 100)
             if min(values) / 1.5 <= t <= max(values) * 1.5]
    ax.set_xticks(ticks)
    ax.set_xticklabels([f"{t:g}" for t in ticks])
    ax.minorticks_off()
    ax.set_yticks(y)
    ax.set_yticklabels(labels, fontsize=7)
    ax.set_ylim(-0.8, len(rows) - 0.2)
    ax.set_xlabel("time per operation relative to its baseline in the same run\n"
                  "(ratio of medians, log scale; lower is better; rates inverted)", fontsize=8)
    ax.set_title("corral vs baselines (see RESULTS.md)\ngreen meets the issue's target "
                 "(black tick), red misses it, grey has no target", fontsize=9)
    ax.tick_params(axis="x", labelsize=7)
    fig.tight_layout()
    fig.savefig(path, format="svg", metadata={"Date": None}, bbox_inches="tight")
    plt.close(fig)
    return None


README_START = "<!-- headline: written by run.py -->"
README_END = "<!-- end headline -->"


def update_readme(path: Path, text: str) -> bool:
    """Replace the headline section of benchmarks/README.md, if it has one."""
    try:
        content = path.read_text()
    except OSError:
        return False
    start, end = content.find(README_START), content.find(README_END)
    if start < 0 or end < start:
        return False
    path.write_text(content[:start + len(README_START)] + "\n" + text + "\n"
                    + content[end:])
    return True


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true",
                        help="small fixtures and few rounds (a smoke test; figures are rough)")
    parser.add_argument("--only", default=",".join(GROUPS),
                        help=f"comma-separated groups to run (default: all of {','.join(GROUPS)})")
    parser.add_argument("--out", type=Path, default=HERE,
                        help="where RESULTS.md and ratios.svg go (default: benchmarks/)")
    parser.add_argument("--json", type=Path, help="also write every record to this JSON file")
    parser.add_argument("--child-bigfile", nargs=3, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child_bigfile:
        mode, path, offset = args.child_bigfile
        _child_bigfile(mode, path, int(offset))
        return 0
    groups = [g.strip() for g in args.only.split(",") if g.strip()]
    unknown = [g for g in groups if g not in COLLECTORS]
    if unknown:
        parser.error(f"unknown group(s) {', '.join(unknown)}; choose from {', '.join(GROUPS)}")

    started = time.perf_counter()
    load_start = ", ".join(f"{x:.1f}" for x in os.getloadavg())
    info = machine()
    print("\n".join(f"{k}: {v}" for k, v in info.items()), flush=True)
    records: list[Record] = []
    errors: dict[str, str] = {}
    for group in GROUPS:
        if group not in groups:
            continue
        print(f"\n== {group}: {TITLES[group]}", flush=True)
        t0 = time.perf_counter()
        try:
            got = COLLECTORS[group](args.quick)
        except Exception as exc:  # report, go on with the other groups, exit 1 at the end
            traceback.print_exc()
            errors[group] = f"{type(exc).__name__}: {exc}"
            continue
        records += got
        for r in got:
            print("  " + _line(r))
        print(f"  ({time.perf_counter() - t0:.0f} s)", flush=True)
    later = machine()  # an npm install during the run adds versions (the commit stays)
    info.update({key: later[key] for key in ("node", "reference MCP server")})
    meta = {"command": "python benchmarks/run.py" + (" --quick" if args.quick else "")
                       + (f" --only {args.only}" if set(groups) != set(GROUPS) else ""),
            "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
            "duration": time.perf_counter() - started, "quick": args.quick,
            "load_start": load_start,
            "load_end": ", ".join(f"{x:.1f}" for x in os.getloadavg()), "errors": errors,
            "commit": _run_text(["git", "-C", str(HERE), "rev-parse", "--short", "HEAD"])}
    args.out.mkdir(parents=True, exist_ok=True)
    results = args.out / "RESULTS.md"
    # a run of some groups replaces their sections and keeps the others'
    kept = Earlier.read(results) if set(groups) != set(GROUPS) else None
    results.write_text(results_markdown(records, info, meta, kept).rstrip("\n") + "\n")
    print(f"\nwrote {results}" + (f" (kept the sections of {', '.join(kept_groups)})"
                                   if (kept_groups := _kept_groups(records, meta, kept))
                                   else ""))
    plotted = records + [r for r in (kept.records if kept else [])
                         if r["group"] in kept_groups]
    why_not = plot(plotted, args.out / "ratios.svg")
    print(f"no plot: {why_not}" if why_not else f"wrote {args.out / 'ratios.svg'}")
    table = headline(records)
    if args.out.resolve() == HERE and not args.quick and set(groups) == set(GROUPS):
        if update_readme(HERE / "README.md", table):
            print(f"updated the headline in {HERE / 'README.md'}")
    if args.json:
        args.json.write_text(json.dumps({"machine": info, "meta": meta, "records": records},
                                        indent=1) + "\n")
    print("\n" + table)
    print(f"\ndone in {meta['duration']:.0f} s" + (f"; FAILED: {', '.join(errors)}"
                                                    if errors else ""))
    return 1 if errors else 0


def _ran(records: list[Record], meta: dict[str, Any]) -> set[str]:
    """The groups this run measured (or tried to)."""
    return {r["group"] for r in records} | set(meta.get("errors", {}))


def _kept_groups(records: list[Record], meta: dict[str, Any], kept: Earlier | None
                 ) -> list[str]:
    """The groups whose sections are kept from an earlier RESULTS.md."""
    ran = _ran(records, meta)
    return [g for g in GROUPS if kept and g in kept.sections and g not in ran]


def _line(r: Record) -> str:
    if r.get("skipped"):
        return f"{r['case']}: skipped ({r['skipped']})"
    text = f"{r['case']}: {_num(r['median'])} {_unit(r['unit'])} (min {_num(r['min'])}, " \
           f"max {_num(r['max'])}, {r['rounds']} rounds)"
    if r.get("rss_mb") is not None:
        text += f", peak RSS {r['rss_mb']:.1f} MB"
    if r.get("ratio") is not None:
        text += f"; {_ratio_text(r)} {_short(r['baseline'])}"
    if r.get("target"):
        text += f"; target {_target_text(r)}: {_met(r).strip('*')}"
    return text


if __name__ == "__main__":
    sys.exit(main())
