"""An independent red-team pass: moving a folder that holds a link into a
denied directory, or a denied directory itself, as an existence oracle.

``pub/dl -> ../vault/secrets/a/b/c`` with ``vault/secrets/**`` denied:
``move_file pub -> pub2`` was refused when ``c`` held a file and allowed
when ``c`` was empty, missing, or its parents ``b`` and ``a`` were missing
too (the move walked what the carried link leads to).  Whether a denied
directory exists, or holds anything, was told to anyone holding a link
into it.  A carried link is now decided on the name it leads to, never on
what is there: every shape answers the same.

The folder that holds a denied entry by name (``box/private`` with
``box/private/**`` denied) is refused when the entry is there: that tells
what ``list_directory box`` tells by design (its ``denied`` count, never
which name), and the refusal reads the same whatever the denied entry is
or holds; pinned here with the listing beside it.

On every backend config; one call at a time and one turn's calls at once.
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
from pathlib import Path

import pytest

from corral.tools import Toolbox

CHAIN = ("vault", "secrets", "a", "b", "c")
SHAPES = ("file", "empty", "no-c", "no-b", "no-a")
DENIES = (["vault/secrets/**"], ["vault/secrets"], ["**/secrets"], ["vault/secrets/a/**"])


def _tree(base: Path, shape: str, depth: int) -> Path:
    base.mkdir(parents=True)
    (base / "src").mkdir()
    (base / "src" / "a.py").write_text("a = 1\n")
    deepest = base.joinpath(*CHAIN)
    deepest.mkdir(parents=True)
    (deepest / "key.txt").write_text("TOPSECRET\n")
    (base / "pub").mkdir()
    (base / "pub" / "readme.md").write_text("hello\n")
    os.symlink("../" + "/".join(CHAIN[:depth]), base / "pub" / "dl")
    cut = {"empty": None, "no-c": 5, "no-b": 4, "no-a": 3}.get(shape)
    if shape == "empty":
        (deepest / "key.txt").unlink()
    elif cut is not None:
        shutil.rmtree(base.joinpath(*CHAIN[:cut]))
    return base


# beside where it is, the link still leads into the denied directory: refused;
# one level down its text ("../vault/...") leads to src/vault/...: allowed
# unless a rule denies that too
MOVES = [
    ({"source": "pub", "destination": "pub2"}, False),
    ({"source": "pub/", "destination": "pub3"}, False),
    ({"source": "pub", "destination": "src/"}, True),
    ({"source": "pub/", "destination": "deep/pub"}, True),
]


def _shown(answer: dict, base: Path) -> str:
    return json.dumps(answer, sort_keys=True).replace(str(base), "ROOT")


# (deny, how deep the link leads): always into the denied region (a link to
# vault/secrets/a under "vault/secrets/a/**" leads to a visible folder, whose
# denied entries its listing counts)
LEADS = [(deny, depth) for deny in DENIES for depth in (3, 4, 5)
         if not (deny == ["vault/secrets/a/**"] and depth == 3)]


@pytest.mark.parametrize(("deny", "depth"), LEADS,
                         ids=[f"{deny[0]}-depth{depth}" for deny, depth in LEADS])
def test_moving_a_folder_holding_a_link_into_a_denied_directory_tells_nothing(
        tmp_path, make_root, deny, depth):
    for args, allowed in MOVES:
        answers = {}
        for shape in SHAPES:
            base = _tree(tmp_path / f"{MOVES.index((args, allowed))}-{shape}", shape,
                         depth)
            box = Toolbox(make_root(str(base)), deny=deny)
            answer = box.call("move_file", args)
            answers[shape] = _shown(answer, base)
            if allowed and deny != ["**/secrets"]:  # there src/vault/secrets is denied too
                assert answer["ok"] is True, (shape, answer)
                continue
            assert answer["ok"] is False and answer["code"] == "DENIED", (shape, answer)
            assert os.path.islink(base / "pub" / "dl"), shape
            assert "TOPSECRET" not in answers[shape]
        assert len(set(answers.values())) == 1, (args, answers)


def test_moving_folders_holding_links_into_denied_answers_alike_under_gather(tmp_path, make_root):
    results: dict[str, list[str]] = {}
    for shape in SHAPES:
        base = _tree(tmp_path / shape, shape, 5)
        box = Toolbox(make_root(str(base)), deny=["vault/secrets/**"])

        async def turn() -> list[dict]:
            return list(await asyncio.gather(*(box.acall("move_file", args, timeout=10)
                                               for args, allowed in MOVES if not allowed)))

        answers = asyncio.run(turn())
        # they race for one folder: each is refused, whichever runs first
        assert all(answer["ok"] is False for answer in answers), answers
        results[shape] = sorted(_shown(answer, base) for answer in answers)
        assert (base / "pub" / "readme.md").read_text() == "hello\n"
    assert all(results[shape] == results["file"] for shape in SHAPES), results


DENIED_CONTENT = {
    "a-file": {"box/private": "k\n"},
    "empty-folder": {"box/private/": None},
    "deep-file": {"box/private/x/y/z.txt": "k\n"},
    "several": {"box/private/a.txt": "k\n", "box/private/b/": None},
}


def _content_tree(base: Path, content: dict[str, str | None]) -> None:
    (base / "box").mkdir(parents=True)
    (base / "box" / "open.txt").write_text("visible\n")
    for path, text in content.items():
        target = base / path
        if text is None:
            target.mkdir(parents=True)
        else:
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(text)


def test_a_folder_holding_a_denied_entry_tells_no_more_than_its_listing(tmp_path, make_root):
    answers = {}
    for name, content in DENIED_CONTENT.items():
        base = tmp_path / name
        _content_tree(base, content)
        box = Toolbox(make_root(str(base)), deny=["box/private"])
        listing = box.call("list_directory", {"path": "box"})
        assert listing["ok"] is True and listing["denied"] == 1, listing
        assert [entry["name"] for entry in listing["entries"]] == ["open.txt"]
        answer = box.call("move_file", {"source": "box", "destination": "moved"})
        assert answer["ok"] is False and answer["details"]["kind"] == "deny_rule", answer
        answers[name] = _shown(answer, base)
        assert "private" not in answers[name]
    assert len(set(answers.values())) == 1, answers
    base = tmp_path / "none"
    _content_tree(base, {})
    box = Toolbox(make_root(str(base)), deny=["box/private"])
    listing = box.call("list_directory", {"path": "box"})
    assert "denied" not in listing, listing  # the listing says so first: nothing there
    assert box.call("move_file", {"source": "box", "destination": "moved"})["ok"] is True
