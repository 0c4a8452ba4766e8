"""Refusal catalogue: list_directory with depth (the tree)."""

from __future__ import annotations

from .helpers.catalogue import Case

from corral.tools import Denied

TREE = {"src/lib/core.py": "x = 1\n", "docs/index.md": "# docs\n"}
OUTSIDE_HINT = ("Use a path relative to the root (\".\" is the root itself); '..' may not climb "
                "above it and symlinks that lead out are not followed.")
HOST_HINT = "Do not repeat this call; ask the user or do something else."


def _no_trees(request):
    if getattr(request, "depth", 1) > 1:
        raise Denied("list one level at a time")


CASES = [
    Case("list_directory", "depth_over_the_maximum", {"path": ".", "depth": 11},
         "INVALID_ARGUMENT", "list_directory: argument 'depth' must be at most 10",
         "Pass 'depth' <= 10.", details={"field": "depth", "maximum": 10}),
    Case("list_directory", "depth_zero", {"path": ".", "depth": 0}, "INVALID_ARGUMENT",
         "list_directory: argument 'depth' must be at least 1", "Pass 'depth' >= 1.",
         details={"field": "depth", "minimum": 1}),
    Case("list_directory", "include_ignored_not_boolean", {"path": ".", "includeIgnored": "yes"},
         "INVALID_ARGUMENT", "list_directory: argument 'includeIgnored' must be true or false, "
         "not a string", "Pass 'includeIgnored' as true or false.",
         details={"field": "includeIgnored"}),
    Case("list_directory", "tree_through_link_out", {"path": "out", "depth": 3}, "OUTSIDE_ROOT",
         "out is outside the root", OUTSIDE_HINT, details={"path": "out", "kind": "symlink"},
         tree={"out": ("link", "../outside")}),
    Case("list_directory", "tree_dotdot", {"path": "src/../..", "depth": 2}, "OUTSIDE_ROOT",
         "src/../.. is outside the root", OUTSIDE_HINT, details={"kind": "dotdot"}, tree=TREE),
    Case("list_directory", "tree_denied_by_host", {"path": "src", "depth": 2}, "DENIED",
         "the host refused to list src: list one level at a time", HOST_HINT,
         details={"path": "src", "operation": "list", "reason": "list one level at a time",
                  "kind": "host"}, tree=TREE, toolbox_options={"authorize": _no_trees}),
    Case("list_directory", "tree_of_a_file", {"path": "docs/index.md", "depth": 2},
         "INVALID_ARGUMENT", "docs/index.md is a file, not a directory",
         "Use read_file to read a file; list_directory takes a directory.",
         details={"path": "docs/index.md", "kind": "not_directory"},
         suggested_tool="read_file", suggested_args={"path": "docs/index.md"}, tree=TREE),
]
