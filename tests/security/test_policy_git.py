"""What git runs or reads inside the root is protected, wherever it lies
(git runs hooks and reads config from all of them): a ``.git`` file's git directory and its common
directory, a bare repository, ``core.hooksPath`` and the files
``include.path`` / ``includeIf`` pull in (followed in turn); found when the
Toolbox opens, bounded, lifted by ``allow_git_writes``.  On every backend
config."""

from __future__ import annotations

import os

import pytest

from corral.tools import Policy, Toolbox
from corral.tools._policy.gitdirs import MAX_DEPTH, names_a_shape_entry, shape_name

HOOK = "#!/bin/sh\necho planted\n"


def _git_dir(path):
    for sub in ("hooks", "objects", "refs"):
        (path / sub).mkdir(parents=True, exist_ok=True)
    (path / "HEAD").write_text("ref: refs/heads/main\n")
    (path / "config").write_text("[core]\n\tbare = false\n")


def _write(toolbox, path):
    return toolbox.call("write_file", {"path": path, "content": HOOK, "overwrite": True})


def _protected(answer) -> bool:
    return answer["ok"] is False and answer["details"].get("kind") == "protected"


def test_includes_are_followed_and_quoted_values_read(tmp_path, make_root):
    _git_dir(tmp_path / ".git")
    (tmp_path / ".git" / "config").write_text(
        '[include]\n\tpath = "../shared/one.inc" ; a comment\n'
        '[includeIf "onbranch:main"]\n\tpath = ../shared/two.inc\n')
    (tmp_path / "shared").mkdir()
    (tmp_path / "shared" / "one.inc").write_text(f"[core]\n\thooksPath = {tmp_path}/abs-hooks\n")
    (tmp_path / "shared" / "two.inc").write_text("[include]\n\tpath = ../third.inc\n")
    (tmp_path / "shared" / "other.txt").write_text("free\n")
    with Toolbox(make_root(tmp_path)) as toolbox:
        for path in ("shared/one.inc", "shared/two.inc", "third.inc", "abs-hooks/pre-commit"):
            assert _protected(_write(toolbox, path)), path
        assert toolbox.call("write_file", {"path": "shared/other.txt", "content": "x",
                                           "overwrite": True})["ok"] is True
        assert toolbox.call("read_file", {"path": "shared/one.inc"})["ok"] is True
    assert not (tmp_path / "abs-hooks").exists() and not (tmp_path / "third.inc").exists()


def test_outside_and_home_paths_are_left_alone(tmp_path, make_root):
    _git_dir(tmp_path / ".git")
    (tmp_path / ".git" / "config").write_text(
        "[core]\n\thooksPath = ~/hooks\n[include]\n\tpath = /etc/gitconfig\n"
        "\tpath = ../../../outside.inc\n")
    with Toolbox(make_root(tmp_path)) as toolbox:
        assert toolbox.policy.protect_dirs == ()
        assert toolbox.call("write_file", {"path": "hooks/x", "content": "x"})["ok"] is True


def test_a_nested_work_tree_and_its_hooks_path(tmp_path, make_root):
    deep = tmp_path / "a" / "b"
    _git_dir(deep / ".git")
    (deep / ".git" / "config").write_text("[core]\n\thooksPath = .githooks-local\n")
    with Toolbox(make_root(tmp_path)) as toolbox:
        assert _protected(_write(toolbox, "a/b/.githooks-local/pre-commit"))


def test_allow_git_writes_lifts_them(tmp_path, make_root):
    _git_dir(tmp_path / "remote.git")
    _git_dir(tmp_path / ".git")
    (tmp_path / ".git" / "config").write_text("[core]\n\thooksPath = tools/hooks\n")
    with Toolbox(make_root(tmp_path), policy=Policy.build(allow_git_writes=True)) as toolbox:
        for path in ("remote.git/hooks/pre-receive", "tools/hooks/pre-commit"):
            assert _write(toolbox, path)["ok"] is True, path


def test_a_fifo_in_a_config_place_does_not_hang_the_open(tmp_path, make_root):
    (tmp_path / ".git").mkdir()
    os.mkfifo(tmp_path / ".git" / "config")
    os.mkfifo(tmp_path / ".git-fifo")
    (tmp_path / "sub").mkdir()
    os.mkfifo(tmp_path / "sub" / ".git")
    with Toolbox(make_root(tmp_path)) as toolbox:
        assert toolbox.policy.protect_dirs == ()


def test_the_scan_is_bounded_and_a_write_still_looks(tmp_path, make_root):
    """A bare repository deeper than the scan looks is not found when the
    Toolbox opens (the bound; one at the bound is), and neither is one made
    after it opened; a change to one's config or hooks is refused anyway
    (decided when the call would act: its parent or grandparent is a git
    directory)."""
    at = tmp_path.joinpath(*["d"] * (MAX_DEPTH - 1), "near.git")
    far = "/".join(["d"] * (MAX_DEPTH + 1) + ["far.git"])
    _git_dir(at)
    _git_dir(tmp_path / far)
    (tmp_path / "staged").write_text("x\n")
    with Toolbox(make_root(tmp_path)) as toolbox:
        found = toolbox.policy.protect_dirs
        _git_dir(tmp_path / "later.git")
        for path in (f"{far}/config", f"{far}/hooks/pre-receive", "later.git/hooks/post-update",
                     "later.git/config"):
            assert _protected(_write(toolbox, path)), path
        moved = toolbox.call("move_file", {"source": "staged",
                                           "destination": "later.git/hooks/pre-push"})
        assert _protected(moved), moved
        made = toolbox.call("make_directory", {"path": "later.git/info"})
        assert _protected(made), made
        assert toolbox.call("write_file", {"path": "later.git.txt", "content": "x"})["ok"]
    assert "/".join(["d"] * (MAX_DEPTH - 1) + ["near.git"]) in found
    assert not any(p.endswith(("far.git", "later.git")) for p in found)
    assert not (tmp_path / far / "hooks" / "pre-receive").exists()
    assert (tmp_path / far / "config").read_text().startswith("[core]")


@pytest.mark.parametrize("rel", [
    "a/b/HEAD", "a/Objects/x", "refs", "ComMonDir/", "x/hEaD/y", "a/b/c.py", "a//b", "heads/x",
    "refs.txt", "src/head", "x/\u041eBJECTS", "a/he\u200cad", "a/\u212aefs",
])
def test_a_path_naming_a_repository_entry_is_found_ascii_or_not(rel: str) -> None:
    # the ASCII shortcut answers as the per-component fold does
    expected = any(shape_name(part) is not None for part in rel.split("/") if part)
    assert names_a_shape_entry(rel) is expected
    assert names_a_shape_entry(rel) is (rel in {"a/b/HEAD", "a/Objects/x", "refs", "ComMonDir/",
                                                "x/hEaD/y", "src/head", "a/he\u200cad"})
