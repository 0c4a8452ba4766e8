"""An independent red-team pass over main, tried as a hostile model would
through the tools' public surface: one call at a time and several at once
(``asyncio.gather`` over ``acall``, threads), aimed at protected, denied
and secret names.

Every test asserts the secure behaviour on every backend config.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from corral.tools import Toolbox


def _denied_world(base: Path, exists: bool) -> Path:
    """``secrets/`` denied; with ``exists`` it holds a file and a folder."""
    (base / "secrets").mkdir(parents=True)
    (base / "a.txt").write_text("a\n")
    if exists:
        (base / "secrets" / "prod.txt").write_text("hunter2\n")
        (base / "secrets" / "sub").mkdir()
    return base


# -- a move's trailing '/' asks about what a denied name holds ---------------------------------


@pytest.mark.parametrize("source,destination", [
    ("secrets/prod.txt/", "b"),
    ("secrets/sub/", "b"),
    ("a.txt", "secrets/prod.txt/"),
    ("a.txt", "secrets/sub/"),
], ids=["file-as-folder-source", "folder-source", "into-a-file", "into-a-folder"])
def test_a_moves_trailing_slash_answers_alike_whether_a_denied_name_exists(
        tmp_path, make_root, source, destination):
    """``move_file secrets/prod.txt/ b`` said ``secrets/prod.txt is a
    file`` where the file exists and ``DENIED`` where it does not; ``into``
    a denied file named its field differently: a model learns what a denied
    folder holds, and of what kind."""
    answers = []
    for exists in (True, False):
        base = _denied_world(tmp_path / str(exists), exists)
        box = Toolbox(make_root(str(base)), deny=["secrets"])
        answers.append(box.call("move_file", {"source": source, "destination": destination}))
    assert answers[0] == answers[1], answers
    assert answers[0]["ok"] is False and answers[0]["code"] == "DENIED", answers
    assert (tmp_path / "True" / "a.txt").exists()
