"""An independent red-team pass: what a call says it created, against the
disk, when another call (or program) makes the same directories while the
host is deciding.

``make_directory n/m`` answered ``created: true`` after someone else had
made it while the host decided, and ``apply_patch``'s ``*** Add File:
n/m/p`` answered ``createdDirectories: ["n", "n/m"]`` when another call of
the turn had made them: the plan was reported, not what the call did.  Sent together (one turn's calls through ``asyncio.gather``), two
calls both claimed to have created ``n`` (6 rounds in 40 here), and a host
undoing a turn by its answers removes a directory another call made.  On
every backend config.
"""

from __future__ import annotations

import asyncio
import collections
import os
from pathlib import Path

from corral.tools import Toolbox


def _made_meanwhile(base: Path):
    def authorize(request) -> None:
        os.makedirs(base / "n" / "m", exist_ok=True)
    return authorize


def test_make_directory_says_created_only_when_it_made_the_directory(tmp_path, make_root):
    box = Toolbox(make_root(str(tmp_path)), authorize=_made_meanwhile(tmp_path))
    answer = box.call("make_directory", {"path": "n/m"})
    assert answer["ok"] is True, answer
    assert answer["created"] is False, answer
    assert answer["createdDirectories"] == [], answer
    assert (tmp_path / "n" / "m").is_dir()


def test_no_two_calls_of_a_turn_claim_one_directory(tmp_path, make_root):
    """Every call of a turn sent at once; each directory is claimed by at
    most one answer, and one that is there is claimed by exactly one."""
    for turn_number in range(30):
        base = tmp_path / f"t{turn_number}"
        base.mkdir()
        (base / "a.py").write_text("a = 1\n")
        box = Toolbox(make_root(str(base)))
        calls = [("write_file", {"path": f"n/m/f{i}", "content": "x"}) for i in range(3)]
        calls += [("make_directory", {"path": "n/m"})] * 2
        calls += [("apply_patch", {"input": f"*** Begin Patch\n*** Add File: n/m/p{i}\n+x\n"
                                            "*** End Patch"}) for i in range(2)]
        calls += [("move_file", {"source": "a.py", "destination": "n/m/a.py"})]

        async def turn() -> list[dict]:
            return list(await asyncio.gather(*(box.acall(tool, args, timeout=10)
                                               for tool, args in calls)))

        claims: collections.Counter[str] = collections.Counter()
        for (tool, _), answer in zip(calls, asyncio.run(turn())):
            assert answer["ok"] is True, answer
            made = answer["files"][0]["createdDirectories"] if tool == "apply_patch" \
                else answer["createdDirectories"]
            claims.update(made)
        assert claims == {"n": 1, "n/m": 1}, (turn_number, claims)
