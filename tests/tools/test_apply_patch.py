"""apply_patch through Toolbox.call, on every backend config: the envelope
as models send it, all or nothing, every rule corral's own tools keep, and
the round trip on real bytes (line endings, BOM, final newline)."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from corral.tools import Denied, Request, Toolbox
from corral.tools._patch import hunk_lines, update_hunks

from ..helpers import tree_snapshot


def _patch(*sections: str) -> str:
    return "*** Begin Patch\n" + "".join(sections) + "*** End Patch\n"


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    root = tmp_path / "root"
    (root / "src").mkdir(parents=True)
    (root / "src" / "app.py").write_text("import os\n\n\ndef main():\n    return 1\n")
    (root / "notes.txt").write_text("one\ntwo\n")
    return root


@pytest.fixture
def box(tree: Path, make_root):  # type: ignore[no-untyped-def]
    with Toolbox(make_root(tree)) as toolbox:
        yield toolbox


def test_every_toolbox_answers_it_without_listing_it(box: Toolbox, tree: Path) -> None:
    assert "apply_patch" not in box.names
    with Toolbox(tree, editing="apply_patch") as patching:
        names = patching.names
    assert "apply_patch" in names
    assert not {"write_file", "edit_file", "move_file", "delete_file", "make_directory"} & set(
        names)
    with Toolbox(tree, read_only=True) as reading:
        refused = reading.call("apply_patch", {"input": _patch("*** Add File: x\n+x\n")})
    assert refused["ok"] is False and refused["code"] == "DENIED"
    assert refused["details"]["kind"] == "read_only" and not (tree / "x").exists()
    with pytest.raises(ValueError):
        Toolbox(tree, editing="patch")  # type: ignore[arg-type]


def test_a_multi_file_patch(box: Toolbox, tree: Path) -> None:
    out = box.call("apply_patch", {"input": "apply_patch <<'EOF'\n" + _patch(
        "*** Update File: src/app.py\n@@ def main():\n-    return 1\n+    return 2\n",
        "*** Add File: docs/new.md\n+# New\n",
        "*** Delete File: notes.txt\n") + "EOF\n"})
    assert out["ok"] is True, out
    assert (tree / "src/app.py").read_text().endswith("    return 2\n")
    assert (tree / "docs/new.md").read_text() == "# New\n"
    assert not (tree / "notes.txt").exists()
    actions = [(f["path"], f["action"]) for f in out["files"]]
    assert actions == [("src/app.py", "updated"), ("docs/new.md", "added"),
                       ("notes.txt", "deleted")]
    assert out["files"][0]["sha256"] == hashlib.sha256(
        (tree / "src/app.py").read_bytes()).hexdigest()
    assert out["files"][1]["createdDirectories"] == ["docs"]


def test_update_and_move(box: Toolbox, tree: Path) -> None:
    out = box.call("apply_patch", {"input": _patch(
        "*** Update File: src/app.py\n*** Move to: pkg/main.py\n@@\n-    return 1\n"
        "+    return 3\n")})
    assert out["ok"] is True, out
    assert not (tree / "src/app.py").exists()
    assert (tree / "pkg/main.py").read_text().endswith("return 3\n")
    assert out["files"][0]["movedTo"] == "pkg/main.py"


def test_all_or_nothing_when_a_later_hunk_misses(box: Toolbox, tree: Path) -> None:
    before = tree_snapshot(tree)
    out = box.call("apply_patch", {"input": _patch(
        "*** Add File: made.txt\n+x\n",
        "*** Update File: notes.txt\n@@\n-one\n+ONE\n",
        "*** Update File: src/app.py\n@@\n-    return 42\n+    return 0\n")})
    assert out["ok"] is False and out["code"] == "NOT_FOUND"
    assert out["details"]["path"] == "src/app.py" and out["details"]["hunk"] == 1
    assert out["details"]["nearest"]["line"] == 5
    assert out["suggestedTool"] == "read_file"
    assert box.call(out["suggestedTool"], out["suggestedArgs"])["ok"] is True
    assert tree_snapshot(tree) == before


@pytest.mark.parametrize("section,code", [
    ("*** Add File: notes.txt\n+over\n", "ALREADY_EXISTS"),
    ("*** Update File: notes.txt\n*** Move to: src/app.py\n@@\n-one\n+1\n", "ALREADY_EXISTS"),
    ("*** Update File: ../outside.txt\n@@\n-a\n+b\n", "OUTSIDE_ROOT"),
    ("*** Add File: /etc/corral-apply-patch\n+x\n", "OUTSIDE_ROOT"),
    ("*** Update File: out/secret.txt\n@@\n-a\n+b\n", "OUTSIDE_ROOT"),
    ("*** Add File: out/new.txt\n+b\n", "OUTSIDE_ROOT"),
    ("*** Update File: notes.txt\n*** Move to: ../moved.txt\n@@\n-one\n+1\n", "OUTSIDE_ROOT"),
    ("*** Add File: .git/hooks/pre-commit\n+#!/bin/sh\n", "DENIED"),
    ("*** Update File: hook\n@@\n-#!/bin/sh\n+#!/bin/sh\n+evil\n", "UNSUPPORTED"),
    ("*** Update File: scripts/pre-commit\n@@\n-#!/bin/sh\n+#!/bin/sh\n+evil\n", "DENIED"),
    ("*** Update File: .env\n@@\n-KEY=1\n+KEY=2\n", "DENIED"),
    ("*** Update File: notes.txt\n*** Move to: .vscode/tasks.json\n@@\n-one\n+{}\n",
     "DENIED"),
    ("*** Update File: src/app.py\n@@\n-a\n+b\n*** Update File: ./src/app.py\n@@\n-c\n+d\n",
     "INVALID_ARGUMENT"),
    ("*** Delete File: src\n", "INVALID_ARGUMENT"),
])
def test_refusals_change_nothing(tree: Path, make_root, section: str, code: str) -> None:  # type: ignore[no-untyped-def]
    (tree / ".git" / "hooks").mkdir(parents=True)
    (tree / "scripts").mkdir()
    (tree / "scripts" / "pre-commit").write_text("#!/bin/sh\n")
    os.symlink("../../scripts/pre-commit", tree / ".git" / "hooks" / "pre-commit")
    os.symlink("scripts/pre-commit", tree / "hook")
    (tree / ".env").write_text("KEY=1\n")
    outside = tree.parent / "out"
    outside.mkdir()
    (outside / "secret.txt").write_text("a\n")
    os.symlink(outside, tree / "out")
    with Toolbox(make_root(tree)) as fresh:  # the links above exist when it opens
        before, outside_before = tree_snapshot(tree), tree_snapshot(outside)
        out = fresh.call("apply_patch", {"input": _patch(section)})
    assert out["ok"] is False and out["code"] == code, out
    assert out["details"]["message"] == out["message"] and out["hint"]
    assert tree_snapshot(tree) == before and tree_snapshot(outside) == outside_before
    assert not Path("/etc/corral-apply-patch").exists()


@pytest.mark.parametrize("text,line", [
    ("*** Update File: a\n", 1),
    ("*** Begin Patch\n*** Update File: a\n@@\nbroken line\n*** End Patch", 4),
    ("*** Begin Patch\n*** Add File: a\n+x\n", 3),
])
def test_syntax_refusal_names_the_line(box: Toolbox, text: str, line: int) -> None:
    out = box.call("apply_patch", {"input": text})
    assert out["ok"] is False and out["code"] == "INVALID_ARGUMENT"
    assert out["details"]["kind"] == "patch_syntax" and out["details"]["line"] == line


def test_the_host_is_asked_about_every_file_before_any_write(tree: Path, make_root) -> None:  # type: ignore[no-untyped-def]
    asked: list[tuple[str, str]] = []

    def authorize(request: Request) -> None:
        asked.append((request.operation, request.path))
        if request.path == "notes.txt":
            raise Denied("not that one")

    before = tree_snapshot(tree)
    with Toolbox(make_root(tree), authorize=authorize) as box:
        out = box.call("apply_patch", {"input": _patch(
            "*** Update File: src/app.py\n@@\n-    return 1\n+    return 2\n",
            "*** Delete File: notes.txt\n")})
    assert out["ok"] is False and out["code"] == "DENIED"
    assert asked == [("edit", "src/app.py"), ("delete", "notes.txt")]
    assert tree_snapshot(tree) == before


def test_a_file_changed_while_the_host_decides_is_stale(tree: Path, make_root) -> None:  # type: ignore[no-untyped-def]
    def authorize(request: Request) -> None:
        (tree / "notes.txt").write_text("one\ntwo\nthree\n")

    with Toolbox(make_root(tree), authorize=authorize) as box:
        out = box.call("apply_patch", {"input": _patch(
            "*** Update File: notes.txt\n@@\n-one\n+ONE\n")})
    assert out["ok"] is False and out["code"] == "STALE"
    assert (tree / "notes.txt").read_text() == "one\ntwo\nthree\n"


def test_crlf_bom_and_missing_final_newline_are_kept(box: Toolbox, tree: Path) -> None:
    (tree / "win.txt").write_bytes(b"\xef\xbb\xbfa\r\nb\r\nc")
    out = box.call("apply_patch", {"input": _patch("*** Update File: win.txt\n@@\n a\n-b\n+B\n")})
    assert out["ok"] is True, out
    assert (tree / "win.txt").read_bytes() == b"\xef\xbb\xbfa\r\nB\r\nc"


def test_v4a_dialect(box: Toolbox, tree: Path) -> None:
    out = box.call("apply_patch", {"dialect": "v4a", "input": _patch(
        "*** Update File: src/app.py\n@@ def main():\n+    print('hi')\n",
        "*** Add File: new.txt\n+no final newline\n")})
    assert out["ok"] is True, out
    assert (tree / "src/app.py").read_text() == (
        "import os\n\n\ndef main():\n    print('hi')\n    return 1\n")
    assert (tree / "new.txt").read_text() == "no final newline"


def test_a_new_files_crlf_is_kept_in_v4a_only(box: Toolbox, tree: Path) -> None:
    for dialect, name, expected in [("v4a", "v.txt", b"a\r\nb"), ("codex", "c.txt", b"a\nb\n")]:
        out = box.call("apply_patch", {"dialect": dialect, "input": _patch(
            f"*** Add File: {name}\r\n+a\r\n+b\r\n")})
        assert out["ok"] is True, out
        assert (tree / name).read_bytes() == expected


_line = st.sampled_from(["", "a", "b", "\tc", "  d", "def f():", "    return 1", "}", "é ü"])


@settings(max_examples=60, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(a=st.lists(_line, min_size=1, max_size=12), b=st.lists(_line, min_size=1, max_size=12),
       newline=st.sampled_from(["\n", "\r\n"]), bom=st.booleans(), final=st.booleans())
def test_round_trip_on_real_bytes(tree: Path, a: list[str], b: list[str], newline: str,
                                  bom: bool, final: bool) -> None:
    if a == b or (not final and (a[-1] == "" or b[-1] == "")):
        return
    if len(a) == 1 and not final:
        newline = "\n"  # no terminator at all: no line-ending style to keep

    def encoded(lines: list[str]) -> bytes:
        text = newline.join(lines) + (newline if final else "")
        return (b"\xef\xbb\xbf" if bom else b"") + text.encode()

    (tree / "f.txt").write_bytes(encoded(a))
    body = "".join("@@\n" + "".join(line + "\n" for line in hunk_lines(old, new))
                   for old, new in update_hunks(a, b))
    with Toolbox(tree) as box:
        out = box.call("apply_patch", {"input": _patch("*** Update File: f.txt\n" + body)})
    assert out["ok"] is True, out
    assert (tree / "f.txt").read_bytes() == encoded(b)
