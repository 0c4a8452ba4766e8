"""THREATS rows 35 and 35b's tree and move, shared by the files that put
the move in one window through a ``FaultBackend`` hook: ``root/a/b/c``
(holding ``inner/`` and ``f``) beside an outside ``out/s`` (``g``, ``gd/``).
The move renames ``a`` out of the root and puts ``s`` in place of ``c``."""

from __future__ import annotations

import os
from collections.abc import Callable

OUTSIDE_ONLY = ["g", "gd"]  # s's entries


def tree(base: str) -> tuple[str, str]:
    """The root and the outside folder, made under ``base``."""
    root, out = os.path.join(base, "root"), os.path.join(base, "out")
    os.makedirs(os.path.join(root, "a", "b", "c", "inner"))
    with open(os.path.join(root, "a", "b", "c", "f"), "wb") as fh:
        fh.write(b"inside")
    s = os.path.join(out, "s")
    os.makedirs(os.path.join(s, "gd"))
    with open(os.path.join(s, "g"), "wb") as fh:
        fh.write(b"OUTSIDE")
    return root, out


def dance(root: str, out: str) -> Callable[[], None]:
    """The move, to run inside the window (``a`` out, ``s`` in for ``c``)."""
    def move() -> None:
        os.rename(os.path.join(root, "a"), os.path.join(out, "a"))
        os.rename(os.path.join(out, "a", "b", "c"), os.path.join(out, "held"))
        os.rename(os.path.join(out, "s"), os.path.join(out, "a", "b", "c"))
    return move
