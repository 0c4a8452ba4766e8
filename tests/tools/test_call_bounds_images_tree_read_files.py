"""Every call is bounded, in the image read, the tree and read_files: every
loop stops at the deadline and on
cancellation (the image read, the tree's levels and entries, read_files'
paths), driven by a fake clock moved from a backend hook, never the wall
clock."""

from __future__ import annotations

from .helpers.images import png
from .helpers.envelope import assert_valid_envelope
from .helpers.faults import on_file
from . import test_call_bounds as bounds

from corral.tools import CancelToken, Toolbox

clock = bounds.clock  # the fake deadline clock (a fixture)
hooked = bounds.hooked_root


def after(n, action):
    """A hook doing ``action`` from its ``n``-th call on."""
    calls = {"n": 0}

    def hook():
        calls["n"] += 1
        if calls["n"] >= n:
            action()
    return hook


def stopped(result, kind="time_limit"):
    assert_valid_envelope(result)
    assert result["details"]["kind"] == kind, result
    return result


def test_the_image_read_loop_stops_at_the_deadline(tmp_path, make_root, clock):
    # a PNG larger than one chunk: the loop reads it in several preads
    data = png(2, 2) + b"\x00" * (3 * 1024 * 1024)
    (tmp_path / "big.png").write_bytes(data)
    root = hooked(make_root, tmp_path, {"pread": after(3, clock.advance)})
    with Toolbox(root) as toolbox:
        result = stopped(toolbox.call("read_file", {"path": "big.png"}))
        assert result["code"] == "TOO_LARGE"
    assert Toolbox(make_root(tmp_path)).call("read_file", {"path": "big.png"})["size"] == \
        len(data)


def test_the_tree_stops_at_the_deadline_between_directories(tmp_path, make_root, clock):
    for i in range(5):
        (tmp_path / f"d{i}" / "e").mkdir(parents=True)
    root = hooked(make_root, tmp_path, {"scandir": after(2, clock.advance)})
    with Toolbox(root) as toolbox:
        result = stopped(toolbox.call("list_directory", {"path": ".", "depth": 3}))
        assert result["code"] == "TOO_LARGE"


def test_the_tree_stops_at_the_deadline_inside_a_wide_directory(tmp_path, make_root, clock):
    (tmp_path / "d").mkdir()
    for i in range(600):
        (tmp_path / "d" / f"f{i:03}").write_text("")
    # the second listing (of d) moves the clock: its entry loop checks it
    root = hooked(make_root, tmp_path, {"scandir": after(2, clock.advance)})
    with Toolbox(root) as toolbox:
        stopped(toolbox.call("list_directory", {"path": ".", "depth": 2}))


def test_the_tree_is_cancelled(tmp_path, make_root):
    for i in range(3):
        (tmp_path / f"d{i}").mkdir()
    token = CancelToken()
    root = hooked(make_root, tmp_path, {"scandir": after(2, token.cancel)})
    with Toolbox(root) as toolbox:
        result = stopped(toolbox.call("list_directory", {"path": ".", "depth": 2}, cancel=token),
                         "cancelled")
        assert result["code"] == "DENIED"


def test_read_files_stops_inside_a_file_and_answers_the_rest_unread(tmp_path, make_root, clock):
    (tmp_path / "a.txt").write_text("a\n")
    (tmp_path / "big.log").write_bytes(b"line\n" * (3 * 1024 * 1024 // 5))
    (tmp_path / "c.txt").write_text("c\n")
    reads = {"n": 0}

    def hook():
        reads["n"] += 1
        if reads["n"] == 2:  # big.log's stream, after its first read: inside the file
            clock.advance()

    # big.log's reads alone are counted: the tree lock's file is read through
    # the backend too, once a step or not at all as the process kept its
    # shared hold between steps or let it go
    root = hooked(make_root, tmp_path, {"pread": hook}, on_fd=on_file(tmp_path / "big.log"))
    with Toolbox(root) as toolbox:
        result = toolbox.call("read_files", {"paths": ["a.txt", "big.log", "c.txt"]})
    assert result["ok"] is True
    files = result["files"]
    assert files[0]["ok"] is True
    assert [f["details"]["kind"] for f in files[1:]] == ["time_limit", "time_limit"]
