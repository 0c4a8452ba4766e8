"""A user's script type-checks against the installed corral with
``mypy --strict`` (the package ships ``py.typed``), and a wrong use of the
same API is reported, so the check sees corral's real types."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

USER_SCRIPT = '''
from __future__ import annotations

import os

import corral
from corral import EscapeError, Root
from corral.contained import backend_report
from corral.tools import Code, Denied, Request, Toolbox, tool_definitions


def authorize(request: Request) -> bool | None:
    if request.path.startswith("secret/"):
        raise Denied("not that one")
    return None


def main(path: str) -> int:
    with Root(path) as root:
        root.write_bytes("a.txt", b"hello")
        data: bytes = root.read_bytes("a.txt")
        names: list[str] = root.listdir(".")
        try:
            root.stat("../outside")
        except EscapeError as exc:
            print(exc.filename)
    with Toolbox(path, authorize=authorize) as tools:
        envelope = tools.call("read_file", {"path": "a.txt"})
        ok: bool = envelope["ok"] is True
        print(Code.NOT_FOUND.value, ok, data, names)
    definitions = tool_definitions(None, "openai", strict=True)
    backend = backend_report()["backend"]
    print(len(definitions), backend, corral.__version__, os.sep)
    return 0
'''

WRONG_SCRIPT = '''
from corral import Root

with Root("/tmp") as root:
    size: str = root.read_bytes("a.txt")
'''


@pytest.fixture(scope="module")
def mypy_cache(tmp_path_factory) -> Path:
    # one cache for both runs: corral itself is analysed once (about 20 s)
    return tmp_path_factory.mktemp("mypy-cache")


def _mypy(tmp_path: Path, cache: Path, name: str, text: str
          ) -> subprocess.CompletedProcess[str]:
    script = tmp_path / name
    script.write_text(textwrap.dedent(text))
    return subprocess.run(
        [sys.executable, "-m", "mypy", "--strict", "--cache-dir", str(cache), str(script)],
        capture_output=True, text=True, timeout=600, cwd=tmp_path)


def test_a_user_script_type_checks_strictly(tmp_path, mypy_cache):
    done = _mypy(tmp_path, mypy_cache, "user.py", USER_SCRIPT)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "Success" in done.stdout


def test_a_wrong_use_is_reported(tmp_path, mypy_cache):
    done = _mypy(tmp_path, mypy_cache, "wrong.py", WRONG_SCRIPT)
    assert done.returncode == 1, done.stdout + done.stderr
    assert 'Incompatible types in assignment (expression has type "bytes"' in done.stdout
