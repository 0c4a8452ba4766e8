"""edit_file on real files: the model mistakes of agent-tool-anchors.md
section 4 that apply to it (each asserting the envelope and that following
the suggestion works), bytes kept exactly across edits, all-or-nothing
``edits``, dry runs, digest chaining, modes, links, authorization, and many
threads editing one file at once.  The pure span arithmetic and diff are
tested by property in test_edit_spans.py."""

from __future__ import annotations

import hashlib
import json
import os
import stat
import threading
from pathlib import Path

import pytest
from .helpers.envelope import assert_valid_envelope

from corral.tools import Denied, EditRequest, Limits, ReadRequest, Toolbox

PY = ("def area(w, h):\n"
      "    return w * h\n"
      "\n"
      "\n"
      "def perimeter(w, h):\n"
      "    return 2 * (w + h)\n")


def sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def put(root: Path, name: str, data: bytes | str) -> Path:
    path = root / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data.encode() if isinstance(data, str) else data)
    return path


def call(toolbox: Toolbox, tool: str = "edit_file", **args) -> dict:
    return assert_valid_envelope(toolbox.call(tool, args))


def ok(toolbox: Toolbox, **args) -> dict:
    result = call(toolbox, **args)
    assert result["ok"] is True, result
    return result


def refused(toolbox: Toolbox, code: str, **args) -> dict:
    result = call(toolbox, **args)
    assert result["ok"] is False, result
    assert result["code"] == code, result
    return result


def follow(toolbox: Toolbox, refusal: dict) -> dict:
    """Make the suggested call exactly as offered; it must succeed."""
    assert "suggestedTool" in refusal, refusal
    result = call(toolbox, refusal["suggestedTool"], **refusal["suggestedArgs"])
    assert result["ok"] is True, result
    return result


@pytest.fixture
def box(tmp_path):
    with Toolbox(tmp_path) as toolbox:
        yield toolbox


# -- section 4 of agent-tool-anchors.md, the rows that apply to edit_file ----------------


def test_row1_missing_path_suggests_the_close_name(tmp_path, box):
    put(tmp_path, "src/util.py", PY)
    refusal = refused(box, "NOT_FOUND", path="src/utl.py", oldText="w * h", newText="h * w")
    assert refusal["details"]["didYouMean"] == ["src/util.py"]
    read = follow(box, refusal)
    assert read["path"] == "src/util.py"
    ok(box, path="src/util.py", oldText="w * h", newText="h * w")
    assert "return h * w" in (tmp_path / "src/util.py").read_text()


def test_row2_absolute_path_inside_root_is_answered_relative(tmp_path, box):
    put(tmp_path, "src/util.py", PY)
    result = ok(box, path=str(tmp_path / "src/util.py"), oldText="w * h", newText="h * w")
    assert result["path"] == "src/util.py"
    assert str(tmp_path) not in json.dumps(result)


@pytest.mark.parametrize("path", ["../outside.txt", "src/../../outside.txt", "link.txt",
                                  "dirlink/outside.txt"])
def test_row3_escapes_are_outside_root_and_change_nothing(tmp_path, path):
    root = tmp_path / "root"
    (root / "src").mkdir(parents=True)
    outside = put(tmp_path, "outside.txt", "secret = 1\n")
    os.symlink("../outside.txt", root / "link.txt")
    os.symlink("..", root / "dirlink")
    with Toolbox(root) as toolbox:
        refusal = refused(toolbox, "OUTSIDE_ROOT", path=path, oldText="secret = 1",
                          newText="secret = 2")
        absolute = refused(toolbox, "OUTSIDE_ROOT", path=str(outside), oldText="secret = 1",
                           newText="secret = 2")
    assert outside.read_text() == "secret = 1\n"
    for envelope in (refusal, absolute):
        assert str(tmp_path) not in json.dumps(envelope)
        assert "secret" not in json.dumps(envelope).replace("secret = 1", "")


def test_row4_directory_suggests_glob(tmp_path, box):
    put(tmp_path, "src/util.py", PY)
    refusal = refused(box, "INVALID_ARGUMENT", path="src/", oldText="a", newText="b")
    assert refusal["details"]["kind"] == "directory"
    assert refusal["suggestedArgs"] == {"path": "src", "pattern": "**/*"}
    assert "src/util.py" in json.dumps(follow(box, refusal))


def test_row6_trailing_whitespace_is_tolerated_when_unique(tmp_path, box):
    path = put(tmp_path, "a.py", "x = 1   \ny = 2\t\nz = 3\n")
    result = ok(box, path="a.py", oldText="x = 1\ny = 2\n", newText="x = 10\ny = 20\n")
    assert result["matchStrategy"] == "trailing_whitespace"
    assert result["lines"] == [[1, 2]]
    assert path.read_bytes() == b"x = 10\ny = 20\nz = 3\n"


def test_row6_trailing_whitespace_after_the_match_stays(tmp_path, box):
    # the model left out the spaces at the end of oldText's last line: they stay
    path = put(tmp_path, "a.py", "a = 1  \nb = 2  \nc = 3\n")
    result = ok(box, path="a.py", oldText="a = 1\nb = 2", newText="a = 5\nb = 6")
    assert result["matchStrategy"] == "trailing_whitespace"
    assert path.read_bytes() == b"a = 5\nb = 6  \nc = 3\n"


def test_row6_wrong_base_indentation_is_reindented(tmp_path, box):
    source = ("class A:\n"
              "    def f(self):\n"
              "        if self.x:\n"
              "            return 1\n"
              "        return 2\n")
    path = put(tmp_path, "a.py", source)
    # the model copied the method body without the class's indentation
    result = ok(box, path="a.py",
                oldText="if self.x:\n    return 1\nreturn 2\n",
                newText="if self.x:\n    log()\n    return 1\nelif self.y:\n    return 3\n"
                        "return 2\n")
    assert result["matchStrategy"] == "indentation"
    assert path.read_text() == ("class A:\n"
                                "    def f(self):\n"
                                "        if self.x:\n"
                                "            log()\n"
                                "            return 1\n"
                                "        elif self.y:\n"
                                "            return 3\n"
                                "        return 2\n")


def test_row6_two_space_text_into_four_space_file(tmp_path, box):
    path = put(tmp_path, "a.py", "def f():\n    if a:\n        b()\n    c()\n")
    result = ok(box, path="a.py", oldText="if a:\n  b()\nc()\n",
                newText="if a:\n  b()\n  if d:\n    e()\nc()\n")
    assert result["matchStrategy"] == "indentation"
    assert path.read_text() == ("def f():\n    if a:\n        b()\n        if d:\n"
                                "            e()\n    c()\n")


def test_row6_not_found_gives_the_window_and_copying_it_works(tmp_path, box):
    path = put(tmp_path, "a.py", PY)
    refusal = refused(box, "NOT_FOUND", path="a.py",
                      oldText="def perimeter(w, h):\n    return 2 * (w - h)\n",
                      newText="def perimeter(w, h):\n    return 2 * w + 2 * h\n")
    details = refusal["details"]
    assert details["kind"] == "no_match"
    assert details["closest"]["startLine"] == 5 and details["closest"]["endLine"] == 6
    assert details["differences"][0] == {
        "kind": "content", "line": 6, "oldTextLine": 2,
        "detail": "line 6 reads 'return 2 * (w + h)' where oldText line 2 reads "
                  "'return 2 * (w - h)'"}
    window = follow(box, refusal)
    assert window["content"] == "5\tdef perimeter(w, h):\n6\t    return 2 * (w + h)"
    ok(box, path="a.py", oldText=details["closest"]["text"],
       newText="def perimeter(w, h):\n    return 2 * w + 2 * h")
    assert path.read_text().endswith("    return 2 * w + 2 * h\n")


def test_row7_spaces_typed_for_tabs_come_out_as_tabs(tmp_path, box):
    source = (b"class A:\n\tdef f(self):\n\t\tif self.x:\n\t\t\treturn 1\n\t\treturn 2\n"
              b"\n\tz = '\t'\n")
    path = put(tmp_path, "a.py", source)
    result = ok(box, path="a.py",
                oldText="    def f(self):\n        if self.x:\n            return 1\n",
                newText="    def f(self):\n        if self.x and self.y:\n            return 1\n"
                        "        if self.z:\n            return 3\n")
    assert result["matchStrategy"] == "indentation"
    assert path.read_bytes() == (b"class A:\n\tdef f(self):\n\t\tif self.x and self.y:\n"
                                 b"\t\t\treturn 1\n\t\tif self.z:\n\t\t\treturn 3\n"
                                 b"\t\treturn 2\n\n\tz = '\t'\n")


def test_row7_tab_mismatch_that_cannot_be_mapped_says_so(tmp_path, box):
    put(tmp_path, "a.py", "class A:\n\tdef f(self):\n\t\treturn 1\n")
    # both lines typed at the same width, but the file nests them: no consistent mapping
    refusal = refused(box, "NOT_FOUND", path="a.py", oldText="    def f(self):\n    return 1\n",
                      newText="x")
    kinds = [d["kind"] for d in refusal["details"]["differences"]]
    assert kinds == ["tabs_vs_spaces", "tabs_vs_spaces"]
    assert refusal["hint"] == ("Indent oldText as the file does (with tabs); copy it from "
                               "lines 2-3 of the file.")
    ok(box, path="a.py", oldText=refusal["details"]["closest"]["text"], newText="\tpass")


def test_row8_crlf_file_with_lf_old_text(tmp_path, box):
    path = put(tmp_path, "a.py", b"a = 1\r\nb = 2\r\nc = 3\r\n")
    result = ok(box, path="a.py", oldText="a = 1\nb = 2\n", newText="a = 1\nb = 20\nb2 = 21\n")
    assert result["matchStrategy"] == "line_endings"
    assert result["lineEndings"] == "crlf"
    assert path.read_bytes() == b"a = 1\r\nb = 20\r\nb2 = 21\r\nc = 3\r\n"
    assert "\r" not in result["diff"]


def test_row8_single_line_edit_in_crlf_file_is_exact(tmp_path, box):
    path = put(tmp_path, "a.py", b"a = 1\r\nb = 2\r\n")
    result = ok(box, path="a.py", oldText="b = 2", newText="b = 3\nc = 4")
    assert "matchStrategy" not in result
    assert path.read_bytes() == b"a = 1\r\nb = 3\r\nc = 4\r\n"


def test_row9_line_numbers_copied_from_read_file(tmp_path, box):
    path = put(tmp_path, "a.py", PY)
    read = call(box, "read_file", path="a.py", offset=5, limit=2)
    assert read["ok"] is True
    copied = read["content"] + "\n"  # "5\tdef perimeter(w, h):\n6\t    return 2 * (w + h)\n"
    refusal = refused(box, "NOT_FOUND", path="a.py", oldText=copied, newText="x\n")
    assert refusal["details"]["differences"][0]["kind"] == "line_number_prefix"
    assert refusal["details"]["lines"] == [5]
    assert refusal["hint"] == ("Send oldText without the line-number prefixes, exactly as the "
                               "file has it.")
    stripped = "".join(line.split("\t", 1)[1] + "\n" for line in read["content"].split("\n"))
    ok(box, path="a.py", oldText=stripped, newText="def perimeter(w, h):\n    return 0\n")
    assert path.read_text().endswith("def perimeter(w, h):\n    return 0\n")


def test_row9_other_prefix_styles_are_recognised(tmp_path, box):
    put(tmp_path, "a.py", PY)
    for copied in ("     5→def perimeter(w, h):\n     6→    return 2 * (w + h)",
                   "L5: def perimeter(w, h):\nL6:     return 2 * (w + h)",
                   "5 | def perimeter(w, h):\n6 |     return 2 * (w + h)"):
        refusal = refused(box, "NOT_FOUND", path="a.py", oldText=copied, newText="x")
        assert refusal["details"]["differences"][0]["kind"] == "line_number_prefix", copied


def test_row10_ambiguous_lists_lines_and_both_remedies_work(tmp_path, box):
    source = "x = 0\nx = 0\ny = 1\nx = 0\n"
    path = put(tmp_path, "a.py", source)
    refusal = refused(box, "AMBIGUOUS", path="a.py", oldText="x = 0", newText="x = 9")
    assert refusal["details"]["occurrences"] == 3
    assert refusal["details"]["lines"] == [1, 2, 4]
    assert path.read_text() == source
    # more context
    result = ok(box, path="a.py", oldText="y = 1\nx = 0", newText="y = 1\nx = 5")
    assert result["lines"] == [[3, 4]]
    # replaceAll
    result = ok(box, path="a.py", oldText="x = 0", newText="x = 9", replaceAll=True)
    assert result["replacements"] == 2
    assert result["lines"] == [[1, 1], [2, 2]]
    assert path.read_text() == "x = 9\nx = 9\ny = 1\nx = 5\n"


def test_row10_lines_are_listed_once_and_the_sentence_stays_short(tmp_path, box):
    put(tmp_path, "a.py", "x = x + x\n" + "y = 1\n" + "x = 2\n" * 20)
    refusal = refused(box, "AMBIGUOUS", path="a.py", oldText="x", newText="z")
    assert refusal["details"]["occurrences"] == 23
    assert refusal["details"]["lines"] == [1] + list(range(3, 23))
    assert "(lines 1, 3, 4, 5, 6, 7, 8, 9, 10, 11, ...)" in refusal["message"]
    result = ok(box, path="a.py", oldText="x", newText="z", replaceAll=True)
    assert result["replacements"] == 23
    assert result["lines"][:2] == [[1, 1], [1, 1]] and len(result["lines"]) == 23


def test_lines_listed_are_capped_and_say_so(tmp_path, box):
    put(tmp_path, "a.txt", "a\n" * 150)
    result = ok(box, path="a.txt", oldText="a", newText="b", replaceAll=True)
    assert result["replacements"] == 150
    assert len(result["lines"]) == 100 and result["linesTruncated"] is True
    assert result["lines"][-1] == [100, 100]


def test_long_diff_is_cut_and_says_so(tmp_path):
    path = put(tmp_path, "a.txt", "line\n" * 100)
    with Toolbox(tmp_path, limits=Limits(read_bytes=300)) as toolbox:
        result = ok(toolbox, path="a.txt", oldText="line", newText="LINE", replaceAll=True)
    assert result["diffTruncated"] is True and len(result["diff"]) == 300
    assert path.read_text() == "LINE\n" * 100


def test_deletion_lands_on_the_line_where_text_was(tmp_path, box):
    path = put(tmp_path, "a.py", PY)
    result = ok(box, path="a.py", oldText="\n\ndef perimeter(w, h):\n    return 2 * (w + h)\n",
                newText="")
    assert result["lines"] == [[3, 3]]
    assert path.read_text() == "def area(w, h):\n    return w * h\n"


def test_new_text_in_the_other_indentation_style_is_applied_with_a_warning(tmp_path, box):
    path = put(tmp_path, "a.py", "def f():\n\tx = 1\n\treturn x\n")
    result = ok(box, path="a.py", oldText="x = 1", newText="x = 1\n    y = 2")
    assert result["warnings"] == ["newText indents with spaces, but a.py indents with tabs"]
    assert path.read_text() == "def f():\n\tx = 1\n    y = 2\n\treturn x\n"
    assert "warnings" not in ok(box, path="a.py", oldText="\treturn x", newText="\treturn y")


def test_row10_tolerant_match_in_two_places_is_not_chosen(tmp_path, box):
    source = "if a:\n\tb()\nif a:\n\t\tb()\n"
    path = put(tmp_path, "a.py", source)
    refusal = refused(box, "AMBIGUOUS", path="a.py", oldText="if a:\n    b()", newText="c()",
                      replaceAll=True)
    assert refusal["details"]["matchStrategy"] == "indentation"
    assert refusal["details"]["lines"] == [1, 3]
    assert path.read_text() == source


def test_row11_same_text_is_refused_before_reading(tmp_path, box):
    refusal = refused(box, "INVALID_ARGUMENT", path="nothing-here.py", oldText="a", newText="a")
    assert refusal["details"]["kind"] == "no_change"


def test_row11_resending_a_made_edit_says_already_applied(tmp_path, box):
    path = put(tmp_path, "a.py", PY)
    ok(box, path="a.py", oldText="    return w * h\n", newText="    return width * height\n")
    after = path.read_bytes()
    refusal = refused(box, "NOT_FOUND", path="a.py", oldText="    return w * h\n",
                      newText="    return width * height\n")
    assert refusal["details"]["kind"] == "already_applied"
    assert refusal["details"]["lines"] == [2, 2]
    assert follow(box, refusal)["content"] == "2\t    return width * height"
    # an insertion sent again would duplicate its lines: refused too
    ok(box, path="a.py", oldText="def area(w, h):\n", newText="@cache\ndef area(w, h):\n")
    after = path.read_bytes()
    refusal = refused(box, "NOT_FOUND", path="a.py", oldText="def area(w, h):\n",
                      newText="@cache\ndef area(w, h):\n")
    assert refusal["details"]["kind"] == "already_applied"
    assert path.read_bytes() == after



@pytest.mark.parametrize("size", [10, 3000])  # edits kept as their own key, and by digest
def test_row11_the_same_call_made_before_is_told_so_small_or_large(tmp_path, box, size):
    path = put(tmp_path, "a.py", "x = 1\n" + "# " + "a" * size + "\n")
    old, new = "# " + "a" * size + "\n", "# " + "b" * size + "\n"
    ok(box, path="a.py", oldText=old, newText=new)
    after = path.read_bytes()
    refusal = refused(box, "NOT_FOUND", path="a.py", oldText=old, newText=new)
    assert refusal["details"]["kind"] == "already_applied"
    assert "an earlier call made this same edit (at line 2)" in refusal["message"]
    # another edit with the same oldText is not the call made before
    other = refused(box, "NOT_FOUND", path="a.py", oldText=old, newText=new.replace("b", "c"))
    assert "an earlier call made this same edit" not in other["message"]
    assert path.read_bytes() == after

def test_row12_stale_digest_names_the_changed_lines_when_known(tmp_path, box):
    path = put(tmp_path, "a.py", PY)
    first = ok(box, path="a.py", oldText="w * h", newText="h * w")
    # a formatter rewrites line 5 behind the model's back
    path.write_text(path.read_text().replace("def perimeter(w, h):", "def perimeter(w,h):"))
    refusal = refused(box, "STALE", path="a.py", oldText="2 * (w + h)", newText="2 * (h + w)",
                      expectedSha256=first["sha256"])
    details = refusal["details"]
    assert details["expectedSha256"] == first["sha256"]
    assert details["currentSha256"] == sha(path.read_bytes())
    assert details["changedLines"] == [[5, 5]]
    assert "since then lines 5 changed" in refusal["message"]
    read = follow(box, refusal)
    assert "5\tdef perimeter(w,h):" in read["content"]
    ok(box, path="a.py", oldText="2 * (w + h)", newText="2 * (h + w)",
       expectedSha256=read["sha256"])


def test_row12_stale_digest_of_an_unknown_version_has_no_range(tmp_path, box):
    path = put(tmp_path, "a.py", PY)
    read = call(box, "read_file", path="a.py")
    path.write_text(PY + "# touched\n")
    refusal = refused(box, "STALE", path="a.py", oldText="w * h", newText="h * w",
                      expectedSha256=read["sha256"])
    assert "changedLines" not in refusal["details"]
    assert refusal["suggestedArgs"] == {"path": "a.py"}
    assert path.read_text() == PY + "# touched\n"
    fresh = follow(box, refusal)
    ok(box, path="a.py", oldText="w * h", newText="h * w", expectedSha256=fresh["sha256"])


def test_row15_placeholder_in_new_text_is_refused_unless_it_was_there(tmp_path, box):
    path = put(tmp_path, "a.py", PY)
    refusal = refused(box, "INVALID_ARGUMENT", path="a.py",
                      oldText="def area(w, h):\n    return w * h\n",
                      newText="def area(w, h):\n    // ... existing code ...\n")
    assert refusal["details"]["kind"] == "placeholder"
    assert path.read_text() == PY
    # the same words already in the file are not a placeholder for anything
    put(tmp_path, "b.py", "x = 1\n# ... rest of the code ...\n")
    ok(box, path="b.py", oldText="x = 1\n", newText="x = 2\n")
    # Python's Ellipsis is code, not a placeholder
    ok(box, path="a.py", oldText="    return w * h\n", newText="    ...\n")


def test_row15_elided_old_text_is_diagnosed(tmp_path, box):
    put(tmp_path, "a.py", PY)
    refusal = refused(box, "NOT_FOUND", path="a.py",
                      oldText="def area(w, h):\n    ...\n    return 2 * (w + h)\n", newText="x")
    differences = refusal["details"]["differences"]
    assert differences[0]["kind"] in ("content", "elision", "missing_lines")


def test_row16_escaped_newlines(tmp_path, box):
    path = put(tmp_path, "a.py", PY)
    refusal = refused(box, "NOT_FOUND", path="a.py",
                      oldText="def area(w, h):\\n    return w * h", newText="x")
    assert refusal["details"]["differences"][0]["kind"] == "escaped"
    # newText over-escaped while oldText spans lines: applied, with a warning
    result = ok(box, path="a.py", oldText="def area(w, h):\n    return w * h",
                newText="def area(w, h):\\n    \\\"\\\"\\\"Area.\\\"\\\"\\\"\\n    return w * h")
    assert any("escape sequences" in w for w in result["warnings"])
    assert "\\n" in path.read_text()


def test_row17_file_over_the_limit_is_too_large(tmp_path):
    path = put(tmp_path, "big.txt", "x\n" * 600)
    with Toolbox(tmp_path, limits=Limits(max_edit_file_bytes=1000)) as toolbox:
        refusal = refused(toolbox, "TOO_LARGE", path="big.txt", oldText="x", newText="y",
                          replaceAll=True)
    assert refusal["details"] == {"path": "big.txt", "kind": "file_too_large", "size": 1200,
                                  "limit": 1000, "message": refusal["message"]}
    assert path.read_text() == "x\n" * 600


def test_row17_result_over_the_limit_is_too_large(tmp_path):
    path = put(tmp_path, "a.txt", "x\n" * 10)
    with Toolbox(tmp_path, limits=Limits(max_write_bytes=100)) as toolbox:
        refusal = refused(toolbox, "TOO_LARGE", path="a.txt", oldText="x",
                          newText="x" * 20, replaceAll=True)
        # \n becomes \r\n in a CRLF file: the exact size is checked after the edit is built
        put(tmp_path, "b.txt", b"y\r\n" * 10)
        crlf = refused(toolbox, "TOO_LARGE", path="b.txt", oldText="y", newText="y\nz\nw\nv",
                       replaceAll=True)
    assert refusal["details"]["kind"] == "result_too_large"
    assert crlf["details"]["kind"] == "result_too_large"
    assert crlf["details"]["size"] == 120
    assert path.read_text() == "x\n" * 10


# UTF-16/UTF-32 text with its mark is edited (test_edit_intent.py); what
# such a mark announces but does not decode is still refused
@pytest.mark.parametrize("data, kind", [(b"GIF89a\x00\x01", "binary"),
                                        (b"AB\x01\x02\x03\x04\x05CD\x06", "binary"),
                                        (b"caf\xe9\n", "encoding"),
                                        (b"\xff\xfex\x00\n", "encoding"),
                                        (b"\xff\xfe\x00\x00\x00\xd8\x00\x00", "encoding")])
def test_row18_binary_and_undecodable_files(tmp_path, box, data, kind):
    path = put(tmp_path, "f.bin", data)
    refusal = refused(box, "UNSUPPORTED", path="f.bin", oldText="x", newText="y")
    assert refusal["details"]["kind"] == kind
    assert path.read_bytes() == data


def test_row21_repeating_a_failed_call_is_called_out(tmp_path, box):
    put(tmp_path, "a.py", PY)
    args = {"path": "a.py", "oldText": "def volume():", "newText": "x"}
    first = refused(box, "NOT_FOUND", **args)
    again = refused(box, "NOT_FOUND", **args)
    third = refused(box, "NOT_FOUND", **args)
    assert "repeated" not in first["details"]
    assert again["details"]["repeated"] == 2 and third["details"]["repeated"] == 3
    assert again["hint"].startswith("Do not send this call again unchanged, it failed the same "
                                    "way before; ")
    assert again["hint"].endswith(first["hint"][1:])
    # a different call, or the same call on changed content, starts over
    assert "repeated" not in refused(box, "NOT_FOUND", path="a.py", oldText="def volume(x):",
                                     newText="x")["details"]
    put(tmp_path, "a.py", PY + "\n")
    assert "repeated" not in refused(box, "NOT_FOUND", **args)["details"]


def test_row22_old_text_in_another_file(tmp_path, box):
    put(tmp_path, "src/shapes.py", PY)
    solid = put(tmp_path, "src/solids.py", "def volume(w, h, d):\n    return w * h * d\n")
    refusal = refused(box, "NOT_FOUND", path="src/shapes.py", oldText="    return w * h * d\n",
                      newText="    return d * w * h\n")
    assert refusal["details"]["foundIn"] == "src/solids.py"
    follow(box, refusal)
    ok(box, path="src/solids.py", oldText="    return w * h * d\n",
       newText="    return d * w * h\n")
    assert solid.read_text().endswith("return d * w * h\n")


def test_row22_other_file_is_named_only_if_the_model_may_read_it(tmp_path):
    put(tmp_path, "src/shapes.py", PY)
    put(tmp_path, "src/secret.py", "API_KEY = 'abc'  # the key\n")
    put(tmp_path, "src/hidden.py", "API_KEY = 'abc'  # the key\n")

    def authorize(request):
        if isinstance(request, ReadRequest) and request.path == "src/secret.py":
            raise Denied("private")
        return True

    with Toolbox(tmp_path, authorize=authorize, deny=["src/hidden.py"]) as toolbox:
        refusal = refused(toolbox, "NOT_FOUND", path="src/shapes.py",
                          oldText="API_KEY = 'abc'  # the key", newText="x")
    assert "foundIn" not in refusal["details"]
    assert "secret" not in json.dumps(refusal) and "hidden" not in json.dumps(refusal)


@pytest.mark.parametrize("args, field, message", [
    ({"oldText": 5, "newText": "x"}, "oldText", "must be a string, not an integer"),
    # null: not given, and after oldText that is a call cut off
    ({"oldText": "a", "newText": None}, "newText", "is missing after oldText; this is how a call "
     "looks when the answer ran out of output before the call was complete, so nothing was "
     "done"),
    ({"oldText": "a", "newText": "b", "replaceAll": "yes"}, "replaceAll",
     "must be true or false, not a string"),
    ({"edits": [{"oldText": "a"}]}, "edits[0].newText", "is required"),
    ({"edits": []}, "edits", "needs at least 1 item(s)"),
    ({"edits": [{"oldText": "a", "newText": "b", "replace_all": True}]},
     "edits[0].replace_all", "is not an argument of this tool"),
    # another tool's name beside ours (alone it is read as ours: test_call_dialects.py)
    ({"old_string": "a", "new_string": "b", "oldText": "a"}, "old_string",
     "is not an argument of this tool"),
])
def test_row23_wrong_argument_types_name_the_field(tmp_path, box, args, field, message):
    put(tmp_path, "a.py", PY)
    refusal = refused(box, "INVALID_ARGUMENT", path="a.py", **args)
    assert refusal["details"]["field"] == field
    assert refusal["message"] == f"edit_file: argument '{field}' {message}"
    assert (tmp_path / "a.py").read_text() == PY


# -- bytes the model cannot see ------------------------------------------------------------


@pytest.mark.parametrize("name, before, steps, after", [
    ("crlf", b"one\r\ntwo\r\nthree\r\n",
     [("two", "2\nzwei"), ("one\n2\n", "1\n2\n"), ("three\r\n", "3\r\n")],
     b"1\r\n2\r\nzwei\r\n3\r\n"),
    ("bom", b"\xef\xbb\xbffirst = 1\nsecond = 2\n",
     [("first = 1", "erst = 1"), ("second = 2\n", "second = 2\nthird = 3\n")],
     b"\xef\xbb\xbferst = 1\nsecond = 2\nthird = 3\n"),
    ("bom_crlf", b"\xef\xbb\xbfa\r\nb\r\n", [("a\nb", "A\nB")], b"\xef\xbb\xbfA\r\nB\r\n"),
    ("tabs", b"if x:\n\tif y:\n\t\tz()\n\tw = '\t'\n",
     [("\t\tz()", "\t\tz()\n\t\tv()"), ("w = '\t'", "w = '\t\t'")],
     b"if x:\n\tif y:\n\t\tz()\n\t\tv()\n\tw = '\t\t'\n"),
    ("no_final_newline", b"a = 1\nb = 2",
     [("a = 1", "a = 10"), ("b = 2", "b = 20"), ("a = 10\n", "a = 10\nc = 3\n")],
     b"a = 10\nc = 3\nb = 20"),
    ("crlf_no_final_newline", b"a\r\nb", [("b", "b\nc")], b"a\r\nb\r\nc"),
    ("mixed", b"lf\ncrlf\r\nlf2\nlast\r\n",
     [("crlf", "crlf\nadded"), ("lf2", "lf2\nadded2"), ("lf\ncrlf\nadded\n", "LF\nCRLF\nADDED\n")],
     b"LF\nCRLF\r\nADDED\r\nlf2\nadded2\nlast\r\n"),
    ("cr_only", b"a\rb\rc\r", [("b", "b1\nb2"), ("c\n", "c\nd\n")], b"a\rb1\rb2\rc\rd\r"),
    ("non_ascii", "café = '☕'\nnaïve = \"日本語\"\nemoji = '😀'\n".encode(),
     [("'☕'", "'🍵'"), ("日本語", "中文"),
      ("emoji = '😀'\n", "emoji = '😀😀'\nø = 1\n")],
     "café = '🍵'\nnaïve = \"中文\"\nemoji = '😀😀'\nø = 1\n".encode()),
    ("lone_cr_inside_lf_file", b"progress = 'a\rb'\nx = 1\n", [("x = 1", "x = 2\ny = 3")],
     b"progress = 'a\rb'\nx = 2\ny = 3\n"),
])
def test_bytes_survive_edits(tmp_path, box, name, before, steps, after):
    path = put(tmp_path, "f.txt", before)
    digest = sha(before)
    for old, new in steps:
        result = ok(box, path="f.txt", oldText=old, newText=new, expectedSha256=digest)
        assert result["baseSha256"] == digest
        digest = result["sha256"]
        assert digest == sha(path.read_bytes())  # chained without re-reading
    assert path.read_bytes() == after


def test_empty_old_text_fills_an_empty_file(tmp_path, box):
    empty = put(tmp_path, "empty.py", b"")
    ok(box, path="empty.py", oldText="", newText="x = 1\n")
    assert empty.read_bytes() == b"x = 1\n"
    bom = put(tmp_path, "bom.py", b"\xef\xbb\xbf")
    result = ok(box, path="bom.py", oldText="", newText="y = 2\n")
    assert result["bom"] is True and result["lines"] == [[1, 1]]
    assert bom.read_bytes() == b"\xef\xbb\xbfy = 2\n"
    refused(box, "INVALID_ARGUMENT", path="empty.py", oldText="", newText="z = 3\n")
    missing = refused(box, "NOT_FOUND", path="new.py", oldText="", newText="z = 3\n")
    assert not (tmp_path / "new.py").exists()
    assert missing["details"]["path"] == "new.py"
    assert missing["hint"] == "Create new.py with write_file; edit_file changes existing files."
    created = call(box, "write_file", path="new.py", content="z = 3\n")
    assert created["ok"] is True, created
    assert (tmp_path / "new.py").read_text() == "z = 3\n"


# -- edits, dry runs, chaining ------------------------------------------------------------


def test_edits_apply_in_order_and_say_where_each_landed(tmp_path, box):
    path = put(tmp_path, "a.py", PY)
    result = ok(box, path="a.py", edits=[
        {"oldText": "def perimeter(w, h):\n",
         "newText": "def perimeter(w, h):\n    \"\"\"P.\"\"\"\n"},
        {"oldText": "def area(w, h):\n", "newText": "import math\n\n\ndef area(w, h):\n"},
        {"oldText": "w", "newText": "width", "replaceAll": True},
        {"oldText": "  return 2 * (width + h)", "newText": "  return 2 * (width + h)  # sum"},
    ])
    assert path.read_text() == ("import math\n\n\ndef area(width, h):\n    return width * h\n\n\n"
                                "def perimeter(width, h):\n    \"\"\"P.\"\"\"\n"
                                "    return 2 * (width + h)  # sum\n")
    edits = result["edits"]
    assert [e["replacements"] for e in edits] == [1, 1, 4, 1]
    assert result["replacements"] == 7
    assert edits[0]["lines"] == [[8, 9]]  # moved down by the import added after it
    assert edits[1]["lines"] == [[1, 4]]
    assert edits[2]["lines"] == [[4, 4], [5, 5], [8, 8], [10, 10]]
    assert edits[3]["lines"] == [[10, 10]]
    assert all("matchStrategy" not in e for e in edits)


def test_edits_are_all_or_nothing(tmp_path, box):
    before = b"a = 1\r\nb = 2\r\n"
    path = put(tmp_path, "a.py", before)
    inode = path.stat().st_ino
    refusal = refused(box, "NOT_FOUND", path="a.py", edits=[
        {"oldText": "a = 1", "newText": "a = 10"},
        {"oldText": "c = 3", "newText": "c = 30"},
    ])
    assert refusal["message"].startswith("edits[1]: oldText does not occur in a.py")
    assert refusal["details"]["edit"] == 1
    assert "suggestedTool" not in refusal  # line numbers refer to the text after edits[0]
    assert path.read_bytes() == before
    assert path.stat().st_ino == inode
    refusal = refused(box, "AMBIGUOUS", path="a.py", edits=[
        {"oldText": "a = 1", "newText": "b = 2"},
        {"oldText": "b = 2", "newText": "b = 3"},
    ])
    assert refusal["details"]["lines"] == [1, 2]
    assert path.read_bytes() == before


def test_edits_may_use_tolerant_strategies_each(tmp_path, box):
    path = put(tmp_path, "a.py", b"def f():\n\tx = 1  \n\ty = 2\n")
    result = ok(box, path="a.py", edits=[
        {"oldText": "x = 1\n\ty = 2", "newText": "x = 1\n\ty = 3"},
        {"oldText": "    y = 3", "newText": "    y = 3\n    z = 4"},
    ])
    assert [e.get("matchStrategy", "exact") for e in result["edits"]] == \
        ["trailing_whitespace", "indentation"]
    assert path.read_bytes() == b"def f():\n\tx = 1\n\ty = 3\n\tz = 4\n"


def test_dry_run_changes_nothing_and_predicts_the_result(tmp_path, box):
    path = put(tmp_path, "a.py", PY)
    inode, mtime = path.stat().st_ino, path.stat().st_mtime_ns
    preview = ok(box, path="a.py", oldText="w * h", newText="h * w", dryRun=True)
    assert preview["dryRun"] is True
    assert preview["sha256"] == preview["baseSha256"] == sha(PY.encode())
    assert preview["diff"] == ("--- a/a.py\n+++ b/a.py\n@@ -1,5 +1,5 @@\n def area(w, h):\n"
                               "-    return w * h\n+    return h * w\n \n \n"
                               " def perimeter(w, h):\n")
    assert path.read_text() == PY
    assert (path.stat().st_ino, path.stat().st_mtime_ns) == (inode, mtime)
    real = ok(box, path="a.py", oldText="w * h", newText="h * w")
    assert real["sha256"] == preview["resultSha256"] == sha(path.read_bytes())
    assert real["diff"] == preview["diff"]
    assert "dryRun" not in real


def test_diff_marks_a_missing_final_newline(tmp_path, box):
    put(tmp_path, "a.txt", b"a\nb")
    result = ok(box, path="a.txt", oldText="b", newText="c")
    assert result["diff"] == ("--- a/a.txt\n+++ b/a.txt\n@@ -1,2 +1,2 @@\n a\n-b\n"
                              "\\ No newline at end of file\n+c\n\\ No newline at end of file\n")


def test_chaining_sha256_across_many_edits_without_reading(tmp_path, box):
    path = put(tmp_path, "a.py", "".join(f"v{i} = 0\n" for i in range(20)))
    digest = sha(path.read_bytes())
    for i in range(20):
        result = ok(box, path="a.py", oldText=f"v{i} = 0", newText=f"v{i} = {i + 1}",
                    expectedSha256=digest.upper() if i % 2 else digest)
        assert result["baseSha256"] == digest
        digest = result["sha256"]
    assert path.read_text() == "".join(f"v{i} = {i + 1}\n" for i in range(20))
    assert sha(path.read_bytes()) == digest


@pytest.mark.parametrize("changed_outside", ["same_size", "same_size_other_file", "no"])
def test_base_digest_is_the_file_as_found_after_an_edit(tmp_path, make_root, changed_outside):
    # the Toolbox remembers the bytes its last edit wrote: a file holding
    # other bytes of the same size (changed in place, or another file) must
    # be hashed as it is, never given the remembered digest
    path = put(tmp_path, "a.py", "x = 1\ny = 1\n")
    other = put(tmp_path, "b.py", "x = 2\ny = 1\n")
    with Toolbox(make_root(tmp_path)) as toolbox:
        first = ok(toolbox, path="a.py", oldText="x = 1", newText="x = 2")
        assert first["sha256"] == sha(b"x = 2\ny = 1\n")
        name = "a.py"
        if changed_outside == "same_size":
            path.write_bytes(b"x = 3\ny = 1\n")
        elif changed_outside == "same_size_other_file":
            other.write_bytes(b"x = 2\ny = 2\n")
            name = "b.py"
        found = (tmp_path / name).read_bytes()
        second = ok(toolbox, path=name, oldText="y = 1", newText="y = 3") \
            if changed_outside != "same_size_other_file" else \
            ok(toolbox, path=name, oldText="y = 2", newText="y = 3")
        assert second["baseSha256"] == sha(found)
        assert second["sha256"] == sha((tmp_path / name).read_bytes())


# -- the file itself: mode, links ----------------------------------------------------------


@pytest.mark.parametrize("mode", [0o600, 0o640, 0o755, 0o444])
def test_mode_is_kept(tmp_path, make_root, mode):
    path = put(tmp_path, "a.sh", "echo 1\n")
    path.chmod(mode)
    with Toolbox(make_root(tmp_path)) as toolbox:
        ok(toolbox, path="a.sh", oldText="echo 1", newText="echo 2")
    assert stat.S_IMODE(path.stat().st_mode) == mode
    assert path.read_text() == "echo 2\n"


def test_final_symlink_inside_root_is_followed(tmp_path, make_root):
    real = put(tmp_path, "pkg/real.py", PY)
    os.symlink("pkg/real.py", tmp_path / "link.py")
    asked = []
    with Toolbox(make_root(tmp_path), authorize=lambda r: asked.append(r) or True) as toolbox:
        result = ok(toolbox, path="link.py", oldText="w * h", newText="h * w")
    assert result["path"] == "link.py" and result["resolvedPath"] == "pkg/real.py"
    assert os.readlink(tmp_path / "link.py") == "pkg/real.py"
    assert "return h * w" in real.read_text()
    assert [type(r) for r in asked] == [EditRequest] and asked[0].path == "pkg/real.py"


def test_symlink_to_a_denied_file_is_denied(tmp_path):
    secret = put(tmp_path, "secrets/key.py", "KEY = 'abc'\n")
    os.symlink("secrets/key.py", tmp_path / "key.py")
    with Toolbox(tmp_path, deny=["secrets/**"]) as toolbox:
        refusal = refused(toolbox, "DENIED", path="key.py", oldText="abc", newText="xyz")
    assert refusal["details"]["kind"] == "deny_rule"
    assert secret.read_text() == "KEY = 'abc'\n"


def test_symlink_is_refused_by_a_strict_root(tmp_path, make_root):
    put(tmp_path, "real.py", PY)
    os.symlink("real.py", tmp_path / "link.py")
    with Toolbox(make_root(tmp_path, follow_symlinks=False)) as toolbox:
        refusal = refused(toolbox, "UNSUPPORTED", path="link.py", oldText="w * h", newText="x")
    assert refusal["details"]["kind"] == "symlink"
    assert (tmp_path / "real.py").read_text() == PY


def test_hard_link_refused_by_default_and_never_written_through(tmp_path, make_root):
    first = put(tmp_path, "a.py", PY)
    os.link(first, tmp_path / "b.py")
    with Toolbox(make_root(tmp_path)) as toolbox:
        refusal = refused(toolbox, "UNSUPPORTED", path="b.py", oldText="w * h", newText="h * w")
    assert refusal["details"]["kind"] == "hardlink"
    with Toolbox(make_root(tmp_path), allow_hardlinks=True) as toolbox:
        ok(toolbox, path="b.py", oldText="w * h", newText="h * w")
    assert first.read_text() == PY  # the other name keeps the old content
    assert "h * w" in (tmp_path / "b.py").read_text()
    assert first.stat().st_nlink == 1


# -- the host ------------------------------------------------------------------------------


def test_authorization_sees_digests_count_and_diff_before_the_write(tmp_path):
    path = put(tmp_path, "a.py", PY)
    seen = []

    def authorize(request):
        seen.append((request, path.read_text()))
        return True

    with Toolbox(tmp_path, authorize=authorize) as toolbox:
        preview = ok(toolbox, path="a.py", oldText="w", newText="x", replaceAll=True, dryRun=True)
        result = ok(toolbox, path="a.py", oldText="w", newText="x", replaceAll=True)
    (dry, during_dry), (request, during) = seen
    assert dry.dry_run is True and request.dry_run is False
    assert during == during_dry == PY  # nothing written before the host said yes
    assert request == EditRequest("a.py", base_sha256=sha(PY.encode()),
                                  result_sha256=result["sha256"],
                                  result_bytes=len(PY.replace("w", "x")), replacements=4,
                                  diff=result["diff"], dry_run=False)
    assert preview["resultSha256"] == result["sha256"]


def test_denied_edit_changes_nothing(tmp_path):
    path = put(tmp_path, "a.py", PY)

    def authorize(request):
        raise Denied("not during the freeze")

    with Toolbox(tmp_path, authorize=authorize) as toolbox:
        refusal = refused(toolbox, "DENIED", path="a.py", oldText="w * h", newText="h * w")
    assert refusal["details"]["reason"] == "not during the freeze"
    assert path.read_text() == PY


def test_swap_during_authorization_fails_closed(tmp_path, make_root):
    path = put(tmp_path, "a.py", PY)
    swapped = put(tmp_path, "other.py", "other = 1\n")

    def authorize(request):
        os.replace(swapped, path)  # another inode takes the name
        return True

    with Toolbox(make_root(tmp_path), authorize=authorize) as toolbox:
        refusal = refused(toolbox, "STALE", path="a.py", oldText="w * h", newText="h * w")
    assert refusal["details"]["kind"] == "swapped"
    assert path.read_text() == "other = 1\n"


def test_change_in_place_during_authorization_fails_closed(tmp_path, make_root):
    path = put(tmp_path, "a.py", PY)

    def authorize(request):
        with open(path, "r+") as f:  # same inode, new content (an editor saving in place)
            f.write("# hi")
        return True

    with Toolbox(make_root(tmp_path), authorize=authorize) as toolbox:
        refusal = refused(toolbox, "STALE", path="a.py", oldText="w * h", newText="h * w")
    assert refusal["details"]["kind"] == "swapped"
    assert path.read_text() == "# hi" + PY[4:]


def test_read_only_toolbox_offers_no_edit(tmp_path):
    path = put(tmp_path, "a.py", PY)
    with Toolbox(tmp_path, read_only=True) as toolbox:
        assert "edit_file" not in toolbox.names
        refusal = refused(toolbox, "DENIED", path="a.py", oldText="w * h", newText="h * w")
    assert path.read_text() == PY
    assert refusal["details"]["kind"] == "read_only"


def test_description_tells_a_model_how_to_call_it(tmp_path, box):
    (definition,) = [d for d in box.definitions() if d["name"] == "edit_file"]
    text = definition["description"]
    for phrase in ("copied exactly", "without read_file's margin", "must occur once",
                   "replaceAll", "edits", "all or nothing", "sha256", "expectedSha256"):
        assert phrase in text, phrase
    schema = definition["inputSchema"]
    assert schema["required"] == ["path"] and schema["additionalProperties"] is False
    assert schema["properties"]["edits"]["items"]["required"] == ["oldText", "newText"]


# -- many threads, one file ----------------------------------------------------------------


def test_concurrent_edits_of_one_file_all_land(tmp_path):
    threads, per_thread = 32, 50
    lines = [f"t{t:02d}-{i:02d}: value 0\n" for t in range(threads) for i in range(per_thread)]
    path = put(tmp_path, "shared.txt", "".join(lines))
    failures: list[dict] = []
    start = threading.Barrier(threads)

    with Toolbox(tmp_path) as toolbox:
        def worker(t: int) -> None:
            start.wait()
            for i in range(per_thread):
                result = toolbox.call("edit_file", {"path": "shared.txt",
                                                    "oldText": f"t{t:02d}-{i:02d}: value 0\n",
                                                    "newText": f"t{t:02d}-{i:02d}: value 1\n"})
                if not result["ok"] or result["replacements"] != 1:
                    failures.append(result)

        pool = [threading.Thread(target=worker, args=(t,)) for t in range(threads)]
        for thread in pool:
            thread.start()
        for thread in pool:
            thread.join()
    assert failures == []
    assert path.read_text() == "".join(line.replace("value 0", "value 1") for line in lines)
    leftovers = [p.name for p in tmp_path.iterdir() if p.name != "shared.txt"]
    assert leftovers == []  # no temporary file left behind
