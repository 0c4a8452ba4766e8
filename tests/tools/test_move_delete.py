"""move_file and delete_file: what moves and what goes, authorization before
anything changes, nothing outside touched (THREATS 7, 8, 10), symlinks moved
and deleted themselves, and the agent-tool-anchors mistakes that apply."""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

import pytest

from .helpers.envelope import assert_valid_envelope

from corral.tools import DeleteRequest, Denied, MoveRequest, Toolbox


def call(toolbox: Toolbox, tool: str, **args) -> dict:
    out = toolbox.call(tool, args)
    assert_valid_envelope(out)
    return out


def snapshot(path: Path) -> dict[str, object]:
    """Every entry below ``path``: file bytes, link text, or None for a directory."""
    out: dict[str, object] = {}
    for dirpath, dirnames, filenames in os.walk(path):
        for name in dirnames + filenames:
            full = Path(dirpath, name)
            rel = full.relative_to(path).as_posix()
            if full.is_symlink():
                out[rel] = ("link", os.readlink(full))
            elif full.is_dir():
                out[rel] = None
            else:
                out[rel] = full.read_bytes()
    return out


@pytest.fixture
def world(tmp_path):
    """A root and an outside directory beside it, each with content."""
    root, outside = tmp_path / "root", tmp_path / "outside"
    (root / "src" / "pkg").mkdir(parents=True)
    (root / "src" / "pkg" / "mod.py").write_text("x = 1\n")
    (root / "a.txt").write_text("alpha\n")
    (root / "b.txt").write_text("beta\n")
    outside.mkdir()
    (outside / "secret.txt").write_text("outside secret\n")
    return root, outside


# -- move_file -------------------------------------------------------------------------------


def test_move_a_file(world, make_toolbox):
    root, _ = world
    asked = []
    toolbox = make_toolbox(root, authorize=lambda r: asked.append(r) or True)
    out = call(toolbox, "move_file", source="a.txt", destination="c.txt")
    assert out == {"ok": True, "source": "a.txt", "destination": "c.txt", "kind": "file",
                   "overwritten": False, "createdDirectories": []}
    assert not (root / "a.txt").exists() and (root / "c.txt").read_text() == "alpha\n"
    assert asked == [MoveRequest("a.txt", destination="c.txt", overwrite=False, kind="file")]


def test_move_a_directory_with_its_contents(world, make_toolbox):
    root, _ = world
    out = call(make_toolbox(root), "move_file", source="src", destination="lib")
    assert out["kind"] == "directory"
    assert (root / "lib" / "pkg" / "mod.py").read_text() == "x = 1\n"
    assert not (root / "src").exists()


def test_move_into_a_directory_with_a_trailing_slash(world, make_toolbox):
    root, _ = world
    out = call(make_toolbox(root), "move_file", source="a.txt", destination="src/pkg/")
    assert out["destination"] == "src/pkg/a.txt"
    assert (root / "src" / "pkg" / "a.txt").read_text() == "alpha\n"
    back = call(make_toolbox(root), "move_file", source="src/pkg/a.txt", destination=".")
    assert back["destination"] == "a.txt" and (root / "a.txt").exists()


def test_missing_parents_are_authorized_then_created_and_reported(world, make_toolbox):
    root, _ = world
    asked = []
    out = call(make_toolbox(root, authorize=lambda r: asked.append(r) or True), "move_file",
               source="a.txt", destination="new/deeper/a.txt")
    assert out["createdDirectories"] == ["new", "new/deeper"]
    assert asked[0].creates_directories == ("new", "new/deeper")
    assert (root / "new" / "deeper" / "a.txt").read_text() == "alpha\n"


def test_denied_move_changes_nothing_not_even_parents(world, make_toolbox):
    root, _ = world
    before = snapshot(root)

    def deny(request):
        raise Denied("not now")
    out = call(make_toolbox(root, authorize=deny), "move_file", source="a.txt",
               destination="new/deeper/a.txt")
    assert out["code"] == "DENIED" and out["details"]["reason"] == "not now"
    assert snapshot(root) == before


def test_no_replace_by_default_then_overwrite(world, make_toolbox):
    root, _ = world
    toolbox = make_toolbox(root)
    refused = call(toolbox, "move_file", source="a.txt", destination="b.txt")
    assert refused["code"] == "ALREADY_EXISTS"
    assert (root / "b.txt").read_text() == "beta\n"
    # following the hint: overwrite: true
    out = call(toolbox, "move_file", source="a.txt", destination="b.txt", overwrite=True)
    assert out["overwritten"] is True
    assert (root / "b.txt").read_text() == "alpha\n" and not (root / "a.txt").exists()


def test_following_the_directory_hint_moves_into_it(world, make_toolbox):
    root, _ = world
    toolbox = make_toolbox(root)
    refused = call(toolbox, "move_file", source="a.txt", destination="src")
    assert refused["code"] == "ALREADY_EXISTS"
    assert 'pass destination "src/"' in refused["hint"]
    out = call(toolbox, "move_file", source="a.txt", destination="src/")
    assert out["destination"] == "src/a.txt"


def test_a_destination_appearing_during_authorization_is_never_replaced(world, make_toolbox):
    root, _ = world

    def plant(request):
        (root / "c.txt").write_text("planted\n")
        return True
    out = call(make_toolbox(root, authorize=plant), "move_file", source="a.txt",
               destination="c.txt")
    assert out["code"] in ("STALE", "ALREADY_EXISTS")
    assert (root / "c.txt").read_text() == "planted\n" and (root / "a.txt").exists()


def test_symlinks_are_moved_themselves(world, make_toolbox):
    root, outside = world
    os.symlink("../outside/secret.txt", root / "link.txt")
    os.symlink("src", root / "dirlink")
    toolbox = make_toolbox(root)
    out = call(toolbox, "move_file", source="link.txt", destination="moved.txt")
    assert out["kind"] == "symlink"
    assert os.readlink(root / "moved.txt") == "../outside/secret.txt"
    out = call(toolbox, "move_file", source="dirlink", destination="src2")
    assert out["kind"] == "symlink" and os.readlink(root / "src2") == "src"
    assert (root / "src" / "pkg" / "mod.py").exists()
    assert (outside / "secret.txt").read_text() == "outside secret\n"


def test_overwrite_replaces_a_symlink_not_its_target(world, make_toolbox):
    root, outside = world
    os.symlink(str(outside / "secret.txt"), root / "link.txt")
    out = call(make_toolbox(root), "move_file", source="a.txt", destination="link.txt",
               overwrite=True)
    assert out["overwritten"] is True
    assert not (root / "link.txt").is_symlink()
    assert (root / "link.txt").read_text() == "alpha\n"
    assert (outside / "secret.txt").read_text() == "outside secret\n"


@pytest.mark.parametrize("source,destination", [
    ("a.txt", "out/a.txt"), ("a.txt", "../outside/a.txt"), ("a.txt", "out/"),
    ("out/secret.txt", "stolen.txt"), ("../outside/secret.txt", "stolen.txt"),
    ("a.txt", "src/../../outside/a.txt"), ("a.txt", "dangling/a.txt")])
def test_nothing_outside_is_touched(world, make_toolbox, source, destination):
    root, outside = world
    os.symlink("../outside", root / "out")
    os.symlink("../outside/new", root / "dangling")
    before_out, before_root = snapshot(outside), snapshot(root)
    out = call(make_toolbox(root), "move_file", source=source, destination=destination)
    assert out["code"] == "OUTSIDE_ROOT", out
    assert snapshot(outside) == before_out and snapshot(root) == before_root
    assert str(root) not in json.dumps(out)


def test_absolute_paths_inside_the_root_are_echoed_relative(world, make_toolbox):
    root, _ = world
    out = call(make_toolbox(root), "move_file", source=str(root / "a.txt"),
               destination=str(root / "src" / "a.txt"))
    assert out["source"] == "a.txt" and out["destination"] == "src/a.txt"


def test_a_directory_holding_a_denied_path_does_not_move(world, make_toolbox):
    root, _ = world
    (root / "config").mkdir()
    (root / "config" / ".env").write_text("KEY=1\n")
    (root / "config" / "app.toml").write_text("x = 1\n")
    toolbox = make_toolbox(root, deny=["config/.env"])
    out = call(toolbox, "move_file", source="config", destination="cfg")
    assert out["code"] == "DENIED"
    assert (root / "config" / ".env").exists() and not (root / "cfg").exists()
    assert call(toolbox, "move_file", source="config/app.toml", destination="app.toml")["ok"]
    assert call(toolbox, "move_file", source="src", destination="lib")["ok"]


# -- delete_file -----------------------------------------------------------------------------


def test_delete_a_file_with_its_digest_for_the_host(world, make_toolbox):
    root, _ = world
    asked = []
    out = call(make_toolbox(root, authorize=lambda r: asked.append(r) or True), "delete_file",
               path="a.txt")
    assert out == {"ok": True, "path": "a.txt", "kind": "file", "deleted": True}
    assert not (root / "a.txt").exists()
    assert asked == [DeleteRequest("a.txt", kind="file",
                                   sha256=hashlib.sha256(b"alpha\n").hexdigest())]


def test_delete_an_empty_directory_and_refuse_a_full_one(world, make_toolbox):
    root, _ = world
    toolbox = make_toolbox(root)
    refused = call(toolbox, "delete_file", path="src/pkg")
    assert refused["code"] == "INVALID_ARGUMENT"
    assert refused["details"]["kind"] == "not_empty" and refused["details"]["entries"] == 1
    listing = call(toolbox, refused["suggestedTool"], **refused["suggestedArgs"])
    assert [e["name"] for e in listing["entries"]] == ["mod.py"]
    # following the hint: delete what is inside first
    assert call(toolbox, "delete_file", path="src/pkg/mod.py")["ok"]
    out = call(toolbox, "delete_file", path="src/pkg")
    assert out["kind"] == "directory" and not (root / "src" / "pkg").exists()


def test_delete_a_symlink_never_its_target(world, make_toolbox):
    root, outside = world
    os.symlink(str(outside / "secret.txt"), root / "abs.txt")
    os.symlink("../outside", root / "out")
    os.symlink("src", root / "srclink")
    os.symlink("gone", root / "dangling")
    toolbox = make_toolbox(root)
    for name in ("abs.txt", "out", "srclink", "dangling"):
        out = call(toolbox, "delete_file", path=name)
        assert out["kind"] == "symlink", out
        assert not os.path.lexists(root / name)
    assert (outside / "secret.txt").read_text() == "outside secret\n"
    assert (root / "src" / "pkg" / "mod.py").exists()


def test_delete_through_a_symlinked_parent_outside_is_refused(world, make_toolbox):
    root, outside = world
    os.symlink("../outside", root / "out")
    out = call(make_toolbox(root), "delete_file", path="out/secret.txt")
    assert out["code"] == "OUTSIDE_ROOT"
    assert (outside / "secret.txt").exists()


def test_delete_a_fifo_without_blocking(world, make_toolbox):
    root, _ = world
    os.mkfifo(root / "pipe")
    out = call(make_toolbox(root), "delete_file", path="pipe")
    assert out["kind"] == "special" and not os.path.lexists(root / "pipe")


def test_read_only_toolbox_offers_neither(world, make_toolbox):
    root, _ = world
    toolbox = make_toolbox(root, read_only=True)
    assert "move_file" not in toolbox.names and "delete_file" not in toolbox.names
    for tool, args in (("delete_file", {"path": "a.txt"}),
                       ("move_file", {"source": "a.txt", "destination": "c.txt"})):
        out = call(toolbox, tool, **args)
        assert out["code"] == "DENIED" and out["details"]["kind"] == "read_only"
    assert snapshot(root)["a.txt"] == b"alpha\n" and not (root / "c.txt").exists()


def test_swap_during_authorization_fails_closed(world, make_toolbox):
    root, _ = world

    def swap(request):
        os.rename(root / "b.txt", root / "b-old.txt")
        os.symlink("../outside/secret.txt", root / "b.txt")
        return True
    out = call(make_toolbox(root, authorize=swap), "delete_file", path="b.txt")
    assert out["code"] == "STALE"
    assert (root / "b.txt").is_symlink() and (root / "b-old.txt").exists()


# -- agent-tool-anchors section 4, rows that apply to move_file and delete_file -------------

MISTAKES = [
    (1, "move a missing source with a typo", "move_file",
     {"source": "a.tx", "destination": "c.txt"}, "NOT_FOUND", {"field": "source"}),
    (1, "delete a missing file", "delete_file", {"path": "src/pkg/mdo.py"}, "NOT_FOUND",
     {"didYouMean": ["src/pkg/mod.py"]}),
    (2, "absolute paths inside the root", "move_file",
     {"source": "@ROOT@/a.txt", "destination": "@ROOT@/c.txt"}, "ok", {}),
    (2, "absolute path inside the root", "delete_file", {"path": "@ROOT@/b.txt"}, "ok", {}),
    (3, "move to a sibling sharing the root's prefix", "move_file",
     {"source": "a.txt", "destination": "@ROOT@-evil/a.txt"}, "OUTSIDE_ROOT",
     {"kind": "absolute"}),
    (3, "move out by dotdot", "move_file", {"source": "a.txt", "destination": "../a.txt"},
     "OUTSIDE_ROOT", {"kind": "dotdot"}),
    (3, "delete in a sibling", "delete_file", {"path": "../root-evil/loot.txt"}, "OUTSIDE_ROOT",
     {"kind": "dotdot"}),
    (4, "a directory to delete_file (not empty)", "delete_file", {"path": "src"},
     "INVALID_ARGUMENT", {"kind": "not_empty"}),
    (23, "overwrite as a string", "move_file",
     {"source": "a.txt", "destination": "b.txt", "overwrite": "true"}, "INVALID_ARGUMENT",
     {"field": "overwrite", "expected": "boolean"}),
    (23, "path missing", "delete_file", {}, "INVALID_ARGUMENT", {"field": "path"}),
    (23, "paths as a list", "delete_file", {"path": ["a.txt", "b.txt"]}, "INVALID_ARGUMENT",
     {"field": "path"}),
]


@pytest.mark.parametrize("row,what,tool,args,expected,details", MISTAKES,
                         ids=[f"row{m[0]}-{m[2]}-{m[1].replace(' ', '_')}" for m in MISTAKES])
def test_agent_mistakes(world, make_toolbox, row, what, tool, args, expected, details):
    root, _ = world
    evil = root.parent / "root-evil"
    evil.mkdir()
    (evil / "loot.txt").write_text("loot\n")
    args = {k: v.replace("@ROOT@", str(root)) if isinstance(v, str) else v
            for k, v in args.items()}
    before_evil = snapshot(evil)
    toolbox = make_toolbox(root)
    out = call(toolbox, tool, **args)
    assert str(root) not in json.dumps(out)
    assert snapshot(evil) == before_evil
    if expected != "ok":
        assert out["code"] == expected, out
        for key, value in details.items():
            assert out["details"][key] == value
        if row in (1, 4):
            assert "suggestedTool" in out
        if "suggestedTool" in out:
            follow = toolbox.call(out["suggestedTool"], out["suggestedArgs"])
            assert follow["ok"] is True, follow
        return
    assert out["ok"] is True, out
    if tool == "move_file":
        assert out["source"] == "a.txt" and out["destination"] == "c.txt"
        assert (root / "c.txt").read_text() == "alpha\n"
    else:
        assert out["path"] == "b.txt" and not (root / "b.txt").exists()
