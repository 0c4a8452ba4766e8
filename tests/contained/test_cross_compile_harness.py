"""``scripts/cross_compile.py`` builds a harness that takes the address of
every function the cdefs declare (so the link needs each library symbol
they call, and no ``static`` function is left unused under ``-Werror``).
Its list of names comes from a small parser of the cdef text: checked here
against the declarations themselves, with no compiler needed."""

from __future__ import annotations

import re
import runpy
from pathlib import Path

import pytest

TOP = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def script() -> dict:
    return runpy.run_path(str(TOP / "scripts" / "cross_compile.py"), run_name="not_main")


def test_a_declaration_after_a_cdefs_defines_is_found(script):
    cdef = ("#define CORRAL_A ...\n#define CORRAL_B ...\n"
            "/* a comment; with a semicolon */\n"
            "int corral_after(int fd,\n                 const char *name);\n"
            "#define CORRAL_C ...\nvoid corral_last(void);\n")
    assert script["_declared_functions"](cdef) == ["corral_after", "corral_last"]
    assert script["_declared_constants"](cdef) == ["CORRAL_A", "CORRAL_B", "CORRAL_C"]


def test_every_function_the_cdefs_declare_is_in_the_harness(script):
    cdef, _ = script["_sources"]()
    bare = re.sub(r"/\*.*?\*/", "", cdef, flags=re.S)
    declared = re.findall(r"^[A-Za-z_][\w \*]*?\b(corral_\w+)\s*\(", bare, flags=re.M)
    assert declared  # the cdefs were read
    assert sorted(script["_declared_functions"](cdef)) == sorted(declared)
