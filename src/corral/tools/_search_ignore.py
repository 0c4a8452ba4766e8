""".gitignore rules, matched without backtracking.

Each line becomes a :class:`~._search_glob.GlobMatcher` (the same
automaton glob uses, so a hostile line such as ``*a*a*a*a*a*a*a*a*b`` costs
a linear scan of each name), with git's reading of a line: ``#`` comments,
``!`` negation, a trailing ``/`` for directories only, a ``/`` at the start
or in the middle anchoring the line to the file's directory (else it
matches a name at any depth), ``**`` as in glob, trailing spaces dropped
unless escaped, braces literal.

:class:`IgnoreRules` applies the files met on the way down with git's
precedence: a deeper file wins, and in one file the last matching line
wins; an ignored directory is not entered, so nothing in it can be
re-included (``*`` then ``!*/`` re-opens directories, as in git).
A file is read up to :data:`MAX_IGNORE_BYTES` and :data:`MAX_RULES` lines.
"""

from __future__ import annotations

from dataclasses import dataclass

from ._refusal import Refusal
from ._search_glob import GlobMatcher, compile_glob

__all__ = [
    "GIT_DIR",
    "IGNORE_FILE",
    "MAX_IGNORE_BYTES",
    "MAX_RULES",
    "IgnoreFile",
    "IgnoreRules",
    "parse_ignore",
]

IGNORE_FILE = ".gitignore"
GIT_DIR = ".git"
MAX_IGNORE_BYTES = 1024 * 1024  # a larger .gitignore is read up to here
MAX_RULES = 10_000  # lines kept of one file
MAX_LINE_CHARS = 4096  # a longer line is dropped (git has PATH_MAX too)


@dataclass(frozen=True)
class _Rule:
    matcher: GlobMatcher
    negate: bool


def _strip_trailing_spaces(line: str) -> str:
    """Trailing spaces go unless escaped (``"a\\ "`` keeps one, as git)."""
    end = len(line)
    while end and line[end - 1] == " " and not (end >= 2 and line[end - 2] == "\\"):
        end -= 1
    return line[:end]


def _rule(line: str) -> _Rule | None:
    line = _strip_trailing_spaces(line.rstrip("\r"))
    if not line or line.startswith("#") or len(line) > MAX_LINE_CHARS:
        return None
    negate = line.startswith("!")
    if negate or line.startswith(("\\#", "\\!")):
        line = line[1:]
    dirs_only = line.endswith("/")
    body = line.rstrip("/")
    anchored = "/" in body
    body = body.lstrip("/")
    if not body:
        return None
    try:
        matcher = compile_glob(body + ("/" if dirs_only else ""), "gitignore line",
                               anchored=anchored, braces=False)
    except Refusal:  # a line with "..": git never matches it either
        return None
    return _Rule(matcher, negate)


class IgnoreFile:
    """The rules of one .gitignore, last line first (those that can match
    a file apart: a directory-only line never decides for a file)."""

    def __init__(self, rules: list[_Rule]) -> None:
        self._rules = rules[::-1]
        self._file_rules = [r for r in self._rules if not r.matcher.dirs_only]

    def __len__(self) -> int:
        return len(self._rules)

    def decide(self, sub: str, name: str, is_dir: bool) -> bool | None:
        """``True`` ignored, ``False`` re-included, ``None`` no line applies
        (``sub`` relative to the file's directory, ``name`` its last part)."""
        for rule in self._rules if is_dir else self._file_rules:
            matcher = rule.matcher
            if matcher.match_name(name) if matcher.name_only else matcher.match(sub):
                return not rule.negate
        return None


def parse_ignore(data: bytes) -> IgnoreFile | None:
    """The rules of one .gitignore (``None`` if it has none)."""
    rules = []
    for line in data.decode("utf-8", "replace").split("\n"):
        rule = _rule(line)
        if rule is not None:
            rules.append(rule)
            if len(rules) >= MAX_RULES:
                break
    return IgnoreFile(rules) if rules else None


class IgnoreRules:
    """The .gitignore files in force at one point of a walk.

    Each is kept with the root-relative directory it sits in (``""`` for
    the root, else ``"a/b/"``); a path is checked against the deepest first
    and the first file that has a matching line decides.
    """

    def __init__(self) -> None:
        self._files: list[tuple[str, IgnoreFile]] = []

    def __bool__(self) -> bool:
        return bool(self._files)

    def push(self, prefix: str, spec: IgnoreFile) -> None:
        self._files.append((prefix, spec))

    def pop(self) -> None:
        self._files.pop()

    def ignored(self, real: str, is_dir: bool, name: str | None = None) -> bool:
        """Whether the root-relative ``real`` path (whose last part is
        ``name``) is ignored; its parent directories are taken to have been
        checked already."""
        if name is None:
            name = real.rsplit("/", 1)[-1]
        for prefix, spec in reversed(self._files):
            if real.startswith(prefix):
                verdict = spec.decide(real[len(prefix):], name, is_dir)
                if verdict is not None:
                    return verdict
        return False

    def ignored_path(self, real: str, is_dir: bool) -> bool:
        """Whether ``real`` or one of its parent directories is ignored."""
        parts = real.split("/")
        for depth in range(1, len(parts)):
            if self.ignored("/".join(parts[:depth]), True):
                return True
        return self.ignored(real, is_dir)
