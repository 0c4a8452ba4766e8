"""The answers of the search tools (glob, grep), as types.

Their shared fields (what was left out and why; a suggested call a probe
verified) are filled in by the walk and by :mod:`.hints`, so the types live
here rather than in each tool's module.
"""

from __future__ import annotations

from typing import Any, NotRequired, TypedDict

__all__ = ["Ignored", "Offered", "Found", "GlobResult", "GrepResult", "Listed", "Translated",
           "IGNORED_SCHEMA"]


class Ignored(TypedDict):
    """What .gitignore rules left out: files, directories, some examples."""

    paths: int
    directories: int
    examples: NotRequired[list[str]]


class Offered(TypedDict):
    """A note for the model, and a suggested call when one finds more."""

    note: NotRequired[str]
    suggestedTool: NotRequired[str]
    suggestedArgs: NotRequired[dict[str, Any]]
    diagnosis: NotRequired[str]


class Found(Offered):
    """The fields both search tools answer with."""

    path: str
    pattern: str
    truncated: bool
    ignored: NotRequired[Ignored]
    skipped: NotRequired[dict[str, int]]  # entries left out, by reason
    denied: NotRequired[int]


class GlobResult(Found):
    paths: list[str]
    literal: NotRequired[bool]  # the pattern, read as a path, named the file listed


class Listed(TypedDict):
    """grep's results under the key its outputMode names."""

    matches: NotRequired[list[dict[str, Any]]]  # path, line, text (and context lines)
    files: NotRequired[list[str]]
    counts: NotRequired[list[dict[str, Any]]]  # path, count


class Translated(TypedDict):
    """A pattern read in another syntax than it was written in."""

    pattern: str
    notes: list[str]


class GrepResult(Found, Listed):
    outputMode: str
    filesSearched: int
    filesIncluded: NotRequired[int]
    limit: NotRequired[int]
    context: NotRequired[int]
    include: NotRequired[str]
    translated: NotRequired[Translated]
    encodings: NotRequired[dict[str, str]]  # files not searched being UTF-16/32: their encoding


IGNORED_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"paths": {"type": "integer"}, "directories": {"type": "integer"},
                   "examples": {"type": "array", "items": {"type": "string"}}},
    "required": ["paths", "directories"],
}
