"""An independent red-team pass: a protected command that runs a directory
with Python.

``python3 scripts`` (a hook's line, a config program) runs
``scripts/__main__.py`` with ``scripts/`` itself first on ``sys.path``
(Python's documented reading of a directory named as the script), so the
modules that file imports from there run too, and a ``scripts/json.py``
shadows the standard library's.  The policy read the word ``scripts`` as
a file that is not one and protected nothing: the model could write
``scripts/__main__.py`` (or a module beside it) and git ran it at the next
commit (tried end to end with git and python3).  Now read as Python reads
it: the ``__main__.py`` is the program, its directory the one first on
``sys.path``.  So was a script past an option (``python3 -u
scripts/check.py``) or not named ``*.py`` (``python3 scripts/check``):
its imports from ``scripts/`` were the model's to write.  Python's script
is now its first word past the options, whatever its name.  On every
backend config, alone and as one turn's calls sent together; what the
directory holds beyond that stays the model's.
"""

from __future__ import annotations

import asyncio

import pytest

from corral.tools import Toolbox

from .helpers.hooks import refused_protected, repository_with_hook


HOOKS = [
    ("python3 scripts", "scripts"),
    ("python3 scripts/", "scripts"),
    ("python3 -u tools/lint", "tools/lint"),
    ("cd tools && python3 lint", "tools/lint"),
]


@pytest.mark.parametrize("hook,folder", HOOKS)
def test_a_directory_python_runs_keeps_its_main_and_what_it_imports(tmp_path, make_root, hook,
                                                                    folder):
    base = tmp_path / "repo"
    repository_with_hook(base, hook)
    (base / folder).mkdir(parents=True)
    (base / folder / "__main__.py").write_text("import helper\n")
    box = Toolbox(make_root(str(base)))
    for name in ("__main__.py", "helper.py", "json.py", "subprocess.py"):
        answer = box.call("write_file", {"path": f"{folder}/{name}", "content": "import os\n",
                                         "overwrite": True})
        assert refused_protected(answer), (hook, name, answer)
    assert (base / folder / "__main__.py").read_text() == "import helper\n"
    assert not (base / folder / "helper.py").exists()
    # what Python does not run from there stays the model's
    assert box.call("write_file", {"path": f"{folder}/notes.txt", "content": "x\n"})["ok"]
    assert box.call("write_file", {"path": "elsewhere/__main__.py", "content": "x\n"})["ok"]


def test_a_missing_main_is_protected_before_the_model_writes_it(tmp_path, make_root):
    base = tmp_path / "repo"
    repository_with_hook(base, "python3 scripts")
    (base / "scripts").mkdir()
    box = Toolbox(make_root(str(base)))

    async def turn() -> list[dict]:
        return list(await asyncio.gather(
            box.acall("write_file", {"path": "scripts/__main__.py", "content": "import os\n"}),
            box.acall("write_file", {"path": "scripts/helper.py", "content": "import os\n"}),
            box.acall("apply_patch", {"input": "*** Begin Patch\n*** Add File: scripts/"
                                               "__main__.py\n+import os\n*** End Patch\n"})))

    first, second, patch = asyncio.run(turn())
    assert refused_protected(first) and patch["ok"] is False, (first, patch)
    assert second["ok"] is True  # __main__.py is not there: it imports nothing yet
    assert not (base / "scripts" / "__main__.py").exists()


SCRIPTS = [
    "python3 -u scripts/check.py",
    "python3 -B -W ignore scripts/check.py",
    "python3 scripts/check",
    "python3 -u scripts/check",
]


@pytest.mark.parametrize("hook", SCRIPTS)
def test_python_s_script_is_its_first_word_past_the_options(tmp_path, make_root, hook):
    base = tmp_path / "repo"
    repository_with_hook(base, hook)
    (base / "scripts").mkdir()
    (base / "scripts" / "check").write_text("import helper\n")
    (base / "scripts" / "check.py").write_text("import helper\n")
    box = Toolbox(make_root(str(base)))
    for name in ("helper.py", "json.py"):
        answer = box.call("write_file", {"path": f"scripts/{name}", "content": "import os\n"})
        assert refused_protected(answer), (hook, name, answer)
    assert not (base / "scripts" / "helper.py").exists()


@pytest.mark.parametrize("hook", ["python3 -c 'print(1)' scripts/x",
                                  "python3 -m pytest scripts/x",
                                  "python3 scripts/check.py scripts/x"])
def test_the_arguments_after_python_s_script_stay_the_model_s(tmp_path, make_root, hook):
    base = tmp_path / "repo"
    repository_with_hook(base, hook)
    (base / "scripts" / "x").mkdir(parents=True)
    box = Toolbox(make_root(str(base)))
    assert box.call("write_file", {"path": "scripts/x/__main__.py", "content": "x\n"})["ok"]
