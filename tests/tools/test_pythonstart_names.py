"""Which paths the interpreter-start rules weigh: a ``site-packages`` or
``bin``/``Scripts`` component in any spelling a case-insensitive or
normalising filesystem reads as one (the rules fold names; a quick look for
an ASCII path must never miss one)."""

from __future__ import annotations

import pytest

from corral.tools._policy.pythonstart import site_module, venv_of_program


@pytest.mark.parametrize(("path", "expected"), [
    ("v/lib/site-packages/pkg/x.py", ("v/lib/site-packages", "pkg")),
    ("v/lib/Site-Packages/Pkg.py", ("v/lib/Site-Packages", "pkg")),
    ("v/lib/SITE-PACKAGES/a/b/c.py", ("v/lib/SITE-PACKAGES", "a")),
    ("v/lib/site\u200c-packages/pkg/x.py", ("v/lib/site\u200c-packages", "pkg")),
    ("v/lib/SİTE-packages/pkg.py", None),  # a dotted capital I folds to "i̇", not "i"
    ("src/site_packages.py", None),
    ("d0/d1/d2/d3/d4/d5/d6/d7/d8/d9/file.py", None),
    ("site-packages", None),  # the directory itself names no module
])
def test_site_module_folds_every_component(path, expected):
    assert site_module(path) == expected


@pytest.mark.parametrize(("path", "expected"), [
    (".venv/bin/python", ".venv"),
    (".venv/BIN/activate", ".venv"),
    ("env/Scripts", "env"),
    ("env/scripts/pip.exe", "env"),
    ("env/b\u200cin/python", "env"),
    ("env/ｂｉｎ/python", None),  # full-width letters are other names
    ("bin", "."),  # the root itself would be the environment
    ("bin/activate", "."),
    ("cabin/robin.txt", None),
    ("tools/bin/x/run.sh", None),  # deeper than an entry of bin/
    ("d0/d1/d2/d3/d4/d5/d6/d7/d8/d9/file.py", None),
])
def test_venv_of_program_folds_both_last_components(path, expected):
    assert venv_of_program(path) == expected
