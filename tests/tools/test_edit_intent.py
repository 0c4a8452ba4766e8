"""edit_file writes what the model meant, never a guess it did not say:
newText that already carries the file's indentation is written as typed
(a property over files, indentations and tolerant matches), replaceAll
honoured for tolerant matches that are the same text, runs of spaces inside
a line, and the indentation that fits two readings refused with the lines.

``CORRAL_SOAK_EXAMPLES`` raises the number of generated cases (a documented
soak profile; the default keeps the test to a few seconds)."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from .helpers.envelope import assert_valid_envelope

from corral.tools import Toolbox

EXAMPLES = int(os.environ.get("CORRAL_SOAK_EXAMPLES", "120"))


def _call(box: Toolbox, **args: object) -> dict:
    return assert_valid_envelope(box.call("edit_file", args))


def test_new_text_already_indented_as_the_file_is_written_once(tmp_path):
    path = tmp_path / "f.py"
    path.write_text("def f():\n    if x:\n        return 1\n")
    with Toolbox(tmp_path) as box:
        result = _call(box, path="f.py", oldText="if x:\n    return 1",
                       newText="    if x:\n        return 2")
    assert result["ok"] is True and result["matchStrategy"] == "indentation"
    assert path.read_text() == "def f():\n    if x:\n        return 2\n"


def test_new_text_in_old_texts_indentation_is_carried_to_the_files(tmp_path):
    path = tmp_path / "f.py"
    path.write_text("def f():\n\tif x:\n\t\treturn 1\n")
    with Toolbox(tmp_path) as box:
        result = _call(box, path="f.py", oldText="if x:\n    return 1",
                       newText="if x:\n    return 2")
    assert result["ok"] is True
    assert path.read_text() == "def f():\n\tif x:\n\t\treturn 2\n"


def test_indentation_that_fits_both_readings_is_refused_with_the_lines(tmp_path):
    path = tmp_path / "f.py"
    source = "class A:\n    a()\n        b()\n"
    path.write_text(source)
    with Toolbox(tmp_path) as box:
        refusal = _call(box, path="f.py", oldText="a()\n    b()", newText="    c()")
        assert refusal["ok"] is False and refusal["code"] == "AMBIGUOUS"
        assert refusal["details"]["kind"] == "unclear_indentation"
        assert refusal["details"]["newTextLines"] == [1]
        assert "newText line 1" in refusal["message"]
        assert path.read_text() == source  # nothing written
        followed = box.call(refusal["suggestedTool"], refusal["suggestedArgs"])
    assert followed["ok"] is True
    assert path.read_text() == "class A:\n    c()\n"


def test_replace_all_applies_a_tolerant_match_at_every_same_occurrence(tmp_path):
    path = tmp_path / "f.py"
    path.write_text("def f():\n    if x:\n        return 1\n\n\ndef g():\n\tif x:\n\t\treturn 1\n")
    with Toolbox(tmp_path) as box:
        result = _call(box, path="f.py", oldText="if x:\n  return 1", newText="if x:\n  return 2",
                       replaceAll=True)
    assert result["ok"] is True and result["replacements"] == 2
    assert result["matchStrategy"] == "indentation"
    assert path.read_text() == ("def f():\n    if x:\n        return 2\n\n\n"
                                "def g():\n\tif x:\n\t\treturn 2\n")


def test_replace_all_refuses_tolerant_matches_that_differ_in_shape(tmp_path):
    path = tmp_path / "a.py"
    source = "if a:\n\tb()\nif a:\n\t\tb()\n"
    path.write_text(source)
    with Toolbox(tmp_path) as box:
        refusal = _call(box, path="a.py", oldText="if a:\n    b()", newText="c()",
                        replaceAll=True)
    assert refusal["code"] == "AMBIGUOUS" and refusal["details"]["lines"] == [1, 3]
    assert path.read_text() == source


def test_a_unique_match_differing_in_runs_of_spaces_inside_a_line_is_applied(tmp_path):
    path = tmp_path / "f.js"
    path.write_text("function f(a, b) {\n  return a;\n}\n")
    with Toolbox(tmp_path) as box:
        result = _call(box, path="f.js", oldText="function  f( a, b ) {\n    return a;",
                       newText="function g(a, b) {\n    return b;")
    assert result["ok"] is True and result["matchStrategy"] == "whitespace"
    assert path.read_text() == "function g(a, b) {\n  return b;\n}\n"


def test_spacing_matches_in_two_places_are_not_chosen_between(tmp_path):
    path = tmp_path / "f.js"
    source = "f(a, b);\nx();\nf(a,  b);\n"
    path.write_text(source)
    with Toolbox(tmp_path) as box:
        refusal = _call(box, path="f.js", oldText="f( a, b );", newText="g();")
    assert refusal["code"] == "AMBIGUOUS" and refusal["details"]["matchStrategy"] == "whitespace"
    assert path.read_text() == source


def test_words_run_together_are_not_a_spacing_match(tmp_path):
    path = tmp_path / "f.py"
    path.write_text("return value\n")
    with Toolbox(tmp_path) as box:
        refusal = _call(box, path="f.py", oldText="returnvalue", newText="x")
    assert refusal["code"] == "NOT_FOUND"


# -- the property ------------------------------------------------------------------------

_INDENTS = st.sampled_from(["", "  ", "    ", "\t", "\t\t", "      "])
_UNITS = st.sampled_from(["  ", "    ", "\t", "   "])


@st.composite
def _blocks(draw: st.DrawFn) -> list[int]:
    """Depths of the lines of a block: starts at 0, goes deeper one at a time."""
    n = draw(st.integers(1, 6))
    depths = [0]
    for _ in range(n - 1):
        depths.append(draw(st.integers(0, depths[-1] + 1)))
    return depths


def _indented(depths: list[int], words: list[str], base: str, unit: str) -> list[str]:
    return [base + unit * d + w for d, w in zip(depths, words)]


@settings(max_examples=EXAMPLES, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
@given(depths=_blocks(), file_base=_INDENTS, file_unit=_UNITS, old_base=_INDENTS,
       old_unit=_UNITS, data=st.data())
def test_new_text_carrying_the_matched_indentation_is_written_unchanged(
        depths, file_base, file_unit, old_base, old_unit, data):
    words = [f"line{i}({i})" for i in range(len(depths))]
    matched = _indented(depths, words, file_base, file_unit)
    old_lines = _indented(depths, words, old_base, old_unit)
    assume(old_lines != matched)
    kept = data.draw(st.lists(st.booleans(), min_size=len(depths), max_size=len(depths)))
    new_words = [w if keep else f"changed{i}()" for i, (w, keep) in enumerate(zip(words, kept))]
    assume(new_words != words)
    new_lines = _indented(depths, new_words, file_base, file_unit)
    head, tail = "start()\n", "end()\n"
    source = head + "\n".join(matched) + "\n" + tail
    old, new = "\n".join(old_lines), "\n".join(new_lines)
    assume(old not in source)  # a tolerant match, not an exact one
    with tempfile.TemporaryDirectory() as d, Toolbox(Path(d)) as box:
        path = Path(d) / "f.py"
        path.write_text(source)
        result = _call(box, path="f.py", oldText=old, newText=new)
        written = path.read_text()
    expected = head + new + "\n" + tail
    # a line kept from oldText whose indentation is not oldText's tells the reading
    telling = any(keep and o != m for keep, o, m in zip(kept, old_lines, matched))
    if result["ok"]:
        assert written == expected, (result, written)
    else:
        assert not telling, result
        assert result["details"]["kind"] == "unclear_indentation", result
        assert written == source


# -- what a model pastes by mistake ------------------------------------------------------


def _tree(root: Path) -> list[tuple[str, bytes | None]]:
    return sorted((p.relative_to(root).as_posix(), p.read_bytes() if p.is_file() else None)
                  for p in root.rglob("*"))


def _refused_unchanged(tmp_path: Path, tool: str, args: dict, code: str, kind: str) -> dict:
    """The refusal, checked to change nothing on disk, and its suggested
    call followed (it must succeed)."""
    before = _tree(tmp_path)
    with Toolbox(tmp_path) as box:
        refusal = assert_valid_envelope(box.call(tool, args))
        assert refusal["ok"] is False and refusal["code"] == code, refusal
        assert refusal["details"]["kind"] == kind, refusal
        assert _tree(tmp_path) == before  # nothing written, nothing created
        assert "suggestedTool" in refusal, refusal
        followed = box.call(refusal["suggestedTool"], refusal["suggestedArgs"])
        assert followed["ok"] is True, followed
    return refusal


def test_new_text_with_read_file_line_numbers_is_refused_naming_them(tmp_path):
    (tmp_path / "f.py").write_text("a = 1\nb = 2\nc = 3\n")
    refusal = _refused_unchanged(tmp_path, "edit_file",
                                 {"path": "f.py", "oldText": "b = 2", "newText": "2\tb = 5\n3\tc = 3"},
                                 "INVALID_ARGUMENT", "line_number_prefix")
    assert "lines 2 to 3" in refusal["message"]
    assert refusal["details"]["field"] == "newText"
    assert refusal["suggestedArgs"]["newText"] == "b = 5\nc = 3"
    assert (tmp_path / "f.py").read_text() == "a = 1\nb = 5\nc = 3\nc = 3\n"  # the follow


def test_a_numbered_listing_in_the_file_itself_is_edited(tmp_path):
    (tmp_path / "f.txt").write_text("1\tone\n2\ttwo\n")
    with Toolbox(tmp_path) as box:
        result = box.call("edit_file", {"path": "f.txt", "oldText": "1\tone\n2\ttwo",
                                        "newText": "1\tuno\n2\tdos"})
    assert result["ok"] is True
    assert (tmp_path / "f.txt").read_text() == "1\tuno\n2\tdos\n"


def test_content_wrapped_in_a_markdown_fence_is_refused(tmp_path):
    refusal = _refused_unchanged(tmp_path, "write_file",
                                 {"path": "h.py", "content": "```python\nimport os\n```\n"},
                                 "INVALID_ARGUMENT", "markdown_fence")
    assert refusal["details"]["lines"] == [1, 3]
    assert (tmp_path / "h.py").read_text() == "import os\n"


def test_a_fence_in_a_markdown_file_is_written(tmp_path):
    with Toolbox(tmp_path) as box:
        assert box.call("write_file", {"path": "a.md", "content": "```py\nx\n```\n"})["ok"]
    assert (tmp_path / "a.md").read_text() == "```py\nx\n```\n"


def test_a_name_with_a_control_character_is_refused(tmp_path):
    refusal = _refused_unchanged(tmp_path, "write_file", {"path": "src/a\x07b.py", "content": "x"},
                                 "INVALID_ARGUMENT", "control_characters")
    assert refusal["details"]["controlCharacters"] == ["U+0007"]
    assert refusal["suggestedArgs"] == {"path": "src/ab.py", "content": "x"}


def test_a_name_ending_in_a_newline_or_a_space_is_refused(tmp_path):
    for name in ("notes.txt\n", "notes.txt "):
        refusal = _refused_unchanged(tmp_path, "write_file", {"path": name, "content": "x"},
                                     "INVALID_ARGUMENT", "control_characters")
        assert refusal["suggestedArgs"]["path"] == "notes.txt"
        (tmp_path / "notes.txt").unlink()


def test_an_existing_odd_name_is_replaced_as_named(tmp_path):
    (tmp_path / "odd ").write_text("x")
    with Toolbox(tmp_path) as box:
        assert box.call("write_file", {"path": "odd ", "content": "y", "overwrite": True})["ok"]


def test_a_path_pasted_from_a_log_line_is_refused_with_the_file_meant(tmp_path):
    (tmp_path / "tests" / "int").mkdir(parents=True)
    (tmp_path / "tests" / "int" / "my.test.ts").write_text("old")
    refusal = _refused_unchanged(tmp_path, "write_file",
                                 {"path": "FAIL tests/int/my.test.ts", "content": "new",
                                  "overwrite": True}, "INVALID_ARGUMENT", "pasted_path")
    assert refusal["details"]["meant"] == "tests/int/my.test.ts"
    assert (tmp_path / "tests" / "int" / "my.test.ts").read_text() == "new"
    assert not (tmp_path / "FAIL tests").exists()


def test_a_name_with_spaces_is_created_when_nothing_else_is_meant(tmp_path):
    with Toolbox(tmp_path) as box:
        assert box.call("write_file", {"path": "my notes.txt", "content": "x"})["ok"]


def test_a_notebook_edit_that_breaks_its_json_is_refused(tmp_path):
    import json
    notebook = json.dumps({"cells": [{"cell_type": "code", "source": ["x = 1\n"]}],
                           "nbformat": 4}, indent=1)
    (tmp_path / "n.ipynb").write_text(notebook)
    refusal = _refused_unchanged(tmp_path, "edit_file",
                                 {"path": "n.ipynb", "oldText": '"x = 1\\n"',
                                  "newText": '"x = 1\\n", "y = 2'},
                                 "INVALID_ARGUMENT", "notebook")
    assert "invalid JSON" in refusal["message"]
    with Toolbox(tmp_path) as box:
        good = box.call("edit_file", {"path": "n.ipynb", "oldText": '"x = 1\\n"',
                                      "newText": '"x = 1\\n", "y = 2"'})
    assert good["ok"] is True
    assert json.loads((tmp_path / "n.ipynb").read_text())["cells"][0]["source"] == \
        ["x = 1\n", "y = 2"]


# -- the form of a file ------------------------------------------------------------------


def test_an_overwrite_keeps_crlf_and_the_bom_and_says_so(tmp_path):
    (tmp_path / "c.txt").write_bytes(b"\xef\xbb\xbfa\r\nb\r\n")
    with Toolbox(tmp_path) as box:
        result = box.call("write_file", {"path": "c.txt", "content": "x\ny\n", "overwrite": True})
        assert result["ok"] is True
        assert "CRLF" in result["kept"] and "byte order mark" in result["kept"]
        assert (tmp_path / "c.txt").read_bytes() == b"\xef\xbb\xbfx\r\ny\r\n"
        import hashlib
        assert result["sha256"] == hashlib.sha256(b"\xef\xbb\xbfx\r\ny\r\n").hexdigest()
        exact = box.call("write_file", {"path": "c.txt", "content": "x\ny\n", "overwrite": True,
                                        "keepFormat": False})
    assert exact["ok"] is True and "kept" not in exact
    assert (tmp_path / "c.txt").read_bytes() == b"x\ny\n"


def test_a_new_file_is_written_as_given(tmp_path):
    with Toolbox(tmp_path) as box:
        result = box.call("write_file", {"path": "n.txt", "content": "x\ny\n"})
    assert result["ok"] is True and "kept" not in result
    assert (tmp_path / "n.txt").read_bytes() == b"x\ny\n"


def test_utf16_and_utf32_with_a_bom_are_read_edited_and_overwritten_in_their_encoding(tmp_path):
    for codec, name in (("utf-16", "utf-16-le"), ("utf-32", "utf-32-le"),
                        ("utf-16-be", "utf-16-be")):
        mark = {"utf-16-be": b"\xfe\xff"}.get(codec, b"")
        path = tmp_path / "w.txt"
        path.write_bytes(mark + "hello\r\nw\u00f6rld\r\n".encode(codec))
        with Toolbox(tmp_path) as box:
            read = box.call("read_file", {"path": "w.txt"})
            assert read["ok"] is True and read["encoding"] == name, read
            assert read["content"] == "1\thello\n2\tw\u00f6rld"
            assert read["lineEndings"] == "crlf" and read["bom"] is True
            edit = box.call("edit_file", {"path": "w.txt", "oldText": "w\u00f6rld",
                                          "newText": "earth", "expectedSha256": read["sha256"]})
            assert edit["ok"] is True and edit["encoding"] == name
            data = path.read_bytes()
            assert data.startswith(mark or data[:2]) and data.decode(codec).endswith(
                "hello\r\nearth\r\n")
            over = box.call("write_file", {"path": "w.txt", "content": "new\n",
                                           "overwrite": True})
            assert over["ok"] is True and name.upper() in over["kept"]
            assert path.read_bytes() == (mark + "new\r\n".encode(codec) if mark else
                                         "new\r\n".encode(codec))


def test_binary_is_told_by_a_share_of_control_characters(tmp_path):
    (tmp_path / "ctl.dat").write_bytes(b"AB\x01\x02\x03\x04\x05CD\x06")
    (tmp_path / "esc.txt").write_bytes(b"\x1b[31mred\x1b[0m\n\tTab and form\x0c feed\n")
    with Toolbox(tmp_path) as box:
        binary = box.call("read_file", {"path": "ctl.dat"})
        text = box.call("read_file", {"path": "esc.txt"})
    assert binary["code"] == "UNSUPPORTED" and binary["details"]["kind"] == "binary"
    assert text["ok"] is True


# -- misses explained by what happened ---------------------------------------------------


def test_nfd_old_text_against_an_nfc_file_names_the_normal_forms(tmp_path):
    path = tmp_path / "a.py"
    path.write_text("caf\u00e9 = 1\n")  # NFC
    with Toolbox(tmp_path) as box:
        refusal = _call(box, path="a.py", oldText="cafe\u0301 = 1", newText="cafe\u0301 = 2")
        assert refusal["code"] == "NOT_FOUND"
        assert refusal["details"]["differences"][0]["kind"] == "normalization"
        assert "NFD" in refusal["message"] and "NFC" in refusal["message"]
        assert path.read_text() == "caf\u00e9 = 1\n"
        followed = box.call(refusal["suggestedTool"], refusal["suggestedArgs"])
    assert followed["ok"] is True and path.read_text() == "caf\u00e9 = 2\n"


def test_a_later_edit_of_text_an_earlier_edit_changed_is_told_so(tmp_path):
    path = tmp_path / "a.py"
    path.write_text("x = 1\ny = 2\n")
    with Toolbox(tmp_path) as box:
        refusal = _call(box, path="a.py", edits=[{"oldText": "x = 1", "newText": "x = 3"},
                                                 {"oldText": "x = 1\ny = 2", "newText": "z"}])
    assert refusal["code"] == "NOT_FOUND"
    assert refusal["details"]["kind"] == "changed_by_earlier_edit"
    assert refusal["details"]["changedBy"] == 0 and refusal["details"]["edit"] == 1
    assert "edits[0] changed it" in refusal["message"]
    assert path.read_text() == "x = 1\ny = 2\n"


def test_a_miss_in_a_minified_file_is_answered_in_a_bounded_size(tmp_path):
    import json
    body = ";".join(f"var a{i}=function(b){{return b*{i}}}" for i in range(9000))
    (tmp_path / "app.min.js").write_text(body + "\n")
    with Toolbox(tmp_path) as box:
        refusal = _call(box, path="app.min.js", oldText="var a17=function(b){return  b*17}",
                        newText="var a17=function(b){return b*18}")
    assert refusal["code"] == "NOT_FOUND"
    assert len(json.dumps(refusal)) < 8 * 1024  # of a 330 KB line
