"""The package's shape, checked: what imports what, and how big a folder is.

* A private module or name (``_x``) is used only inside the package that
  holds it: ``corral.tools._runtime.context`` by any module of
  ``corral.tools``, a name ``_x`` of ``corral.contained._tree`` by the
  modules of ``corral.contained`` only.
* No import cycle, counting imports inside functions too (imports under
  ``if TYPE_CHECKING:`` are for annotations and run never): neither between
  modules nor between the parts of one package (its modules and its
  subpackages, each subpackage taken whole), so the subpackages of a
  package are layers: ``tools._refusals`` may use ``tools._runtime`` or be
  used by it, not both.
* No folder holds more than :data:`MAX_MODULES` modules.
* ``corral._native`` is imported only by contained's native backend, which
  only backend selection imports: every other layer reaches native speed
  through :class:`corral.contained.Backend`'s methods.

The imports are read from the source (``ast``), so a check sees what the
code says, whichever lane runs it.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from pathlib import Path

import pytest

import corral

SRC = Path(corral.__file__).resolve().parent.parent
MAX_MODULES = 20


@dataclass(frozen=True)
class Import:
    importer: str  # dotted name of the importing module
    module: str  # dotted name of the module imported (or imported from)
    name: str | None  # the name taken from ``module``; None for the module itself
    line: int
    lazy: bool  # inside a function


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(SRC).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _modules() -> dict[str, Path]:
    return {_module_name(p): p for p in sorted((SRC / "corral").rglob("*.py"))}


MODULES = _modules()


def _package(module: str) -> str:
    """The package a module's relative imports start from."""
    if MODULES[module].name == "__init__.py":
        return module
    return module.rpartition(".")[0]


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def _imports_of(module: str) -> list[Import]:
    tree = ast.parse(MODULES[module].read_text(), str(MODULES[module]))
    found: list[Import] = []

    def visit(node: ast.AST, lazy: bool) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.If) and _is_type_checking(child.test):
                for other in child.orelse:
                    visit(other, lazy)
                continue
            inner = lazy or isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda))
            if isinstance(child, ast.Import):
                found.extend(Import(module, alias.name, None, child.lineno, inner)
                             for alias in child.names)
            elif isinstance(child, ast.ImportFrom):
                found.extend(_from_import(module, child, inner))
            visit(child, inner)

    visit(tree, False)
    return found


def _from_import(module: str, node: ast.ImportFrom, lazy: bool) -> list[Import]:
    if node.level:
        base = _package(module).split(".")
        base = base[: len(base) - (node.level - 1)]
        source = ".".join(base + ([node.module] if node.module else []))
    else:
        source = node.module or ""
    out = []
    for alias in node.names:
        submodule = f"{source}.{alias.name}"
        if submodule in MODULES:  # ``from package import module``
            out.append(Import(module, submodule, None, node.lineno, lazy))
        else:
            out.append(Import(module, source, alias.name, node.lineno, lazy))
    return out


ALL_IMPORTS = [imp for module in MODULES for imp in _imports_of(module)]
OWN_IMPORTS = [imp for imp in ALL_IMPORTS if imp.module.split(".")[0] == "corral"]


def _private(part: str) -> bool:
    return part.startswith("_") and not (part.startswith("__") and part.endswith("__"))


def _inside(module: str, package: str) -> bool:
    return module == package or module.startswith(package + ".")


def _reach(imp: Import) -> str | None:
    """What ``imp`` reaches that is private to a package not holding the
    importer, said as the package and the private part; None if nothing."""
    parts = imp.module.split(".")
    for i, part in enumerate(parts):
        owner = ".".join(parts[:i])
        if _private(part) and not _inside(imp.importer, owner):
            return f"module {'.'.join(parts[: i + 1])} (private to {owner})"
    if imp.name is not None and _private(imp.name):
        owner = _package(imp.module) if imp.module in MODULES else imp.module
        if not _inside(imp.importer, owner):
            return f"name {imp.module}.{imp.name} (private to {owner})"
    return None


def test_no_module_reaches_into_another_packages_private_parts():
    reaches = [f"{imp.importer}:{imp.line} imports {_reach(imp)}"
               for imp in OWN_IMPORTS if _reach(imp) is not None]
    assert reaches == []


def _graph() -> dict[str, set[str]]:
    graph: dict[str, set[str]] = {module: set() for module in MODULES}
    for imp in OWN_IMPORTS:
        if imp.module in MODULES and imp.module != imp.importer:
            graph[imp.importer].add(imp.module)
    return graph


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan),
    each given as a cycle through it."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    components: list[list[str]] = []

    def connect(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for nxt in sorted(graph[node]):
            if nxt not in index:
                connect(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                components.append(_cycle_in(graph, sorted(component)))

    for node in sorted(graph):
        if node not in index:
            connect(node)
    return components


def _cycle_in(graph: dict[str, set[str]], component: list[str]) -> list[str]:
    """One cycle through ``component``'s first module, to show in a failure."""
    members = set(component)
    start = component[0]
    paths = {start: [start]}
    queue = [start]
    while queue:
        node = queue.pop(0)
        for nxt in sorted(graph[node] & members):
            if nxt == start:
                return paths[node] + [start]
            if nxt not in paths:
                paths[nxt] = paths[node] + [nxt]
                queue.append(nxt)
    return component


# Backend selection imports the native backend, which builds on the os
# backend's module: the one cycle left, to end when selection has a module
# of its own.  A cycle listed here that no longer exists fails below, so
# this list only shrinks.
KNOWN_CYCLES: list[list[str]] = []


def test_no_import_cycle():
    cycles = _cycles(_graph())
    assert [cycle for cycle in cycles if cycle not in KNOWN_CYCLES] == []
    assert [cycle for cycle in KNOWN_CYCLES if cycle not in cycles] == [], (
        "a known cycle is gone: take it out of KNOWN_CYCLES")


def _packages() -> list[str]:
    return sorted(module for module, path in MODULES.items() if path.name == "__init__.py")


def _part(module: str, package: str) -> str:
    """The part of ``package`` that holds ``module``: the module itself, or
    the subpackage it lies in (taken whole)."""
    return f"{package}.{module[len(package) + 1:].split('.')[0]}"


def _parts_graph(package: str) -> dict[str, set[str]]:
    """The imports between the parts of ``package`` (see :func:`_part`)."""
    graph: dict[str, set[str]] = {}
    for imp in OWN_IMPORTS:
        if imp.module not in MODULES or not (imp.importer.startswith(package + ".")
                                             and imp.module.startswith(package + ".")):
            continue
        importer, imported = _part(imp.importer, package), _part(imp.module, package)
        graph.setdefault(importer, set())
        graph.setdefault(imported, set())
        if importer != imported:
            graph[importer].add(imported)
    return graph


@pytest.mark.parametrize("package", _packages())
def test_no_import_cycle_between_the_parts_of_a_package(package):
    assert _cycles(_parts_graph(package)) == []


def test_the_parts_graph_takes_a_subpackage_whole():
    # the graph the check above rests on: two modules of one subpackage are
    # one node, a module beside them its own
    graph = _parts_graph("corral.tools")
    assert "corral.tools._runtime" in graph and "corral.tools._runtime.view" not in graph
    assert "corral.tools._refusals" in graph["corral.tools._runtime"]
    assert _part("corral.tools._runtime.view", "corral.tools") == "corral.tools._runtime"
    assert _part("corral.cli", "corral") == "corral.cli"
    # the refusals importing the runtime again (as classify once did for the
    # call's context) is the cycle the check above refuses
    graph["corral.tools._refusals"].add("corral.tools._runtime")
    assert _cycles(graph) != []


def test_the_cycle_finder_finds_a_cycle():
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert _cycles(graph) == [["a", "b", "c", "a"]]
    assert _cycles({"a": {"b"}, "b": set()}) == []


@pytest.mark.parametrize("folder", sorted({p.parent for p in MODULES.values()}),
                         ids=lambda p: str(p.relative_to(SRC)))
def test_no_folder_holds_more_than_max_modules(folder):
    modules = sorted(p.name for p in folder.glob("*.py"))
    assert len(modules) <= MAX_MODULES, f"{folder.relative_to(SRC)}: {len(modules)} modules"


def test_the_reader_sees_lazy_and_type_checking_imports_apart():
    # the checks above rest on this reading of the source
    lazy = {(imp.importer, imp.module) for imp in ALL_IMPORTS if imp.lazy}
    eager = {(imp.importer, imp.module) for imp in ALL_IMPORTS if not imp.lazy}
    assert ("corral.cli", "corral.tools") in lazy  # imported inside functions
    assert ("corral.tools", "corral.tools._runtime.toolbox") in eager
    # hosts' annotations name the Toolbox only under TYPE_CHECKING
    assert ("corral.tools._runtime.definitions", "corral.tools._runtime.toolbox") not in (
        lazy | eager)


NATIVE_MODULE = "corral._native"
NATIVE_BACKEND = "corral.contained._native_backend"


def _importers(target: str) -> list[str]:
    return sorted({imp.importer for imp in ALL_IMPORTS if imp.module == target})


def test_the_native_module_is_imported_only_by_the_native_backend():
    # lazy imports count: a tool importing it inside a function would reach
    # around the backend just the same
    assert _importers(NATIVE_MODULE) == [NATIVE_BACKEND]


def test_the_native_backend_is_imported_only_by_backend_selection():
    assert _importers(NATIVE_BACKEND) == ["corral.contained._select"]
    assert any(imp.lazy for imp in ALL_IMPORTS
               if imp.importer == "corral.contained._select" and imp.module == NATIVE_BACKEND)
