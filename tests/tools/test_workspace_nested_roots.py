"""Roots that lie inside one another in one Workspace hold each other's rules.

With roots ``proj`` and ``proj/inner``, ``proj/inner/secrets/x`` is reachable
through both.  Every root's deny, protected and secret rules hold for it
whichever root a call goes through: the place is found on the directories
themselves (links resolved), and neither the inner root's directory nor one
above it can be moved or deleted through the outer root (the rules would
lose their place).  Every case runs on every backend config.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from corral.tools import Policy, Toolbox, Workspace


def _tree(base: Path) -> Path:
    proj = base / "proj"
    inner = proj / "inner"
    (inner / "secrets").mkdir(parents=True)
    (inner / "secrets" / "prod.txt").write_text("INNER-SECRET\n")
    (inner / "config.toml").write_text("run = 'x'\n")
    (inner / "ok.txt").write_text("fine\n")
    (inner / "private").mkdir()
    (inner / "private" / "p.txt").write_text("OUTER-PRIVATE\n")
    (proj / "top.txt").write_text("top\n")
    return proj


def _workspace(make_root, outer_path: str, inner_path: str) -> Workspace:
    outer = Toolbox(make_root(outer_path), deny=["inner/private/**"])
    inner = Toolbox(make_root(inner_path), deny=["secrets/**"],
                    policy=Policy.build(protect=["config.toml"]))
    return Workspace({"proj": outer, "inner": inner})


def _state(base: Path) -> dict[str, bytes]:
    out = {}
    for dirpath, _, files in os.walk(base):
        for name in files:
            path = os.path.join(dirpath, name)
            out[os.path.relpath(path, base)] = Path(path).read_bytes()
    return out


@pytest.fixture
def ws(tmp_path, make_root):
    proj = _tree(tmp_path)
    return _workspace(make_root, str(proj), str(proj / "inner"))


def _refused(answer, code="DENIED"):
    assert answer["ok"] is False, answer
    assert answer["code"] == code, answer
    return answer


def test_the_inner_roots_deny_rule_holds_through_the_outer_root(tmp_path, ws):
    before = _state(tmp_path)
    _refused(ws.call("read_file", {"path": "proj/inner/secrets/prod.txt"}))
    _refused(ws.call("write_file", {"path": "proj/inner/secrets/new.txt", "content": "x"}))
    _refused(ws.call("write_file", {"path": "proj/inner/secrets/prod.txt", "content": "x"}))
    _refused(ws.call("edit_file", {"path": "proj/inner/secrets/prod.txt",
                                   "oldText": "INNER", "newText": "OUTER"}))
    _refused(ws.call("delete_file", {"path": "proj/inner/secrets/prod.txt"}))
    _refused(ws.call("move_file", {"source": "proj/inner/secrets/prod.txt",
                                   "destination": "proj/stolen.txt"}))
    _refused(ws.call("list_directory", {"path": "proj/inner/secrets"}))
    assert _state(tmp_path) == before
    # and the same through the inner root, as before
    _refused(ws.call("read_file", {"path": "inner/secrets/prod.txt"}))


def test_searches_through_the_outer_root_leave_the_inner_roots_denied_names_out(ws):
    found = ws.call("grep", {"pattern": "INNER-SECRET", "path": "proj"})
    assert found["ok"] is True and found["matches"] == [] and found["denied"] >= 1, found
    globbed = ws.call("glob", {"pattern": "**/*.txt", "path": "proj"})
    assert globbed["ok"] is True, globbed
    assert not any("secrets" in p for p in globbed["paths"]), globbed
    assert "proj/inner/ok.txt" in globbed["paths"], globbed
    listed = ws.call("list_directory", {"path": "proj/inner"})
    assert listed["ok"] is True and "secrets" not in repr(listed["entries"]), listed
    deep = ws.call("list_directory", {"path": "proj", "depth": 3})
    assert deep["ok"] is True and "prod.txt" not in repr(deep), deep


def test_the_inner_roots_protected_name_holds_through_the_outer_root(tmp_path, ws):
    before = _state(tmp_path)
    _refused(ws.call("write_file", {"path": "proj/inner/config.toml", "content": "run = 'evil'\n"}))
    _refused(ws.call("edit_file", {"path": "proj/inner/config.toml",
                                   "oldText": "'x'", "newText": "'evil'"}))
    _refused(ws.call("move_file", {"source": "proj/top.txt",
                                   "destination": "proj/inner/config.toml", "overwrite": True}))
    assert _state(tmp_path) == before
    # readable: protected is not secret
    assert ws.call("read_file", {"path": "proj/inner/config.toml"})["ok"] is True


def test_the_outer_roots_deny_rule_holds_through_the_inner_root(tmp_path, ws):
    before = _state(tmp_path)
    _refused(ws.call("read_file", {"path": "inner/private/p.txt"}))
    _refused(ws.call("write_file", {"path": "inner/private/q.txt", "content": "x"}))
    found = ws.call("grep", {"pattern": "OUTER-PRIVATE", "path": "inner"})
    assert found["ok"] is True and found["matches"] == [] and found["denied"] >= 1, found
    assert _state(tmp_path) == before


def test_a_link_in_the_outer_root_into_the_inner_roots_denied_folder(tmp_path, make_root):
    proj = _tree(tmp_path)
    (proj / "peek").symlink_to("inner/secrets")
    (proj / "peek-file.txt").symlink_to("inner/secrets/prod.txt")
    ws = _workspace(make_root, str(proj), str(proj / "inner"))
    before = _state(tmp_path)
    _refused(ws.call("read_file", {"path": "proj/peek/prod.txt"}))
    _refused(ws.call("read_file", {"path": "proj/peek-file.txt"}))
    _refused(ws.call("write_file", {"path": "proj/peek/planted.txt", "content": "x"}))
    found = ws.call("grep", {"pattern": "INNER-SECRET", "path": "proj"})
    assert found["ok"] is True and found["matches"] == [], found
    assert _state(tmp_path) == before


def test_roots_opened_through_links_on_the_host_are_placed_by_their_directories(
        tmp_path, make_root):
    _tree(tmp_path)
    (tmp_path / "via").symlink_to("proj")
    (tmp_path / "inner-link").symlink_to("proj/inner")
    ws = _workspace(make_root, str(tmp_path / "via"), str(tmp_path / "inner-link"))
    before = _state(tmp_path)
    _refused(ws.call("read_file", {"path": "proj/inner/secrets/prod.txt"}))
    _refused(ws.call("write_file", {"path": "proj/inner/secrets/n.txt", "content": "x"}))
    _refused(ws.call("read_file", {"path": "inner/private/p.txt"}))
    assert _state(tmp_path) == before


def test_the_inner_roots_directory_is_found_where_it_is_now(tmp_path, make_root):
    """Moved on the host after its Toolbox opened: the rules follow the
    directory, not the path it was opened by."""
    proj = _tree(tmp_path)
    inner = Toolbox(make_root(str(proj / "inner")), deny=["secrets/**"])
    os.rename(proj / "inner", proj / "moved")
    outer = Toolbox(make_root(str(proj)))
    ws = Workspace({"proj": outer, "inner": inner})
    _refused(ws.call("read_file", {"path": "proj/moved/secrets/prod.txt"}))
    assert ws.call("read_file", {"path": "proj/moved/ok.txt"})["ok"] is True


@pytest.mark.parametrize("moved", ["inner", "parent"])
def test_the_rules_follow_a_root_moved_on_the_host_after_the_workspace_opened(
        tmp_path, make_root, moved):
    """The host (or another process) moves the inner root's directory, or
    a directory above it, after the workspace placed it: the next call
    finds it where it is now, through every tool."""
    base = tmp_path / "outer"
    (base / "a" / "inner" / "secrets").mkdir(parents=True)
    (base / "a" / "inner" / "secrets" / "key.txt").write_text("INNER-SECRET\n")
    (base / "a" / "inner" / "ok.txt").write_text("fine\n")
    ws = Workspace({"outer": Toolbox(make_root(str(base))),
                    "inner": Toolbox(make_root(str(base / "a" / "inner")),
                                     deny=["secrets/**"])})
    _refused(ws.call("read_file", {"path": "outer/a/inner/secrets/key.txt"}))
    if moved == "inner":
        os.rename(base / "a" / "inner", base / "a" / "inner2")
        now = "outer/a/inner2"
    else:
        os.rename(base / "a", base / "b")
        now = "outer/b/inner"
    _refused(ws.call("read_file", {"path": f"{now}/secrets/key.txt"}))
    assert ws.call("read_file", {"path": f"{now}/ok.txt"})["ok"] is True
    found = ws.call("grep", {"pattern": "INNER-SECRET", "path": "outer"})
    assert found["ok"] is True and found["matches"] == [], found
    _refused(ws.call("list_directory", {"path": f"{now}/secrets"}))
    globbed = ws.call("glob", {"pattern": "**/key.txt", "path": "outer"})
    assert globbed["ok"] is True and globbed["paths"] == [], globbed
    # and it keeps its place there: not moved away through the outer root
    _refused(ws.call("move_file", {"source": now, "destination": "outer/elsewhere"}))


def test_the_inner_roots_directory_is_not_moved_or_deleted_through_the_outer_root(
        tmp_path, ws):
    before = _state(tmp_path)
    answer = _refused(ws.call("move_file", {"source": "proj/inner",
                                            "destination": "proj/elsewhere"}))
    assert answer["hint"], answer
    answer = _refused(ws.call("delete_file", {"path": "proj/inner"}))
    assert answer["hint"], answer
    assert _state(tmp_path) == before
    assert (tmp_path / "proj" / "inner").is_dir()
    # the rest of the outer root is as free as before
    assert ws.call("write_file", {"path": "proj/new.txt", "content": "x"})["ok"] is True
    assert ws.call("write_file", {"path": "proj/inner/new.txt", "content": "x"})["ok"] is True
    assert ws.call("move_file", {"source": "proj/new.txt",
                                 "destination": "proj/inner/moved.txt"})["ok"] is True


def test_an_inner_root_with_nothing_denied_yet_keeps_its_place(tmp_path, make_root):
    """The inner root is empty: the move or delete is refused only because
    it would carry the root away (its rules would then not hold there)."""
    proj = tmp_path / "proj"
    (proj / "inner").mkdir(parents=True)
    (proj / "empty").mkdir()
    outer = Toolbox(make_root(str(proj)))
    inner = Toolbox(make_root(str(proj / "inner")), deny=["secrets/**"])
    ws = Workspace({"proj": outer, "inner": inner})
    before = _state(tmp_path)
    for tool, args in (("move_file", {"source": "proj/inner", "destination": "proj/gone"}),
                       ("move_file", {"source": "proj/inner/", "destination": "proj/x/inner"}),
                       ("delete_file", {"path": "proj/inner"}),
                       ("move_file", {"source": "proj/empty", "destination": "proj/inner",
                                      "overwrite": True})):
        answer = _refused(ws.call(tool, args))
        assert answer["details"]["kind"] == "another_root", answer
        assert answer["message"] and answer["hint"], answer
    assert _state(tmp_path) == before
    _refused(ws.call("write_file", {"path": "proj/inner/secrets/k.txt", "content": "x"}))
    assert not (proj / "inner" / "secrets").exists()


def test_a_folder_holding_the_inner_root_is_not_moved_through_the_outer_root(
        tmp_path, make_root):
    base = tmp_path / "proj"
    (base / "pkgs" / "inner" / "secrets").mkdir(parents=True)
    (base / "pkgs" / "inner" / "secrets" / "s.txt").write_text("S\n")
    outer = Toolbox(make_root(str(base)))
    inner = Toolbox(make_root(str(base / "pkgs" / "inner")), deny=["secrets/**"])
    ws = Workspace({"proj": outer, "inner": inner})
    before = _state(tmp_path)
    _refused(ws.call("move_file", {"source": "proj/pkgs", "destination": "proj/other"}))
    assert _state(tmp_path) == before
    _refused(ws.call("read_file", {"path": "proj/pkgs/inner/secrets/s.txt"}))


def test_without_a_workspace_each_toolbox_is_its_own(tmp_path, make_root):
    """The rules are held only among a workspace's roots: a Toolbox alone is
    unchanged (so this is what the workspace adds)."""
    proj = _tree(tmp_path)
    outer = Toolbox(make_root(str(proj)))
    assert outer.call("read_file", {"path": "inner/secrets/prod.txt"})["ok"] is True
