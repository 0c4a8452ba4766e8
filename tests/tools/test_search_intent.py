"""glob and grep where the model's words were not a pattern: route folders
named [id] or (group), a blank pattern, a name in another case, include as
a list, UTF-16 files, a variable-width lookbehind, doubled backslashes."""

from __future__ import annotations

import pytest
from .helpers.envelope import assert_valid_envelope

from corral.tools import Toolbox


@pytest.fixture
def app(tmp_path):
    for name, text in {"app/[id]/page.tsx": "export default 1\n",
                       "app/(group)/about/page.tsx": "about\n",
                       "app/[...slug]/page.tsx": "slug\n", "README.md": "# readme\n",
                       "src/a.ts": "const x = 1\n", "docs/b.md": "x marks\n"}.items():
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return tmp_path


@pytest.mark.parametrize("pattern", ["app/[id]/page.tsx", "app/[...slug]/page.tsx"])
def test_a_route_folder_read_literally_is_answered(app, pattern):
    with Toolbox(app) as box:
        result = assert_valid_envelope(box.call("glob", {"pattern": pattern}))
        assert result["paths"] == [pattern] and result["literal"] is True
        assert "exists" in result["note"]
        escaped = pattern.replace("[", "\\[").replace("]", "\\]")
        assert escaped in result["note"]
        again = box.call("glob", {"pattern": escaped})
    assert again["paths"] == [pattern] and "literal" not in again


def test_a_route_folder_read_literally_is_not_answered_where_denied(app):
    """The literal reading is decided on what it resolves to: a denied
    folder, or a link leading into one, answers as no match at all."""
    (app / "app" / "[ref]").symlink_to("[id]")
    with Toolbox(app, deny=["app/*id*/**"]) as box:
        assert box.call("read_file", {"path": "app/[id]/page.tsx"})["code"] == "DENIED"
        for pattern in ("app/[id]/page.tsx", "app/[ref]/page.tsx"):
            result = assert_valid_envelope(box.call("glob", {"pattern": pattern}))
            assert result["paths"] == [] and "literal" not in result, (pattern, result)
            assert "page.tsx exists" not in result.get("note", ""), (pattern, result)
        # the other route folder is still answered literally
        assert box.call("glob", {"pattern": "app/[...slug]/page.tsx"})["literal"] is True


def test_a_group_folder_matches_as_it_is(app):
    with Toolbox(app) as box:
        assert box.call("glob", {"pattern": "app/(group)/**/page.tsx"})["paths"] == \
            ["app/(group)/about/page.tsx"]


def test_a_blank_pattern_is_refused(app):
    with Toolbox(app) as box:
        refusal = assert_valid_envelope(box.call("glob", {"pattern": "   "}))
        assert refusal["code"] == "INVALID_ARGUMENT" and refusal["details"]["field"] == "pattern"
        assert box.call(refusal["suggestedTool"], refusal["suggestedArgs"])["ok"] is True


def test_a_name_in_another_case_is_pointed_out(app):
    with Toolbox(app) as box:
        result = box.call("glob", {"pattern": "**/readme.md"})
        assert result["paths"] == [] and result["diagnosis"] == "case"
        assert result["suggestedArgs"] == {"pattern": "**/README.md"}
        assert box.call("glob", result["suggestedArgs"])["paths"] == ["README.md"]


@pytest.mark.parametrize(("files", "pattern", "suggested"), [
    # the name in another case lies below directories whose names hold no other case
    (["a/b/c/x.txt", "a/b/c/d/e/Notes.TXT"], "**/notes.txt", "**/[nN][oO][tT][eE][sS].[tT][xX][tT]"),
    (["lib/one.py", "lib/deep/er/Setup.py"], "lib/**/setup.py", "lib/**/[sS][eE][tT][uU][pP].py"),
    # one letter of the pattern in each case: a name needs only the other case of one
    (["x/ab.md", "x/y/AA.md"], "**/aA.md", "**/[aA][aA].[mM][dD]"),
    (["docs/other.md", "docs/in/CAFÉ.md"], "**/café.md", "**/[cC][aA][fF][éÉ].[mM][dD]"),
    # capitals where the star stands, the other case in the literal part
    (["q/xYz-report.log"], "**/*-REPORT.log", "**/*-[rR][eE][pP][oO][rR][tT].[lL][oO][gG]"),
])
def test_a_name_in_another_case_is_found_wherever_it_lies(tmp_path, files, pattern, suggested):
    for name in files:
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text("x\n")
    target = files[-1]
    with Toolbox(tmp_path) as box:
        result = assert_valid_envelope(box.call("glob", {"pattern": pattern}))
        assert result["paths"] == [] and result["diagnosis"] == "case", result
        head = suggested.rpartition("/")[0]
        assert result["suggestedArgs"] == {"pattern": f"{head}/{target.rpartition('/')[2]}"}
        assert box.call("glob", {"pattern": suggested})["paths"] == [target]
        assert box.call("glob", result["suggestedArgs"])["paths"] == [target]


def test_no_case_retry_where_no_name_differs_in_case(tmp_path):
    (tmp_path / "d").mkdir()
    (tmp_path / "d" / "notes.md").write_text("x\n")
    with Toolbox(tmp_path) as box:
        result = assert_valid_envelope(box.call("glob", {"pattern": "**/notes.txt"}))
    assert result["paths"] == [] and "diagnosis" not in result


def test_a_denied_name_in_another_case_is_not_pointed_out(tmp_path):
    (tmp_path / "keys").mkdir()
    (tmp_path / "keys" / "Prod.PEM").write_text("secret\n")
    (tmp_path / "keys" / "Prod.txt").write_text("x\n")
    with Toolbox(tmp_path, deny=["**/*.pem"]) as box:
        result = assert_valid_envelope(box.call("glob", {"pattern": "**/prod.pem"}))
    assert result["paths"] == [] and "diagnosis" not in result, result
    assert "PEM" not in str(result)


def test_include_as_a_list_is_read_as_one_brace_glob(app):
    with Toolbox(app) as box:
        result = box.call("grep", {"pattern": "x", "include": ["*.ts", "*.md"]})
    assert result["ok"] is True and result["include"] == "{*.ts,*.md}"
    assert sorted(m["path"] for m in result["matches"]) == ["docs/b.md", "src/a.ts"]
    assert "one glob" in result["argumentNotes"][0]


def test_grep_names_utf16_files_and_their_encoding(tmp_path):
    (tmp_path / "win.txt").write_bytes("hello world\r\n".encode("utf-16"))
    (tmp_path / "big.txt").write_bytes(b"\xfe\xff" + "world\n".encode("utf-16-be"))
    with Toolbox(tmp_path) as box:
        result = box.call("grep", {"pattern": "world"})
    assert result["encodings"] == {"big.txt": "utf-16-be", "win.txt": "utf-16-le"}
    assert "win.txt (UTF-16-LE)" in result["note"] and "read_file" in result["note"]


def test_a_variable_width_lookbehind_is_named_for_its_width(app):
    with Toolbox(app) as box:
        refusal = box.call("grep", {"pattern": r"(?<=const\s+)x"})
    assert refusal["code"] == "INVALID_ARGUMENT"
    assert "variable-width lookbehind" in refusal["message"]


def test_doubled_backslashes_are_pointed_out(app, tmp_path):
    with Toolbox(app) as box:  # one backslash would find the digit: that call is offered
        found = box.call("grep", {"pattern": "\\\\d+"})
    assert found["diagnosis"] == "double_escaped" and found["suggestedArgs"]["pattern"] == "\\d+"
    (tmp_path / "words.txt").write_text("no digits here\n")
    with Toolbox(tmp_path) as box:  # neither finds anything: still said
        result = box.call("grep", {"pattern": "\\\\d+", "path": "words.txt"})
    assert result["matches"] == [] and "doubled backslashes" in result["note"]


def test_a_link_to_a_denied_file_is_not_listed_by_glob(tmp_path):
    import os
    (tmp_path / ".env").write_text("SECRET=1\n")
    os.symlink(".env", tmp_path / "settings.txt")
    (tmp_path / "plain.txt").write_text("x\n")
    with Toolbox(tmp_path) as box:
        listed = box.call("glob", {"pattern": "*.txt"})
        read = box.call("read_file", {"path": "settings.txt"})
    assert read["code"] == "DENIED"  # reading it is refused, so it is not offered either
    # the link and .env itself: every hidden file of a walked directory is
    # counted, whatever the pattern names
    assert listed["paths"] == ["plain.txt"] and listed["denied"] == 2


def test_list_directory_marks_ignored_entries_at_depth_one_as_deeper(tmp_path):
    (tmp_path / ".git").mkdir()
    (tmp_path / ".gitignore").write_text("build/\n*.log\n")
    (tmp_path / "build").mkdir()
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "app.log").write_text("x\n")
    (tmp_path / "src" / "a.py").write_text("x\n")
    (tmp_path / "run.log").write_text("x\n")
    with Toolbox(tmp_path) as box:
        flat = box.call("list_directory", {"path": "."})
        tree = box.call("list_directory", {"path": ".", "depth": 2})
        below = box.call("list_directory", {"path": "src"})
    marks = {e["name"]: e.get("ignored", False) for e in flat["entries"]}
    assert marks == {".git": True, ".gitignore": False, "build": True, "run.log": True,
                     "src": False}
    assert marks == {e["name"]: e.get("ignored", False) for e in tree["entries"]}
    assert {e["name"]: e.get("ignored", False) for e in below["entries"]} == \
        {"a.py": False, "app.log": True}
