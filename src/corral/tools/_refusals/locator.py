"""The file a model meant by a path that does not exist, when the path is
spelled in a way models often spell paths:

* wrapped in quotes or backticks, or given as a JSON list of one path;
* starting with ``$HOME/``, ``${HOME}/`` or ``~/`` (the model took the root
  for its home), or ``@/`` (the TypeScript alias for ``src/``);
* with a leading folder too many (the project folder's own name,
  ``myproject/src/util.py``) or too few (``util.py`` for ``src/util.py``,
  relative to a folder the model believes it is in).

The last needs a search of the tree: breadth first, bounded by
:data:`MAX_ENTRIES` entries and :data:`MAX_SECONDS` (and the call's own
deadline), skipping what the deny rules hide and the folders no one means
(``.git``, ``node_modules``, virtual environments).  A found path is
offered only if it exists now and no rule hides it.

:func:`close_paths` finds the names close to a missing one in the
directory that holds it (a typo).  Both look through the call's view
(:class:`~.looking.Looking`); what they find is a fact the classification
is given.
"""

from __future__ import annotations

import difflib
import json
import posixpath
import re
import time
from collections import deque
from typing import NamedTuple

from .looking import Looking

__all__ = ["MAX_ENTRIES", "MAX_SECONDS", "MAX_SIBLINGS", "Found", "close_paths", "respelled"]

MAX_ENTRIES = 20_000  # directory entries looked at in one search
MAX_SECONDS = 0.25
MAX_FOUND = 3
MAX_SIBLINGS = 5000  # names of one directory compared with a missing one
_SKIPPED = frozenset({".git", ".hg", ".svn", "node_modules", ".venv", "venv", "__pycache__",
                      ".mypy_cache", ".pytest_cache", ".tox", ".ruff_cache"})
_QUOTES = re.compile(r"""\A\s*(["'`])(.*)\1\s*\Z""", re.S)
_HOME = re.compile(r"\A(?:\$HOME|\$\{HOME\}|~)/+")


class Found(NamedTuple):
    """Paths that exist for a path that does not, and how it was read:
    ``searched``, the entries a search looked at (0: no search);
    ``complete``, False when the search stopped at its bound."""

    paths: tuple[str, ...]
    how: str
    searched: int = 0
    complete: bool = True


def close_paths(path: str, missing: str, look: Looking) -> list[str]:
    """Existing paths close to ``path`` whose component ``missing`` is not
    there (a typo in the name or in a parent directory); never a path a deny
    rule hides."""
    parent, _, name = missing.rstrip("/").rpartition("/")
    rest = path.rstrip("/")[len(missing.rstrip("/")):]  # what follows the missing part
    try:
        siblings = [entry.name for entry in look.entries(parent or ".")][:MAX_SIBLINGS]
    except OSError:
        return []
    lowered = {s.lower(): s for s in siblings}
    matches = []
    if name.lower() in lowered:
        matches.append(lowered[name.lower()])
    matches += [m for m in difflib.get_close_matches(name, siblings, n=5, cutoff=0.6)
                if m not in matches]
    out = []
    for match in matches:
        candidate = f"{parent}/{match}{rest}" if parent else match + rest
        if _exists(look, candidate):  # a hidden name must not leak through a suggestion
            out.append(candidate)
    return out[:3]


def _exists(look: Looking, rel: str) -> bool:
    if not rel or rel.startswith("/"):
        return False
    try:
        return look.shown(rel)
    except (OSError, ValueError):
        return False


def _unwrapped(path: str) -> tuple[str, str] | None:
    """``path`` without the wrapping a model added, and what it was."""
    quoted = _QUOTES.match(path)
    if quoted:
        return quoted.group(2).strip(), "without its quotes"
    if path.startswith("[") and path.endswith("]"):
        try:
            value = json.loads(path)
        except ValueError:
            return None
        if isinstance(value, list) and len(value) == 1 and isinstance(value[0], str):
            return value[0], "as the one path of the JSON list it was given as"
    home = _HOME.match(path)
    if home:
        return path[home.end():], f"relative to the root rather than to {home.group().rstrip('/')}"
    if path.startswith("@/"):
        return "src/" + path[2:], "with src/ for the @/ alias"
    return None


def respelled(look: Looking, path: str, *, search: bool = True) -> Found | None:
    """The paths ``path`` most likely meant, or ``None``."""
    unwrapped = _unwrapped(path)
    if unwrapped is not None:
        meant, how = unwrapped
        meant = meant.strip("/") or "."
        if _exists(look, meant):
            return Found((meant,), how)
        path = meant  # and look further for what the unwrapped path meant
    parts = [p for p in path.split("/") if p not in ("", ".")]
    for drop in (1, 2):
        if len(parts) > drop:
            shorter = "/".join(parts[drop:])
            if _exists(look, shorter):
                return Found((shorter,), f"without its leading {'/'.join(parts[:drop])}/")
    if not search or not parts or ".." in parts:
        return None
    return _search(look, "/".join(parts))


def _search(look: Looking, path: str) -> Found | None:
    """Paths ending in ``/path`` (a leading folder left out), else paths
    with the same base name, by a bounded breadth-first walk."""
    name = posixpath.basename(path)
    suffix = "/" + path
    deadline = time.monotonic() + MAX_SECONDS
    ending: list[str] = []
    same_name: list[str] = []
    queue: deque[str] = deque(["."])
    seen = 0
    complete = True
    while queue:
        if seen >= MAX_ENTRIES or time.monotonic() > deadline:
            complete = False
            break
        look.checkpoint()
        directory = queue.popleft()
        try:
            entries = sorted(look.entries(directory), key=lambda e: e.name)
        except OSError:
            continue
        for entry in entries:
            seen += 1
            rel = entry.path
            descend = entry.kind == "dir" and entry.name not in _SKIPPED
            named = entry.name == name and rel != path
            # only an entry the search uses is decided on (a decision weighs
            # every name leading to it: a directory of many links is costly)
            if not (descend or named) or look.hides(rel):
                continue
            if descend:
                queue.append(rel)
            if named:
                (ending if rel.endswith(suffix) else same_name).append(rel)
        if len(ending) > MAX_FOUND:
            break
    found = [p for p in (ending or same_name) if _exists(look, p)]
    if not found:
        return None
    how = ("with the leading folders it left out" if ending else
           f"as a file named {name} elsewhere")
    return Found(tuple(sorted(found, key=lambda p: (p.count("/"), p))[:MAX_FOUND]), how, seen,
                 complete)
