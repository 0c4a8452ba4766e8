"""An independent red-team pass over the policed view, tried as a hostile
model would (several tool calls at once from threads, and single calls),
against the read side, the rule that no file-tool call makes a directory a
git repository, nested roots in one Workspace, and the ignore rules.

Every test asserts the secure behaviour on every backend config.  Racing
tests run a modest number of rounds by default; a soak run's ``CORRAL_SOAK``
(the view battery's call count, default 10,000: tests/security/README.md)
multiplies them by ``CORRAL_SOAK / 10,000``.
"""

from __future__ import annotations

import os
import threading
from pathlib import Path

import pytest

from corral.tools import Toolbox, Workspace

PASSWORD = "hunter2-redteam-five"
SOAK = max(1, int(os.environ.get("CORRAL_SOAK", "10000") or "10000") // 10000)
READ_TOOLS = ("read_file", "list_directory", "glob", "grep", "file_info", "read_files")


def _write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def _all_reads(box, path: str) -> list[dict]:
    """Every read-side tool pointed at ``path`` (a file or a directory)."""
    return [box.call("read_file", {"path": path}),
            box.call("read_files", {"paths": [path]}),
            box.call("list_directory", {"path": path}),
            box.call("glob", {"pattern": "**", "path": path}),
            box.call("glob", {"pattern": f"{path}/**"}),
            box.call("grep", {"pattern": "hunter2", "path": path}),
            box.call("grep", {"pattern": "hunter2"}),
            box.call("file_info", {"path": path})]


def _leaks(answers: list[dict], *names: str) -> list[dict]:
    """The answers that show the secret content, or show a secret name as
    found: an entry listed, a path globbed or grepped, a file described."""
    shown = []
    for answer in answers:
        if PASSWORD in repr(answer):
            shown.append(answer)
            continue
        if not answer.get("ok"):
            continue
        found = [entry.get("name", "") for entry in answer.get("entries", [])]
        found += [path for path in answer.get("paths", []) if isinstance(path, str)]
        found += [path for path in answer.get("files", []) if isinstance(path, str)]
        found += [match.get("path", "") for match in answer.get("matches", [])]
        found += [item.get("path", "") for item in answer.get("files", [])
                  if isinstance(item, dict) and item.get("ok")]
        if "size" in answer and "kind" in answer:
            found.append(str(answer.get("resolvedPath", answer.get("path", ""))))
        if any(name in str(item) for item in found for name in names):
            shown.append(answer)
    return shown


def _git_dirs(base: Path) -> list[Path]:
    """Directories git would take for a repository (HEAD beside objects/
    and refs/, or beside commondir), the root itself excluded."""
    found = []
    for here, dirs, files in os.walk(base):
        names = set(dirs) | set(files)
        if "HEAD" in names and ({"objects", "refs"} <= names or "commondir" in names):
            if Path(here) != base:
                found.append(Path(here))
    return found


def _threads(work, count: int) -> None:
    errors: list[BaseException] = []

    def run(index: int) -> None:
        try:
            work(index)
        except BaseException as error:  # noqa: BLE001 - reported below
            errors.append(error)

    threads = [threading.Thread(target=run, args=(index,)) for index in range(count)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
        assert not thread.is_alive(), "a call hung"
    assert not errors, errors


# -- the read side: links made after the Toolbox opened ------------------------------------


def test_links_to_links_to_a_denied_directory_made_after_start_reveal_nothing(tmp_path,
                                                                             make_root):
    _write(tmp_path / "secrets" / "key.txt", f"key = {PASSWORD}\n")
    _write(tmp_path / "public" / "readme.txt", "plain\n")
    box = Toolbox(make_root(str(tmp_path)), deny=["secrets/**"])
    os.symlink("secrets", tmp_path / "pub")
    os.symlink("pub", tmp_path / "pub2")
    os.symlink("../pub2/key.txt", tmp_path / "public" / "k.txt")
    answers = []
    for path in ("pub", "pub2", "pub2/key.txt", "public/k.txt", "public/../pub2",
                 "pub2/../secrets/key.txt", str(tmp_path / "pub2" / "key.txt"),
                 str(tmp_path / "pub2")):
        answers += _all_reads(box, path)
    assert not _leaks(answers, "key.txt"), _leaks(answers, "key.txt")
    assert box.call("read_file", {"path": "public/readme.txt"})["ok"]


def test_a_hard_link_to_a_secret_made_after_start_is_not_read_or_searched(tmp_path,
                                                                          make_root):
    _write(tmp_path / ".env", f"TOKEN={PASSWORD}\n")
    box = Toolbox(make_root(str(tmp_path)))
    os.link(tmp_path / ".env", tmp_path / "notes.txt")
    (tmp_path / "deep").mkdir()
    os.link(tmp_path / ".env", tmp_path / "deep" / "config.py")
    answers = _all_reads(box, "notes.txt") + _all_reads(box, "deep/config.py")
    answers += _all_reads(box, "deep") + _all_reads(box, ".")
    assert not [answer for answer in answers if PASSWORD in repr(answer)]


def test_a_secret_name_made_a_link_mid_run_protects_what_it_leads_to(tmp_path, make_root):
    _write(tmp_path / "config" / "settings.txt", f"TOKEN={PASSWORD}\n")
    box = Toolbox(make_root(str(tmp_path)))
    assert box.call("read_file", {"path": "config/settings.txt"})["ok"]
    os.symlink("config/settings.txt", tmp_path / ".env")
    first = box.call("read_file", {"path": ".env"})
    assert first["ok"] is False and PASSWORD not in repr(first)
    # once met, the name protects its target by every spelling
    for path in ("config/settings.txt", "config/../config/settings.txt",
                 str(tmp_path / "config" / "settings.txt")):
        answer = box.call("read_file", {"path": path})
        assert answer["ok"] is False and PASSWORD not in repr(answer), (path, answer)
    grep = box.call("grep", {"pattern": "hunter2"})
    assert PASSWORD not in repr(grep)


@pytest.mark.parametrize("tool", READ_TOOLS)
def test_a_link_swapped_between_public_and_denied_never_shows_the_denied_side(
        tmp_path, make_root, tool):
    _write(tmp_path / "secrets" / "key.txt", f"key = {PASSWORD}\n")
    _write(tmp_path / "public" / "key.txt", "plain\n")
    os.symlink("public", tmp_path / "pub")
    box = Toolbox(make_root(str(tmp_path)), deny=["secrets/**"])
    stop = threading.Event()

    def swap() -> None:
        flip = False
        while not stop.is_set():
            os.symlink("secrets" if flip else "public", tmp_path / "pub.new")
            os.replace(tmp_path / "pub.new", tmp_path / "pub")
            flip = not flip

    args = {"read_file": {"path": "pub/key.txt"}, "read_files": {"paths": ["pub/key.txt"]},
            "list_directory": {"path": "pub"}, "glob": {"pattern": "pub/**"},
            "grep": {"pattern": "hunter2|plain", "path": "pub"},
            "file_info": {"path": "pub/key.txt"}}[tool]
    if tool != "glob":  # glob does not follow links; the others read the public side
        before = box.call(tool, args)
        assert before["ok"] and ("plain" in repr(before) or "key.txt" in repr(before)), before
    swapper = threading.Thread(target=swap)
    swapper.start()
    shown: list[dict] = []
    try:
        def reader(_index: int) -> None:
            for _ in range(40 * SOAK):
                answer = box.call(tool, args)
                if PASSWORD in repr(answer):
                    shown.append(answer)
        _threads(reader, 3)
    finally:
        stop.set()
        swapper.join()
    assert not shown, shown[:2]


def test_a_secret_renamed_into_a_read_path_mid_call_is_never_shown(tmp_path, make_root):
    """The host's own ``.env`` and a public file trade places by rename over
    and over (``.env`` is a secret by name, wherever its content came from):
    a read of the public name shows the public text or nothing."""
    _write(tmp_path / "a" / ".env", f"TOKEN={PASSWORD}\n")
    box = Toolbox(make_root(str(tmp_path)))
    stop = threading.Event()

    def swap() -> None:
        while not stop.is_set():
            # the secret content only ever sits under the secret name; a
            # public file with other content is put in its place and back
            _write(tmp_path / "a" / "pub.tmp", "plain\n")
            os.replace(tmp_path / "a" / "pub.tmp", tmp_path / "a" / "pub.txt")
            os.rename(tmp_path / "a" / "pub.txt", tmp_path / "a" / "gone.txt")

    swapper = threading.Thread(target=swap)
    swapper.start()
    shown: list[dict] = []
    try:
        def reader(index: int) -> None:
            for _ in range(40 * SOAK):
                for tool, args in (("read_file", {"path": "a/pub.txt"}),
                                   ("grep", {"pattern": "hunter2", "path": "a"}),
                                   ("glob", {"pattern": "a/*"})):
                    answer = box.call(tool, args)
                    if PASSWORD in repr(answer) or (tool == "glob" and ".env" in repr(answer)):
                        shown.append(answer)
        _threads(reader, 3)
    finally:
        stop.set()
        swapper.join()
    assert not shown, shown[:2]


# -- no file-tool call makes a directory a git repository ------------------------------------


def test_links_named_objects_and_refs_count_as_the_pieces(tmp_path, make_root):
    (tmp_path / "store" / "objects").mkdir(parents=True)
    (tmp_path / "store" / "refs").mkdir(parents=True)
    (tmp_path / "d").mkdir()
    os.symlink("../store/objects", tmp_path / "d" / "objects")
    os.symlink("../store/refs", tmp_path / "d" / "refs")
    box = Toolbox(make_root(str(tmp_path)))
    answer = box.call("write_file", {"path": "d/HEAD", "content": "ref: refs/heads/main\n"})
    assert answer["ok"] is False, answer
    assert not (tmp_path / "d" / "HEAD").exists()
    patch = box.call("apply_patch", {"input": "*** Begin Patch\n*** Add File: d/HEAD\n"
                                              "+ref: refs/heads/main\n*** End Patch\n"})
    assert patch["ok"] is False and patch["code"] == "DENIED", patch
    assert not (tmp_path / "d" / "HEAD").exists()


def test_a_head_link_then_objects_and_refs_is_refused(tmp_path, make_root):
    (tmp_path / "d").mkdir()
    _write(tmp_path / "elsewhere" / "HEAD", "ref: refs/heads/main\n")
    os.symlink("../elsewhere/HEAD", tmp_path / "d" / "HEAD")
    box = Toolbox(make_root(str(tmp_path)))
    box.call("make_directory", {"path": "d/objects"})
    box.call("make_directory", {"path": "d/refs/heads"})
    box.call("write_file", {"path": "d/commondir", "content": "../elsewhere\n"})
    assert not _git_dirs(tmp_path), _git_dirs(tmp_path)


def test_moves_of_each_piece_racing_from_threads_never_make_a_repository(tmp_path,
                                                                        make_root):
    rounds = 6 * SOAK
    for index in range(rounds):
        _write(tmp_path / f"s{index}" / "HEAD", "ref: refs/heads/main\n")
        (tmp_path / f"o{index}" / "objects").mkdir(parents=True)
        (tmp_path / f"r{index}" / "refs" / "heads").mkdir(parents=True)
        _write(tmp_path / f"c{index}" / "commondir", "..\n")
        (tmp_path / f"d{index}").mkdir()
    box = Toolbox(make_root(str(tmp_path)))
    moves = [("s{i}/HEAD", "d{i}/HEAD"), ("o{i}/objects", "d{i}/objects"),
             ("r{i}/refs", "d{i}/refs"), ("c{i}/commondir", "d{i}/commondir")]

    def mover(which: int) -> None:
        source, destination = moves[which]
        for index in range(rounds):
            box.call("move_file", {"source": source.format(i=index),
                                   "destination": destination.format(i=index)})

    _threads(mover, len(moves))
    assert not _git_dirs(tmp_path), _git_dirs(tmp_path)
    for index in range(rounds):
        landed = set(os.listdir(tmp_path / f"d{index}"))
        assert len(landed) >= 2, landed  # only a completing move is refused


def test_a_whole_directory_moved_in_under_a_new_name_carries_no_repository(tmp_path,
                                                                          make_root):
    """objects/ and refs/ in one place, HEAD in another, then the directory
    holding the first two moved beside HEAD's and renamed: never complete."""
    (tmp_path / "half" / "objects").mkdir(parents=True)
    (tmp_path / "half" / "refs").mkdir(parents=True)
    box = Toolbox(make_root(str(tmp_path)))
    box.call("write_file", {"path": "other/HEAD", "content": "ref: refs/heads/main\n"})
    box.call("move_file", {"source": "other/HEAD", "destination": "half/HEAD"})
    box.call("move_file", {"source": "other", "destination": "half/sub"})
    box.call("write_file", {"path": "x/HEAD", "content": "ref: refs/heads/main\n"})
    box.call("move_file", {"source": "half/objects", "destination": "x/objects"})
    box.call("move_file", {"source": "half/refs", "destination": "x/refs"})
    box.call("edit_file", {"path": "half/README", "oldText": "", "newText": "x"})
    assert not _git_dirs(tmp_path), _git_dirs(tmp_path)


def test_pieces_written_by_threads_into_fresh_directories_never_complete(tmp_path,
                                                                        make_root):
    rounds = 10 * SOAK
    box = Toolbox(make_root(str(tmp_path)))
    calls = [lambda i: box.call("write_file", {"path": f"r{i}/HEAD",
                                               "content": "ref: refs/heads/main\n"}),
             lambda i: box.call("make_directory", {"path": f"r{i}/objects/pack"}),
             lambda i: box.call("write_file", {"path": f"r{i}/refs/heads/main",
                                               "content": "0" * 40 + "\n"}),
             lambda i: box.call("apply_patch", {"input": f"*** Begin Patch\n*** Add File: "
                                                         f"r{i}/commondir\n+..\n"
                                                         "*** End Patch\n"})]

    def worker(which: int) -> None:
        order = range(rounds) if which % 2 == 0 else reversed(range(rounds))
        for index in order:
            calls[which](index)

    _threads(worker, len(calls))
    assert not _git_dirs(tmp_path), _git_dirs(tmp_path)


# -- nested roots in one Workspace ---------------------------------------------------------


def _nested(tmp_path: Path, make_root) -> Workspace:
    _write(tmp_path / "outer" / "a" / "inner" / "secrets" / "key.txt", f"k={PASSWORD}\n")
    _write(tmp_path / "outer" / "a" / "inner" / "src" / "main.py", "x = 1\n")
    return Workspace({"outer": Toolbox(make_root(str(tmp_path / "outer"))),
                      "inner": Toolbox(make_root(str(tmp_path / "outer" / "a" / "inner")),
                                       deny=["secrets/**"])})


def test_an_inner_roots_deny_holds_through_the_outer_by_every_spelling(tmp_path, make_root):
    ws = _nested(tmp_path, make_root)
    os.symlink("a/inner/secrets", tmp_path / "outer" / "pub")
    os.symlink("pub", tmp_path / "outer" / "pub2")
    answers = []
    for path in ("outer/a/inner/secrets/key.txt", "outer/a//inner/./secrets/key.txt",
                 "outer/x/../a/inner/secrets/key.txt", "outer/pub2/key.txt", "outer/pub",
                 "outer/a/inner/secrets", "inner/secrets/key.txt",
                 str(tmp_path / "outer" / "x" / ".." / "a" / "inner" / "secrets" / "key.txt"),
                 str(tmp_path / "outer" / "pub2" / "key.txt")):
        answers += _all_reads(ws, path)
    answers.append(ws.call("grep", {"pattern": "hunter2", "path": "outer"}))
    answers.append(ws.call("glob", {"pattern": "**/key.txt", "path": "outer"}))
    assert not _leaks(answers, "key.txt"), _leaks(answers, "key.txt")[:2]


def test_moving_a_directory_above_the_inner_root_is_refused(tmp_path, make_root):
    """Moving ``a`` (which holds the inner root) would carry the inner
    root's files out from under the place its rules were held at."""
    ws = _nested(tmp_path, make_root)
    answer = ws.call("move_file", {"source": "outer/a", "destination": "outer/b"})
    if answer["ok"]:
        # if allowed, the inner rules must still hold at the new place
        leaked = _all_reads(ws, "outer/b/inner/secrets/key.txt")
        assert not _leaks(leaked, "key.txt"), _leaks(leaked, "key.txt")[:2]
    else:
        assert (tmp_path / "outer" / "a" / "inner" / "secrets" / "key.txt").exists()
    for source in ("outer/a/inner", "outer/a/inner/secrets"):
        moved = ws.call("move_file", {"source": source, "destination": "outer/c"})
        assert moved["ok"] is False, moved
    assert ws.call("delete_file", {"path": "outer/a/inner/src/main.py"})["ok"]


# -- the ignore rules are never a boundary, and never unhide what is denied ------------------


def test_a_gitignore_negation_never_shows_a_denied_or_secret_file(tmp_path, make_root):
    _write(tmp_path / "secrets" / "key.txt", f"key = {PASSWORD}\n")
    _write(tmp_path / "app" / ".env", f"TOKEN={PASSWORD}\n")
    _write(tmp_path / ".gitignore", "*\n!secrets/\n!secrets/**\n!.env\n!**/.env\n")
    (tmp_path / ".git").mkdir()
    box = Toolbox(make_root(str(tmp_path)), deny=["secrets/**"])
    answers = []
    for path in (".", "secrets", "app", "secrets/key.txt", "app/.env"):
        answers += _all_reads(box, path)
        answers.append(box.call("grep", {"pattern": "hunter2", "path": path,
                                         "includeIgnored": True}))
        answers.append(box.call("glob", {"pattern": "**", "path": path,
                                         "includeIgnored": True}))
    assert not [answer for answer in answers if PASSWORD in repr(answer)]
    assert not _leaks(answers, "key.txt"), _leaks(answers, "key.txt")[:2]


# -- carrying a denied or secret file out by a move, then reading it -------------------------


def test_a_denied_or_secret_file_is_never_moved_to_a_readable_name(tmp_path, make_root):
    _write(tmp_path / "secrets" / "key.txt", f"key = {PASSWORD}\n")
    _write(tmp_path / "app" / ".env", f"TOKEN={PASSWORD}\n")
    os.symlink("secrets", tmp_path / "pub")
    box = Toolbox(make_root(str(tmp_path)), deny=["secrets/**"])
    tries = [("move_file", {"source": "secrets/key.txt", "destination": "out.txt"}),
             ("move_file", {"source": "pub/key.txt", "destination": "out.txt"}),
             ("move_file", {"source": "secrets", "destination": "opened"}),
             ("move_file", {"source": "app/.env", "destination": "app/env.txt"}),
             ("move_file", {"source": "app", "destination": "app2"}),
             ("apply_patch", {"input": "*** Begin Patch\n*** Update File: secrets/key.txt\n"
                                       "*** Move to: out.txt\n@@\n-key = x\n+key = y\n"
                                       "*** End Patch\n"}),
             ("apply_patch", {"input": "*** Begin Patch\n*** Update File: app/.env\n"
                                       "*** Move to: out2.txt\n@@\n TOKEN\n"
                                       "*** End Patch\n"})]
    answers = [box.call(name, args) for name, args in tries]
    assert PASSWORD not in repr(answers)
    readable = []
    for here, _dirs, files in os.walk(tmp_path):
        for name in files:
            path = Path(here, name)
            rel = path.relative_to(tmp_path).as_posix()
            if PASSWORD in path.read_text():
                answer = box.call("read_file", {"path": rel})
                if PASSWORD in repr(answer):
                    readable.append(rel)
    assert not readable, readable
    assert PASSWORD not in repr(box.call("grep", {"pattern": "hunter2"}))


async def _gather(box, calls):
    import asyncio
    return await asyncio.gather(*(box.acall(name, args) for name, args in calls))


def test_one_turns_pieces_sent_at_once_by_acall_never_make_a_repository(tmp_path, make_root):
    import asyncio
    box = Toolbox(make_root(str(tmp_path)))
    for index in range(8 * SOAK):
        calls = [("write_file", {"path": f"g{index}/HEAD", "content": "ref: refs/heads/x\n"}),
                 ("make_directory", {"path": f"g{index}/objects"}),
                 ("make_directory", {"path": f"g{index}/refs"}),
                 ("write_file", {"path": f"g{index}/commondir", "content": "..\n"})]
        if index % 2:
            calls.reverse()
        asyncio.run(_gather(box, calls))
    assert not _git_dirs(tmp_path), _git_dirs(tmp_path)


# -- no existence oracle through links made mid-run or through an outer root ----------------


def _without(answer: dict, path: str) -> str:
    return repr(answer).replace(path, "<path>")


@pytest.mark.parametrize("tool", ["read_file", "file_info", "list_directory", "grep"])
def test_a_denied_name_reached_through_a_new_link_answers_alike_present_or_not(
        tmp_path, make_root, tool):
    _write(tmp_path / "secrets" / "key.txt", f"key = {PASSWORD}\n")
    (tmp_path / "secrets" / "dir").mkdir()
    box = Toolbox(make_root(str(tmp_path)), deny=["secrets/**"])
    os.symlink("secrets", tmp_path / "pub")
    os.symlink("pub", tmp_path / "pub2")
    args = {"grep": {"pattern": "x"}}.get(tool, {})
    present = "pub2/dir" if tool in ("list_directory", "grep") else "pub2/key.txt"
    there = box.call(tool, {**args, "path": present})
    missing = box.call(tool, {**args, "path": "pub2/nothing"})
    assert there["ok"] is False, there
    assert _without(there, present) == _without(missing, "pub2/nothing")


def test_an_inner_roots_denied_name_answers_alike_through_the_outer(tmp_path, make_root):
    ws = _nested(tmp_path, make_root)
    for tool in ("read_file", "file_info"):
        there = ws.call(tool, {"path": "outer/a/inner/secrets/key.txt"})
        missing = ws.call(tool, {"path": "outer/a/inner/secrets/nothing"})
        assert there["ok"] is False, there
        # sentences name the path root-relative, the fields with the root's name
        assert _without(there, "key.txt") == _without(missing, "nothing")


def test_the_inner_roots_parent_is_not_moved_by_any_spelling(tmp_path, make_root):
    ws = _nested(tmp_path, make_root)
    os.symlink("a", tmp_path / "outer" / "l")
    host_a = str(tmp_path / "outer" / "a")
    for source in ("outer/a/", "outer/./a", "outer/a/../a", "outer/l/", "outer/l/.",
                   host_a, host_a + "/", "outer/a/inner/..", "outer/A"):
        moved = ws.call("move_file", {"source": source, "destination": "outer/b"})
        assert (tmp_path / "outer" / "a" / "inner" / "secrets" / "key.txt").exists(), \
            (source, moved)
    answers = _all_reads(ws, "outer/b") + _all_reads(ws, "outer/b/inner/secrets/key.txt")
    assert not _leaks(answers, "key.txt"), _leaks(answers, "key.txt")[:2]


def test_an_outer_roots_deny_holds_inside_the_inner_root_through_new_links(tmp_path,
                                                                          make_root):
    _write(tmp_path / "outer" / "a" / "inner" / "private" / "key.txt", f"k={PASSWORD}\n")
    (tmp_path / "outer" / "a" / "inner" / "src").mkdir()
    ws = Workspace({"outer": Toolbox(make_root(str(tmp_path / "outer")),
                                     deny=["a/inner/private/**"]),
                    "inner": Toolbox(make_root(str(tmp_path / "outer" / "a" / "inner")))})
    os.symlink("../private", tmp_path / "outer" / "a" / "inner" / "src" / "p")
    answers = []
    for path in ("inner/private/key.txt", "inner/src/p/key.txt", "inner/src/p",
                 str(tmp_path / "outer" / "a" / "inner" / "src" / "p" / "key.txt"),
                 "outer/a/inner/src/p/key.txt"):
        answers += _all_reads(ws, path)
    answers.append(ws.call("grep", {"pattern": "hunter2", "path": "inner"}))
    assert not _leaks(answers, "key.txt"), _leaks(answers, "key.txt")[:2]


@pytest.mark.parametrize("piece", ["HEAD", "objects", "refs", "commondir"])
def test_a_link_moved_in_as_the_last_piece_is_refused(tmp_path, make_root, piece):
    # each piece in a directory of its own, so no store is a repository itself
    _write(tmp_path / "s-HEAD" / "HEAD", "ref: refs/heads/main\n")
    (tmp_path / "s-objects" / "objects").mkdir(parents=True)
    (tmp_path / "s-refs" / "refs").mkdir(parents=True)
    _write(tmp_path / "s-commondir" / "commondir", "..\n")
    rest = {"HEAD": ["objects", "refs"], "objects": ["HEAD", "refs"],
            "refs": ["HEAD", "objects"], "commondir": ["HEAD"]}[piece]
    (tmp_path / "d").mkdir()
    for name in rest:
        os.symlink(f"../s-{name}/{name}", tmp_path / "d" / name)
    os.symlink(f"s-{piece}/{piece}", tmp_path / "lnk")
    box = Toolbox(make_root(str(tmp_path)))
    assert not _git_dirs(tmp_path)
    for source in ("lnk", f"s-{piece}/{piece}"):
        answer = box.call("move_file", {"source": source, "destination": f"d/{piece}"})
        assert answer["ok"] is False, (source, answer)
    assert not _git_dirs(tmp_path), _git_dirs(tmp_path)
    assert not os.path.lexists(tmp_path / "d" / piece)
