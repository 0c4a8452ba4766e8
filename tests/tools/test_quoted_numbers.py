"""Integer arguments: a quoted whole number ("3") is taken as the number;
any number past JSON's safe integers (1e308, 10**40, either sign) is an
INVALID_ARGUMENT refusal naming the field, on every tool and backend, and
never reaches native code (read_file's native window once raised
OverflowError there, answered INTERNAL)."""

from __future__ import annotations

import pytest

from corral.tools import Toolbox

LINES = "".join(f"line {i}\n" for i in range(1, 24))
HUGE = [1e308, -1e308, 10**40, -(10**40), 2**53, float(2**63)]


@pytest.fixture
def box(tmp_path, make_root):
    (tmp_path / "a.txt").write_text(LINES)
    with Toolbox(make_root(tmp_path)) as toolbox:
        yield toolbox


@pytest.mark.parametrize("quoted, lines", [("3", 3), (" 3 ", 3), ("+2", 2), ("023", 23)])
def test_a_quoted_limit_is_the_number(box, quoted, lines):
    answer = box.call("read_file", {"path": "a.txt", "limit": quoted})
    assert answer["ok"] is True, answer
    assert answer["endLine"] == lines and answer["totalLines"] == 23


@pytest.mark.parametrize("text", ["three", "3.0", "0x10", "1e3", "", "3 4", "9" * 17])
def test_a_string_that_is_not_a_whole_number_is_refused(box, text):
    answer = box.call("read_file", {"path": "a.txt", "limit": text})
    assert answer["code"] == "INVALID_ARGUMENT"
    assert answer["details"]["field"] == "limit"


@pytest.mark.parametrize("number", HUGE)
@pytest.mark.parametrize("tool, arguments, field", [
    ("read_file", {"path": "a.txt"}, "offset"),
    ("read_file", {"path": "a.txt"}, "limit"),
    ("read_files", {"paths": ["a.txt"]}, "offset"),
    ("grep", {"pattern": "line"}, "context"),
    ("grep", {"pattern": "line"}, "limit"),
    ("list_directory", {"path": "."}, "depth"),
])
def test_a_number_past_safe_integers_is_refused_by_name(box, number, tool, arguments, field):
    answer = box.call(tool, {**arguments, field: number})
    assert answer["ok"] is False and answer["code"] == "INVALID_ARGUMENT", answer
    assert answer["details"]["field"] == field


def test_the_largest_safe_integer_still_reaches_the_tool(box):
    answer = box.call("read_file", {"path": "a.txt", "offset": 2**53 - 1})
    assert answer["code"] == "INVALID_ARGUMENT"
    assert answer["details"]["field"] == "offset" and answer["details"]["totalLines"] == 23
    answer = box.call("read_file", {"path": "a.txt", "limit": 2**53 - 1})
    assert answer["ok"] is True and answer["endLine"] == 23
