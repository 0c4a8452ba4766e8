"""Refusal catalogue: list_directory."""

from __future__ import annotations

from .helpers.catalogue import Case

from corral.tools import Denied

TREE = {"src/lib/core.py": "x = 1\n", "docs/index.md": "# docs\n", "README.md": "# demo\n"}
OUTSIDE_HINT = ("Use a path relative to the root (\".\" is the root itself); '..' may not climb "
                "above it and symlinks that lead out are not followed.")
HOST_HINT = "Do not repeat this call; ask the user or do something else."
DENY_HINT = "Do not use this path; work with other files."


def _no_listing(request):
    raise Denied("listing is switched off")


CASES = [
    Case("list_directory", "not_found_typo", {"path": "scr"}, "NOT_FOUND",
         "scr does not exist", "Check the name; src exists.",
         details={"path": "scr", "missing": "scr", "field": "path", "didYouMean": ["src"]},
         suggested_tool="list_directory", suggested_args={"path": "src"}, tree=TREE),
    Case("list_directory", "not_found_typo_in_parent", {"path": "scr/lib"}, "NOT_FOUND",
         "scr/lib does not exist: there is no scr", "Check the name; src/lib exists.",
         details={"path": "scr/lib", "missing": "scr", "didYouMean": ["src/lib"]},
         suggested_tool="list_directory", suggested_args={"path": "src/lib"}, tree=TREE),
    Case("list_directory", "not_found_nothing_close", {"path": "src/zzzzzz"}, "NOT_FOUND",
         "src/zzzzzz does not exist", "Check the path; list_directory on src shows what is there.",
         details={"path": "src/zzzzzz", "missing": "src/zzzzzz"},
         suggested_tool="list_directory", suggested_args={"path": "src"}, tree=TREE),
    Case("list_directory", "file", {"path": "README.md"}, "INVALID_ARGUMENT",
         "README.md is a file, not a directory",
         "Use read_file to read a file; list_directory takes a directory.",
         details={"path": "README.md", "kind": "not_directory"},
         suggested_tool="read_file", suggested_args={"path": "README.md"}, tree=TREE),
    Case("list_directory", "file_with_trailing_slash", {"path": "README.md/"}, "INVALID_ARGUMENT",
         "README.md/ is not a directory", "Pass a directory here.",
         details={"path": "README.md/", "kind": "not_directory"}, tree=TREE),
    Case("list_directory", "fifo", {"path": "pipe"}, "INVALID_ARGUMENT",
         "pipe is a fifo, not a directory", "Pass a directory; list_directory on its parent "
         "shows it.", details={"path": "pipe", "kind": "not_directory", "type": "fifo"},
         tree={"pipe": ("fifo",)}),
    Case("list_directory", "symlink_out", {"path": "out"}, "OUTSIDE_ROOT",
         "out is outside the root", OUTSIDE_HINT, details={"path": "out", "kind": "symlink"},
         tree={"out": ("link", "../outside")}),
    Case("list_directory", "dotdot", {"path": ".."}, "OUTSIDE_ROOT",
         ".. is outside the root", OUTSIDE_HINT, details={"path": "..", "kind": "dotdot"}),
    Case("list_directory", "absolute_outside", {"path": "/etc"}, "OUTSIDE_ROOT",
         "argument 'path' is an absolute path outside the root", OUTSIDE_HINT,
         details={"field": "path", "kind": "absolute"}),
    Case("list_directory", "nul", {"path": "src\x00"}, "INVALID_ARGUMENT",
         "list_directory: argument 'path' contains a NUL byte",
         "Remove the NUL character from 'path'.", details={"field": "path", "problem": "nul"}),
    Case("list_directory", "empty_path", {"path": ""}, "INVALID_ARGUMENT",
         "list_directory: argument 'path' must not be empty", "Pass a non-empty 'path'.",
         details={"field": "path"}),
    Case("list_directory", "denied_by_host_with_reason", {"path": "docs"}, "DENIED",
         "the host refused to list docs: listing is switched off", HOST_HINT,
         details={"path": "docs", "operation": "list", "reason": "listing is switched off",
                  "kind": "host"},
         tree=TREE, toolbox_options={"authorize": _no_listing}),
    Case("list_directory", "deny_rule", {"path": ".git"}, "DENIED",
         ".git is in a path the host does not allow", DENY_HINT,
         details={"path": ".git", "kind": "deny_rule"},
         tree={".git/config": "[core]\n"}, toolbox_options={"deny": [".git/"]}),
    Case("list_directory", "deny_rule_case_spelling", {"path": ".GIT/hooks"}, "DENIED",
         ".GIT/hooks is in a path the host does not allow", DENY_HINT,
         details={"kind": "deny_rule"},
         tree={".git/hooks/pre-commit": "#!/bin/sh\n"}, toolbox_options={"deny": [".git/"]}),
    Case("list_directory", "deny_rule_symlink_alias", {"path": "meta"}, "DENIED",
         "meta is in a path the host does not allow", DENY_HINT,
         details={"kind": "deny_rule"},
         tree={".git/config": "[core]\n", "meta": ("link", ".git")},
         toolbox_options={"deny": [".git/"]}),
    Case("list_directory", "unknown_argument", {"path": ".", "recursive": True},
         "INVALID_ARGUMENT", "list_directory: argument 'recursive' is not an argument of this tool",
         "Remove 'recursive'; the arguments are: depth, includeIgnored, path.",
         details={"field": "recursive"}),
    Case("list_directory", "wrong_type", {"path": ["src"]}, "INVALID_ARGUMENT",
         "list_directory: argument 'path' must be a string, not an array",
         "Pass 'path' as a string.", details={"field": "path", "expected": "string"}),
    Case("list_directory", "arguments_not_an_object", ["src"], "INVALID_ARGUMENT",  # type: ignore
         "list_directory: the arguments must be a JSON object, not an array",
         "Pass the arguments as an object of named fields.", details={"kind": "argument"}),
]
