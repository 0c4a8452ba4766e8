"""An independent red-team pass: one turn's calls sent at once (``asyncio.gather`` over ``acall``), a root's
folder ``y`` moved onto protected places in the spellings another disk
folds (``.vscode.``, ``.VSCode``, ``.vscode`` with a zero-width joiner, a
fullwidth dot, ``.claude/skills``, ``.kiro/hooks``, a bare repository's
``hooks``) while writes, a patch and edits fill ``y`` with the names those
places run (``tasks.json``, ``settings.json``, ``SKILL.md``,
``pre-commit``), and a second Toolbox serving ``y`` itself writes there
too; reads of a denied file through a link's ``..`` beside them.  After
each turn no protected name holds anything new (by the disk's names,
folded as a case-insensitive, normalising or trailing-dot-dropping disk
would), no answer is ``INTERNAL`` and no secret is said.  On main every
run failed through the holes this round's other files pin (``y`` holding
``tasks.json`` moved onto ``.vscode.``, ``SKILL.md`` onto
``.claude/skills``); beyond those the turns found nothing (no race between
the calls, the served inner root's writes included).  Seeded; every
backend config.
"""

from __future__ import annotations

import asyncio
import json
import os
import random
import re
import subprocess
import unicodedata
from pathlib import Path

import pytest

from corral.tools import Toolbox

ROUNDS = 25
TARGETS = [".vscode", ".VSCode", ".vscode.", ".claude", ".claude/skills", ".git/hooks",
           ".husky", ".devcontainer", "sub/.vscode", ".githooks", ".Claude", "r.git/hooks",
           ".kiro/hooks", ".vscode\u200d", "\uff0evscode", ".claude/commands"]
RUN_NAMES = ["tasks.json", "settings.json", "pre-commit", "SKILL.md"]
_IGNORABLE = dict.fromkeys([0x200C, 0x200D, 0x200E, 0x200F, *range(0x202A, 0x202F),
                            *range(0x206A, 0x2070), 0xFEFF])
_PROTECTED = re.compile(
    r"^(sub/)?(\.vscode/(tasks|settings|launch|mcp)\.json|\.claude/(settings.*\.json|skills/.*"
    r"|commands/.*|agents/.*)|\.git/hooks/.*|\.git/config|r\.git/hooks/.*|\.husky/.*"
    r"|\.devcontainer/.*|\.githooks/.*|\.kiro/hooks/.*)$")


def _folded(path: str) -> str:
    path = unicodedata.normalize("NFC", path.translate(_IGNORABLE)).casefold()
    return "/".join(part.rstrip(". ") or part for part in path.split("/"))


def _tree(base: Path) -> Path:
    (base / "y").mkdir(parents=True)
    (base / "sub").mkdir()
    (base / "editor").mkdir()
    (base / "y" / "a.txt").write_text("alpha\n")
    os.symlink("editor", base / "lnk")
    subprocess.run(["git", "init", "-q", "--bare", str(base / "r.git")], check=True)
    subprocess.run(["git", "init", "-q", str(base)], check=True)
    (base / "secrets").mkdir()
    (base / "secrets" / "key.txt").write_text("TOKEN=q7-secret\n")
    return base


def _names(base: Path) -> set[str]:
    out = set()
    for top, dirs, files in os.walk(base):
        for name in dirs + files:
            out.add(os.path.relpath(os.path.join(top, name), base))
    return out


def _turn(rnd: random.Random) -> list[tuple[str, dict]]:
    calls: list[tuple[str, dict]] = []
    for _ in range(rnd.randint(3, 7)):
        target = rnd.choice(TARGETS)
        kind = rnd.randrange(8)
        if kind == 0:
            calls.append(("write_file", {"path": f"y/{rnd.choice(RUN_NAMES)}", "content": "x\n"}))
        elif kind == 1:
            calls.append(("move_file", {"source": "y", "destination": target}))
        elif kind == 2:
            calls.append(("make_directory", {"path": f"y/{rnd.choice(['d', 'hooks', 's/x'])}"}))
        elif kind == 3:
            calls.append(("write_file", {"path": f"y/d/{rnd.choice(RUN_NAMES)}", "content": "x\n"}))
        elif kind == 4:
            calls.append(("move_file", {"source": rnd.choice(["y", "y/d", "sub"]),
                                        "destination": rnd.choice(["z", "sub/y", "lnk/y",
                                                                   f"{target}/y"])}))
        elif kind == 5:
            calls.append(("apply_patch", {"input": (
                "*** Begin Patch\n*** Add File: y/d/tasks.json\n+x\n*** Update File: y/a.txt\n"
                f"*** Move to: {target}/{rnd.choice(RUN_NAMES)}\n@@\n-alpha\n+beta\n"
                "*** End Patch")}))
        elif kind == 6:
            calls.append(("move_file", {"source": rnd.choice(["z", "sub/y", "lnk/y"]),
                                        "destination": rnd.choice(["y", target])}))
        else:
            calls.append(("read_file", {"path": rnd.choice(["secrets/key.txt",
                                                            "lnk/../secrets/key.txt"])}))
    return calls


@pytest.mark.parametrize("seed", [1, 2])
def test_spellings_of_protected_places_sent_at_once(tmp_path, make_root, seed):
    rnd = random.Random(seed)

    async def turn(base: Path) -> list[dict]:
        box = Toolbox(make_root(str(base)), deny=["secrets/**"])
        inner = Toolbox(make_root(str(base / "y"))) if rnd.random() < 0.5 else None
        try:
            coros = [box.acall(tool, args) for tool, args in _turn(rnd)]
            if inner is not None:
                coros += [inner.acall("write_file", {"path": rnd.choice(RUN_NAMES),
                                                     "content": "x\n"}) for _ in range(2)]
            return list(await asyncio.gather(*coros))
        finally:
            box.close()
            if inner is not None:
                inner.close()

    for n in range(ROUNDS):
        base = _tree(tmp_path / f"t{n}")
        before = _names(base)
        answers = asyncio.run(turn(base))
        said = json.dumps(answers)
        new = [p for p in _names(base) - before if _PROTECTED.match(_folded(p))]
        assert new == [], (n, new, answers)
        assert "INTERNAL" not in said and "q7-secret" not in said, (n, answers)
