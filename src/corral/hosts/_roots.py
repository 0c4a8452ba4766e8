"""Names for root directories, as hosts show them."""

from __future__ import annotations

import os
from collections.abc import Iterable

__all__ = ["root_names"]


def root_names(paths: Iterable[str]) -> list[str]:
    """A unique, readable name for each root directory: its base name
    (``root`` for ``/``), then ``-2``, ``-3``... for repeats."""
    names: list[str] = []
    for path in paths:
        base = os.path.basename(os.path.abspath(path)) or "root"  # abspath normalises
        if base in (".", ".."):
            base = "root"
        name, n = base, 1
        while name in names:
            n += 1
            name = f"{base}-{n}"
        names.append(name)
    return names
