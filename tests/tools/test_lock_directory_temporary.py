"""The tree lock's directory lies in the temporary directory
``tempfile.gettempdir()`` names, found without importing tempfile where no
one has: each process of a user must find the same place, whether it
imported tempfile or not, or two processes lock one tree apart."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

_OURS = (
    "import sys\n"
    "from corral.tools._runtime.view import tree_lock\n"
    "assert 'tempfile' not in sys.modules, 'tempfile imported: nothing compared'\n"
    "print(tree_lock._temporary_directory())\n"
)
_STDLIB = "import tempfile\nprint(tempfile.gettempdir())\n"


def _run(code: str, env: dict[str, str], cwd: Path) -> str:
    done = subprocess.run([sys.executable, "-c", code], env=env, cwd=cwd,
                          capture_output=True, text=True, check=False, timeout=60)
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


def _places(tmp_path: Path) -> dict[str, dict[str, str]]:
    usable = tmp_path / "usable"
    usable.mkdir()
    a_file = tmp_path / "a-file"
    a_file.write_text("x")
    missing = tmp_path / "missing"
    return {
        "none set": {},
        "TMPDIR": {"TMPDIR": str(usable)},
        "TMPDIR a file, TEMP": {"TMPDIR": str(a_file), "TEMP": str(usable)},
        "TMPDIR missing, TEMP empty, TMP": {"TMPDIR": str(missing), "TEMP": "",
                                              "TMP": str(usable)},
        "TMPDIR relative": {"TMPDIR": "usable"},
        "TMPDIR with dots": {"TMPDIR": str(usable) + "/../usable/."},
        "all unusable": {"TMPDIR": str(a_file), "TEMP": str(missing), "TMP": str(a_file)},
    }


@pytest.mark.parametrize("case", ["none set", "TMPDIR", "TMPDIR a file, TEMP",
                                  "TMPDIR missing, TEMP empty, TMP", "TMPDIR relative",
                                  "TMPDIR with dots", "all unusable"])
def test_the_same_place_as_gettempdir(tmp_path: Path, case: str) -> None:
    env = {name: value for name, value in os.environ.items()
           if name not in ("TMPDIR", "TEMP", "TMP")}
    env.update(_places(tmp_path)[case])
    env["PYTHONPATH"] = os.pathsep.join(p for p in sys.path if p)
    ours = _run(_OURS, env, tmp_path)
    assert ours == _run(_STDLIB, env, tmp_path)
    if case == "TMPDIR":
        assert ours == str(tmp_path / "usable")


def test_asks_tempfile_where_imported(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    import tempfile

    from corral.tools._runtime.view import tree_lock

    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    assert tree_lock._temporary_directory() == str(tmp_path)
