"""read_files: a file's refusal names the item of 'paths' the model sent
(``paths[2]``), never read_file's argument 'path', which read_files does not
have (THREATS row 97)."""

from __future__ import annotations

import os

from corral.tools import Limits, Toolbox

TEMPORARY = ".a.txt.0123456789ab.corral-tmp"


def _tree(tmp_path):
    (tmp_path / "a.txt").write_text("alpha\n")
    (tmp_path / "src").mkdir()
    (tmp_path / ".env").write_text("KEY=1\n")
    (tmp_path / "secrets").mkdir()
    (tmp_path / "secrets" / "k.txt").write_text("k\n")
    (tmp_path / "blob.bin").write_bytes(b"\x00\x01\x02")
    os.mkfifo(tmp_path / "fifo")
    (tmp_path / "out").symlink_to("..")


# (path as sent, the refusal's kind): every refusal a file can get
REFUSED = [
    ("zzz.txt", "not_found"), ("/etc/passwd", "absolute"), ("../x", "dotdot"),
    ("~/x", "home"), ("out/x", "symlink"), (".env", "secret"), ("secrets/k.txt", "deny_rule"),
    ("fifo", "fifo"), ("a.txt/x", "not_directory"), (TEMPORARY, "temporary_name"),
    ("file:///a%00b", "argument"), ("src", "directory"), ("blob.bin", "binary"),
    ("d/" + "n" * 70, "path_too_long"),
]


def _words(envelope: dict) -> str:
    return " ".join((envelope["message"], envelope["hint"], envelope["details"]["message"]))


def test_each_files_refusal_names_the_item_sent_not_path(tmp_path, make_root):
    _tree(tmp_path)
    toolbox = Toolbox(make_root(tmp_path), deny=["secrets/**"], limits=Limits(max_path_bytes=64))
    paths = ["a.txt"] + [path for path, _ in REFUSED]
    result = toolbox.call("read_files", {"paths": paths})
    files = result["files"]
    assert files[0]["ok"] is True
    assert [f["details"]["kind"] for f in files[1:]] == [kind for _, kind in REFUSED]
    for index, envelope in enumerate(files[1:], start=1):
        item = f"paths[{index}]"
        assert envelope["details"].get("field", item) == item, (paths[index], envelope)
        assert "'path'" not in _words(envelope), (paths[index], envelope)
        alone = toolbox.call("read_file", {"path": paths[index]})
        # read_file's own refusal otherwise, word for word
        renamed = {key: value for key, value in alone.items() if key != "details"}
        for key in ("message", "hint"):
            renamed[key] = alone[key].replace("'path'", f"'{item}'")
        assert {k: v for k, v in envelope.items() if k != "details"} == renamed
        details = dict(alone["details"], message=renamed["message"])
        if "field" in details:
            details["field"] = item
        assert envelope["details"] == details
    said = {paths[i]: f["message"] for i, f in enumerate(files) if not f["ok"]}
    assert said["/etc/passwd"] == "argument 'paths[2]' is an absolute path outside the root"
    assert said[TEMPORARY].startswith("argument 'paths[10]' names a temporary file")
    assert files[11]["hint"] == "Remove the NUL character (%00) from 'paths[11]'."
    assert said["d/" + "n" * 70] == "argument 'paths[14]' is 72 bytes, over the limit of 64"


def test_a_forgiven_path_is_noted_under_the_item_sent(tmp_path, make_root):
    (tmp_path / "a.txt").write_text("alpha\n")
    toolbox = Toolbox(make_root(tmp_path))
    uri = (tmp_path / "a.txt").as_uri()
    result = toolbox.call("read_files", {"paths": ["a.txt", uri]})
    assert result["files"][1]["ok"] is True
    notes = result["files"][1]["pathNotes"]
    assert notes and all(note.startswith("paths[1] was read as ") for note in notes), notes
