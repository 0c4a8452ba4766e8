"""file_info: kind, size, times, mode, links; a symlink's target only when inside."""

from __future__ import annotations

import datetime as dt
import json
import os
import socket

import pytest

from corral.tools import Toolbox
from corral.tools._builtin.file_info import iso_utc


def info(toolbox: Toolbox, path: str) -> dict:
    result = toolbox.call("file_info", {"path": path})
    assert result["ok"] is True, result
    return result


def test_a_file_is_described_exactly(tmp_path, make_root):
    target = tmp_path / "a.txt"
    target.write_text("hello\n")
    os.chmod(target, 0o640)
    os.utime(target, ns=(1_700_000_000_123_456_789, 1_600_000_000_000_000_001))
    got = info(Toolbox(make_root(tmp_path)), "a.txt")
    now = os.lstat(target)
    assert got == {"ok": True, "path": "a.txt", "kind": "file", "size": 6, "mode": "0640",
                   "links": 1,
                   "mtime": "2020-09-13T12:26:40.000000001Z", "mtimeNs": 1_600_000_000_000_000_001,
                   "atime": "2023-11-14T22:13:20.123456789Z", "atimeNs": 1_700_000_000_123_456_789,
                   "ctime": iso_utc(now.st_ctime_ns), "ctimeNs": now.st_ctime_ns}


def test_iso_utc_agrees_with_datetime():
    for ns in (0, 1, 999_999_999, 1_764_597_000_000_000_000, -1):
        seconds, fraction = divmod(ns, 1_000_000_000)
        expected = dt.datetime.fromtimestamp(seconds, dt.UTC).strftime("%Y-%m-%dT%H:%M:%S")
        assert iso_utc(ns) == f"{expected}.{fraction:09d}Z"
    assert iso_utc(-1) == "1969-12-31T23:59:59.999999999Z"


def test_kinds_of_every_entry_without_blocking(tmp_path, make_root):
    (tmp_path / "d").mkdir()
    os.mkfifo(tmp_path / "fifo")
    sock = socket.socket(socket.AF_UNIX)
    try:
        sock.bind(str(tmp_path / "sock"))
        toolbox = Toolbox(make_root(tmp_path))
        kinds = {name: info(toolbox, name)["kind"] for name in ("d", "fifo", "sock", ".")}
    finally:
        sock.close()
    assert kinds == {"d": "directory", "fifo": "fifo", "sock": "socket", ".": "directory"}
    setuid = tmp_path / "tool"
    setuid.write_text("")
    os.chmod(setuid, 0o4755)
    assert info(Toolbox(make_root(tmp_path)), "tool")["mode"] == "4755"


def test_a_symlink_is_described_itself_with_its_inside_target(tmp_path, make_root):
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "a.md").write_text("# a\n")
    (tmp_path / "docs" / "link").symlink_to("a.md")
    (tmp_path / "up").symlink_to("docs/../docs")
    (tmp_path / "dangling").symlink_to("docs/gone.md")
    (tmp_path / "loop").symlink_to("loop")
    toolbox = Toolbox(make_root(tmp_path))
    link = info(toolbox, "docs/link")
    assert (link["kind"], link["target"], link["targetKind"]) == ("symlink", "docs/a.md", "file")
    assert "size" not in link  # a link's size is the length of its text
    assert (info(toolbox, "up")["target"], info(toolbox, "up")["targetKind"]) == (
        "docs", "directory")
    dangling = info(toolbox, "dangling")
    assert (dangling["target"], dangling["targetKind"]) == ("docs/gone.md", "missing")
    loop = info(toolbox, "loop")
    assert loop["targetKind"] == "loop" and "target" not in loop
    followed = info(toolbox, "up/")  # a trailing '/' describes where the link leads
    assert followed["kind"] == "directory" and followed["path"] == "up"


def test_a_link_leading_out_is_never_described_beyond_that(tmp_path, make_root):
    root = tmp_path / "root"
    root.mkdir()
    outside = tmp_path / "outside-place"
    outside.mkdir()
    (outside / "secret.txt").write_text("outside secret\n")
    (root / "rel").symlink_to("../outside-place/secret.txt")
    (root / "abs").symlink_to(str(outside))
    (root / "gone").symlink_to("../outside-place/nothing-here")
    toolbox = Toolbox(make_root(root))
    for name in ("rel", "abs", "gone"):
        got = info(toolbox, name)
        assert got["kind"] == "symlink" and got["targetKind"] == "outside", got
        assert "target" not in got and "size" not in got
        text = json.dumps(got)
        assert "outside-place" not in text and str(tmp_path) not in text


def test_hard_links_are_refused_as_reads_are_and_counted_when_allowed(tmp_path, make_root):
    (tmp_path / "a").write_text("x")
    os.link(tmp_path / "a", tmp_path / "b")
    refused = Toolbox(make_root(tmp_path)).call("file_info", {"path": "b"})
    assert refused["ok"] is False and refused["details"]["kind"] == "hardlink", refused
    assert "size" not in refused and "mtime" not in json.dumps(refused)
    assert info(Toolbox(make_root(tmp_path), allow_hardlinks=True), "b")["links"] == 2


def test_absolute_paths_inside_are_answered_root_relative(tmp_path, make_root):
    (tmp_path / "a.txt").write_text("x")
    got = info(Toolbox(make_root(tmp_path)), str(tmp_path / "a.txt"))
    assert got["path"] == "a.txt"


def test_a_denied_target_is_not_named(tmp_path, make_root):
    (tmp_path / "private").mkdir()
    (tmp_path / "private" / "key").write_text("k")
    (tmp_path / "alias").symlink_to("private/key")
    toolbox = Toolbox(make_root(tmp_path), deny=["private/"])
    described = info(toolbox, "alias")  # the link itself is not denied: described
    assert described["kind"] == "symlink"
    assert "target" not in described and "targetKind" not in described
    assert "private" not in json.dumps(described)
    refused = toolbox.call("file_info", {"path": "alias/"})  # followed: the denied directory
    assert (refused["code"], refused["details"]["kind"]) == ("DENIED", "deny_rule")
    through = toolbox.call("file_info", {"path": "private/key"})
    assert (through["code"], through["details"]["kind"]) == ("DENIED", "deny_rule")


@pytest.mark.parametrize("spelling", ["PRIVATE/key", "nx/../private/key", "./private//key"])
def test_deny_rules_hold_on_every_spelling(tmp_path, make_root, spelling):
    (tmp_path / "private").mkdir()
    (tmp_path / "private" / "key").write_text("k")
    refused = Toolbox(make_root(tmp_path), deny=["private/"]).call("file_info",
                                                                   {"path": spelling})
    # deny rules hold on any case spelling, present on disk or not
    assert (refused["code"], refused["details"]["kind"]) == ("DENIED", "deny_rule"), refused


def test_the_host_is_asked_with_an_info_request(tmp_path, make_root):
    from corral.tools import ReadRequest
    from corral.tools import InfoRequest

    (tmp_path / "a").write_text("x")
    asked = []
    Toolbox(make_root(tmp_path), authorize=lambda r: asked.append(r)).call("file_info",
                                                                          {"path": "a"})
    assert [(type(r), r.operation, r.path) for r in asked] == [(InfoRequest, "inspect", "a")]
    assert isinstance(asked[0], ReadRequest) and not asked[0].mutates


def test_a_secret_file_is_described_never_read(tmp_path, make_root):
    (tmp_path / ".env").write_text("TOKEN=hunter2\n")
    toolbox = Toolbox(make_root(tmp_path))  # the default policy: .env is a secret
    assert toolbox.call("read_file", {"path": ".env"})["details"]["kind"] == "secret"
    got = info(toolbox, ".env")  # metadata, as list_directory shows it
    assert (got["kind"], got["size"]) == ("file", len("TOKEN=hunter2\n"))
    assert "hunter2" not in json.dumps(got)


def test_read_only_toolbox_offers_file_info(tmp_path, make_root):
    (tmp_path / "a").write_text("x")
    toolbox = Toolbox(make_root(tmp_path), read_only=True)
    assert "file_info" in toolbox.names
    assert info(toolbox, "a")["kind"] == "file"
