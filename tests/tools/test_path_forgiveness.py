"""The path mistakes real models make, forgiven where unambiguous
(Windows separators, ``file://`` URIs of a path inside the root: answered
root-relative with a note, never outside), and did-you-mean suggestions
offered as a call only for a plausible typo."""

from __future__ import annotations

import json
import os

import pytest

from .helpers.envelope import assert_valid_envelope

from corral.tools import Toolbox
from corral.tools._refusals.classify import plausible_typo


@pytest.fixture
def tree(tmp_path):
    (tmp_path / "lib" / "core").mkdir(parents=True)
    (tmp_path / "lib" / "core" / "index.ts").write_text("export {}\n")
    return tmp_path


def test_backslash_separators_are_read_as_slashes(tree, make_root):
    toolbox = Toolbox(make_root(tree))
    result = toolbox.call("read_file", {"path": "lib\\core\\index.ts"})
    assert result["ok"] is True and result["path"] == "lib/core/index.ts"
    assert result["pathNotes"] == ["path was read as 'lib/core/index.ts' (paths use '/' between "
                                   "names, not '\\')"]
    listing = toolbox.call("list_directory", {"path": "lib\\core"})
    assert listing["ok"] is True and listing["path"] == "lib/core"
    written = toolbox.call("write_file", {"path": "lib\\core\\new.ts", "content": "x\n"})
    assert written["ok"] is True and (tree / "lib" / "core" / "new.ts").read_text() == "x\n"


def test_a_name_with_backslashes_that_exists_is_taken_as_it_is(tree, make_root):
    (tree / "odd\\name.txt").write_text("literal\n")
    result = Toolbox(make_root(tree)).call("read_file", {"path": "odd\\name.txt"})
    assert result["ok"] is True and "pathNotes" not in result
    assert result["content"] == "1\tliteral"


def test_file_uri_inside_the_root_is_answered_root_relative(tree, make_root):
    uri = "file://" + str(tree / "lib" / "core" / "index.ts").replace(" ", "%20")
    toolbox = Toolbox(make_root(tree))
    result = toolbox.call("read_file", {"path": uri})
    assert result["ok"] is True and result["path"] == "lib/core/index.ts"
    assert result["pathNotes"] == ["path was read as 'lib/core/index.ts' (a file:// URI is read "
                                   "as its path)"]
    assert str(tree) not in json.dumps(result)
    local = toolbox.call("read_file",
                         {"path": "file://localhost" + str(tree) + "/lib/core/index.ts"})
    assert local["ok"] is True


@pytest.mark.parametrize("uri", ["file:///etc/passwd", "file://otherhost/etc/passwd",
                                 "file://C:/Windows/win.ini", "file:///../../etc/passwd",
                                 "FILE:///etc/hostname"])
def test_file_uri_outside_the_root_is_outside(tree, make_root, uri):
    result = Toolbox(make_root(tree)).call("read_file", {"path": uri})
    assert_valid_envelope(result)
    assert result["code"] == "OUTSIDE_ROOT"
    assert result["message"] == "argument 'path' is an absolute path outside the root"
    assert "etc" not in json.dumps(result["details"])


def test_backslash_spelling_does_not_get_round_the_policy(tree, make_root):
    (tree / ".git" / "hooks").mkdir(parents=True)
    result = Toolbox(make_root(tree)).call("write_file", {"path": ".git\\hooks\\pre-commit",
                                                          "content": "#!/bin/sh\n"})
    assert (result["code"], result["details"]["kind"]) == ("DENIED", "protected")
    assert os.listdir(tree / ".git" / "hooks") == []


@pytest.mark.parametrize("asked, found, plausible", [
    ("utl.py", "util.py", True), ("util.ts", "util.js", True), ("README", "readme", True),
    ("confg.yaml", "config.yaml", True), ("settings.py", "setting.py", True),
    ("main.py", "test_helpers.py", False), ("cfg", "config", False),
    ("app.py", "big_unrelated_module.py", False), ("index.ts", "core", False),
])
def test_plausible_typo(asked, found, plausible):
    assert plausible_typo(asked, found) is plausible


def test_an_unrelated_close_name_is_not_offered_as_a_call(tmp_path, make_root):
    # difflib finds "settings_base.py" close enough to list; it is no typo of "sett.py"
    (tmp_path / "settings_base.py").write_text("x\n")
    (tmp_path / "sett_tests.py").write_text("x\n")
    result = Toolbox(make_root(tmp_path)).call("read_file", {"path": "setts.py"})
    assert result["code"] == "NOT_FOUND"
    assert result.get("suggestedTool") == "list_directory", result
    assert result["suggestedArgs"] == {"path": "."}
    typo = Toolbox(make_root(tmp_path)).call("read_file", {"path": "settings_bse.py"})
    assert typo["suggestedTool"] == "read_file"
    assert typo["suggestedArgs"] == {"path": "settings_base.py"}
