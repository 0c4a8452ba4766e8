"""An independent red-team pass over a workspace's suggestions of another
root: a model names a path without its root (or under the wrong root), and
the answer offers the one root where that path is (``didYouMean``).  That
offer must never tell whether a denied name exists.

Root ``api`` denies ``secrets/**`` and holds links into it
(``pub/l -> ../secrets/key.txt``, ``pub/deep -> ../secrets/d/key.txt``,
``pub/chain -> l``).  Each call is made on three trees that differ only
inside the denied name (``secrets/`` holding the files, ``secrets/``
empty, ``secrets/`` missing); every answer must be the same on the three.
Before the fix the workspace offered ``api/pub/l`` exactly when
``secrets/`` was missing (a link whose target's folder is missing was
weighed as the link alone): whether a denied folder exists, told to
anyone naming a link to it.  On every backend config.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

from corral.tools import Toolbox, Workspace

SHAPES = ("present", "empty", "missing")
LINKS = ("pub/l", "pub/deep", "pub/chain")


def _trees(base: Path, shape: str) -> tuple[Path, Path]:
    web, api = base / "web", base / "api"
    (web / "src").mkdir(parents=True)
    (web / "src" / "a.py").write_text("a = 1\n")
    (api / "secrets" / "d").mkdir(parents=True)
    (api / "secrets" / "key.txt").write_text("TOPSECRET\n")
    (api / "secrets" / "d" / "key.txt").write_text("TOPSECRET\n")
    (api / "pub").mkdir()
    os.symlink("../secrets/key.txt", api / "pub" / "l")
    os.symlink("../secrets/d/key.txt", api / "pub" / "deep")
    os.symlink("l", api / "pub" / "chain")
    if shape == "empty":
        shutil.rmtree(api / "secrets")
        (api / "secrets").mkdir()
    elif shape == "missing":
        shutil.rmtree(api / "secrets")
    return web, api


def _calls() -> list[tuple[str, dict[str, object]]]:
    calls: list[tuple[str, dict[str, object]]] = []
    for link in LINKS:
        for spelled in (link, f"web/{link}"):
            calls += [
                ("read_file", {"path": spelled}),
                ("file_info", {"path": spelled}),
                ("list_directory", {"path": spelled}),
                ("grep", {"pattern": "x", "path": spelled}),
                ("glob", {"pattern": "*", "path": spelled}),
                ("edit_file", {"path": spelled, "oldText": "a", "newText": "b"}),
                ("delete_file", {"path": spelled}),
                ("move_file", {"source": spelled, "destination": "web/moved"}),
                ("read_files", {"paths": [spelled]}),
            ]
    return calls


def _answers(tmp_path: Path, make_root, shape: str) -> list[str]:
    web, api = _trees(tmp_path / shape, shape)
    workspace = Workspace({"web": Toolbox(make_root(str(web))),
                           "api": Toolbox(make_root(str(api)), deny=["secrets/**"])})
    answers = []
    for tool, args in _calls():
        envelope = workspace.call(tool, args)
        # read_files answers each file in its list: one refused file inside
        assert envelope["ok"] is False or tool == "read_files", (tool, args, envelope)
        answers.append(json.dumps(envelope, sort_keys=True))
    return answers


def test_another_roots_offer_does_not_tell_whether_a_denied_folder_exists(tmp_path, make_root):
    by_shape = {shape: _answers(tmp_path, make_root, shape) for shape in SHAPES}
    calls = _calls()
    differing = [(calls[k], {shape: by_shape[shape][k] for shape in SHAPES})
                 for k in range(len(calls))
                 if len({by_shape[shape][k] for shape in SHAPES}) > 1]
    assert not differing, differing[:3]


@pytest.mark.parametrize("shape", SHAPES)
def test_a_link_into_a_denied_folder_is_not_shown_whatever_the_folder_holds(tmp_path, make_root,
                                                                             shape):
    _, api = _trees(tmp_path / shape, shape)
    toolbox = Toolbox(make_root(str(api)), deny=["secrets/**"])
    assert [toolbox.shows(link) for link in LINKS] == [False, False, False]
    assert toolbox.shows("pub") is True  # the folder holding them may be named
