"""An independent red-team pass over a root opened at a virtual environment
or inside one: ``.venv`` itself, its ``bin/`` (what an editor sources and
runs: ``activate``, ``python``), ``lib/python3.X/site-packages`` (whose
``.pth`` files' import lines run at every start of the interpreter, and the
modules they import), a package there that a ``.pth`` imports.  The finder
looked for the environment one level below the root, and the ``.pth``
rule (``**/site-packages/*.pth``) and the modules' test named a
``site-packages`` directory inside the root: opened there, a root
protected none of it, and a model wrote ``bin/activate``, a new ``.pth``
or ``_virtualenv.py``, run by the host's next Python.  Whatever directory
the root is opened at, they are protected; what Python does not run there
stays the user's.  On every backend config.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from corral.tools import Toolbox

SITE = "lib/python3.11/site-packages"


def _venv(base: Path) -> Path:
    venv = base / ".venv"
    site = venv / SITE
    (venv / "bin").mkdir(parents=True)
    site.mkdir(parents=True)
    (venv / "pyvenv.cfg").write_text("home = /usr/bin\nversion = 3.11.7\n")
    (venv / "bin" / "activate").write_text("VIRTUAL_ENV=here\n")
    (venv / "bin" / "pip").write_text("#!/usr/bin/env python\n")
    os.symlink("/usr/bin/python3", venv / "bin" / "python")
    (site / "_virtualenv.pth").write_text("import _virtualenv\n")
    (site / "_virtualenv.py").write_text("patched = False\n")
    (site / "distutils-precedence.pth").write_text("import _distutils_hack; x = 1\n")
    (site / "_distutils_hack").mkdir()
    (site / "_distutils_hack" / "__init__.py").write_text("hack = 1\n")
    (site / "requests").mkdir()
    (site / "requests" / "__init__.py").write_text("requests = 1\n")
    (base / "other.py").write_text("import os\n")
    return venv


# (where the root is opened, below .venv; paths there Python runs)
GUARDED = [
    ("", ["bin/activate", "bin/pip", "bin/newtool", "pyvenv.cfg", f"{SITE}/evil.pth",
          f"{SITE}/_virtualenv.py"]),
    ("bin", ["activate", "pip", "newtool", "activate.fish"]),
    (SITE, ["evil.pth", "_virtualenv.pth", "_virtualenv.py", "_distutils_hack/__init__.py",
            "_distutils_hack/new.py", "__pycache__/_virtualenv.cpython-311.pyc"]),
    (f"{SITE}/_distutils_hack", ["__init__.py", "new.py"]),
]
# what Python does not run at its start: the user's
FREE = [
    ("", [f"{SITE}/requests/__init__.py", "notes.txt"]),
    (SITE, ["requests/__init__.py", "newmodule.py", "requests/extra.py"]),
    (f"{SITE}/requests", ["__init__.py", "extra.py"]),
]
CASES = [(where, path) for where, paths in GUARDED for path in paths]
FREE_CASES = [(where, path) for where, paths in FREE for path in paths]


def _root_at(tmp_path: Path, where: str) -> Path:
    venv = _venv(tmp_path)
    return venv / where if where else venv


def _calls(path: str) -> list[tuple[str, dict]]:
    return [
        ("write_file", {"path": path, "content": "import os; os.system('x')\n",
                        "overwrite": True}),
        ("move_file", {"source": "dropped.txt", "destination": path, "overwrite": True}),
        ("delete_file", {"path": path}),
    ]


def _state(root: Path, path: str) -> tuple:
    target = root / path
    if os.path.islink(target):
        return ("link", os.readlink(target))
    if target.is_file():
        return ("file", target.read_bytes())
    return ("none",)


@pytest.mark.parametrize(("where", "path"), CASES, ids=[f"{w or 'venv'}:{p}" for w, p in CASES])
def test_what_python_runs_is_protected_wherever_the_root_is(tmp_path, make_root, where, path):
    root = _root_at(tmp_path, where)
    for tool, args in _calls(path):
        (root / "dropped.txt").write_text("import os\n")
        before = _state(root, path)
        box = Toolbox(make_root(str(root)))
        answer = box.call(tool, args)
        if tool == "delete_file" and before == ("none",):
            assert answer["ok"] is False, answer
            continue
        assert answer["ok"] is False, (tool, answer)
        assert answer["code"] == "DENIED" and answer["details"]["kind"] == "protected", answer
        assert _state(root, path) == before


@pytest.mark.parametrize(("where", "path"), FREE_CASES,
                         ids=[f"{w or 'venv'}:{p}" for w, p in FREE_CASES])
def test_what_python_does_not_run_stays_the_users(tmp_path, make_root, where, path):
    root = _root_at(tmp_path, where)
    box = Toolbox(make_root(str(root)))
    answer = box.call("write_file", {"path": path, "content": "x = 2\n", "overwrite": True})
    assert answer["ok"] is True, answer
    assert (root / path).read_text() == "x = 2\n"
