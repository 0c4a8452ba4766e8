"""An independent red-team pass over main, tried as a hostile model would
through the tools' public surface: one call at a time and several at once
(``asyncio.gather`` over ``acall``, threads), aimed at protected, denied
and secret names.

Every test asserts the secure behaviour on every backend config.
"""

from __future__ import annotations

import json
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


# -- a search's pattern names a denied file, and its counts say whether it exists ---------------


def _probe_answers(box: Toolbox, tool: str, field: str, probes: list[str],
                   extra: dict) -> list[str]:
    """Each probe's answer, the probe's own text taken out."""
    answers = []
    for probe in probes:
        answer = box.call(tool, {**extra, field: probe})
        answers.append(json.dumps(answer, sort_keys=True).replace(probe, "PROBE"))
    return answers


@pytest.mark.parametrize("deny", [["secrets/*"], ["**/prod-db.txt"], ["secrets/**"]])
@pytest.mark.parametrize("tool,field,probes,extra", [
    ("glob", "pattern", ["secrets/prod-db.txt", "secrets/nope-xx.txt"], {}),
    ("glob", "pattern", ["**/prod-db.txt", "**/nope-xx.txt"], {}),
    ("glob", "pattern", ["secrets/prod*", "secrets/nope*"], {}),
    ("grep", "include", ["prod-db.txt", "nope-xx.txt"], {"pattern": "zzz"}),
    ("grep", "include", ["prod-*", "nope-*"], {"pattern": "zzz"}),
], ids=["glob-exact", "glob-any-depth", "glob-prefix", "grep-include", "grep-include-prefix"])
def test_a_search_naming_a_denied_file_answers_as_for_a_name_nobody_has(
        tmp_path, make_root, deny, tool, field, probes, extra):
    """``glob secrets/prod-db.txt`` answered ``denied: 1`` and ``glob
    secrets/nope-xx.txt`` nothing; ``grep include=prod-db.txt`` counted the
    denied file as included: one probe per guess (or a letter at a time,
    ``secrets/p*``, ``secrets/pr*``...) spells out the denied names."""
    (tmp_path / "secrets").mkdir()
    (tmp_path / "secrets" / "prod-db.txt").write_text("hunter2\n")
    (tmp_path / "a.txt").write_text("a\n")
    box = Toolbox(make_root(str(tmp_path)), deny=deny)
    answers = _probe_answers(box, tool, field, probes, extra)
    assert answers[0] == answers[1], answers
    assert "hunter2" not in repr(answers) and "prod-db" not in repr(answers), answers


@pytest.mark.parametrize("text", ["secrets/prod.txt", "secrets/sub", "secrets/prod.txt/"],
                         ids=["to-a-file", "to-a-folder", "to-a-file-as-folder"])
def test_a_search_meeting_a_link_into_a_denied_folder_answers_alike_present_or_not(
        tmp_path, make_root, text):
    """A link of the repository leading into a denied folder: a glob
    counted it as hidden where what it names exists and as a link where it
    does not (``skipped.symlinks``), telling whether a denied file is there."""
    answers = []
    for exists in (True, False):
        base = _denied_world(tmp_path / str(exists), exists)
        os.symlink(text, base / "lnk")
        box = Toolbox(make_root(str(base)), deny=["secrets"])
        answers.append([box.call("glob", {"pattern": "lnk"}),
                        box.call("glob", {"pattern": "*"}),
                        box.call("grep", {"pattern": "hunt"}),
                        box.call("read_file", {"path": "lnk"})])
    assert answers[0] == answers[1], answers
    assert "hunter2" not in repr(answers), answers
