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
