"""``file_info`` on a folder whose entries the host's rules hide.

A directory's link count is two plus its subdirectories, and its size
(on tmpfs: a few bytes an entry; elsewhere, blocks) grows with what it
holds: ``file_info secrets`` under ``deny=**/secrets/*`` said ``links: 4``
when two denied folders were inside and ``2`` when none was, and
``file_info .`` under ``deny=secrets`` told whether ``secrets`` exists.
A denied name answers as if it did not exist, identically whether or not
it exists, so a folder the rules may hide entries of says nothing that
counts one: its links are counted over the subdirectories it shows, its
size is left out.  Under no deny rule a folder's links are its own; no
folder is given a size (THREATS row 61: it would count a write's
temporary file in flight too).
On every backend config.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from corral.tools import Policy, Toolbox

# the fields an answer has that are not times (which differ between two trees)
SAID = ("ok", "path", "kind", "mode", "links", "size", "code", "message")


def _said(answer: dict) -> dict:
    return {key: answer.get(key) for key in SAID}


def _tree(base: Path, *, holding: bool) -> Path:
    (base / "secrets").mkdir(parents=True)
    (base / "pub" / "docs").mkdir(parents=True)
    if holding:
        for name in ("prod", "staging"):
            (base / "secrets" / name).mkdir()
        for index in range(40):
            (base / "secrets" / f"key{index}.txt").write_text("TOPSECRET\n")
    return base


@pytest.mark.parametrize(("deny", "path"), [
    (("**/secrets/*",), "secrets"),
    (("**/secrets/*",), "secrets/"),
    (("secrets/**",), "secrets"),
    (("secrets/**",), "secrets/prod"),
    (("secrets/**",), "secrets/prod/"),
    (("secrets",), "secrets/prod"),
])
def test_a_folder_holding_denied_names_answers_the_same_whatever_it_holds(
        tmp_path, make_root, deny, path):
    answers = []
    for holding in (True, False):
        top = _tree(tmp_path / str(holding), holding=holding)
        with Toolbox(make_root(top), policy=Policy(deny=deny)) as toolbox:
            answers.append(_said(toolbox.call("file_info", {"path": path})))
    assert answers[0] == answers[1], answers


@pytest.mark.parametrize("holding", [True, False])
def test_the_folder_above_a_denied_name_does_not_count_it(tmp_path, make_root, holding):
    top = tmp_path / "t"
    top.mkdir()
    (top / "pub").mkdir()
    if holding:
        (top / "secrets").mkdir()
    with Toolbox(make_root(top), policy=Policy(deny=("secrets",))) as toolbox:
        answer = toolbox.call("file_info", {"path": "."})
    assert answer["ok"] is True and answer["kind"] == "directory", answer
    assert answer["links"] == 3 and "size" not in answer, answer  # . and pub's ..


def test_the_links_of_a_folder_count_what_it_shows(tmp_path, make_root):
    top = _tree(tmp_path / "t", holding=True)
    (top / "pub" / "docs" / "secrets").mkdir()
    (top / "pub" / "api").mkdir()
    with Toolbox(make_root(top), policy=Policy(deny=("**/secrets/*",))) as toolbox:
        answers = [toolbox.call("file_info", {"path": path}) for path in ("pub", "pub/docs")]
    assert [answer["links"] for answer in answers] == [4, 3], answers
    assert (top / "pub").stat().st_nlink == 4


def test_with_no_rule_hiding_anything_a_folder_is_described_as_it_is(tmp_path, make_root):
    top = _tree(tmp_path / "t", holding=True)
    with Toolbox(make_root(top), policy=Policy.none()) as toolbox:
        answer = toolbox.call("file_info", {"path": "secrets"})
    assert answer["ok"] is True, answer
    assert answer["links"] == (top / "secrets").stat().st_nlink == 4
    assert "size" not in answer, answer
