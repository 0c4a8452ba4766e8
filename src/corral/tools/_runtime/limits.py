"""Limits a host may tune; the defaults suit a coding agent."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import NotRequired, TypedDict

__all__ = ["Limits", "listed_directories", "created_directories", "LISTED_DIRECTORIES",
           "CREATED_SCHEMA"]

# createdDirectories (answers and the host's requests) lists this many at most,
# and at most _LISTED_BYTES of paths (always the first): a 4 KB path through
# 2,000 missing directories would otherwise list 4 MB (depth squared).
LISTED_DIRECTORIES = 16
_LISTED_BYTES = 8192


def listed_directories(created: Sequence[str]) -> tuple[tuple[str, ...], int]:
    """The outermost of ``created`` (canonical, outermost first) to list,
    and how many were left out.  Directories one path creates are nested,
    each inside the one before, so the listed ones and the full path say
    where every one left out is."""
    shown: list[str] = []
    size = 0
    for path in created[:LISTED_DIRECTORIES]:
        size += len(path)
        if shown and size > _LISTED_BYTES:
            break
        shown.append(path)
    return tuple(shown), len(created) - len(shown)


@dataclass(frozen=True)
class Limits:
    """The bounds every tool call keeps to (sizes, counts, deadlines); each has a default."""

    max_path_bytes: int = 4096  # UTF-8 bytes of one path argument
    read_lines: int = 2000  # default line window of read_file
    read_line_chars: int = 2000  # longer lines are cut (and said to be)
    read_bytes: int = 256 * 1024  # text returned by one read_file call
    max_write_bytes: int = 8 * 1024 * 1024  # write_file content, edit_file result
    max_edit_file_bytes: int = 8 * 1024 * 1024  # files edit_file will load
    list_entries: int = 1000
    search_results: int = 200  # glob paths, grep matches
    search_files: int = 100_000  # files one glob or grep walks
    search_line_chars: int = 500  # grep output lines are cut to this
    grep_context: int = 10  # most context lines grep gives
    max_argument_chars: int = 16 * 1024 * 1024  # any one string argument
    call_seconds: float = 30.0  # one call's deadline (Toolbox.call(timeout=...) overrides it)
    read_files_paths: int = 50  # paths one read_files call takes
    read_files_bytes: int = 1024 * 1024  # content (and image data) one read_files call returns
    read_image_bytes: int = 4 * 1024 * 1024  # an image read_file returns (base64 adds a third)
    list_depth: int = 10  # the deepest list_directory depth
    # how long a call waits for the walk that learns a large tree's links
    # when they could change its decision, before answering not_ready (a
    # server's model does other work meanwhile; a one-shot CLI call waits
    # its whole deadline)
    links_wait_seconds: float = 2.0


class CreatedDirectories(TypedDict):
    """The fields of an answer that says which directories it created."""

    createdDirectories: list[str]
    createdDirectoriesOmitted: NotRequired[int]


def created_directories(created: Sequence[str]) -> CreatedDirectories:
    """An answer's ``createdDirectories`` (:func:`listed_directories`), with
    ``createdDirectoriesOmitted`` when some were left out."""
    shown, omitted = listed_directories(created)
    out: CreatedDirectories = {"createdDirectories": list(shown)}
    if omitted:
        out["createdDirectoriesOmitted"] = omitted
    return out


CREATED_SCHEMA: dict[str, object] = {
    "createdDirectories": {"type": "array", "items": {"type": "string"},
                           "description": "Created, outermost first (the first "
                                          f"{LISTED_DIRECTORIES} at most); empty if none."},
    "createdDirectoriesOmitted": {"type": "integer", "minimum": 1,
                                  "description": "How many more were created (each inside "
                                                 "the last one listed)."},
}
