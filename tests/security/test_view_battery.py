"""The policed view under concurrent calls: a battery of random interleavings.

Four threads share one Toolbox per backend config and issue random
write_file, edit_file, move_file, delete_file, make_directory and apply_patch
(one to three files: added, updated, moved, deleted) calls aimed
at protected, denied and secret names: directly (``.vscode/tasks.json``,
``.envrc``, ``.env``, ``private/key.txt``), through links the fixture holds
(``.git/hooks/pre-commit -> ../../scripts/pre-commit``, ``.zed -> zededit``,
``.envrc -> .config/envrc``), through directories moved into place
(``y -> .vscode`` while another thread writes ``y/tasks.json``; ``z ->
remote.git/hooks``), into a bare repository made after the Toolbox
opened, and at repositories a model would build itself: ``HEAD``,
``objects/``, ``refs/``, ``commondir`` and a hook of ``b.git``, ``c.git`` or
``wt`` written, made or moved into place piece by piece, several at once,
or in one patch.  Small calls, so the default of :data:`CALLS` calls per config runs
in seconds; ``CORRAL_SOAK`` sets more (tests/security/README.md).

Asserted, per config:

* no protected, denied or secret file is created, changed or revealed: the
  guarded files keep their bytes, no guarded name appears, no answer holds
  a guarded file's content;
* no directory but the fixture's repository is one at the end (``HEAD``
  beside ``objects`` and ``refs``, or beside ``commondir``);
* every answer agrees with the disk: each write carries a unique token, and
  every token found on disk at the end (anywhere in the tree) belongs to a
  call that answered ok; an ok write's sha256 is its content's;
* no call fails for a reason other than the expected refusals (never
  ``INTERNAL``, never a time limit: nothing waits on itself).
"""

from __future__ import annotations

import hashlib
import os
import random
import re
import threading
from pathlib import Path

import pytest

from corral.tools import Toolbox

from ..helpers import bare_repository

CALLS = int(os.environ.get("CORRAL_SOAK", "10000"))
THREADS = 4
SECRET_TEXT = "SECRET-bd81"
GUARDED_FILES = {  # path -> content (must stay as it is)
    "scripts/pre-commit": "#!/bin/sh\necho checks\n",
    "zededit/settings.json": "{}\n",
    ".config/envrc": "export A=1\n",
    ".env": f"TOKEN={SECRET_TEXT}\n",
    "private/key.txt": f"{SECRET_TEXT}\n",
    "remote.git/config": "[core]\n\tbare = true\n",
}
# names that must never come to exist (a protected place, through any spelling)
NEVER = (".vscode/tasks.json", ".vscode/settings.json", ".zed/tasks.json",
         "zededit/tasks.json", "remote.git/hooks", ".devcontainer", ".git/hooks/post-merge",
         ".vscode/y/tasks.json")
EXPECTED_CODES = {"DENIED", "STALE", "ALREADY_EXISTS", "NOT_FOUND", "INVALID_ARGUMENT",
                  "UNSUPPORTED"}


def _fixture(base: Path) -> None:
    for rel, text in GUARDED_FILES.items():
        (base / rel).parent.mkdir(parents=True, exist_ok=True)
        (base / rel).write_text(text)
    (base / ".git" / "hooks").mkdir(parents=True)
    (base / ".git" / "HEAD").write_text("ref: refs/heads/main\n")
    os.symlink("../../scripts/pre-commit", base / ".git" / "hooks" / "pre-commit")
    os.symlink("zededit", base / ".zed")
    os.symlink(".config/envrc", base / ".envrc")
    (base / "y").mkdir()
    (base / "z").mkdir()
    (base / "hook.sh").write_text("#!/bin/sh\n")
    (base / "head.txt").write_text("ref: refs/heads/main\n")
    (base / "stage" / "objects").mkdir(parents=True)


_WRITES = ["y/tasks.json", "y/a.txt", ".vscode/tasks.json", ".vscode/settings.json",
           ".zed/tasks.json", ".zed/settings.json", "zededit/tasks.json", "scripts/pre-commit",
           ".git/hooks/pre-commit", ".git/hooks/post-merge", "remote.git/hooks/pre-receive",
           "remote.git/hooks/x/y", "private/key.txt", "private/new.txt", ".env", ".envrc",
           "z/hooks/pre-receive", "z/b.txt", ".devcontainer/devcontainer.json"]
_EDITS = ["scripts/pre-commit", ".git/hooks/pre-commit", ".envrc", ".config/envrc", ".env",
          "private/key.txt", "zededit/settings.json", ".zed/settings.json", "y/a.txt",
          ".vscode/a.txt", "z/b.txt"]
_MOVES = [("y", ".vscode"), (".vscode", "y"), ("z", "remote.git/hooks"), ("z", ".devcontainer"),
          ("hook.sh", "remote.git/hooks/pre-receive"), ("y/a.txt", "y/tasks.json"),
          ("y", ".zed/y"), ("zededit/notes.md", "zededit/tasks.json"), ("y/a.txt", "z/b.txt"),
          ("z/b.txt", "y/a.txt"), ("hook.sh", ".git/hooks/post-merge"), ("private", "open"),
          (".env", "env.txt"), ("scripts", "s2"), ("y", "z/y"), ("z/y", "y")]
_DELETES = ["y/tasks.json", "y/a.txt", ".vscode", ".vscode/a.txt", "z/b.txt",
            "scripts/pre-commit", "private/key.txt", "y", "z/hooks/pre-receive", "z/hooks",
            "zededit/settings.json", ".zed/settings.json"]  # .env not: a secret may be deleted
_MKDIRS = ["y", "z", "remote.git/hooks", "remote.git/hooks/a/b", ".devcontainer", "z/hooks",
           ".vscode", ".git/hooks/x"]
# pieces of repositories a model would build (b.git, c.git, wt, stage), a share of the calls
_REPO_WRITES = ["b.git/HEAD", "b.git/hooks/pre-receive", "b.git/objects/info/packs",
                "b.git/refs/heads/main", "c.git/HEAD", "wt/HEAD", "wt/commondir", "stage/HEAD",
                "stage/refs/heads/main"]
_REPO_MKDIRS = ["b.git/objects", "b.git/refs", "c.git/objects", "c.git/refs", "stage/refs", "wt"]
_REPO_MOVES = [("head.txt", "b.git/HEAD"), ("head.txt", "c.git/HEAD"), ("stage", "c.git"),
               ("stage", "b.git/objects"), ("c.git", "b.git"), ("b.git/HEAD", "head.txt"),
               ("hook.sh", "b.git/hooks/pre-receive"), ("stage/objects", "c.git/objects")]
REPO_SHARE = 0.15


_PATCH_OLD = ["echo checks", "export A=1", "{}", "#!/bin/sh", f"TOKEN={SECRET_TEXT}"]


def _patch_section(rng: random.Random, token: str) -> str:
    kind = rng.randrange(4)
    if kind == 0:
        return f"*** Add File: {rng.choice(_WRITES)}\n+{token}\n"
    if kind == 1:
        src, dst = rng.choice(_MOVES)
        move = f"*** Move to: {dst}\n" if rng.random() < 0.4 else ""
        return (f"*** Update File: {rng.choice(_EDITS)}\n{move}@@\n-{rng.choice(_PATCH_OLD)}\n"
                f"+{token}\n")
    if kind == 2:
        src, dst = rng.choice(_MOVES)
        return f"*** Update File: {src}\n*** Move to: {dst}\n"
    return f"*** Delete File: {rng.choice(_DELETES)}\n"


def _repository_call(rng: random.Random, token: str) -> tuple[str, dict]:
    kind = rng.randrange(4)
    if kind == 0:
        return "write_file", {"path": rng.choice(_REPO_WRITES), "content": token}
    if kind == 1:
        return "make_directory", {"path": rng.choice(_REPO_MKDIRS)}
    if kind == 2:
        src, dst = rng.choice(_REPO_MOVES)
        return "move_file", {"source": src, "destination": dst}
    repo = rng.choice(["b.git", "c.git", "stage"])  # a whole repository in one patch
    sections = "".join(f"*** Add File: {repo}/{rel}\n+{token}\n" for rel in (
        "HEAD", "objects/info/packs", "refs/heads/main", "hooks/pre-receive"))
    return "apply_patch", {"input": f"*** Begin Patch\n{sections}*** End Patch\n"}


def _call(rng: random.Random, token: str) -> tuple[str, dict]:
    if rng.random() < REPO_SHARE:
        return _repository_call(rng, token)
    kind = rng.randrange(6)
    if kind == 5:  # apply_patch: one to three files, all or nothing
        sections = "".join(_patch_section(rng, token) for _ in range(rng.randint(1, 3)))
        return "apply_patch", {"input": f"*** Begin Patch\n{sections}*** End Patch\n"}
    if kind == 0:
        return "write_file", {"path": rng.choice(_WRITES), "content": token,
                              "overwrite": rng.random() < 0.7}
    if kind == 1:
        path = rng.choice(_EDITS)
        return "edit_file", {"path": path, "oldText": rng.choice(["checks", "A=1", "{}", "TOK",
                                                                  "a", "t"]),
                             "newText": token, "replaceAll": True}
    if kind == 2:
        src, dst = rng.choice(_MOVES)
        return "move_file", {"source": src, "destination": dst,
                             "overwrite": rng.random() < 0.3}
    if kind == 3:
        return "delete_file", {"path": rng.choice(_DELETES)}
    return "make_directory", {"path": rng.choice(_MKDIRS)}


def _repositories(base: Path) -> list[str]:
    """Directories below ``base`` git would take for a repository (read
    wide: HEAD beside objects and refs, or beside commondir)."""
    found = []
    for dirpath, dirnames, filenames in os.walk(base):
        names = set(dirnames) | set(filenames)
        if "HEAD" in names and ("commondir" in names or {"objects", "refs"} <= names):
            found.append(os.path.relpath(dirpath, base))
    return found


_TOKEN = re.compile(r"tok-\d+-\d+")  # an edit of "t" may splice tokens together


def _tokens_on_disk(base: Path) -> set[str]:
    found: set[str] = set()
    for dirpath, _dirs, files in os.walk(base):
        for name in files:
            path = os.path.join(dirpath, name)
            if os.path.islink(path):
                continue
            try:
                text = Path(path).read_text(errors="replace")
            except OSError:
                continue
            found.update(_TOKEN.findall(text))
    return found


@pytest.mark.long
def test_concurrent_calls_never_reach_a_guarded_name(sec_tmp, make_root):
    base = Path(sec_tmp)
    _fixture(base)
    box = Toolbox(make_root(str(base)), deny=["private"])
    bare_repository(base / "remote.git", hooks=False)  # made after the Toolbox opened
    acknowledged: set[str] = set()
    problems: list[str] = []
    guard = threading.Lock()
    per_thread = max(1, CALLS // THREADS)

    def worker(seed: int) -> None:
        rng = random.Random(seed)
        for i in range(per_thread):
            token = f"tok-{seed}-{i}"
            name, args = _call(rng, token)
            answer = box.call(name, args, timeout=5)
            text = repr(answer)
            if SECRET_TEXT in text:
                problems.append(f"revealed: {name} {args}")
            if answer["ok"]:
                if name in ("write_file", "edit_file", "apply_patch"):
                    with guard:
                        acknowledged.add(token)
                if name == "write_file" and answer["sha256"] != hashlib.sha256(
                        token.encode()).hexdigest():
                    problems.append(f"write answer disagrees: {args} {answer}")
            elif answer["code"] not in EXPECTED_CODES:
                problems.append(f"unexpected refusal: {name} {args} {answer}")

    threads = [threading.Thread(target=worker, args=(seed,)) for seed in range(THREADS)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(300)
    assert not any(thread.is_alive() for thread in threads)
    assert not problems, problems[:5]
    for rel, text in GUARDED_FILES.items():
        assert (base / rel).read_text() == text, rel
    for rel in NEVER:
        assert not os.path.lexists(base / rel), rel
    assert os.readlink(base / ".git" / "hooks" / "pre-commit") == "../../scripts/pre-commit"
    assert sorted(os.listdir(base / ".git" / "hooks")) == ["pre-commit"]
    assert _repositories(base) == ["remote.git"]
    unacknowledged = _tokens_on_disk(base) - acknowledged
    assert not unacknowledged, sorted(unacknowledged)[:5]
