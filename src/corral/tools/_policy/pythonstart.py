"""The Python code an interpreter runs on its own, named by files the
default policy protects.

* A ``.pth`` file in a ``site-packages`` directory runs each line that
  starts with ``import`` at every start of the interpreter (setuptools'
  ``distutils-precedence.pth`` imports ``_distutils_hack``, virtualenv's
  ``_virtualenv.pth`` imports ``_virtualenv``, an editable install's imports
  its finder): the modules those lines import, lying in the same
  ``site-packages``, run as surely as the ``.pth`` itself.
  :func:`site_module` says which top-level module a path there belongs to;
  :func:`pth_imports` which ones a directory's ``.pth`` files import.
* a virtual environment's ``bin/`` (``Scripts/`` on Windows): an editor
  sources its ``activate`` in every new terminal and runs its ``python``
  to discover it (:func:`venv_of_program`; the environment is the directory
  holding ``pyvenv.cfg``, itself protected: its ``home`` says where the
  interpreter finds its standard library);
* ``python -m module`` and ``python -c "import module"`` put the working
  directory first on ``sys.path``: run by git (a config's program, a hook,
  from the top of the work tree), ``module.py`` or ``module/`` there is
  what runs.  :func:`imported_modules` reads the names an import statement
  names.

Bounded: at most ``MAX_PTH_FILES`` ``.pth`` files of ``MAX_PTH_BYTES``
each are read; a directory with more (or a longer one) counts as importing
every module there.  Names are compared folded (a case-insensitive disk finds
``Foo.py`` for ``import foo`` on some Pythons), which can only protect more.
"""

from __future__ import annotations

import re
from typing import Protocol

from ...contained import DirEntry
from .rules import fold

__all__ = ["SITE_PACKAGES", "MAX_PTH_FILES", "MAX_PTH_BYTES", "PthLook", "imported_modules",
           "site_module", "pth_imports", "venv_of_program"]

SITE_PACKAGES = "site-packages"
MAX_PTH_FILES = 64
MAX_PTH_BYTES = 64 * 1024

_NAME = r"[A-Za-z_][A-Za-z0-9_]*"
_IMPORT = re.compile(rf"\bimport\s+({_NAME}(?:\s*\.\s*{_NAME})*(?:\s+as\s+{_NAME})?"
                     rf"(?:\s*,\s*{_NAME}(?:\s*\.\s*{_NAME})*(?:\s+as\s+{_NAME})?)*)")
_FROM = re.compile(rf"\bfrom\s+({_NAME})[\s.]")
_CALLED = re.compile(rf"""(?:__import__|import_module)\s*\(\s*['"]({_NAME})""")


class PthLook(Protocol):
    """What is read of a root: a directory's entries, a small file's text."""

    def entries(self, rel: str) -> list[DirEntry]: ...

    def text(self, rel: str, limit: int) -> str | None: ...


def imported_modules(code: str) -> list[str]:
    """The top-level module names Python source ``code`` imports (``import
    a.b as c, d``; ``from e import f``; ``__import__('g')``;
    ``importlib.import_module('h')``), in order, each once."""
    names: list[str] = []
    for clause in _IMPORT.findall(code):
        for part in clause.split(","):
            names.append(part.strip().split(".", 1)[0].split()[0])
    names.extend(_FROM.findall(code))
    names.extend(_CALLED.findall(code))
    return list(dict.fromkeys(names))


def site_module(canonical: str) -> tuple[str, str] | None:
    """``(site-packages directory, top-level module name)`` for a canonical
    path inside a ``site-packages`` directory (``.../site-packages/pkg/x.py``
    and ``.../site-packages/pkg.py`` are both ``pkg``), else ``None``."""
    if canonical.isascii() and SITE_PACKAGES not in canonical.lower():
        return None  # an ASCII name folds to its lower case: no component can be one
    parts = canonical.split("/")
    for at in range(len(parts) - 2, -1, -1):
        if fold(parts[at]) == SITE_PACKAGES:
            name = parts[at + 1]
            if fold(name) == "__pycache__" and at + 2 < len(parts):
                name = parts[at + 2]  # a module's bytecode cache, run in its place
            return "/".join(parts[:at + 1]), fold(name.split(".", 1)[0])
    return None


def venv_of_program(canonical: str) -> str | None:
    """The directory that would be a virtual environment (it holds
    ``pyvenv.cfg``) were ``canonical`` its ``bin`` (``Scripts``) directory or
    an entry right in it: what an editor sources (``bin/activate``) or runs
    (``bin/python``) to use it.  ``None`` for any other path."""
    if canonical.isascii():
        folded = canonical.lower()
        if "bin" not in folded and "scripts" not in folded:
            return None  # an ASCII name folds to its lower case: neither is named
    parts = canonical.split("/")
    for at in (len(parts) - 1, len(parts) - 2):
        if at >= 1 and fold(parts[at]) in _PROGRAM_DIRS:
            return "/".join(parts[:at])
    return None


_PROGRAM_DIRS = ("bin", "scripts")


def pth_imports(look: PthLook, site: str) -> frozenset[str] | None:
    """The top-level modules (folded) the ``.pth`` files of the directory
    ``site`` import at the interpreter's start (site.py runs the lines that
    start with ``import`` followed by a space or a tab); ``None`` when there
    are more, or longer, ``.pth`` files than are read (any module may be one)."""
    try:
        names = sorted(entry.name for entry in look.entries(site)
                       if fold(entry.name).endswith(".pth"))
    except OSError:
        return frozenset()
    if len(names) > MAX_PTH_FILES:
        return None
    found: set[str] = set()
    for name in names:
        text = look.text(f"{site}/{name}", MAX_PTH_BYTES)
        if text is not None and len(text.encode("utf-8", "replace")) >= MAX_PTH_BYTES:
            return None
        for line in (text or "").splitlines():
            if line.startswith(("import ", "import\t")):
                found.update(fold(module) for module in imported_modules(line))
    return frozenset(found)
