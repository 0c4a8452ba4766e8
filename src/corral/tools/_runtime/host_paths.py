"""The host paths that name a root, for absolute paths a model writes.

A model may write a file inside the root by its absolute host path: by the
path the root was opened by, or by that path's realpath (``/tmp`` and
``/private/tmp`` on macOS).  Only those spellings are recognised; nothing
else is looked up on the host.
"""

from __future__ import annotations

import os

from ...contained import Root

__all__ = ["root_prefixes", "under"]


def root_prefixes(root: Root) -> list[str]:
    """The host paths naming ``root`` (without a trailing '/'), longest first."""
    prefixes = {root.path.rstrip("/") or "/", os.path.realpath(root.path).rstrip("/") or "/"}
    return sorted(prefixes, key=len, reverse=True)


def under(prefix: str, path: str) -> bool:
    """Whether host ``path`` is ``prefix`` (as :func:`root_prefixes` gives
    it) or lies below it."""
    return prefix in ("/", path) or path.startswith(prefix + "/")
