"""The sha256 of a small file (read whole in one call) is not
recomputed while the file is unchanged: remembered under its (device,
inode), trusted only while its size, mtime_ns and ctime_ns are those seen,
only if they were older than the read by more than a timestamp granule
(git's racy rule), bounded, and dropped by corral's own writes.  A stale
entry can only ever make a write refuse as stale, never let one through."""

from __future__ import annotations

import hashlib
import os
from types import SimpleNamespace

import pytest

import corral.tools._read.cache as read_cache
import corral.tools._builtin.read_file as read_file_module
from corral.tools import Toolbox
from corral.contained._handle import Handle

STAMPS = ("st_dev", "st_ino", "st_size", "st_mtime_ns", "st_ctime_ns")
TEXT = "".join(f"line {n}\n" for n in range(1, 201))


class CountingHashlib:
    """Stands for ``hashlib`` in read_file: counts the digests it takes."""

    def __init__(self) -> None:
        self.calls = 0

    def sha256(self, data: bytes = b""):  # noqa: ANN201 - hashlib's own type
        self.calls += 1
        return hashlib.sha256(data)


@pytest.fixture(autouse=True)
def fresh_cache():
    with read_cache._guard:
        read_cache._entries.clear()
        read_cache._digests.clear()
    yield
    with read_cache._guard:
        read_cache._digests.clear()


@pytest.fixture
def hashes(monkeypatch) -> CountingHashlib:
    counter = CountingHashlib()
    monkeypatch.setattr(read_file_module, "hashlib", counter)
    return counter


def sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def key(path) -> tuple[int, int]:
    info = path.stat()
    return info.st_dev, info.st_ino


def test_an_unchanged_file_is_not_hashed_again(tmp_path, make_root, settled, hashes):
    (tmp_path / "a.py").write_text(TEXT)
    toolbox = Toolbox(make_root(tmp_path))
    first = toolbox.call("read_file", {"path": "a.py"})
    assert hashes.calls == 1 and first["sha256"] == sha(TEXT.encode())
    for offset in (1, 50, 200):
        again = toolbox.call("read_file", {"path": "a.py", "offset": offset, "limit": 3})
        assert again["sha256"] == first["sha256"] and again["startLine"] == offset
    both = toolbox.call("read_files", {"paths": ["a.py", "a.py"]})
    assert [r["sha256"] for r in both["files"]] == [first["sha256"]] * 2
    assert hashes.calls == 1  # every later read was answered from the entry


def test_same_size_new_content_gets_a_new_digest(tmp_path, make_root, settled, hashes):
    path = tmp_path / "a.py"
    path.write_text(TEXT)
    toolbox = Toolbox(make_root(tmp_path))
    before = toolbox.call("read_file", {"path": "a.py"})
    with open(path, "r+b") as f:  # same inode, same size, new content
        f.write(b"LINE")
    info = path.stat()
    os.utime(path, ns=(info.st_atime_ns, info.st_mtime_ns + 1))  # even on a coarse clock
    after = toolbox.call("read_file", {"path": "a.py"})
    assert after["sha256"] == sha(path.read_bytes()) != before["sha256"]
    assert after["content"].startswith("1\tLINE 1") and hashes.calls == 2


def test_a_write_between_the_stat_and_the_read_is_hashed_from_the_bytes(
        tmp_path, make_root, settled, hashes, monkeypatch):
    """The entry matches the stamps read_file saw, then the file changes
    (same size) before its bytes are read: the answer's sha256 is that of
    the content it shows, never the remembered one.  The general run (a
    progress callback keeps the call from the plain run) takes the stamps
    before the bytes."""
    path = tmp_path / "a.py"
    path.write_text(TEXT)
    toolbox = Toolbox(make_root(tmp_path))
    before = toolbox.call("read_file", {"path": "a.py"})
    real = read_file_module._read_small

    def write_first(pread, info):
        with open(path, "r+b") as f:
            f.write(b"LINE")
        return real(pread, info)

    monkeypatch.setattr(read_file_module, "_read_small", write_first)
    after = toolbox.call("read_file", {"path": "a.py"}, progress=lambda report: None)
    assert after["content"].startswith("1\tLINE 1")
    assert after["sha256"] == sha(path.read_bytes()) != before["sha256"]
    assert hashes.calls == 2


def test_a_write_between_the_plain_read_and_its_stat_is_hashed_from_the_bytes(
        tmp_path, make_root, hashes, monkeypatch):
    """The plain run reads a small file's bytes before its fstat: a write
    (same size) landing between the two moves the stamps off the
    remembered entry, so the bytes shown are hashed, not taken from the
    entry; and as the write's ctime is no older than the read's start,
    that digest of the older bytes is never remembered under the new
    stamps (the racy rule): the next read hashes what it shows."""
    path = tmp_path / "a.py"
    path.write_text(TEXT)
    toolbox = Toolbox(make_root(tmp_path))
    later = [10 * read_cache.RACY_NS]  # the first read begins long after the file was made
    monkeypatch.setattr(read_cache, "started", lambda: read_cache.time.time_ns() + later[0])
    toolbox.call("read_file", {"path": "a.py"})
    later[0] = 0  # from here the reads begin when they do
    real = Handle.pread
    written = []

    def write_after(self, size, offset):
        data = real(self, size, offset)
        if not written:
            written.append(True)
            with open(path, "r+b") as f:
                f.write(b"LINE")
        return data

    monkeypatch.setattr(Handle, "pread", write_after)
    after = toolbox.call("read_file", {"path": "a.py"})
    assert written, "the plain run read no bytes through Handle.pread"
    assert after["content"].startswith("1\tline 1")  # the bytes read before the write
    assert after["sha256"] == sha(TEXT.encode())
    assert hashes.calls == 2  # the stamps moved: hashed again, not taken from the entry
    again = toolbox.call("read_file", {"path": "a.py"})
    assert again["content"].startswith("1\tLINE 1")
    assert again["sha256"] == sha(path.read_bytes()) and hashes.calls == 3



def test_a_file_written_within_the_racy_window_is_never_trusted(tmp_path, make_root, hashes):
    path = tmp_path / "a.py"
    path.write_text(TEXT)  # stamps are "now": within the granule of the read
    toolbox = Toolbox(make_root(tmp_path))
    first = toolbox.call("read_file", {"path": "a.py"})
    assert key(path) not in read_cache._digests
    path.write_text(TEXT.replace("line 7\n", "LINE 7\n"))  # same size, within the window
    second = toolbox.call("read_file", {"path": "a.py"})
    assert hashes.calls == 2 and second["sha256"] == sha(path.read_bytes()) != first["sha256"]


def test_the_racy_rule_on_the_stamps_themselves(tmp_path):
    path = tmp_path / "a.py"
    path.write_text(TEXT)
    info = path.stat()
    newest = max(info.st_mtime_ns, info.st_ctime_ns)
    read_cache.remember_digest(info, newest + read_cache.RACY_NS, "a" * 64)  # just too close
    assert read_cache.digest(info) is None
    read_cache.remember_digest(info, newest + read_cache.RACY_NS + 1, "b" * 64)
    assert read_cache.digest(info) == "b" * 64
    for field in ("st_size", "st_mtime_ns", "st_ctime_ns", "st_ino"):
        changed = SimpleNamespace(**{name: getattr(info, name) for name in STAMPS})
        setattr(changed, field, getattr(info, field) + 1)
        assert read_cache.digest(changed) is None, field  # type: ignore[arg-type]


def test_a_replaced_inode_is_hashed_again(tmp_path, make_root, settled, hashes):
    path = tmp_path / "a.py"
    path.write_text(TEXT)
    toolbox = Toolbox(make_root(tmp_path))
    before = toolbox.call("read_file", {"path": "a.py"})
    (tmp_path / "new.tmp").write_text(TEXT.replace("line 1\n", "LINE 1\n"))
    os.replace(tmp_path / "new.tmp", path)
    after = toolbox.call("read_file", {"path": "a.py"})
    assert after["sha256"] == sha(path.read_bytes()) != before["sha256"] and hashes.calls == 2


def _write_file(toolbox, digest):
    return toolbox.call("write_file", {"path": "a.py", "content": "new\n",
                                       "expectedSha256": digest})


def _edit_file(toolbox, digest):
    return toolbox.call("edit_file", {"path": "a.py", "oldText": "line 5\n",
                                      "newText": "LINE 5\n", "expectedSha256": digest})


def _move_over(toolbox, digest):
    toolbox.root.write_bytes("b.py", b"other\n")
    return toolbox.call("move_file", {"source": "b.py", "destination": "a.py",
                                      "overwrite": True})


def _delete_file(toolbox, digest):
    return toolbox.call("delete_file", {"path": "a.py"})


@pytest.mark.parametrize("write", [_write_file, _edit_file, _move_over, _delete_file])
def test_corral_writes_forget_the_entry(tmp_path, make_root, settled, write):
    path = tmp_path / "a.py"
    path.write_text(TEXT)
    toolbox = Toolbox(make_root(tmp_path))
    first = toolbox.call("read_file", {"path": "a.py"})
    old = key(path)
    assert old in read_cache._digests
    done = write(toolbox, first["sha256"])
    assert done["ok"] is True, done
    assert old not in read_cache._digests
    if path.exists():
        again = toolbox.call("read_file", {"path": "a.py"})
        assert again["sha256"] == sha(path.read_bytes()) != first["sha256"]


@pytest.mark.parametrize("write", [_write_file, _edit_file])
def test_a_stale_entry_never_lets_a_write_through(tmp_path, make_root, settled, write):
    """write_file and edit_file hash the bytes they act on: a poisoned entry
    (say, left by a change the stamps did not show) is never believed."""
    path = tmp_path / "a.py"
    path.write_text(TEXT)
    toolbox = Toolbox(make_root(tmp_path))
    true_digest = toolbox.call("read_file", {"path": "a.py"})["sha256"]
    poisoned = sha(b"what the file held before")
    with read_cache._guard:
        read_cache._digests[key(path)] = (*read_cache._digests[key(path)][:3], poisoned)
    assert toolbox.call("read_file", {"path": "a.py"})["sha256"] == poisoned  # served, stale
    refused = write(toolbox, poisoned)
    assert refused["ok"] is False and refused["code"] == "STALE", refused
    assert path.read_text() == TEXT
    assert write(toolbox, true_digest)["ok"] is True
    assert path.read_text() != TEXT


def test_the_digests_are_bounded_least_recent_first(tmp_path, settled, monkeypatch):
    monkeypatch.setattr(read_cache, "MAX_DIGESTS", 3)
    toolbox = Toolbox(tmp_path)
    for i in range(5):
        (tmp_path / f"f{i}.py").write_text(f"{i}\n")
    for i in range(4):
        toolbox.call("read_file", {"path": f"f{i}.py"})
    toolbox.call("read_file", {"path": "f1.py"})  # used again: now the most recent
    toolbox.call("read_file", {"path": "f4.py"})
    kept = [key(tmp_path / f"f{i}.py") for i in (3, 1, 4)]
    assert list(read_cache._digests) == kept
