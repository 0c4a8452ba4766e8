"""edit_file's warning for newText indented the other way than the file:
said where newText adds a line (not blank, none of oldText's) indented
with spaces to a file indented with tabs, or with a tab to one indented
with spaces (that has a line starting with a space); never otherwise.
Asserted through the tool on real files, and as a property of the check
itself against the rule written out plainly (every line of newText
looked at, the file's style counted a line at a time)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from corral.tools import Toolbox
from corral.tools._builtin.edit_file import _warnings
from corral.tools._edit.failures import Attempt
from corral.tools._edit.match import indent_style
from corral.tools._edit.text import Lines

SPACES = "newText indents with spaces, but f.py indents with tabs"
TABS = "newText indents with tabs, but f.py indents with spaces"
TAB_FILE = "def f():\n\tx = 1\n\tif x:\n\t\treturn x\n"
SPACE_FILE = "def f():\n    x = 1\n    if x:\n        return x\n"


@pytest.mark.parametrize("text, old, new, warned", [
    # a line added, the other way: said
    (TAB_FILE, "x = 1", "x = 1\n    y = 2", [SPACES]),
    (SPACE_FILE, "x = 1", "x = 1\n\ty = 2", [TABS]),
    # the lines indented the other way are oldText's own: nothing added
    (TAB_FILE, "def f():\n\tx = 1", "def f():\n\tx = 2", []),
    ("a\n  b\n\tc\n\td\n", "a\n  b", "a\n  b\nz", []),
    # blank lines, and lines indented the file's way, are not said
    (TAB_FILE, "x = 1", "x = 1\n    \n", []),
    (SPACE_FILE, "x = 1", "x = 1\n\t\n", []),
    (TAB_FILE, "x = 1", "x = 1\n\ty = 2", []),
    (SPACE_FILE, "x = 1", "x = 1\n    y = 2", []),
    # one space is no indentation with spaces; a file with no line starting
    # with a space is not said to indent with spaces
    (TAB_FILE, "x = 1", "x = 1\n y = 2", []),
    ("def f():\nx = 1\nreturn x\n", "x = 1", "x = 1\n\ty = 2", []),
], ids=["spaces-into-tabs", "tabs-into-spaces", "own-tab-lines", "own-space-lines",
        "blank-spaces", "blank-tab", "tabs-into-tabs", "spaces-into-spaces", "one-space",
        "unindented-file"])
def test_the_other_indentation_is_said_where_newtext_adds_it(tmp_path, make_root, text, old,
                                                              new, warned):
    path = tmp_path / "f.py"
    path.write_text(text)
    with Toolbox(make_root(str(tmp_path))) as box:
        answer = box.call("edit_file", {"path": "f.py", "oldText": old, "newText": new})
    assert answer["ok"] is True, answer
    assert answer.get("warnings", []) == warned, answer
    assert path.read_text() == text.replace(old, new, 1)


def _plainly(text: str, old: str, new: str) -> list[str]:
    """The rule, a line at a time."""
    known = set(old.split("\n"))
    added = [line for line in new.split("\n")
             if line[:1] in (" ", "\t") and line.strip() and line not in known]
    by_tabs = indent_style(Lines(text)) == "\t"
    if by_tabs and any(line.startswith("  ") for line in added):
        return [SPACES]
    if not by_tabs and any(line.startswith("\t") for line in added) and \
            any(line.startswith(" ") for line in text.split("\n")):
        return [TABS]
    return []


_LINE = st.builds(lambda indent, body: indent + body,
                  st.sampled_from(["", "\t", "\t\t", " ", "  ", "    ", " \t", "\t "]),
                  st.sampled_from(["", "x", "y = 1", " ", "pass"]))
_TEXT = st.lists(_LINE, min_size=1, max_size=12).map("\n".join)


@settings(max_examples=300, deadline=None)
@given(text=_TEXT, old=_TEXT, new=_TEXT)
def test_the_warning_follows_the_rule(text: str, old: str, new: str) -> None:
    attempt = Attempt("f.py", 0, False, old, new, False, 0)
    assert _warnings(attempt, Lines(text), "exact") == _plainly(text, old, new)
    assert _warnings(attempt, Lines(text), "indentation") == []
