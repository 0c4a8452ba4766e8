"""The patch engine alone (no I/O): parsing both dialects, placing hunks,
and the round trip a patch made from two texts' difference must make."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from corral.tools._patch import (
    CODEX,
    V4A,
    AddFile,
    DeleteFile,
    Dialect,
    HunkMismatch,
    PatchSyntaxError,
    UpdateFile,
    apply_update,
    hunk_lines,
    new_file_text,
    parse_patch,
    parse_v4a_create,
    parse_v4a_update,
    update_hunks,
)


def _update(patch: str) -> UpdateFile:
    op = parse_patch(patch).ops[0]
    assert isinstance(op, UpdateFile)
    return op


def test_envelope_with_every_section() -> None:
    patch = parse_patch(
        "*** Begin Patch\n*** Add File: new.txt\n+one\n+two\n*** Delete File: old.txt\n"
        "*** Update File: a.py\n*** Move to: b.py\n@@ def f():\n-    return 1\n+    return 2\n"
        "*** End of File\n*** End Patch\n")
    add, delete, update = patch.ops
    assert add == AddFile("new.txt", ("one", "two"))
    assert delete == DeleteFile("old.txt")
    assert isinstance(update, UpdateFile) and update.move_to == "b.py"
    (hunk,) = update.hunks
    assert hunk.anchors == ("def f():",) and hunk.at_end
    assert hunk.old == ["    return 1"] and hunk.new == ["    return 2"]


@pytest.mark.parametrize("wrapped", [
    "apply_patch <<'EOF'\n{p}\nEOF\n",
    "apply_patch <<\"PATCH\"\n{p}\nPATCH",
    "<<EOF\n{p}\nEOF",
    "\n\n  {p}  \n\n",
    "{p}",  # no final newline
])
def test_forms_models_send(wrapped: str) -> None:
    body = "*** Begin Patch\n*** Add File: x\n+y\n*** End Patch"
    patch = parse_patch(wrapped.format(p=body).replace("*** End Patch", "  *** End Patch "))
    assert patch.ops == (AddFile("x", ("y",)),)


@pytest.mark.parametrize(("text", "line", "says"), [
    ("", 0, "empty"),
    ("*** Update File: a\n", 1, "Begin Patch"),
    ("*** Begin Patch\n*** Add File: a\n+x\n", 3, "cut off"),
    ("*** Begin Patch\n*** End Patch\n", 0, "changes no file"),
    ("*** Begin Patch\n*** Update File: a\n@@\nx\n*** End Patch\n", 4, "starts with ' '"),
    ("*** Begin Patch\n*** Add File: a\nno plus\n*** End Patch\n", 3, "starts with '+'"),
    ("*** Begin Patch\n*** Add File:\n+x\n*** End Patch\n", 2, "needs a path"),
    ("apply_patch <<'EOF'\n*** Begin Patch\n*** Add File: a\n+x\n*** End Patch\n", 1,
     "heredoc"),
])
def test_syntax_errors_name_the_line(text: str, line: int, says: str) -> None:
    with pytest.raises(PatchSyntaxError) as caught:
        parse_patch(text)
    assert caught.value.line == line
    assert says in caught.value.message


def test_context_line_starting_with_stars_is_text() -> None:
    update = _update("*** Begin Patch\n*** Update File: a\n@@\n *** Add File: x\n-old\n"
                     "+new\n*** End Patch\n")
    assert update.hunks[0].old == ["*** Add File: x", "old"]


def test_fuzz_levels_in_order() -> None:
    hunk = _update("*** Begin Patch\n*** Update File: a\n@@\n-x = \u201cquoted\u201d \u2014 y\n"
                   "+x = 2\n*** End Patch\n").hunks
    applied = apply_update('  x = "quoted" - y  \nz\n', hunk, CODEX)
    assert applied.text == "x = 2\nz\n" and applied.levels == ["punctuation"]
    applied = apply_update('x = \u201cquoted\u201d \u2014 y   \n', hunk, CODEX)
    assert applied.levels == ["trailing_whitespace"]


def test_ambiguous_hunk_is_refused_not_applied_first() -> None:
    hunks = _update("*** Begin Patch\n*** Update File: a\n@@\n-x\n+y\n*** End Patch\n").hunks
    with pytest.raises(HunkMismatch) as caught:
        apply_update("x\na\nx\n", hunks, CODEX)
    assert caught.value.kind == "ambiguous" and caught.value.candidates == [1, 3]


def test_repeated_hunks_take_repeated_places_in_order() -> None:
    hunks = _update("*** Begin Patch\n*** Update File: a\n@@\n-x\n+y\n@@\n-x\n+z\n"
                    "*** End Patch\n").hunks
    assert apply_update("x\na\nx\n", hunks, CODEX).text == "y\na\nz\n"


def test_not_found_names_the_nearest_window() -> None:
    hunks = _update("*** Begin Patch\n*** Update File: a\n@@\n def total(items):\n"
                    "-    return sum(items)\n+    return 0\n*** End Patch\n").hunks
    with pytest.raises(HunkMismatch) as caught:
        apply_update("import os\n\ndef total(item):\n    return sum(item)\n", hunks, CODEX)
    assert caught.value.kind == "not_found"
    assert caught.value.nearest == (3, ["def total(item):", "    return sum(item)"])


def test_dialects_differ_only_where_declared() -> None:
    add_only = "@@ def f():\n+    pass\n"
    text = "def f():\n    x = 1\n"
    v4a = apply_update(text, parse_v4a_update(add_only), V4A).text
    assert v4a == "def f():\n    pass\n    x = 1\n"
    codex = apply_update(text, parse_v4a_update("@@\n+    pass\n"), CODEX).text
    assert codex == "def f():\n    x = 1\n    pass\n"
    missing_anchor = parse_v4a_update("@@ class Nowhere\n-    x = 1\n+    x = 2\n")
    assert apply_update(text, missing_anchor, V4A).text == "def f():\n    x = 2\n"
    with pytest.raises(HunkMismatch) as caught:
        apply_update(text, missing_anchor, CODEX)
    assert caught.value.kind == "anchor"
    assert new_file_text(parse_v4a_create("+a\n+b\n"), V4A) == "a\nb"
    assert new_file_text(parse_v4a_create("+a\n+b\n"), CODEX) == "a\nb\n"


def test_end_of_file_hunk_prefers_the_end() -> None:
    hunks = parse_v4a_update("@@\n x\n-y\n+z\n*** End of File\n")
    assert apply_update("x\ny\nx\ny\n", hunks, V4A).text == "x\ny\nx\nz\n"


def test_crlf_and_missing_final_newline_are_kept() -> None:
    hunks = parse_v4a_update("@@\n a\n-b\n+B\n+C\n")
    assert apply_update("a\r\nb\r\nc", hunks, V4A).text == "a\r\nB\r\nC\r\nc"
    assert apply_update("a\nb", hunks, CODEX).text == "a\nB\nC"


# -- the round trip ------------------------------------------------------------

def _envelope(hunks: list[tuple[list[str], list[str]]]) -> str:
    body = [line for old, new in hunks for line in ["@@", *hunk_lines(old, new)]]
    return "\n".join(["*** Begin Patch", "*** Update File: f.txt", *body, "*** End Patch"])


def _v4a(hunks: list[tuple[list[str], list[str]]]) -> str:
    return "\n".join(line for old, new in hunks for line in ["@@", *hunk_lines(old, new)]) + "\n"


_line = st.sampled_from(["", "a", "b", "\tc", "  d", "def f():", "    return 1", "}", "x y"])
_lines = st.lists(_line, min_size=1, max_size=14)


def _text(lines: list[str], newline: str, final: bool) -> str:
    return newline.join(lines) + (newline if final else "")


@settings(max_examples=300, deadline=None)
@given(a=_lines, b=_lines, newline=st.sampled_from(["\n", "\r\n"]), final=st.booleans(),
       dialect=st.sampled_from([CODEX, V4A]), form=st.sampled_from(["envelope", "v4a"]))
def test_a_patch_of_the_difference_turns_a_into_b(a: list[str], b: list[str], newline: str,
                                                   final: bool, dialect: Dialect,
                                                   form: str) -> None:
    if a == b or not final and (a[-1] == "" or b[-1] == ""):
        return  # no change to make; a last empty line without a final newline is no line
    if len(a) == 1 and not final:
        newline = "\n"  # a file with no terminator at all shows no line-ending style
    hunks = update_hunks(a, b)
    parsed = (_update(_envelope(hunks)).hunks if form == "envelope"
              else parse_v4a_update(_v4a(hunks)))
    text_a, text_b = _text(a, newline, final), _text(b, newline, final)
    assert apply_update(text_a, parsed, dialect).text == text_b


@settings(max_examples=200, deadline=None)
@given(a=_lines, b=_lines, extra=st.lists(_line, min_size=1, max_size=4),
       where=st.integers(min_value=0))
def test_a_file_changed_in_between_takes_the_patch_in_place_or_refuses(
        a: list[str], b: list[str], extra: list[str], where: int) -> None:
    if a == b:
        return
    hunks = update_hunks(a, b)
    parsed = _update(_envelope(hunks)).hunks
    # lines inserted where no hunk reads: before the first hunk's block
    first_old = hunks[0][0]
    start = next(k for k in range(len(a) - len(first_old) + 1)
                 if a[k:k + len(first_old)] == first_old)
    at = where % (start + 1)
    changed = a[:at] + extra + a[at:]
    try:
        result = apply_update("\n".join(changed) + "\n", parsed, CODEX).text
    except HunkMismatch as refused:
        assert refused.kind == "ambiguous"  # the inserted lines repeat a hunk's block
        return
    # a[:at] lies before every hunk's block, so b starts with it too
    assert b[:at] == a[:at]
    assert result == "\n".join(b[:at] + extra + b[at:]) + "\n"
