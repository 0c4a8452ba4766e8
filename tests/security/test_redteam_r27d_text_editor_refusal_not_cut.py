"""An independent red-team pass (round twenty-seven, fourth team): Claude's
text editor run through :func:`anthropic_tool_results` with
``max_characters`` (the host's cap on what one ``view`` shows).  The cap
cut every result, a refusal's too: with ``max_characters=60`` a model
reading a secret, editing a file that is not there or writing a git hook
got the code and half a sentence, never the next step the refusal gives.
A refusal is shown whole; a file's view is still cut.  On every backend
config.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from corral.integrations import anthropic_tool_results
from corral.tools import Toolbox

REFUSED = [  # the editor's input; each is refused
    {"command": "view", "path": ".env"},
    {"command": "view", "path": "a.txt", "view_range": [90, 95]},
    {"command": "str_replace", "path": "nope/x.txt", "old_str": "a", "new_str": "b"},
    {"command": "str_replace", "path": "a.txt", "old_str": "not in it", "new_str": "b"},
    {"command": "create", "path": ".git/hooks/pre-commit", "file_text": "x"},
    {"command": "insert", "path": "a.txt", "insert_line": 99, "new_str": "x"},
    {"command": "view", "path": "../outside.txt"},
    {"command": "rename", "path": "a.txt"},
]


def _results(box: Toolbox, given: dict[str, Any], cap: int | None) -> dict[str, Any]:
    block = {"type": "tool_use", "id": "t1", "name": "str_replace_based_edit_tool",
             "input": given}
    [result] = anthropic_tool_results(box, [block], max_characters=cap, editor="text_editor")
    return result


def test_a_refusal_is_shown_whole_under_max_characters(
        tmp_path: Path, make_root: Callable[..., Any]) -> None:
    (tmp_path / ".env").write_text("API_KEY=1\n")
    (tmp_path / "a.txt").write_text("".join(f"line {n}\n" for n in range(1, 41)))
    (tmp_path / ".git" / "hooks").mkdir(parents=True)
    root = make_root(str(tmp_path))
    # a toolbox for each cap: one that saw a refused call answers it again
    # with "do not send this call again", another text
    whole = Toolbox(root)
    cut: list[tuple[str, int, str]] = []
    capped = {20: Toolbox(root), 60: Toolbox(root)}
    for given in REFUSED:
        uncut = _results(whole, given, None)
        assert uncut["is_error"] is True and len(uncut["content"]) > 60, (given, uncut)
        for cap, box in capped.items():
            shown = _results(box, given, cap)
            if shown["content"] != uncut["content"] or shown["is_error"] is not True:
                cut.append((given["command"], cap, shown["content"]))
    assert not cut, f"{len(cut)} of {2 * len(REFUSED)}: {cut[:3]}"
    view = _results(whole, {"command": "view", "path": "a.txt"}, 60)
    assert view["is_error"] is False and view["content"].endswith("\n[cut at max_characters]")
    assert len(view["content"]) == 60 + len("\n[cut at max_characters]")
    assert (tmp_path / "a.txt").read_text().count("\n") == 40
    assert not (tmp_path / ".git" / "hooks" / "pre-commit").exists()
