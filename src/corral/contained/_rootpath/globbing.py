"""``RootPath.glob``, ``rglob``, ``match`` and ``full_match``: pathlib's
rules, with every listing and every test done through the root.

The rules are those of the running Python's ``pathlib`` where versions
differ (a final ``**`` yields files too from 3.13 on, and ``**`` inside a
component is a plain ``*`` there where 3.11 and 3.12 refuse it; a literal
component matches a dangling link from 3.13 on).  Matching is
``fnmatch``'s within a component, dot files included, case-sensitive
unless ``case_sensitive=False``.  ``**`` descends only real directories
(symlinks too with ``recurse_symlinks=True``); other components follow
in-root symlinks to directories, as pathlib does.  What leads out of the
root is absent, so it is never listed nor descended.
"""

from __future__ import annotations

import fnmatch
import os
import re
import stat as st
import sys
from collections.abc import Callable, Iterator
from functools import lru_cache
from pathlib import PurePosixPath

from .root import ViewEntry, ViewRoot, root_unusable

__all__ = ["NonRelativePatternError", "Glob", "parse_pattern", "pattern_text", "full_match",
           "match_right"]

_NEW_GLOB = sys.version_info >= (3, 13)
_WILDCARD = re.compile(r"[*?\[]")
Matcher = Callable[[str], "re.Match[str] | None"]


class NonRelativePatternError(NotImplementedError, ValueError):
    """An absolute glob pattern: ``NotImplementedError`` as pathlib raises,
    and a ``ValueError`` (a bad argument)."""


@lru_cache(maxsize=256)
def _compiled(part: str, case_sensitive: bool) -> Matcher:
    flags = 0 if case_sensitive else re.IGNORECASE
    return re.compile(fnmatch.translate(part), flags).match


def pattern_text(pattern: object) -> str:
    if isinstance(pattern, str):
        return pattern
    if isinstance(pattern, os.PathLike):
        text = os.fspath(pattern)
        if isinstance(text, str):
            return text
    raise TypeError(f"a glob pattern is str or os.PathLike[str], not {type(pattern).__name__}")


def parse_pattern(pattern: object) -> tuple[tuple[str, ...], bool]:
    """(components, directories only) of a glob pattern, checked as
    pathlib checks it."""
    text = pattern_text(pattern)
    if not text:
        raise ValueError(f"Unacceptable pattern: {text!r}")
    if text.startswith("/"):
        raise NonRelativePatternError(f"Non-relative patterns are unsupported: {text!r}")
    parts = tuple(p for p in text.split("/") if p and p != ".")
    if not parts:
        raise ValueError(f"Unacceptable pattern: {text!r}")
    if not _NEW_GLOB:
        for part in parts:
            if "**" in part and part != "**":
                raise ValueError("Invalid pattern: '**' can only be an entire path component")
    return parts, text.endswith("/")


def _join(base: PurePosixPath, name: str) -> PurePosixPath:
    return base / name


class Glob:
    """One glob run below ``base`` (root-relative, as the caller spelled it)."""

    def __init__(self, root: ViewRoot, parts: tuple[str, ...], dir_only: bool, *,
                 case_sensitive: bool | None, recurse_symlinks: bool) -> None:
        self.root = root
        self.parts = parts
        self.dir_only = dir_only
        self.case_sensitive = case_sensitive is not False
        self.recurse_symlinks = recurse_symlinks

    # -- what the root says, any error but an unusable root being "nothing there"
    def _mode(self, path: PurePosixPath, follow: bool) -> int | None:
        try:
            return self.root.stat(path, follow_symlinks=follow).st_mode
        except OSError as exc:
            if root_unusable(exc):
                raise
            return None
        except ValueError:
            return None

    def _is_dir(self, path: PurePosixPath) -> bool:
        mode = self._mode(path, True)
        return mode is not None and st.S_ISDIR(mode)

    def _entries(self, path: PurePosixPath) -> list[ViewEntry]:
        try:
            return list(self.root.scandir(path))
        except OSError as exc:
            if root_unusable(exc):
                raise
            return []
        except ValueError:
            return []

    def _entry_is_dir(self, entry: ViewEntry, spelled: PurePosixPath) -> bool:
        """Whether ``entry`` (at ``spelled``) is a directory, a link followed
        along the path as spelled (as ``os.scandir``'s entries do: the
        links counted are the spelled path's)."""
        try:
            if not entry.is_symlink():
                return entry.is_dir(follow_symlinks=False)
        except OSError as exc:
            if root_unusable(exc):
                raise
            return False
        except ValueError:
            return False
        return self._is_dir(spelled)

    # -- selection -----------------------------------------------------------------
    def select(self, base: PurePosixPath) -> Iterator[PurePosixPath]:
        if not self._is_dir(base):
            return iter(())
        return self._select(base, 0)

    def _select(self, base: PurePosixPath, index: int) -> Iterator[PurePosixPath]:
        """What matches from component ``index`` on below ``base``, depth
        first in listing order, with a stack of each component's candidates
        rather than a recursion per component (a pattern of more components
        than Python's recursion limit is matched too)."""
        stack: list[Iterator[_Candidate]] = [iter([(base, index, ())])]
        while stack:
            candidate = next(stack[-1], None)
            if candidate is None:
                stack.pop()
                continue
            path, at, seen = candidate
            if at < len(self.parts):
                stack.append(self._candidates(path, at, seen))
            elif _first_time(path, seen):
                yield path

    def _candidates(self, path: PurePosixPath, index: int, seen: _Seen
                    ) -> Iterator[_Candidate]:
        """What component ``index`` matches below ``path``, each with the
        component to match next."""
        part = self.parts[index]
        if part == "**":
            yield from self._recursive(path, index, seen)
        elif _WILDCARD.search(part) or not self.case_sensitive:
            yield from self._wildcard(path, index, seen)
        else:
            yield from self._literal(path, index, seen)

    def _wants_dir(self, index: int) -> bool:
        """Whether what component ``index`` matches must be a directory."""
        return index + 1 < len(self.parts) or self.dir_only

    def _literal(self, path: PurePosixPath, index: int, seen: _Seen) -> Iterator[_Candidate]:
        child = _join(path, self.parts[index])
        if self._wants_dir(index):
            found = self._is_dir(child)
        else:  # 3.13+: lexists (a dangling link matches); before: exists
            found = self._mode(child, follow=not _NEW_GLOB) is not None
        if found:
            yield child, index + 1, seen

    def _wildcard(self, path: PurePosixPath, index: int, seen: _Seen) -> Iterator[_Candidate]:
        matches = _compiled(self.parts[index], self.case_sensitive)
        wants_dir = self._wants_dir(index)
        for entry in self._entries(path):
            if not matches(entry.name):
                continue
            child = _join(path, entry.name)
            if wants_dir and not self._entry_is_dir(entry, child):
                continue
            yield child, index + 1, seen

    def _recursive(self, path: PurePosixPath, index: int, seen: _Seen) -> Iterator[_Candidate]:
        nxt = index + 1
        while nxt < len(self.parts) and self.parts[nxt] == "**":
            nxt += 1
        last = nxt == len(self.parts)
        if last:
            everything = _NEW_GLOB and not self.dir_only
            for found in self._below(path, with_files=everything):
                yield found, nxt, seen
            return
        # what this "**" leads to is yielded once, however many directories reach it
        mine: set[PurePosixPath] = set()
        for directory in self._below(path, with_files=False):
            yield directory, nxt, (*seen, mine)

    def _below(self, top: PurePosixPath, *, with_files: bool) -> Iterator[PurePosixPath]:
        """``top`` and every directory below it (and every other entry too
        ``with_files``), descending symlinks only with ``recurse_symlinks``."""
        if not self.recurse_symlinks:
            yield from self._below_walk(top, with_files)
            return
        stack = [top]
        while stack:
            here = stack.pop()
            yield here
            dirs: list[PurePosixPath] = []
            for entry in self._entries(here):
                child = _join(here, entry.name)
                if self._entry_is_dir(entry, child):
                    dirs.append(child)
                elif with_files:
                    yield child
            stack.extend(reversed(dirs))

    def _below_walk(self, top: PurePosixPath, with_files: bool) -> Iterator[PurePosixPath]:
        """The root's fd-based walk, which never follows a link; it names
        canonical paths, mapped back to the caller's spelling of ``top``."""
        canonical: str | None = None
        for dirpath, _dirs, files in self.root.walk(top, onerror=_ignore):
            if canonical is None:
                canonical = dirpath
            rel = dirpath[len(canonical) + 1:] if canonical != "." else dirpath
            here = top if dirpath == canonical else top / rel
            yield here
            if with_files:
                for name in files:
                    yield _join(here, name)


#: the sets of matches already yielded by each enclosing "**", outermost first
_Seen = tuple[set[PurePosixPath], ...]
#: a path matched so far, the index of the component it must match next, its "**" sets
_Candidate = tuple[PurePosixPath, int, _Seen]


def _first_time(path: PurePosixPath, seen: _Seen) -> bool:
    """Whether ``path`` passes every enclosing "**"'s once-only rule,
    innermost first (each one it passes keeps it)."""
    for kept in reversed(seen):
        if path in kept:
            return False
        kept.add(path)
    return True


def _ignore(exc: OSError) -> None:
    """Below a directory that is gone or unreadable, nothing matches."""


def _segment_matches(pattern: str, name: str, case_sensitive: bool) -> bool:
    return bool(_compiled(pattern, case_sensitive)(name))


def full_match(path: tuple[str, ...], pattern: str, case_sensitive: bool) -> bool:
    """``PurePath.full_match``: the whole path against the pattern, ``**``
    matching any number of whole components (one at least when it ends the
    pattern after another component)."""
    parts = tuple(p for p in pattern.split("/") if p and p != ".")
    if pattern.startswith("/"):
        return False  # a root-relative path is never absolute
    if parts == ("**",):
        return True
    memo: dict[tuple[int, int], bool] = {}

    def at(pi: int, si: int) -> bool:
        key = (pi, si)
        if key in memo:
            return memo[key]
        if pi == len(parts):
            result = si == len(path)
        elif parts[pi] == "**":
            if pi == len(parts) - 1:
                result = si < len(path)
            else:
                result = any(at(pi + 1, k) for k in range(si, len(path) + 1))
        else:
            result = si < len(path) and _segment_matches(parts[pi], path[si], case_sensitive) \
                and at(pi + 1, si + 1)
        memo[key] = result
        return result

    return at(0, 0)


def match_right(path: PurePosixPath, pattern: str, case_sensitive: bool) -> bool:
    """``PurePath.match``: a relative pattern matched from the right, an
    absolute one against the whole path; ``**`` is a plain ``*``."""
    pat = PurePosixPath(pattern)
    if not pat.parts:
        raise ValueError("empty pattern")
    pat_parts = pat.parts
    parts = path.parts
    if pat.is_absolute():
        if not path.is_absolute() or len(parts) != len(pat_parts):
            return False
        pat_parts, parts = pat_parts[1:], parts[1:]
    elif len(pat_parts) > len(parts):
        return False
    for want, have in zip(reversed(pat_parts), reversed(parts)):
        if not _segment_matches(want, have, case_sensitive):
            return False
    return True
