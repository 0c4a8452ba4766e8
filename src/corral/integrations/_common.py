"""What every adapter shares: importing its framework with an install hint,
the tools to offer, and calling a toolbox from async code."""

from __future__ import annotations

import importlib
from types import ModuleType
from typing import TYPE_CHECKING, Any

from ..tools import offered_specs

if TYPE_CHECKING:
    from ..tools import Toolbox, ToolSpec

__all__ = ["require", "acall", "specs_of"]


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
    """``await toolbox.acall(name, args)`` (contract C4: thread offload,
    cancellation-safe, the toolbox's call deadline)."""
    return await toolbox.acall(name, args)
