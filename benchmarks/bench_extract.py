"""Root.extract against tarfile.extractall(filter="data") on one 10,000-member
tar archive (target: ratio <= 1.5).  Root.extract runs with its defaults:
the limits (ExtractLimits()), each symlink checked when made and again on
the finished tree, hard links to symlinks linking the file.

    python benchmarks/bench_extract.py [--members N] [--rounds R] [--json]

The archive is generated in memory: 200 directories two levels deep, small
files of 0 to 4 KiB (some executable), a few in-root symlinks and hard
links, the mix of a source tree.  Each round extracts it once with each
candidate (the order rotating, see ``_common.interleave``) into a fresh
empty directory on tmpfs where there is one (see ``_scratch_base``);
removing the tree again is not timed.  A figure is the median of the
rounds; the ratio is of medians measured in the same run.  Candidates:
``Root.extract`` on the default backend, with its openat2 fast path and
with the walk; the baseline is ``tarfile.TarFile.extractall(path,
filter="data")`` of the same bytes.
"""

from __future__ import annotations

import argparse
import io
import json
import os
import random
import shutil
import statistics
import sys
import tarfile
import tempfile
import time
from collections.abc import Callable

from _common import Record, interleave, record
from corral.contained import Root, default_backend

MEMBERS = 10_000
BASELINE = 'tarfile.extractall(filter="data")'


def make_archive(members: int, seed: int = 15) -> bytes:
    """A tar of ``members`` members (module docstring), deterministic."""
    rng = random.Random(seed)
    buf = io.BytesIO()
    dirs = [f"pkg{i // 20}/mod{i % 20}" for i in range(200)]
    with tarfile.open(fileobj=buf, mode="w", format=tarfile.PAX_FORMAT) as tf:
        made = 0
        for top in sorted({d.split("/")[0] for d in dirs}) + dirs:
            info = tarfile.TarInfo(top)
            info.type, info.mode, info.mtime = tarfile.DIRTYPE, 0o755, 1_600_000_000
            tf.addfile(info)
            made += 1
        files: list[str] = []
        while made < members:
            name = f"{rng.choice(dirs)}/f{made}.py"
            kind = rng.random()
            info = tarfile.TarInfo(name)
            info.mtime = 1_600_000_000 + made
            if kind < 0.02 and files:
                info.type, info.linkname = tarfile.SYMTYPE, f"../../{rng.choice(files)}"
            elif kind < 0.03 and files:
                info.type, info.linkname = tarfile.LNKTYPE, rng.choice(files)
            else:
                data = rng.randbytes(rng.randrange(0, 4096))
                info.size, info.mode = len(data), 0o755 if kind > 0.95 else 0o644
                tf.addfile(info, io.BytesIO(data))
                files.append(name)
                made += 1
                continue
            tf.addfile(info)
            made += 1
    return buf.getvalue()


def _candidates() -> list[tuple[str, Callable[[str], Root]]]:
    """The default backend, with its fast path (if any) and with the walk."""
    backend = default_backend()
    out = []
    for fast in ([True] if backend.has_openat2 else []) + [False]:
        label = f"{backend.name}-{'openat2' if fast else 'walk'}"
        out.append((label, lambda path, f=fast: Root(path, backend=backend, fast_path=f)))
    return out


def _scratch_base() -> str | None:
    """tmpfs (``/dev/shm``) where present: the figure is then the
    extractors' own cost, not the disk journal's (on this machine's ext4 a
    round varied 2.6 to 20 s for the same work); ``None``: the default."""
    shm = "/dev/shm"
    return shm if os.path.isdir(shm) and os.access(shm, os.W_OK | os.X_OK) else None


def measure(members: int, rounds: int) -> tuple[dict[str, list[float]], list[str], int]:
    """Seconds per extraction, one sample per round, per runner; the
    candidates' labels; the number of members."""
    data = make_archive(members)
    with tempfile.TemporaryDirectory(prefix="corral-bench-extract-", dir=_scratch_base()) as tmp:
        base = os.path.realpath(tmp)
        counter = iter(range(10**9))

        def fresh() -> str:
            path = os.path.join(base, f"x{next(counter)}")
            os.mkdir(path)
            return path

        def baseline() -> float:
            dest = fresh()
            started = time.perf_counter()
            with tarfile.open(fileobj=io.BytesIO(data)) as tf:
                tf.extractall(dest, filter="data")
            seconds = time.perf_counter() - started
            shutil.rmtree(dest)
            return seconds

        def ours(make: Callable[[str], Root]) -> Callable[[], float]:
            def run() -> float:
                dest = fresh()
                started = time.perf_counter()
                with make(dest) as root:
                    result = root.extract(io.BytesIO(data))
                seconds = time.perf_counter() - started
                if not result.ok or len(result.extracted) != members:
                    raise RuntimeError(f"extraction refused {result.refused[:3]}")
                shutil.rmtree(dest)
                return seconds
            return run

        runners: dict[str, Callable[[], float]] = {BASELINE: baseline}
        labels = []
        for label, make in _candidates():
            runners[f"Root.extract {label}"] = ours(make)
            labels.append(f"Root.extract {label}")
        for run in runners.values():  # warm up: imports, caches, the page cache
            run()
        samples = interleave(runners, rounds)
    return samples, labels, members


def collect(quick: bool = False) -> list[Record]:
    """The figures as records (for run.py): each candidate against tarfile."""
    members, rounds = (1000, 3) if quick else (MEMBERS, 5)
    samples, labels, members = measure(members, rounds)
    records = [record("extract", f"{BASELINE}, {members:,} members", samples[BASELINE],
                      unit="ms", scale=1e3)]
    for label in labels:
        records.append(record("extract", f"{label}, {members:,} members", samples[label],
                              unit="ms", scale=1e3,
                              baseline=f"{BASELINE}, {members:,} members",
                              base_values=samples[BASELINE], target=("<=", 1.5),
                              source="issue 15"))
    return records


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--members", type=int, default=MEMBERS, help="members in the archive")
    parser.add_argument("--rounds", type=int, default=5, help="timed rounds per figure")
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    args = parser.parse_args(argv)
    samples, labels, members = measure(args.members, args.rounds)
    medians = {label: statistics.median(values) for label, values in samples.items()}
    if args.json:
        json.dump({"members": members, "seconds": medians}, sys.stdout, indent=2)
        print()
        return 0
    base = medians[BASELINE]
    print(f"extract a {members:,}-member tar (median of {args.rounds} rounds; Python "
          f"{sys.version.split()[0]}, {sys.platform})")
    print(f"{BASELINE:<34}{base * 1e3:9.1f} ms")
    for label in labels:
        ratio = medians[label] / base
        print(f"{label:<34}{medians[label] * 1e3:9.1f} ms  {ratio:5.2f}x  "
              f"target <= 1.50 {'ok' if ratio <= 1.5 else 'OVER'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
