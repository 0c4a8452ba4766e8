"""An independent red-team pass over the text editor's ``view`` with a
``view_range`` that runs past the end of the file (Claude asks for
``[1, 100]`` of a ten-line file, or ``[4990, 6000]`` of a 5,000-line one).

The whole rest of the file was shown, and the answer still ended "[shown up
to line 10 of 10; view_range [11, -1] shows more]": a view of ``[11, -1]``
is then refused as past the end.  A view that reached the end must not
say there is more; one cut short by corral's limits must still say so.
Every backend config.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from corral.integrations._text_editor import run_text_editor


def _lines(count: int) -> str:
    return "".join(f"line {i}\n" for i in range(1, count + 1))


@pytest.mark.parametrize(("count", "view_range"), [
    (10, [1, 100]), (10, [8, 20]), (10, [10, 11]), (5000, [4990, 6000]), (0, [1, 5]),
    (1, [1, 2]),
])
def test_a_range_past_the_end_does_not_promise_more(tmp_path: Path, make_toolbox, count: int,
                                                    view_range: list[int]) -> None:
    (tmp_path / "a.txt").write_text(_lines(count))
    with make_toolbox(tmp_path) as tools:
        done = run_text_editor(tools, {"command": "view", "path": "a.txt",
                                       "view_range": view_range})
        assert done.is_error is False, done
        assert "shows more" not in done.text, done.text
        if count:
            assert done.text.splitlines()[-1] == f"{count}\tline {count}"


@pytest.mark.parametrize("view_range", [None, [1, -1], [1, 4000]])
def test_a_view_cut_short_still_says_where_to_go_on(tmp_path: Path, make_toolbox,
                                                     view_range: list[int] | None) -> None:
    (tmp_path / "a.txt").write_text(_lines(5000))
    args = {"command": "view", "path": "a.txt"}
    if view_range is not None:
        args["view_range"] = view_range
    with make_toolbox(tmp_path) as tools:
        done = run_text_editor(tools, args)
        assert done.is_error is False, done
        last = done.text.splitlines()[-1]
        assert last.startswith("[shown up to line ") and "shows more" in last, last
        shown = int(last.split()[4])
        assert shown < 5000
        more = run_text_editor(tools, {"command": "view", "path": "a.txt",
                                       "view_range": [shown + 1, -1]})
        assert more.is_error is False, more
