"""What every adapter shares: importing its framework with an install hint,
the tools to offer, and calling a toolbox from async code."""

from __future__ import annotations

import importlib
import re
from collections.abc import Callable, Iterable
from types import ModuleType
from typing import TYPE_CHECKING, Any

from ..tools import Code, Kind, Refusal, offered_specs

if TYPE_CHECKING:
    from ..tools import Toolbox, ToolSpec

__all__ = ["require", "acall", "specs_of", "too_deep", "nested_deeper", "MAX_DEPTH", "as_word",
           "reworded", "named_in", "NAMED"]

MAX_DEPTH = 500  # arguments nested deeper are refused where a framework would choke on them


def require(module: str, package: str, feature: str) -> ModuleType:
    """``import module``, or an ``ImportError`` that says what to install."""
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        raise ImportError(
            f"{feature} needs the {package!r} package, which is not installed: "
            f"pip install {package}") from exc


def specs_of(toolbox: Toolbox) -> list[ToolSpec]:
    """The tools ``toolbox`` offers (read-only toolboxes offer fewer)."""
    return offered_specs(toolbox)


async def acall(toolbox: Toolbox, name: str, args: Any) -> dict[str, Any]:
    """``await toolbox.acall(name, args)`` (every call bounded: thread offload,
    cancellation-safe, the toolbox's call deadline)."""
    return await toolbox.acall(name, args)


def too_deep(tool: str) -> dict[str, Any]:
    """The refusal for arguments nested too deeply to parse (the model's
    JSON text): an answer the model can act on, as every refusal is."""
    return Refusal(Code.INVALID_ARGUMENT,
                   f"{tool}: the arguments are nested too deeply to read as JSON",
                   "Pass the arguments as one flat JSON object, as the tool's schema shows.",
                   details={"field": "arguments"}, kind=Kind.ARGUMENT).envelope()


def nested_deeper(value: Any, depth: int) -> bool:
    """Whether ``value`` has lists or dicts nested more than ``depth`` deep
    (looked at without recursion, and no further than ``depth``)."""
    level: list[Any] = [value]
    for _ in range(depth + 1):
        inner: list[Any] = []
        for item in level:
            if isinstance(item, dict):
                inner.extend(item.values())
            elif isinstance(item, (list, tuple)):
                inner.extend(item)
        if not inner:
            return False
        level = inner
    return True


# a name's characters around a word make it part of the name (a full stop
# followed by a letter too: ``tools/edit_file.py``; one ending a sentence not)
_BEFORE = r"(?<![\w/.\-'\\])"
_AFTER = r"(?![\w/\-'\\]|\.\w)"
# a refusal's details that hold names of the tree
NAMED = ("path", "missing", "didYouMean")


def as_word(pattern: str) -> re.Pattern[str]:
    """``pattern`` where it stands as a word of a sentence, never inside a
    name (``edit_file`` in ``tools/edit_file.py``)."""
    return re.compile(f"{_BEFORE}(?:{pattern}){_AFTER}")


def reworded(text: str, rewrite: Callable[[str], str], names: Iterable[object]) -> str:
    """``text`` with a tool's words put in an adapter's (``rewrite``),
    every one of ``names`` that it says (the call's paths, those a
    refusal's details carry) kept as it is on the disk."""
    kept = sorted({n for n in names if isinstance(n, str) and n}, key=len, reverse=True)
    parts = re.split("(" + "|".join(map(re.escape, kept)) + ")", text) if kept else [text]
    return "".join(part if at % 2 else rewrite(part) for at, part in enumerate(parts))


def named_in(details: object) -> list[object]:
    """The names of the tree a refusal's ``details`` carry."""
    out: list[object] = []
    if isinstance(details, dict):
        for key in NAMED:
            value = details.get(key)
            out.extend(value if isinstance(value, list) else [value])
    return out
