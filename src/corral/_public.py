"""One helper for the packages' ``__init__`` modules: the classes and
functions they export say the public module they are exported from.

``corral.contained.Root.__module__`` is then ``"corral.contained"`` rather
than the private ``"corral.contained._root"``, so reprs, tracebacks, docs
and pickles name the path users import (as trio's ``fixup_module_metadata``
does).  Pinned by ``tests/test_exports.py``.
"""

from __future__ import annotations

import inspect
from collections.abc import Iterable, Mapping
from typing import Any

__all__ = ["publish"]


def publish(module_name: str, namespace: Mapping[str, Any], names: Iterable[str]) -> None:
    """Set ``__module__`` to ``module_name`` for each exported class or
    function that a private submodule of ``module_name`` defines."""
    private_prefix = module_name + "._"
    for name in names:
        obj = namespace[name]
        if not (inspect.isclass(obj) or inspect.isfunction(obj)):
            continue
        if getattr(obj, "__module__", "").startswith(private_prefix):
            obj.__module__ = module_name
