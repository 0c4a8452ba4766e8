"""An independent red-team pass over the other files Python imports a
protected module from.

A hook runs ``python3 tools/fmt.py``, which imports ``helper`` (there:
``tools/helper.py``) and ``requests`` (not there); a virtual environment's
``_virtualenv.pth`` imports ``_virtualenv`` at every interpreter start.
Their sources are protected, but ``import`` finds a module in other files
too: an extension module (``helper.abi3.so``, ``helper.cpython-311-
x86_64-linux-gnu.so``, ``helper.so``) before the source in the same
directory, a bytecode cache (``__pycache__/helper.cpython-311.pyc``) in
place of the source it was compiled from, and a module without source as
its ``.pyc``.  Each such name must be refused as the source is (the
standard-library shadows already were: ``tools/json.so``); an unrelated
module's stay the user's.  Every backend config, each mutating tool that
makes a file.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from corral.tools import Toolbox

SITE = ".venv/lib/python3.11/site-packages"

GUARDED = ["tools/helper.abi3.so", "tools/helper.cpython-311-x86_64-linux-gnu.so",
           "tools/helper.so", "tools/__pycache__/helper.cpython-311.pyc",
           "tools/__pycache__/helper.cpython-310.opt-1.pyc",
           "tools/requests.so", "tools/requests.abi3.so", "tools/requests.pyc",
           f"{SITE}/__pycache__/_virtualenv.cpython-311.pyc",
           f"{SITE}/__pycache__/_virtualenv.cpython-312.opt-2.pyc"]
FREE = ["tools/other.so", "tools/__pycache__/other.cpython-311.pyc", "tools/helpers.pyc",
        f"{SITE}/__pycache__/other.cpython-311.pyc"]


def _tree(base: Path) -> Path:
    subprocess.run(["git", "init", "-q", str(base)], check=True)
    (base / "tools" / "__pycache__").mkdir(parents=True)
    (base / "tools" / "fmt.py").write_text("import helper\nimport requests\nhelper.run()\n")
    (base / "tools" / "helper.py").write_text("def run():\n    print('ok')\n")
    hook = base / ".git" / "hooks" / "pre-commit"
    hook.write_text("#!/bin/sh\npython3 tools/fmt.py\n")
    hook.chmod(0o755)
    site = base / SITE
    (site / "__pycache__").mkdir(parents=True)
    (base / ".venv" / "pyvenv.cfg").write_text("home = /usr/bin\n")
    (site / "_virtualenv.pth").write_text("import _virtualenv\n")
    (site / "_virtualenv.py").write_text("# patches\n")
    (base / "staged.bin").write_text("payload\n")
    return base


def _calls(path: str) -> list[tuple[str, dict]]:
    return [("write_file", {"path": path, "content": "payload\n"}),
            ("move_file", {"source": "staged.bin", "destination": path}),
            ("apply_patch", {"input": f"*** Begin Patch\n*** Add File: {path}\n+payload\n"
                                      "*** End Patch"})]


@pytest.mark.parametrize("path", GUARDED)
def test_a_file_python_imports_a_protected_module_from_is_protected(tmp_path, make_root, path):
    base = _tree(tmp_path / "ws")
    box = Toolbox(make_root(str(base)))
    answers = [box.call(tool, args) for tool, args in _calls(path)]
    assert not (base / path).exists(), answers
    assert all(a["ok"] is False and a["code"] == "DENIED" for a in answers), answers
    assert all(a["details"]["kind"] == "protected" for a in answers), answers


@pytest.mark.parametrize("path", FREE)
def test_an_unimported_modules_files_stay_the_users(tmp_path, make_root, path):
    base = _tree(tmp_path / "ws")
    box = Toolbox(make_root(str(base)))
    answer = box.call("write_file", {"path": path, "content": "payload\n"})
    assert answer["ok"] is True, answer
    assert (base / path).read_text() == "payload\n"
    os.unlink(base / path)


@pytest.mark.parametrize("cache", ["tools/__pycache__", f"{SITE}/__pycache__"])
def test_a_folder_of_caches_moved_into_place_is_refused(tmp_path, make_root, cache):
    """The bytecode caches arrive inside a folder moved to ``__pycache__``
    (made where none was yet), not one file at a time."""
    base = _tree(tmp_path / "ws")
    (base / cache).rmdir()
    box = Toolbox(make_root(str(base)))
    made = [box.call("write_file", {"path": f"evil/{name}", "content": "payload\n"})
            for name in ("helper.cpython-311.pyc", "_virtualenv.cpython-311.pyc")]
    assert all(a["ok"] for a in made), made
    moved = box.call("move_file", {"source": "evil", "destination": cache})
    assert not (base / cache).exists(), moved
    assert moved["ok"] is False and moved["code"] == "DENIED", moved
