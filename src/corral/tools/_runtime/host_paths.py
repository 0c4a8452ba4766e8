"""The host paths that name a root, for absolute paths a model writes.

A model may write a file inside the root by its absolute host path: by the
path the root was opened by, or by that path's realpath (``/tmp`` and
``/private/tmp`` on macOS).  Only those spellings are recognised; nothing
else is looked up on the host.
"""

from __future__ import annotations

import os

__all__ = ["root_prefixes", "under"]


def root_prefixes(root_path: str) -> list[str]:
    """The host paths naming the root opened by ``root_path`` (without a
    trailing '/'), longest first."""
    prefixes = {root_path.rstrip("/") or "/", os.path.realpath(root_path).rstrip("/") or "/"}
    return sorted(prefixes, key=len, reverse=True)


def under(prefix: str, path: str) -> bool:
    """Whether host ``path`` is ``prefix`` (as :func:`root_prefixes` gives
    it) or lies below it."""
    return prefix in ("/", path) or path.startswith(prefix + "/")
