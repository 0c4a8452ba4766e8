"""A later window of an unchanged large file reads only its own
bytes (the whole-file facts are remembered), never trusting an entry made
while the file's stamps were too close to the pass (git's racy rule), and
never answering from an entry after the file changed."""

from __future__ import annotations

import os
import random

import pytest

from .helpers.faults import HookBackend, on_file

import corral.tools._read.cache as read_cache
from corral.contained import Root
from corral.tools import Toolbox

LINES = 300_000  # about 3.4 MB: over read_file's one-read size, so it streams


def _text(lines: int = LINES, ending: str = "\n") -> str:
    return "".join(f"line {n} {'x' * (n % 17)}{ending}" for n in range(1, lines + 1))


class Counter:
    def __init__(self) -> None:
        self.preads = 0

    def __call__(self) -> None:
        self.preads += 1


@pytest.fixture(autouse=True)
def fresh_cache():
    with read_cache._guard:
        read_cache._entries.clear()
    yield


def counted_toolbox(make_root, path):
    counter = Counter()
    plain = make_root(path)
    root = Root(path, backend=HookBackend(plain.backend, {"pread": counter},
                                          on_fd=on_file(path / "big.log")),
                fast_path=make_root.fast_path)
    return Toolbox(root), counter


def uncached(path, args):
    with read_cache._guard:
        read_cache._entries.clear()
    with Toolbox(path) as toolbox:
        result = toolbox.call("read_file", args)
    with read_cache._guard:
        read_cache._entries.clear()
    return result


def test_second_window_reads_only_its_bytes(tmp_path, make_root, settled):
    (tmp_path / "big.log").write_text(_text())
    toolbox, counter = counted_toolbox(make_root, tmp_path)
    first = toolbox.call("read_file", {"path": "big.log", "offset": 10, "limit": 5})
    full_pass = counter.preads
    counter.preads = 0
    second = toolbox.call("read_file", {"path": "big.log", "offset": 250_000, "limit": 50})
    assert second["ok"] is True and counter.preads <= 3 < full_pass
    assert second["sha256"] == first["sha256"] and second["totalLines"] == LINES
    assert second == uncached(tmp_path, {"path": "big.log", "offset": 250_000, "limit": 50})


@pytest.mark.parametrize("ending", ["\n", "\r\n"])
def test_cached_windows_equal_fresh_ones(tmp_path, settled, ending):
    body = _text(120_000, ending) + "last line without an ending"
    (tmp_path / "f.txt").write_bytes(b"\xef\xbb\xbf" + body.encode())
    toolbox = Toolbox(tmp_path)
    toolbox.call("read_file", {"path": "f.txt", "limit": 1})  # learns the file
    rng = random.Random(5)
    for offset in [1, 2, 119_999, 120_000, 120_001] + [rng.randint(1, 120_001) for _ in range(8)]:
        args = {"path": "f.txt", "offset": offset, "limit": rng.choice([1, 7, 2000])}
        assert toolbox.call("read_file", args) == uncached(tmp_path, args), args
    past = toolbox.call("read_file", {"path": "f.txt", "offset": 120_003})
    assert past["code"] == "INVALID_ARGUMENT" and past["details"]["totalLines"] == 120_001


def test_a_racy_entry_is_not_trusted(tmp_path, make_root):
    (tmp_path / "big.log").write_text(_text())  # stamps are "now": racy
    toolbox, counter = counted_toolbox(make_root, tmp_path)
    toolbox.call("read_file", {"path": "big.log", "limit": 1})
    full_pass = counter.preads
    counter.preads = 0
    toolbox.call("read_file", {"path": "big.log", "offset": 200_000, "limit": 1})
    assert counter.preads == full_pass  # read it all again


def test_a_changed_file_is_read_again(tmp_path, settled):
    path = tmp_path / "big.log"
    path.write_text(_text())
    toolbox = Toolbox(tmp_path)
    before = toolbox.call("read_file", {"path": "big.log", "offset": 5, "limit": 1})
    with open(path, "r+b") as f:  # same size, same inode, new content
        f.seek(0)
        f.write(b"LINE")
    stat = path.stat()
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1))
    after = toolbox.call("read_file", {"path": "big.log", "limit": 1})
    assert after["sha256"] != before["sha256"] and after["content"].startswith("1\tLINE")


def test_corral_writes_forget_the_entry(tmp_path, settled):
    (tmp_path / "big.log").write_text(_text())
    toolbox = Toolbox(tmp_path)
    first = toolbox.call("read_file", {"path": "big.log", "limit": 1})
    info = (tmp_path / "big.log").stat()
    assert (info.st_dev, info.st_ino) in read_cache._entries
    toolbox.call("write_file", {"path": "big.log", "content": _text(LINES - 1),
                                "expectedSha256": first["sha256"]})
    assert (info.st_dev, info.st_ino) not in read_cache._entries
    assert toolbox.call("read_file", {"path": "big.log", "limit": 1})["totalLines"] == LINES - 1


def test_the_cache_is_bounded(tmp_path, settled, monkeypatch):
    monkeypatch.setattr(read_cache, "MAX_ENTRIES", 3)
    text = _text(200_000)
    toolbox = Toolbox(tmp_path)
    for i in range(5):
        (tmp_path / f"f{i}.log").write_text(text)
        toolbox.call("read_file", {"path": f"f{i}.log", "limit": 1})
    assert len(read_cache._entries) == 3
