"""The policed view is the one filesystem handle of the tools: no module
under ``corral/tools`` but the view imports or is handed the core's
``Root``, ``Handle`` or ``Target``, nor reaches ``ctx.root`` or the view's
``shared.root``.

Read from the source (the AST), so a new module, import, annotation or
alias that breaks the rule fails here.  :data:`HOST_SIDE` names the one
module allowed to name ``Root`` besides the view, and why.
"""

from __future__ import annotations

import ast
from pathlib import Path

import corral.tools

TOOLS = Path(corral.tools.__file__).parent
FORBIDDEN = {"Root", "Handle", "Target"}
# the view is a package: the call's view (where the tools reach the core
# through) and the modules it rests on
VIEW = "_runtime/view/call.py"
VIEW_PACKAGE = {f"_runtime/view/{name}.py" for name in (
    "__init__", "call", "decide", "freshness", "links", "linkwalk", "locks", "opening", "pinned",
    "tree_lock", "walks")}
# the view's own types for reading and listing tools (an open file, an entry
# looked at, an open directory): made by the view around what it decided
# on, part of it
VIEW_MODULES = {*VIEW_PACKAGE, "_runtime/view_read.py", "_runtime/view_walk.py"}
HOST_SIDE = {
    # the multi-root router acts on no file: it opens a host's root beneath
    # another (through the view) and hands it to the host's own opener, which
    # makes a Toolbox of it; its type names what the host receives
    "_runtime/workspace.py": ["imports Root"],
}


def _reaches_core(path: Path) -> list[str]:
    """What in ``path`` imports, annotates with or reaches the core's handles."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and (node.module or "").endswith("contained"):
            found += [f"imports {a.name}" for a in node.names if a.name in FORBIDDEN]
        elif isinstance(node, ast.Attribute) and node.attr == "root" and isinstance(
                node.value, ast.Name) and node.value.id == "ctx":
            found.append(f"ctx.root at line {node.lineno}")
        elif isinstance(node, ast.Attribute) and node.attr == "root" and isinstance(
                node.value, ast.Attribute) and node.value.attr == "shared":
            # the view's shared state holds the Root: ``view.shared.root`` is the core
            found.append(f"shared.root at line {node.lineno}")
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and \
                node.value in FORBIDDEN:
            found.append(f"names {node.value}")
    return found


def _modules() -> dict[str, list[str]]:
    return {str(p.relative_to(TOOLS)): _reaches_core(p) for p in sorted(TOOLS.rglob("*.py"))}


def test_no_tool_module_but_the_view_holds_the_core():
    offenders = {name: why for name, why in _modules().items()
                 if why and name not in VIEW_MODULES and HOST_SIDE.get(name) != why}
    assert not offenders, offenders


def test_the_mutating_tools_act_through_the_view_only():
    modules = _modules()
    for name in ("write_file", "edit_file", "move_file", "delete_file", "make_directory"):
        assert modules[f"_builtin/{name}.py"] == [], name


def test_the_listing_tools_act_through_the_view_only():
    modules = _modules()
    for name in ("_builtin/list_directory.py", "_read/tree.py", "_builtin/glob_tool.py",
                 "_search/walk.py", "_builtin/grep.py"):
        assert modules[name] == [], name


def test_the_host_side_exception_still_needs_its_place():
    modules = _modules()
    assert {name: modules.get(name) for name in HOST_SIDE} == HOST_SIDE
    assert modules[VIEW], "the view is where the core is held"


def test_the_file_read_tools_act_through_the_view_only():
    modules = _modules()
    for name in ("_builtin/read_file.py", "_builtin/read_files.py", "_builtin/file_info.py",
                 "_read/media.py", "_edit/content.py"):
        assert modules[name] == [], name


def test_the_view_hands_out_no_alias_of_the_core():
    """A name such as ``Opened = Root`` in the view would carry the core
    past the check above into any module importing it."""
    for name in VIEW_MODULES:
        tree = ast.parse((TOOLS / name).read_text(encoding="utf-8"))
        aliases = [node.lineno for node in ast.walk(tree)
                   if isinstance(node, (ast.Assign, ast.AnnAssign))
                   and isinstance(node.value, ast.Name) and node.value.id in FORBIDDEN]
        assert not aliases, (name, aliases)
