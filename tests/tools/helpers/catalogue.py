"""The refusal catalogue: every registered tool's refusals, as data.

Each ``cases_<tool>.py`` in tests/tools defines ``CASES``, a list of
:class:`Case`.  ``test_refusal_catalogue.py`` runs them all, asserts the
serialized envelope (code, the sentence inside ``details``, the hint, the
details given), and fails if a registered tool has no case (so no tool's refusals go untested).
Where a case expects a suggested call, the test makes exactly that call and
requires it to succeed.

A cases module imports ``from .helpers.catalogue import Case`` (tests/tools is
a package).  Each case runs in a fresh tree: the root
is ``<tmp>/root`` (what ``tree`` and ``prepare`` fill in), and beside it
``<tmp>/outside/secret.txt`` exists, for symlinks and ``..`` that lead out.
"""

from __future__ import annotations

import importlib
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from collections.abc import Callable

from corral.tools import Toolbox

CASES_DIR = Path(__file__).resolve().parent.parent  # tests/tools: the cases_*.py modules
OUTSIDE_SECRET = "outside secret\n"


@dataclass
class Case:
    tool: str
    name: str
    args: dict[str, Any]
    code: str
    message: str  # the exact sentence expected in "message" and details["message"]
    hint: str  # the exact hint
    details: dict[str, Any] = field(default_factory=dict)  # must be a subset of details
    suggested_tool: str | None = None  # when set, suggestedTool must be this and must work
    suggested_args: dict[str, Any] | None = None  # when set, suggestedArgs must equal this
    # the tree: path -> str/bytes (file), None (directory), ("link", target),
    # ("fifo",), ("hardlink", existing_path)
    tree: dict[str, Any] = field(default_factory=dict)
    toolbox_options: dict[str, Any] = field(default_factory=dict)  # e.g. deny, authorize
    prepare: Callable[[Path], None] | None = None  # extra setup on the root's host path
    call_options: dict[str, Any] = field(default_factory=dict)  # Toolbox.call(timeout=, cancel=)
    exact: bool = False  # details must be exactly ``details`` (plus the message)


def build_tree(root: Path, tree: dict[str, Any]) -> None:
    """Create ``tree`` under ``root`` (see :attr:`Case.tree`)."""
    for rel, spec in tree.items():
        target = root / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        if spec is None:
            target.mkdir(parents=True, exist_ok=True)
        elif isinstance(spec, str):
            target.write_bytes(spec.encode("utf-8"))
        elif isinstance(spec, bytes):
            target.write_bytes(spec)
        elif spec[0] == "link":
            os.symlink(spec[1], target)
        elif spec[0] == "fifo":
            os.mkfifo(target)
        elif spec[0] == "hardlink":
            os.link(root / spec[1], target)
        else:
            raise ValueError(f"unknown tree spec {spec!r}")


def load_cases() -> list[Case]:
    """Every ``Case`` from every ``cases_*.py`` in tests/tools."""
    cases: list[Case] = []
    for path in sorted(CASES_DIR.glob("cases_*.py")):
        module = importlib.import_module(f"..{path.stem}", __package__)
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
