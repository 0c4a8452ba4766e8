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
from support import assert_valid_envelope

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
