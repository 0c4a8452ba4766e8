"""grep's hint after a search that found nothing is verified by searching
again with the suggested arguments; a file another program writes between
the search and that probe makes the probe find what the original arguments
find too.  The answer must then not tell the model its arguments were the
fault ("Case-insensitively the pattern finds matches" of a pattern that
matches as sent): it is STALE (search again), or the match itself.  Found by
the calls-sent-at-once battery (a write beside a grep); made deterministic
here by writing the file at the first probe.  Every backend config."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from corral.tools import Toolbox
from corral.tools._builtin import grep as grep_tool


@pytest.mark.parametrize("pattern", ["w3", "w3|nothing"])
def test_a_file_written_before_the_probe_is_no_hint(tmp_path: Path, make_root, monkeypatch,
                                                    pattern: str) -> None:
    (tmp_path / "t").mkdir()
    (tmp_path / "t" / "other.txt").write_text("nothing here\n".replace("nothing", "none"))
    real_finder = grep_tool._finder
    written: list[str] = []

    def finder(ctx: Any) -> Any:
        finds = real_finder(ctx)

        def writing_first(trial: dict[str, Any]) -> bool:
            if not written:  # another program, between the search and the first probe
                (tmp_path / "t" / "tasks.json").write_text("w3\n")
                written.append(trial["pattern"])
            return finds(trial)
        return writing_first

    monkeypatch.setattr(grep_tool, "_finder", finder)
    with Toolbox(make_root(str(tmp_path))) as tools:
        answer = tools.call("grep", {"pattern": pattern, "path": "t"})
    assert written, "the probe ran: the search found nothing first"
    if answer["ok"]:
        assert answer["matches"], answer  # what was found, not a hint about the arguments
    else:
        assert answer["code"] == "STALE", answer
        assert "again" in answer["hint"], answer
    assert "diagnosis" not in answer and "suggestedArgs" not in answer, answer


def _writing_at_the_first_probe(monkeypatch, path: Path, text: str) -> list[bool]:
    """Write ``path`` when grep's first probe (a trial search) starts."""
    real_search = grep_tool.search
    written: list[bool] = []

    def search(*args: Any, **kwargs: Any) -> Any:
        if kwargs.get("probe") and not written:
            path.write_text(text)  # another program, between the search and the probe
            written.append(True)
        return real_search(*args, **kwargs)

    monkeypatch.setattr(grep_tool, "search", search)
    return written


def test_a_file_the_include_matches_written_before_the_probe_is_no_hint(
        tmp_path: Path, make_root, monkeypatch) -> None:
    """The include hint ("Without include the pattern finds matches") after
    an include that matched no file: a file it matches, holding the
    pattern, written before the probe makes the arguments as sent find it."""
    (tmp_path / "t").mkdir()
    (tmp_path / "t" / "other.txt").write_text("w3\n")
    written = _writing_at_the_first_probe(monkeypatch, tmp_path / "t" / "tasks.json", "w3\n")
    with Toolbox(make_root(str(tmp_path))) as tools:
        answer = tools.call("grep", {"pattern": "w3", "path": "t", "include": "*.json"})
    assert written, "the probe ran: the search found nothing first"
    if answer["ok"]:
        assert answer["matches"], answer
    else:
        assert answer["code"] == "STALE", answer
        assert "again" in answer["hint"], answer
    assert "diagnosis" not in answer and "suggestedArgs" not in answer, answer


def test_a_file_the_include_matches_without_the_pattern_keeps_the_hint(
        tmp_path: Path, make_root, monkeypatch) -> None:
    """The same with a file the include matches but the pattern does not:
    the arguments as sent still find nothing, so the hint is offered."""
    (tmp_path / "t").mkdir()
    (tmp_path / "t" / "other.txt").write_text("w3\n")
    written = _writing_at_the_first_probe(monkeypatch, tmp_path / "t" / "tasks.json", "w4\n")
    with Toolbox(make_root(str(tmp_path))) as tools:
        answer = tools.call("grep", {"pattern": "w3", "path": "t", "include": "*.json"})
    assert written, "the probe ran: the search found nothing first"
    assert answer["ok"] and answer["matches"] == [], answer
    assert answer["diagnosis"] == "include", answer
    assert answer["suggestedArgs"] == {"pattern": "w3", "path": "t"}, answer
