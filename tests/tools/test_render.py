"""corral.hosts.render: what a model is shown of each tool's real answers.

Every sample is a real envelope from a Toolbox on real files; the rendering
must carry what a model needs (the lines, the window, the short digest, what
a write did, a refusal's code, sentence, hint and call) and nothing twice.
"""

from __future__ import annotations

import array
import itertools
import json
import os
import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from corral.hosts import (envelope_text, json_string, json_utf8, render, render_escaped,
                          render_with_json, short_digest)
from corral.hosts.render import NumberedText, number_every
from corral.tools import Code, Toolbox

REFUSED = tuple(f"{code.value}: " for code in Code)
EXAMPLES = int(os.environ.get("CORRAL_SOAK_EXAMPLES", "150"))  # per property test


@pytest.fixture
def box(tmp_path):
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "app.py").write_text("def f():\n\n    # note\n    return 1\n")
    (tmp_path / "big.txt").write_text("".join(f"line {i}\n" for i in range(1, 31)))
    (tmp_path / "crlf.txt").write_bytes(b"a\r\nb\r\n")
    (tmp_path / "empty.txt").write_text("")
    (tmp_path / "notes.md").write_text("# Notes\n")
    with Toolbox(tmp_path) as toolbox:
        yield toolbox


def test_read_file_is_the_lines_after_a_margin_and_one_footer(box):
    envelope = box.call("read_file", {"path": "src/app.py"})
    text = render("read_file", envelope)
    lines = text.split("\n")
    # the lines as they are (no JSON escaping); fewer than ten: no number
    assert lines[:4] == ["def f():", "", "    # note", "    return 1"]
    # the whole file shown: the footer is the digest, bare
    assert lines[4] == f"[{envelope['sha256'][:16]}]" and len(lines) == 5
    assert envelope["sha256"] not in text and "\\n" not in text


def test_the_margin_holds_every_tenth_number(box, tmp_path):
    envelope = box.call("read_file", {"path": "big.txt", "offset": 3, "limit": 24})
    rows = render("read_file", envelope).split("\n")[:-1]
    assert len(rows) == 24
    for k, row in enumerate(rows):
        number = 3 + k
        shown = number in (3, 26) or number % 10 == 0
        assert row == (f"{number}\tline {number}" if shown else f"line {number}"), row
    # a file's own leading tabs and digits stay after the margin
    (tmp_path / "data.tsv").write_text("".join(f"{i}\t{i * i}\n" for i in range(1, 13)))
    rows = render("read_file", box.call("read_file", {"path": "data.tsv"})).split("\n")
    assert rows[:12] == ["1\t1\t1", "2\t4", "3\t9", "4\t16", "5\t25", "6\t36", "7\t49",
                         "8\t64", "9\t81", "10\t10\t100", "11\t121", "12\t12\t144"]
    (tmp_path / "Makefile").write_text("all:\n\tmake build\n" * 5)
    rows = render("read_file", box.call("read_file", {"path": "Makefile"})).split("\n")
    assert rows[:2] == ["1\tall:", "\tmake build"] and rows[9] == "10\t\tmake build"
    # fewer than ten lines: a file's own tabs and digits as they are
    few = render("read_file", box.call("read_file", {"path": "data.tsv", "limit": 3}))
    assert few.startswith("1\t1\n2\t4\n3\t9\n[lines 1-3 of 12, ")


@pytest.mark.parametrize(("lines", "every"), [(10, 10), (250, 10), (1000, 10), (1001, 100)])
def test_a_long_read_numbers_fewer_lines(tmp_path, lines, every):
    """Every tenth line in a read of up to 1,000 lines, every hundredth
    beyond; the first and last shown always."""
    (tmp_path / "long.txt").write_text("".join(f"row {i}\n" for i in range(1, 1301)))
    with Toolbox(tmp_path) as toolbox:
        envelope = toolbox.call("read_file", {"path": "long.txt", "offset": 7, "limit": lines})
    rows = render("read_file", envelope).split("\n")[:-1]
    assert len(rows) == lines
    numbered = [int(row.partition("\t")[0]) for row in rows if "\t" in row]
    last = 7 + lines - 1
    assert numbered == [7, *range(every * (7 // every + 1), last, every), last], numbered[:5]
    assert all(row == f"row {7 + k}" for k, row in enumerate(rows)
               if 7 + k not in numbered)


def test_a_window_says_where_it_ends_and_where_to_go_on(box):
    envelope = box.call("read_file", {"path": "big.txt", "offset": 11, "limit": 12})
    text = render("read_file", envelope)
    assert text.startswith("11\tline 11\n") and "\n20\tline 20\nline 21\n22\tline 22\n" in text
    assert "\nline 12\n" in text
    # the next offset is the last line's plus one: said by the description
    assert text.endswith(f"[lines 11-22 of 30, {short_digest(envelope['sha256'])}]")
    few = render("read_file", box.call("read_file", {"path": "big.txt", "offset": 11,
                                                     "limit": 5}))
    assert few == f"line 11\nline 12\nline 13\nline 14\nline 15\n[lines 11-15 of 30, " \
        f"{short_digest(envelope['sha256'])}]"
    last = render("read_file", box.call("read_file", {"path": "big.txt", "offset": 29}))
    assert last.endswith(f"[lines 29-30 of 30, {short_digest(envelope['sha256'])}]")
    head = render("read_file", box.call("read_file", {"path": "big.txt", "limit": 4}))
    assert head.endswith(f"[lines 1-4 of 30, {short_digest(envelope['sha256'])}]")
    assert head.startswith("line 1\nline 2\n")


def test_what_is_not_in_the_text_is_said(box):
    crlf = render("read_file", box.call("read_file", {"path": "crlf.txt"}))
    assert crlf.startswith("a\nb\n") and "[crlf line endings, " in crlf
    empty = box.call("read_file", {"path": "empty.txt"})
    assert render("read_file", empty) == f"[empty file, {empty['sha256'][:16]}]"


def test_a_write_is_one_line(box):
    out = box.call("write_file", {"path": "new/dir/a.txt", "content": "hi\n"})
    assert render("write_file", out) == (f"Created new/dir/a.txt; made directories new, "
                                         f"new/dir [{out['sha256'][:16]}]")
    again = box.call("write_file", {"path": "new/dir/a.txt", "content": "ho\n",
                                    "expectedSha256": out["sha256"][:16]})
    assert render("write_file", again) == f"Replaced new/dir/a.txt [{again['sha256'][:16]}]"
    assert render("make_directory", box.call("make_directory", {"path": "m/n"})) == \
        "Created directory m/n (and m)"
    assert render("make_directory", box.call("make_directory", {"path": "m"})) == \
        "m already exists"
    assert render("move_file", box.call("move_file", {"source": "notes.md",
                                                      "destination": "docs/"})) == \
        "Moved notes.md to docs/notes.md; made directories docs"
    assert render("delete_file", box.call("delete_file", {"path": "docs/notes.md"})) == \
        "Deleted docs/notes.md"


def test_an_edit_is_one_line_and_a_dry_run_shows_its_diff(box):
    edit = box.call("edit_file", {"path": "src/app.py", "oldText": "return 1",
                                  "newText": "return 2"})
    assert render("edit_file", edit) == (f"Edited src/app.py: 1 replacement at line 4 "
                                         f"[{edit['sha256'][:16]}]")
    dry = box.call("edit_file", {"path": "src/app.py", "oldText": "return 2",
                                 "newText": "return 3", "dryRun": True})
    text = render("edit_file", dry)
    head, *diff = text.split("\n")
    assert head.startswith("Dry run, nothing changed: src/app.py would get 1 replacement at "
                           "line 4")
    assert "-    return 2" in diff and "+    return 3" in diff
    assert not any(line.startswith(("--- ", "+++ ")) for line in diff)  # the path is said above
    # a loosened match is shown: the model did not write exactly what landed
    loose = box.call("edit_file", {"path": "src/app.py", "oldText": "return 2   ",
                                   "newText": "return 4"})
    if loose.get("matchStrategy"):
        assert "matched " in render("edit_file", loose) and "+    return 4" in \
            render("edit_file", loose)


def test_listings_and_searches_one_entry_a_line(box):
    listing = render("list_directory", box.call("list_directory", {"path": "."}))
    assert listing.split("\n") == ["big.txt 231", "crlf.txt 6", "empty.txt 0", "notes.md 8",
                                   "src/"]
    tree = render("list_directory", box.call("list_directory", {"path": ".", "depth": 2}))
    assert "src/\n  app.py 34" in tree
    assert render("glob", box.call("glob", {"pattern": "**/*.py"})) == "src/app.py"
    grep = render("grep", box.call("grep", {"pattern": "return", "context": 1}))
    assert grep == "src/app.py\n3-    # note\n4:    return 1"
    files = render("grep", box.call("grep", {"pattern": "line", "outputMode": "counts"}))
    assert files == "big.txt:30"
    nothing = render("glob", box.call("glob", {"pattern": "*.rs"}))
    assert "No files match '*.rs'" in nothing


def test_a_cut_listing_says_how_much_was_shown_of_what(tmp_path):
    from corral.tools import Limits
    for d in ("a", "b"):
        (tmp_path / d).mkdir()
        for i in range(6):
            (tmp_path / d / f"f{i}").write_text("x")
    (tmp_path / "top.txt").write_text("x")
    with Toolbox(tmp_path, limits=Limits(list_entries=5)) as small:
        flat = render("list_directory", small.call("list_directory", {"path": "a"}))
        assert flat.endswith("\n[5 of 6 entries shown]")
        tree = small.call("list_directory", {"path": ".", "depth": 2})
        assert tree["total"] == 3 and tree["shown"] == 5  # the envelope's counts, as they were
        # a tree's total is its top level's: never "5 of 3 shown"
        assert render("list_directory", tree).endswith(
            "[5 entries shown in all, the most one listing holds; 3 at the top level, "
            "1 directories not listed]")


@pytest.mark.parametrize("entries, lines", [
    ([{"name": "a.txt", "kind": "file", "size": 3}, {"name": "d", "kind": "dir"}],
     ["a.txt 3", "d/"]),
    ([{"name": "l", "kind": "symlink"}, {"name": "f", "kind": "file"}], ["l (symlink)", "f"]),
    ([{"name": "d", "kind": "dir", "size": 4096}], ["d/"]),
    ([{"name": "a", "kind": "file", "size": 1, "ignored": True}], ["a 1 (ignored)"]),
    ([{"name": "a\nb", "kind": "file", "size": 1}], ['"a\\nb" 1']),
    # an invisible character: quoted and escaped, as a line break is (THREATS row 57's way)
    ([{"name": "zero\u200bwidth", "kind": "dir"}], ['"zero\\u200bwidth"/']),
    ([{"name": 7, "kind": "file", "size": 1}, "not an entry"], ["7 1"]),
    ([{"kind": "file", "size": 1}, {"name": "n", "kind": "dir"}], [" 1", "n/"]),
])
def test_a_listing_line_says_each_entry_whatever_its_shape(entries, lines):
    envelope = {"ok": True, "path": ".", "entries": entries, "truncated": False,
                "total": len(entries)}
    assert render("list_directory", envelope).split("\n") == lines


# -- a listing's text and JSON in one pass -------------------------------------------

# names a listing shows as they are (JSON escapes some), and names it does not
_PLAIN_NAMES = ["a.txt", "d", "x" * 300, 'say "hi"', "back\\slash", "é", ""]
_ODD_NAMES = ["a\nb", "tab\there", "\u2028", "\udcff", "\x7f", "zero\u200bwidth", 7]
_KINDS = ["file", "dir", "symlink", "other"]
_ODD_KINDS = ["sock\n", "é", None]
_ODD_SIZES = [True, None, 1.5, "3"]


@st.composite
def _entries(draw):
    """Listing entries, mostly plain (a name, a kind, a file's size), some
    of every other shape: keys out of order, left out or added, values of
    other types, names that need quoting or are not UTF-8, entries that are
    no dict; and whether all are plain."""
    entries = []
    plain = True
    for _ in range(draw(st.integers(0, 8))):
        kind = draw(st.sampled_from(_KINDS))
        entry = {"name": draw(st.sampled_from(_PLAIN_NAMES)), "kind": kind}
        if kind == "file":
            entry["size"] = draw(st.integers(0, 10 ** 20))
        shape = draw(st.integers(0, 29))
        plain = plain and shape > 7
        if shape == 0:
            entry = dict(reversed(list(entry.items())))
        elif shape == 1:
            entry["ignored"] = True
        elif shape == 2:
            del entry["name"]
        elif shape == 3:
            entry["name"] = draw(st.sampled_from(_ODD_NAMES))
        elif shape == 4:
            entry["kind"] = draw(st.sampled_from(_ODD_KINDS))
        elif shape == 5:
            entry["size"] = draw(st.sampled_from(_ODD_SIZES))
        elif shape == 6:
            entry.pop("size", None)
        elif shape == 7:
            entries.append(draw(st.sampled_from(["not an entry", ["a", "file"], None])))
            continue
        entries.append(entry)
    return entries, plain


@settings(max_examples=EXAMPLES * 4, deadline=None)
@given(drawn=_entries(), before=st.booleans(), extra=st.sampled_from([None, {}, {"denied": 2},
       {"truncated": True, "total": 99, "shown": 3}, {"note": "\udcff"}, {"path": "d\u00e9"}]))
def test_a_listing_text_and_json_made_in_one_pass_are_render_and_envelope_text(drawn, before,
                                                                               extra):
    """render_with_json gives render's text exactly, and when it gives the
    JSON too, it is envelope_text's plain form exactly, whatever the entries
    and wherever they are in the envelope; it gives the JSON for plain
    entries in an envelope without a lone surrogate."""
    entries, plain = drawn
    envelope = {"ok": True, "path": ".", "entries": entries, "truncated": False,
                "total": len(entries)}
    if before:
        envelope = {"entries": entries, **envelope}
    if extra is not None:
        envelope.update(extra)
    text, made = render_with_json("list_directory", envelope)
    assert text == render("list_directory", envelope)
    if made is not None:
        assert (made, True) == envelope_text(envelope)
    if plain and extra != {"note": "\udcff"}:
        assert made is not None


def test_a_plain_listing_is_made_in_one_pass(box):
    """The listing of plain entries (the common case) takes the one pass."""
    envelope = box.call("list_directory", {"path": "."})
    text, made = render_with_json("list_directory", envelope)
    assert (text, made) == (render("list_directory", envelope), envelope_text(envelope)[0])
    assert made is not None
    odd = {**envelope, "entries": [{"kind": "dir", "name": "src"}]}
    assert render_with_json("list_directory", odd) == (render("list_directory", odd), None)
    for tool, args in [("read_file", {"path": "notes.md"}), ("glob", {"pattern": "*"})]:
        answer = box.call(tool, args)
        assert render_with_json(tool, answer) == (render(tool, answer), None)


def test_file_info_is_one_line(box):
    text = render("file_info", box.call("file_info", {"path": "src/app.py"}))
    assert text.startswith("src/app.py: file, 34 bytes, mode 0") and "modified 20" in text
    assert "Ns" not in text


def test_read_files_names_each_file(box):
    out = box.call("read_files", {"paths": ["notes.md", "nope.md"]})
    text = render("read_files", out)
    assert text.startswith(f"== notes.md ==\n# Notes\n[{out['files'][0]['sha256'][:16]}]")
    assert "== nope.md ==\nNOT_FOUND: nope.md does not exist" in text
    assert text.endswith("[1 read, 1 refused]")


@pytest.mark.parametrize(("tool", "args"), [
    ("read_file", {"path": "src/ap.py"}),
    ("read_file", {"path": "src"}),
    ("read_file", {"path": "../x"}),
    ("write_file", {"path": "notes.md", "content": "x"}),
    ("edit_file", {"path": "src/app.py", "oldText": "e", "newText": "E"}),
    ("edit_file", {"path": "src/app.py", "oldText": "    # nope\n    return 1\n",
                   "newText": "x"}),
    ("read_file", {"path": "src/app.py", "offset": 0}),
])
def test_a_refusal_is_its_code_sentence_hint_and_call(box, tool, args):
    envelope = box.call(tool, args)
    assert envelope["ok"] is False, envelope
    text = render(tool, envelope)
    lines = text.split("\n")
    assert lines[0].startswith(f"{envelope['code']}: {envelope['message']}")
    assert text.count(envelope["message"]) == 1  # the sentence once
    # the hint, with any full sha256 in it shortened (expectedSha256 takes that back)
    assert lines[1] == re.sub(r"[0-9a-f]{64}", lambda m: m.group()[:16], envelope["hint"])
    if envelope.get("suggestedTool"):
        assert lines[-1] == (f"Try: {envelope['suggestedTool']} "
                             f"{json.dumps(envelope['suggestedArgs'], separators=(',', ':'))}")
    assert "details" not in text and "{\"ok\"" not in text


def test_a_tool_it_does_not_know_is_its_envelope(box):
    assert render("host_tool", {"ok": True, "n": 1}) == '{"ok":true,"n":1}'
    # a known name with another shape (a host's own read_file) is not misread either
    assert render("read_file", {"ok": True, "lines": 3}) == '{"ok":true,"lines":3}'
    # a field the renderer has no words for still reaches the model
    out = box.call("read_file", {"path": "notes.md"})
    assert "extra: 7" in render("read_file", {**out, "extra": 7})


def test_a_name_that_is_not_utf8_is_escaped(box, tmp_path):
    (tmp_path / "odd").mkdir()
    (tmp_path / "odd" / b"bad\xff.txt".decode("utf-8", "surrogateescape")).write_text("x")
    text = render("list_directory", box.call("list_directory", {"path": "odd"}))
    assert text == "bad\\udcff.txt 1"
    text.encode("utf-8")  # always valid UTF-8


def test_no_refusal_text_looks_like_a_success(box):
    """Successes never start like a refusal (``CODE: ``), so a host can tell."""
    for tool, args in [("read_file", {"path": "notes.md"}), ("list_directory", {"path": "."}),
                       ("glob", {"pattern": "*"}), ("file_info", {"path": "notes.md"})]:
        assert not render(tool, box.call(tool, args)).startswith(REFUSED)


def test_apply_patch_is_one_line_a_file(tmp_path):
    from corral.hosts import render
    from corral.tools import Toolbox

    (tmp_path / "a.py").write_text("def f():\n    return 1\n")
    (tmp_path / "b.txt").write_text("x\n")
    with Toolbox(tmp_path) as box:
        envelope = box.call("apply_patch", {"input": (
            "*** Begin Patch\n*** Update File: a.py\n*** Move to: c.py\n@@ def f():\n"
            "-    return 1\n+    return 2\n*** Add File: n/new.txt\n+hi\n"
            "*** Delete File: b.txt\n*** End Patch\n")})
    assert envelope["ok"] is True, envelope
    moved, added, deleted = render("apply_patch", envelope).split("\n")
    assert moved == f"Moved a.py to c.py at line 2 [{envelope['files'][0]['sha256'][:16]}]"
    assert added == f"Added n/new.txt; made directories n [{envelope['files'][1]['sha256'][:16]}]"
    assert deleted == "Deleted b.txt"


# -- the margin, on any text: the rule row by row ----------------------------------------

def _margin_by_rows(content: str) -> str:
    """The margin's rule applied one row at a time, as the module's account
    states it: a text whose every row is ``digits<TAB>text`` keeps the
    number of the first and last row with text and of every row with text
    whose number is a multiple of the spacing; a read of fewer rows than
    the spacing keeps none; any other text is shown as it is."""
    rows = content.split("\n")
    split = [row.partition("\t") for row in rows]
    if not all(tab and number.isascii() and number.isdigit() for number, tab, _ in split):
        return content
    every = number_every(len(rows))
    if len(rows) < every:
        return "\n".join(text for _, _, text in split)
    with_text = [i for i, (_, _, text) in enumerate(split) if text]
    ends = {with_text[0], with_text[-1]} if with_text else set()
    return "\n".join(row if text and (i in ends or int(number) % every == 0) else text
                     for i, (row, (number, _, text)) in enumerate(zip(rows, split)))


_TEXTS = ["x = 1", "", "\tindented", "10\t100", "a\rb", " ", "é", "٣"]


@st.composite
def _numbered(draw: st.DrawFn) -> str:
    """A read's numbered text (any window of up to 1,200 lines, some empty),
    sometimes with a number that is not a read's (leading zeros, none, a
    non-ASCII digit, a missing tab, a gap), or a trailing newline."""
    count = draw(st.sampled_from([1, 9, 10, 11, 35, 999, 1000, 1001, 1200]))
    start = draw(st.integers(0, 10 ** 7))
    blank = draw(st.sampled_from([0.0, 0.3, 0.97, 1.0]))
    seed = draw(st.integers(0, 2 ** 32))
    rows = []
    for i in range(count):
        mix = (seed >> (i % 29)) ^ (i * 2654435761)
        text = "" if (mix % 1000) / 1000 < blank else _TEXTS[mix % len(_TEXTS)]
        rows.append(f"{start + i}\t{text}")
    for index, spoiled in draw(st.lists(st.tuples(
            st.integers(0, count - 1),
            st.sampled_from(["007\t", "0\t", "00\t", "100\t", "\t", "٣\t", "12", "x\t",
                             "3\t\t"])), max_size=3)):
        rows[index] = spoiled + rows[index].partition("\t")[2]
    return "\n".join(rows) + draw(st.sampled_from(["", "", "", "\n"]))


@settings(max_examples=EXAMPLES, deadline=None)
@given(content=_numbered())
def test_the_margin_follows_its_rule_on_any_text(content):
    envelope = {"ok": True, "path": "f.txt", "content": content, "totalLines": 1,
                "sha256": "0" * 64}
    shown, footer = render("read_file", envelope).rsplit("\n", 1)
    assert footer == "[0000000000000000]"
    assert shown == _margin_by_rows(content)


# -- the margin from the rows the reader carries --------------------------------------------

@st.composite
def _rows(draw: st.DrawFn) -> tuple[int, list[str]]:
    """A read's first number and its rows' text (some empty)."""
    count = draw(st.sampled_from([1, 2, 9, 10, 11, 35, 999, 1000, 1001, 1200]))
    start = draw(st.integers(1, 10 ** 7))
    blank = draw(st.sampled_from([0.0, 0.3, 0.97, 1.0]))
    seed = draw(st.integers(0, 2 ** 32))
    texts = []
    for i in range(count):
        mix = (seed >> (i % 29)) ^ (i * 2654435761)
        texts.append("" if (mix % 1000) / 1000 < blank else _TEXTS[mix % len(_TEXTS)])
    return start, texts


@settings(max_examples=EXAMPLES, deadline=None)
@given(rows=_rows())
def test_the_margin_from_carried_rows_follows_the_same_rule(rows):
    start, texts = rows
    content = "\n".join(f"{start + i}\t{text}" for i, text in enumerate(texts))
    carried = NumberedText.of(content, start, "\n".join(texts))
    assert carried == content
    envelope = {"ok": True, "path": "f.txt", "content": carried, "totalLines": 1,
                "sha256": "0" * 64}
    shown, footer = render("read_file", envelope).rsplit("\n", 1)
    assert footer == "[0000000000000000]"
    assert shown == _margin_by_rows(content)


@settings(max_examples=EXAMPLES, deadline=None)
@given(rows=_rows())
def test_the_margin_from_where_carried_rows_begin_follows_the_same_rule(rows):
    start, texts = rows
    content = "\n".join(f"{start + i}\t{text}" for i, text in enumerate(texts))
    begins = list(itertools.accumulate((len(text) + 1 for text in texts[:-1]), initial=0))
    carried = NumberedText.of(content, start, "\n".join(texts), begins)
    envelope = {"ok": True, "path": "f.txt", "content": carried, "totalLines": 1,
                "sha256": "0" * 64}
    shown, footer = render("read_file", envelope).rsplit("\n", 1)
    assert footer == "[0000000000000000]"
    assert shown == _margin_by_rows(content)


@pytest.mark.parametrize(("start", "count"), [(1, 10), (1, 200), (7, 35), (1995, 12),
                                              (2001, 10), (1, 1001), (950, 1200), (10, 1000)])
@pytest.mark.parametrize("empty", [(), (1, 2), (-2,), (0,), (-1,), (9,), (3, 13, 23, 33)])
def test_the_margin_from_rows_starts_follows_the_same_rule(start, count, empty):
    """A read is numbered from its rows' starts as the backend gives them (a
    memoryview of int64): the first and last row with text and every tenth
    or hundredth with text, on both sides of the numbers made once (up to
    2,000), whichever rows are empty."""
    texts = [f"row {start + i}" for i in range(count)]
    empty = [index for index in empty if -count <= index < count]
    for index in empty:
        texts[index] = ""
    content = "\n".join(f"{start + i}\t{text}" for i, text in enumerate(texts))
    begins = itertools.accumulate((len(text) + 1 for text in texts[:-1]), initial=0)
    carried = NumberedText.of(content, start, "\n".join(texts),
                              memoryview(array.array("q", begins).tobytes()).cast("q"))
    envelope = {"ok": True, "path": "f.txt", "content": carried, "totalLines": 1,
                "sha256": "0" * 64}
    shown, footer = render("read_file", envelope).rsplit("\n", 1)
    assert shown == _margin_by_rows(content)
    if not empty:
        numbered = [row for row in shown.split("\n") if "\t" in row]
        every = number_every(count)
        assert numbered[0] == f"{start}\trow {start}"
        assert numbered[-1] == f"{start + count - 1}\trow {start + count - 1}"
        assert len(numbered) == len({start, start + count - 1} | {
            n for n in range(start, start + count) if n % every == 0})


_READ_FILES = {
    "plain.py": "".join(f"def f_{i}(x):\n    return x * {i}\n" for i in range(120)),
    "blank_ends.txt": "\n\n" + "".join(f"row {i}\n" for i in range(30)) + "\n\n",
    "blank_only.txt": "\n" * 25,
    "unterminated.txt": "".join(f"row {i}\n" for i in range(14)) + "last",
    "accents.txt": "".join(f"café {i}\n" for i in range(40)),
    "crlf.txt": "".join(f"row {i}\r\n" for i in range(25)),
    "bom.txt": "\ufeff" + "".join(f"row {i}\n" for i in range(25)),
    "cut.txt": "".join(("x" * 3000 if i == 12 else f"row {i}") + "\n" for i in range(25)),
    "long.txt": "".join(f"row {i}\n" for i in range(1500)),
    "tabs.tsv": "".join(f"{i}\t{i * i}\n" for i in range(1, 30)),
}


@pytest.mark.parametrize("window", [{}, {"offset": 5}, {"limit": 12}, {"offset": 3, "limit": 11}])
def test_a_read_shows_the_same_margin_with_or_without_its_carried_rows(make_toolbox, tmp_path,
                                                                       window):
    """read_file's content carries its rows for a whole file read (on every
    backend): what a model is shown of it is the margin of the content
    itself, byte for byte."""
    for name, text in _READ_FILES.items():
        (tmp_path / name).write_bytes(text.encode("utf-8"))
    with make_toolbox(tmp_path) as toolbox:
        for name in _READ_FILES:
            envelope = toolbox.call("read_file", {"path": name, **window})
            assert envelope["ok"] is True, envelope
            content = envelope["content"]
            if not window:
                assert type(content) is NumberedText, name
                if content.starts:  # where the rows begin, when the reader knew
                    rows = content.texts.split("\n")
                    assert list(content.starts) == list(itertools.accumulate(
                        (len(row) + 1 for row in rows[:-1]), initial=0)), name
                if name == "plain.py" and toolbox.root.info()["backend"] == "native":
                    assert len(content.starts) == envelope["totalLines"]
            plain = {**envelope, "content": str(content)}
            assert type(plain["content"]) is str
            assert render("read_file", envelope) == render("read_file", plain), name
            assert json.dumps(envelope) == json.dumps(plain)


_ESCAPED_READS = {**_READ_FILES,
                  "quoted.c": "".join(f'puts("a\\t{i}\\\\");\t// \x7f "x"\n' for i in range(40)),
                  "controls.txt": "".join(f"row {i} \b \f \x1b end\n" for i in range(15)),
                  "separator.txt": "".join(f"row {i} \u2028 \x85\n" for i in range(15))}


@pytest.mark.parametrize("window", [{}, {"offset": 5}, {"offset": 3, "limit": 11}])
def test_a_read_escaped_in_one_pass_is_its_text_and_envelope_as_json(make_toolbox, tmp_path,
                                                                      window):
    """render_escaped gives render's text as a JSON string and, when it
    gives the envelope's JSON too, envelope_text's exactly (on every
    backend, with and without carried rows); it gives both for a read of
    ASCII text whose only characters to escape are the usual ones."""
    for name, text in _ESCAPED_READS.items():
        (tmp_path / name).write_bytes(text.encode("utf-8"))
    with make_toolbox(tmp_path) as toolbox:
        for name in _ESCAPED_READS:
            envelope = toolbox.call("read_file", {"path": name, **window})
            assert envelope["ok"] is True, envelope
            quoted, made = render_escaped("read_file", envelope)
            assert quoted == json_utf8(render("read_file", envelope)), name
            if made is not None:
                assert made == envelope_text(envelope)[0].encode("utf-8"), name
            usual = name not in ("accents.txt", "controls.txt", "separator.txt")
            assert (made is not None) is usual, name


@settings(max_examples=EXAMPLES, deadline=None)
@given(pieces=st.lists(st.sampled_from(_USUAL_PIECES_READ := [
    "def f(x):", "\t", '"', "\\", "\\n", " ", "x" * 300, "\x7f", "\r", "\x00", "\b",
    "é", "\u2028", "\udcff"]), max_size=40), rows=st.integers(1, 30),
    extra=st.sampled_from([None, {"warnings": ['say "x"\n']}, {"cutLines": [2, 3]},
                           {"path": "d\udcff"}, {"note": "\u00e9"}, {"truncated": True}]),
    carried=st.booleans())
def test_any_read_escaped_in_one_pass_is_its_text_and_envelope_as_json(pieces, rows, extra,
                                                                       carried):
    """render_escaped of any read's envelope (rows of any characters, any
    other fields) is render's text and envelope_text's JSON, when it gives
    the JSON."""
    line = "".join(pieces)
    texts = [line if i % 3 else line[:i] for i in range(rows)]
    content = "\n".join(f"{1 + i}\t{text}" for i, text in enumerate(texts))
    if carried:
        content = NumberedText.of(content, 1, "\n".join(texts))
    envelope = {"ok": True, "path": "f.txt", "content": content, "startLine": 1,
                "endLine": rows, "totalLines": rows, "truncated": False, "sha256": "0" * 64,
                **(extra or {})}
    quoted, made = render_escaped("read_file", envelope)
    text = render("read_file", envelope)
    assert quoted == json_utf8(text)
    if made is not None:
        assert (made.decode("utf-8"), True) == envelope_text(envelope)


# -- a string as JSON ------------------------------------------------------------------

# what most files hold (the fast path), what else JSON escapes, and what is not ASCII
_USUAL_PIECES = ["def f(x):", "\n", "\t", '"', "\\", "\\n", " ", "x" * 700, "{}", "\x7f"]
_ESCAPED_PIECES = ["\r", "\x00", "\x1f", "\b", "\f"]
_OTHER_PIECES = ["é", "\u2028", "\udcff", "\U0001f600"]


@settings(max_examples=EXAMPLES * 2, deadline=None)
@given(pieces=st.one_of(
    st.lists(st.sampled_from(_USUAL_PIECES), max_size=60),
    st.lists(st.sampled_from(_USUAL_PIECES + _ESCAPED_PIECES), max_size=60),
    st.lists(st.sampled_from(_USUAL_PIECES + _ESCAPED_PIECES + _OTHER_PIECES), max_size=60)))
def test_json_string_is_what_json_writes(pieces):
    """Exactly ``json.dumps(text, ensure_ascii=False)``, for short and long
    text, ASCII or not, with every character JSON escapes."""
    text = "".join(pieces)
    assert json_string(text) == json.dumps(text, ensure_ascii=False)
    if "\udcff" not in text:  # UTF-8 holds no lone surrogate
        assert json_utf8(text) == json.dumps(text, ensure_ascii=False).encode("utf-8")
    numbered = NumberedText.of(text, 1, text)  # a read's content is a str too
    assert json_string(numbered) == json.dumps(text, ensure_ascii=False)


_JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats()
    | st.text(st.characters(exclude_categories=("Cs",))),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=5), inner,
                                                                max_size=4),
    max_leaves=20)


@settings(max_examples=EXAMPLES, deadline=None)
@given(value=_JSON_VALUES)
def test_an_envelope_is_written_as_the_json_module_writes_it(value):
    """envelope_text's plain form is ``json.dumps`` with compact separators,
    byte for byte (floats, NaN, nesting, any text), made by an encoder kept
    from call to call."""
    expected = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    assert envelope_text(value) == (expected, True)
    assert envelope_text({"ok": True, "value": value}) == (f'{{"ok":true,"value":{expected}}}',
                                                           True)
    with pytest.raises(TypeError):
        envelope_text({"ok": True, "value": [value, object()]})
