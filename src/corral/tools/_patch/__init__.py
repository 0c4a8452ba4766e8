"""The patch engine behind ``apply_patch`` and the vendors' editors: free of I/O.

Two dialects of one format are read: the Codex envelope (``*** Begin Patch``
... ``*** End Patch``, several files) and V4A, the per-file diff the Responses
API's ``apply_patch`` tool sends.  They differ only in a few decisions, held
as data in :class:`Dialect`; one parser and one matcher serve both.
"""

from __future__ import annotations

from ._make import hunk_lines, update_hunks
from ._apply import Applied, HunkMismatch, apply_update, new_file_text
from ._parse import (
    CODEX,
    V4A,
    AddFile,
    DeleteFile,
    Dialect,
    FileOp,
    Hunk,
    Patch,
    PatchSyntaxError,
    UpdateFile,
    file_header,
    parse_patch,
    parse_v4a_create,
    parse_v4a_update,
    v4a_patch,
)

__all__ = [
    "CODEX",
    "V4A",
    "AddFile",
    "Applied",
    "DeleteFile",
    "Dialect",
    "FileOp",
    "Hunk",
    "HunkMismatch",
    "Patch",
    "PatchSyntaxError",
    "UpdateFile",
    "file_header",
    "apply_update",
    "hunk_lines",
    "new_file_text",
    "parse_patch",
    "parse_v4a_create",
    "parse_v4a_update",
    "update_hunks",
    "v4a_patch",
]
