"""The package's shape, checked: the native module behind one interface.

* ``corral._native`` is imported only by contained's native backend
  (``corral.contained._native_backend``): every other layer reaches native
  speed through :class:`corral.contained.Backend`'s methods.
* The native backend is imported only by backend selection
  (``corral.contained._select``), and neither backend module imports
  selection: no cycle between them.

The imports are read from the source (``ast``), inside functions too, so a
check sees what the code says, whichever lane runs it.
"""

from __future__ import annotations

import ast
from pathlib import Path

import corral

SRC = Path(corral.__file__).resolve().parent.parent
NATIVE_MODULE = "corral._native"
NATIVE_BACKEND = "corral.contained._native_backend"


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(SRC).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


MODULES = {_module_name(p): p for p in sorted((SRC / "corral").rglob("*.py"))}


def _imported(module: str) -> set[str]:
    """Every module ``module`` imports (or imports a name from), lazily or not."""
    path = MODULES[module]
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[:len(base) - (node.level - 1)]
                source = ".".join(base + ([node.module] if node.module else []))
            else:
                source = node.module or ""
            for alias in node.names:
                submodule = f"{source}.{alias.name}"
                if submodule in MODULES or submodule == NATIVE_MODULE:
                    found.add(submodule)  # "from package import module"
                else:
                    found.add(source)  # a name of the module ``source``
    return found


IMPORTS = {module: _imported(module) for module in MODULES}


def test_the_native_module_is_imported_only_by_the_native_backend():
    importers = sorted(module for module, names in IMPORTS.items() if NATIVE_MODULE in names)
    assert importers == [NATIVE_BACKEND]


def test_the_native_backend_is_imported_only_by_backend_selection():
    importers = sorted(module for module, names in IMPORTS.items() if NATIVE_BACKEND in names)
    assert importers == ["corral.contained._select"]


def test_the_backends_do_not_import_selection():
    for module in ("corral.contained._backend", NATIVE_BACKEND):
        assert "corral.contained._select" not in IMPORTS[module], module
        assert "corral.contained" not in IMPORTS[module], module  # the package imports _select


def test_the_reader_sees_lazy_and_relative_imports():
    # the checks above rest on this reading of the source
    assert NATIVE_MODULE in IMPORTS[NATIVE_BACKEND]  # "from .._native import ..."
    assert NATIVE_BACKEND in IMPORTS["corral.contained._select"]  # inside a function
    assert "corral.contained._linux" in IMPORTS["corral.contained._backend"]  # "from . import"
    assert "corral.contained" not in IMPORTS["corral.contained._backend"]
