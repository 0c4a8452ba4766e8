"""list_directory over the one-call listing (``Handle.sized_listing``):
names that are not UTF-8, Python's str order, and deny rules with the limit
across several checkpoint chunks, on every backend config."""

from __future__ import annotations

import fnmatch
import os

from corral.tools import Limits, Toolbox
from corral.tools._builtin.list_directory import CHECK_EVERY


def test_every_name_in_str_order_with_kinds_and_sizes(tmp_path, make_root):
    raw = os.fsencode(tmp_path)
    for name, size in ((b"bad\xff", 3), (b"Zeta", 1), (b"alpha", 0), (b"\xc3\xa9t\xc3\xa9", 2),
                       (b"z", 4)):
        with open(raw + b"/" + name, "wb") as f:
            f.write(b"x" * size)
    os.mkdir(raw + b"/dir\xfe")
    os.symlink(b"bad\xff", raw + b"/link\xfd")
    os.mkfifo(raw + b"/_pipe")
    result = Toolbox(make_root(tmp_path)).call("list_directory", {"path": "."})
    assert result["ok"] is True, result
    assert result["entries"] == [
        {"name": "Zeta", "kind": "file", "size": 1},
        {"name": "_pipe", "kind": "other"},
        {"name": "alpha", "kind": "file", "size": 0},
        {"name": "bad\udcff", "kind": "file", "size": 3},
        {"name": "dir\udcfe", "kind": "dir"},
        {"name": "link\udcfd", "kind": "symlink"},
        {"name": "z", "kind": "file", "size": 4},
        {"name": "\u00e9t\u00e9", "kind": "file", "size": 2},
    ]
    assert result["total"] == 8 and result["truncated"] is False and "denied" not in result


def test_deny_and_limit_across_chunks(tmp_path, make_root):
    count = 3 * CHECK_EVERY + 17
    for i in range(count):
        name = f"n{i:04}.secret" if i % 7 == 0 else f"n{i:04}.txt"
        (tmp_path / name).write_bytes(b"s" * (i % 11))
    (tmp_path / "sub.secret").mkdir()
    names = sorted(os.listdir(tmp_path))
    hidden = [n for n in names if fnmatch.fnmatch(n, "*.secret")]
    shown = [n for n in names if n not in hidden]
    for limit in (5, 2 * CHECK_EVERY + 3, count + 10):
        box = Toolbox(make_root(tmp_path), deny=["*.secret"], limits=Limits(list_entries=limit))
        result = box.call("list_directory", {"path": "."})
        assert result["ok"] is True, result
        assert [e["name"] for e in result["entries"]] == shown[:limit]
        assert all(e == {"name": e["name"], "kind": "file",
                         "size": int(e["name"][1:5]) % 11} for e in result["entries"])
        assert result["denied"] == len(hidden) and result["total"] == len(shown)
        assert result["truncated"] is (len(shown) > limit)


def _ignored(box: Toolbox, path: str) -> list[str]:
    result = box.call("list_directory", {"path": path})
    assert result["ok"] is True, result
    return [entry["name"] for entry in result["entries"] if entry.get("ignored")]


def test_list_directory_sees_a_git_made_later(tmp_path, make_root):
    """A listing remembers that the directories above it hold no ``.git``
    (nothing probed again while the view's watch reads no change), and
    still sees one another program makes later, of any kind and by any
    means (made, moved in, a ``.git`` file of a linked work tree), and one
    it removes: a remembered probe kept past a change would mark the .log
    files wrongly."""
    (tmp_path / "a" / "b").mkdir(parents=True)
    (tmp_path / "a" / "b" / "x.log").write_text("x")
    (tmp_path / "a" / ".gitignore").write_text("*.log\n")
    (tmp_path / "elsewhere").mkdir()
    with Toolbox(make_root(tmp_path)) as box:
        for _ in range(2):
            assert _ignored(box, "a/b") == []
        os.mkdir(tmp_path / "a" / ".git")  # a work tree whose top is a
        assert _ignored(box, "a/b") == ["x.log"]
        os.rmdir(tmp_path / "a" / ".git")
        assert _ignored(box, "a/b") == []
        os.rename(tmp_path / "elsewhere", tmp_path / "a" / ".git")
        assert _ignored(box, "a/b") == ["x.log"]
        os.rename(tmp_path / "a" / ".git", tmp_path / "elsewhere")
        assert _ignored(box, "a/b") == []
        (tmp_path / "a" / ".git").write_text("gitdir: ../elsewhere\n")
        assert _ignored(box, "a/b") == ["x.log"]
        os.remove(tmp_path / "a" / ".git")
        for _ in range(2):
            assert _ignored(box, "a/b") == []
