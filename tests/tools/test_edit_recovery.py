"""Recoverability (the model can always tell what to do next) of edit_file
and of write_file's content checks: the answers that take more than one
call to show, each asserted as the exact serialized envelope, and the cases
that must *not* be refused."""

from __future__ import annotations

import hashlib
import json

import pytest

from corral.tools import Toolbox


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _wire(out: dict) -> dict:
    return json.loads(json.dumps(out))


def test_the_same_edit_repeated_is_already_applied(tmp_path):
    path = tmp_path / "f.py"
    path.write_text("x = 1\ny = 2\n")
    args = {"path": "f.py", "oldText": "x = 1", "newText": "x = 5"}
    with Toolbox(tmp_path) as box:
        assert box.call("edit_file", args)["ok"] is True
        again = _wire(box.call("edit_file", args))
        follow = box.call(again["suggestedTool"], again["suggestedArgs"])
    current = _sha(b"x = 5\ny = 2\n")
    message = ("oldText does not occur in f.py: an earlier call made this same edit (at line 1), "
               "and f.py is as it left it")
    assert again == {
        "ok": False, "code": "NOT_FOUND", "message": message,
        "details": {"path": "f.py", "field": "oldText", "kind": "already_applied",
                    "lines": [1, 1], "currentSha256": current, "message": message},
        "hint": "Do not repeat this edit: it is made; go on with the next change.",
        "suggestedTool": "read_file", "suggestedArgs": {"path": "f.py", "offset": 1, "limit": 1}}
    assert follow["ok"] is True and follow["content"] == "1\tx = 5"
    assert path.read_text() == "x = 5\ny = 2\n"


def test_the_same_edits_repeated_name_the_first_that_fails(tmp_path):
    (tmp_path / "f.py").write_text("a = 1\nb = 2\nc = 3\n")
    args = {"path": "f.py", "edits": [{"oldText": "a = 1", "newText": "a = 2"},
                                       {"oldText": "c = 3", "newText": "c = 4"}]}
    with Toolbox(tmp_path) as box:
        assert box.call("edit_file", args)["ok"] is True
        again = _wire(box.call("edit_file", args))
    assert again["message"] == ("edits[0]: oldText does not occur in f.py: an earlier call made "
                                "this same edit (at line 1), and f.py is as it left it")
    assert again["details"]["kind"] == "already_applied" and again["details"]["edit"] == 0


def test_a_dry_run_is_not_an_edit_made(tmp_path):
    (tmp_path / "f.py").write_text("x = 1\n")
    args = {"path": "f.py", "oldText": "x = 1", "newText": "x = 5"}
    with Toolbox(tmp_path) as box:
        assert box.call("edit_file", {**args, "dryRun": True})["ok"] is True
        assert box.call("edit_file", args)["ok"] is True


def test_repeated_after_another_change_still_finds_its_new_text(tmp_path):
    path = tmp_path / "f.py"
    path.write_text("x = 1\ny = 2\n")
    args = {"path": "f.py", "oldText": "x = 1", "newText": "x = 5"}
    with Toolbox(tmp_path) as box:
        assert box.call("edit_file", args)["ok"] is True
        path.write_text("x = 5\ny = 3\n")  # someone else changed another line since
        again = _wire(box.call("edit_file", args))
    assert again["message"] == ("oldText does not occur in f.py, but newText is already there "
                                "(line 1): this edit looks already made")
    assert again["details"]["kind"] == "already_applied"
    assert again["hint"] == "Do not repeat this edit; read lines 1-1 to check it if unsure."


def test_following_the_final_newline_hint_works(tmp_path):
    path = tmp_path / "f.py"
    path.write_text("x = 1\ny = 2")
    with Toolbox(tmp_path) as box:
        refused = box.call("edit_file", {"path": "f.py", "oldText": "y = 2\n",
                                         "newText": "y = 3\n"})
        assert refused["details"]["differences"][0]["kind"] == "final_newline"
        done = box.call("edit_file", {"path": "f.py", "oldText": "y = 2", "newText": "y = 3"})
    assert done["ok"] is True
    assert path.read_text() == "x = 1\ny = 3"


# -- write_file ----------------------------------------------------------------------


FILE = "".join(f"line_{i} = {i}\n" for i in range(30))


def test_placeholder_elision_refused_before_writing(tmp_path):
    path = tmp_path / "big.py"
    path.write_text(FILE)
    with Toolbox(tmp_path) as box:
        out = box.call("write_file", {"path": "big.py", "overwrite": True,
                                      "content": "line_0 = 0\n// ... existing code ...\n"})
    assert out["code"] == "INVALID_ARGUMENT" and out["details"]["kind"] == "placeholder"
    assert path.read_text() == FILE


def test_placeholder_the_file_already_has_is_written(tmp_path):
    text = FILE + "# ... rest of the code unchanged ...\n"
    (tmp_path / "big.py").write_text(text)
    with Toolbox(tmp_path) as box:
        out = box.call("write_file", {"path": "big.py", "overwrite": True,
                                      "content": "x = 1\n# ... rest of the code unchanged ...\n"})
    assert out["ok"] is True


def test_placeholder_that_loses_few_lines_is_written_with_a_warning(tmp_path):
    path = tmp_path / "big.py"
    path.write_text(FILE)
    content = FILE.replace("line_29 = 29\n", "# ... rest of the code ...\n")
    with Toolbox(tmp_path) as box:
        out = box.call("write_file", {"path": "big.py", "overwrite": True, "content": content})
    assert out["ok"] is True
    assert out["warnings"] == ["the content contains the placeholder line '# ... rest of the "
                               "code ...'; if code was left out, write the whole file"]
    assert path.read_text() == content


def test_placeholder_in_a_new_file_is_a_warning(tmp_path):
    with Toolbox(tmp_path) as box:
        out = box.call("write_file", {"path": "new.py",
                                      "content": "def f():\n    # ... rest of the code ...\n"})
    assert out["ok"] is True and out["warnings"][0].startswith("the content contains the "
                                                               "placeholder line")


def test_numbered_tab_separated_data_is_written(tmp_path):
    content = "1\talice\t30\n2\tbob\t25\n"
    with Toolbox(tmp_path) as box:
        out = box.call("write_file", {"path": "people.tsv", "content": content})
    assert out["ok"] is True
    assert (tmp_path / "people.tsv").read_text() == content


def test_numbered_content_replacing_a_numbered_file_is_written(tmp_path):
    (tmp_path / "rows.txt").write_text("1\ta\n2\tb\n")
    with Toolbox(tmp_path) as box:
        out = box.call("write_file", {"path": "rows.txt", "content": "1\ta\n2\tb\n3\tc\n",
                                      "overwrite": True})
    assert out["ok"] is True


def test_numbered_content_refused_leaves_nothing(tmp_path):
    with Toolbox(tmp_path) as box:
        out = box.call("write_file", {"path": "a.py", "content": "1\tx = 1\n2\ty = 2\n"})
        assert out["details"]["kind"] == "line_number_prefix"
        fixed = box.call("write_file", {"path": "a.py", "content": "x = 1\ny = 2\n"})
    assert fixed["ok"] is True
    assert (tmp_path / "a.py").read_text() == "x = 1\ny = 2\n"


def test_lines_that_only_start_with_a_number_are_written(tmp_path):
    content = "1\tx\n3\ty\n"  # not counting up by one: not read_file's numbering
    with Toolbox(tmp_path) as box:
        assert box.call("write_file", {"path": "a.txt", "content": content})["ok"] is True


# -- write_file: an elision in words (no ellipsis, or a phrase the list lacks) ---------


FUNCTIONS = "".join(f"def f{i}(x):\n    return x + {i}\n\n" for i in range(40))


@pytest.mark.parametrize(("name", "elision"), [
    ("m.py", "# rest of the file is unchanged"),
    ("m.py", "    # Rest Of The Code Remains The Same"),
    ("m.js", "// (other functions omitted for brevity)"),
    ("m.c", "/* [remaining functions unchanged] */"),
    ("m.html", "<!-- existing sections unchanged -->"),
    ("m.sql", "-- previous definitions stay the same"),
    ("m.el", ";; rest of the code unchanged"),
    ("m.tex", "% ... 37 more functions ..."),
    ("m.ml", "(* other functions as before *)"),
])
def test_elision_in_words_losing_most_of_the_file_is_refused(tmp_path, make_root, name, elision):
    path = tmp_path / name
    path.write_text(FUNCTIONS)
    content = f"def f0(x):\n    return x + 100\n\n{elision}\n"
    with Toolbox(make_root(tmp_path)) as box:
        out = _wire(box.call("write_file", {"path": name, "content": content,
                                            "overwrite": True}))
    message = (f"content line 4 ({elision.strip()!r}) stands for code it leaves out: 79 of the "
               f"80 non-blank lines of {name} would be lost; nothing was written")
    assert out == {
        "ok": False, "code": "INVALID_ARGUMENT", "message": message,
        "hint": f"Use edit_file to change only part of {name}, or write the whole file without "
                "placeholders.",
        "details": {"path": name, "field": "content", "contentLine": 4,
                    "placeholder": elision.strip(), "lostLines": 79, "fileLines": 80,
                    "kind": "placeholder", "message": message}}
    assert path.read_text() == FUNCTIONS


@pytest.mark.parametrize("comment", [
    "# the rest of the args are passed through",
    "# other functions were moved to helpers.py",
    "# same as the previous loop, but for the remaining keys",
    "# keep the existing config when the user gave none",
    "# Other methods",
    "# handle the other cases",
    "# remaining tests",
    "// existing helpers",
])
def test_ordinary_comments_in_a_shorter_rewrite_are_written(tmp_path, make_root, comment):
    """Written without a warning: these are not elisions."""
    path = tmp_path / "m.py"
    path.write_text(FUNCTIONS)
    content = f"def f0(x):\n    {comment}\n    return x + 100\n"
    with Toolbox(make_root(tmp_path)) as box:
        out = box.call("write_file", {"path": "m.py", "content": content, "overwrite": True})
    assert out["ok"] is True and "warnings" not in out, out
    assert path.read_text() == content


def test_an_elision_in_words_in_a_full_length_rewrite_is_written(tmp_path, make_root):
    """The words alone are not a refusal, nor a warning: the content is not
    much shorter than the file (it keeps nearly all its lines)."""
    path = tmp_path / "m.py"
    path.write_text(FUNCTIONS)
    content = FUNCTIONS.replace("    return x + 39\n", "    # rest of the code unchanged\n")
    with Toolbox(make_root(tmp_path)) as box:
        out = box.call("write_file", {"path": "m.py", "content": content, "overwrite": True})
    assert out["ok"] is True and "warnings" not in out
    assert path.read_text() == content


def test_a_short_elision_in_words_losing_few_lines_is_a_warning(tmp_path, make_root):
    """Half the size (long lines gone) but few lines lost: written, with the
    placeholder warning."""
    path = tmp_path / "m.py"
    original = "".join(f"x{i} = {i}\n" for i in range(6)) + "# " + "long comment " * 400 + "\n"
    path.write_text(original)
    content = "".join(f"x{i} = {i}\n" for i in range(6)) + "# rest of the code unchanged\n"
    with Toolbox(make_root(tmp_path)) as box:
        out = box.call("write_file", {"path": "m.py", "content": content, "overwrite": True})
    assert out["ok"] is True
    assert out["warnings"] == ["the content contains the placeholder line '# rest of the code "
                               "unchanged'; if code was left out, write the whole file"]
    assert path.read_text() == content


def test_an_elision_in_words_losing_less_than_half_is_written(tmp_path, make_root):
    """An ellipsis placeholder is refused from a tenth lost; words alone only
    from half, in content at most half the file's size (a rewrite may say
    "other functions ..." and mean it)."""
    path = tmp_path / "m.py"
    path.write_text(FUNCTIONS)
    kept = FUNCTIONS.split("def f30(")[0]  # 60 of the 80 lines
    with Toolbox(make_root(tmp_path)) as box:
        worded = box.call("write_file", {"path": "m.py", "overwrite": True,
                                         "content": kept + "# remaining functions unchanged\n"})
        assert worded["ok"] is True and "warnings" not in worded
        path.write_text(FUNCTIONS)
        dotted = box.call("write_file", {"path": "m.py", "overwrite": True,
                                         "content": kept + "# ... remaining functions ...\n"})
    assert dotted["details"]["kind"] == "placeholder" and dotted["details"]["lostLines"] == 20
    assert path.read_text() == FUNCTIONS


def test_lost_lines_are_counted_with_their_repeats(tmp_path, make_root):
    path = tmp_path / "data.txt"
    original = "0000000000\n" * 5000
    path.write_text(original)
    content = "0000000000\n# ... rest of the file unchanged ...\n"
    with Toolbox(make_root(tmp_path)) as box:
        out = box.call("write_file", {"path": "data.txt", "overwrite": True, "content": content})
    assert out["details"]["lostLines"] == 4999 and out["details"]["fileLines"] == 5000, out
    assert path.read_text() == original


def test_an_elision_in_words_in_a_new_file_is_not_a_warning(tmp_path, make_root):
    """Words alone say nothing about a file that is not being replaced."""
    content = "def f0(x):\n    return x\n# other functions omitted\n"
    with Toolbox(make_root(tmp_path)) as box:
        out = box.call("write_file", {"path": "new.py", "content": content})
    assert out["ok"] is True and "warnings" not in out


# -- large calls: remembered by a digest of their texts ------------------------------

_LONG = 3000  # each text of these calls: together past the characters kept as they are


@pytest.mark.parametrize("form", ["one", "edits"])
def test_a_large_edit_repeated_is_already_applied(tmp_path, make_root, form):
    """A call whose texts are too long to keep as they are is remembered by
    their digest: repeated, it is told it was made."""
    path = tmp_path / "f.txt"
    path.write_text("head\n" + "a" * _LONG + "\ntail\n")
    edit = {"oldText": "a" * _LONG, "newText": "b" * _LONG}
    args = {"path": "f.txt", **edit} if form == "one" else {"path": "f.txt", "edits": [edit]}
    with Toolbox(make_root(str(tmp_path))) as box:
        assert box.call("edit_file", args)["ok"] is True
        again = box.call("edit_file", args)
    assert again["ok"] is False and again["details"]["kind"] == "already_applied", again
    assert "an earlier call made this same edit" in again["message"], again
    assert path.read_text() == "head\n" + "b" * _LONG + "\ntail\n"


@pytest.mark.parametrize("second", [
    # the same characters in all, split between oldText and newText elsewhere
    {"oldText": "a" * _LONG + "b", "newText": "b" * (_LONG - 1)},
    {"oldText": "a" * (_LONG - 1), "newText": "a" + "b" * _LONG},
    # one character other (a lone surrogate, as a JSON text may carry one)
    {"oldText": "a" * _LONG, "newText": "b" * (_LONG - 1) + "\ud800"},
    {"oldText": "a" * _LONG, "newText": "b" * _LONG, "replaceAll": True},
], ids=["moved-on", "moved-back", "surrogate", "replace-all"])
def test_another_large_edit_is_not_taken_for_one_made(tmp_path, make_root, second):
    """A digest for one call and another for any other: a call that is not
    the one made (the same characters split otherwise, one character other,
    another flag) is not told an earlier call made it (its newText may be
    found in the file: that is said otherwise)."""
    path = tmp_path / "f.txt"
    path.write_text("head\n" + "a" * _LONG + "\ntail\n")
    with Toolbox(make_root(str(tmp_path))) as box:
        made = box.call("edit_file", {"path": "f.txt", "oldText": "a" * _LONG,
                                      "newText": "b" * _LONG})
        assert made["ok"] is True, made
        other = box.call("edit_file", {"path": "f.txt", **second})
    assert other["ok"] is False and "earlier call" not in other["message"], other
    assert "currentSha256" not in other["details"], other
    assert path.read_text() == "head\n" + "b" * _LONG + "\ntail\n"


def test_a_large_failed_call_repeated_is_called_out(tmp_path, make_root):
    """A failure is remembered by the call's arguments and the file's digest,
    the texts of a large call by their digest: the same call again is told
    so, another (its texts split otherwise, a dry run, another expected
    digest) starts over."""
    (tmp_path / "f.txt").write_text("head\n" + "a" * _LONG + "\ntail\n")
    args = {"path": "f.txt", "oldText": "c" * _LONG, "newText": "d" * _LONG}
    with Toolbox(make_root(str(tmp_path))) as box:
        first = box.call("edit_file", args)
        again = box.call("edit_file", args)
        others = [box.call("edit_file", other) for other in (
            {**args, "oldText": "c" * (_LONG - 1), "newText": "c" + "d" * _LONG},
            {**args, "dryRun": True},
            {**args, "expectedSha256": hashlib.sha256(
                ("head\n" + "a" * _LONG + "\ntail\n").encode()).hexdigest()})]
    assert first["ok"] is False and "repeated" not in first["details"], first
    assert again["details"]["repeated"] == 2, again
    for other in others:
        assert other["ok"] is False and "repeated" not in other["details"], other
