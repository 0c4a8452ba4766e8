"""A tree holding more symlinks than the view remembers
(:data:`~corral.tools._runtime.view.links.MAX_LINKS`, made small here: a
repository of 100,001 links does the same) never has the links past the
bound forgotten: ``g<i>/.vscode -> ../f<i>`` still protects ``f<i>``, and
``h<i>/secrets -> ../v<i>`` under ``deny=**/secrets/**`` still denies
``v<i>``, whichever links were remembered (at open, or made by another
program while the Toolbox is open).  A call such a link could decide
refuses; nothing is created, no secret is shown."""
from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from corral.tools import Toolbox, Workspace
from corral.tools._runtime.view import links

PAIRS = 30  # of each kind: 60 links, the bound made 20
SECRET = "SECRET-7f3a"


def _make_links(base: Path) -> None:
    for i in range(PAIRS):
        (base / f"g{i}").mkdir()
        os.symlink(f"../f{i}", base / f"g{i}" / ".vscode")
        (base / f"h{i}").mkdir()
        os.symlink(f"../v{i}", base / f"h{i}" / "secrets")


@pytest.mark.parametrize("when", ["at_open", "made_later"])
def test_links_past_the_bound_still_protect_and_deny(sec_tmp, make_root, monkeypatch, when):
    monkeypatch.setattr(links, "MAX_LINKS", 20)
    base = Path(sec_tmp)
    for i in range(PAIRS):
        (base / f"f{i}").mkdir()
        (base / f"v{i}").mkdir()
        (base / f"v{i}" / "key.txt").write_text(f"{SECRET}\n")
    if when == "at_open":
        _make_links(base)
    box = Toolbox(make_root(sec_tmp), deny=["**/secrets/**"])
    if when == "made_later":
        _make_links(base)
        time.sleep(0.2)  # the kernel's watch tells of them
    answers = []
    for i in range(PAIRS):
        answers.append(box.call("write_file", {"path": f"f{i}/tasks.json", "content": "{}"}))
        answers.append(box.call("make_directory", {"path": f"f{i}/sub"}))
        answers.append(box.call("read_file", {"path": f"v{i}/key.txt"}))
        answers.append(box.call("edit_file", {"path": f"v{i}/key.txt", "oldText": "SECRET",
                                              "newText": "MODEL"}))
    answers.append(box.call("grep", {"pattern": "SECRET"}))
    answers.append(box.call("read_files", {"paths": [f"v{i}/key.txt" for i in range(PAIRS)]}))
    for answer in answers:
        assert SECRET not in str(answer), answer
    made = [f"f{i}" for i in range(PAIRS) if os.listdir(base / f"f{i}")]
    assert made == [], made
    kept = [f"v{i}" for i in range(PAIRS) if (base / f"v{i}" / "key.txt").read_text() != f"{SECRET}\n"]
    assert kept == [], kept


def test_links_out_to_another_root_past_the_bound_still_protect(tmp_path, make_root, monkeypatch):
    """A Workspace of ``app`` and ``shared`` beside it: ``app/g<i>/.vscode
    -> ../../shared/f<i>`` (links leading out of app, into shared), more of
    them than app's view remembers: none of shared's ``f<i>`` is written."""
    monkeypatch.setattr(links, "MAX_LINKS", 20)
    app, shared = tmp_path / "app", tmp_path / "shared"
    for i in range(PAIRS):
        (shared / f"f{i}").mkdir(parents=True)
        (app / f"g{i}").mkdir(parents=True)
        os.symlink(f"../../shared/f{i}", app / f"g{i}" / ".vscode")
    ws = Workspace({"app": Toolbox(make_root(str(app))),
                    "shared": Toolbox(make_root(str(shared)))})
    for i in range(PAIRS):
        answer = ws.call("write_file", {"path": f"shared/f{i}/tasks.json", "content": "{}"})
        assert answer["ok"] is False, answer
    made = [f"f{i}" for i in range(PAIRS) if os.listdir(shared / f"f{i}")]
    assert made == [], made
