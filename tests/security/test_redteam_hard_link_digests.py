"""An independent red-team pass over the digest write_file tells of the
file it would replace.

A file with more than one link is not read by default (THREATS row 11:
its other name may be outside the root, or a secret's, or under a denied
folder): read_file, edit_file and grep refuse or skip it.  write_file told
its sha256 all the same (``currentSha256`` when it exists and neither
``overwrite`` nor a matching ``expectedSha256`` was given), a digest a
model can test guesses of a short secret against, offline.  Every backend
config; the secret's digest must appear in no answer.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

import pytest

from corral.tools import Toolbox

_SECRET = b"API_KEY=hunter2-round-eleven\n"
_DIGEST = hashlib.sha256(_SECRET).hexdigest()


def _secret_named(tmp_path: Path) -> tuple[Path, dict]:
    root = tmp_path / "ws"
    root.mkdir()
    (root / ".env").write_bytes(_SECRET)
    return root / ".env", {}


def _outside(tmp_path: Path) -> tuple[Path, dict]:
    (tmp_path / "ws").mkdir()
    (tmp_path / "outside.txt").write_bytes(_SECRET)
    return tmp_path / "outside.txt", {}


def _denied(tmp_path: Path) -> tuple[Path, dict]:
    root = tmp_path / "ws"
    (root / "vault").mkdir(parents=True)
    (root / "vault" / "prod.txt").write_bytes(_SECRET)
    return root / "vault" / "prod.txt", {"deny": ["vault/**"]}


_ORIGINS = {"secret": _secret_named, "outside": _outside, "denied": _denied}

_CALLS = {
    "expected_wrong": {"path": "notes/env.txt", "content": "x\n", "expectedSha256": "0" * 64},
    "no_overwrite": {"path": "notes/env.txt", "content": "x\n"},
    "expected_wrong_overwrite": {"path": "notes/env.txt", "content": "x\n",
                                 "expectedSha256": "0" * 64, "overwrite": True},
}


@pytest.mark.parametrize("call", sorted(_CALLS))
@pytest.mark.parametrize("origin", sorted(_ORIGINS))
def test_write_file_tells_no_digest_of_a_hard_linked_file(tmp_path, make_root, origin, call):
    linked, policy = _ORIGINS[origin](tmp_path)
    root = tmp_path / "ws"
    (root / "notes").mkdir()
    os.link(linked, root / "notes" / "env.txt")
    box = Toolbox(make_root(str(root)), **policy)
    assert box.call("read_file", {"path": "notes/env.txt"})["ok"] is False  # not read
    answer = box.call("write_file", _CALLS[call])
    assert _DIGEST not in repr(answer), answer
    assert answer["ok"] is False, answer
    assert linked.read_bytes() == _SECRET
    assert (root / "notes" / "env.txt").read_bytes() == _SECRET  # nothing replaced
