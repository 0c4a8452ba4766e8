"""An independent red-team pass over the Anthropic adapter's reading of a
reply (or a stored conversation, which is plain dicts anyone may have
written): a ``tool_use`` block whose ``name`` is not a string (an object,
a list, a number, ``null``) beside the text-editor offer raised
``TypeError`` (unhashable) out of ``anthropic_tool_results``, a traceback
into the host's loop.  Each block must be answered with one ``is_error``
result naming no tool that is not there, and nothing changed; on every
backend config.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from corral.integrations import anthropic_tool_results
from corral.tools import Toolbox

NAMES: list[Any] = [{"name": "delete_file"}, ["delete_file"], 7, None, True, 1.5]


@pytest.mark.parametrize("editor", ["corral", "text_editor"])
@pytest.mark.parametrize("name", NAMES, ids=[type(n).__name__ for n in NAMES])
def test_a_block_naming_no_string_is_answered_as_an_error(tmp_path: Path, make_root, editor,
                                                          name):
    (tmp_path / "keep.txt").write_text("mine\n")
    toolbox = Toolbox(make_root(str(tmp_path)))
    blocks = [{"type": "tool_use", "id": "t1", "name": name, "input": {"path": "keep.txt"}},
              {"type": "tool_use", "id": "t2", "name": "read_file",
               "input": {"path": "keep.txt"}}]
    first, second = anthropic_tool_results(toolbox, blocks, editor=editor)
    assert first["tool_use_id"] == "t1" and first["is_error"] is True, first
    assert isinstance(first["content"], str) and first["content"], first
    assert second["is_error"] is False and "mine" in second["content"], second
    assert (tmp_path / "keep.txt").read_text() == "mine\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["keep.txt"]
