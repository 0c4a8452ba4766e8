"""Helpers shared by the tools tests: running catalogue cases, checking an
envelope against the contract, and a fault-injecting backend."""

from __future__ import annotations

import errno
import importlib.util
import json
import os
import sys
from pathlib import Path
from typing import Any
from collections.abc import Callable

from corral.contained import OsBackend
from corral.tools import Toolbox

HERE = Path(__file__).parent
if str(HERE) not in sys.path:
    sys.path.insert(0, str(HERE))

from catalogue import Case, build_tree  # noqa: E402

CODES = {"INVALID_ARGUMENT", "NOT_FOUND", "OUTSIDE_ROOT", "ALREADY_EXISTS", "AMBIGUOUS", "STALE",
         "TOO_LARGE", "UNSUPPORTED", "DENIED", "INTERNAL"}
REFUSAL_KEYS = {"ok", "code", "message", "details", "hint", "suggestedTool", "suggestedArgs"}
OUTSIDE_SECRET = "outside secret\n"


def load_cases() -> list[Case]:
    """Every ``Case`` from every ``cases_*.py`` beside this file."""
    cases: list[Case] = []
    for path in sorted(HERE.glob("cases_*.py")):
        spec = importlib.util.spec_from_file_location(f"corral_catalogue_{path.stem}", path)
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        for case in module.CASES:
            assert isinstance(case, Case), f"{path.name}: {case!r} is not a Case"
            cases.append(case)
    return cases


def make_case_tree(base: Path, case: Case) -> Path:
    root = base / "root"
    root.mkdir()
    outside = base / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_text(OUTSIDE_SECRET)
    build_tree(root, case.tree)
    if case.prepare is not None:
        case.prepare(root)
    return root


def run_case(case: Case, base: Path, make_root: Callable[..., Any] | None = None
             ) -> tuple[dict[str, Any], Toolbox]:
    root_path = make_case_tree(base, case)
    root = make_root(root_path) if make_root is not None else root_path
    toolbox = Toolbox(root, **case.toolbox_options)
    return toolbox.call(case.tool, case.args, **case.call_options), toolbox


def assert_valid_envelope(envelope: Any) -> dict[str, Any]:
    """The contract's shape, after a JSON round trip; returns the round-tripped copy."""
    assert isinstance(envelope, dict)
    text = json.dumps(envelope, allow_nan=False)
    copy = json.loads(text)
    assert copy == envelope, "the envelope does not survive a JSON round trip"
    assert isinstance(copy.get("ok"), bool)
    if copy["ok"]:
        return copy
    assert set(copy) <= REFUSAL_KEYS, set(copy) - REFUSAL_KEYS
    assert copy["code"] in CODES
    assert isinstance(copy["message"], str) and copy["message"]
    assert isinstance(copy["details"], dict)
    assert copy["details"].get("message") == copy["message"]
    assert isinstance(copy["hint"], str) and copy["hint"]
    assert ("suggestedTool" in copy) == ("suggestedArgs" in copy)
    if "suggestedTool" in copy:
        assert isinstance(copy["suggestedTool"], str)
        assert isinstance(copy["suggestedArgs"], dict)
    if copy["code"] == "INTERNAL":
        assert set(copy["details"]) == {"message"}
    return copy


class FaultBackend(OsBackend):
    """``OsBackend`` that fails chosen calls with an errno.

    ``open_faults``: name -> errno for ``open_at`` of that name (a temporary
    file of ``write_bytes`` is matched by the name it stands for: ``.x.txt.*``
    matches ``x.txt``).  ``write_faults``: name -> errno for ``write`` to an
    fd opened for that name.
    """

    def __init__(self, *, open_faults: dict[str, int] | None = None,
                 write_faults: dict[str, int] | None = None) -> None:
        super().__init__(openat2=False)
        self.open_faults = dict(open_faults or {})
        self.write_faults = dict(write_faults or {})
        self._fd_names: dict[int, str] = {}

    @staticmethod
    def _target(name: str) -> str:
        if name.startswith(".") and name.endswith(".corral-tmp"):
            return name[1:].rsplit(".", 2)[0]
        return name

    def open_at(self, dir_fd: int, name: str, flags: int, mode: int = 0o666) -> int:
        target = self._target(name)
        if target in self.open_faults:
            code = self.open_faults[target]
            raise OSError(code, os.strerror(code), name)
        fd = super().open_at(dir_fd, name, flags, mode)
        self._fd_names[fd] = target
        return fd

    def write(self, fd: int, data: bytes | memoryview) -> int:
        name = self._fd_names.get(fd)
        if name in self.write_faults:
            code = self.write_faults[name]
            raise OSError(code, os.strerror(code))
        return super().write(fd, data)

    def close(self, fd: int) -> None:
        self._fd_names.pop(fd, None)
        super().close(fd)


class HookBackend:
    """Any backend, with ``hooks``: method name -> callable run before each
    call of that method (to move a fake clock, set a cancel token, block)."""

    def __init__(self, inner: Any, hooks: dict[str, Callable[[], None]] | None = None) -> None:
        self._inner = inner
        self.hooks = dict(hooks or {})

    def __getattr__(self, name: str) -> Any:
        value = getattr(self._inner, name)
        hook = self.hooks.get(name)
        if hook is None or not callable(value):
            return value

        def hooked(*args: Any, **kwargs: Any) -> Any:
            hook()
            return value(*args, **kwargs)

        return hooked


class FakeClock:
    """Replaces the tools' deadline clock: ``advance`` moves it."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float = 3600.0) -> None:
        self.now += seconds


ENOSPC = errno.ENOSPC
EACCES = errno.EACCES


def make_repository(top: Path) -> Path:
    """A git work tree at ``top`` in git's minimal layout (``.git/HEAD``,
    ``objects/``, ``refs/``: what ``git rev-parse`` accepts), for fixtures
    whose .gitignore files must apply: outside a work tree none does, as
    in git and ripgrep."""
    git = top / ".git"
    for sub in ("objects", "refs/heads"):
        (git / sub).mkdir(parents=True, exist_ok=True)
    if not (git / "HEAD").exists():
        (git / "HEAD").write_text("ref: refs/heads/main\n")
    return top
