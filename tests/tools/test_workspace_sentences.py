"""With several roots, a refusal's sentences name paths as the model spells
them: with the root's name first.  The details were always rewritten so;
the message and hint said ``qzfile.txt`` where the model must write
``web/qzfile.txt`` (a hint's "pass destination \"qzdir/\"" named a path no
call could use).  Every path a sentence names here carries ``qz``, so each
must read ``web/...``.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from corral.tools import Toolbox, Workspace

PATCH_MISS = ("*** Begin Patch\n*** Update File: web/qzfile.txt\n@@\n-not in the file\n"
              "+new\n*** End Patch\n")

CALLS: list[tuple[str, dict[str, Any]]] = [
    ("read_file", {"path": "web/qzmissing.txt"}),
    ("read_file", {"path": "web/qzgone/x.txt"}),
    ("read_file", {"path": "web/qzfile.txt/x"}),
    ("read_file", {"path": "web/qzdir"}),
    ("read_file", {"path": "web/qzsecret/key.txt"}),
    ("read_file", {"path": "web/qzdir/.env"}),
    ("write_file", {"path": "web/.git/hooks/qzhook", "content": "x"}),
    ("write_file", {"path": "web/qzfile.txt", "content": "x"}),
    ("write_file", {"path": "web/qzdir", "content": "x", "overwrite": True}),
    ("write_file", {"path": "web/qznew.txt", "content": "x", "expectedSha256": "0" * 64}),
    ("move_file", {"source": "web/qzfile.txt", "destination": "web/qzdir"}),
    ("move_file", {"source": "web/qzfile.txt", "destination": "web/qzfile.txt"}),
    ("move_file", {"source": "web/qzfile.txt/", "destination": "web/qzb.txt"}),
    ("move_file", {"source": "web/qzdir", "destination": "web/qzdir/inner"}),
    ("delete_file", {"path": "web/qzdir"}),
    ("delete_file", {"path": "web/qzfile.txt/"}),
    ("make_directory", {"path": "web/qzfile.txt"}),
    ("apply_patch", {"input": PATCH_MISS}),
    ("edit_file", {"path": "web/qzfile.txt", "oldText": "not there", "newText": "x"}),
    ("edit_file", {"path": "web/qznew.txt", "oldText": "a", "newText": "b"}),
    ("list_directory", {"path": "web/qzfile.txt"}),
    ("glob", {"pattern": "*", "path": "web/qzfile.txt"}),
    ("read_file", {"path": "web/qzd*/one.txt"}),
    ("read_file", {"path": "web/qzfile.txt", "offset": 50}),
]


def _paths(text: str) -> list[str]:
    return re.findall(r"[\w./-]*qz[\w./-]*", text)


@pytest.fixture
def ws(tmp_path: Path):
    web, api = tmp_path / "web", tmp_path / "api"
    (web / "qzdir").mkdir(parents=True)
    (web / "qzdir" / "one.txt").write_text("one\n")
    (web / "qzdir" / ".env").write_text("TOKEN=1\n")
    (web / "qzsecret").mkdir()
    (web / "qzsecret" / "key.txt").write_text("k\n")
    (web / ".git" / "hooks").mkdir(parents=True)
    (web / "qzfile.txt").write_text("text\n")
    api.mkdir()
    with Workspace({"web": Toolbox(web, deny=["qzsecret/**"]),
                    "api": Toolbox(api)}) as workspace:
        yield workspace


@pytest.mark.parametrize("tool,args", CALLS, ids=[f"{t}-{i}" for i, (t, _) in enumerate(CALLS)])
def test_a_refusals_sentences_name_the_root(ws, tool, args):
    out = ws.call(tool, args)
    assert out["ok"] is False, out
    said = _paths(out["message"]) + _paths(out.get("hint") or "")
    assert said, out  # the sentence names the path, so the check below means something
    assert all(p.startswith("web/") for p in said), (said, out)
