"""Calls a model sends in another tool's dialect, cut off, or with several
wrong argument names: read as meant where that is certain (with a note),
otherwise one refusal that says everything at once."""

from __future__ import annotations

import json

from .helpers.envelope import assert_valid_envelope

from corral.tools import Toolbox


def _call(box: Toolbox, tool: str, args: object) -> dict:
    return assert_valid_envelope(box.call(tool, args))


def test_anthropic_text_editor_arguments_are_read_with_a_note(tmp_path):
    (tmp_path / "a.py").write_text("x = 1\n")
    with Toolbox(tmp_path) as box:
        result = _call(box, "edit_file", {"command": "str_replace", "path": "a.py",
                                          "old_str": "x = 1", "new_str": "x = 2"})
    assert result["ok"] is True
    assert (tmp_path / "a.py").read_text() == "x = 2\n"
    assert result["argumentNotes"] == [
        "edit_file read 'old_str' as 'oldText', 'new_str' as 'newText', command 'str_replace' "
        "as this tool (another tool's names); next time use this tool's names"]


def test_claude_code_arguments_are_read_with_a_note(tmp_path):
    (tmp_path / "a.py").write_text("x = 1\nx = 1\n")
    with Toolbox(tmp_path) as box:
        result = _call(box, "edit_file", {"file_path": "a.py", "old_string": "x = 1",
                                          "new_string": "y", "replace_all": True})
    assert result["ok"] is True and result["replacements"] == 2
    assert "'file_path' as 'path'" in result["argumentNotes"][0]
    assert "'replace_all' as 'replaceAll'" in result["argumentNotes"][0]


def test_an_anthropic_create_is_a_write(tmp_path):
    with Toolbox(tmp_path) as box:
        result = _call(box, "write_file", {"command": "create", "path": "n.txt",
                                           "file_text": "hi\n"})
    assert result["ok"] is True and (tmp_path / "n.txt").read_text() == "hi\n"


def test_a_command_of_another_tool_is_refused_naming_the_tool(tmp_path):
    (tmp_path / "a.py").write_text("x\n")
    with Toolbox(tmp_path) as box:
        refusal = _call(box, "edit_file", {"command": "create", "path": "a.py",
                                           "file_text": "y"})
    assert refusal["code"] == "INVALID_ARGUMENT" and "write_file" in refusal["hint"]
    assert (tmp_path / "a.py").read_text() == "x\n"


def test_our_name_and_an_alias_together_are_not_merged(tmp_path):
    (tmp_path / "a.py").write_text("x\n")
    with Toolbox(tmp_path) as box:
        refusal = _call(box, "edit_file", {"path": "a.py", "oldText": "x", "newText": "y",
                                           "old_str": "z"})
    assert refusal["code"] == "INVALID_ARGUMENT" and refusal["details"]["field"] == "old_str"
    assert (tmp_path / "a.py").read_text() == "x\n"


def test_every_unknown_argument_is_named_at_once_with_the_name_meant(tmp_path):
    (tmp_path / "a.txt").write_text("1\n2\n3\n")
    with Toolbox(tmp_path) as box:
        refusal = _call(box, "read_file", {"path": "a.txt", "ofset": 2, "limt": 1, "colour": 1})
        assert refusal["message"] == ("read_file: arguments 'ofset', 'limt', 'colour' are not "
                                      "arguments of this tool")
        assert refusal["details"]["unknown"] == ["ofset", "limt", "colour"]
        assert refusal["details"]["didYouMean"] == {"ofset": "offset", "limt": "limit"}
        assert refusal["hint"] == ("Use 'offset' for 'ofset', 'limit' for 'limt', and remove "
                                   "the others; the arguments are: limit, offset, path.")
        fixed = _call(box, "read_file", {"path": "a.txt", "ofset": 2, "limt": 1})
        assert fixed["suggestedArgs"] == {"path": "a.txt", "offset": 2, "limit": 1}
        followed = box.call(fixed["suggestedTool"], fixed["suggestedArgs"])
    assert followed["content"] == "2\t2"


def test_a_write_cut_off_before_its_content_says_so_and_how_to_split(tmp_path):
    with Toolbox(tmp_path) as box:
        refusal = _call(box, "write_file", {"path": "big.py"})
    assert refusal["details"]["kind"] == "cut_off"
    assert "ran out of output" in refusal["message"]
    assert "in parts" in refusal["hint"]
    assert not (tmp_path / "big.py").exists()


def test_an_edit_cut_off_after_old_text_says_so(tmp_path):
    (tmp_path / "a.py").write_text("x\n")
    with Toolbox(tmp_path) as box:
        refusal = _call(box, "edit_file", {"path": "a.py", "oldText": "x"})
    assert refusal["details"]["kind"] == "cut_off" and refusal["details"]["field"] == "newText"
    assert (tmp_path / "a.py").read_text() == "x\n"


def test_arguments_as_json_text_cut_off_are_named_so(tmp_path):
    text = json.dumps({"path": "a.py", "content": "def f():\n    return 1\n" * 50})[:300]
    with Toolbox(tmp_path) as box:
        refusal = _call(box, "write_file", text)
        whole = _call(box, "write_file", json.dumps({"path": "b.py", "content": "x"}))
    assert refusal["details"]["kind"] == "cut_off"
    assert "at character 300, inside an unfinished value" in refusal["message"]
    assert not (tmp_path / "a.py").exists()
    assert whole["ok"] is True and (tmp_path / "b.py").read_text() == "x"
    assert whole["argumentNotes"] == ["write_file read its arguments from a JSON text; pass "
                                      "them as an object"]
