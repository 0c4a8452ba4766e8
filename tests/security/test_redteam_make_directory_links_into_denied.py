"""An independent red-team pass: ``make_directory`` on a link into a denied
folder as an existence oracle.  ``deny secrets/**``; the tree has
``pub/dd -> ../secrets/d``, ``pub/l -> ../secrets/key.txt``,
``pub/deep -> ../secrets/d/key.txt`` and ``pub/chain -> dd``.  Each call is
made on three trees that differ only inside the denied folder
(``secrets/d`` and the files there, ``secrets/`` empty, ``secrets/``
missing).  Before the fix ``make_directory pub/dd`` answered ok
("exists, nothing created") when ``secrets/d`` was a directory,
``ALREADY_EXISTS`` (a symlink) when ``secrets/`` was empty and ``DENIED``
when it was missing: three answers telling what the denied folder holds.
A link is now decided on where it leads, whether that is there or not;
every answer is the same on the three trees.  On every backend config,
one call at a time and one turn's calls at once.
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
from pathlib import Path

import pytest

from corral.tools import Toolbox

SHAPES = ("present", "empty", "missing")
PATHS = ["pub/dd", "pub/dd/", "pub/l", "pub/deep", "pub/chain", "pub/dd/x", "pub/chain/x/y"]


def _tree(base: Path, shape: str) -> Path:
    (base / "secrets" / "d").mkdir(parents=True)
    (base / "secrets" / "key.txt").write_text("TOPSECRET\n")
    (base / "secrets" / "d" / "key.txt").write_text("TOPSECRET\n")
    (base / "pub").mkdir()
    os.symlink("../secrets/d", base / "pub" / "dd")
    os.symlink("../secrets/key.txt", base / "pub" / "l")
    os.symlink("../secrets/d/key.txt", base / "pub" / "deep")
    os.symlink("dd", base / "pub" / "chain")
    if shape == "empty":
        shutil.rmtree(base / "secrets")
        (base / "secrets").mkdir()
    elif shape == "missing":
        shutil.rmtree(base / "secrets")
    return base


def _listing(base: Path) -> list[str]:
    return sorted(str(p.relative_to(base)) for p in base.rglob("*"))


@pytest.mark.parametrize("at_once", [False, True], ids=["one_by_one", "at_once"])
def test_make_directory_on_a_link_into_a_denied_folder_tells_nothing(tmp_path, make_root,
                                                                    at_once):
    answers: dict[str, list[str]] = {}
    for shape in SHAPES:
        base = _tree(tmp_path / shape, shape)
        before = _listing(base)
        toolbox = Toolbox(make_root(str(base)), deny=["secrets/**"])
        if at_once:
            async def turn() -> list[dict[str, object]]:
                return await asyncio.gather(*[toolbox.acall("make_directory", {"path": path})
                                              for path in PATHS])
            got = asyncio.run(turn())
        else:
            got = [toolbox.call("make_directory", {"path": path}) for path in PATHS]
        for path, envelope in zip(PATHS, got):
            assert envelope["ok"] is False, (shape, path, envelope)
            answers.setdefault(path, []).append(json.dumps(envelope, sort_keys=True))
        assert _listing(base) == before, shape
    differing = {path: got for path, got in answers.items() if len(set(got)) > 1}
    assert not differing, differing
