"""An independent red-team pass (round twenty-four, first team; a battery
kept for the shapes): one turn's calls sent at once (``asyncio.gather``
over ``acall``, half through a second Toolbox of the same root) must answer
as the same calls made one at a time in some order would, and leave the
disk as that order does.

Each round builds a small tree whose names ``x``, ``y`` and ``.vscode`` are
each a file, a directory (empty or holding a file), a link to a file, a
link to a directory, a link into the denied ``vault`` or a link to the
folder ``e`` (``.vscode -> e`` makes ``e`` protected), or missing; sends
four calls drawn from moves (onto each other with and without
``overwrite``, into each other, into ``vault``, onto ``.vscode``), deletes,
``make_directory``, writes (``tasks.json`` into each name and into ``e``),
edits, and every read tool (``read_file``, ``read_files``, ``file_info``,
``list_directory`` flat and as a tree, ``glob``, ``grep``) over the same
names and the root; then replays the
four calls one at a time in each order on a fresh copy of the tree, and
asserts some order gives the same answers and the same disk.  An answer is
compared by what it says (an ok answer's fields but its times and digests;
a refusal's code and kind: a hint's "did you mean" is looked for as the
tree changes); ``STALE`` (nothing done, the model is told to look again)
matches any answer.  Also, in every round: no secret of ``vault`` in any
answer, no ``INTERNAL``, no time limit.

What it would catch: a call that answered ok for what it did not do, or
did what it answered refused (``overwritten``, ``created``,
``createdDirectories`` and the disk checked); a read answering a state the
disk never had (a symlink loop that never was: THREATS row 41 was found
here); a protected file created by a move and a write each allowed alone;
a pair of calls that waits on each other (a 10 s deadline, a time limit
answered); a denied file told.

A read beside a write in flight once showed the write's temporary file
(``.NAME.<12 hex>.corral-tmp``; grep answered "1 file searched, no match"
of it, empty): corral's own in-flight names are now never shown nor
counted (THREATS row 61), and an answer naming one fails the round.  With
glob, grep and list_directory back in the pool it found two more shapes,
fixed: a walk beside a move met a folder at neither name (row 62: a walk
holds the tree lock shared), and a write making parents made them one at
a time, so a ``file_info`` or a listing between two saw a chain half made
(row 63: such a step holds the tree lock alone; a look of several reads
holds it shared), so a directory's ``links`` is compared again.

``CORRAL_SOAK`` / 10,000 multiplies the rounds (40 per config by default,
about 15 s a config here).
"""

from __future__ import annotations

import asyncio
import itertools
import json
import os
import random
import re
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from corral.contained import Root, backend_by_name
from corral.tools import Limits, Toolbox

from .helpers.disk import entries

SOAK = max(1, int(os.environ.get("CORRAL_SOAK", "10000") or "10000") // 10000)
ROUNDS = 40 * SOAK
SECRET = "vault-secret-7f3a"
NAMES = ("x", "y", ".vscode")
KINDS = ("file", "dir", "dir-full", "link-file", "link-dir", "link-vault", "link-e", None)
DENY = ["vault/**"]
Call = tuple[str, dict[str, Any]]
IN_FLIGHT = re.compile(r"\.[0-9a-f]{12}\.corral-tmp")  # a write's temporary file (docstring)


def _build(base: Path, kinds: dict[str, str]) -> None:
    (base / "t").mkdir()
    (base / "e").mkdir()
    (base / "tf").write_text("tf\n")
    (base / "vault" / "s").mkdir(parents=True)
    (base / "vault" / "s" / "k").write_text(SECRET + "\n")
    for name, kind in kinds.items():
        place = base / name
        if kind == "file":
            place.write_text(f"{name} text\n")
        elif kind in ("dir", "dir-full"):
            place.mkdir()
            if kind == "dir-full":
                (place / "in").write_text("in text\n")
        else:
            os.symlink({"link-file": "tf", "link-dir": "t", "link-vault": "vault/s",
                        "link-e": "e"}[kind], place)


def _said(answer: dict[str, Any]) -> object:
    """What an answer says, for comparing with another order's."""
    if not answer.get("ok"):
        if answer.get("code") == "STALE":
            return "STALE"
        return (answer.get("code"), answer.get("details", {}).get("kind"))
    if "files" in answer:  # read_files: each file's own answer
        return [_said(one) for one in answer["files"]]
    return json.dumps({key: value for key, value in answer.items()
                       if key not in ("sha256", "mode") and "time" not in key.lower()
                       and not key.endswith("Ns")}, sort_keys=True)


def _agree(sent: list[object], replayed: list[object]) -> bool:
    """Answer by answer (read_files' by file): equal, or one of them STALE."""
    return len(sent) == len(replayed) and all(
        a == b or "STALE" in (a, b)
        or (isinstance(a, list) and isinstance(b, list) and _agree(a, b))
        for a, b in zip(sent, replayed))


def _calls(rng: random.Random) -> list[Call]:
    a, b = rng.sample(NAMES, 2)
    pool: list[Call] = [
        ("move_file", {"source": a, "destination": b, "overwrite": True}),
        ("move_file", {"source": a, "destination": b}),
        ("move_file", {"source": a, "destination": f"{b}/z"}),
        ("move_file", {"source": a, "destination": "vault/m"}),
        ("move_file", {"source": "t", "destination": a}),
        ("move_file", {"source": "e", "destination": a, "overwrite": True}),
        ("move_file", {"source": f"{a}/in", "destination": f"{b}/tasks.json"}),
        ("delete_file", {"path": a}),
        ("delete_file", {"path": f"{a}/in"}),
        ("make_directory", {"path": a}),
        ("make_directory", {"path": f"{a}/q"}),
        ("write_file", {"path": a, "content": "w1\n", "overwrite": True}),
        ("write_file", {"path": f"{a}/tasks.json", "content": "w2\n"}),
        ("write_file", {"path": f"{a}/{b}/tasks.json", "content": "w3\n"}),
        ("write_file", {"path": "e/tasks.json", "content": "w4\n"}),
        ("edit_file", {"path": f"{a}/in", "oldText": "in text", "newText": "edited"}),
        ("read_file", {"path": a}),
        ("read_file", {"path": f"{a}/k"}),
        ("read_file", {"path": f"{a}/in"}),
        # one path each: a batch reads its files one after another, not at one instant
        ("read_files", {"paths": [a]}),
        ("read_files", {"paths": [f"{b}/in"]}),
        ("file_info", {"path": a}),
        ("file_info", {"path": f"{a}/k"}),
        ("list_directory", {"path": a}),
        ("list_directory", {"path": ".", "depth": 3}),
        ("glob", {"pattern": "**/k", "path": a}),
        ("glob", {"pattern": "**", "path": "."}),
        ("grep", {"pattern": "vault|text|w", "path": a}),
        ("grep", {"pattern": "w", "path": "."}),
    ]
    return rng.sample(pool, 4)


@contextmanager
def _toolbox(base: Path, make_root: Any) -> Iterator[Toolbox]:
    """A Toolbox on its own Root of ``base`` (closed after: the rounds open many)."""
    root = Root(str(base), backend=backend_by_name(make_root.backend_name),
                fast_path=make_root.fast_path)
    try:
        with Toolbox(root, deny=DENY, limits=Limits(call_seconds=10.0)) as box:
            yield box
    finally:
        root.close()


async def _at_once(boxes: tuple[Toolbox, Toolbox], calls: list[Call]) -> list[dict[str, Any]]:
    return list(await asyncio.gather(*(boxes[i % 2].acall(name, args)
                                       for i, (name, args) in enumerate(calls))))


def _an_order_agrees(base: Path, make_root: Any, kinds: dict[str, str],
                     calls: list[Call], said: list[object],
                     left: list[tuple[str, ...]]) -> bool:
    for order in itertools.permutations(range(len(calls))):
        shutil.rmtree(base)
        base.mkdir()
        _build(base, kinds)
        replayed: list[object] = [None] * len(calls)
        with _toolbox(base, make_root) as one, _toolbox(base, make_root) as two:
            for i in order:
                replayed[i] = _said((one, two)[i % 2].call(*calls[i]))
        if _agree(said, replayed) and entries(base) == left:
            return True
    return False


@pytest.mark.parametrize("seed", [24, 2024])
def test_calls_sent_at_once_answer_as_some_order_of_them(sec_tmp, make_root, seed):
    rng = random.Random(seed)
    base = Path(sec_tmp) / "w"
    disagreed: list[str] = []
    for _ in range(ROUNDS):
        kinds = {name: kind for name in NAMES if (kind := rng.choice(KINDS)) is not None}
        calls = _calls(rng)
        if base.exists():
            shutil.rmtree(base)
        base.mkdir()
        _build(base, kinds)
        with _toolbox(base, make_root) as one, _toolbox(base, make_root) as two:
            answers = asyncio.run(_at_once((one, two), calls))
        text = json.dumps(answers)
        assert SECRET not in text, (kinds, calls, answers)
        assert '"INTERNAL"' not in text and "time_limit" not in text, (kinds, calls, answers)
        left = entries(base)
        said = [_said(answer) for answer in answers]
        # a write's temporary file is never shown (no order shows one), and
        # the rest must be some order's answers
        if IN_FLIGHT.search(text) or not _an_order_agrees(base, make_root, kinds, calls,
                                                          said, left):
            disagreed.append(json.dumps({"tree": kinds, "calls": calls, "answers": answers,
                                         "disk": left})[:3000])
    assert not disagreed, "\n".join(disagreed)
