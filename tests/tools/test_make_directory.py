"""make_directory: authorized first with the canonical directories it will create."""

from __future__ import annotations

import os

import pytest

from corral.tools import Denied, Toolbox
from corral.tools import MakeDirectoryRequest


def test_creates_missing_parents_and_names_them(tmp_path, make_root):
    (tmp_path / "a").mkdir()
    result = Toolbox(make_root(tmp_path)).call("make_directory", {"path": "a/b/c"})
    assert result == {"ok": True, "path": "a/b/c", "createdDirectories": ["a/b", "a/b/c"],
                      "created": True}
    assert (tmp_path / "a" / "b" / "c").is_dir()


def test_an_existing_directory_is_success_with_nothing_created(tmp_path, make_root):
    (tmp_path / "a" / "b").mkdir(parents=True)
    (tmp_path / "link").symlink_to("a")
    toolbox = Toolbox(make_root(tmp_path))
    for path in ("a/b", "a/b/", ".", "link", "link/b"):
        result = toolbox.call("make_directory", {"path": path})
        assert (result["ok"], result["createdDirectories"], result["created"]) == (
            True, [], False), (path, result)


def test_the_host_is_told_the_canonical_directories_first(tmp_path, make_root):
    (tmp_path / "real").mkdir()
    (tmp_path / "alias").symlink_to("real")
    asked = []
    toolbox = Toolbox(make_root(tmp_path), authorize=lambda r: asked.append(r))
    result = toolbox.call("make_directory", {"path": "alias/x/../y/z"})
    # x is passed and left again by '..': never made
    assert asked == [MakeDirectoryRequest("real/y/z", creates_directories=("real/y", "real/y/z"))]
    assert asked[0].mutates is True
    assert result["createdDirectories"] == ["real/y", "real/y/z"]
    assert (tmp_path / "real" / "y" / "z").is_dir() and not (tmp_path / "real" / "x").exists()


def test_a_host_refusal_creates_nothing(tmp_path, make_root):
    def deny(request):
        raise Denied("no new directories")

    result = Toolbox(make_root(tmp_path), authorize=deny).call("make_directory",
                                                               {"path": "x/y"})
    assert (result["code"], result["details"]["kind"]) == ("DENIED", "host")
    assert list(tmp_path.iterdir()) == []


def test_a_directory_made_meanwhile_is_used_and_not_listed(tmp_path, make_root):
    (tmp_path / "a").mkdir()

    def meddle(request):
        (tmp_path / "a" / "b").mkdir()  # part of the plan appears meanwhile

    result = Toolbox(make_root(tmp_path), authorize=meddle).call("make_directory",
                                                                 {"path": "a/b/c"})
    assert result["createdDirectories"] == ["a/b/c"]  # only what this call made
    assert (tmp_path / "a" / "b" / "c").is_dir()


def test_a_file_put_in_the_plan_meanwhile_fails_closed(tmp_path, make_root):
    (tmp_path / "a").mkdir()

    def meddle(request):
        (tmp_path / "a" / "b").write_text("in the way")

    result = Toolbox(make_root(tmp_path), authorize=meddle).call("make_directory",
                                                                 {"path": "a/b/c"})
    assert (result["code"], result["details"]["kind"]) == ("STALE", "swapped")
    assert (tmp_path / "a" / "b").read_text() == "in the way"


def test_the_parent_swapped_for_a_link_out_meanwhile_creates_nothing_outside(tmp_path,
                                                                             make_root):
    root = tmp_path / "root"
    (root / "a").mkdir(parents=True)
    outside = tmp_path / "outside"
    outside.mkdir()

    def swap(request):
        os.rename(root / "a", root / "a-old")
        (root / "a").symlink_to(outside)

    result = Toolbox(make_root(root), authorize=swap).call("make_directory", {"path": "a/b"})
    assert list(outside.iterdir()) == []
    # the held parent no longer lies at a: nothing is made (not in it either, where the
    # answer's a/b would not be), the call fails closed
    assert (result["code"], result["details"]["kind"]) == ("STALE", "swapped"), result
    assert list((root / "a-old").iterdir()) == []


def test_a_link_planted_while_the_host_decides_is_not_followed_out(tmp_path, make_root):
    root = tmp_path / "root"
    root.mkdir()
    outside = tmp_path / "outside"
    outside.mkdir()

    def plant(request):
        (root / "a").symlink_to(outside)

    result = Toolbox(make_root(root), authorize=plant).call("make_directory", {"path": "a/b"})
    assert result["ok"] is False and result["code"] in ("OUTSIDE_ROOT", "STALE"), result
    assert list(outside.iterdir()) == []


def test_read_only_and_deny_rules(tmp_path, make_root):
    assert "make_directory" not in Toolbox(make_root(tmp_path), read_only=True).names
    toolbox = Toolbox(make_root(tmp_path), deny=["build/"])
    for path in ("build", "build/x", "BUILD/x", "src/../build/x"):
        result = toolbox.call("make_directory", {"path": path})
        assert (result["code"], result["details"]["kind"]) == ("DENIED", "deny_rule"), path
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("mode", [0o755, 0o700])
def test_created_directories_follow_the_umask(tmp_path, make_root, mode):
    old = os.umask(0o777 & ~mode)
    try:
        Toolbox(make_root(tmp_path)).call("make_directory", {"path": "d"})
    finally:
        os.umask(old)
    assert os.stat(tmp_path / "d").st_mode & 0o777 == mode
