"""An independent red-team pass (round twenty-seven, third team) over the
text editor's ``view_range`` with numbers past what read_file counts
(``[1, 10**20]``, a model's "to the end" as a big number; ``[2**60, -1]``).
``view`` passed them on as read_file's ``offset`` and ``limit``, and
answered read_file's refusal "read_file: argument 'limit' is too large
(at most 9007199254740991 either way) / Pass a smaller 'limit'", about a
tool and an argument the model was never given (row 53's class).  A range
whose end lies past the file shows the file to its end, as a range past
the end by a little does; one whose start lies past it is refused in the
editor's words (``view_range ... starts past the end``).  On every
backend config.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from corral.integrations._text_editor import run_text_editor
from corral.tools import Toolbox

HUGE = (2**53, 10**20, 2**63)


@pytest.mark.parametrize("last", HUGE)
def test_a_range_ending_far_past_the_end_shows_to_the_end(
        tmp_path: Path, make_root: Callable[..., Any], last: int) -> None:
    (tmp_path / "f.txt").write_bytes(b"a\nb\nc\n")
    toolbox = Toolbox(make_root(str(tmp_path)))
    shown = run_text_editor(toolbox, {"command": "view", "path": "f.txt", "view_range": [2, last]})
    assert shown.is_error is False, shown.text
    assert shown.text == "2\tb\n3\tc"


@pytest.mark.parametrize("first", HUGE)
def test_a_range_starting_far_past_the_end_is_refused_in_the_editors_words(
        tmp_path: Path, make_root: Callable[..., Any], first: int) -> None:
    (tmp_path / "f.txt").write_bytes(b"a\nb\nc\n")
    toolbox = Toolbox(make_root(str(tmp_path)))
    for asked in ([first, -1], [first, first + 1]):
        shown = run_text_editor(toolbox, {"command": "view", "path": "f.txt",
                                          "view_range": asked})
        assert shown.is_error is True
        assert shown.text.startswith(f"INVALID_ARGUMENT: view_range {asked} starts past the end "
                                     "of f.txt, which has 3 lines"), shown.text
        for foreign in ("read_file", "offset", "limit"):
            assert foreign not in shown.text, shown.text
