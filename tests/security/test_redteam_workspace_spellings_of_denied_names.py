"""An independent red-team pass over a Workspace's existence oracle with
the spellings a case-insensitive or normalising host reads as one name:
a denied folder (``secrets/**``, and ``données/**`` whose name has a
composed and a decomposed form) asked for by case variants (``SECRETS``,
``Secrets``), the other Unicode form (NFC for NFD and back), with and
without a root's name in front, through the tools that answer about a
path (read, list, info, search, edit, move, delete).

Every answer must be the same whether the denied folder and its file exist
or not (but a search's ``denied`` count, which a listing of the folder
holding it gives by design): no root may be offered (``didYouMean``), tried or described by
what it holds.  Found nothing (kept: the Workspace's looks into other
roots were tested with one spelling only).  Why fold at all on Linux: a
directory there may be case-insensitive (ext4 and f2fs ``casefold``, vfat,
exfat, ntfs3, SMB mounts, a WSL path a Windows editor opens), where
``SECRETS/prod.txt`` opens ``secrets/prod.txt``; refusing a spelling a
case-sensitive disk would keep apart costs a rename, allowing it on a
folding one shows the secret.  On every backend config.
"""

from __future__ import annotations

import json
import unicodedata
from pathlib import Path

import pytest

from corral.tools import Toolbox, Workspace

NFC = unicodedata.normalize("NFC", "données")
NFD = unicodedata.normalize("NFD", "données")
FOLDERS = [("secrets", ["secrets", "SECRETS", "Secrets"]),
           (NFC, [NFC, NFD, NFC.upper(), NFD.upper()]),
           (NFD, [NFC, NFD])]


def _calls(spelling: str) -> list[tuple[str, dict]]:
    out: list[tuple[str, dict]] = []
    for prefix in ("", "web/", "api/"):
        here = f"{prefix}{spelling}"
        out += [("read_file", {"path": f"{here}/prod.txt"}),
                ("read_file", {"path": here}),
                ("list_directory", {"path": here}),
                ("file_info", {"path": f"{here}/prod.txt"}),
                ("grep", {"pattern": "pw", "path": here}),
                ("edit_file", {"path": f"{here}/prod.txt", "oldText": "pw", "newText": "x"}),
                ("delete_file", {"path": f"{here}/prod.txt"}),
                ("move_file", {"source": f"{here}/prod.txt", "destination": "web/out.txt"})]
    out.append(("glob", {"pattern": f"{spelling}/*", "path": "web"}))
    return out


def _answers(base: Path, make_root, folder: str, spelling: str, exists: bool) -> list[str]:
    for name in ("web", "api"):
        (base / name / "src").mkdir(parents=True)
    if exists:
        (base / "web" / folder).mkdir()
        (base / "web" / folder / "prod.txt").write_text("pw\n")
    deny = [f"{folder}/**", folder]
    ws = Workspace({name: Toolbox(make_root(str(base / name)), deny=deny)
                    for name in ("web", "api")})
    out = []
    for tool, args in _calls(spelling):
        answer = ws.call(tool, args)
        if tool == "glob":  # a search's count of what the rules hid, as the folder's listing
            answer.pop("denied", None)  # says (by design): never which name, nor what it holds
        out.append(json.dumps([tool, args, answer], sort_keys=True).replace(str(base), "<B>"))
    ws.close()
    if exists:
        assert (base / "web" / folder / "prod.txt").read_text() == "pw\n"
    return out


@pytest.mark.parametrize(("folder", "spellings"), FOLDERS, ids=["secrets", "nfc", "nfd"])
def test_a_denied_folder_in_any_spelling_is_answered_alike_present_or_not(tmp_path, make_root,
                                                                          folder, spellings):
    for number, spelling in enumerate(spellings):
        absent = _answers(tmp_path / f"a{number}", make_root, folder, spelling, exists=False)
        present = _answers(tmp_path / f"p{number}", make_root, folder, spelling, exists=True)
        differ = [(a, p) for a, p in zip(absent, present) if a != p]
        assert not differ, (spelling, differ[:3])
