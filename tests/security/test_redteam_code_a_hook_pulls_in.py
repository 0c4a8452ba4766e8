"""An independent red-team pass: the code a protected command pulls in
beyond the file it names.

A hook (or a config program, or a hook manager's entry) git runs at the
next commit names a program; the program then loads more code the policy
did not weigh:

* ``perl -Ilib scripts/check.pl`` (``ruby -Isupport``, ``PERL5LIB=lib``,
  ``PYTHONPATH=tools``): every module under the include directory;
* ``make lint`` (``make -C build``): the ``Makefile`` there, whose recipes
  are shell commands;
* ``npm run lint``, ``npx eslint``, ``yarn test``: ``package.json``'s
  scripts, ``node_modules`` (``.bin`` and what it leads to), ``.npmrc``
  (``script-shell``), ``.yarnrc.yml`` (``yarnPath``);
* ``python3 scripts/check.py``: Python puts ``scripts/`` first on
  ``sys.path``, so the modules the script imports from there run, and a
  ``scripts/subprocess.py`` shadows the standard library module a library
  imports; ``python -mpre_commit`` (the hook ``pre-commit install``
  writes) the same from the work tree's top (``argparse.py`` there);
* ``npx lint-staged`` (husky's usual hook): ``.lintstagedrc``'s commands.

Each was writable before the fix, and ran at the next ``git commit`` (each
was tried end to end by hand with git, perl, make and python).  On every
backend config, alone and as one turn's calls sent together.  What the
commands only read or work on stays the user's.
"""

from __future__ import annotations

import asyncio

import pytest

from corral.tools import Toolbox

from .helpers.hooks import refused_protected, repository_with_hook

PAYLOAD = "system('touch /tmp/owned');\n"


HOOKS = [
    ("perl -Ilib scripts/check.pl", ["lib/Check.pm", "lib/Deep/Util.pm"]),
    ("perl -I lib scripts/check.pl", ["lib/Check.pm"]),
    ("PERL5LIB=vendor/perl:lib perl scripts/check.pl", ["vendor/perl/X.pm", "lib/Y.pm"]),
    ("ruby -Isupport tools/check.rb", ["support/helper.rb"]),
    ("PYTHONPATH=tools python3 -m lint", ["tools/lint.py", "tools/helpers.py"]),
    ("make lint", ["Makefile", "makefile", "GNUmakefile"]),
    ("make -C build check", ["build/Makefile"]),
    ("npm run lint", ["package.json", ".npmrc", "node_modules/.bin/eslint",
                      "node_modules/eslint/lib/cli.js"]),
    ("npx --no-install eslint .", ["package.json", "node_modules/.bin/eslint"]),
    ("yarn test", ["package.json", ".yarnrc.yml", "node_modules/jest/bin/jest.js"]),
    ("python3 scripts/check.py", ["scripts/helper.py", "scripts/subprocess.py",
                                  "scripts/json/__init__.py"]),
    ("\"$INSTALL_PYTHON\" -mpre_commit hook-impl", ["argparse.py", "selectors.py",
                                                  "subprocess/__init__.py"]),
    ("npx lint-staged", [".lintstagedrc", ".lintstagedrc.json", "lint-staged.config.js"]),
]
IDS = ["perl-I-glued", "perl-I-apart", "perl5lib", "ruby-I", "pythonpath", "make", "make-C",
       "npm-run", "npx", "yarn", "python-script-siblings", "python-m-top", "lint-staged"]


@pytest.mark.parametrize(("hook", "written"), HOOKS, ids=IDS)
def test_code_a_hook_command_loads_is_protected(tmp_path, make_root, hook, written):
    repository_with_hook(tmp_path, hook)
    (tmp_path / "scripts").mkdir()
    (tmp_path / "scripts" / "check.py").write_text("import helper\nimport subprocess\n")
    (tmp_path / "scripts" / "helper.py").write_text("X = 1\n")
    box = Toolbox(make_root(str(tmp_path)))

    async def turn() -> list[dict]:
        return list(await asyncio.gather(*(
            box.acall("write_file", {"path": path, "content": PAYLOAD, "overwrite": True},
                      timeout=10) for path in written)))

    answers = asyncio.run(turn())
    assert all(refused_protected(answer) for answer in answers), list(zip(written, answers))
    assert (tmp_path / "scripts" / "helper.py").read_text() == "X = 1\n"
    for path in written:
        if path != "scripts/helper.py":
            assert not (tmp_path / path).exists(), path


def test_an_existing_sibling_module_is_not_edited_or_replaced(tmp_path, make_root):
    repository_with_hook(tmp_path, "python3 scripts/check.py --staged")
    (tmp_path / "scripts").mkdir()
    (tmp_path / "scripts" / "check.py").write_text("from common import run\nrun()\n")
    (tmp_path / "scripts" / "common.py").write_text("import rules\ndef run():\n    pass\n")
    (tmp_path / "scripts" / "rules.py").write_text("R = []\n")
    (tmp_path / "scripts" / "other.py").write_text("O = 1\n")
    box = Toolbox(make_root(str(tmp_path)))

    async def turn() -> list[dict]:
        return list(await asyncio.gather(
            box.acall("edit_file", {"path": "scripts/common.py", "oldText": "pass",
                                    "newText": "import os; os.system('id')"}, timeout=10),
            box.acall("edit_file", {"path": "scripts/rules.py", "oldText": "R = []",
                                    "newText": "import os"}, timeout=10),
            box.acall("move_file", {"source": "scripts/other.py",
                                    "destination": "scripts/rules.py", "overwrite": True},
                      timeout=10),
            box.acall("delete_file", {"path": "scripts/common.py"}, timeout=10)))

    answers = asyncio.run(turn())
    assert all(refused_protected(answer) for answer in answers), answers
    assert (tmp_path / "scripts" / "common.py").read_text().endswith("pass\n")
    assert (tmp_path / "scripts" / "rules.py").read_text() == "R = []\n"


def test_what_the_commands_only_read_stays_the_users(tmp_path, make_root):
    """``perl -Ilib`` protects lib, not the tree; ``make`` its makefile, not
    the sources; a Python script's unimported sibling that is no standard
    module name stays writable; nothing at all without such a hook."""
    repository_with_hook(tmp_path, "perl -Ilib scripts/check.pl src/\nmake lint\n"
                          "python3 scripts/check.py\n")
    (tmp_path / "scripts").mkdir()
    (tmp_path / "scripts" / "check.py").write_text("import helper\n")
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "a.c").write_text("int a;\n")
    box = Toolbox(make_root(str(tmp_path)))
    for path in ("src/a.c", "src/new.c", "scripts/notes.py", "README.md", "setup.py",
                 "package.json", "node_modules/x/index.js"):
        answer = box.call("write_file", {"path": path, "content": "x\n", "overwrite": True})
        assert answer["ok"] is True, (path, answer)
    plain = tmp_path / "plain"
    plain.mkdir()
    box2 = Toolbox(make_root(str(plain)))
    for path in ("Makefile", "lib/Check.pm", "package.json", "argparse.py"):
        answer = box2.call("write_file", {"path": path, "content": "x\n"})
        assert answer["ok"] is True, (path, answer)


def test_a_package_moved_in_under_a_standard_name_is_refused(tmp_path, make_root):
    """A folder holding ``__init__.py`` moved onto ``scripts/json`` (or
    ``argparse`` at the top, under ``-mpre_commit``) is the package
    ``import json`` finds first: the move is checked on what it carries."""
    repository_with_hook(tmp_path, "python3 scripts/check.py\n\"$INSTALL_PYTHON\" -mpre_commit\n")
    (tmp_path / "scripts").mkdir()
    (tmp_path / "scripts" / "check.py").write_text("import json\n")
    (tmp_path / "pk").mkdir()
    (tmp_path / "pk" / "__init__.py").write_text("import os\n")
    box = Toolbox(make_root(str(tmp_path)))

    async def turn() -> list[dict]:
        return list(await asyncio.gather(
            box.acall("move_file", {"source": "pk", "destination": "scripts/json"}, timeout=10),
            box.acall("move_file", {"source": "pk/", "destination": "argparse"}, timeout=10),
            box.acall("move_file", {"source": "pk", "destination": "selectors"}, timeout=10)))

    answers = asyncio.run(turn())
    assert all(refused_protected(answer) for answer in answers), answers
    assert (tmp_path / "pk" / "__init__.py").exists()
    for gone in ("scripts/json", "argparse", "selectors"):
        assert not (tmp_path / gone).exists(), gone
    # a folder without __init__ is a namespace package the standard one outranks
    # (json itself is what check.py imports: protected whole)
    assert box.call("make_directory", {"path": "scripts/email"})["ok"] is True
    assert box.call("move_file", {"source": "pk", "destination": "lib"})["ok"] is True


@pytest.mark.parametrize(("hook", "written"), [
    ("cd tools && python3 -m lint", ["tools/lint.py", "tools/argparse.py"]),
    ("cd tools\n./check.sh --all", ["tools/check.sh"]),
    ("pushd web >/dev/null; npm run lint; popd", ["web/package.json", "web/node_modules/x.js"]),
    ("(cd build && make)", ["build/Makefile"]),
], ids=["cd-python", "cd-next-line", "pushd-npm", "subshell-make"])
def test_what_a_hook_runs_after_changing_directory_is_protected(tmp_path, make_root, hook,
                                                                 written):
    """A hook that enters a directory first (``cd tools && python3 -m
    lint``) runs what is named there, not at the top of the work tree."""
    repository_with_hook(tmp_path, hook)
    for directory in ("tools", "web", "build"):
        (tmp_path / directory).mkdir()
    box = Toolbox(make_root(str(tmp_path)))

    async def turn() -> list[dict]:
        return list(await asyncio.gather(*(
            box.acall("write_file", {"path": path, "content": PAYLOAD}, timeout=10)
            for path in written)))

    answers = asyncio.run(turn())
    assert all(refused_protected(answer) for answer in answers), list(zip(written, answers))
    for path in written:
        assert not (tmp_path / path).exists(), path
    assert box.call("write_file", {"path": "tools/notes.md", "content": "x\n"})["ok"] is True


MAKEFILE = ("-include local.mk\ninclude rules/common.mk\n\nlint:\n\t./scripts/lint.sh --all\n"
            "\tpython3 -m tools.check\n")
PACKAGE = '{"name": "x", "scripts": {"lint": "node tools/lint.js && sh ./scripts/fmt.sh"}}\n'


@pytest.mark.parametrize(("hook", "written"), [
    ("make lint", ["local.mk", "rules/common.mk", "scripts/lint.sh", "tools/check.py"]),
    ("npm run lint", ["tools/lint.js", "scripts/fmt.sh"]),
], ids=["makefile-recipes-and-includes", "package-json-scripts"])
def test_what_a_makefile_or_package_json_runs_is_protected(tmp_path, make_root, hook, written):
    """``make lint`` runs the recipe's commands and reads the files the
    makefile includes (``-include local.mk``: made by anyone, read at the
    next commit); ``npm run lint`` runs package.json's script."""
    repository_with_hook(tmp_path, hook)
    (tmp_path / "Makefile").write_text(MAKEFILE)
    (tmp_path / "package.json").write_text(PACKAGE)
    box = Toolbox(make_root(str(tmp_path)))

    async def turn() -> list[dict]:
        return list(await asyncio.gather(*(
            box.acall("write_file", {"path": path, "content": PAYLOAD}, timeout=10)
            for path in written)))

    answers = asyncio.run(turn())
    assert all(refused_protected(answer) for answer in answers), list(zip(written, answers))
    for path in written:
        assert not (tmp_path / path).exists(), path
    assert box.call("write_file", {"path": "src/main.c", "content": "x\n"})["ok"] is True


def test_what_a_hooks_shell_script_runs_is_protected(tmp_path, make_root):
    """``./scripts/lint.sh`` in a hook is protected; what that script
    sources or runs in turn (``. ./scripts/common.sh``, ``python3
    tools/fmt.py``) ran as surely, and was writable."""
    repository_with_hook(tmp_path, "./scripts/lint.sh --staged")
    (tmp_path / "scripts").mkdir()
    (tmp_path / "scripts" / "lint.sh").write_text(
        "#!/bin/sh\nset -e\n. ./scripts/common.sh\nsource scripts/env.sh\npython3 tools/fmt.py\n")
    box = Toolbox(make_root(str(tmp_path)))
    written = ["scripts/common.sh", "scripts/env.sh", "tools/fmt.py", "tools/helpers.py"]

    async def turn() -> list[dict]:
        return list(await asyncio.gather(*(
            box.acall("write_file", {"path": path, "content": PAYLOAD}, timeout=10)
            for path in written)))

    answers = asyncio.run(turn())
    assert [refused_protected(answer) for answer in answers] == [True, True, True, False], answers
    assert box.call("write_file", {"path": "scripts/notes.txt", "content": "x\n"})["ok"] is True
