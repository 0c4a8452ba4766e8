"""Several roots: every path a tool answers names its root, and each one,
given back as it is, reaches the same file.  Paths are typed where the
tool makes them (``AnswerPath``) and the Workspace renders them; the
envelope stays plain JSON.  On every backend config.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from corral.tools import Toolbox, Workspace


@pytest.fixture
def ws(tmp_path, make_root):
    web, api = tmp_path / "web", tmp_path / "api"
    (web / "src").mkdir(parents=True)
    (api / "pkg").mkdir(parents=True)
    (web / "src" / "app.js").write_text("console.log('web')\n")
    (web / "src" / "b.js").write_text("console.log('b')\n")
    (web / "link.js").symlink_to("src/app.js")
    (api / "pkg" / "main.py").write_text("print('api')\n")
    return Workspace({"web": Toolbox(make_root(str(web))), "api": Toolbox(make_root(str(api)))})


def _readable(ws: Workspace, path: str) -> None:
    assert path.startswith(("web/", "api/")), path
    answer = ws.call("read_file", {"path": path})
    assert answer["ok"] is True, (path, answer)


def test_grep_names_files_with_their_root_in_every_mode(ws):
    for mode, key in (("files", "files"), ("matches", "matches"), ("counts", "counts")):
        answer = ws.call("grep", {"pattern": "console", "path": "web", "outputMode": mode})
        assert answer["ok"] is True, answer
        paths = [item if isinstance(item, str) else item["path"] for item in answer[key]]
        assert sorted(paths) == ["web/src/app.js", "web/src/b.js"], answer
        for path in paths:
            _readable(ws, path)


def test_paths_in_successes_name_their_root(ws):
    globbed = ws.call("glob", {"pattern": "**/*.js", "path": "web"})
    assert "web/src/app.js" in globbed["paths"], globbed
    for path in globbed["paths"]:
        _readable(ws, path)
    info = ws.call("file_info", {"path": "web/link.js"})
    assert info["target"] == "web/src/app.js", info
    edited = ws.call("edit_file", {"path": "web/link.js", "oldText": "'web'", "newText": "'w'"})
    assert edited["ok"] is True and edited["resolvedPath"] == "web/src/app.js", edited
    wrote = ws.call("write_file", {"path": "api/new/deep/x.py", "content": "x\n"})
    assert wrote["path"] == "api/new/deep/x.py", wrote
    assert wrote["createdDirectories"] == ["api/new", "api/new/deep"], wrote
    moved = ws.call("move_file", {"source": "api/new/deep/x.py", "destination": "api/y.py"})
    assert (moved["source"], moved["destination"]) == ("api/new/deep/x.py", "api/y.py"), moved


def test_paths_in_refusals_name_their_root_and_lead_to_the_file(ws):
    other = ws.call("edit_file", {"path": "web/src/b.js", "oldText": "console.log('web')",
                                  "newText": "x"})
    assert other["ok"] is False and other["details"]["foundIn"] == "web/src/app.js", other
    assert other["suggestedArgs"] == {"path": "web/src/app.js"}, other
    _readable(ws, other["details"]["foundIn"])
    pattern = ws.call("read_file", {"path": "web/src/*.js"})
    assert pattern["ok"] is False, pattern
    assert sorted(pattern["details"]["matches"]) == ["web/src/app.js", "web/src/b.js"], pattern
    for path in pattern["details"]["matches"]:
        _readable(ws, path)
    missing = ws.call("read_file", {"path": "web/src/nope/x.js"})
    assert missing["details"]["missing"] == "web/src/nope", missing


def test_the_envelope_stays_plain_json(ws):
    answer = ws.call("grep", {"pattern": "console", "path": "web", "outputMode": "files"})
    assert json.loads(json.dumps(answer)) == answer
    assert all(type(json.loads(json.dumps(p))) is str for p in answer["files"])


def test_one_root_answers_exactly_as_its_toolbox(tmp_path, make_root):
    (tmp_path / "a.txt").write_text("hello\n")
    box = Toolbox(make_root(str(tmp_path)))
    ws = Workspace({"only": box})
    answer = ws.call("grep", {"pattern": "hello", "outputMode": "files"})
    assert answer == box.call("grep", {"pattern": "hello", "outputMode": "files"})
    assert answer["files"] == ["a.txt"], answer
    assert Path(tmp_path / answer["files"][0]).is_file()
