"""THREATS.md's escape battery, through ``corral serve`` and the SDK client
(the 2.x line; tests/e2e/test_mcp_tools.py runs both lines).

Rows 1-8 and 11-16 (row 17 is test_mcp_root_vanished.py; rows 9, 10 and
18-20 are races and fd properties, tested in tests/security through the
Python API).  One server per backend configuration serves the module.

"No escape" is checked three ways after every call:

* outside content never appears in an answer: outside files hold
  ``CONTENT``, a string no request contains;
* outside names never appear unless the request itself named them
  (outside files are called ``leak-<NAME>``), so a link's target is never
  echoed;
* no host path: the temporary directory's path never appears in an answer,
  not even when the request sent it (an absolute path is answered
  root-relative or refused without being repeated);

and after every test the tree outside the root is exactly as it was (same
entries, kinds, contents, modes and mtimes).
"""

from __future__ import annotations

import json
import os
import socket
import stat
from pathlib import Path
from typing import Any

import pytest

from .helpers import BACKEND_CONFIGS, BACKEND_IDS, backend_env, envelope_of, serve_command

CONTENT = "LEAKCONTENT5d2e"  # inside every outside file; never sent
CONTENT_REGEX = "LEAKCONTEN[T]5d2e"  # matches CONTENT without being it
NAME = "leakname8c1f"  # in every outside file name
CALL_TIMEOUT = 10  # seconds: a call that blocks longer (a FIFO) is a failure


class Battery:
    def __init__(self, base: Path, session: Any) -> None:
        self.base = base
        self.root = base / "ws"
        self.session = session

    def expand(self, value: Any) -> Any:
        """``<BASE>`` and ``<ROOT>`` in the table stand for host paths."""
        if isinstance(value, str):
            return value.replace("<BASE>", str(self.base)).replace("<ROOT>", str(self.root))
        if isinstance(value, dict):
            return {k: self.expand(v) for k, v in value.items()}
        if isinstance(value, list):
            return [self.expand(v) for v in value]
        return value

    def call(self, tool: str, args: dict[str, Any]) -> dict[str, Any]:
        args = self.expand(args)
        result = self.session.call(tool, args, timeout=CALL_TIMEOUT)
        envelope = envelope_of(result)  # the text, isError and structured content agree
        assert_no_leak(envelope, args, self.base)
        return envelope


def _strings(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for k, v in value.items() for s in (k, *_strings(v))]
    if isinstance(value, list):
        return [s for v in value for s in _strings(v)]
    return []


def assert_no_leak(envelope: dict[str, Any], args: dict[str, Any], base: Path) -> None:
    sent = sorted((s for s in _strings(args) if s), key=len, reverse=True)
    for text in _strings(envelope):
        assert CONTENT not in text, f"outside content in the answer: {text[:300]!r}"
        assert str(base) not in text, f"a host path in the answer: {text[:300]!r}"
        for echoed in sent:  # a name the request gave may come back; nothing more
            text = text.replace(echoed, "")
        assert NAME not in text, f"an outside name in the answer: {text[:300]!r}"


def build(base: Path) -> None:
    """The battery's tree: ``base/ws`` is the root."""
    root, outside, evil = base / "ws", base / "outside", base / "ws-evil"
    for d in (root / "a" / "b", outside / "dir", evil):
        d.mkdir(parents=True)
    (root / "ok.txt").write_text("inside\n")
    (root / "a" / "b" / "inner.txt").write_text("inner\n")
    secret = outside / f"leak-{NAME}.txt"
    secret.write_text(f"{CONTENT}\n")
    (outside / "dir" / f"leak-{NAME}-inner.txt").write_text(f"{CONTENT} inner\n")
    (outside / f"leak-{NAME}-hard.txt").write_text(f"{CONTENT} hard\n")
    (outside / f"leak-{NAME}-hard2.txt").write_text(f"{CONTENT} hard2\n")
    (evil / f"leak-{NAME}-evil.txt").write_text(f"{CONTENT} evil\n")
    links = {
        "abs_file": str(secret),
        "abs_dir": str(outside),
        "rel_file": f"../outside/leak-{NAME}.txt",
        "rel_dir": "../outside",
        "chain1": "chain2", "chain2": "a/chain3", "a/chain3": f"../../outside/leak-{NAME}.txt",
        "chain_dir1": "chain_dir2", "chain_dir2": "../outside",
        "evil_link": "../ws-evil",
        "loop1": "loop2", "loop2": "loop1", "self": "self",
        "dangling": f"../outside/leak-{NAME}-created.txt",
        "dangling_dir": f"../outside/leak-{NAME}-newdir",
        "magic": "/proc/self/root/etc/hostname",
        "magic_fd": "/proc/self/fd/0",
        "del_link": str(secret),
        "move_link": str(secret),
    }
    for i in range(41):  # c0 -> c1 -> ... -> c41 -> ok.txt: 42 links, one too many
        links[f"c{i}"] = f"c{i + 1}"
    links["c41"] = "ok.txt"
    for name, target in links.items():
        os.symlink(target, root / name)
    os.link(outside / f"leak-{NAME}-hard.txt", root / "hard.txt")
    os.link(outside / f"leak-{NAME}-hard2.txt", root / "hard2.txt")
    os.mkfifo(root / "fifo")
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    cwd = os.getcwd()
    try:
        os.chdir(root)  # a relative bind keeps clear of the 108-byte sun_path limit
        sock.bind("sock")
    finally:
        os.chdir(cwd)
        sock.close()


def snapshot_outside(base: Path) -> dict[str, tuple]:
    """Everything outside the root: kind, mode, size, mtime and content."""
    out: dict[str, tuple] = {}
    for dirpath, dirnames, filenames in os.walk(base):
        rel_dir = os.path.relpath(dirpath, base)
        if rel_dir == "ws" or rel_dir.startswith("ws" + os.sep):
            dirnames[:] = []
            continue
        for name in dirnames + filenames:
            if rel_dir == "." and name == "ws":
                continue  # the root itself: its mtime is the tools' business
            path = os.path.join(dirpath, name)
            info = os.lstat(path)
            data = None
            if stat.S_ISREG(info.st_mode):
                with open(path, "rb") as f:
                    data = f.read()
            elif stat.S_ISLNK(info.st_mode):
                data = os.readlink(path)
            out[os.path.relpath(path, base)] = (stat.S_IFMT(info.st_mode), info.st_mode,
                                                info.st_size, info.st_mtime_ns, data)
    return out


@pytest.fixture(scope="module", params=BACKEND_CONFIGS, ids=BACKEND_IDS)
def battery(request, tmp_path_factory, make_session):
    name, fast = request.param
    base = tmp_path_factory.mktemp(f"escapes-{name}-{int(fast)}")
    build(base)
    session = make_session(serve_command(base / "ws"), env=backend_env(name, fast))
    battery = Battery(base, session)
    battery.before = snapshot_outside(base)
    return battery


@pytest.fixture(autouse=True)
def outside_untouched(battery):
    yield
    assert snapshot_outside(battery.base) == battery.before, "something outside the root changed"


OUT = "OUTSIDE_ROOT"
ANY_REFUSAL = "refused"  # a typed refusal (never INTERNAL), code not pinned by THREATS.md

# (row, tool, args, expected): expected is a code, "ok", or ANY_REFUSAL.
CASES: list[tuple[int, str, dict[str, Any], str]] = [
    # 1: '..' in every spelling; a/../x inside works
    (1, "read_file", {"path": ".."}, OUT),
    (1, "read_file", {"path": "../"}, OUT),
    (1, "read_file", {"path": "a/../.."}, OUT),
    (1, "read_file", {"path": f"a/../../outside/leak-{NAME}.txt"}, OUT),
    (1, "read_file", {"path": f"../outside/leak-{NAME}.txt"}, OUT),
    (1, "list_directory", {"path": ".."}, OUT),
    (1, "list_directory", {"path": "a/b/../../.."}, OUT),
    (1, "read_file", {"path": "a/../ok.txt"}, "ok"),
    # 2: absolute outside, //x, ~
    (2, "read_file", {"path": f"<BASE>/outside/leak-{NAME}.txt"}, OUT),
    (2, "list_directory", {"path": "<BASE>/outside"}, OUT),
    (2, "read_file", {"path": "//etc/hostname"}, OUT),
    (2, "read_file", {"path": "~"}, OUT),
    (2, "read_file", {"path": "~/x"}, OUT),
    (2, "read_file", {"path": "<ROOT>/ok.txt"}, "ok"),
    # 3: the sibling sharing the root's prefix
    (3, "list_directory", {"path": "../ws-evil"}, OUT),
    (3, "list_directory", {"path": "<ROOT>-evil"}, OUT),
    (3, "read_file", {"path": f"<ROOT>-evil/leak-{NAME}-evil.txt"}, OUT),
    (3, "read_file", {"path": f"evil_link/leak-{NAME}-evil.txt"}, OUT),
    # 4: symlinks out: absolute, relative, a chain
    (4, "read_file", {"path": "abs_file"}, OUT),
    (4, "read_file", {"path": "rel_file"}, OUT),
    (4, "read_file", {"path": "chain1"}, OUT),
    (4, "list_directory", {"path": "abs_dir"}, OUT),
    (4, "list_directory", {"path": "rel_dir"}, OUT),
    (4, "list_directory", {"path": "chain_dir1"}, OUT),
    (4, "read_file", {"path": f"abs_dir/leak-{NAME}.txt"}, OUT),
    (4, "read_file", {"path": f"chain_dir1/dir/leak-{NAME}-inner.txt"}, OUT),
    (4, "edit_file", {"path": "rel_file", "oldText": "x", "newText": "y"}, OUT),
    # 5: loops and a 42-link chain: a typed refusal, no hang
    (5, "read_file", {"path": "loop1"}, ANY_REFUSAL),
    (5, "read_file", {"path": "self"}, ANY_REFUSAL),
    (5, "read_file", {"path": "c0"}, ANY_REFUSAL),
    (5, "list_directory", {"path": "loop1/"}, ANY_REFUSAL),
    (5, "write_file", {"path": "loop1", "content": "x", "overwrite": True}, ANY_REFUSAL),
    # 6: trailing '/', '/.', '//' after a link out
    (6, "list_directory", {"path": "abs_dir/"}, OUT),
    (6, "list_directory", {"path": "abs_dir/."}, OUT),
    (6, "list_directory", {"path": "rel_dir//"}, OUT),
    (6, "list_directory", {"path": "chain_dir1/."}, OUT),
    (6, "read_file", {"path": "abs_file/"}, ANY_REFUSAL),
    (6, "glob", {"pattern": "*", "path": "rel_dir/."}, OUT),
    # 7: a dangling link out, then write/create/mkdir through it
    (7, "write_file", {"path": "dangling", "content": "x"}, ANY_REFUSAL),
    (7, "write_file", {"path": "dangling", "content": "x", "overwrite": True}, ANY_REFUSAL),
    (7, "write_file", {"path": "dangling_dir/x.txt", "content": "x"}, OUT),
    (7, "write_file", {"path": "dangling_dir/sub/x.txt", "content": "x"}, OUT),
    (7, "move_file", {"source": "ok.txt", "destination": "dangling_dir/ok.txt"}, OUT),
    # 8: write, edit, move, delete through a symlinked parent
    (8, "write_file", {"path": "abs_dir/new.txt", "content": "x"}, OUT),
    (8, "write_file", {"path": "rel_dir/dir/new.txt", "content": "x"}, OUT),
    (8, "write_file", {"path": f"rel_dir/leak-{NAME}.txt", "content": "x", "overwrite": True},
     OUT),
    (8, "edit_file", {"path": f"abs_dir/leak-{NAME}.txt", "oldText": "x", "newText": "y"}, OUT),
    (8, "move_file", {"source": "ok.txt", "destination": "abs_dir/moved.txt"}, OUT),
    (8, "move_file", {"source": f"rel_dir/leak-{NAME}.txt", "destination": "stolen.txt"}, OUT),
    (8, "delete_file", {"path": f"abs_dir/leak-{NAME}.txt"}, OUT),
    (8, "delete_file", {"path": "chain_dir1/dir"}, OUT),
    # 11: a hard link to an outside file: reads refused
    (11, "read_file", {"path": "hard.txt"}, "UNSUPPORTED"),
    (11, "grep", {"pattern": CONTENT_REGEX, "path": "hard.txt"}, ANY_REFUSAL),
    # 12: FIFO and socket: never block
    (12, "read_file", {"path": "fifo"}, "UNSUPPORTED"),
    (12, "read_file", {"path": "sock"}, "UNSUPPORTED"),
    (12, "edit_file", {"path": "fifo", "oldText": "x", "newText": "y"}, "UNSUPPORTED"),
    (12, "write_file", {"path": "fifo", "content": "x", "overwrite": True}, "UNSUPPORTED"),
    (12, "grep", {"pattern": "x", "path": "fifo"}, "UNSUPPORTED"),
    (12, "grep", {"pattern": "inside"}, "ok"),
    (12, "glob", {"pattern": "**/*"}, "ok"),
    # 13: magic links
    (13, "read_file", {"path": "magic"}, OUT),
    (13, "read_file", {"path": "magic_fd"}, OUT),
    # 14: NUL, a 256-byte name, a 5,000-byte path, empty
    (14, "read_file", {"path": "ok.txt\x00../../etc/hostname"}, "INVALID_ARGUMENT"),
    (14, "write_file", {"path": "x\x00y", "content": "x"}, "INVALID_ARGUMENT"),
    (14, "read_file", {"path": "x" * 256}, "INVALID_ARGUMENT"),
    (14, "write_file", {"path": "x" * 256, "content": "x"}, "INVALID_ARGUMENT"),
    (14, "read_file", {"path": "a/" * 2500}, "INVALID_ARGUMENT"),
    (14, "read_file", {"path": ""}, "INVALID_ARGUMENT"),
    (14, "list_directory", {"path": ""}, "INVALID_ARGUMENT"),
    # 15: glob patterns that try to climb or start absolute
    (15, "glob", {"pattern": "../*"}, ANY_REFUSAL),
    (15, "glob", {"pattern": "../outside/*"}, ANY_REFUSAL),
    (15, "glob", {"pattern": "**/../../*"}, ANY_REFUSAL),
    (15, "glob", {"pattern": "<BASE>/outside/*"}, ANY_REFUSAL),
    (15, "glob", {"pattern": "/*"}, ANY_REFUSAL),
    (15, "glob", {"pattern": "*", "path": ".."}, OUT),
    (15, "grep", {"pattern": CONTENT_REGEX, "path": ".."}, OUT),
    (15, "grep", {"pattern": CONTENT_REGEX, "include": "../*"}, None),
    # 16: searches never follow a link out
    (16, "glob", {"pattern": "**/*"}, "ok"),
    (16, "glob", {"pattern": "abs_dir/**"}, "ok"),
    (16, "glob", {"pattern": "*/dir/*"}, "ok"),
    (16, "glob", {"pattern": "**/*", "path": "abs_dir"}, OUT),
    (16, "grep", {"pattern": CONTENT_REGEX}, "ok"),
    (16, "grep", {"pattern": CONTENT_REGEX, "path": "rel_dir"}, OUT),
    (16, "grep", {"pattern": CONTENT_REGEX, "path": "rel_file"}, OUT),
    (16, "grep", {"pattern": CONTENT_REGEX, "path": "chain_dir1/dir"}, OUT),
]


@pytest.mark.parametrize("row,tool,args,expected", CASES,
                         ids=[f"row{row}-{tool}-{i}" for i, (row, tool, _a, _e)
                              in enumerate(CASES)])
def test_battery(row, tool, args, expected, battery):
    envelope = battery.call(tool, args)
    if expected is None:  # either answer is fine; no leak was checked above
        return
    if expected == "ok":
        assert envelope["ok"] is True, envelope
        return
    assert envelope["ok"] is False, envelope
    assert envelope["code"] != "INTERNAL", envelope
    if expected != ANY_REFUSAL:
        assert envelope["code"] == expected, envelope


def test_searches_find_inside_files_only(battery):
    found = battery.call("glob", {"pattern": "**/*"})
    text = json.dumps(found)
    assert "a/b/inner.txt" in text and "ok.txt" in text
    grep = battery.call("grep", {"pattern": "inner"})
    assert "a/b/inner.txt" in json.dumps(grep)


def test_dangling_link_out_creates_nothing(battery):
    for args in ({"path": "dangling", "content": "x"},
                 {"path": "dangling", "content": "x", "overwrite": True},
                 {"path": "dangling_dir/sub/x.txt", "content": "x"}):
        battery.call("write_file", args)
    assert not (battery.base / "outside" / f"leak-{NAME}-created.txt").exists()
    assert not (battery.base / "outside" / f"leak-{NAME}-newdir").exists()


def test_write_replaces_a_hard_link_never_writes_through(battery):
    target = battery.root / "hard2.txt"
    outside = battery.base / "outside" / f"leak-{NAME}-hard2.txt"
    envelope = battery.call("write_file", {"path": "hard2.txt", "content": "replaced\n",
                                           "overwrite": True})
    assert outside.read_text() == f"{CONTENT} hard2\n"
    if envelope["ok"]:
        assert target.read_text() == "replaced\n"
        assert os.stat(target).st_ino != os.stat(outside).st_ino
    else:
        assert envelope["code"] != "INTERNAL"
        assert os.stat(target).st_ino == os.stat(outside).st_ino


def test_deleting_a_link_out_removes_the_link_only(battery):
    envelope = battery.call("delete_file", {"path": "del_link"})
    assert envelope["ok"] is True, envelope
    assert not os.path.lexists(battery.root / "del_link")
    assert (battery.base / "outside" / f"leak-{NAME}.txt").read_text() == f"{CONTENT}\n"


def test_moving_a_link_out_moves_the_link_only(battery):
    envelope = battery.call("move_file", {"source": "move_link", "destination": "a/moved_link"})
    if envelope["ok"]:
        assert os.path.islink(battery.root / "a" / "moved_link")
    assert (battery.base / "outside" / f"leak-{NAME}.txt").read_text() == f"{CONTENT}\n"
    after = battery.call("read_file", {"path": "a/moved_link"})
    assert after["ok"] is False
