"""read_files: several files in one call, each answered exactly as read_file answers it."""

from __future__ import annotations

import json

from .helpers.images import png

from corral.tools import CancelToken, Denied, Limits, Toolbox

TREE = {"a.txt": "alpha\nbeta\n", "b.txt": "one\ntwo\nthree\n", "src/c.py": "x = 1\n"}


def make(tmp_path, tree=TREE):
    for rel, text in tree.items():
        path = tmp_path / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        if text is None:
            path.mkdir()
        elif isinstance(text, bytes):
            path.write_bytes(text)
        else:
            path.write_text(text)


def read_one(toolbox: Toolbox, path: str, **window) -> dict:
    return toolbox.call("read_file", {"path": path, **window})


def test_each_file_is_read_files_answer_in_order(tmp_path, make_root):
    make(tmp_path)
    (tmp_path / "pic.png").write_bytes(png(2, 3))
    toolbox = Toolbox(make_root(tmp_path))
    paths = ["b.txt", "a.txt", "src/c.py", "pic.png", "b.txt"]
    result = toolbox.call("read_files", {"paths": paths})
    assert result["ok"] is True
    assert result["files"] == [read_one(toolbox, p) for p in paths]
    assert (result["read"], result["refused"]) == (5, 0)
    assert result["budget"] == Limits().read_files_bytes


def test_offset_and_limit_apply_to_every_file(tmp_path, make_root):
    make(tmp_path)
    toolbox = Toolbox(make_root(tmp_path))
    result = toolbox.call("read_files", {"paths": ["a.txt", "b.txt"], "offset": 2, "limit": 1})
    assert result["files"] == [read_one(toolbox, "a.txt", offset=2, limit=1),
                               read_one(toolbox, "b.txt", offset=2, limit=1)]
    assert [f["content"] for f in result["files"]] == ["2\tbeta", "2\ttwo"]


def test_a_failing_file_does_not_stop_the_others(tmp_path, make_root):
    make(tmp_path, {**TREE, "blob.bin": b"\x00\x01\x02"})
    (tmp_path / "out").symlink_to("..")
    toolbox = Toolbox(make_root(tmp_path))
    paths = ["a.txt", "zzz.txt", "blob.bin", "src", "../etc/passwd", "out/x", "b.txt"]
    result = toolbox.call("read_files", {"paths": paths})
    files = result["files"]
    assert [f["ok"] for f in files] == [True, False, False, False, False, False, True]
    codes = [(f.get("code"), f.get("details", {}).get("kind")) for f in files]
    assert codes[1:6] == [("NOT_FOUND", "not_found"), ("UNSUPPORTED", "binary"),
                          ("INVALID_ARGUMENT", "directory"), ("OUTSIDE_ROOT", "dotdot"),
                          ("OUTSIDE_ROOT", "symlink")]
    # each refusal is read_file's own, suggested call (tried) included, naming
    # the item of 'paths' sent where read_file names its argument 'path'
    for index, (path, envelope) in enumerate(zip(paths, files)):
        alone = read_one(toolbox, path)
        if alone["ok"] is False and "field" in alone["details"]:
            assert alone["details"]["field"] == "path"
            alone["details"]["field"] = f"paths[{index}]"
        assert envelope == alone, path
    assert (result["read"], result["refused"]) == (2, 5)


def test_the_exact_envelope_of_a_refused_file(tmp_path, make_root):
    make(tmp_path)
    result = Toolbox(make_root(tmp_path)).call("read_files", {"paths": ["src/qqqqqq.py"]})
    assert result["files"] == [{
        "ok": False, "code": "NOT_FOUND", "message": "src/qqqqqq.py does not exist",
        "details": {"path": "src/qqqqqq.py", "missing": "src/qqqqqq.py", "field": "paths[0]",
                    "kind": "not_found", "message": "src/qqqqqq.py does not exist"},
        "hint": "Check the path; list_directory on src shows what is there.",
        "suggestedTool": "list_directory", "suggestedArgs": {"path": "src"}}]


def test_the_budget_is_never_exceeded_and_later_files_that_fit_are_returned(tmp_path,
                                                                            make_root):
    make(tmp_path, {"big.txt": "x" * 90 + "\n", "small.txt": "y\n", "mid.txt": "z" * 40 + "\n"})
    toolbox = Toolbox(make_root(tmp_path), limits=Limits(read_files_bytes=100))
    big, small, mid = (len(read_one(toolbox, p)["content"]) for p in
                       ("big.txt", "small.txt", "mid.txt"))
    assert big + mid > 100 and big + small <= 100
    result = toolbox.call("read_files", {"paths": ["big.txt", "mid.txt", "small.txt"]})
    files = result["files"]
    assert files[0] == read_one(toolbox, "big.txt")
    assert files[2] == read_one(toolbox, "small.txt")
    assert files[1] == {
        "ok": False, "code": "TOO_LARGE",
        "message": f"mid.txt was not returned: its {mid} bytes would take read_files past its "
                   f"budget of 100 bytes for one call ({big} used by the files before it)",
        "details": {"path": "mid.txt", "bytes": mid, "budget": 100, "used": big,
                    "kind": "batch_budget",
                    "message": f"mid.txt was not returned: its {mid} bytes would take read_files "
                               f"past its budget of 100 bytes for one call ({big} used by the "
                               "files before it)"},
        "hint": "Read this file separately with read_file.",
        "suggestedTool": "read_file", "suggestedArgs": {"path": "mid.txt"}}
    assert result["bytes"] == big + small <= 100
    follow = toolbox.call(files[1]["suggestedTool"], files[1]["suggestedArgs"])
    assert follow["ok"] is True  # the offered call works


def test_the_budget_counts_utf8_bytes_and_image_data(tmp_path, make_root):
    make(tmp_path, {"u.txt": "é" * 30 + "\n"})
    (tmp_path / "p.png").write_bytes(png(1, 1))
    toolbox = Toolbox(make_root(tmp_path))
    result = toolbox.call("read_files", {"paths": ["u.txt", "p.png"]})
    content = read_one(toolbox, "u.txt")["content"]
    data = read_one(toolbox, "p.png")["data"]
    assert result["bytes"] == len(content.encode("utf-8")) + len(data)


def test_the_suggested_call_keeps_the_window(tmp_path, make_root):
    make(tmp_path, {"a.txt": "a" * 50 + "\n" + "b" * 50 + "\n"})
    toolbox = Toolbox(make_root(tmp_path), limits=Limits(read_files_bytes=10))
    result = toolbox.call("read_files", {"paths": ["a.txt"], "offset": 2, "limit": 1})
    assert result["files"][0]["suggestedArgs"] == {"path": "a.txt", "offset": 2, "limit": 1}


def test_every_file_is_authorized_and_deny_rules_hold(tmp_path, make_root):
    make(tmp_path, {**TREE, ".env": "TOKEN=1\n"})
    asked = []

    def authorize(request):
        asked.append((request.operation, request.path))
        if request.path == "b.txt":
            raise Denied("not that one")

    toolbox = Toolbox(make_root(tmp_path), authorize=authorize, deny=[".env"])
    result = toolbox.call("read_files", {"paths": ["a.txt", "b.txt", ".env"]})
    assert asked == [("read", "a.txt"), ("read", "b.txt")]  # .env refused before the host
    files = result["files"]
    assert files[1]["code"] == "DENIED" and files[1]["details"]["kind"] == "host"
    assert files[2]["code"] == "DENIED" and files[2]["details"]["kind"] == "deny_rule"
    assert "TOKEN" not in json.dumps(result)


def test_past_the_deadline_the_rest_are_answered_unread(tmp_path, make_root, monkeypatch):
    from corral.tools._runtime import context as _context
    from .helpers.faults import FakeClock

    make(tmp_path)
    clock = FakeClock()
    monkeypatch.setattr(_context, "_now", clock)
    toolbox = Toolbox(make_root(tmp_path))
    seen = []

    def progress(report):
        seen.append(report.done)
        if report.done == 1:
            clock.advance()

    result = toolbox.call("read_files", {"paths": ["a.txt", "b.txt", "src/c.py"]},
                          progress=progress)
    files = result["files"]
    assert files[0]["ok"] is True
    for envelope, path in zip(files[1:], ["b.txt", "src/c.py"]):
        assert (envelope["code"], envelope["details"]["kind"], envelope["details"]["path"]) == (
            "TOO_LARGE", "time_limit", path)
        assert envelope["hint"] == "Read the files not yet answered in another call."
    assert seen == [0, 1, 2]


def test_a_cancelled_call_is_cancelled_as_a_whole(tmp_path, make_root):
    make(tmp_path)
    token = CancelToken()

    def progress(report):
        if report.done == 1:
            token.cancel()

    result = Toolbox(make_root(tmp_path)).call("read_files", {"paths": ["a.txt", "b.txt"]},
                                               cancel=token, progress=progress)
    assert (result["ok"], result["code"], result["details"]["kind"]) == (
        False, "DENIED", "cancelled")


def test_null_optional_arguments_are_not_given(tmp_path, make_root):
    make(tmp_path)
    toolbox = Toolbox(make_root(tmp_path))
    result = toolbox.call("read_files", {"paths": ["a.txt"], "offset": None, "limit": None})
    assert result["files"] == [read_one(toolbox, "a.txt")]
