"""Benchmark: ``write_file`` and ``edit_file`` at depth 1, 5 and 10.

Each against baselines measured in the same run, writing the same bytes:

* ``Root.write_bytes`` of the same bytes (corral's own contained write:
  atomic replace beneath the root);
* the atomic-replace floor: ``os.open`` of a temporary file by host path,
  ``write``, ``fsync``, ``close``, ``os.rename`` (no containment at all);
* the OpenAI Agents SDK's local sandbox (``UnixLocalSandboxClient``): its
  session's ``write`` of the same bytes, awaited as an agent's tool awaits
  it (it opens the file by walking its path from ``/`` and truncates it in
  place: no temporary file, no fsync).  An optional dependency (the
  ``bench`` extra): without ``openai-agents`` the row is skipped, saying so.

Each writer has a file of its own, in a tree of its own of the same shape
on the same filesystem (the two tools share one, as one Toolbox): on one
shared file the Toolbox's view would pay at each round's first call to
catch up with the hundreds of replaces the others made meanwhile (foreign
changes to look at), a cost of the interleaving, not of the write.

Targets (issue 34, tmpfs): ``write_file`` at most 1.5x ``Root.write_bytes``
and ``edit_file`` at most 1.8x, both faster than the Agents SDK sandbox's
write (at most 1.0x); on a disk filesystem ``write_file`` at most 1.3x the
floor.  Rounds rotate between the variants (``_common.interleave``) so a slow
spell on a shared machine hits every case alike; ratios are of medians.
Not a test: it asserts nothing.  ``benchmarks/run.py --only write`` runs it
into RESULTS.md.

    .venv/bin/python benchmarks/bench_tools_write.py [--quick] [--disk DIR] [--cpu]
        [--breakdown] [--depth N]

``--cpu`` prints CPU time per call instead (``time.process_time``, depth
10 or ``--depth N``, tmpfs): on a loaded machine it moves less than wall time.
``--breakdown`` prints what one call of the floor, ``Root.write_bytes`` and
``write_file`` costs on the disk: wall, the thread's CPU time, the rest
(waiting), its sleeps and the block requests it makes.  On the machine the
issue was measured on (ext4 without a journal, mounted ``discard``), each
of the three makes the same requests (four writes: the data, the inode, the
directory; a flush; the old file's block discarded) and sleeps five times;
``write_file`` waits as long as the floor (within 10 µs), and what it adds
is CPU time, nearly twice what the same work costs on tmpfs: the caches
are cold after each sleep.  On a loaded machine the wait for a CPU after each sleep swamps
everything (floor and tool alike): the ratios then say little.
"""

from __future__ import annotations

import argparse
import asyncio
import io
import os
import sys
import tempfile
from pathlib import Path
from collections.abc import Callable

from _common import Record, interleave, record, skipped, time_for
from corral.contained import Root
from corral.tools import Toolbox

GROUP = "write"
DEPTHS = (1, 5, 10)
AGENTS_MISSING = ("openai-agents is not installed (pip install -e '.[bench]'): the Agents SDK "
                  "sandbox's write is not measured")
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


class _AgentsSandbox:
    """The Agents SDK's local sandbox on ``base``, its write awaited on an
    event loop of its own (``None`` from :meth:`open` without the SDK)."""

    def __init__(self, loop: asyncio.AbstractEventLoop, session: object) -> None:
        self._loop = loop
        self._session = session

    @classmethod
    def open(cls, base: Path) -> _AgentsSandbox | None:
        try:
            from agents.sandbox.manifest import Manifest
            from agents.sandbox.sandboxes.unix_local import UnixLocalSandboxClient
        except ImportError:
            return None
        loop = asyncio.new_event_loop()
        session = loop.run_until_complete(
            UnixLocalSandboxClient().create(manifest=Manifest(root=str(base))))
        loop.run_until_complete(session.start())
        return cls(loop, session)

    def write(self, rel: str, data: bytes) -> None:
        session = self._session
        self._loop.run_until_complete(session.write(Path(rel), io.BytesIO(data)))  # type: ignore[attr-defined]

    def close(self) -> None:
        try:
            self._loop.run_until_complete(self._session.shutdown())  # type: ignore[attr-defined]
        finally:
            self._loop.close()


#: Each writer's tree below the benchmark's directory: the same file at the
#: same depth on the same filesystem, one tree a writer (the tools share
#: theirs, one Toolbox), so the Toolbox's view sees no other writer's changes.
_TREES = ("tools", "floor", "contained", "agents")


def measure(base: Path, depth: int, rounds: int) -> dict[str, list[float]]:
    """Seconds per call of each variant at ``depth`` directories below
    ``base``, each writer on a file of its own (:data:`_TREES`).  On one
    shared file the tools' view would learn at each round's first call of
    the hundreds of replaces the floor, ``Root.write_bytes`` and the
    sandbox made since (every one a change of another writer: read from
    the watch and looked at), a cost of the interleaving that no agent's
    own write pays."""
    rel = "/".join(f"d{i}" for i in range(depth)) + "/file.py"
    for tree in _TREES:
        path = base / tree / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(CONTENT_A)
    root = Root(str(base / "tools"))
    box = Toolbox(root)
    contained_root = Root(str(base / "contained"))
    sandbox = _AgentsSandbox.open(base / "agents")
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

    floor = _floor(base / "floor" / rel)

    def contained() -> None:
        contained_root.write_bytes(rel, CONTENT_A)

    runners: dict[str, Callable[[], float]] = {
        "floor": lambda: time_for(floor),
        "Root.write_bytes": lambda: time_for(contained),
        "write_file": lambda: time_for(tool_write),
        "edit_file": lambda: time_for(tool_edit),
    }
    if sandbox is not None:
        def agents_write() -> None:
            sandbox.write(rel, CONTENT_A)

        runners["Agents SDK sandbox write"] = lambda: time_for(agents_write)
    try:
        return interleave(runners, rounds)
    finally:
        box.close()
        root.close()
        contained_root.close()
        if sandbox is not None:
            sandbox.close()


def collect(quick: bool = False, disk: str | None = None) -> list[Record]:
    rounds = 5 if quick else 15
    if not _have_agents():
        print(f"  note: {AGENTS_MISSING}", flush=True)
    records: list[Record] = []
    places = [("tmpfs", "/dev/shm" if os.path.isdir("/dev/shm") else None)]
    places.append(("disk", disk or str(Path.home())))
    for where, parent in places:
        # twice the rounds on the disk: each call there sleeps five times, each
        # wake-up as late as the machine makes it, so a sample moves more
        # (and takes its 30 ms whatever the call costs: the rounds stay short)
        place_rounds = rounds * 2 if where == "disk" else rounds
        with tempfile.TemporaryDirectory(prefix="corral-bench-write-", dir=parent) as tmp:
            for depth in DEPTHS:
                samples = measure(Path(tmp) / f"depth{depth}", depth, place_rounds)
                records += _records(samples, where, depth)
    return records


def _records(samples: dict[str, list[float]], where: str, depth: int) -> list[Record]:
    tmpfs = where == "tmpfs"
    at = f"({where}, depth {depth})"
    wrote, edited = samples["write_file"], samples["edit_file"]
    contained, floor = samples["Root.write_bytes"], samples["floor"]
    out = [
        record(GROUP, f"write_file {at}", wrote, unit="us", scale=1e6,
               baseline=f"Root.write_bytes {at}", base_values=contained,
               target=("<=", 1.5) if tmpfs else None, source="issue 34"),
        record(GROUP, f"edit_file {at}", edited, unit="us", scale=1e6,
               baseline=f"Root.write_bytes {at}", base_values=contained,
               target=("<=", 1.8) if tmpfs else None, source="issue 34"),
        record(GROUP, f"write_file vs the floor {at}", wrote, unit="us", scale=1e6,
               baseline=f"atomic-replace floor {at}", base_values=floor,
               target=None if tmpfs else ("<=", 1.3), source="issue 34"),
        record(GROUP, f"Root.write_bytes {at}", contained, unit="us", scale=1e6,
               baseline=f"atomic-replace floor {at}", base_values=floor),
    ]
    agents = samples.get("Agents SDK sandbox write")
    for tool, values in (("write_file", wrote), ("edit_file", edited)):
        case = f"{tool} vs the Agents SDK sandbox {at}"
        if agents is None:
            out.append(skipped(GROUP, case, AGENTS_MISSING,
                               target=("<=", 1.0) if tmpfs else None, source="issue 34"))
        else:
            out.append(record(GROUP, case, values, unit="us", scale=1e6,
                              baseline=f"Agents SDK sandbox write {at}", base_values=agents,
                              target=("<=", 1.0) if tmpfs else None, source="issue 34"))
    return out


def cpu_times(calls: int = 300, rounds: int = 5, depth: int = 10) -> dict[str, float]:
    """CPU time (``time.process_time``: user + system) per call, in µs, of
    ``Root.write_bytes``, ``write_file`` and ``edit_file`` at ``depth`` on
    tmpfs, medians of ``rounds`` batches taken in turn: less moved by a
    loaded machine's waits than wall time."""
    import statistics
    import time

    parent = "/dev/shm" if os.path.isdir("/dev/shm") else None
    with tempfile.TemporaryDirectory(prefix="corral-bench-cpu-", dir=parent) as tmp:
        rel = "/".join(f"d{i}" for i in range(depth)) + "/file.py"
        for tree in ("tools", "contained"):  # a tree a writer, as measure() has
            path = Path(tmp) / tree / rel
            path.parent.mkdir(parents=True)
            path.write_bytes(CONTENT_A)
        text = CONTENT_A.decode()
        state = {"old": "x0 = 1"}
        with Root(os.path.join(tmp, "tools")) as root, Toolbox(root) as box, \
                Root(os.path.join(tmp, "contained")) as contained_root:
            def edit() -> None:
                old = state["old"]
                state["old"] = new = "x0 = 2" if old == "x0 = 1" else "x0 = 1"
                assert box.call("edit_file", {"path": rel, "oldText": old,
                                              "newText": new})["ok"]

            def write() -> None:
                assert box.call("write_file", {"path": rel, "content": text,
                                               "overwrite": True})["ok"]
                state["old"] = "x0 = 1"

            def contained() -> None:
                contained_root.write_bytes(rel, CONTENT_A)

            cases: dict[str, Callable[[], None]] = {
                "Root.write_bytes": contained, "write_file": write, "edit_file": edit}
            samples: dict[str, list[float]] = {name: [] for name in cases}
            for _ in range(rounds):
                for name, call in cases.items():
                    for _ in range(10):
                        call()
                    started = time.process_time()
                    for _ in range(calls):
                        call()
                    samples[name].append((time.process_time() - started) / calls * 1e6)
    return {name: statistics.median(values) for name, values in samples.items()}


def _disk_requests(where: str) -> list[int] | None:
    """The counts ``/proc/diskstats`` gives for the block device holding
    ``where``: writes, sectors written, discards, flushes (``None`` where
    there is no such file or line, as off Linux)."""
    dev = os.stat(where).st_dev
    try:
        with open("/proc/diskstats") as stats:
            for line in stats:
                fields = line.split()
                if (int(fields[0]), int(fields[1])) == (os.major(dev), os.minor(dev)):
                    values = [int(field) for field in fields[3:]]
                    flushes = values[15] if len(values) > 15 else 0
                    discards = values[11] if len(values) > 11 else 0
                    return [values[4], values[6], discards, flushes]
    except (OSError, ValueError, IndexError):
        return None
    return None


def _voluntary_switches() -> int:
    """This thread's voluntary context switches (its sleeps): 0 off Linux."""
    try:
        with open("/proc/thread-self/status", "rb") as status:
            for line in status:
                if line.startswith(b"voluntary_ctxt_switches:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0


def breakdown(where: str, depth: int, calls: int = 300) -> None:
    """Print what one call of the floor, ``Root.write_bytes`` and
    ``write_file`` costs on the filesystem holding ``where``: medians of
    single calls taken in turns of its wall time, the calling thread's CPU
    time (``time.thread_time``), the rest (waiting: for the device, for a
    CPU) and its sleeps; then, a batch of each alone, the block requests a
    call makes (``/proc/diskstats`` of the device: another program's
    requests meanwhile count too)."""
    import statistics
    import time

    rel = "/".join(f"d{i}" for i in range(depth)) + "/file.py"
    with tempfile.TemporaryDirectory(prefix="corral-bench-breakdown-", dir=where) as tmp:
        for tree in ("tools", "floor", "contained"):
            path = Path(tmp) / tree / rel
            path.parent.mkdir(parents=True)
            path.write_bytes(CONTENT_A)
        text = CONTENT_A.decode()
        with Root(os.path.join(tmp, "tools")) as root, Toolbox(root) as box, \
                Root(os.path.join(tmp, "contained")) as contained_root:
            def write() -> None:
                assert box.call("write_file", {"path": rel, "content": text,
                                               "overwrite": True})["ok"]

            def contained() -> None:
                contained_root.write_bytes(rel, CONTENT_A)

            cases: dict[str, Callable[[], object]] = {
                "floor": _floor(Path(tmp) / "floor" / rel), "Root.write_bytes": contained,
                "write_file": write}
            for call in cases.values():
                for _ in range(5):
                    call()
            samples: dict[str, list[tuple[float, float, int]]] = {name: [] for name in cases}
            names = list(cases)
            for turn in range(calls):
                k = turn % len(names)
                for name in names[k:] + names[:k]:
                    sleeps, cpu, started = _voluntary_switches(), time.thread_time(), \
                        time.perf_counter()
                    cases[name]()
                    wall = time.perf_counter() - started
                    samples[name].append((wall, time.thread_time() - cpu,
                                          _voluntary_switches() - sleeps))
            requests: dict[str, list[float] | None] = {}
            for name, call in cases.items():
                before = _disk_requests(tmp)
                for _ in range(calls):
                    call()
                after = _disk_requests(tmp)
                requests[name] = None if before is None or after is None else \
                    [(b - a) / calls for a, b in zip(before, after)]
    floor_wall = statistics.median(wall for wall, _, _ in samples["floor"])
    print(f"{where}, depth {depth}, {calls} calls each (load {os.getloadavg()[0]:.1f}); "
          "per call, medians:")
    print(f"{'':18} {'wall us':>8} {'ratio':>6} {'CPU us':>7} {'waiting':>8} {'sleeps':>6} "
          f"{'writes':>7} {'sectors':>8} {'discards':>8} {'flushes':>7}")
    for name, rows in samples.items():
        wall = statistics.median(row[0] for row in rows)
        cpu = statistics.median(row[1] for row in rows)
        waited = statistics.median(row[0] - row[1] for row in rows)
        slept = statistics.mean(row[2] for row in rows)
        counted = requests[name]
        shown = "" if counted is None else " ".join(
            f"{value:{width}.2f}" for value, width in zip(counted, (7, 8, 8, 7)))
        print(f"{name:18} {wall * 1e6:8.0f} {wall / floor_wall:5.2f}x {cpu * 1e6:7.0f} "
              f"{waited * 1e6:8.0f} {slept:6.2f} {shown}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--disk", help="a directory on a disk filesystem (default: $HOME)")
    parser.add_argument("--cpu", action="store_true",
                        help="CPU time per call at depth 10 on tmpfs instead (by process_time)")
    parser.add_argument("--breakdown", action="store_true",
                        help="on the disk (--disk), what one call of the floor, "
                             "Root.write_bytes and write_file costs: wall, CPU, waiting, "
                             "sleeps and block requests (at --depth)")
    parser.add_argument("--depth", type=int, default=10,
                        help="with --cpu or --breakdown: the depth of the file written "
                             "(default 10)")
    options = parser.parse_args()
    if options.breakdown:
        breakdown(options.disk or str(Path.home()), options.depth)
        return
    if options.cpu:
        times = cpu_times(depth=options.depth)
        base = times["Root.write_bytes"]
        for name, value in times.items():
            print(f"{name:18} {value:8.1f} us CPU  {value / base:5.2f}x Root.write_bytes")
        return
    print(f"Python {sys.version.split()[0]}; medians of interleaved rounds")
    print(f"{'group':20} {'case':34} {'median us':>10} {'ratio':>7} {'baseline':>22} "
          f"{'target':>8}")
    for rec in collect(options.quick, options.disk):
        if rec.get("skipped"):
            print(f"{rec['group']:20} {rec['case']:34} skipped: {rec['skipped']}")
            continue
        ratio = "" if rec["ratio"] is None else f"{rec['ratio']:.2f}x"
        print(f"{rec['group']:20} {rec['case']:34} {rec['median']:10.1f} {ratio:>7} "
              f"{rec['baseline'] or '':>22} {rec['target'] or '':>8}")
    print("(medians over interleaved rounds: noisy on a shared machine)")


def _have_agents() -> bool:
    try:
        import agents.sandbox.sandboxes.unix_local  # noqa: F401
    except ImportError:
        return False
    return True


if __name__ == "__main__":
    main()
