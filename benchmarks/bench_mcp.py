"""Benchmark: ``corral serve`` against the reference MCP filesystem server.

Sequential ``read_file`` and ``list_directory`` calls over one stdio
connection (calls per second), and the time from spawning a server to its
``initialize`` reply.  The same run drives the reference server,
``@modelcontextprotocol/server-filesystem`` on node (installed with npm by
``scripts/setup_conformance.sh node`` into ``.conformance/node``, the test
set-up's directory), on the same fixture, and prints the ratios.

The reference server's ``list_directory`` gives names and kinds only (no
``stat``); corral's also gives every file's size, as the reference's
``list_directory_with_sizes`` does, so the rate of that one is measured too
and shown beside it as context (no target).

The same calls are measured again with the client and both servers pinned
(``sched_setaffinity``, Linux, two CPUs or more): all on one CPU, and the
servers on another CPU than the client.  Unpinned, the scheduler moves the
threads between those cases from one spell to the next, and on a virtual
machine a wake-up on another CPU costs more than a call's work, so the
unpinned ratio follows where the threads land; the pinned rows show each
case apart (context, no target).

Both servers are driven by the same small line-by-line JSON-RPC client in
this file, so neither pays for a client library.  Rounds alternate between
the servers and medians are reported, since this machine is shared.

    .venv/bin/python benchmarks/bench_mcp.py [--calls 2000] [--rounds 5] [--starts 7]

Not a test: it asserts nothing.  The targets (issue 16): a start-to-initialized
time no worse than the reference server's (ratio <= 1.0), and at least 1.5
times its calls per second for read_file and list_directory.
"""

from __future__ import annotations

import argparse
import functools
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from collections.abc import Callable
from typing import Any

from _common import Record, interleave, record, skipped

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
FIXTURES = HERE / "_fixtures"
CONFORMANCE = Path(os.environ.get("CORRAL_CONFORMANCE_DIR") or REPO / ".conformance")
NODE_PACKAGE = "@modelcontextprotocol/server-filesystem"
NODE_ENTRY = CONFORMANCE / "node" / "node_modules" / "@modelcontextprotocol" \
    / "server-filesystem" / "dist" / "index.js"
START_TARGET = ("<=", 1.0)
RATE_TARGET = (">=", 1.5)
SOURCE = "issue 16"


class Connection:
    """One server process and a sequential JSON-RPC client over its stdio."""

    def __init__(self, command: list[str], env: dict[str, str],
                 cpus: set[int] | None = None) -> None:
        self.started = time.perf_counter()
        # pinned before exec, so every thread the server starts inherits it
        pin = None if cpus is None else functools.partial(os.sched_setaffinity, 0, cpus)
        self.proc = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.DEVNULL, env=env, preexec_fn=pin)
        self._id = 0
        self.request("initialize", {"protocolVersion": "2025-06-18", "capabilities": {},
                                    "clientInfo": {"name": "bench_mcp", "version": "0"}})
        self.initialized_after = time.perf_counter() - self.started
        self._send({"jsonrpc": "2.0", "method": "notifications/initialized"})

    def _send(self, message: dict[str, Any]) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(json.dumps(message).encode() + b"\n")
        self.proc.stdin.flush()

    def request(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        self._id += 1
        self._send({"jsonrpc": "2.0", "id": self._id, "method": method, "params": params})
        assert self.proc.stdout is not None
        while True:
            line = self.proc.stdout.readline()
            if not line:
                raise RuntimeError(f"server exited (status {self.proc.poll()})")
            message = json.loads(line)
            if message.get("id") == self._id:
                if "error" in message:
                    raise RuntimeError(f"{method} failed: {message['error']}")
                return message["result"]

    def call(self, tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
        result = self.request("tools/call", {"name": tool, "arguments": arguments})
        if result.get("isError"):
            raise RuntimeError(f"{tool} refused: {result['content'][0]['text'][:300]}")
        return result

    def close(self) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


def make_fixture(root: Path) -> None:
    """A small project: 30 files at the top (what list_directory returns)
    and a 200-line source file (what read_file reads)."""
    root.mkdir()
    (root / "src").mkdir()
    lines = [f"def function_{i}(x):\n    return x * {i}  # line {i}\n" for i in range(100)]
    (root / "src" / "module.py").write_text("".join(lines))
    for i in range(30):
        (root / f"file_{i:02d}.txt").write_text(f"file {i}\n" * 5)


def ensure_reference_server() -> str | None:
    """Path of the reference server's entry point, made by the test set-up's
    script if need be; ``None`` (with a line saying why) when it cannot be had."""
    if not (NODE_ENTRY.exists() and shutil.which("node")):
        print(f"installing {NODE_PACKAGE} (scripts/setup_conformance.sh node) ...", flush=True)
        done = subprocess.run(["bash", str(REPO / "scripts" / "setup_conformance.sh"), "node"],
                              capture_output=True, text=True)
        if done.returncode != 0 or not NODE_ENTRY.exists() or not shutil.which("node"):
            print(f"the reference server is not available: skipping it\n{done.stderr[-2000:]}")
            return None
    return str(NODE_ENTRY)


def python_env() -> dict[str, str]:
    """Environment for the Python servers: bytecode cached (in the fixtures
    directory) as in a normal install, whatever this shell says."""
    env = dict(os.environ)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env["PYTHONPYCACHEPREFIX"] = str(FIXTURES / "pycache")
    return env


def servers(root: Path, node_entry: str | None) -> dict[str, dict[str, Any]]:
    out: dict[str, dict[str, Any]] = {
        "corral": {
            "command": [sys.executable, "-m", "corral.cli", "serve", str(root)],
            "env": python_env(),
            "read": ("read_file", {"path": "src/module.py"}),
            "list": ("list_directory", {"path": "."}),
        },
    }
    if node_entry is not None:
        out["reference"] = {
            "command": ["node", node_entry, str(root)], "env": dict(os.environ),
            "read": ("read_text_file", {"path": str(root / "src" / "module.py")}),
            "list": ("list_directory", {"path": str(root)}),
            # the same facts as corral's list_directory (names, kinds, sizes):
            # context for the list figure, which is against the one without sizes
            "list_sizes": ("list_directory_with_sizes", {"path": str(root)}),
        }
    return out


def throughput(conn: Connection, tool: str, args: dict[str, Any], calls: int,
               warmup: int = 100) -> float:
    for _ in range(min(warmup, calls)):
        conn.call(tool, args)
    started = time.perf_counter()
    for _ in range(calls):
        conn.call(tool, args)
    return calls / (time.perf_counter() - started)


def cpu_seconds(pid: int) -> float | None:
    """CPU time of a process's live threads so far (Linux; else ``None``):
    unlike calls per second, it hardly moves with the machine's load.  The
    scheduler's own count of each thread's time on a CPU (``schedstat``, in
    nanoseconds), where user and system time are sampled at clock ticks (on
    a virtual machine, a tick may land in another process's time); the
    server's threads live as long as its connection, so none of a round's
    time leaves with a thread that ended."""
    total = 0
    try:
        for task in os.listdir(f"/proc/{pid}/task"):
            try:
                with open(f"/proc/{pid}/task/{task}/schedstat") as f:
                    total += int(f.read().split()[0])
            except FileNotFoundError:  # a thread that ended meanwhile
                continue
    except (OSError, ValueError, IndexError):
        return _tick_seconds(pid)
    return total / 1e9


def _tick_seconds(pid: int) -> float | None:
    """User + system CPU time of a process so far, from its clock ticks."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
    except OSError:
        return None
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def reference_version() -> str | None:
    try:
        return json.loads((NODE_ENTRY.parents[1] / "package.json").read_text())["version"]
    except (OSError, ValueError, KeyError):
        return None


def measure(calls: int, rounds: int, starts_n: int, node_entry: str | None
            ) -> tuple[list[str], dict[str, list[float]], dict[tuple[str, str], list[float]],
                       dict[tuple[str, str], list[float]], dict[str, list[float]]]:
    """The servers measured; seconds from spawn to the ``initialize`` reply
    per server; calls per second per (server, "read"/"list"), and the
    server's CPU seconds per call likewise (empty where not known).  Rounds
    alternate between the servers in a rotating order; the calls go over one
    connection per server, opened once, so a round is short and the
    rounds interleave finely; last, seconds from spawn to the answer of the
    first read call (sent right after ``initialized``) per server."""
    with tempfile.TemporaryDirectory(prefix="corral-bench-") as tmp:
        root = Path(tmp) / "project"
        make_fixture(root)
        table = servers(root, node_entry)
        for spec in table.values():  # warm caches (bytecode, page cache) once
            Connection(spec["command"], spec["env"]).close()

        firsts: dict[str, list[float]] = {}

        def start(name: str, spec: dict[str, Any]) -> Callable[[], float]:
            def run() -> float:
                conn = Connection(spec["command"], spec["env"])
                tool, args = spec["read"]
                conn.call(tool, args)
                firsts.setdefault(name, []).append(time.perf_counter() - conn.started)
                conn.close()
                return conn.initialized_after
            return run

        starts = interleave({name: start(name, spec) for name, spec in table.items()}, starts_n)
        conns: dict[str, Connection] = {}
        cpu: dict[tuple[str, str], list[float]] = {}
        try:
            for name, spec in table.items():
                conns[name] = Connection(spec["command"], spec["env"])
                for kind in _kinds(spec):  # warm-up
                    tool, args = spec[kind]
                    throughput(conns[name], tool, args, 100, warmup=0)

            def serve(name: str, kind: str) -> Callable[[], float]:
                tool, args = table[name][kind]
                pid = conns[name].proc.pid

                def run() -> float:
                    before = cpu_seconds(pid)
                    rate = throughput(conns[name], tool, args, calls, warmup=0)
                    after = cpu_seconds(pid)
                    if before is not None and after is not None:
                        cpu.setdefault((name, kind), []).append((after - before) / calls)
                    return rate
                return run
            rates = interleave({(name, kind): serve(name, kind)
                                for name in table for kind in _kinds(table[name])}, rounds)
        finally:
            for conn in conns.values():
                conn.close()
    return list(table), starts, rates, cpu, firsts


def placements() -> dict[str, tuple[set[int], set[int]]]:
    """Where the client and the servers run for the pinned figures, by
    name: (the client's CPUs, the servers' CPUs).  Empty where affinity
    cannot be set (not Linux) or only one CPU is there."""
    getter = getattr(os, "sched_getaffinity", None)
    if getter is None:
        return {}
    cpus = sorted(getter(0))
    if len(cpus) < 2:
        return {}
    first, second = cpus[0], cpus[1]
    return {"on one CPU": ({first}, {first}), "on separate CPUs": ({first}, {second})}


def measure_pinned(calls: int, rounds: int, node_entry: str | None
                   ) -> dict[tuple[str, str, str], list[float]]:
    """Calls per second per (placement, server, "read"/"list"), with the
    client (this process) and the server pinned as :func:`placements` says.
    Unpinned, the scheduler decides per spell whether a server shares the
    client's CPU (a wake-up on the same CPU is cheap) or not (on a virtual
    machine, waking another CPU costs more than a call's work), so the
    unpinned ratio moves with where the threads happen to land; these show
    each case apart.  Empty when there is no reference server or nothing to
    pin."""
    where = placements()
    if not where or node_entry is None:
        return {}
    out: dict[tuple[str, str, str], list[float]] = {}
    saved = os.sched_getaffinity(0)
    with tempfile.TemporaryDirectory(prefix="corral-bench-") as tmp:
        root = Path(tmp) / "project"
        make_fixture(root)
        table = servers(root, node_entry)
        for place, (client, server) in where.items():
            os.sched_setaffinity(0, client)
            conns: dict[str, Connection] = {}
            try:
                for name, spec in table.items():
                    conns[name] = Connection(spec["command"], spec["env"], cpus=server)
                    for kind in _kinds(spec):  # warm-up
                        tool, args = spec[kind]
                        throughput(conns[name], tool, args, 100, warmup=0)

                def serve(name: str, kind: str) -> Callable[[], float]:
                    tool, args = table[name][kind]
                    return lambda: throughput(conns[name], tool, args, calls, warmup=0)
                rates = interleave({(name, kind): serve(name, kind)
                                    for name in table for kind in _kinds(table[name])}, rounds)
                for (name, kind), values in rates.items():
                    out[(place, name, kind)] = values
            finally:
                for conn in conns.values():
                    conn.close()
                os.sched_setaffinity(0, saved)
    return out


def _pinned_records(pinned: dict[tuple[str, str, str], list[float]]) -> list[Record]:
    out: list[Record] = []
    for place in dict.fromkeys(key[0] for key in pinned):
        for kind, tool in (("read", "read_file"), ("list", "list_directory")):
            base = f"{tool} calls/s, client and server {place}: reference server (node)"
            out.append(record("mcp", base, pinned[(place, "reference", kind)], unit="calls/s",
                              higher_is_better=True))
            out.append(record(
                "mcp", f"{tool} calls/s, client and server {place}: corral serve",
                pinned[(place, "corral", kind)], unit="calls/s", higher_is_better=True,
                baseline=base, base_values=pinned[(place, "reference", kind)],
                note="both pinned (sched_setaffinity) so the scheduler cannot move them; "
                     "no target, context for the unpinned figure above"))
        if (place, "reference", "list_sizes") in pinned:
            sized = f"list_directory_with_sizes calls/s, client and server {place}: " \
                "reference server (node)"
            out.append(record("mcp", sized, pinned[(place, "reference", "list_sizes")],
                              unit="calls/s", higher_is_better=True))
            out.append(record(
                "mcp", f"list_directory calls/s, client and server {place}: corral serve, "
                "against the one with sizes", pinned[(place, "corral", "list")],
                unit="calls/s", higher_is_better=True, baseline=sized,
                base_values=pinned[(place, "reference", "list_sizes")],
                note="the same facts (names, kinds, sizes) on both sides; no target"))
    return out


def _kinds(spec: dict[str, Any]) -> list[str]:
    return [kind for kind in ("read", "list", "list_sizes") if kind in spec]


def collect(quick: bool = False) -> list[Record]:
    """The figures as records (for run.py): corral against the reference
    server (skipped, with the reason, when it cannot be installed)."""
    calls, rounds, starts_n = (100, 1, 2) if quick else (1000, 9, 7)
    node_entry = ensure_reference_server()
    names, starts, rates, cpu, firsts = measure(calls, rounds, starts_n, node_entry)
    pinned = measure_pinned(calls, 1 if quick else 5, node_entry)
    ref = "reference" in names
    why = "reference server not available (npm/node missing or npm install failed)"
    out: list[Record] = []
    start_base = "start to initialized: reference server (node)"
    if ref:
        out.append(record("mcp", start_base, starts["reference"], unit="ms", scale=1e3))
        out.append(record("mcp", "start to initialized: corral serve", starts["corral"], unit="ms",
                          scale=1e3, baseline=start_base, base_values=starts["reference"],
                          target=START_TARGET, source=SOURCE))
        first_base = "start to first read answer: reference server (node)"
        out.append(record("mcp", first_base, firsts["reference"], unit="ms", scale=1e3))
        out.append(record("mcp", "start to first read answer: corral serve", firsts["corral"],
                          unit="ms", scale=1e3, baseline=first_base,
                          base_values=firsts["reference"]))
    else:
        out.append(skipped("mcp", "start to initialized: corral vs reference", why,
                           target=START_TARGET, source=SOURCE))
    for kind, tool in (("read", "read_file"), ("list", "list_directory")):
        base = f"{tool} calls/s: reference server (node)"
        if ref:
            out.append(record("mcp", base, rates[("reference", kind)], unit="calls/s",
                              higher_is_better=True))
            out.append(record("mcp", f"{tool} calls/s: corral serve", rates[("corral", kind)],
                              unit="calls/s", higher_is_better=True, baseline=base,
                              base_values=rates[("reference", kind)], target=RATE_TARGET,
                              source=SOURCE))
        else:
            out.append(skipped("mcp", f"{tool} calls/s: corral vs reference", why,
                               target=RATE_TARGET, source=SOURCE))
        out += _cpu_records(kind, tool, cpu)
    if ("reference", "list_sizes") in rates:
        sized = "list_directory_with_sizes calls/s: reference server (node)"
        out.append(record("mcp", sized, rates[("reference", "list_sizes")], unit="calls/s",
                          higher_is_better=True))
        out.append(record("mcp", "list_directory calls/s: corral serve, against the one "
                          "with sizes", rates[("corral", "list")], unit="calls/s",
                          higher_is_better=True, baseline=sized,
                          base_values=rates[("reference", "list_sizes")],
                          note="the same facts (names, kinds, sizes) on both sides; no target, "
                               "context for the list_directory figure"))
    return out + _pinned_records(pinned)


def _cpu_records(kind: str, tool: str, cpu: dict[tuple[str, str], list[float]]) -> list[Record]:
    """The same calls by the servers' CPU time: context, steadier under load."""
    if ("corral", kind) not in cpu:
        return []
    out: list[Record] = []
    cpu_base = f"{tool} server CPU per call: reference server (node)"
    has_base = ("reference", kind) in cpu
    if has_base:
        out.append(record("mcp", cpu_base, cpu[("reference", kind)], unit="ms", scale=1e3))
    out.append(record(
        "mcp", f"{tool} server CPU per call: corral serve", cpu[("corral", kind)],
        unit="ms", scale=1e3, baseline=cpu_base if has_base else None,
        base_values=cpu.get(("reference", kind)),
        note="CPU time of the server's threads (the scheduler's count, schedstat) "
             "over each round; no target, context for the calls/s above"))
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--calls", type=int, default=2000, help="calls per measurement")
    parser.add_argument("--rounds", type=int, default=5,
                        help="throughput measurements per server and tool")
    parser.add_argument("--starts", type=int, default=7, help="start-up measurements per server")
    opts = parser.parse_args()

    node_entry = ensure_reference_server()
    names, starts, rates, cpu, _firsts = measure(opts.calls, opts.rounds, opts.starts, node_entry)
    print(f"\n{opts.calls} sequential calls per measurement, median of {opts.rounds} rounds; "
          f"start-up median of {opts.starts}")
    print(f"{'server':<12} {'start->initialized':>19} {'read calls/s':>13} {'list calls/s':>13}")
    med = {key: statistics.median(values) for key, values in rates.items()}
    start_med = {name: statistics.median(values) for name, values in starts.items()}
    for name in names:
        print(f"{name:<12} {start_med[name] * 1000:>16.0f} ms {med[(name, 'read')]:>13.0f} "
              f"{med[(name, 'list')]:>13.0f}")
    if "reference" in names:
        print("\ncorral / reference:")
        for kind, tool in (("read", "read_file"), ("list", "list_directory")):
            print(f"  {tool:<14} {med[('corral', kind)] / med[('reference', kind)]:.2f}x "
                  f"the calls/s (target >= {RATE_TARGET[1]:.2f})")
        if ("reference", "list_sizes") in med:
            sized = med[("corral", "list")] / med[("reference", "list_sizes")]
            print(f"  list_directory {sized:.2f}x the calls/s of list_directory_with_sizes "
                  "(the same facts; context)")
        print(f"  start-up       {start_med['corral'] / start_med['reference']:.2f}x "
              f"the time (target <= {START_TARGET[1]:.2f})")
    pinned = measure_pinned(opts.calls, opts.rounds, node_entry)
    if pinned:
        print("\npinned (sched_setaffinity), calls/s, median; corral / reference:")
        for place in dict.fromkeys(key[0] for key in pinned):
            pm = {kind: (statistics.median(pinned[(place, "corral", kind)]),
                         statistics.median(pinned[(place, "reference", kind)]))
                  for kind in ("read", "list")}
            line = "   ".join(f"{kind} {ours:.0f} / {theirs:.0f} = {ours / theirs:.2f}x"
                              for kind, (ours, theirs) in pm.items())
            sized = pinned.get((place, "reference", "list_sizes"))
            if sized:
                line += f"   (list against with_sizes {pm['list'][0] / statistics.median(sized):.2f}x)"
            print(f"  {place:<12} {line}")
    if cpu:
        print("\nserver CPU time per call (ms, median):")
        for name in names:
            print(f"  {name:<12} " + "  ".join(
                f"{kind} {statistics.median(cpu[(name, kind)]) * 1000:.2f}"
                for kind in ("read", "list", "list_sizes") if (name, kind) in cpu))
    return 0


if __name__ == "__main__":
    sys.exit(main())
