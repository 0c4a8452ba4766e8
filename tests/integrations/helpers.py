"""Arguments that make every tool succeed on the ``project`` tree, and the
strict-mode form of them (every optional argument sent as ``null``, as
OpenAI's strict function calling does)."""

from __future__ import annotations

from typing import Any

from corral.tools import ToolSpec

# tool -> its required (or needed) arguments for a call that succeeds; a new
# tool without an entry fails test_every_tool_has_a_case
SUCCEEDING: dict[str, dict[str, Any]] = {
    "read_file": {"path": "notes.txt"},
    "write_file": {"path": "made/new.txt", "content": "new\n"},
    "edit_file": {"path": "src/util.py", "oldText": "return 1", "newText": "return 2"},
    "list_directory": {"path": "src"},
    "glob": {"pattern": "**/*.py"},
    "grep": {"pattern": "hello"},
    "move_file": {"source": "notes.txt", "destination": "moved.txt"},
    "delete_file": {"path": "src/util.py"},
    # the reference server's extras, once registered
    "read_files": {"paths": ["notes.txt", "src/util.py"]},
    "file_info": {"path": "notes.txt"},
    "make_directory": {"path": "made/deeper"},
}

# the order that keeps each call's precondition (delete last, move after reads)
ORDER = ["read_file", "read_files", "file_info", "grep", "glob", "list_directory", "edit_file",
         "write_file", "make_directory", "move_file", "delete_file"]


def strict_arguments(spec: ToolSpec) -> dict[str, Any]:
    """``SUCCEEDING[spec.name]`` with ``null`` for every other property."""
    given = SUCCEEDING[spec.name]
    return {name: given.get(name) for name in spec.schema["properties"]}


def in_order(names: list[str]) -> list[str]:
    return sorted(names, key=lambda name: ORDER.index(name) if name in ORDER else len(ORDER))
