"""An independent red-team pass: ``move_file`` of a link whose chain of
links ends in a denied directory (``pub/chain -> l``, ``pub/l ->
../secrets/key.txt``; deny ``secrets/**``), made on three trees: the
denied directory holding the file, empty, and missing.  A denied name is
answered identically whether or not it exists: the move of the chain was
refused while ``secrets/`` existed and made when it did not (the link
``l`` then dangles, and the chain was taken for one that leads nowhere),
which told whether the denied directory exists.  Every backend config,
alone and with the calls sent at once.
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
from pathlib import Path

import pytest

from corral.tools import Toolbox

DENY = ["secrets/**"]
SHAPES = ("present", "empty", "missing")


def _tree(base: Path, shape: str) -> Path:
    (base / "secrets" / "d").mkdir(parents=True)
    (base / "secrets" / "key.txt").write_text("TOPSECRET\n")
    (base / "secrets" / "d" / "f.txt").write_text("TOPSECRET\n")
    (base / "pub").mkdir()
    os.symlink("../secrets/key.txt", base / "pub" / "l")
    os.symlink("l", base / "pub" / "chain")  # a chain of two
    os.symlink("chain", base / "pub" / "chain3")  # of three
    os.symlink("../secrets/d", base / "pub" / "dd")
    os.symlink("dd", base / "pub" / "dchain")  # to a denied directory
    os.symlink("pub/chain", base / "top")  # a chain starting elsewhere
    if shape == "empty":
        shutil.rmtree(base / "secrets")
        (base / "secrets").mkdir()
    elif shape == "missing":
        shutil.rmtree(base / "secrets")
    return base


# each to where its text still leads the same way (a relative text is read
# from the link's new directory)
CALLS = [("pub/chain", "pub/moved"), ("pub/chain3", "pub/moved"), ("pub/dchain", "pub/moved"),
         ("top", "moved"), ("top", "elsewhere")]


def _said(answer: dict, base: Path) -> str:
    return json.dumps(answer, sort_keys=True).replace(str(base), "ROOT")


@pytest.mark.parametrize(("source", "destination"), CALLS,
                         ids=[f"{s}->{d}" for s, d in CALLS])
def test_moving_a_chain_into_a_denied_directory_tells_nothing_of_it(
        tmp_path, make_root, source, destination):
    answers = {}
    for shape in SHAPES:
        base = _tree(tmp_path / shape, shape)
        box = Toolbox(make_root(str(base)), deny=DENY)
        answer = box.call("move_file", {"source": source, "destination": destination})
        answers[shape] = _said(answer, base)
        assert answer["ok"] is False and answer["code"] == "DENIED", (shape, answer)
        assert os.path.islink(base / source), (shape, answer)  # not moved
    assert answers["present"] == answers["empty"] == answers["missing"], answers


def test_moving_chains_into_a_denied_directory_at_once_tells_nothing(tmp_path, make_root):
    results = {}
    for shape in SHAPES:
        base = _tree(tmp_path / shape, shape)
        box = Toolbox(make_root(str(base)), deny=DENY)

        async def turn() -> list[dict]:
            return list(await asyncio.gather(*(
                box.acall("move_file", {"source": source, "destination": f"{destination}{n}"})
                for n, (source, destination) in enumerate(CALLS))))

        results[shape] = [_said(answer, base).replace(str(n), "N") for n, answer in
                          enumerate(asyncio.run(turn()))]
        for source, _ in CALLS:
            assert os.path.islink(base / source), (shape, source)
    assert results["present"] == results["empty"] == results["missing"], results
