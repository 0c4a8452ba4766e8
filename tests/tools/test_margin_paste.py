"""A read as a model is shown it, pasted back: the margin is caught.

A read's text shows the first and last line and every tenth after its
number and a tab (every hundredth in a long read), the other
lines as they are (:mod:`corral.hosts.render`).
A model that copies those lines into write_file's content or edit_file's
oldText or newText would write the numbers into the file; each is refused
with the text as it should be, as read_file's full ``N<TAB>`` numbering is.
Real files, real Toolbox calls.
"""

from __future__ import annotations

import os
import re
import tempfile
from pathlib import Path

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from corral.hosts import render
from corral.tools import Toolbox
from corral.tools._edit.content import Numbered, margin_numbers, strip_margin

SOURCE = "".join(f"def f{i}(x):\n    return x + {i}\n\n" for i in range(1, 9))


@pytest.fixture
def box(tmp_path):
    (tmp_path / "a.py").write_text(SOURCE)
    with Toolbox(tmp_path) as toolbox:
        yield toolbox


def _shown(box: Toolbox, **args: object) -> str:
    """The read's lines as a model is shown them (the footer left out)."""
    text = render("read_file", box.call("read_file", {"path": "a.py", **args}))
    return text.rsplit("\n", 1)[0] + "\n"


def test_a_pasted_read_is_refused_as_content_with_the_text_suggested(box, tmp_path):
    shown = _shown(box)
    assert shown.startswith("1\tdef f1(x):\n    return x + 1\n\ndef f2(x):\n    return")
    assert "\n10\tdef f4(x):\n" in shown and "\n20\t    return x + 7\n" in shown
    out = box.call("write_file", {"path": "b.py", "content": shown})
    assert out["ok"] is False and out["code"] == "INVALID_ARGUMENT", out
    assert out["details"]["kind"] == "line_number_prefix"
    assert out["details"]["firstNumber"] == 1
    assert out["message"].startswith("lines of content start with a read's margin (the line's "
                                      "number and a tab, on the first, last and every tenth "
                                      "line) (1 to 24)")
    assert out["suggestedArgs"]["content"] == SOURCE
    assert not (tmp_path / "b.py").exists()
    redo = box.call(out["suggestedTool"], out["suggestedArgs"])
    assert redo["ok"] is True and (tmp_path / "b.py").read_text() == SOURCE


def test_a_pasted_window_is_refused_from_its_own_first_number(box, tmp_path):
    shown = _shown(box, offset=4, limit=14)  # lines 4 to 17: numbered 4, 10, 17
    assert shown.startswith("4\t") and "\n10\t" in shown and "\n17\t" in shown
    out = box.call("write_file", {"path": "a.py", "content": shown, "overwrite": True})
    assert out["code"] == "INVALID_ARGUMENT" and out["details"]["firstNumber"] == 4, out
    assert (tmp_path / "a.py").read_text() == SOURCE  # nothing was written
    middle = "\n".join(shown.split("\n")[3:8]) + "\n"  # lines 7 to 11: numbered 10
    assert middle.startswith("def f3(x):\n") and "\n10\t" in middle
    out = box.call("write_file", {"path": "c.py", "content": middle})
    assert out["code"] == "INVALID_ARGUMENT" and out["details"]["firstNumber"] == 7, out


def test_a_pasted_margin_in_old_text_is_named_and_the_plain_text_works(box, tmp_path):
    shown = _shown(box, limit=10)
    plain = "".join(SOURCE.splitlines(keepends=True)[:10])
    assert shown == "1\t" + plain.replace("\ndef f4", "\n10\tdef f4")
    out = box.call("edit_file", {"path": "a.py", "oldText": shown, "newText": "def g(x):\n"})
    assert out["ok"] is False and out["code"] == "NOT_FOUND", out
    assert out["details"]["differences"][0]["kind"] == "line_number_prefix"
    done = box.call("edit_file", {"path": "a.py", "oldText": plain, "newText": "def g(x):\n"})
    assert done["ok"] is True
    assert (tmp_path / "a.py").read_text().startswith("def g(x):\n    return x + 4\n")


def test_a_pasted_margin_in_new_text_is_refused(box, tmp_path):
    new = "10\tdef f4(x):\n    return x * 4\n"
    out = box.call("edit_file", {"path": "a.py", "oldText": "def f4(x):\n    return x + 4\n",
                                 "newText": new})
    assert out["ok"] is False and out["code"] == "INVALID_ARGUMENT", out
    assert out["suggestedArgs"]["newText"] == "def f4(x):\n    return x * 4\n"
    assert out["message"].startswith("lines of newText start with a read's margin")
    assert (tmp_path / "a.py").read_text() == SOURCE


@pytest.mark.parametrize("content", [
    "\tall:\n\t\tmake build\n",  # every line led by a tab, no number: the file's own
    "\tx\n1\ty\n\tz\n",  # a number that would put its first line at 0
    "1\ta\n\tb\n5\tc\n",  # numbers that disagree (1 at line 1, 5 at line 3)
    "12\t345\n",  # one line
    "x\n2\ty\nz\n",  # one number, where a read would put none
    "1\ta\nb\n3\tc\nd\n",  # a number a read would not show (3, not an end)
    "id\tname\n\t\n",  # a table's header
])
def test_text_that_is_not_a_pasted_read_is_written(box, tmp_path, content):
    out = box.call("write_file", {"path": "d.txt", "content": content})
    assert out["ok"] is True, out
    assert (tmp_path / "d.txt").read_text() == content


def test_a_pasted_fragment_with_one_number_at_a_tenth_line_is_caught(box, tmp_path):
    shown = _shown(box)
    fragment = "\n".join(shown.split("\n")[7:12]) + "\n"  # lines 8 to 12: numbered 10 alone
    assert fragment.startswith("    return x + 3\n") and fragment.count("\t") == 1
    out = box.call("write_file", {"path": "c.py", "content": fragment})
    assert out["code"] == "INVALID_ARGUMENT" and out["details"]["firstNumber"] == 8, out
    assert "\t" not in out["suggestedArgs"]["content"]


EXAMPLES = int(os.environ.get("CORRAL_SOAK_EXAMPLES", "120"))
_LINE = st.text(alphabet="ab #\t09", max_size=6)


@settings(max_examples=EXAMPLES, deadline=None)
@given(lines=st.lists(_LINE, min_size=1, max_size=30), offset=st.integers(1, 30),
       limit=st.integers(1, 30))
def test_every_read_as_shown_is_told_from_text_and_stripped_back(lines, offset, limit):
    """Any file and window: the read as a model is shown it carries its
    numbers where the rendering puts them (none in fewer than ten lines),
    and a paste of it is recognised (the numbering from its own first line)
    and stripped back to the file's exact text, whenever it shows two
    numbers or one on a tenth line and no line of the file itself starts
    with digits and a tab."""
    assume(offset <= len(lines))
    with tempfile.TemporaryDirectory() as where:
        Path(where, "f.txt").write_text("".join(line + "\n" for line in lines))
        with Toolbox(Path(where)) as toolbox:
            envelope = toolbox.call("read_file", {"path": "f.txt", "offset": offset,
                                                  "limit": limit})
    assert envelope["ok"] is True, envelope
    window = lines[offset - 1:offset - 1 + limit]
    text = render("read_file", envelope)
    shown = text.rsplit("\n", 1)[0] + "\n"
    assert text.endswith(f"{envelope['sha256'][:16]}]")
    rows = shown.removesuffix("\n").split("\n")
    assert len(rows) == len(window)
    kept = [k for k, line in enumerate(window) if line]
    numbers = [offset + k for k, line in enumerate(window)
               if line and len(window) >= 10 and (k in (kept[0], kept[-1])
                                                  or (offset + k) % 10 == 0)]
    for k, (row, line) in enumerate(zip(rows, window)):
        number = offset + k
        assert row == (f"{number}\t{line}" if number in numbers else line), (row, number)
    if (not numbers or any(re.match(r"\d+\t", line) for line in window)
            or (len(numbers) < 2 and numbers[0] % 10)):
        return
    assert margin_numbers(shown) == Numbered(offset, len(window)), shown
    assert strip_margin(shown) == "".join(line + "\n" for line in window)


@pytest.mark.parametrize(("limit", "every"), [(250, 10), (1100, 100)])
def test_a_pasted_long_read_is_told_by_its_sparser_numbers(tmp_path, limit, every):
    """A read of 250 lines numbers every tenth, of over 1,000 every
    hundredth: a paste of it, or of a piece with two of its numbers, is
    told and stripped back all the same."""
    lines = [f"    row = {i}" for i in range(1, 1301)]
    (tmp_path / "long.py").write_text("".join(line + "\n" for line in lines))
    with Toolbox(tmp_path) as toolbox:
        envelope = toolbox.call("read_file", {"path": "long.py", "offset": 3, "limit": limit})
    shown = render("read_file", envelope).rsplit("\n", 1)[0] + "\n"
    assert f"\n{every}\t    row = {every}\n" in shown and f"\n{every + every // 2}\t" not in shown
    window = "".join(line + "\n" for line in lines[2:2 + limit])
    assert margin_numbers(shown) == Numbered(3, limit)
    assert strip_margin(shown) == window
    rows = shown.split("\n")
    piece = "\n".join(rows[every - 5:3 * every - 5]) + "\n"  # two of its numbers
    assert piece.count("\t") == 2 and margin_numbers(piece) == Numbered(every - 2, 2 * every)
    assert strip_margin(piece) == "".join(line + "\n" for line in
                                          lines[every - 3:3 * every - 3])
