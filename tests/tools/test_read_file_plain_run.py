"""read_file's plain run (a call nothing else hears: no progress, no
``authorize``) answers exactly as its general run does (a call with a
progress callback, which the general run reports to), on every backend config:
the same fields for the files it reads itself, and the same refusals for
the calls it leaves to the general run or refuses on the way."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any
from collections.abc import Callable

import pytest

from corral.hosts.render import NumberedText
from corral.tools import CancelToken, Progress, Toolbox

_PNG = bytes.fromhex("89504e470d0a1a0a0000000d49484452000000010000000108060000001f15c489"
                     "0000000d4944415478da63f8cfc0f01f0005000201a4e3f5d60000000049454e44ae426082")


def _ignored(report: Progress) -> None:
    """A progress callback: the call takes the general run."""


def _tree(root: Path) -> None:
    (root / "src").mkdir()
    (root / "src" / "plain.py").write_text("".join(f"value_{i} = {i}\n" for i in range(40)))
    (root / "src" / "crlf.txt").write_bytes(b"".join(b"row %d\r\n" % i for i in range(12)))
    (root / "src" / "bom.txt").write_bytes(b"\xef\xbb\xbfrow 1\nrow 2\n")
    (root / "src" / "wide.txt").write_bytes("row 1\nrow 2\n".encode("utf-16"))
    (root / "src" / "accents.txt").write_text("café\nnaïve\n", encoding="utf-8")
    (root / "src" / "empty.txt").write_bytes(b"")
    (root / "src" / "binary.bin").write_bytes(b"\x00\x01\x02" * 50)
    (root / "src" / "image.png").write_bytes(_PNG)
    (root / "src" / "linked.py").write_text("x = 1\n")
    os.link(root / "src" / "linked.py", root / "src" / "second_link.py")
    (root / ".env").write_text("SECRET=1\n")
    (root / "to_env").symlink_to(".env")
    (root / "to_plain.py").symlink_to("src/plain.py")


_CALLS: list[dict[str, Any]] = [
    {"path": "src/plain.py"},
    {"path": "src/plain.py", "offset": 5, "limit": 3},
    {"path": "src/plain.py", "offset": 41},
    {"path": "src/plain.py", "offset": 999},
    {"path": "src/crlf.txt"},
    {"path": "src/bom.txt"},
    {"path": "src/wide.txt"},
    {"path": "src/accents.txt"},
    {"path": "src/empty.txt"},
    {"path": "src/binary.bin"},
    {"path": "src/image.png"},
    {"path": "src/second_link.py"},
    {"path": ".env"},
    {"path": "to_env"},
    {"path": "to_plain.py"},
    {"path": "src"},
    {"path": "src/missing.py"},
    {"path": "src/*.py"},
    {"path": "./src//plain.py"},
    {"path": "src/plain.py/"},
]


@pytest.mark.parametrize("args", _CALLS, ids=lambda args: "-".join(map(str, args.values())))
def test_a_plain_run_answers_as_the_general_run(make_toolbox: Callable[..., Toolbox],
                                                 tmp_path: Path, args: dict[str, Any]) -> None:
    _tree(tmp_path)
    with make_toolbox(tmp_path) as toolbox:
        plain = toolbox.call("read_file", args)
        general = toolbox.call("read_file", args, cancel=CancelToken(), progress=_ignored)
        assert plain == general, (plain, general)
        if "content" in plain and plain.get("startLine") == 1 and not plain.get("truncated"):
            # the rows carried for a host's render are those of the general run
            assert type(plain["content"]) is type(general["content"])
            if type(plain["content"]) is NumberedText:
                assert plain["content"].texts == general["content"].texts
                assert list(plain["content"].starts) == list(general["content"].starts)


def test_a_plain_run_sees_a_file_changed_between_calls(make_toolbox: Callable[..., Toolbox],
                                                       tmp_path: Path) -> None:
    """What the view knows is current for a plain run too: a file replaced
    by another program between two plain reads is read anew."""
    _tree(tmp_path)
    with make_toolbox(tmp_path) as toolbox:
        first = toolbox.call("read_file", {"path": "src/plain.py"})
        (tmp_path / "src" / "fresh.py").write_text("y = 2\n")
        os.replace(tmp_path / "src" / "fresh.py", tmp_path / "src" / "plain.py")
        second = toolbox.call("read_file", {"path": "src/plain.py"})
        assert first["ok"] and second["ok"]
        assert second["totalLines"] == 1 and second["sha256"] != first["sha256"]
        assert second["content"].endswith("y = 2")
