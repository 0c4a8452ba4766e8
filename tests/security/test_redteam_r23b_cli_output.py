"""An independent red-team pass (round twenty-three, second team) over the
``corral`` command's output on hostile trees: what the command prints
must never be spoofable by what lies on the disk (a name or a config
value holding a line break printing a line of its own, a terminal escape
rewriting the screen), on every backend config.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import subprocess
from pathlib import Path

import pytest

from corral.cli import main

#: a line corral never prints, and escapes that would rewrite a terminal
SPOOF = "backend: SPOOFED"
ESCAPE = "\x1b[2J"


def _corral(monkeypatch, make_root, *args: str) -> tuple[int, str, str]:
    """``corral ARGS`` in this process on this test's backend config."""
    monkeypatch.setenv("CORRAL_BACKEND", make_root.backend_name)
    monkeypatch.setenv("CORRAL_OPENAT2", "1" if make_root.fast_path else "0")
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        status = main(list(args))
    return status, out.getvalue(), err.getvalue()


def _repository(path: Path, hooks_path: bytes) -> Path:
    path.mkdir()
    subprocess.run(["git", "init", "-q", str(path)], check=True)
    with open(path / ".git" / "config", "ab") as config:
        config.write(b"[core]\n\thooksPath = " + hooks_path + b"\n")
    return path


@pytest.mark.parametrize("hooks_path", [
    b"hk\\n" + SPOOF.encode(),  # git reads \n in a value as a line break
    b"hk" + ESCAPE.encode() + b"z",
    b"hk\xffz\\n" + SPOOF.encode(),  # and a byte that is no UTF-8
], ids=["line-break", "escape", "undecodable"])
def test_doctor_prints_a_repository_s_hooks_path_on_its_own_line(tmp_path, monkeypatch,
                                                                  make_root, hooks_path):
    """``corral doctor`` names the directories it protects for git
    (``core.hooksPath`` from the root's own ``.git/config``): a value
    holding a line break must not print a line of its own, nor a terminal
    escape reach the terminal (on main both were printed raw)."""
    root = _repository(tmp_path / "r", hooks_path)
    status, out, err = _corral(monkeypatch, make_root, "doctor", str(root))
    assert status == 0, err
    lines = out.splitlines()
    assert not [line for line in lines if line.lstrip().startswith(SPOOF)], out
    assert ESCAPE not in out and "\x1b" not in out, out
    git_line = [line for line in lines if line.startswith("  git: .git/ is read-only")]
    assert len(git_line) == 1 and "hk" in git_line[0], out


# -- held: corral call on a hostile tree ---------------------------------------------------------


def _hostile_names(base: Path) -> Path:
    folder = base / "d"
    folder.mkdir(parents=True)
    for name in (b"a\n" + SPOOF.encode(), b"bad\xff\xfe", b"esc" + ESCAPE.encode(),
                 "u\u2028v".encode(), b"x" * 255):
        with open(bytes(folder) + b"/" + name, "wb") as out:
            out.write(b"hi " + name + b"\n")
    os.mkfifo(folder / "fifo")
    os.symlink("fifo", folder / "tofifo")
    os.symlink("/dev/zero", folder / "zero")
    os.symlink("loop", folder / "loop")
    return base


@pytest.mark.parametrize("tool,arguments", [
    ("list_directory", {"path": "d"}),
    ("list_directory", {"path": ".", "depth": 3}),
    ("glob", {"pattern": "**"}),
    ("grep", {"pattern": "hi"}),
    ("read_files", {"paths": ["d/fifo", "d/tofifo", "d/zero", "d/loop"]}),
    ("file_info", {"path": "d/tofifo"}),
], ids=["list", "tree", "glob", "grep", "specials", "info"])
def test_call_prints_one_line_of_json_whatever_the_names(tmp_path, monkeypatch, make_root, tool,
                                                         arguments):
    """Held: names with line breaks, escapes, undecodable bytes, FIFOs,
    device links and loops: one line of JSON, nothing hangs."""
    root = _hostile_names(tmp_path / "r")
    status, out, err = _corral(monkeypatch, make_root, "call", str(root), tool,
                               json.dumps(arguments))
    assert status in (0, 1), err
    assert out.endswith("\n") and out.count("\n") == 1, out
    assert "\x1b" not in out
    answer = json.loads(out)
    assert "hi " not in json.dumps(answer) or tool == "grep"  # a FIFO or device never read
    if tool == "read_files":
        assert answer["read"] == 0 and answer["refused"] == 4, answer


@pytest.mark.parametrize("kind", ["fifo", "link-to-fifo", "device"])
def test_a_root_that_is_no_directory_is_a_usage_error_at_once(tmp_path, monkeypatch, make_root,
                                                              kind):
    """Held: a FIFO (or a link to one) or a device as ROOT: exit 2 at once,
    the FIFO never opened for reading (which would wait for a writer)."""
    os.mkfifo(tmp_path / "fifo")
    os.symlink("fifo", tmp_path / "link-to-fifo")
    root = "/dev/zero" if kind == "device" else str(tmp_path / kind)
    for command in (["call", root, "list_directory"], ["serve", root]):
        status, out, err = _corral(monkeypatch, make_root, *command)
        assert status == 2, (out, err)
        assert "Not a directory" in err and out == ""
