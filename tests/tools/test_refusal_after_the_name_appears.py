"""A call refused because a name did not exist, whose refusal then looks
for close names and finds the name itself (another program made it after
the call looked): the refusal must not say "x does not exist" and, in the
same answer, "Check the name; x exists" with didYouMean ["x"].  It is STALE
(nothing was done; repeat the call).  Found by r24a's calls-sent-at-once
battery (a glob beside a write making its folder); made deterministic here
by making the name when the refusal looks for close names.  Every backend
config."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from corral.tools import Toolbox
from corral.tools._runtime import refusing

CALLS = [("glob", {"pattern": "**/k", "path": "x"}),
         ("list_directory", {"path": "x"}),
         ("read_file", {"path": "x/k"}),
         ("grep", {"pattern": "k", "path": "x"}),
         ("file_info", {"path": "x"})]


@pytest.mark.parametrize("tool,args", CALLS, ids=[c[0] for c in CALLS])
def test_a_name_made_while_refusing_is_stale(tmp_path: Path, make_root, monkeypatch,
                                             tool: str, args: dict[str, Any]) -> None:
    (tmp_path / "y").mkdir()
    real = refusing.close_paths
    made: list[str] = []

    def making_first(path: str, missing: str, look: Any) -> list[str]:
        if not made:  # another program, after the call found no x
            (tmp_path / "x").mkdir()
            (tmp_path / "x" / "k").write_text("k\n")
            made.append(missing)
        return real(path, missing, look)

    monkeypatch.setattr(refusing, "close_paths", making_first)
    with Toolbox(make_root(str(tmp_path))) as tools:
        answer = tools.call(tool, args)
    assert made, answer
    assert answer["ok"] is False and answer["code"] == "STALE", answer
    assert "didYouMean" not in answer.get("details", {}), answer
    assert "again" in answer["hint"], answer
