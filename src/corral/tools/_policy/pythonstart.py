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

The root itself may be opened at one of these places or inside one (a
venv, its ``bin/``, a ``site-packages`` directory or a package there):
:func:`root_place` says where, from the root's real host path, once when it
is opened, so what lies in the root is weighed as where it really is.

Bounded: at most ``MAX_PTH_FILES`` ``.pth`` files of ``MAX_PTH_BYTES``
each are read; a directory with more (or a longer one) counts as importing
every module there.  Names are compared folded (a case-insensitive disk finds
``Foo.py`` for ``import foo`` on some Pythons), which can only protect more.
"""

from __future__ import annotations

import os
import re
import stat as st
from typing import NamedTuple, Protocol

from ...contained import DirEntry
from .rules import fold

__all__ = ["SITE_PACKAGES", "MAX_PTH_FILES", "MAX_PTH_BYTES", "PthLook", "imported_modules",
           "site_module", "pth_imports", "venv_of_program", "RootPlace", "root_place"]

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
        if at >= 0 and fold(parts[at]) in _PROGRAM_DIRS:
            return "/".join(parts[:at]) or "."  # "." : the root itself would be the venv
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


class RootPlace(NamedTuple):
    """Where the root directory itself lies among the places Python runs
    code from on its own (see :func:`root_place`): ``venv_bin``, it is a
    virtual environment's ``bin/`` (``Scripts/``); ``site``, it is a
    ``site-packages`` directory (``"site-packages"``) or lies inside one
    (``"site-packages/pkg/sub"``); ``site_imports``, for a root inside one,
    the modules that directory's ``.pth`` files import (``None``: any)."""

    venv_bin: bool = False
    site: str | None = None
    site_imports: frozenset[str] | None = frozenset()

    def site_path(self, canonical: str) -> str | None:
        """``canonical`` (a path in the root) as a path from the
        ``site-packages`` directory's parent, when the root lies there."""
        if self.site is None:
            return None
        return self.site if canonical in (".", "") else f"{self.site}/{canonical}"

    def in_program_dir(self, canonical: str) -> bool:
        """Whether ``canonical`` is the root or an entry right in it, the
        root being a virtual environment's ``bin/``."""
        return self.venv_bin and "/" not in canonical.strip("/")


def root_place(real: str) -> RootPlace | None:
    """Where the directory at the real host path ``real`` (a root, when it
    is opened) lies among the places Python runs code from: ``None`` for
    anywhere else (the common case: one look at the path's names, and one
    ``lstat`` for a directory named ``bin`` or ``Scripts``)."""
    parts = real.rstrip("/").split("/")
    venv_bin = bool(parts) and fold(parts[-1]) in _PROGRAM_DIRS and \
        _is_file(os.path.join(os.path.dirname(real.rstrip("/")) or "/", "pyvenv.cfg"))
    site: str | None = None
    imports: frozenset[str] | None = frozenset()
    for at in range(len(parts) - 1, -1, -1):
        if fold(parts[at]) == SITE_PACKAGES:
            below = parts[at + 1:]
            site = "/".join([SITE_PACKAGES, *below])
            if below:  # the .pth files lie above the root: read through the host's path
                imports = _host_pth_imports("/".join(parts[:at + 1]) or "/")
            break
    if not venv_bin and site is None:
        return None
    return RootPlace(venv_bin, site, imports)


def _is_file(path: str) -> bool:
    try:
        return st.S_ISREG(os.lstat(path).st_mode)
    except OSError:
        return False


def _host_pth_imports(site: str) -> frozenset[str] | None:
    """:func:`pth_imports` of a ``site-packages`` directory above a root
    (the host's own path, read once when the root is opened); ``None``
    (any module) where it cannot be read whole."""
    try:
        names = sorted(name for name in os.listdir(site) if fold(name).endswith(".pth"))
    except OSError:
        return None
    if len(names) > MAX_PTH_FILES:
        return None
    found: set[str] = set()
    for name in names:
        try:
            fd = os.open(os.path.join(site, name), os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
        except OSError:
            continue  # gone, or unreadable: site.py cannot read it either
        try:
            if not st.S_ISREG(os.fstat(fd).st_mode):
                continue
            data = os.read(fd, MAX_PTH_BYTES)
        except OSError:
            return None
        finally:
            os.close(fd)
        if len(data) >= MAX_PTH_BYTES:
            return None
        for line in data.decode("utf-8", "replace").splitlines():
            if line.startswith(("import ", "import\t")):
                found.update(fold(module) for module in imported_modules(line))
    return frozenset(found)
