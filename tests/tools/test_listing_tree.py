"""list_directory depth: a nested, breadth-first, bounded, .gitignore-aware tree."""

from __future__ import annotations

import json
import os

import pytest

from corral.tools import Limits, Toolbox
from corral.tools import TreeRequest
from ..helpers import make_repository


def build(base, tree):
    for rel, text in tree.items():
        path = base / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        if text is None:
            path.mkdir(exist_ok=True)
        else:
            path.write_text(text)


def tree(toolbox: Toolbox, path: str = ".", **args) -> dict:
    result = toolbox.call("list_directory", {"path": path, **args})
    assert result["ok"] is True, result
    return result


REPO = {"README.md": "# r\n", "src/app.py": "x\n", "src/lib/util.py": "y\n",
        "src/lib/deep/z.py": "z\n", "docs/index.md": "# d\n", "empty": None}


def test_depth_one_is_list_directory_exactly(tmp_path, make_root):
    build(tmp_path, REPO)
    toolbox = Toolbox(make_root(tmp_path))
    assert tree(toolbox, depth=1) == toolbox.call("list_directory", {"path": "."})
    assert "depth" not in tree(toolbox)


def test_nested_levels_with_counts(tmp_path, make_root):
    build(tmp_path, REPO)
    result = tree(Toolbox(make_root(tmp_path)), depth=2)
    assert result == {
        "ok": True, "path": ".", "truncated": False, "total": 4, "depth": 2, "shown": 7,
        "entries": [
            {"name": "README.md", "kind": "file", "size": 4},
            {"name": "docs", "kind": "dir", "total": 1,
             "entries": [{"name": "index.md", "kind": "file", "size": 4}]},
            {"name": "empty", "kind": "dir", "total": 0, "entries": []},
            {"name": "src", "kind": "dir", "total": 2,
             "entries": [{"name": "app.py", "kind": "file", "size": 2},
                         {"name": "lib", "kind": "dir"}]},
        ]}


def test_the_first_level_is_the_same_list_at_any_depth(tmp_path, make_root):
    build(tmp_path, REPO)
    toolbox = Toolbox(make_root(tmp_path))
    flat = tree(toolbox)["entries"]
    for depth in (2, 3, 10):
        deep = tree(toolbox, depth=depth)["entries"]
        assert [{k: e[k] for k in ("name", "kind", "size") if k in e} for e in deep] == flat


def test_breadth_first_budget_keeps_upper_levels_whole(tmp_path, make_root):
    build(tmp_path, {f"d{i}/f{j}.txt": "x" for i in range(3) for j in range(3)})
    result = tree(Toolbox(make_root(tmp_path), limits=Limits(list_entries=7)), depth=2)
    assert result["truncated"] is True and result["shown"] == 7
    dirs = result["entries"]
    assert [d["name"] for d in dirs] == ["d0", "d1", "d2"]  # level one complete
    assert [len(d["entries"]) for d in dirs[:2]] == [3, 1]
    assert [d.get("truncated", False) for d in dirs] == [False, True, True]
    assert [d["total"] for d in dirs[:2]] == [3, 3]
    assert dirs[2] == {"name": "d2", "kind": "dir", "truncated": True}  # not reached
    assert result["unlisted"] == 1


def test_directories_the_budget_did_not_reach_are_counted(tmp_path, make_root):
    build(tmp_path, {"a/b/c.txt": "x", "a/d/e.txt": "x", "f/g/h.txt": "x"})
    result = tree(Toolbox(make_root(tmp_path), limits=Limits(list_entries=4)), depth=3)
    # level 1: a, f; level 2: b, d (in a), then the budget is spent: f, b, d not listed
    assert result["shown"] == 4 and result["truncated"] is True
    a, f = result["entries"]
    assert a["entries"] == [{"name": n, "kind": "dir", "truncated": True} for n in "bd"]
    assert f == {"name": "f", "kind": "dir", "truncated": True}
    assert result["unlisted"] == 3


def test_symlinks_are_never_followed(tmp_path, make_root):
    root = tmp_path / "root"
    build(root, {"real/inner.txt": "x"})
    (tmp_path / "outside").mkdir()
    (tmp_path / "outside" / "secret.txt").write_text("outside secret\n")
    (root / "inlink").symlink_to("real")
    (root / "outlink").symlink_to("../outside")
    (root / "loop").symlink_to("loop")
    result = tree(Toolbox(make_root(root)), depth=4)
    by_name = {e["name"]: e for e in result["entries"]}
    for name in ("inlink", "outlink", "loop"):
        assert by_name[name] == {"name": name, "kind": "symlink"}
    assert "outside" not in json.dumps(result) and str(tmp_path) not in json.dumps(result)


def test_a_base_given_through_an_inside_link_is_listed(tmp_path, make_root):
    build(tmp_path, {"real/sub/x.txt": "x"})
    (tmp_path / "alias").symlink_to("real")
    toolbox = Toolbox(make_root(tmp_path))
    assert tree(toolbox, "alias", depth=2)["entries"] == tree(toolbox, "real", depth=2)["entries"]


def test_gitignore_below_the_first_level(tmp_path, make_root):
    build(tmp_path, {".gitignore": "build/\n*.pyc\n", "src/a.py": "x", "src/a.pyc": "x",
                     "src/build/out.o": "x", "src/pkg/.gitignore": "gen.py\n",
                     "src/pkg/gen.py": "x", "src/pkg/keep.py": "x", "build/x.o": "x",
                     "top.pyc": "x", "src/.git/info/exclude": "build/\n*.pyc\n"})
    make_repository(tmp_path)
    make_repository(tmp_path / "src")  # nested: its own exclude file and .gitignore files
    toolbox = Toolbox(make_root(tmp_path))
    result = tree(toolbox, depth=3)
    by_name = {e["name"]: e for e in result["entries"]}
    # the first level is listed whole; ignored directories are marked and not entered
    assert set(by_name) == {".git", ".gitignore", "build", "src", "top.pyc"}
    assert by_name["build"] == {"name": "build", "kind": "dir", "ignored": True}
    assert by_name[".git"] == {"name": ".git", "kind": "dir", "ignored": True}
    assert by_name["top.pyc"] == {"name": "top.pyc", "kind": "file", "size": 1, "ignored": True}
    src = by_name["src"]
    assert [e["name"] for e in src["entries"]] == ["a.py", "pkg"]
    assert src["ignoredEntries"] == 3  # a.pyc, build/, .git
    pkg = src["entries"][1]
    assert [e["name"] for e in pkg["entries"]] == [".gitignore", "keep.py"]
    assert pkg["ignoredEntries"] == 1
    assert result["ignoredEntries"] == 4
    every = tree(toolbox, depth=3, includeIgnored=True)
    src_all = {e["name"]: e for e in every["entries"]}["src"]
    assert [e["name"] for e in src_all["entries"]] == [".git", "a.py", "a.pyc", "build", "pkg"]
    assert "ignoredEntries" not in every and "ignored" not in json.dumps(every["entries"][0])


def test_gitignore_of_ancestors_applies_to_a_subtree(tmp_path, make_root):
    build(tmp_path, {".gitignore": "*.log\n", "sub/a/x.log": "x", "sub/a/y.txt": "y"})
    make_repository(tmp_path)
    result = tree(Toolbox(make_root(tmp_path)), "sub", depth=2)
    assert result["entries"][0]["entries"] == [{"name": "y.txt", "kind": "file", "size": 1}]


def test_a_gitignore_outside_any_repository_is_not_applied(tmp_path, make_root):
    build(tmp_path, {".gitignore": "*.log\nbuild/\n", "a.log": "x", "build/b.txt": "y",
                     "sub/c.log": "z", "repo/.gitignore": "*.log\n", "repo/d.log": "w",
                     "repo/e.txt": "v"})
    make_repository(tmp_path / "repo")
    result = tree(Toolbox(make_root(tmp_path)), depth=3)
    by_name = {e["name"]: e for e in result["entries"]}
    assert "ignored" not in by_name["a.log"] and "ignored" not in by_name["build"]
    assert [e["name"] for e in by_name["build"]["entries"]] == ["b.txt"]
    assert [e["name"] for e in by_name["sub"]["entries"]] == ["c.log"]
    # inside the repository its own rules apply (and .git is left out)
    assert [e["name"] for e in by_name["repo"]["entries"]] == [".gitignore", "e.txt"]
    assert by_name["repo"]["ignoredEntries"] == 2


def test_denied_names_are_counted_never_named(tmp_path, make_root):
    build(tmp_path, {"src/secret/key.pem": "k", "src/app.py": "x", ".env": "T=1"})
    toolbox = Toolbox(make_root(tmp_path), deny=["secret/", ".env"])
    result = tree(toolbox, depth=3)
    text = json.dumps(result)
    assert "secret" not in text and ".env" not in text and "key.pem" not in text
    assert result["denied"] == 1
    src = {e["name"]: e for e in result["entries"]}["src"]
    assert src["denied"] == 1 and [e["name"] for e in src["entries"]] == ["app.py"]


def test_the_host_is_asked_once_with_the_depth(tmp_path, make_root):
    build(tmp_path, REPO)
    asked = []
    toolbox = Toolbox(make_root(tmp_path), authorize=lambda r: asked.append(r))
    tree(toolbox, "src", depth=3, includeIgnored=True)
    assert asked == [TreeRequest("src", depth=3, include_ignored=True)]
    assert asked[0].operation == "list" and asked[0].mutates is False
    ro = Toolbox(make_root(tmp_path), read_only=True)
    assert tree(ro, depth=2)["total"] == 4


def test_a_directory_replaced_during_the_listing_is_not_listed(tmp_path, make_root,
                                                              monkeypatch):
    build(tmp_path, {"a/x.txt": "x", "b/y.txt": "y"})
    from corral.tools._read import tree as _listing_tree

    original = _listing_tree._Walk._open

    def swap_then_open(self, node):
        if node.real == "b":
            os.rename(tmp_path / "b", tmp_path / "b-old")
            (tmp_path / "b").mkdir()
            (tmp_path / "b" / "planted.txt").write_text("p")
        return original(self, node)

    monkeypatch.setattr(_listing_tree._Walk, "_open", swap_then_open)
    result = tree(Toolbox(make_root(tmp_path)), depth=2)
    b = {e["name"]: e for e in result["entries"]}["b"]
    assert b == {"name": "b", "kind": "dir", "unreadable": True}
    assert "planted" not in json.dumps(result)


def test_a_directory_swapped_for_an_inside_link_is_not_followed(tmp_path, make_root,
                                                               monkeypatch):
    build(tmp_path, {"a/x.txt": "x", "other/secret-ish.txt": "s"})
    from corral.tools._read import tree as _listing_tree

    original = _listing_tree._Walk._open

    def swap_then_open(self, node):
        if node.real == "a":
            os.rename(tmp_path / "a", tmp_path / "a-old")
            (tmp_path / "a").symlink_to("other")
        return original(self, node)

    monkeypatch.setattr(_listing_tree._Walk, "_open", swap_then_open)
    result = tree(Toolbox(make_root(tmp_path)), depth=2)
    a = {e["name"]: e for e in result["entries"]}["a"]
    assert a == {"name": "a", "kind": "dir", "unreadable": True}
    assert "secret-ish" not in json.dumps(a)


@pytest.mark.parametrize("depth", [2, 5])
def test_a_wide_tree_is_bounded(tmp_path, make_root, depth):
    build(tmp_path, {f"d{i:03d}/f{j}.txt": "x" for i in range(60) for j in range(30)})
    result = tree(Toolbox(make_root(tmp_path)), depth=depth)
    assert result["shown"] == Limits().list_entries and result["truncated"] is True
    count = sum(1 + len(d.get("entries", [])) for d in result["entries"])
    assert count == Limits().list_entries
