"""An edit that does not match a minified file (one very long line) says
where the nearest part of oldText is, by line and column, with the file's
text there to copy, and a suggested grep that shows it; when nothing is
near, it says the line is long and read cut, and how to find the text.
A refused edit changes nothing; every suggested call succeeds.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from corral.tools import Toolbox


def _minified(path: Path) -> str:
    text = "var a=1;" + ";".join(f"function f{i}(x){{return x*{i}+{i % 7}}}"
                                 for i in range(3000)) + "\n"
    path.write_text(text)
    return text


@pytest.fixture
def box(tmp_path, make_root):
    return Toolbox(make_root(str(tmp_path)))


def test_a_near_miss_names_the_line_and_column_of_the_nearest_part(tmp_path, box):
    text = _minified(tmp_path / "app.min.js")
    old = "function f1400(y){return y*1400+0}"
    answer = box.call("edit_file", {"path": "app.min.js", "oldText": old, "newText": "Z"})
    assert answer["ok"] is False and answer["code"] == "NOT_FOUND", answer
    assert answer["details"]["kind"] == "no_match", answer
    nearest = answer["details"]["nearest"]
    at = text.index("function f1400(")
    assert (nearest["line"], nearest["column"]) == (1, at + 1), nearest
    assert nearest["part"] == "start" and nearest["matchedChars"] == len("function f1400("), nearest
    assert nearest["text"].startswith("function f1400(x){return x*1400+0}"), nearest
    assert text[nearest["textColumn"] - 1:].startswith(nearest["text"]), nearest
    assert f"column {at + 1}" in answer["message"], answer
    assert "'x){return x*1400+0}" in answer["message"], answer  # where the file parts from it
    assert "nothing in it is close" not in answer["message"], answer
    assert "details.nearest.text" in answer["hint"], answer
    # the suggested call succeeds and shows the text around the part
    assert answer["suggestedTool"] == "grep", answer
    shown = box.call(answer["suggestedTool"], answer["suggestedArgs"])
    assert shown["ok"] is True and "function f1400(x){return" in shown["matches"][0]["text"]
    assert (tmp_path / "app.min.js").read_text() == text  # nothing changed
    # copied from the excerpt, the edit applies
    fixed = box.call("edit_file", {"path": "app.min.js", "oldText": nearest["text"][:len(old)],
                                   "newText": "function f1400(y){return y*1400+0}"})
    assert fixed["ok"] is True, fixed


def test_a_near_miss_at_its_end_names_where_the_end_is(tmp_path, box):
    text = _minified(tmp_path / "app.min.js")
    answer = box.call("edit_file", {"path": "app.min.js",
                                    "oldText": "QQQQ(x){return x*2345+0}", "newText": "Z"})
    assert answer["ok"] is False and answer["code"] == "NOT_FOUND", answer
    nearest = answer["details"]["nearest"]
    assert nearest["part"] == "end", nearest
    assert nearest["column"] == text.index("(x){return x*2345+0}") + 1, nearest
    assert nearest["text"].endswith("(x){return x*2345+0}"), nearest
    assert text[nearest["textColumn"] - 1:].startswith(nearest["text"]), nearest
    assert box.call(answer["suggestedTool"], answer["suggestedArgs"])["ok"] is True
    assert (tmp_path / "app.min.js").read_text() == text


def test_nothing_near_in_a_minified_file_says_the_line_is_long_and_how_to_find_text(
        tmp_path, box):
    text = _minified(tmp_path / "app.min.js")
    answer = box.call("edit_file", {"path": "app.min.js",
                                    "oldText": "totally unrelated words", "newText": "Z"})
    assert answer["ok"] is False and answer["code"] == "NOT_FOUND", answer
    assert answer["details"]["longestLine"] == len(text) - 1, answer
    assert f"a line of {len(text) - 1} characters" in answer["message"], answer
    assert "grep" in answer["hint"] and "regex false" in answer["hint"], answer
    assert box.call(answer["suggestedTool"], answer["suggestedArgs"])["ok"] is True
    assert (tmp_path / "app.min.js").read_text() == text


def test_a_file_of_short_lines_keeps_its_answer(tmp_path, box):
    (tmp_path / "a.py").write_text("def f():\n    return 1\n")
    answer = box.call("edit_file", {"path": "a.py", "oldText": "totally unrelated words",
                                    "newText": "Z"})
    assert answer["ok"] is False and "nothing in it is close" in answer["message"], answer
    assert "nearest" not in answer["details"] and "longestLine" not in answer["details"]
