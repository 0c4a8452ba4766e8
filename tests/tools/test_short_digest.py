"""expectedSha256 takes the short digest a model reads (the first 16 hex
digits) as well as the full one, checked as a prefix of the file's sha256."""

from __future__ import annotations

import hashlib

import pytest

from corral.hosts import render, short_digest
from corral.tools import Toolbox


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


@pytest.mark.parametrize("length", [16, 17, 40, 64])
def test_write_file_replaces_with_a_prefix_of_the_digest(tmp_path, make_root, length):
    (tmp_path / "a.txt").write_bytes(b"old\n")
    box = Toolbox(make_root(tmp_path))
    out = box.call("write_file", {"path": "a.txt", "content": "new\n",
                                  "expectedSha256": _sha(b"old\n")[:length].upper()})
    assert out["ok"] is True and out["sha256"] == _sha(b"new\n")
    assert (tmp_path / "a.txt").read_bytes() == b"new\n"


def test_a_prefix_of_another_digest_is_stale_and_writes_nothing(tmp_path, make_root):
    (tmp_path / "a.txt").write_bytes(b"old\n")
    box = Toolbox(make_root(tmp_path))
    for tool, args in (("write_file", {"content": "new\n"}),
                       ("edit_file", {"oldText": "old", "newText": "new"})):
        out = box.call(tool, {"path": "a.txt", "expectedSha256": _sha(b"other\n")[:16], **args})
        assert out["code"] == "STALE", out
        assert out["details"]["currentSha256"] == _sha(b"old\n")
    assert (tmp_path / "a.txt").read_bytes() == b"old\n"


def test_edits_chain_on_the_short_digest_the_model_is_shown(tmp_path, make_root):
    (tmp_path / "a.py").write_text("x = 1\ny = 2\n")
    box = Toolbox(make_root(tmp_path))
    read = box.call("read_file", {"path": "a.py"})
    shown = render("read_file", read)
    digest = short_digest(read["sha256"])
    assert len(digest) == 16 and digest in shown and read["sha256"] not in shown
    first = box.call("edit_file", {"path": "a.py", "oldText": "x = 1", "newText": "x = 3",
                                   "expectedSha256": digest})
    assert first["ok"] is True and first["sha256"] == _sha(b"x = 3\ny = 2\n")
    assert short_digest(first["sha256"]) in render("edit_file", first)
    second = box.call("edit_file", {"path": "a.py", "oldText": "y = 2", "newText": "y = 4",
                                    "expectedSha256": short_digest(first["sha256"])})
    assert second["ok"] is True
    assert (tmp_path / "a.py").read_text() == "x = 3\ny = 4\n"
    # the first digest is stale now; the lines changed since (both) are still named
    stale = box.call("edit_file", {"path": "a.py", "oldText": "x = 3", "newText": "x = 5",
                                   "expectedSha256": digest})
    assert stale["code"] == "STALE" and stale["details"]["changedLines"] == [[1, 2]]


@pytest.mark.parametrize(("given", "said"), [("", "empty"), ("abc", "fewer than 16"),
                                             ("a" * 15, "fewer than 16"),
                                             ("0123456789abcdeg", "16 to 64 hexadecimal"),
                                             ("a" * 65, "over the limit of 64")])
def test_less_than_16_hex_digits_is_a_typed_error(tmp_path, given, said):
    (tmp_path / "a.txt").write_bytes(b"old\n")
    box = Toolbox(tmp_path)
    for tool, args in (("write_file", {"content": "new\n"}),
                       ("edit_file", {"oldText": "old", "newText": "new"})):
        out = box.call(tool, {"path": "a.txt", "expectedSha256": given, **args})
        assert out["code"] == "INVALID_ARGUMENT", out
        assert out["details"]["field"] == "expectedSha256"
        assert said in out["message"]
    assert (tmp_path / "a.txt").read_bytes() == b"old\n"
