"""An independent red-team pass: the facts of a denied file told through
another hard link of it.

A file with more than one link is not read (THREATS row 11: its other
name may be a denied one, a secret's, or outside the root), so read_file
and read_files refuse ``pub/copy.txt`` when it is a hard link of the
denied ``vault/prod.txt``.  file_info described it all the same: its
size, mode and times, which are the denied file's (one inode), though
file_info on ``vault/prod.txt`` itself is refused.  file_info now decides
on such a file as read_file does (the same hard-link rule): refused, and
described as before when the host allows hard links.  Every backend config.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from corral.tools import Toolbox

_SECRET = "DB_PASSWORD=round-twenty-two\n" * 37


def _tree(base: Path) -> Path:
    (base / "vault").mkdir(parents=True)
    (base / "vault" / "prod.txt").write_text(_SECRET)
    (base / "pub").mkdir()
    os.link(base / "vault" / "prod.txt", base / "pub" / "copy.txt")
    return base


def _facts(base: Path) -> list[str]:
    info = os.stat(base / "vault" / "prod.txt")
    return [f'"size": {info.st_size}', str(info.st_mtime_ns), str(info.st_ctime_ns)]


def test_file_info_tells_nothing_of_a_denied_file_through_its_hard_link(tmp_path, make_root):
    base = _tree(tmp_path / "t")
    box = Toolbox(make_root(str(base)), deny=["vault/**"])
    assert box.call("file_info", {"path": "vault/prod.txt"})["code"] == "DENIED"
    facts = _facts(base)
    for tool, args in (("file_info", {"path": "pub/copy.txt"}),
                       ("file_info", {"path": "pub/../pub/copy.txt"}),
                       ("read_file", {"path": "pub/copy.txt"}),
                       ("read_files", {"paths": ["pub/copy.txt"]})):
        text = json.dumps(box.call(tool, args))
        assert all(fact not in text for fact in facts), (tool, args, text)
        assert "round-twenty-two" not in text
    answer = box.call("file_info", {"path": "pub/copy.txt"})
    assert answer["ok"] is False and answer["details"]["kind"] == "hardlink", answer


def test_file_info_describes_a_hard_link_the_host_allows(tmp_path, make_root):
    base = _tree(tmp_path / "t")
    box = Toolbox(make_root(str(base)), allow_hardlinks=True)
    answer = box.call("file_info", {"path": "pub/copy.txt"})
    assert answer["ok"] is True and answer["size"] == len(_SECRET) and answer["links"] == 2


def test_a_listing_tells_no_size_of_a_denied_file_through_its_hard_link(tmp_path, make_root):
    base = _tree(tmp_path / "t")
    (base / "pub" / "plain.txt").write_text("abc")
    box = Toolbox(make_root(str(base)), deny=["vault/**"])
    size = f'"size": {os.stat(base / "vault" / "prod.txt").st_size}'
    for args in ({"path": "pub"}, {"path": "pub", "depth": 2}, {"path": ".", "depth": 3}):
        answer = box.call("list_directory", args)
        text = json.dumps(answer)
        assert answer["ok"] is True and "copy.txt" in text, answer
        assert size not in text, (args, text)
        assert '"size": 3' in text, text  # a file of one name keeps its size
