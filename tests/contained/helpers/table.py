"""The case record and the runner of the Root tables (see test_root_table.py)."""

from __future__ import annotations

import errno
import fcntl
import gc
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from corral.contained import ContainedError, EscapeError, Root, SymlinkError, backend_by_name

from ...helpers import fds_opened_since, open_fds
from .trees import Tree, build, fingerprint, outside_part, snapshot
from .operations import ON_FINAL_LINK, Op, check_target, prepare


class _Ok:
    def __repr__(self) -> str:
        return "OK"


OK = _Ok()


@dataclass(frozen=True)
class Value:
    """Expected: success with exactly this (comparable) result."""
    value: object


# An expectation: OK, Value(x), an exception class, an errno number, or
# (exception class, errno).
Expect = object


@dataclass(frozen=True)
class Case:
    """One row of a table.

    A-style (Go's rootTestCases): ``target`` is the root-relative real path
    the path resolves to when final symlinks are followed, ``ltarget`` when
    they are not (default: ``target``).  Each op first puts what it needs at
    the target (a file, a directory, nothing) and then must act exactly
    there.  ``error`` instead of ``target``: following ops raise it;
    ``lerror``: non-following ops raise it (default: ``error``, unless an
    ``ltarget`` is given).

    B-style (Go's rootConsistencyTestCases): neither ``target`` nor
    ``error``; the tree is used as built and each op must give what plain
    ``os`` gives on the same absolute path (data, identity, listing, errno,
    and the whole tree afterwards).

    ``expect`` overrides the expectation for single ops.  The oracle runs
    wherever the expected outcome is not a containment refusal (an escape,
    a special file, an invalid path), unless ``oracle`` is false or the op is
    in ``no_oracle``.
    """

    name: str
    fs: tuple[str, ...]
    path: str | bytes
    target: str | None = None
    ltarget: str | None = None
    error: Expect | None = None
    lerror: Expect | None = None
    expect: dict = field(default_factory=dict)
    oracle: bool = True
    no_oracle: frozenset = frozenset()
    ops: frozenset | None = None  # run only these ops (default: all)


def C(name: str, fs, path, **kw) -> Case:
    """Shorthand: ``C("nested", ["a/"], "a/target", target="a/target")``."""
    for key in ("expect",):
        kw[key] = dict(kw.get(key, {}))
    for key in ("no_oracle", "ops"):
        if key in kw and kw[key] is not None:
            kw[key] = frozenset(kw[key])
    return Case(name, tuple(fs), path, **kw)


_GONE = (EscapeError, SymlinkError, errno.ENOENT, errno.ENOTDIR, errno.ELOOP)  # exists: False


def case_ids(cases: list[Case]) -> list[str]:
    """The pytest ids of a table's cases: their names."""
    return [case.name for case in cases]


def expectation(case: Case, op: Op) -> tuple[Expect | None, Expect | None]:
    """What ``op`` must do for ``case`` (``None``: whatever os does), and the
    outcome underneath it (``exists`` turns most errors into ``False``, and
    the oracle must not run for an escape hidden that way)."""
    if op.name in case.expect:
        return case.expect[op.name], case.expect[op.name]
    if case.target is None and case.error is None:
        return None, None
    is_link = case.ltarget is not None and case.ltarget != case.target
    if op.name.startswith("makedirs") and is_link:
        # os.makedirs meets the link itself: it exists.  Told to accept an
        # existing leaf, it follows it (which must not lead out).
        if op.name == "makedirs_exist_ok" and case.error is EscapeError:
            exp = EscapeError
        else:
            exp = errno.EEXIST
    elif op.follows:
        exp = case.error if case.error is not None else OK
    else:
        lerror = case.lerror
        if lerror is None and case.ltarget is None:
            lerror = case.error
        if lerror is not None:
            exp = lerror
        elif is_link:
            exp = ON_FINAL_LINK.get(op.name, "ok")
            exp = OK if exp == "ok" else exp
        elif op.name == "readlink":
            exp = errno.EINVAL
        else:
            exp = OK
    if op.name == "exists" and exp is not OK:
        return (Value(False) if exp in _GONE else exp), exp
    return exp, exp


def _outcome(fn: Callable[[], object]) -> tuple:
    try:
        return ("ok", fn())
    except Exception as exc:  # noqa: BLE001 - the table compares whatever was raised
        return ("err", exc)


def _describe(result: tuple) -> str:
    kind, value = result
    if kind == "ok":
        return f"ok {value!r}"
    return f"{type(value).__name__}(errno={getattr(value, 'errno', None)}, {value})"


def matches(result: tuple, exp: Expect) -> bool:
    """Whether an outcome (``("ok", value)`` or ``("err", exc)``) meets ``exp``."""
    kind, value = result
    if exp is OK:
        return kind == "ok"
    if isinstance(exp, Value):
        return kind == "ok" and value == exp.value
    if isinstance(exp, int):
        return kind == "err" and isinstance(value, OSError) and value.errno == exp
    if isinstance(exp, tuple):
        cls, err = exp
        return kind == "err" and isinstance(value, cls) and value.errno == err
    return kind == "err" and isinstance(value, exp)


_REFUSALS = (ContainedError,)


def _refusal(exp: Expect | None) -> bool:
    if isinstance(exp, tuple):
        exp = exp[0]
    return isinstance(exp, type) and issubclass(exp, _REFUSALS)


def _check_no_host_path(exc: BaseException, tree: Tree, case: Case) -> None:
    """An error names root-relative paths only (unless the caller's own path
    was a host path)."""
    if "$" in os.fsdecode(case.path):
        return
    texts = [str(exc), str(getattr(exc, "filename", "")), str(getattr(exc, "filename2", "")),
             str(getattr(exc, "component", ""))]
    for text in texts:
        assert str(tree.base) not in text, f"host path leaked in error: {text!r}"


_FD_METHODS = ("open_at", "openat2", "openat2_or_errno", "create_directory_at", "open_beneath",
               "open_text_beneath")


class InjectedFault(OSError):
    pass


class RecordingBackend:
    """Delegates to a real backend.  Records ``(method, fd, has FD_CLOEXEC)``
    for every fd a call returns (checked the moment it is returned), counts
    calls, fails the ``fail_at``-th call with ``EIO`` if asked, and calls
    ``after(method, args)`` after each call that returned (to play a
    concurrent change at an exact point of a resolution)."""

    def __init__(self, inner) -> None:
        self._inner = inner
        self.name = inner.name
        self.opened: list[tuple[str, int, bool]] = []
        self.calls = 0
        self.fail_at: int | None = None
        self.after = None

    def __getattr__(self, attr):
        value = getattr(self._inner, attr)
        if attr == "has_walk_open":
            # a change played, or a fault made, between two of a walk's
            # calls needs them one by one, not the walk in one call
            return value and self.after is None and self.fail_at is None
        if not callable(value) or attr.startswith("_") or attr == "info":
            return value

        def call(*args, **kwargs):
            self.calls += 1
            if self.fail_at is not None and self.calls == self.fail_at:
                if attr == "close":
                    # close(2) releases the fd even when it reports an error
                    value(*args, **kwargs)
                raise InjectedFault(errno.EIO, f"injected fault in {attr}")
            result = value(*args, **kwargs)
            if attr in _FD_METHODS and result >= 0:  # (open_beneath, openat2_or_errno: < 0)
                cloexec = bool(fcntl.fcntl(result, fcntl.F_GETFD) & fcntl.FD_CLOEXEC)
                self.opened.append((attr, result, cloexec))
            if self.after is not None:
                self.after(attr, args)
            return result

        setattr(self, attr, call)  # __getattr__ runs once per method
        return call


def run_ops(case: Case, ops, make_root, scratch: Path, **root_kwargs) -> None:
    """Run every op of ``ops`` for ``case``; report all the ops that failed."""
    failures = []
    for i, op in enumerate(ops):
        if case.ops is not None and op.name not in case.ops:
            continue
        tmp = scratch / f"{i}-{op.name}"
        tmp.mkdir()
        try:
            run(case, op, make_root, tmp, **root_kwargs)
        except AssertionError as exc:
            failures.append(f"[{op.name}] {exc}")
    assert not failures, f"{len(failures)} op(s) failed:\n" + "\n".join(failures)


def recording_root(make_root, path, **kwargs) -> tuple[Root, RecordingBackend]:
    """A Root of ``make_root``'s backend config (backend and fast path) whose
    backend is wrapped in a :class:`RecordingBackend`."""
    recorder = RecordingBackend(backend_by_name(make_root.backend_name))
    return Root(path, backend=recorder, fast_path=make_root.fast_path, **kwargs), recorder


def run(case: Case, op: Op, make_root, tmp: Path, **root_kwargs) -> None:
    """Run one op of one case against a Root, check it, compare with os."""
    tree = build(tmp / "r", case.fs)
    prepare(tree, op, case.target)
    path = tree.subst(case.path)
    exp, underneath = expectation(case, op)
    root, recorder = recording_root(make_root, tree.ws, **root_kwargs)

    try:
        assert fcntl.fcntl(root.fileno(), fcntl.F_GETFD) & fcntl.FD_CLOEXEC, \
            "the root fd lacks FD_CLOEXEC"
        before = fingerprint(tree)
        # the collector stays off while the fds are compared: garbage of
        # earlier tests (a Root left to it) closed mid-op would look like a change
        collecting = gc.isenabled()
        gc.disable()
        try:
            fds = open_fds()
            result = _outcome(lambda: op.root(root, tree, path))
            assert not fds_opened_since(fds), f"{case.name}: {op.name}: an fd was left open"
        finally:
            if collecting:
                gc.enable()
    finally:
        root.close()
    after = fingerprint(tree)
    leaky = [(method, fd) for method, fd, cloexec in recorder.opened if not cloexec]
    assert not leaky, f"{case.name}: {op.name}: fds without FD_CLOEXEC from {leaky}"

    where = f"{case.name}: {op.name}({case.path!r}) -> {_describe(result)}"
    # Nothing outside the root ever changes, whatever the op and outcome.
    assert outside_part(after) == outside_part(before), \
        f"{where}: something outside the root changed"
    if result[0] == "err":
        _check_no_host_path(result[1], tree, case)
        if not isinstance(result[1], OSError):
            raise AssertionError(f"{where}: not an OSError") from result[1]

    if exp is not None:
        assert matches(result, exp), f"{where}; expected {exp!r}"
        if result[0] == "ok" and exp is OK and case.target is not None:
            lt = case.ltarget if case.ltarget is not None else case.target
            check_target(op, tree, result[1], case.target, lt)
    if not op.mutates:
        assert after == before, f"{where}: a read-only op changed the tree"
    if make_root.fast_path and after == before:
        # The openat2 fast path and the walk must agree exactly: same value,
        # or the same error (class, errno, names, failing component, reason).
        # Where nothing changed, the walk runs on the very same tree.
        walker, _ = recording_root(_WalkOnly(make_root), tree.ws, **root_kwargs)
        try:
            walked = _outcome(lambda: op.root(walker, tree, path))
        finally:
            walker.close()
        assert _signature(walked) == _signature(result), \
            f"{where}; the walk gave {_describe(walked)} {_signature(walked)}"

    if not case.oracle or op.name in case.no_oracle or _refusal(underneath):
        if result[0] == "err" and exp is None:
            raise AssertionError(f"{where}: no expectation and no oracle")
        if result[0] == "err" and op.mutates:
            assert after == before, f"{where}: a refused op changed the tree"
        return
    _compare_with_os(case, op, tree, result, tmp, make_root, where)


class _WalkOnly:
    """``make_root``'s backend config with the fast path off."""

    def __init__(self, make_root) -> None:
        self.backend_name = make_root.backend_name
        self.fast_path = False


def _signature(result: tuple) -> tuple:
    kind, value = result
    if kind == "ok":
        return ("ok", value)
    return ("err", type(value), getattr(value, "errno", None), getattr(value, "filename", None),
            getattr(value, "filename2", None), getattr(value, "component", None),
            getattr(value, "reason", None), getattr(value, "kind", None))


def _compare_with_os(case: Case, op: Op, tree: Tree, result: tuple, tmp: Path,
                     make_root, where: str) -> None:
    if op.name == "makedirs_dry":
        # the oracle of a dry run is the real run, on an identical tree
        other = build(tmp / "o", case.fs)
        prepare(other, op, case.target)
        real = _outcome(lambda: make_root(other.ws).makedirs(other.subst(case.path), 0o755))
        _same(result, real, where)
        return
    if op.mutates:
        other = build(tmp / "o", case.fs)
        prepare(other, op, case.target)
    else:
        other = tree
    host = other.host(case.path)
    expected = _outcome(lambda: op.os(other, host))
    if result[0] == "ok" and expected[0] == "ok":
        assert op.cmp(result[1]) == expected[1], f"{where}; os gave {_describe(expected)}"
    else:
        _same(result, expected, where)
    if op.mutates:
        assert snapshot(tree) == snapshot(other), \
            f"{where}: the tree differs from os's ({_describe(expected)})"


def _same(result: tuple, expected: tuple, where: str) -> None:
    if result[0] == "ok" or expected[0] == "ok":
        assert result[0] == expected[0] and result[1] == expected[1], \
            f"{where}; os gave {_describe(expected)}"
        return
    got, want = result[1], expected[1]
    assert isinstance(got, OSError) and isinstance(want, OSError), \
        f"{where}; os gave {_describe(expected)}"
    assert got.errno == want.errno, f"{where}; os gave {_describe(expected)}"
