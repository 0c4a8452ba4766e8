"""edit_file's quick paths answer what its general ones answer.

The diff of a change inside one line is cut from the text around it
(``diff._one_line``) rather than built by aligning blocks of lines
(``diff._general``); line lookups count from the last line found rather
than from the start; oldText's occurrences are found and counted in one
pass; the text after an edit takes its count of line breaks from the text
before; the commonest call (one exact edit of an LF text) is made whole
at once (``edit_file._quick``).  Each is held here to the general
computation on generated texts and edits, and the whole answer of
``edit_file`` on real files (what the host is asked, what the Toolbox
remembers for later calls) to the answer it gives with the quick paths
turned off.

``CORRAL_SOAK_EXAMPLES`` raises the number of generated cases (a documented
soak profile; the default keeps the test to a few seconds)."""

from __future__ import annotations

import inspect
import os
import re
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from corral.tools import Toolbox
from corral.tools._builtin import edit_file as edit_module
from corral.tools._edit import diff as diff_module
from corral.tools._edit.budget import Work
from corral.tools._edit.diff import unified_diff
from corral.tools._edit.match import (has_space_indented_line, indent_style, occurrences,
                                       spacing_key, tab_indented)
from corral.tools._edit.spans import Region, apply_regions
from corral.tools._edit.state import EditMemory
from corral.tools._edit.text import Lines
from corral.tools._read.textform import HEAD, controls, many_controls
from corral.tools._refusals.catalogue import Refusal

EXAMPLES = int(os.environ.get("CORRAL_SOAK_EXAMPLES", "150"))

# characters str.splitlines would split at, and blanks: a quick path that
# split lines any other way than at \n would show
_CHARS = "ab \t\x0c\x1c\u2028\x85"


def _texts(eols: tuple[str, ...] = ("\n",)) -> st.SearchStrategy[str]:
    line = st.text(alphabet=_CHARS, max_size=5)
    return st.builds(lambda rows, last: "".join(c + e for c, e in rows) + last,
                     st.lists(st.tuples(line, st.sampled_from(eols)), max_size=12), line)


@st.composite
def one_edit(draw: st.DrawFn) -> tuple[str, int, int, str]:
    """A text (line breaks of one or several kinds), a range of it, and
    what replaces it: mostly inside one line, sometimes across lines."""
    text = draw(st.one_of(_texts(), _texts(), _texts(("\n", "\r\n"))))
    start = draw(st.integers(0, len(text)))
    end = draw(st.integers(start, min(len(text), start + 6)))
    new = draw(st.one_of(st.text(alphabet="xy \u2028", max_size=4),
                         st.text(alphabet="xy\n", max_size=4)))
    return text, start, end, new


def _changed(text: str, start: int, end: int, new: str) -> tuple[Lines, Lines, list]:
    """``text`` with ``[start, end)`` of its normalized form replaced by ``new``."""
    before = Lines(text)
    size = len(before.normalized)
    region = Region(min(start, size), min(end, size), new)
    after_text, placements = apply_regions(Lines(text), [region], Work())
    return before, before.replaced(after_text, placements), placements


@settings(max_examples=EXAMPLES * 2, deadline=None)
@given(one_edit())
def test_the_quick_diff_is_the_general_diff(case):
    text, start, end, new = case
    before, after, placements = _changed(text, start, end, new)
    spans = [placements[0]]
    general = diff_module._general("f.txt", Lines(before.text), Lines(after.text), spans,
                                   Work(), 3)
    quick = unified_diff("f.txt", before, after, spans, Work())
    assert quick == general


@st.composite
def one_line_change(draw: st.DrawFn) -> tuple[str, int, int, str]:
    """An LF text (characters of one to four bytes, a final break or not)
    and a change inside one of its lines: a range of that line and what
    replaces it, without a break, unlike it."""
    rows = draw(st.lists(st.text(alphabet="ab \t\x0cé€😀", max_size=5), min_size=1,
                         max_size=12))
    text = "\n".join(rows) + draw(st.sampled_from(["\n", ""]))
    row = draw(st.integers(0, len(rows) - 1))
    line_start = sum(len(r) + 1 for r in rows[:row])
    start = line_start + draw(st.integers(0, len(rows[row])))
    end = draw(st.integers(start, line_start + len(rows[row])))
    new = draw(st.text(alphabet="xy é😀", max_size=4).filter(lambda n: n != text[start:end]))
    return text, start, end, new


@settings(max_examples=EXAMPLES * 2, deadline=None)
@given(one_line_change())
def test_the_one_line_diff_of_bytes_is_the_one_line_diff_of_the_texts(case):
    """The quick step diffs a change inside one line on the file's bytes
    (the lines around it decoded alone): the diff of the texts, wherever
    it answers, and it answers unless the hunk ends in a last line without
    its break."""
    text, start, end, new = case
    after = text[:start] + new + text[end:]
    expected = diff_module.one_line_diff("f.txt", text, after, start, end, start + len(new))
    data = text.encode()
    at = len(text[:start].encode())
    line_start = data.rfind(b"\n", 0, at) + 1
    found = diff_module.one_line_diff_of_bytes("f.txt", data, after.encode(), line_start,
                                               data.count(b"\n", 0, line_start),
                                               at + len(text[start:end].encode()))
    assert found == expected or found is None
    last_line = text.count("\n") - text.endswith("\n")  # (0-based)
    if expected is not None and (text.endswith("\n") or
                                 text.count("\n", 0, start) + 3 < last_line):
        assert found == expected


@st.composite
def block_edit(draw: st.DrawFn) -> tuple[str, int, int, str]:
    """A text of many short lines (some alike, so lines align in more than
    one way) and a change of several of its lines into several others,
    anywhere in it (its first and last lines included)."""
    rows = draw(st.lists(st.sampled_from(["a", "b", "c", "", "  a", "d"]), min_size=1,
                         max_size=40))
    text = "\n".join(rows) + draw(st.sampled_from(["\n", ""]))
    start = draw(st.integers(0, len(text)))
    end = draw(st.integers(start, min(len(text), start + 16)))
    new = "\n".join(draw(st.lists(st.sampled_from(["a", "b", "x", "", " c"]), max_size=8)))
    return text, start, end, new + draw(st.sampled_from(["\n", ""]))


@st.composite
def lines_edit(draw: st.DrawFn) -> tuple[str, int, int, str]:
    """:func:`block_edit`'s texts and changes, some lines outside ASCII,
    the change starting and ending at line starts as often as not (lines
    replaced, inserted or deleted whole, as a model's edits mostly are)."""
    rows = draw(st.lists(st.sampled_from(["a", "b", "é", "", "  a", "d😀"]), min_size=1,
                         max_size=40))
    text = "\n".join(rows) + draw(st.sampled_from(["\n", ""]))
    starts = [0] + [i + 1 for i, c in enumerate(text) if c == "\n"]
    whole = draw(st.booleans())
    start = draw(st.sampled_from(starts)) if whole else draw(st.integers(0, len(text)))
    ends = [e for e in starts + [len(text)] if start <= e <= start + 16]
    end = draw(st.sampled_from(ends)) if whole and ends else \
        draw(st.integers(start, min(len(text), start + 16)))
    new = "".join(r + "\n" for r in draw(st.lists(st.sampled_from(["a", "b", "x", "", " c", "é"]),
                                                   max_size=8)))
    return text, start, end, new if whole else new + draw(st.sampled_from(["", "y"]))


@settings(max_examples=EXAMPLES * 2, deadline=None)
@given(st.one_of(block_edit(), lines_edit()))
def test_the_diff_of_a_block_cut_from_around_it_is_the_general_diff(case):
    """A change of several lines is diffed on a window of its lines (the
    hunks' numbers shifted to it): the general diff of the whole texts."""
    text, start, end, new = case
    before, after, placements = _changed(text, start, end, new)
    general = diff_module._general("f.txt", Lines(before.text), Lines(after.text),
                                   [placements[0]], Work(), 3)
    assert unified_diff("f.txt", before, after, [placements[0]], Work()) == general


def _block_diff_of_bytes(text: str, start: int, end: int, new: str) -> str | None:
    """block_diff_of_bytes of ``text`` with ``[start, end)`` become ``new``,
    given its bytes as the quick step gives them."""
    after = text[:start] + new + text[end:]
    data = text.encode()
    at = len(text[:start].encode())
    line_start = data.rfind(b"\n", 0, at) + 1
    return diff_module.block_diff_of_bytes("f.txt", data, after.encode(), line_start,
                                           data.count(b"\n", 0, line_start),
                                           at + len(text[start:end].encode()),
                                           at + len(new.encode()))


@settings(max_examples=EXAMPLES * 4, deadline=None)
@given(st.one_of(block_edit(), lines_edit()))
def test_the_block_diff_of_bytes_is_the_general_diff(case):
    """The quick step diffs a change across lines on the file's bytes (the
    lines around it cut out, the alignment left out where the lines left
    between the shared ones share none): the general diff of the whole
    texts, wherever it answers."""
    text, start, end, new = case
    before, after, placements = _changed(text, start, end, new)
    general = diff_module._general("f.txt", Lines(before.text), Lines(after.text),
                                   [placements[0]], Work(), 3)
    found = _block_diff_of_bytes(text, start, end, new)
    assert found is None or (found == general.text and general.complete)


@pytest.mark.parametrize(("text", "start", "end", "new"), [
    ("a\nb\nc\nd\ne\nf\ng\nh\n", 6, 10, "x\ny\nz\n"),  # lines replaced
    ("a\nb\nc\nd\ne\nf\ng\nh\n", 6, 6, "x\n"),  # a line inserted
    ("a\nb\nc\nd\ne\nf\ng\nh\n", 6, 10, ""),  # lines deleted
    ("a\nb\nc\nd\ne\nf\ng\nh\n", 0, 4, "x\ny\n"),  # at the start
    ("a\nb\nc\nd\ne\nf\ng\nh\n", 12, 16, "x\n"),  # at the end
    ("a\nb\nc\nd\ne\nf\ng\nh\n", 6, 9, "x\ny"),  # across a break, inside lines
    ("a\nb\nc\nd\ne\nf\ng\nh\n", 4, 10, "c\nx\ne\n"),  # shared first and last lines
    ("a\nb\n    c\n    d\ne\n", 4, 18, "    c2\n    d2\n"),  # indented lines
    ("é\nb\nc😀\nd\ne\n", 3, 12, "x\né2\n"),  # outside ASCII
])
def test_the_block_diff_of_bytes_answers_a_change_of_lines(text, start, end, new):
    """A change of whole lines, or across lines, in a text whose lines end
    with their breaks and whose changed lines share none but at their
    ends: answered, as the general diff."""
    before, after, placements = _changed(text, start, end, new)
    general = diff_module._general("f.txt", Lines(before.text), Lines(after.text),
                                   [placements[0]], Work(), 3)
    assert general.text
    assert _block_diff_of_bytes(text, start, end, new) == general.text


@settings(max_examples=EXAMPLES * 2, deadline=None)
@given(one_edit())
def test_the_count_of_lines_after_an_edit_is_the_texts(case):
    text, start, end, new = case
    before, after, _ = _changed(text, start, end, new)
    assert after.breaks == after.text.count("\n")
    split = Lines(after.text)
    split.contents  # counted from the split lines
    assert after.count() == split.count()


@settings(max_examples=EXAMPLES * 2, deadline=None)
@given(_texts(), st.lists(st.integers(-2, 80), min_size=1, max_size=12))
def test_line_lookups_in_any_order_are_the_split_texts(text, positions):
    counted, split = Lines(text), Lines(text)
    split.contents  # lines split: every lookup bisects the line starts
    for pos in positions:
        assert counted.line_of(pos) == split.line_of(pos), pos
        assert counted.line_index(pos) == split.line_index(pos), pos
        lo, hi = sorted((max(pos, 0), max(pos, 0) + 3))
        assert counted.lines(lo, hi) == split.lines(lo, hi)


@settings(max_examples=EXAMPLES * 4, deadline=None)
@given(st.one_of(_texts(), _texts(("\n", "\r\n")),
                 st.text(alphabet=" \t\na\r\x0c\u2028", max_size=30)))
def test_the_files_indentation_counted_in_c_is_the_line_by_line_answer(text):
    """What an edit's warnings ask of the file's indentation, counted in C
    where the counts settle it, is what looking at each line answers."""
    lines = Lines(text)
    assert tab_indented(lines) is (indent_style(Lines(text)) == "\t")
    assert has_space_indented_line(lines) is any(line.startswith(" ")
                                                 for line in Lines(text).contents)


@settings(max_examples=EXAMPLES * 2, deadline=None)
@given(st.text(alphabet="ab\n", max_size=40), st.text(alphabet="ab\n", min_size=1, max_size=3),
       st.integers(0, 5))
def test_occurrences_are_every_non_overlapping_match(text, needle, limit):
    starts, at = [], text.find(needle)
    while at >= 0:
        starts.append(at)
        at = text.find(needle, at + len(needle))
    assert occurrences(text, needle, limit) == (len(starts), starts[:limit])


# -- the whole answer, on real files -------------------------------------------------


@st.composite
def file_edits(draw: st.DrawFn) -> tuple[bytes, list[tuple[str, str]], bool]:
    """A file's bytes and edits of it: a line's piece or whole lines, copied
    from the file (so it matches), replaced by other text; once or several in one call
    (one edit sent alone, or as the one item of ``edits``: its newText then
    marked as :func:`_answer` reads it)."""
    # (characters of two and three bytes: found and cut in the bytes, the
    # quick step must land where the characters say)
    rows = draw(st.lists(st.text(alphabet="abc d\té€", min_size=0, max_size=8),
                         min_size=1, max_size=20))
    lines = [f"L{i}:{row}" for i, row in enumerate(rows)]  # each line's own mark
    eol = draw(st.sampled_from(["\n", "\n", "\r\n"]))
    final = draw(st.booleans())
    text = eol.join(lines) + (eol if final else "")
    edits = []
    for _ in range(draw(st.integers(1, 3))):
        at = draw(st.integers(0, len(lines) - 1))
        row = lines[at]
        old = row[:draw(st.integers(row.index(":") + 1, len(row)))]  # its mark: found once
        new = draw(st.one_of(st.text(alphabet="xyzü ", min_size=1, max_size=6),
                             st.text(alphabet="xy\n", min_size=1, max_size=6)))
        if at + 1 < len(lines) and draw(st.booleans()):  # whole lines, as models mostly send
            taken = draw(st.integers(1, min(2, len(lines) - 1 - at)))  # (a break after each)
            old = "\n".join(lines[at:at + taken]) + "\n"
            # (ü: no row holds it, so the file never holds newText around
            # oldText already, which edit_file answers as an edit made before)
            new = draw(st.sampled_from(["", "x\n", lines[at] + "\ny\n", "ü\n" + lines[at] + "\n"]))
        edits.append((old, new))
    if len(edits) == 1 and draw(st.booleans()):
        edits[0] = (edits[0][0], ITEM + edits[0][1])
    bom = draw(st.booleans()) and draw(st.booleans())
    return (b"\xef\xbb\xbf" if bom else b"") + text.encode(), edits, draw(st.booleans())


ITEM = "\x1e"  # newText's mark, in generated edits, for one edit sent as an item of edits


def _answer(base: Path, data: bytes, edits: list[tuple[str, str]], dry: bool, *,
            name: str = "f.py", write: bool = True) -> tuple:
    path = base / "f.py"
    if write:
        path.write_bytes(data)
    with Toolbox(base) as box:
        if len(edits) == 1 and not edits[0][1].startswith(ITEM):
            args = {"path": name, "oldText": edits[0][0], "newText": edits[0][1],
                    "dryRun": dry}
        else:
            args = {"path": name, "edits": [{"oldText": o, "newText": n.removeprefix(ITEM)}
                                            for o, n in edits], "dryRun": dry}
        answer = box.call("edit_file", args)
    return answer, path.read_bytes()


@settings(max_examples=EXAMPLES // 2, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(file_edits())
def test_edit_file_answers_the_same_without_the_quick_diff(monkeypatch, case):
    data, edits, dry = case
    with tempfile.TemporaryDirectory() as quick_dir, tempfile.TemporaryDirectory() as slow_dir:
        quick = _answer(Path(quick_dir), data, edits, dry)
        with monkeypatch.context() as patched:
            patched.setattr(diff_module, "_one_line", lambda *args: None)
            patched.setattr(diff_module, "one_line_diff", lambda *args: None)
            patched.setattr(edit_module, "one_line_diff_of_bytes", lambda *args: None)
            patched.setattr(edit_module, "block_diff_of_bytes", lambda *args: None)
            patched.setattr(diff_module, "_block_of_window", lambda *args: None)
            general = _answer(Path(slow_dir), data, edits, dry)
    assert quick == general
    if len(edits) == 1:
        assert quick[0]["ok"] is True, quick  # a generated edit applies: the answers compare


@st.composite
def answered_edits(draw: st.DrawFn) -> tuple[bytes, list[tuple[str, str]], bool, bool]:
    """:func:`file_edits`, its newText sometimes indented (the answer warns
    of the file's own indentation) or carrying what the checks refuse
    (a placeholder, read_file's numbers), and whether the file is reached
    through a link (the answer names where it led)."""
    data, edits, dry = draw(file_edits())
    indented = draw(st.sampled_from([b"", b"\tz\n", b"    z\n"]))  # the file's own style
    bom = data.startswith(b"\xef\xbb\xbf")
    data = data[:3] + indented + data[3:] if bom else indented + data
    if draw(st.booleans()):
        extra = draw(st.sampled_from(["  x", "\tx", "\n    y\n", "  # ...", "1\tx",
                                      "x\\ny\\nz"]))
        edits = [(old, new + extra) for old, new in edits]
    return data, edits, dry, draw(st.booleans())


def _envelope(base: Path, data: bytes, edits: list[tuple[str, str]], dry: bool,
              linked: bool) -> tuple:
    """The answer of edit_file (its fields in order) and the file after it."""
    path = base / "f.py"
    path.write_bytes(data)
    if linked:
        (base / "link.py").symlink_to("f.py")
    answer, after = _answer(base, data, edits, dry, name="link.py" if linked else "f.py",
                            write=False)
    return answer, list(answer), after


@settings(max_examples=EXAMPLES // 2, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(answered_edits())
def test_edit_file_answers_the_same_without_the_quick_application(monkeypatch, case):
    """The quick application (and the answer built at once from what it
    knew) gives the general path's answer, field for field and in order,
    and the same file, on generated files, edits, dry runs and links."""
    data, edits, dry, linked = case
    with tempfile.TemporaryDirectory() as quick_dir, tempfile.TemporaryDirectory() as slow_dir:
        quick = _envelope(Path(quick_dir), data, edits, dry, linked)
        with monkeypatch.context() as patched:
            _general_only(patched)
            general = _envelope(Path(slow_dir), data, edits, dry, linked)
    assert quick == general


def _general_only(patched: pytest.MonkeyPatch) -> None:
    """Turn off every quick path of edit_file: the whole call made at once,
    the application cut around one edit, the one-line diffs."""
    patched.setattr(edit_module, "_quick", lambda *args: None)
    patched.setattr(edit_module, "_apply_one", lambda *args: None)
    patched.setattr(diff_module, "_one_line", lambda *args: None)
    patched.setattr(edit_module, "one_line_diff_of_bytes", lambda *args: None)
    patched.setattr(edit_module, "block_diff_of_bytes", lambda *args: None)
    patched.setattr(diff_module, "_block_of_window", lambda *args: None)


def test_the_quick_answer_is_the_general_one_for_the_commonest_edit(tmp_path, monkeypatch):
    """The property above compares something: an exact edit of an LF file
    is made whole by the quick path, and its answer (with a warning, and
    through a link) is the general one's."""
    taken = []
    made_whole = edit_module._quick

    def counting(*args):
        found = made_whole(*args)
        taken.append(found is not None)
        return found

    monkeypatch.setattr(edit_module, "_quick", counting)
    content = b"def f():\n\treturn 1\n" + b"".join(b"x%d = 1\n" % i for i in range(40))
    for linked, new in ((False, "x7 = 2"), (False, "x7 = 2\n  y = 3"), (True, "x7 = 2\n  y = 3")):
        case = tmp_path / f"{linked}-{len(new)}"
        case.mkdir()
        quick = _envelope(case, content, [("x7 = 1", new)], False, linked)
        assert quick[0]["ok"] is True and quick[0]["lines"][0][0] == 10
        assert ("resolvedPath" in quick[0]) is linked
        # spaces in a file indented by tabs
        assert bool(quick[0].get("warnings")) is ("  y" in new), quick
        with monkeypatch.context() as patched:
            _general_only(patched)
            general_dir = tmp_path / f"{linked}-{len(new)}-general"
            general_dir.mkdir()
            assert _envelope(general_dir, content, [("x7 = 1", new)], False, linked) == quick
    assert taken == [True, True, True]


def test_one_edit_sent_as_the_item_of_edits_is_made_whole_as_the_general_path_makes_it(
        tmp_path, monkeypatch):
    taken = []
    made_whole = edit_module._quick

    def counting(*args):
        found = made_whole(*args)
        taken.append(found is not None)
        return found

    monkeypatch.setattr(edit_module, "_quick", counting)
    content = b"def f():\n\treturn 1\n" + b"".join(b"x%d = 1\n" % i for i in range(40))
    for linked in (False, True):
        case = tmp_path / f"quick-{linked}"
        case.mkdir()
        quick = _envelope(case, content, [("x7 = 1", ITEM + "x7 = 2\n  y = 3")], False, linked)
        assert quick[0]["edits"] == [{"replacements": 1, "lines": [[10, 11]]}], quick
        assert quick[0]["warnings"][0].startswith("edits[0]: "), quick
        with monkeypatch.context() as patched:
            _general_only(patched)
            general_dir = tmp_path / f"general-{linked}"
            general_dir.mkdir()
            assert _envelope(general_dir, content, [("x7 = 1", ITEM + "x7 = 2\n  y = 3")],
                             False, linked) == quick
    assert taken == [True, True]


def _session(base: Path) -> tuple[list, list, bytes]:
    """A run of calls whose answers draw on what earlier ones left: an
    edit, the same edit again (already made), a stale expectedSha256 (the
    lines changed since, from the texts kept), a failing call and the same
    call again (said to be repeated), then one that succeeds; each request
    the host was asked with, and the file at the end."""
    path = base / "f.py"
    path.write_bytes(b"".join(b"x%d = 1\n" % i for i in range(30)))
    asked: list = []
    answers = []
    with Toolbox(base, authorize=lambda request: asked.append(repr(request))) as box:
        first = box.call("read_file", {"path": "f.py"})
        answers.append(box.call("edit_file", {"path": "f.py", "oldText": "x3 = 1",
                                              "newText": "x3 = 2\n    y = 1"}))
        answers.append(box.call("edit_file", {"path": "f.py", "oldText": "x3 = 1",
                                              "newText": "x3 = 2\n    y = 1"}))
        answers.append(box.call("edit_file", {"path": "f.py", "oldText": "x9 = 1",
                                              "newText": "x9 = 2",
                                              "expectedSha256": first["sha256"]}))
        for _ in range(2):
            answers.append(box.call("edit_file", {"path": "f.py", "oldText": "x99 = 1",
                                                  "newText": "x99 = 2"}))
        answers.append(box.call("edit_file", {"path": "f.py", "oldText": "x9 = 1",
                                              "newText": "x9 = 2"}))
    return answers, asked, path.read_bytes()


def test_what_the_quick_path_leaves_for_later_calls_is_the_general_paths(tmp_path,
                                                                         monkeypatch):
    taken = []
    made_whole = edit_module._quick

    def counting(*args):
        found = made_whole(*args)
        taken.append(found is not None)
        return found

    monkeypatch.setattr(edit_module, "_quick", counting)
    (tmp_path / "quick").mkdir()
    (tmp_path / "general").mkdir()
    made = _session(tmp_path / "quick")
    assert taken.count(True) == 2, taken  # the first edit and the last
    with monkeypatch.context() as patched:
        _general_only(patched)
        assert _session(tmp_path / "general") == made
    answers = made[0]
    assert [a["ok"] for a in answers] == [True, False, False, False, False, True]
    assert answers[1]["details"]["kind"] == "already_applied"
    assert answers[2]["details"]["changedLines"] == [[4, 5]]
    assert answers[4]["details"]["repeated"] == 2
    assert [asked.split("(")[0] for asked in made[1]] == ["ReadRequest", "EditRequest",
                                                          "EditRequest"]


@st.composite
def edit_runs(draw: st.DrawFn) -> tuple[bytes, list[tuple[str, str]]]:
    """A file and a run of edits, each of another marked line, so each is
    made on what the one before it wrote: newText now and then with control
    characters (enough to make the file binary), a NUL, a byte order mark
    at the file's start, characters outside ASCII; the file sometimes about
    as long as the head binary files are told by (a long line first, so
    the edits land past it, or last, so they land in it)."""
    rows = draw(st.lists(st.text(alphabet="ab \t\x01é", max_size=6), min_size=2, max_size=8))
    lines = [f"L{i}:{row}" for i, row in enumerate(rows)]
    filler = draw(st.sampled_from(["", "", "first", "last"]))
    if filler:
        # (the edits then start near the head's end now and then)
        long_line = "#" * draw(st.one_of(st.integers(HEAD - 8, HEAD), st.integers(HEAD - 80,
                                                                                HEAD + 20)))
        lines = [long_line, *lines] if filler == "first" else [*lines, long_line]
    text = "\n".join(lines) + draw(st.sampled_from(["\n", ""]))
    edits = []
    for row in draw(st.lists(st.integers(0, len(rows) - 1), min_size=2, max_size=4,
                             unique=True)):
        new = draw(st.one_of(st.text(alphabet="xy é", max_size=4),
                             st.sampled_from(["\x01" * 40, "x\x00y", "\x02\x03", "\x01" * 2000])))
        # each line edited is marked anew (its oldText not inside its newText)
        bom = "\ufeff" if row == 0 and draw(st.integers(0, 4)) == 0 else ""
        edits.append((f"L{row}:", f"{bom}K{row}:{new}"))
    return text.encode(), edits


def _run_of_edits(base: Path, data: bytes, edits: list[tuple[str, str]]) -> tuple:
    """Each edit's answer and the file after each; on the way, what the
    Toolbox keeps of the bytes it wrote is held to what they are."""
    path = base / "f.py"
    path.write_bytes(data)
    answers, files = [], []
    with Toolbox(base) as box:
        memory = box._state.store(EditMemory)
        for old, new in edits:
            answers.append(box.call("edit_file", {"path": "f.py", "oldText": old,
                                                  "newText": new}))
            now = path.read_bytes()
            files.append(now)
            written, _, facts = memory._written
            if facts is not None:  # what the quick step will take without a look
                assert written == now
                assert now[:1] not in (b"\xef", b"\xff", b"\xfe", b"\x00")
                assert b"\x00" not in now and b"\r" not in now
                assert not many_controls(now[:HEAD])
                now.decode("utf-8")
                assert facts == (now.isascii(), controls(now[:HEAD]))
    return answers, files


@settings(max_examples=EXAMPLES, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(edit_runs())
def test_a_run_of_edits_answers_as_the_general_path_answers_it(monkeypatch, case):
    """The quick step takes what it knew of the bytes it wrote for the next
    edit of them, rather than looking again: a run of edits answers, and
    leaves the file, as the general path does, whatever the edits made of
    the file (binary, a NUL, a byte order mark first)."""
    data, edits = case
    with tempfile.TemporaryDirectory() as quick_dir, tempfile.TemporaryDirectory() as slow_dir:
        quick = _run_of_edits(Path(quick_dir), data, edits)
        with monkeypatch.context() as patched:
            _general_only(patched)
            general = _run_of_edits(Path(slow_dir), data, edits)
    assert quick == general


@pytest.mark.parametrize("before", range(HEAD - 7, HEAD + 2))
def test_a_run_of_edits_at_the_end_of_the_head_answers_as_the_general_path(tmp_path,
                                                                         monkeypatch, before):
    """Control characters an edit writes just before the end of the head,
    or just past it, count as much as they do for the general path."""
    data = b"#" * before + b"\nL0:a\nL1:b\n"
    edits = [("L0:", "\x01K0:\x01\x01"), ("L1:", "K1:\x01"), ("K0:", "\x01J0:")]
    (tmp_path / "quick").mkdir()
    (tmp_path / "general").mkdir()
    quick = _run_of_edits(tmp_path / "quick", data, edits)
    with monkeypatch.context() as patched:
        _general_only(patched)
        assert _run_of_edits(tmp_path / "general", data, edits) == quick


def test_an_edit_of_the_bytes_the_last_one_wrote_takes_what_it_knew(tmp_path, monkeypatch):
    """The property above compares something: the second of two edits takes
    the facts the first left, and an edit that made the file binary leaves
    none, so the next is refused as binary, as the general path refuses it."""
    given_facts = []
    made_whole = edit_module._quick

    def recording(*args):
        given_facts.append(inspect.signature(made_whole).bind(*args).arguments["facts"])
        return made_whole(*args)

    monkeypatch.setattr(edit_module, "_quick", recording)
    path = tmp_path / "f.py"
    path.write_bytes(b"a = 1\nb = 2\n")
    with Toolbox(tmp_path) as box:
        assert box.call("edit_file", {"path": "f.py", "oldText": "a = 1",
                                      "newText": "a = 3"})["ok"]
        assert box.call("edit_file", {"path": "f.py", "oldText": "b = 2",
                                      "newText": "b = " + "\x01" * 8})["ok"]
        refused = box.call("edit_file", {"path": "f.py", "oldText": "a = 3",
                                         "newText": "a = 4"})
    assert given_facts == [None, (True, 0), None]
    assert refused["ok"] is False and refused["code"] == "UNSUPPORTED", refused
    assert path.read_bytes() == b"a = 3\nb = " + b"\x01" * 8 + b"\n"


def test_the_quick_diff_is_taken_for_a_change_inside_one_line(tmp_path, monkeypatch):
    """The property above compares something: the commonest edit does take
    the quick path (the one-line diff of the file's bytes), and its answer
    is the general one's."""
    taken = []
    one_line = edit_module.one_line_diff_of_bytes

    def counting(*args):
        found = one_line(*args)
        taken.append(found is not None)
        return found

    monkeypatch.setattr(edit_module, "one_line_diff_of_bytes", counting)
    content = b"".join(b"x%d = 1\n" % i for i in range(150))
    answer, after = _answer(tmp_path, content, [("x75 = 1", "x75 = 2")], False)
    assert taken == [True]
    assert answer["ok"] is True and answer["lines"] == [[76, 76]]
    assert answer["diff"] == ("--- a/f.py\n+++ b/f.py\n@@ -73,7 +73,7 @@\n x72 = 1\n x73 = 1\n"
                              " x74 = 1\n-x75 = 1\n+x75 = 2\n x76 = 1\n x77 = 1\n x78 = 1\n")
    assert after == content.replace(b"x75 = 1\n", b"x75 = 2\n")


def test_the_quick_diff_of_lines_is_taken_for_a_change_of_lines(tmp_path, monkeypatch):
    """The properties above compare something: an edit of whole indented
    lines takes the quick diff of the file's bytes (no alignment), and its
    answer and file are what the general path makes of it."""
    taken = []
    of_lines = edit_module.block_diff_of_bytes

    def counting(*args):
        found = of_lines(*args)
        taken.append(found is not None)
        return found

    monkeypatch.setattr(edit_module, "block_diff_of_bytes", counting)
    content = b"".join(b"def f%d(a):\n    x = a + %d\n    return x\n\n" % (i, i)
                       for i in range(40))
    edit = ("    x = a + 20\n    return x\n", "    x = a + 20\n    y = x * 2\n    return y\n")
    quick = tmp_path / "quick"
    general = tmp_path / "general"
    quick.mkdir()
    general.mkdir()
    answer, after = _answer(quick, content, [edit], False)
    assert taken == [True]
    assert answer["ok"] is True and answer["lines"] == [[82, 84]]
    assert answer["diff"] == ("--- a/f.py\n+++ b/f.py\n@@ -80,7 +80,8 @@\n \n def f20(a):\n"
                              "     x = a + 20\n-    return x\n+    y = x * 2\n+    return y\n"
                              " \n def f21(a):\n     x = a + 21\n")
    with monkeypatch.context() as patched:
        _general_only(patched)
        assert _answer(general, content, [edit], False) == (answer, after)


def test_a_new_text_outside_ascii_in_an_ascii_file_is_made_as_the_general_path_makes_it(
        tmp_path, monkeypatch):
    for content, old, new in ((b"L0:", "L0:", "\u00fc"), (b"a\nb = 1\nc\n", "= 1", "= \u20ac\n2")):
        quick = tmp_path / f"quick-{len(content)}"
        general = tmp_path / f"general-{len(content)}"
        quick.mkdir()
        general.mkdir()
        made = _answer(quick, content, [(old, new)], False)
        assert made[0]["ok"] is True, made
        with monkeypatch.context() as patched:
            _general_only(patched)
            assert _answer(general, content, [(old, new)], False) == made


@pytest.mark.parametrize("content,old,new,expected", [
    (b"a\nb", "b", "c", "@@ -1,2 +1,2 @@\n a\n-b\n\\ No newline at end of file\n+c\n"
                        "\\ No newline at end of file\n"),
    (b"only", "only", "x", "@@ -1 +1 @@\n-only\n\\ No newline at end of file\n+x\n"
                           "\\ No newline at end of file\n"),
    (b"a\x0cb\nc\n", "c", "d", "@@ -1,2 +1,2 @@\n a\x0cb\n-c\n+d\n"),
])
def test_the_quick_diff_at_the_ends_of_a_file(tmp_path, content, old, new, expected):
    answer, _ = _answer(tmp_path, content, [(old, new)], False)
    assert answer["ok"] is True
    assert answer["diff"] == "--- a/f.py\n+++ b/f.py\n" + expected


# -- one edit applied by cutting the text around it ----------------------------------


class _Limits:
    max_write_bytes = 10**9


class _Context:
    """What edit_file's application of edits reads of a call's context."""

    limits = _Limits()


@st.composite
def single_edits(draw: st.DrawFn) -> tuple[str, str, str, bool]:
    """A text and one edit of it: oldText mostly a piece of the text (found
    once, as its lines are marked, or several times), sometimes not in it
    or inside newText; newText with line breaks, indentation, placeholders
    and read_file's line numbers now and then; a text with ``\\r`` now and
    then."""
    eols = draw(st.sampled_from([("\n",), ("\n",), ("\n",), ("\r\n",), ("\n", "\r\n")]))
    marked = draw(st.booleans())
    rows = draw(st.lists(st.text(alphabet="ab \t.1", max_size=6), max_size=10))
    rows = [f"L{i}:{row}" if marked else row for i, row in enumerate(rows)]
    text = "".join(row + draw(st.sampled_from(eols)) for row in rows[:-1]) + "".join(rows[-1:])
    if text and draw(st.integers(0, 3)) < 3:
        start = draw(st.integers(0, len(text) - 1))
        old = text[start:draw(st.integers(start + 1, min(len(text), start + 8)))]
    else:
        old = draw(st.text(alphabet="ab \n.", min_size=1, max_size=4))
    new = draw(st.one_of(st.text(alphabet="xy \t\n", max_size=6),
                         st.sampled_from(["  # ...", "\t...\n", "1\tx", "7\tx\n8\ty\n",
                                          "x\\ny\\nz", "  x\n\ty"]),
                         st.builds(lambda a, b: a + old + b, st.text(alphabet="xy", max_size=2),
                                   st.text(alphabet="xy", max_size=2))))
    return text, old, new, draw(st.integers(0, 3)) == 3


def _applied(text: str, old: str, new: str, replace_all: bool) -> tuple:
    """What edit_file's application of one edit gives: the outcome's every
    field, or the refusal's."""
    call = edit_module._Call("f.py", "f.py", [(old, new, replace_all)], False, Work())
    try:
        out = edit_module._apply(_Context(), call, text)  # type: ignore[arg-type]
    except Refusal as refused:
        return ("refused", refused.envelope())
    assert out.lines.breaks == out.text.count("\n")
    return (out.text, out.base.text, out.lines.text, out.replacements, out.ranges, out.spans,
            out.owners, out.strategies, out.counts, out.warnings, out.lines.count(),
            edit_module._lines_per_edit(out))


@settings(max_examples=EXAMPLES * 2, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(single_edits())
def test_one_edit_cut_around_is_the_general_application(monkeypatch, case):
    text, old, new, replace_all = case
    if old == new:
        return  # refused before any edit is applied
    quick = _applied(text, old, new, replace_all)
    with monkeypatch.context() as patched:
        patched.setattr(edit_module, "_apply_one", lambda *args: None)
        general = _applied(text, old, new, replace_all)
    assert quick == general


def test_the_quick_application_is_taken_for_one_exact_edit(monkeypatch):
    """The property above compares something: one edit found once in an LF
    text takes the quick path (and others do not)."""
    taken = []
    apply_one = edit_module._apply_one

    def counting(*args):
        found = apply_one(*args)
        taken.append(found is not None)
        return found

    monkeypatch.setattr(edit_module, "_apply_one", counting)
    text = "a = 1\nb = 2\n    c = 3\n"
    assert _applied(text, "b = 2", "b = 4", False)[0] == "a = 1\nb = 4\n    c = 3\n"
    assert _applied(text, "= ", "=", False)[0] == "refused"  # several places
    assert _applied(text.replace("\n", "\r\n"), "b = 2", "b = 4", False)[0] == \
        "a = 1\r\nb = 4\r\n    c = 3\r\n"
    assert _applied(text, "c = 3", "c = 3\n    d = 4", False)[0] == \
        "a = 1\nb = 2\n    c = 3\n    d = 4\n"  # oldText inside newText
    assert taken == [True, False, False, False]


def _spacing_key_by_the_rule(line: str) -> str:
    """The whitespace rung's key written the plain way: runs of blanks as one
    space, then each bracket or separator with an optional space either side
    as the mark alone, left to right."""
    collapsed = re.sub(r"\s+", " ", line.strip())
    return re.sub(r" ?([()\[\]{}<>,;:=]) ?", r"\1", collapsed)


@settings(max_examples=EXAMPLES * 4, deadline=None)
@given(st.text(alphabet=" \t()[]{}<>,;:=ab", max_size=30))
def test_the_spacing_key_is_the_rules(line):
    assert spacing_key(line) == _spacing_key_by_the_rule(line)
