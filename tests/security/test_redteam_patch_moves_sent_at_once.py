"""An independent red-team pass: one turn's calls sent at once
(``asyncio.gather`` over ``Toolbox.acall``, as the OpenAI Agents SDK runs
them) where patches move files: ``apply_patch`` sections that add a file
into ``y/``, rename a file into ``y/`` (``Update File`` + ``Move to``,
from ``z/`` or within ``y/``), two such sections in one patch, while
``move_file`` carries ``y`` onto ``.vscode``, ``.claude`` or
``.git/hooks`` (or ``z`` onto ``y``), ``make_directory`` makes ``y/hooks``,
``write_file`` and ``edit_file`` land in ``y``, and ``delete_file`` aims at
``.git/hooks``.  Each call alone is refused where it would put the model's
bytes where a host runs them; sent together they must be refused too.

Found nothing on this code (kept: the existing batteries send patches of
``Add File`` only, never a patch's rename racing a folder's move).  After
each round, every file under a watched name that holds the model's token
is judged by a fresh Toolbox: none may be one the policy protects.  No
answer may be ``INTERNAL`` or a time limit.  ``CORRAL_REDTEAM_ROUNDS``
sets the rounds per config (default 60; e.g. 2,000 for a soak run).
"""

from __future__ import annotations

import asyncio
import os
import random
import subprocess
from pathlib import Path

from corral.tools import Toolbox

ROUNDS = int(os.environ.get("CORRAL_REDTEAM_ROUNDS", "60"))
TOKEN = "MODEL-BYTES-7f3a"
WATCHED = (".vscode", ".claude", ".git/hooks", ".git/config", ".envrc")


def _patch(*lines: str) -> dict[str, str]:
    return {"input": "\n".join(("*** Begin Patch", *lines, "*** End Patch"))}


CALLS = [
    ("apply_patch", _patch("*** Add File: y/tasks.json", f"+{TOKEN}")),
    ("apply_patch", _patch("*** Update File: y/a.txt", "*** Move to: y/hooks/pre-commit", "@@",
                           "-a", f"+{TOKEN}")),
    ("apply_patch", _patch("*** Update File: z/a.txt", "*** Move to: y/settings.json", "@@",
                           "-a", f"+{TOKEN}")),
    ("apply_patch", _patch("*** Add File: y/mcp.json", f"+{TOKEN}",
                           "*** Update File: z/a.txt", "*** Move to: y/settings.local.json",
                           "@@", "-a", f"+{TOKEN}")),
    ("move_file", {"source": "y", "destination": ".vscode"}),
    ("move_file", {"source": "y", "destination": ".claude"}),
    ("move_file", {"source": "y", "destination": ".git/hooks"}),
    ("move_file", {"source": "z", "destination": "y"}),
    ("move_file", {"source": "y/a.txt", "destination": "q.txt"}),
    ("make_directory", {"path": "y/hooks"}),
    ("write_file", {"path": "y/settings.json", "content": TOKEN}),
    ("edit_file", {"path": "y/a.txt", "oldText": "a", "newText": TOKEN}),
    ("delete_file", {"path": ".git/hooks"}),
]


def _tree(base: Path) -> None:
    subprocess.run(["git", "init", "-q", str(base)], check=True)
    for name in (".git/hooks",):  # none at first: the move may make it
        for child in (base / name).iterdir():
            child.unlink()
        (base / name).rmdir()
    for folder in ("y", "z"):
        (base / folder).mkdir()
        (base / folder / "a.txt").write_text("a\n")


def _model_bytes_in_watched(base: Path) -> list[str]:
    found = []
    for name in WATCHED:
        top = base / name
        for path in [top, *(sorted(top.rglob("*")) if top.is_dir() else [])]:
            if path.is_file() and not path.is_symlink() and TOKEN.encode() in path.read_bytes():
                found.append(str(path.relative_to(base)))
    return found


def test_patch_renames_racing_folder_moves_never_reach_a_protected_name(tmp_path, make_root):
    rng = random.Random(20261206)
    outcomes: dict[tuple[str, str], int] = {}
    for round_ in range(ROUNDS):
        base = tmp_path / f"round{round_}"
        base.mkdir()
        _tree(base)
        box = Toolbox(make_root(str(base)))
        chosen = rng.sample(CALLS, rng.randint(2, 5))

        async def turn(box=box, chosen=chosen):
            return await asyncio.gather(*(box.acall(tool, args, timeout=20)
                                          for tool, args in chosen))

        answers = asyncio.run(turn())
        box.close()
        for (tool, args), answer in zip(chosen, answers):
            assert answer.get("code") != "INTERNAL", (round_, tool, args, answer)
            assert (answer.get("details") or {}).get("kind") != "time_limit", \
                (round_, tool, args, answer)
            key = (tool, answer.get("code") or "ok")
            outcomes[key] = outcomes.get(key, 0) + 1
        landed = _model_bytes_in_watched(base)
        if landed:
            judge = Toolbox(make_root(str(base)))
            protected = [rel for rel in landed
                         if judge.call("write_file", {"path": rel, "content": "x",
                                                      "overwrite": True}).get("code") == "DENIED"]
            judge.close()
            assert not protected, (round_, protected, list(zip(chosen, answers)))
    # the race was met: folders were moved onto protected names and refused, patches landed
    assert outcomes.get(("move_file", "DENIED"), 0) > 0, outcomes
    assert outcomes.get(("apply_patch", "ok"), 0) > 0, outcomes
    assert outcomes.get(("move_file", "ok"), 0) > 0, outcomes
