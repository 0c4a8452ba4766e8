"""Check and act as one step: each shape where a check made apart from its
act let a call through, tried on every backend config.

* a write into ``y`` racing a move of ``y`` onto ``.vscode``;
* protected names that are links, or lie under links (found when the
  Toolbox opened, or met since): neither the name nor what it leads to is
  written;
* a bare repository made after the Toolbox opened: nothing is created
  anywhere inside it, however many parents the call itself makes;
* edit_file writes the file it checked (a directory swapped on its path
  after the check is not written through);
* moves that would wait on their own lock answer at once;
* several roots: a denied name is answered the same whether it exists or
  not, and answer paths name their root.
"""

from __future__ import annotations

import os
import threading
import time
from pathlib import Path

from corral.contained import Root, backend_by_name
from corral.testing.backends import Fault, FaultBackend
from corral.tools import Toolbox, Workspace

from ..helpers import bare_repository

# seconds: a call that waits on itself reaches this deadline; a move here
# takes up to half a second on a loaded 2-core machine, a tenth of LIMIT / 2
LIMIT = 10.0


def _write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def _denied(envelope: dict) -> bool:
    return envelope["ok"] is False and envelope["code"] == "DENIED"


# -- the race: a write into y, a move of y onto .vscode ------------------------------------


def test_write_into_a_directory_racing_its_move_onto_vscode(tmp_path, make_root):
    (tmp_path / "y").mkdir()
    entered, release = threading.Event(), threading.Event()

    def authorize(request):
        if request.operation == "write":
            entered.set()
            release.wait(LIMIT)  # the write holds its step while the move is tried
        return True

    box = Toolbox(make_root(str(tmp_path)), authorize=authorize)
    answers: dict[str, dict] = {}
    write = threading.Thread(target=lambda: answers.__setitem__("write", box.call(
        "write_file", {"path": "y/tasks.json", "content": '{"runOn": "folderOpen"}'},
        timeout=LIMIT * 2)))
    write.start()
    assert entered.wait(LIMIT)
    move = threading.Thread(target=lambda: answers.__setitem__("move", box.call(
        "move_file", {"source": "y", "destination": ".vscode"}, timeout=LIMIT * 2)))
    move.start()
    time.sleep(0.2)  # the move is waiting (or done) by now
    release.set()
    write.join(LIMIT * 3)
    move.join(LIMIT * 3)
    assert not (tmp_path / ".vscode" / "tasks.json").exists(), answers
    if answers["write"]["ok"]:
        assert (tmp_path / "y" / "tasks.json").exists()
        assert _denied(answers["move"]), answers


# -- links to protected names ----------------------------------------------------------------


def _linked_tree(base: Path) -> None:
    _write(base / "scripts" / "pre-commit", "#!/bin/sh\necho checks\n")
    (base / ".git" / "hooks").mkdir(parents=True)
    (base / ".git" / "HEAD").write_text("ref: refs/heads/main\n")
    os.symlink("../../scripts/pre-commit", base / ".git" / "hooks" / "pre-commit")
    _write(base / "editor" / "notes.md", "notes\n")
    _write(base / "editor" / "settings.json", "{}\n")
    os.symlink("editor", base / ".vscode")
    _write(base / ".config" / "envrc", "export A=1\n")
    os.symlink(".config/envrc", base / ".envrc")


def test_protected_names_that_are_links_protect_what_they_lead_to(tmp_path, make_root):
    _linked_tree(tmp_path)
    before = {p: p.read_bytes() for p in (tmp_path / "scripts" / "pre-commit",
                                          tmp_path / "editor" / "settings.json",
                                          tmp_path / ".config" / "envrc")}
    box = Toolbox(make_root(str(tmp_path)))
    calls = [
        ("edit_file", {"path": ".git/hooks/pre-commit", "oldText": "checks", "newText": "x"}),
        ("edit_file", {"path": "scripts/pre-commit", "oldText": "checks", "newText": "x"}),
        ("write_file", {"path": "scripts/pre-commit", "content": "x", "overwrite": True}),
        ("write_file", {"path": ".vscode/settings.json", "content": "x", "overwrite": True}),
        ("write_file", {"path": ".vscode/tasks.json", "content": "x"}),
        ("write_file", {"path": "editor/tasks.json", "content": "x"}),
        ("edit_file", {"path": "editor/settings.json", "oldText": "{}", "newText": "[]"}),
        ("edit_file", {"path": ".envrc", "oldText": "A=1", "newText": "A=2"}),
        ("edit_file", {"path": ".config/envrc", "oldText": "A=1", "newText": "A=2"}),
        ("move_file", {"source": "editor/notes.md", "destination": "editor/launch.json"}),
        ("delete_file", {"path": "scripts/pre-commit"}),
    ]
    for name, args in calls:
        answer = box.call(name, args)
        assert _denied(answer), (name, args, answer)
        assert answer["details"].get("kind") == "protected", (name, args, answer)
    assert {p: p.read_bytes() for p in before} == before
    assert not (tmp_path / "editor" / "tasks.json").exists()
    assert not (tmp_path / "editor" / "launch.json").exists()
    # what no protected name leads to stays writable
    assert box.call("edit_file", {"path": "editor/notes.md", "oldText": "notes",
                                  "newText": "more"})["ok"]


def test_links_made_after_the_toolbox_opened_protect_once_met(tmp_path, make_root):
    _write(tmp_path / "editor" / "notes.md", "notes\n")
    box = Toolbox(make_root(str(tmp_path)))
    os.symlink("editor", tmp_path / ".vscode")
    answer = box.call("write_file", {"path": ".vscode/tasks.json", "content": "x"})
    assert _denied(answer), answer
    # met once: the place it leads to is protected under its name from now on
    answer = box.call("write_file", {"path": "editor/tasks.json", "content": "x"})
    assert _denied(answer), answer
    assert not (tmp_path / "editor" / "tasks.json").exists()


def test_a_link_moved_onto_a_protected_directory_name_carries_its_target(tmp_path, make_root):
    _write(tmp_path / "editor" / "tasks.json", '{"runOn": "folderOpen"}\n')
    os.symlink("editor", tmp_path / "shortcut")
    box = Toolbox(make_root(str(tmp_path)))
    answer = box.call("move_file", {"source": "shortcut", "destination": ".vscode"})
    assert _denied(answer), answer
    assert not os.path.lexists(tmp_path / ".vscode")


# -- bare repositories made after the Toolbox opened ------------------------------------------


def test_nothing_is_created_inside_a_bare_repository_made_later(tmp_path, make_root):
    _write(tmp_path / "hook.sh", "#!/bin/sh\necho pwned\n")
    box = Toolbox(make_root(str(tmp_path)))
    bare_repository(tmp_path / "remote.git", hooks=False)
    calls = [
        ("make_directory", {"path": "remote.git/hooks"}),
        ("write_file", {"path": "remote.git/hooks/pre-receive", "content": "#!/bin/sh\n"}),
        ("write_file", {"path": "remote.git/hooks/deep/er/pre-receive", "content": "x"}),
        ("move_file", {"source": "hook.sh", "destination": "remote.git/hooks/pre-receive"}),
        ("make_directory", {"path": "remote.git/hooks/a/b"}),
    ]
    for name, args in calls:
        answer = box.call(name, args)
        assert _denied(answer), (name, args, answer)
    assert not (tmp_path / "remote.git" / "hooks").exists()
    assert (tmp_path / "hook.sh").exists()


# -- edit_file writes what it checked -----------------------------------------------------------


def test_edit_file_writes_the_file_it_checked_not_a_path_swapped_after(tmp_path, make_root):
    _write(tmp_path / "d" / "a.txt", "alpha\n")
    (tmp_path / ".git" / "hooks").mkdir(parents=True)
    asked = threading.Event()
    swapped: list[bool] = []

    def swap() -> None:
        if asked.is_set() and not swapped:
            swapped.append(True)
            os.rename(tmp_path / "d", tmp_path / "d-old")
            os.symlink(".git/hooks", tmp_path / "d")

    backend = FaultBackend(backend_by_name(make_root.backend_name),
                           *(Fault(method, None, name="a.txt", times=-1, hook=swap)
                             for method in ("read", "pread")))
    root = Root(str(tmp_path), backend=backend, fast_path=make_root.fast_path)
    try:
        box = Toolbox(root, authorize=lambda request: asked.set() or True)
        answer = box.call("edit_file", {"path": "d/a.txt", "oldText": "alpha",
                                        "newText": "beta"})
    finally:
        root.close()
    assert swapped, "the swap never ran"
    assert not (tmp_path / ".git" / "hooks" / "a.txt").exists(), answer
    if answer["ok"]:
        assert (tmp_path / "d-old" / "a.txt").read_text() == "beta\n"
    else:
        assert answer["code"] == "STALE", answer
        assert (tmp_path / "d-old" / "a.txt").read_text() == "alpha\n"


# -- moves that must not wait on themselves -------------------------------------------------------


def _quick(box: Toolbox, args: dict) -> dict:
    started = time.monotonic()
    answer = box.call("move_file", args, timeout=LIMIT)
    assert time.monotonic() - started < LIMIT / 2, answer
    assert answer.get("details", {}).get("kind") != "time_limit", answer
    return answer


def test_move_through_a_link_into_its_own_target_does_not_wait_on_itself(tmp_path, make_root):
    _write(tmp_path / "v2" / "keep.txt", "v2\n")
    os.symlink("v2", tmp_path / "latest")
    box = Toolbox(make_root(str(tmp_path)))
    answer = _quick(box, {"source": "latest", "destination": "v2/old"})
    if answer["ok"]:
        assert os.path.islink(tmp_path / "v2" / "old")
        assert not os.path.lexists(tmp_path / "latest")


def test_case_only_rename_onto_another_file_does_not_wait_on_itself(tmp_path, make_root):
    _write(tmp_path / "readme.md", "lower\n")
    _write(tmp_path / "README.md", "upper\n")
    box = Toolbox(make_root(str(tmp_path)))
    answer = _quick(box, {"source": "readme.md", "destination": "README.md",
                          "overwrite": True})
    assert answer["ok"], answer
    assert (tmp_path / "README.md").read_text() == "lower\n"
    assert not (tmp_path / "readme.md").exists()


def test_case_only_rename_works(tmp_path, make_root):
    _write(tmp_path / "readme.md", "lower\n")
    box = Toolbox(make_root(str(tmp_path)))
    answer = _quick(box, {"source": "readme.md", "destination": "README.md"})
    assert answer["ok"], answer
    assert (tmp_path / "README.md").read_text() == "lower\n"


def test_a_link_moved_onto_its_own_target_does_not_wait_on_itself(tmp_path, make_root):
    _write(tmp_path / "target.txt", "target\n")
    os.symlink("target.txt", tmp_path / "link")
    box = Toolbox(make_root(str(tmp_path)))
    answer = _quick(box, {"source": "link", "destination": "target.txt", "overwrite": True})
    if answer["ok"]:
        assert os.path.islink(tmp_path / "target.txt")
    else:
        assert (tmp_path / "target.txt").read_text() == "target\n"


# -- several roots ------------------------------------------------------------------------------------


def _workspace(base: Path, make_root) -> Workspace:
    boxes = {name: Toolbox(make_root(str(base / name)), deny=["secrets/**"])
             for name in ("web", "api")}
    return Workspace(boxes)


def test_a_denied_name_is_answered_the_same_whether_it_exists_or_not(tmp_path, make_root):
    for name in ("web", "api"):
        (tmp_path / name / "src").mkdir(parents=True)
    answers = []
    for exists in (False, True):
        if exists:
            _write(tmp_path / "web" / "secrets" / "prod-db.txt", "password\n")
        ws = _workspace(tmp_path, make_root)
        answers.append((ws.call("read_file", {"path": "secrets/prod-db.txt"}),
                        ws.call("read_file", {"path": "web/secrets/prod-db.txt"}),
                        ws.call("read_file", {"path": "secrets/"})))
    assert answers[0] == answers[1]
    assert "didYouMean" not in answers[1][0]["details"], answers[1][0]
    assert "password" not in repr(answers)


def test_answer_paths_name_their_root(tmp_path, make_root):
    _write(tmp_path / "web" / "src" / "a.py", "x = 1\n")
    os.symlink("src/a.py", tmp_path / "web" / "link.py")
    (tmp_path / "api").mkdir()
    ws = _workspace(tmp_path, make_root)
    answer = ws.call("edit_file", {"path": "web/link.py", "oldText": "x = 1",
                                   "newText": "x = 2"})
    assert answer["ok"], answer
    assert answer["path"] == "web/link.py"
    assert answer["resolvedPath"] == "web/src/a.py"
    assert (tmp_path / "web" / "src" / "a.py").read_text() == "x = 2\n"


# -- a denied name that is a link ------------------------------------------------------------


def test_a_denied_link_name_denies_what_it_leads_to(tmp_path, make_root):
    _write(tmp_path / "vault" / "prod.txt", "password\n")
    os.symlink("vault", tmp_path / "secrets")
    box = Toolbox(make_root(str(tmp_path)), deny=["secrets"])
    for name, args in (("read_file", {"path": "vault/prod.txt"}),
                       ("read_file", {"path": "secrets/prod.txt"}),
                       ("edit_file", {"path": "vault/prod.txt", "oldText": "password",
                                      "newText": "x"})):
        answer = box.call(name, args)
        assert _denied(answer), (name, answer)
    assert "password" not in repr(box.call("read_files", {"paths": ["vault/prod.txt"]}))
    assert (tmp_path / "vault" / "prod.txt").read_text() == "password\n"
