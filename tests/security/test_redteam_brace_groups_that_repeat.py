"""An independent red-team pass over THREATS.md row 24 for ``{a,b}``
groups in a glob pattern or grep's ``include``: groups whose choices repeat
(``{x,x}`` nineteen times, ``{x,{x,{x,...,a}}}`` six times) expand to a
handful of distinct alternatives but to 2**19 (or 7**6) before those are
told apart.  The limit of 64 alternatives was counted on the distinct ones
only, so a 95-character pattern ran the expansion through half a million
strings: seconds of CPU for one call, past its deadline (the expansion has
no checkpoint), twice that for each group more (``{x,x}`` forty times ran
for hours).  Now refused at once as a pattern that expands too far, on
every backend config, while patterns whose groups do not repeat keep
working."""

from __future__ import annotations

import pytest

from corral.tools import Toolbox

from .helpers.world import call_bounded

REPEATING = {
    "pairs": "{x,x}" * 19,
    "nested": "{x,{x,{x,{x,{x,{x,a}}}}}}" * 6,
    "fours": "{y,y,y,y}" * 10,
}


def _call(toolbox: Toolbox, tool: str, args: dict) -> dict:
    # the call's own deadline is one second: an answer is owed by then
    return call_bounded(lambda: toolbox.call(tool, args, timeout=1.0), what=f"{tool} {args}")


@pytest.mark.parametrize("shape", sorted(REPEATING))
@pytest.mark.parametrize("tool", ["glob", "grep"])
def test_repeating_groups_are_refused_at_once(tmp_path, make_root, tool, shape):
    (tmp_path / "xx.py").write_text("x\n")
    pattern = REPEATING[shape]
    with Toolbox(make_root(str(tmp_path))) as toolbox:
        args = {"pattern": pattern} if tool == "glob" else {"pattern": "x", "include": pattern}
        answer = _call(toolbox, tool, args)
        # the server keeps answering: the next call is served as usual
        after = toolbox.call("glob", {"pattern": "{xx,yy}.py"})
    assert answer["ok"] is False, answer
    assert answer["code"] == "INVALID_ARGUMENT" and answer["details"]["kind"] == "pattern", answer
    assert after["ok"] is True and after["paths"] == ["xx.py"], after


@pytest.mark.parametrize("pattern,found", [
    ("{x,x}{x,x}.py", ["xx.py"]),
    ("{a,b}{c,d}{e,f}{g,h}{i,j}{k,l}.py", []),
    ("{x,{y,{z,x}}}x.py", ["xx.py"]),
    ("{" + ",".join(f"n{i}" for i in range(63)) + ",xx}.py", ["xx.py"]),
])
def test_groups_that_expand_within_the_limit_still_match(tmp_path, make_root, pattern, found):
    (tmp_path / "xx.py").write_text("x\n")
    with Toolbox(make_root(str(tmp_path))) as toolbox:
        answer = _call(toolbox, "glob", {"pattern": pattern})
        grep = _call(toolbox, "grep", {"pattern": "x", "include": pattern})
    assert answer["ok"] is True and answer["paths"] == found, answer
    assert grep["ok"] is True and [m["path"] for m in grep["matches"]] == found, grep
