"""list_directory behaviour: entries, kinds, sizes, caps, links, deny rules."""

from __future__ import annotations

import json
import os

from corral.tools import Limits, ListRequest, Toolbox


def listed(toolbox: Toolbox, path: str = ".") -> dict:
    result = toolbox.call("list_directory", {"path": path})
    assert result["ok"] is True, result
    return result


def test_entries_sorted_with_kinds_and_sizes(tmp_path, make_root):
    (tmp_path / "b.txt").write_bytes(b"12345")
    (tmp_path / "a_dir").mkdir()
    (tmp_path / "C.md").write_text("")
    os.symlink("b.txt", tmp_path / "link")
    os.mkfifo(tmp_path / "pipe")
    result = listed(Toolbox(make_root(tmp_path)))
    assert result == {"ok": True, "path": ".", "truncated": False, "total": 5, "entries": [
        {"name": "C.md", "kind": "file", "size": 0},
        {"name": "a_dir", "kind": "dir"},
        {"name": "b.txt", "kind": "file", "size": 5},
        {"name": "link", "kind": "symlink"},
        {"name": "pipe", "kind": "other"},
    ]}


def test_default_path_is_the_root(tmp_path, make_root):
    (tmp_path / "x").write_text("x")
    result = Toolbox(make_root(tmp_path)).call("list_directory", {})
    assert result["path"] == "." and [e["name"] for e in result["entries"]] == ["x"]


def test_links_leading_outside_are_shown_never_described(tmp_path, make_root):
    root = tmp_path / "root"
    root.mkdir()
    (tmp_path / "outside").mkdir()
    (tmp_path / "outside" / "secret.txt").write_text("outside secret\n")
    os.symlink("../outside/secret.txt", root / "relative")
    os.symlink(str(tmp_path / "outside"), root / "absolute")
    result = listed(Toolbox(make_root(root)))
    assert result["entries"] == [{"name": "absolute", "kind": "symlink"},
                                 {"name": "relative", "kind": "symlink"}]
    text = json.dumps(result)
    assert "outside" not in text and str(tmp_path) not in text


def test_truncation_is_honest(tmp_path, make_root):
    for name in "edcba":
        (tmp_path / name).write_text(name)
    result = listed(Toolbox(make_root(tmp_path), limits=Limits(list_entries=2)))
    assert [e["name"] for e in result["entries"]] == ["a", "b"]
    assert result["truncated"] is True and result["total"] == 5
    exact = listed(Toolbox(make_root(tmp_path), limits=Limits(list_entries=5)))
    assert exact["truncated"] is False and len(exact["entries"]) == 5  # count == limit is not cut


def test_denied_entries_are_hidden_and_counted(tmp_path, make_root):
    (tmp_path / ".env").write_text("KEY=1\n")
    (tmp_path / ".git").mkdir()
    (tmp_path / "main.py").write_text("")
    result = listed(Toolbox(make_root(tmp_path), deny=[".env", ".git/"]))
    assert [e["name"] for e in result["entries"]] == ["main.py"]
    assert result["denied"] == 2 and result["total"] == 1


def test_subdirectory_and_absolute_path_inside(tmp_path, make_root):
    (tmp_path / "src" / "pkg").mkdir(parents=True)
    (tmp_path / "src" / "pkg" / "m.py").write_text("m")
    asked = []
    toolbox = Toolbox(make_root(tmp_path), authorize=lambda r: asked.append(r) or True)
    result = listed(toolbox, str(tmp_path / "src" / "pkg") + "/")
    assert result["path"] == "src/pkg"
    assert result["entries"] == [{"name": "m.py", "kind": "file", "size": 1}]
    assert asked == [ListRequest("src/pkg")]


def test_symlinked_directory_inside_is_listed(tmp_path, make_root):
    (tmp_path / "real").mkdir()
    (tmp_path / "real" / "f").write_text("f")
    os.symlink("real", tmp_path / "alias")
    result = listed(Toolbox(make_root(tmp_path)), "alias")
    assert result["path"] == "alias" and [e["name"] for e in result["entries"]] == ["f"]


def test_swap_during_authorization_fails_closed(tmp_path, make_root):
    (tmp_path / "d").mkdir()
    (tmp_path / "d" / "authorized").write_text("")
    (tmp_path / "e").mkdir()
    (tmp_path / "e" / "unauthorized").write_text("")

    def authorize(request):
        os.rename(tmp_path / "d", tmp_path / "d.old")
        os.rename(tmp_path / "e", tmp_path / "d")
        return True

    result = Toolbox(make_root(tmp_path), authorize=authorize).call("list_directory",
                                                                     {"path": "d"})
    assert result["code"] == "STALE" and "unauthorized" not in json.dumps(result)
