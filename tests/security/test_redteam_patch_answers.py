"""An independent red-team pass over what ``apply_patch`` answers against
the disk: random patches (one to four sections of Add, Delete, Update and
Update with Move to, on existing, missing, protected, linked and oddly
spelled paths, hunks from a pool of right and wrong lines, either dialect,
CRLF, cut off) on a small tree.  Every change on disk is named by the
answer (a file's path, its new name, the directories it made), a refusal
changes nothing, and ``.git/config`` and ``.envrc`` are never changed.
Before the fix a file moved into directories that did not exist made them
and the answer did not say so (``createdDirectories`` was missing from a
moved file's entry).  On every backend config; 100 patches a config
(``CORRAL_SOAK`` / 10,000 multiplies it).
"""

from __future__ import annotations

import os
import random
from pathlib import Path
from typing import Any

from corral.tools import Toolbox

SOAK = max(1, int(os.environ.get("CORRAL_SOAK", "10000") or "10000") // 10000)
PATCHES = 100 * SOAK

FILES = {"a.txt": "one\ntwo\nthree\n", "b.py": "def f():\n    return 1\n",
         "d/c.txt": "x\r\ny\r\n", "e.txt": ""}
PATHS = ["a.txt", "b.py", "d/c.txt", "e.txt", "new.txt", "d/new", "d", "x/y/z.txt",
         "n/m/o/p.txt", ".git/config", ".envrc", "d/../a.txt", "./a.txt", "a.txt/", "  a.txt",
         "l", "l2", "\u00e9.txt", "d\\c.txt"]
LINES = [" one", "-one", "+ONE", " two", "-two", "+", "+\t", "-three", " three", "@@",
         "@@ def f():", "*** End of File", "    return 1", "-    return 1", "+    return 2", " ",
         "", "-x\r", "+z\r", " x\r"]


def _patch(rng: random.Random) -> str:
    out: list[str] = []
    for _ in range(rng.randint(1, 4)):
        kind = rng.choice(["add", "delete", "update", "move"])
        path = rng.choice(PATHS)
        if kind == "add":
            out.append(f"*** Add File: {path}")
            out += ["+" + rng.choice(["hi", "", "\t"]) for _ in range(rng.randint(0, 3))]
        elif kind == "delete":
            out.append(f"*** Delete File: {path}")
        else:
            out.append(f"*** Update File: {path}")
            if kind == "move":
                out.append(f"*** Move to: {rng.choice(PATHS)}")
            for _ in range(rng.randint(1, 2)):
                out.append(rng.choice(["@@", "@@ def f():", "@@ two"]))
                out += [rng.choice(LINES) for _ in range(rng.randint(1, 4))]
    text = "*** Begin Patch\n" + "\n".join(out) + "\n*** End Patch\n"
    if rng.random() < 0.1:
        text = text.replace("\n", "\r\n")
    if rng.random() < 0.05:
        text = text[:rng.randint(0, len(text))]
    return text


def _snapshot(base: Path) -> dict[str, bytes | str | None]:
    seen: dict[str, bytes | str | None] = {}
    for path in base.rglob("*"):
        rel = str(path.relative_to(base))
        if path.is_symlink():
            seen[rel] = os.readlink(path)
        elif path.is_dir():
            seen[rel + "/"] = None
        else:
            seen[rel] = path.read_bytes()
    return seen


def _tree(base: Path) -> None:
    for rel, text in FILES.items():
        (base / rel).parent.mkdir(parents=True, exist_ok=True)
        with open(base / rel, "w", newline="") as out:
            out.write(text)
    (base / ".git").mkdir()
    (base / ".git" / "config").write_text("[core]\n")
    (base / ".envrc").write_text("export A=1\n")
    os.symlink("a.txt", base / "l")
    os.symlink("nope", base / "l2")


def _named(answer: dict[str, Any]) -> set[str]:
    named: set[str] = set()
    for entry in answer["files"]:
        named.add(entry["path"])
        if "movedTo" in entry:
            named.add(entry["movedTo"])
        named.update(f"{made}/" for made in entry.get("createdDirectories", ()))
    return named


def test_a_moved_file_names_the_directories_its_move_made(tmp_path, make_root):
    _tree(tmp_path)
    toolbox = Toolbox(make_root(str(tmp_path)), editing="apply_patch")
    answer = toolbox.call("apply_patch", {"input": "*** Begin Patch\n*** Update File: a.txt\n"
                                          "*** Move to: x/y/z.txt\n@@\n-one\n+ONE\n"
                                          "*** End Patch\n"})
    assert answer["ok"] is True, answer
    (moved,) = answer["files"]
    assert moved["movedTo"] == "x/y/z.txt"
    assert moved["createdDirectories"] == ["x", "x/y"]
    assert (tmp_path / "x" / "y" / "z.txt").read_text() == "ONE\ntwo\nthree\n"


def test_random_patches_answer_what_the_disk_shows(tmp_path, make_root):
    rng = random.Random(25)
    unreported: list[Any] = []
    for number in range(PATCHES):
        base = tmp_path / f"t{number}"
        base.mkdir()
        _tree(base)
        before = _snapshot(base)
        toolbox = Toolbox(make_root(str(base)), editing="apply_patch")
        text = _patch(rng)
        answer = toolbox.call("apply_patch", {"input": text,
                                              "dialect": rng.choice(["codex", "v4a"])})
        after = _snapshot(base)
        assert answer.get("code") != "INTERNAL", (text, answer)
        assert after[".git/config"] == before[".git/config"]
        assert after[".envrc"] == before[".envrc"]
        if answer["ok"] is not True:
            assert after == before, (text, answer)
            continue
        changed = {rel for rel in set(before) | set(after) if before.get(rel, b"\0missing")
                   != after.get(rel, b"\0missing")}
        if changed - _named(answer):
            unreported.append((text, answer, sorted(changed - _named(answer))))
    assert not unreported, unreported[:3]
