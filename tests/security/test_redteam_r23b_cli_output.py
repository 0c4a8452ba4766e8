"""An independent red-team pass (round twenty-three, second team) over the
``corral`` command's output on hostile trees: what the command prints
must never be spoofable by what lies on the disk (a name or a config
value holding a line break printing a line of its own, a terminal escape
rewriting the screen), on every backend config.
"""

from __future__ import annotations

import contextlib
import io
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
