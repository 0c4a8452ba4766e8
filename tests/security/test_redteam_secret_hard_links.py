"""An independent red-team pass: a secret file's content read through
another hard link once the secret's own name is gone.

A hard-linked file is not read (THREATS row 11), and a secret file may be
deleted (only what reveals, relocates or destroys its content is refused).
With ``.env`` hard-linked as ``backup/env`` (``cp -al`` backups, rsync
``--link-dest`` snapshots), ``delete_file .env`` left ``backup/env`` a
file of one link, and ``read_file backup/env`` (or a grep of the tree)
answered the secret.  Deleting one name of a secret that has others moves
its content to a name no rule covers: it is refused as a move away is.

On every backend config; one call at a time and one turn's calls at once.
"""

from __future__ import annotations

import asyncio
import json
import os
from pathlib import Path

import pytest

from corral.tools import Toolbox

SECRET = "API_KEY=sk-live-TOPSECRET\n"


def _tree(base: Path) -> Path:
    (base / "backup").mkdir(parents=True)
    (base / ".env").write_text(SECRET)
    os.link(base / ".env", base / "backup" / "env")
    (base / "id_ed25519").write_text(SECRET)
    os.link(base / "id_ed25519", base / "backup" / "key")
    return base


def _secret_refusal(answer: dict) -> bool:
    return answer["ok"] is False and answer["code"] == "DENIED" \
        and answer["details"].get("kind") == "secret"


@pytest.mark.parametrize("secret", [".env", "id_ed25519"])
def test_deleting_a_secret_that_has_another_name_is_refused(tmp_path, make_root, secret):
    base = _tree(tmp_path / "t")
    box = Toolbox(make_root(str(base)))
    answer = box.call("delete_file", {"path": secret})
    assert _secret_refusal(answer), answer
    assert (base / secret).read_text() == SECRET
    for tool, args in (("read_file", {"path": "backup/env"}), ("read_file", {"path": "backup/key"}),
                       ("grep", {"pattern": "TOPSECRET"}),
                       ("grep", {"pattern": "TOP", "path": "backup"})):
        assert "sk-live" not in json.dumps(box.call(tool, args)), (tool, args)


def test_a_secret_with_one_name_is_still_deleted(tmp_path, make_root):
    (tmp_path / ".env").write_text(SECRET)
    box = Toolbox(make_root(str(tmp_path)))
    assert box.call("delete_file", {"path": ".env"})["ok"] is True
    assert not (tmp_path / ".env").exists()


def test_delete_and_read_sent_together_reveal_nothing(tmp_path, make_root):
    base = _tree(tmp_path / "t")
    box = Toolbox(make_root(str(base)))

    async def turn() -> list[dict]:
        calls = [("delete_file", {"path": ".env"}), ("read_file", {"path": "backup/env"}),
                 ("delete_file", {"path": "id_ed25519"}), ("grep", {"pattern": "TOPSECRET"}),
                 ("read_files", {"paths": ["backup/env", "backup/key"]}),
                 ("apply_patch",
                  {"input": "*** Begin Patch\n*** Delete File: .env\n*** End Patch"})]
        return list(await asyncio.gather(*(box.acall(tool, args, timeout=10)
                                           for tool, args in calls)))

    for _ in range(5):
        answers = asyncio.run(turn())
        assert all("sk-live" not in json.dumps(answer) for answer in answers), answers
        assert (base / ".env").read_text() == SECRET
        assert (base / "id_ed25519").read_text() == SECRET
    for tool, args in (("read_file", {"path": "backup/env"}), ("grep", {"pattern": "TOPSECRET"})):
        assert "sk-live" not in json.dumps(box.call(tool, args))
