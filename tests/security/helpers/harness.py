"""Differential harness: every backend config and the kernel, on identical trees.

A :class:`Harness` makes one temporary directory ``base`` holding one *world*
per configuration under test (``w0``, ``w1``, ...) plus one for the kernel
oracle (``wk``).  Each world is ``<world>/ws`` (the root) and
``<world>/ws-evil`` (an outside sibling sharing the root's name as a prefix,
holding a ``secret`` and entries named like the tree's own); ``base/secret``
sits one level further out.  Tree changes made by the test are applied to
every world with plain ``os`` calls, so the worlds stay identical; absolute
link targets and paths are written with the token ``@BASE@`` and rendered
per world.

:meth:`Harness.check` runs one :class:`Operation` through every config and
compares it with the kernel (:mod:`helpers.oracle`):

* read-only operations run the oracle in the *same* world and compare the
  identity ``(st_dev, st_ino)`` of what each side opened or stat'ed;
* mutating operations run the oracle in the kernel world; results are
  compared as root-relative paths, and :meth:`Harness.check_invariants`
  then requires the worlds to be identical again;
* all configs must give identical answers, errors included (type, errno,
  ``filename``, ``component``, ``reason``);
* nothing outside any root may change (a snapshot of everything under
  ``base`` except the roots), no fd may leak, every fd returned must have
  ``FD_CLOEXEC``, and no result may be an outside inode.

Operations are data (:data:`OPERATIONS`), so later phases can add
tool-level operations: give a name, an arity, whether it mutates, a
function running it on a root, and one running it on the kernel.
"""

from __future__ import annotations

import collections
import errno
import fcntl
import gc
import os
import shutil
import stat as st
import tempfile
from dataclasses import dataclass, field
from typing import Any, Callable, Sequence

from ...helpers import fds_opened_since, open_fds
from . import oracle
from .settings import TMP_BASE
from corral.contained import Root, available_backends, backend_by_name
from corral.testing import TreeEntry, build_tree, changes, render, snapshot

TOKEN = "@BASE@"
SECRET = b"OUTSIDE-SECRET"
DATA = b"written by the harness"
_SPECIAL = {st.S_IFIFO: "fifo", st.S_IFSOCK: "socket", st.S_IFCHR: "chr", st.S_IFBLK: "blk"}
_KINDS = {st.S_IFDIR: "dir", st.S_IFREG: "file", st.S_IFLNK: "symlink", **_SPECIAL}

# the kernel is the oracle where openat2 exists; elsewhere configs are only
# compared with each other (and with the outside snapshot)
ORACLE = oracle.available()


@dataclass(frozen=True)
class Config:
    """A configuration under test: ``factory(root_path)`` returns an object
    with :class:`corral.contained.Root`'s methods."""

    label: str
    factory: Callable[[str], Any]


def corral_configs() -> list[Config]:
    """Every backend present, with and without the openat2 fast path
    (``CORRAL_BACKEND`` keeps one backend, as ``tests/conftest.py``)."""
    forced = os.environ.get("CORRAL_BACKEND", "").strip().lower()
    out = []
    for name in [forced] if forced else available_backends():
        backend = backend_by_name(name)
        if backend.has_openat2:
            out.append(Config(f"{name}-openat2",
                              lambda p, b=backend: Root(p, backend=b, fast_path=True)))
        out.append(Config(f"{name}-walk", lambda p, b=backend: Root(p, backend=b, fast_path=False)))
    return out


@dataclass(frozen=True)
class Outcome:
    """A result made comparable across worlds: ``value`` never holds an
    inode number or a host path; ``ident`` (same-world comparison only)
    and ``detail`` (error attributes, config-to-config only) are apart."""

    ok: bool
    value: Any = None  # ok: world-independent payload; error: errno name
    ident: Any = None
    detail: Any = None

    def brief(self) -> str:
        return "ok" if self.ok else str(self.value)


@dataclass(frozen=True)
class Operation:
    """One operation: ``run(root, *paths)`` on a config, ``kernel(rootfd,
    *paths)`` on the oracle; both return a raw result that ``payload(world,
    raw, is_corral)`` turns into ``(value, ident)`` (closing fds)."""

    name: str
    arity: int
    mutates: bool
    run: Callable[..., Any]
    kernel: Callable[..., Any]
    payload: Callable[["World", Any, bool], tuple[Any, Any]] = lambda w, raw, c: (None, None)

    def __repr__(self) -> str:  # shown in a failing example's replay
        return self.name


class World:
    """One copy of the tree: ``base/ws`` is the root."""

    def __init__(self, base: str) -> None:
        self.base = base
        self.top = os.path.join(base, "ws")

    def render(self, text: str) -> str:
        return render(text, {TOKEN: self.base})

    def unrender(self, text: Any) -> Any:
        return text.replace(self.base, TOKEN) if isinstance(text, str) else text

    def index(self) -> dict[tuple[int, int], str]:
        """Identity -> root-relative path of everything in the root (``.``
        for the root itself) and ``outside:<path>`` for the rest of the world."""
        out: dict[tuple[int, int], str] = {}
        info = os.lstat(self.top)
        out[(info.st_dev, info.st_ino)] = "."
        for rel, entry in snapshot(self.top, contents=False).items():
            out.setdefault(entry[2], rel)
        for rel, entry in snapshot(self.base, exclude=("ws",), contents=False).items():
            out.setdefault(entry[2], "outside:" + rel)
        parent = os.lstat(os.path.dirname(self.base))
        out.setdefault((parent.st_dev, parent.st_ino), "outside:..")
        return out

    def tree(self) -> dict[str, tuple]:
        """Kinds, file contents and link texts (tokens restored): what must
        be equal in every world."""
        out = {}
        for rel, entry in snapshot(self.top, contents=True).items():
            kind = _KINDS.get(entry[0], "other")
            detail = entry[5]
            if kind == "symlink":
                detail = detail.replace(self.base, TOKEN)
            out[rel] = (kind, detail)
        return out


def _errname(err: int | None) -> str:
    return errno.errorcode.get(err, str(err)) if err is not None else "None"


# -- payloads -------------------------------------------------------------------

def _fd_payload(world: World, fd: int, is_corral: bool) -> tuple[Any, Any]:
    try:
        if is_corral and not fcntl.fcntl(fd, fcntl.F_GETFD) & fcntl.FD_CLOEXEC:
            raise AssertionError("an fd returned by corral lacks FD_CLOEXEC")
        info = os.fstat(fd)
    finally:
        os.close(fd)
    ident = (info.st_dev, info.st_ino)
    return (world.index().get(ident, "?unknown"), _KINDS.get(st.S_IFMT(info.st_mode))), ident


def _stat_payload(world: World, info: os.stat_result, is_corral: bool) -> tuple[Any, Any]:
    ident = (info.st_dev, info.st_ino)
    kind = _KINDS.get(st.S_IFMT(info.st_mode))
    size = info.st_size if kind == "file" else None
    return (world.index().get(ident, "?unknown"), kind, size), ident


def _makedirs_payload(world: World, made: Sequence, is_corral: bool) -> tuple[Any, Any]:
    if is_corral:
        return list(made), None
    index = world.index()
    return [index.get(ident, "?unknown") for ident in made], None


def _sorted_payload(world: World, names: list[str], is_corral: bool) -> tuple[Any, Any]:
    return sorted(names), None


RDONLY = os.O_RDONLY
CREAT = os.O_WRONLY | os.O_CREAT

OPERATIONS: list[Operation] = [
    Operation("open_rdonly", 1, False, lambda r, p: r.open(p, RDONLY),
              lambda fd, p: oracle.k_open(fd, p, RDONLY), _fd_payload),
    Operation("stat", 1, False, lambda r, p: r.stat(p),
              lambda fd, p: oracle.k_stat(fd, p), _stat_payload),
    Operation("lstat", 1, False, lambda r, p: r.lstat(p),
              lambda fd, p: oracle.k_stat(fd, p, follow=False), _stat_payload),
    Operation("listdir", 1, False, lambda r, p: r.listdir(p),
              lambda fd, p: oracle.k_listdir(fd, p), _sorted_payload),
    Operation("open_creat", 1, True, lambda r, p: r.open(p, CREAT, 0o644),
              lambda fd, p: oracle.k_open(fd, p, CREAT, 0o644), _fd_payload),
    Operation("mkdir", 1, True, lambda r, p: r.mkdir(p), lambda fd, p: oracle.k_mkdir(fd, p)),
    Operation("makedirs", 1, True, lambda r, p: r.makedirs(p),
              lambda fd, p: oracle.k_makedirs(fd, p), _makedirs_payload),
    Operation("remove", 1, True, lambda r, p: r.remove(p), lambda fd, p: oracle.k_remove(fd, p)),
    Operation("rename", 2, True, lambda r, a, b: r.rename(a, b),
              lambda fd, a, b: oracle.k_rename(fd, a, b)),
    Operation("write_bytes", 1, True, lambda r, p: r.write_bytes(p, DATA, fsync=False),
              lambda fd, p: oracle.k_write_bytes(fd, p, DATA)),
]
OPERATIONS_BY_NAME = {op.name: op for op in OPERATIONS}


def _event(text: str) -> None:
    try:
        from hypothesis import event
        event(text)
    except Exception:  # outside a Hypothesis test: nothing to record into
        pass


@dataclass
class Totals:
    """What a run saw, summed over examples (for the non-degeneracy check)."""

    outcomes: collections.Counter = field(default_factory=collections.Counter)
    ops: collections.Counter = field(default_factory=collections.Counter)
    steps: int = 0
    examples: int = 0


class Harness:
    """The worlds, the roots under test and the checks (module docstring)."""

    def __init__(self, configs: Sequence[Config], totals: Totals | None = None) -> None:
        self.configs = list(configs)
        self.totals = totals if totals is not None else Totals()
        self.base = tempfile.mkdtemp(prefix="corral-sec-", dir=TMP_BASE)
        try:
            self.worlds = [World(os.path.join(self.base, f"w{i}")) for i in range(len(configs))]
            self.kworld = World(os.path.join(self.base, "wk"))
            for world in self.all_worlds:
                self._make_world(world)
            with open(os.path.join(self.base, "secret"), "wb") as fh:
                fh.write(SECRET)
            self.roots = []
            for config, world in zip(self.configs, self.worlds):
                self.roots.append(config.factory(world.top))
            dir_flags = getattr(os, "O_PATH", os.O_RDONLY) | os.O_DIRECTORY | os.O_CLOEXEC
            self.kfd = os.open(self.kworld.top, dir_flags)
            self.kfds = [os.open(w.top, dir_flags) for w in self.worlds]
            self.outside = self._outside()
            self.outside_idents = {entry[2] for entry in self.outside.values()}
        except BaseException:
            shutil.rmtree(self.base, ignore_errors=True)
            raise

    @property
    def all_worlds(self) -> list[World]:
        return [*self.worlds, self.kworld]

    @property
    def active_worlds(self) -> list[World]:
        """The worlds operations change (without an oracle, ``wk`` is idle)."""
        return self.all_worlds if ORACLE else self.worlds

    def _make_world(self, world: World) -> None:
        evil = os.path.join(world.base, "ws-evil")
        for d in (world.top, evil, os.path.join(evil, "a"), os.path.join(evil, "a", "b")):
            os.makedirs(d)
        for f in ("secret", "f", "a/f", "a/b/f"):
            with open(os.path.join(evil, f), "wb") as fh:
                fh.write(SECRET)
        os.mkfifo(os.path.join(evil, "fifo"))

    def _outside(self) -> dict[str, tuple]:
        return snapshot(self.base, exclude=[os.path.relpath(w.top, self.base)
                                            for w in self.all_worlds])

    def close(self) -> None:
        for root in getattr(self, "roots", []):
            try:
                root.close()
            except Exception:
                pass
        for fd in [getattr(self, "kfd", None), *getattr(self, "kfds", [])]:
            if fd is not None:
                os.close(fd)
        shutil.rmtree(self.base, ignore_errors=True)

    # -- building the tree (test-controlled, plain os, every world) -------------
    def make(self, kind: str, path: str, target: str = "") -> bool:
        """Create ``path`` (a ``dir``, ``file``, ``symlink`` to ``target`` or
        ``fifo``) in every world; ``False`` (nothing made) if its parent is
        missing, not a real directory, or the name is taken.  Never creates
        through a symlink."""
        results = [self._make_in(world, kind, path, target) for world in self.active_worlds]
        assert len(set(results)) == 1, f"worlds diverged creating {kind} {path!r}: {results}"
        return results[0]

    def build(self, entries: Sequence[TreeEntry]) -> list[TreeEntry]:
        """Make a generated tree in every world with
        :func:`corral.testing.build_tree` (tokens rendered per world)."""
        made = [build_tree(w.top, entries, tokens={TOKEN: w.base}) for w in self.active_worlds]
        assert all(m == made[0] for m in made), "worlds diverged building a tree"
        return made[0]

    @staticmethod
    def _make_in(world: World, kind: str, path: str, target: str) -> bool:
        parts = path.split("/")
        try:
            for i in range(1, len(parts)):
                if not st.S_ISDIR(os.lstat(os.path.join(world.top, *parts[:i])).st_mode):
                    return False
            full = os.path.join(world.top, *parts)
            if kind == "dir":
                os.mkdir(full)
            elif kind == "file":
                fd = os.open(full, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o644)
                os.write(fd, path.encode("utf-8", "surrogateescape"))
                os.close(fd)
            elif kind == "symlink":
                os.symlink(world.render(target), full)
            elif kind == "fifo":
                os.mkfifo(full)
            else:
                raise ValueError(kind)
        except OSError as exc:
            if exc.errno in (errno.EEXIST, errno.ENOENT, errno.ENOTDIR, errno.ENAMETOOLONG):
                return False
            raise
        return True

    # -- running one operation ----------------------------------------------------
    def _corral(self, op: Operation, root: Any, world: World, args: Sequence[str]) -> Outcome:
        try:
            raw = op.run(root, *args)
        except OSError as exc:
            # filename is what the caller passed: put the token back so that
            # worlds compare equal (and check no host path leaks into it)
            detail = (type(exc).__name__, exc.errno, world.unrender(exc.filename),
                      world.unrender(getattr(exc, "component", None)),
                      getattr(exc, "reason", None))
            return Outcome(False, _errname(exc.errno), None, detail)
        except Exception as exc:  # anything but OSError is a bug in a contained call
            return Outcome(False, f"raised {type(exc).__name__}: {exc}", None,
                           (type(exc).__name__,))
        value, ident = op.payload(world, raw, True)
        return Outcome(True, value, ident)

    def _kernel(self, op: Operation, rootfd: int, world: World, args: Sequence[str]) -> Outcome:
        try:
            raw = op.kernel(rootfd, *args)
        except OSError as exc:
            return Outcome(False, _errname(exc.errno))
        value, ident = op.payload(world, raw, False)
        return Outcome(True, value, ident)

    def check(self, op: Operation | str, *paths: str) -> Outcome:
        """Run ``op`` on ``paths`` (with tokens) everywhere and compare."""
        if isinstance(op, str):
            op = OPERATIONS_BY_NAME[op]
        assert len(paths) == op.arity
        # A cycle of an earlier example (a Root, a file) collected mid-call
        # would close its fd and change the count without any leak: keep the
        # cycle collector off while counting (collecting each time is 10x slower).
        gc.disable()
        try:
            fds_before = open_fds()
            results = []
            expected = []
            for root, world, kfd in zip(self.roots, self.worlds, self.kfds):
                args = [world.render(p) for p in paths]
                results.append(self._corral(op, root, world, args))
                if ORACLE and not op.mutates:
                    expected.append(self._kernel(op, kfd, world, args))
            if ORACLE and op.mutates:
                kresult = self._kernel(op, self.kfd, self.kworld,
                                       [self.kworld.render(p) for p in paths])
                expected = [kresult] * len(results)
            fds_left = fds_opened_since(fds_before)
        finally:
            gc.enable()
        where = f"{op.name}{tuple(paths)!r}"
        for config, got, want in zip(self.configs, results, expected):
            if got.ok and isinstance(got.value, tuple) and str(got.value[0]).startswith("outside:"):
                raise AssertionError(f"ESCAPE: {where} on {config.label} reached {got.value}")
            if got.ident is not None and got.ident in self.outside_idents:
                raise AssertionError(f"ESCAPE: {where} on {config.label} returned an outside inode")
            assert (got.ok, got.value) == (want.ok, want.value), (
                f"{where}: {config.label} gave {got.brief()} {got.value!r} {got.detail!r}, "
                f"the kernel {want.brief()} {want.value!r}")
            if not op.mutates:
                assert got.ident == want.ident, f"{where}: {config.label} opened another inode"
        first = results[0]
        for config, got in zip(self.configs[1:], results[1:]):
            assert (got.ok, got.value, got.detail) == (first.ok, first.value, first.detail), (
                f"{where}: {config.label} gave {got!r}, {self.configs[0].label} gave {first!r}")
        assert not fds_left, f"{where}: fds left open {sorted(fds_left)}"
        outcome = expected[0] if expected else first
        key = outcome.brief() if outcome.ok or not str(outcome.value).startswith("raised") \
            else "raised"
        self.totals.outcomes[key] += 1
        self.totals.ops[f"{op.name}:{key}"] += 1
        _event(f"{op.name} -> {key}")
        return first

    def check_invariants(self) -> None:
        """Nothing outside changed; every world holds the same tree."""
        diff = changes(self.outside, self._outside())
        assert not diff, "ESCAPE: outside changed: " + "; ".join(diff[:5])
        worlds = self.active_worlds
        trees = [world.tree() for world in worlds]
        for world, tree in zip(worlds[1:], trees[1:]):
            if tree != trees[0]:
                a, b = trees[0], tree
                delta = sorted(set(a.items()) ^ set(b.items()))[:6]
                raise AssertionError(f"worlds differ ({worlds[0].base} vs "
                                     f"{world.base}): {delta}")
