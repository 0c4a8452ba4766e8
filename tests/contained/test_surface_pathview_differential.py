"""Differential property test: generated trees and sequences of operations
give the same answers through RootPath and through ``pathlib.Path`` on a
copy of the tree, root-relative, on every backend config.

Both trees start empty and get the same operations (mkdir, touch, write,
symlink, rename, unlink, rmdir, glob, rglob, walk, iterdir, stat, resolve);
each answer (a value, or an error's class and errno) must be the same, and
so must the trees at the end.  Link texts are made of plain names only, so
no link ever leads out of either tree, whatever is renamed: where nothing
leads out, RootPath is pathlib.

The example count is modest by default; ``CORRAL_PATHVIEW_EXAMPLES`` sets
it (the soak profile: ``CORRAL_PATHVIEW_EXAMPLES=2000``).
"""

from __future__ import annotations

import errno
import os
import shutil
import signal
import stat
import sys
import tempfile
from pathlib import Path, PurePosixPath

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as s
from .helpers.pathview import host_walk

from corral.contained import ContainedError

EXAMPLES = int(os.environ.get("CORRAL_PATHVIEW_EXAMPLES", "40"))
NAMES = ["a", "b", "c.txt", ".h"]
PATTERNS = ["*", "*/", "**", "**/", "**/*", "a*", "*/*", "**/b", "?", "[ab]", "*.txt",
            "a/*", "*/**/*", "c.txt", "a/b", "**/*.txt", "*/*/", ".*", "a/**", "b/../*"]
HANG_SECONDS = 20  # as the suite's hang detector, re-armed for each example
LOOPS_RAISE = sys.version_info < (3, 13)  # 3.11/3.12 resolve(): RuntimeError on a loop

name_paths = s.lists(s.sampled_from(NAMES), min_size=1, max_size=3).map("/".join)


def _query_path(parts: list[str]) -> str:
    """A path for a query: names with "." and ".." that never climb above
    the root lexically (with plain-name links, then never physically)."""
    out, depth = [], 0
    for part in parts:
        if part == "..":
            if depth == 0:
                continue
            depth -= 1
        elif part != ".":
            depth += 1
        out.append(part)
    return "/".join(out) or "."


query_paths = s.lists(s.sampled_from(NAMES + [".", ".."]), min_size=0, max_size=4).map(
    _query_path)
link_texts = s.lists(s.sampled_from(NAMES), min_size=1, max_size=2).map("/".join)
texts = s.text(alphabet="xy\n", max_size=5)

operations = s.one_of(
    s.tuples(s.just("mkdir"), name_paths, s.booleans(), s.booleans()),
    s.tuples(s.just("touch"), name_paths),
    s.tuples(s.just("write"), name_paths, texts),
    s.tuples(s.just("symlink"), name_paths, link_texts),
    s.tuples(s.just("rename"), name_paths, name_paths),
    s.tuples(s.just("unlink"), name_paths),
    s.tuples(s.just("rmdir"), name_paths),
    s.tuples(s.just("glob"), query_paths, s.sampled_from(PATTERNS)),
    s.tuples(s.just("rglob"), query_paths, s.sampled_from(PATTERNS)),
    s.tuples(s.just("walk"), query_paths, s.booleans()),
    s.tuples(s.just("iterdir"), query_paths),
    s.tuples(s.just("stat"), query_paths, s.booleans()),
    s.tuples(s.just("resolve"), query_paths, s.booleans()),
    s.tuples(s.just("exists"), query_paths),
)
# mostly building, then looking: the early operations make the tree
programs = s.tuples(s.lists(s.one_of(
    s.tuples(s.just("mkdir"), name_paths, s.just(True), s.just(True)),
    s.tuples(s.just("write"), name_paths, texts),
    s.tuples(s.just("symlink"), name_paths, link_texts)), min_size=2, max_size=10),
    s.lists(operations, min_size=1, max_size=25)).map(lambda t: t[0] + t[1])


def _error(exc: BaseException) -> tuple[str, object]:
    if isinstance(exc, ContainedError):
        raise AssertionError(f"nothing leads out, yet the root raised {exc!r}") from exc
    return ("error", type(exc).__name__, getattr(exc, "errno", None))


def _host_rel(base: Path, found: Path) -> str:
    """As spelled ("a/../b" stays), relative to the tree."""
    return str(PurePosixPath(found).relative_to(base))


def _on_host(base: Path, op: tuple) -> object:
    kind, path = op[0], base / op[1]
    if kind == "mkdir":
        return path.mkdir(parents=op[2], exist_ok=op[3])
    if kind == "touch":
        return path.touch()
    if kind == "write":
        return path.write_text(op[2])
    if kind == "symlink":
        return path.symlink_to(op[2])
    if kind == "rename":
        return _host_rel(base, path.rename(base / op[2]))
    if kind == "unlink":
        return path.unlink()
    if kind == "rmdir":
        return path.rmdir()
    if kind in ("glob", "rglob"):
        found = getattr(path, kind)(op[2])
        return sorted(_host_rel(base, p) for p in found)
    if kind == "walk":
        return sorted((_host_rel(base, p), sorted(d), sorted(f))
                      for p, d, f in _host_walk(path, op[2]))
    if kind == "iterdir":
        return sorted(_host_rel(base, p) for p in path.iterdir())
    if kind == "stat":
        return _stat_answer(path.stat(follow_symlinks=op[2]))
    if kind == "resolve":
        if LOOPS_RAISE and not op[2] and _passes_a_loop(base, op[1]):
            # 3.11/3.12's realpath gives up at a loop, the rest left as
            # spelled ("b/../c.txt" past a loop b: c.txt unresolved);
            # 3.13's goes on, as RootPath does
            return "loop"
        try:
            resolved = path.resolve(strict=op[2])
        except RuntimeError:  # 3.11/3.12's loop answer; 3.13's is what RootPath gives
            return "loop"
        return str(PurePosixPath(os.path.relpath(resolved, base.resolve())))
    if kind == "exists":
        return (path.exists(), path.is_dir(), path.is_file(), path.is_symlink())
    raise AssertionError(kind)


def _passes_a_loop(base: Path, spelled: str) -> bool:
    """Whether resolving ``spelled`` meets a symlink loop on the way (a
    leading part of it ends in ELOOP)."""
    parts = spelled.split("/")
    for end in range(1, len(parts) + 1):
        try:
            os.stat(base.joinpath(*parts[:end]))
        except OSError as exc:
            if exc.errno == errno.ELOOP:
                return True
    return False


def _host_walk(path: Path, top_down: bool):
    return host_walk(path, top_down)


def _stat_answer(info: os.stat_result) -> tuple[int, int | None]:
    kind = stat.S_IFMT(info.st_mode)
    return kind, info.st_size if stat.S_ISREG(info.st_mode) else None


def _through_root(root, op: tuple) -> object:
    kind, path = op[0], root / op[1]
    if kind == "mkdir":
        return path.mkdir(parents=op[2], exist_ok=op[3])
    if kind == "touch":
        return path.touch()
    if kind == "write":
        return path.write_text(op[2])
    if kind == "symlink":
        return path.symlink_to(op[2])
    if kind == "rename":
        return str(path.rename(op[2]))
    if kind == "unlink":
        return path.unlink()
    if kind == "rmdir":
        return path.rmdir()
    if kind in ("glob", "rglob"):
        return sorted(str(p) for p in getattr(path, kind)(op[2]))
    if kind == "walk":
        return sorted((str(p), sorted(d), sorted(f)) for p, d, f in path.walk(top_down=op[2]))
    if kind == "iterdir":
        return sorted(str(p) for p in path.iterdir())
    if kind == "stat":
        return _stat_answer(path.stat(follow_symlinks=op[2]))
    if kind == "resolve":
        return str(path.resolve(strict=op[2]))
    if kind == "exists":
        return (path.exists(), path.is_dir(), path.is_file(), path.is_symlink())
    raise AssertionError(kind)


def _answer(call) -> object:
    try:
        return call()
    except (OSError, ValueError) as exc:
        return _error(exc)


def _snapshot(base: Path) -> list[tuple[str, str, object]]:
    out = []
    for dirpath, dirs, files in os.walk(base):
        for name in dirs + files:
            full = Path(dirpath) / name
            rel = _host_rel(base, full)
            if full.is_symlink():
                out.append((rel, "link", os.readlink(full)))
            elif full.is_dir():
                out.append((rel, "dir", None))
            else:
                out.append((rel, "file", full.read_bytes()))
    return sorted(out)


@settings(max_examples=EXAMPLES, deadline=None, database=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(program=programs)
@example(program=[("symlink", "b", "b"), ("symlink", "c.txt", "a"), ("mkdir", "a", False, False),
                  ("resolve", "b/../c.txt", False)])
def test_rootpath_answers_as_pathlib(make_root, scratch, program):
    signal.alarm(HANG_SECONDS)  # the hang detector, per example
    where = Path(tempfile.mkdtemp(dir=scratch))
    try:
        mine, host = where / "root", where / "host"
        mine.mkdir()
        host.mkdir()
        root = make_root(mine)
        for op in program:
            theirs = _answer(lambda: _on_host(host, op))
            ours = _answer(lambda: _through_root(root, op))
            if theirs == "loop" and LOOPS_RAISE:
                continue
            assert ours == theirs, op
        assert _snapshot(mine) == _snapshot(host)
    finally:
        shutil.rmtree(where, ignore_errors=True)


@pytest.mark.parametrize("parts", [["..", "a"], ["a", "..", ".."], ["a", ".", "..", "..", "b"],
                                   ["..", "..", "."], ["a", "b", "..", "c"]])
def test_query_paths_never_climb_above_the_root(parts):
    depth = 0
    for part in _query_path(parts).split("/"):
        depth += -1 if part == ".." else 0 if part in (".", "") else 1
        assert depth >= 0, parts
