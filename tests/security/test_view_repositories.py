"""A model never makes a git repository through the file tools.

git takes a directory for a repository when it holds ``HEAD`` beside
``objects/`` and ``refs/`` (or beside a ``commondir`` file naming where
those are); ``git push`` into it then runs its ``hooks/pre-receive``, and
git obeys its ``config``.  A model can place those pieces one call at a
time while the directory is still nothing to git (a hook first, then the
directories, then ``HEAD``), or all at once in one patch, or build the
directory elsewhere and move it, or move ``HEAD`` into place.  Each shape is
tried here on every backend config: the call whose result would make a
directory a repository is refused (``DENIED``, kind ``protected``, a hint
saying to use git), it changes nothing on disk, and what is not a
repository stays writable.  ``allow_git_writes`` lifts the rule.
"""

from __future__ import annotations

import os
import threading
from pathlib import Path

import pytest

from corral.tools import Policy, Toolbox

from .helpers.world import assert_contract

HOOK = "#!/bin/sh\necho pwned > /tmp/corral-pwned\n"
HEAD_TEXT = "ref: refs/heads/main\n"


def _snapshot(base: Path) -> dict[str, object]:
    """Every entry below ``base``: a file's bytes and mode, a link's text, a directory."""
    seen: dict[str, object] = {}
    for dirpath, dirnames, filenames in os.walk(base):
        for name in dirnames + filenames:
            path = os.path.join(dirpath, name)
            rel = os.path.relpath(path, base)
            if os.path.islink(path):
                seen[rel] = ("link", os.readlink(path))
            elif os.path.isdir(path):
                seen[rel] = "dir"
            else:
                seen[rel] = (Path(path).read_bytes(), os.stat(path).st_mode)
    return seen


def _refused_as_repository(answer: dict, repository: str) -> None:
    """The refusal keeps the contract and says what to do."""
    assert answer["ok"] is False, answer
    assert_contract(answer)
    assert answer["code"] == "DENIED", answer
    details = answer["details"]
    assert details["kind"] == "protected", answer
    assert details["repository"] == repository, answer
    assert "git repository" in answer["message"] and "nothing was changed" in answer["message"]
    assert "git init" in answer["hint"], answer
    assert "suggestedTool" not in answer  # no tool call makes a repository


def _is_repository_for_git(path: Path) -> bool:
    """git's own test (setup.c is_git_directory), as git runs it."""
    head = path / "HEAD"
    if not os.path.lexists(head):
        return False
    common = path
    if (path / "commondir").is_file():
        common = path / (path / "commondir").read_text().strip()
    return all(os.access(common / sub, os.X_OK) for sub in ("objects", "refs"))


# -- one piece a call, around a hook placed first ---------------------------------------------

PIECES = {
    "HEAD": ("write_file", {"path": "r.git/HEAD", "content": HEAD_TEXT}),
    "objects": ("make_directory", {"path": "r.git/objects"}),
    "refs": ("make_directory", {"path": "r.git/refs"}),
}


@pytest.mark.parametrize("last", sorted(PIECES))
def test_the_call_completing_a_bare_repository_is_refused(tmp_path, make_root, last):
    box = Toolbox(make_root(str(tmp_path)))
    first = box.call("write_file", {"path": "r.git/hooks/pre-receive", "content": HOOK})
    assert first["ok"] is True, first  # harmless while r.git is nothing to git
    for name in sorted(PIECES):
        if name != last:
            tool, args = PIECES[name]
            assert box.call(tool, args)["ok"] is True, name
    before = _snapshot(tmp_path)
    tool, args = PIECES[last]
    answer = box.call(tool, args)
    _refused_as_repository(answer, "r.git")
    assert _snapshot(tmp_path) == before
    assert not _is_repository_for_git(tmp_path / "r.git")


def test_pieces_made_by_writing_into_them_are_refused_too(tmp_path, make_root):
    """``objects/`` and ``refs/`` created as the parents of a file written in them."""
    box = Toolbox(make_root(str(tmp_path)))
    assert box.call("write_file", {"path": "r.git/HEAD", "content": HEAD_TEXT})["ok"] is True
    assert box.call("write_file", {"path": "r.git/objects/info/packs", "content": ""})["ok"]
    before = _snapshot(tmp_path)
    answer = box.call("write_file", {"path": "r.git/refs/heads/main", "content": "0" * 40})
    _refused_as_repository(answer, "r.git")
    assert _snapshot(tmp_path) == before


def test_the_root_itself_is_not_made_a_repository(tmp_path, make_root):
    box = Toolbox(make_root(str(tmp_path)))
    for tool, args in (("write_file", {"path": "hooks/pre-receive", "content": HOOK}),
                       ("make_directory", {"path": "objects"}),
                       ("make_directory", {"path": "refs"})):
        assert box.call(tool, args)["ok"] is True, args
    before = _snapshot(tmp_path)
    answer = box.call("write_file", {"path": "HEAD", "content": HEAD_TEXT})
    _refused_as_repository(answer, "the root")
    assert _snapshot(tmp_path) == before


@pytest.mark.parametrize("last", ["HEAD", "commondir"])
def test_a_repository_whose_objects_and_refs_are_elsewhere_is_refused(tmp_path, make_root,
                                                                      last):
    """``commondir`` sends git to another directory for objects/, refs/ and
    hooks/ (a worktree's layout): ``HEAD`` beside it is a repository."""
    box = Toolbox(make_root(str(tmp_path)))
    for tool, args in (("write_file", {"path": "common/hooks/pre-receive", "content": HOOK}),
                       ("make_directory", {"path": "common/objects"}),
                       ("make_directory", {"path": "common/refs"})):
        assert box.call(tool, args)["ok"] is True, args
    pieces = {"HEAD": HEAD_TEXT, "commondir": "../common\n"}
    first = next(name for name in pieces if name != last)
    assert box.call("write_file", {"path": f"wt/{first}", "content": pieces[first]})["ok"]
    before = _snapshot(tmp_path)
    answer = box.call("write_file", {"path": f"wt/{last}", "content": pieces[last]})
    _refused_as_repository(answer, "wt")
    assert _snapshot(tmp_path) == before
    assert not _is_repository_for_git(tmp_path / "wt")


def test_a_name_a_case_insensitive_disk_reads_as_head_is_refused(tmp_path, make_root):
    box = Toolbox(make_root(str(tmp_path)))
    for path in ("r.git/objects", "r.git/refs"):
        assert box.call("make_directory", {"path": path})["ok"] is True
    answer = box.call("write_file", {"path": "r.git/head", "content": HEAD_TEXT})
    _refused_as_repository(answer, "r.git")
    assert not os.path.lexists(tmp_path / "r.git" / "head")


# -- what git runs through a .git name (held by the name itself) ------------------------------


def test_a_work_tree_layout_and_a_git_file_are_refused_by_name(tmp_path, make_root):
    """``x/.git`` as a directory or as a ``gitdir:`` file: ``.git`` is protected."""
    (tmp_path / "store" / "hooks").mkdir(parents=True)
    box = Toolbox(make_root(str(tmp_path)))
    (tmp_path / "staged" / "objects").mkdir(parents=True)  # made after open
    (tmp_path / "staged" / "refs").mkdir()
    before = _snapshot(tmp_path)
    for tool, args in (
            ("write_file", {"path": "x/.git/HEAD", "content": HEAD_TEXT}),
            ("write_file", {"path": "x/.git/hooks/pre-commit", "content": HOOK}),
            ("make_directory", {"path": "x/.git/objects"}),
            ("write_file", {"path": "x/.git", "content": "gitdir: ../store\n"}),
            ("write_file", {"path": "x/.GIT", "content": "gitdir: ../store\n"}),
            ("move_file", {"source": "staged", "destination": "x/.git"})):
        answer = box.call(tool, args)
        assert answer["ok"] is False and answer["code"] == "DENIED", (tool, args, answer)
        assert answer["details"]["kind"] == "protected"
        assert_contract(answer)
    assert _snapshot(tmp_path) == before


# -- writes inside a repository made after open (git's wider test) ----------------------------


def test_nothing_is_written_in_a_repository_made_later_with_a_commondir(tmp_path, make_root):
    (tmp_path / "common" / "objects").mkdir(parents=True)
    (tmp_path / "common" / "refs").mkdir()
    box = Toolbox(make_root(str(tmp_path)))
    (tmp_path / "wt").mkdir()  # a worktree's git directory, made after open
    (tmp_path / "wt" / "HEAD").write_text(HEAD_TEXT)
    (tmp_path / "wt" / "commondir").write_text("../common\n")
    assert _is_repository_for_git(tmp_path / "wt")
    before = _snapshot(tmp_path)
    for path in ("wt/config.worktree", "wt/hooks/pre-receive", "wt/info/sparse-checkout"):
        answer = box.call("write_file", {"path": path, "content": "[core]\n"})
        assert answer["ok"] is False and answer["details"]["kind"] == "protected", answer
    assert _snapshot(tmp_path) == before


def test_nothing_is_written_in_a_repository_made_later_whose_head_is_a_link(tmp_path,
                                                                          make_root):
    """git accepts ``HEAD -> refs/heads/main`` (a symlink) as well as a file."""
    box = Toolbox(make_root(str(tmp_path)))
    (tmp_path / "r.git" / "objects").mkdir(parents=True)
    (tmp_path / "r.git" / "refs" / "heads").mkdir(parents=True)
    os.symlink("refs/heads/main", tmp_path / "r.git" / "HEAD")
    answer = box.call("write_file", {"path": "r.git/config", "content": "[core]\n"})
    assert answer["ok"] is False and answer["details"]["kind"] == "protected", answer
    assert not (tmp_path / "r.git" / "config").exists()


def test_a_toolbox_opened_on_a_bare_repository_changes_nothing_git_runs(tmp_path, make_root):
    """The root itself a repository (a bare mirror served by mistake): its
    hooks and config are git's like any repository's."""
    _shaped(tmp_path)
    (tmp_path / "config").write_text("[core]\n\tbare = true\n")
    box = Toolbox(make_root(str(tmp_path)))
    before = _snapshot(tmp_path)
    for tool, args in (
            ("write_file", {"path": "hooks/post-receive", "content": HOOK}),
            ("write_file", {"path": "hooks/pre-receive", "content": HOOK, "overwrite": True}),
            ("write_file", {"path": "hooks/deep/er/x", "content": HOOK}),
            ("edit_file", {"path": "config", "oldText": "bare = true",
                           "newText": "bare = true\n\thooksPath = /tmp"}),
            ("write_file", {"path": "info/attributes", "content": "* filter=x\n"}),
            ("delete_file", {"path": "hooks/pre-receive"})):
        answer = box.call(tool, args)
        assert answer["ok"] is False and answer["details"]["kind"] == "protected", (args, answer)
    assert _snapshot(tmp_path) == before


# -- one patch, all the pieces ---------------------------------------------------------------


def _patch(*sections: str) -> dict:
    return {"input": "*** Begin Patch\n" + "".join(sections) + "*** End Patch\n"}


def _add(path: str, *lines: str) -> str:
    return f"*** Add File: {path}\n" + "".join(f"+{line}\n" for line in lines)


def test_one_patch_adding_a_whole_repository_is_refused(tmp_path, make_root):
    box = Toolbox(make_root(str(tmp_path)))
    before = _snapshot(tmp_path)
    answer = box.call("apply_patch", _patch(
        _add("p.git/hooks/pre-receive", "#!/bin/sh", "echo pwned"),
        _add("p.git/HEAD", "ref: refs/heads/main"),
        _add("p.git/objects/info/packs", ""),
        _add("p.git/refs/heads/main", "0" * 40)))
    _refused_as_repository(answer, "p.git")
    assert _snapshot(tmp_path) == before


@pytest.mark.parametrize("order", ["head_first", "head_last"])
def test_one_patch_completing_a_repository_on_disk_is_refused(tmp_path, make_root, order):
    """The patch's own files and what is there already, decided together."""
    (tmp_path / "r.git" / "hooks").mkdir(parents=True)
    (tmp_path / "r.git" / "hooks" / "pre-receive").write_text(HOOK)
    box = Toolbox(make_root(str(tmp_path)))
    (tmp_path / "r.git" / "objects").mkdir()
    sections = [_add("r.git/refs/heads/main", "0" * 40), _add("r.git/HEAD", HEAD_TEXT.strip()),
                _add("notes.txt", "unrelated")]
    if order == "head_last":
        sections.reverse()
    before = _snapshot(tmp_path)
    answer = box.call("apply_patch", _patch(*sections))
    _refused_as_repository(answer, "r.git")
    assert _snapshot(tmp_path) == before


def test_one_patch_moving_head_into_place_is_refused(tmp_path, make_root):
    (tmp_path / "r.git" / "objects").mkdir(parents=True)
    (tmp_path / "r.git" / "refs").mkdir()
    (tmp_path / "head.txt").write_text(HEAD_TEXT)
    box = Toolbox(make_root(str(tmp_path)))
    before = _snapshot(tmp_path)
    answer = box.call("apply_patch", _patch(
        "*** Update File: head.txt\n*** Move to: r.git/HEAD\n@@\n-ref: refs/heads/main\n"
        "+ref: refs/heads/dev\n"))
    _refused_as_repository(answer, "r.git")
    assert _snapshot(tmp_path) == before


def test_one_patch_of_head_and_commondir_is_refused(tmp_path, make_root):
    box = Toolbox(make_root(str(tmp_path)))
    answer = box.call("apply_patch", _patch(_add("wt/commondir", "../.git"),
                                            _add("wt/HEAD", HEAD_TEXT.strip())))
    _refused_as_repository(answer, "wt")
    assert not (tmp_path / "wt").exists()


# -- moves -------------------------------------------------------------------------------------


def _shaped(path: Path) -> None:
    """A directory git takes for a bare repository, with a hook."""
    (path / "hooks").mkdir(parents=True)
    (path / "hooks" / "pre-receive").write_text(HOOK)
    os.chmod(path / "hooks" / "pre-receive", 0o755)
    (path / "objects").mkdir()
    (path / "refs").mkdir()
    (path / "HEAD").write_text(HEAD_TEXT)


def test_a_move_of_a_repository_into_place_is_refused(tmp_path, make_root):
    box = Toolbox(make_root(str(tmp_path)))
    _shaped(tmp_path / "staged")  # after open: the scan did not see it
    before = _snapshot(tmp_path)
    answer = box.call("move_file", {"source": "staged", "destination": "r.git"})
    assert answer["ok"] is False and answer["code"] == "DENIED", answer
    assert_contract(answer)
    assert answer["details"]["kind"] == "protected"
    assert answer["details"]["repository"] == "staged"
    assert "git repository" in answer["message"] and "shell" in answer["hint"]
    assert _snapshot(tmp_path) == before


def test_a_move_carrying_a_repository_deep_inside_is_refused(tmp_path, make_root):
    box = Toolbox(make_root(str(tmp_path)))
    _shaped(tmp_path / "pack" / "deep" / "inner.git")
    before = _snapshot(tmp_path)
    answer = box.call("move_file", {"source": "pack", "destination": "remotes"})
    assert answer["ok"] is False and answer["details"]["kind"] == "protected", answer
    assert answer["details"]["repository"] == "pack/deep/inner.git"
    assert _snapshot(tmp_path) == before


def test_a_move_of_a_link_to_a_repository_is_refused(tmp_path, make_root):
    (tmp_path / "plain").mkdir()
    os.symlink("staged", tmp_path / "shortcut")
    box = Toolbox(make_root(str(tmp_path)))
    _shaped(tmp_path / "staged")
    before = _snapshot(tmp_path)
    answer = box.call("move_file", {"source": "shortcut", "destination": "r.git"})
    assert answer["ok"] is False and answer["details"]["kind"] == "protected", answer
    assert _snapshot(tmp_path) == before


@pytest.mark.parametrize("moved, onto, kind", [
    ("head.txt", "r.git/HEAD", "file"),
    ("objs", "r.git/objects", "directory"),
    ("r.git/refs-old", "r.git/refs", "directory"),  # a rename inside the directory
])
def test_a_move_of_the_last_piece_into_place_is_refused(tmp_path, make_root, moved, onto,
                                                        kind):
    box = Toolbox(make_root(str(tmp_path)))
    _shaped(tmp_path / "r.git")  # after open: the scan did not see it
    (tmp_path / "head.txt").write_text(HEAD_TEXT)
    (tmp_path / "objs").mkdir()
    last = onto.rpartition("/")[2]
    if kind == "file":
        (tmp_path / "r.git" / "HEAD").unlink()
    elif last == "objects":
        (tmp_path / "r.git" / "objects").rmdir()
    else:
        (tmp_path / "r.git" / "refs").rename(tmp_path / "r.git" / "refs-old")
    assert not _is_repository_for_git(tmp_path / "r.git")
    before = _snapshot(tmp_path)
    answer = box.call("move_file", {"source": moved, "destination": onto})
    _refused_as_repository(answer, "r.git")
    assert _snapshot(tmp_path) == before


# -- several calls at once ---------------------------------------------------------------------


def test_pieces_sent_at_once_never_make_a_repository(tmp_path, make_root):
    """HEAD, objects/ and refs/ of one directory in three calls at once,
    each creating the directory too: never all three land."""
    box = Toolbox(make_root(str(tmp_path)))
    calls = [("write_file", {"path": "HEAD", "content": HEAD_TEXT}),
             ("make_directory", {"path": "objects"}),
             ("write_file", {"path": "refs/heads/main", "content": "0" * 40})]
    for round_ in range(12):
        repo = f"r{round_}.git"
        barrier = threading.Barrier(len(calls))
        answers: list[dict] = []

        def run(tool: str, args: dict) -> None:
            barrier.wait(5)
            answers.append(box.call(tool, {**args, "path": f"{repo}/{args['path']}"},
                                    timeout=10))

        threads = [threading.Thread(target=run, args=call) for call in calls]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(20)
        assert len(answers) == len(calls)
        refused = [answer for answer in answers if not answer["ok"]]
        assert len(refused) == 1, answers
        _refused_as_repository(refused[0], repo)
        assert not _is_repository_for_git(tmp_path / repo)


# -- what stays allowed -------------------------------------------------------------------------


def test_files_named_like_gits_own_stay_writable_where_they_make_no_repository(tmp_path,
                                                                               make_root):
    box = Toolbox(make_root(str(tmp_path)))
    for tool, args in (
            ("write_file", {"path": "docs/HEAD", "content": "a heading\n"}),
            ("make_directory", {"path": "data/objects"}),
            ("make_directory", {"path": "data/refs"}),
            ("write_file", {"path": "data/objects/a.json", "content": "{}\n"}),
            ("write_file", {"path": "data/HEADER", "content": "x\n"}),
            ("write_file", {"path": "data/commondir", "content": "x\n"}),
            ("apply_patch", _patch(_add("lib/refs/a.py", "x = 1"),
                                   _add("lib/objects/b.py", "y = 2"))),
            ("move_file", {"source": "docs/HEAD", "destination": "notes/HEAD"})):
        answer = box.call(tool, args)
        assert answer["ok"] is True, (tool, args, answer)
    assert (tmp_path / "notes" / "HEAD").read_text() == "a heading\n"


def test_allow_git_writes_lets_a_model_make_a_repository(tmp_path, make_root):
    box = Toolbox(make_root(str(tmp_path)), policy=Policy.build(allow_git_writes=True))
    answer = box.call("apply_patch", _patch(_add("p.git/HEAD", HEAD_TEXT.strip()),
                                            _add("p.git/objects/info/packs", ""),
                                            _add("p.git/refs/heads/main", "0" * 40)))
    assert answer["ok"] is True, answer
    assert _is_repository_for_git(tmp_path / "p.git")


def test_a_directory_made_elsewhere_while_the_host_decides_is_decided_afresh(tmp_path,
                                                                             make_root):
    """Another process makes ``r.git`` with HEAD and refs/ while the host is
    asked about ``make_directory r.git/objects`` (planned with r.git new):
    the call is refused, nothing is created."""
    def authorize(request):
        (tmp_path / "r.git" / "refs").mkdir(parents=True)
        (tmp_path / "r.git" / "HEAD").write_text(HEAD_TEXT)
        return True

    box = Toolbox(make_root(str(tmp_path)), authorize=authorize)
    answer = box.call("make_directory", {"path": "r.git/objects"})
    assert answer["ok"] is False and answer["code"] in ("STALE", "DENIED"), answer
    assert_contract(answer)
    assert not (tmp_path / "r.git" / "objects").exists()
    assert not _is_repository_for_git(tmp_path / "r.git")
