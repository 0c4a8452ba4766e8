"""Refusal catalogue: delete_file."""

from __future__ import annotations

import os
from pathlib import Path

from .helpers.catalogue import Case

from corral.tools import Denied

TREE = {"a.txt": "alpha\n", "docs/guide.md": "# guide\n", "docs/api.md": "# api\n",
        "one/only.txt": "x\n", "empty": None}
OUTSIDE_HINT = ("Use a path relative to the root (\".\" is the root itself); '..' may not climb "
                "above it and symlinks that lead out are not followed.")
HOST_HINT = "Do not repeat this call; ask the user or do something else."

_swap: dict[str, Path] = {}


def _remember_root(root: Path) -> None:
    _swap["root"] = root


def _swap_during_authorization(request) -> bool:
    root = _swap["root"]
    os.rename(root / "a.txt", root / "a-kept.txt")
    (root / "a.txt").write_text("someone else's\n")
    return True


def _deny_deletes(request):
    raise Denied("nothing is deleted without review")


CASES = [
    Case("delete_file", "not_found", {"path": "zzzzzz.txt"}, "NOT_FOUND",
         "zzzzzz.txt does not exist", "Check the path; list_directory on . shows what is there.",
         details={"path": "zzzzzz.txt", "missing": "zzzzzz.txt", "field": "path"},
         suggested_tool="list_directory", suggested_args={"path": "."}, tree=TREE),
    Case("delete_file", "not_empty", {"path": "docs"}, "INVALID_ARGUMENT",
         "docs is a directory with 2 entries; delete_file removes only empty directories",
         "Delete or move what is inside it first; list_directory shows it.",
         details={"path": "docs", "kind": "not_empty", "entries": 2},
         suggested_tool="list_directory", suggested_args={"path": "docs"}, tree=TREE),
    Case("delete_file", "not_empty_one_entry", {"path": "one/"}, "INVALID_ARGUMENT",
         "one is a directory with 1 entry; delete_file removes only empty directories",
         "Delete or move what is inside it first; list_directory shows it.",
         details={"path": "one", "kind": "not_empty", "entries": 1},
         suggested_tool="list_directory", suggested_args={"path": "one"}, tree=TREE),
    Case("delete_file", "root", {"path": "."}, "INVALID_ARGUMENT",
         "argument 'path' names the root itself, not an entry inside it",
         "Name the file or directory itself, e.g. \"src/old.py\".",
         details={"field": "path", "path": ".", "kind": "root"}, tree=TREE),
    Case("delete_file", "ends_in_dotdot", {"path": "docs/.."}, "INVALID_ARGUMENT",
         "argument 'path' names a parent directory (..), not an entry inside it",
         "Name the file or directory itself, e.g. \"src/old.py\".",
         details={"field": "path", "kind": "root"}, tree=TREE),
    Case("delete_file", "file_with_slash", {"path": "a.txt/"}, "INVALID_ARGUMENT",
         "a.txt/ ends with '/', but a.txt is a file", "Pass \"a.txt\" without the trailing '/'.",
         details={"path": "a.txt", "kind": "not_directory"}, tree=TREE),
    Case("delete_file", "parent_is_a_file", {"path": "a.txt/b"}, "INVALID_ARGUMENT",
         "a.txt is a file, so a.txt/b cannot be inside it",
         "Use a path whose directories exist; a.txt is a file.",
         details={"path": "a.txt/b", "kind": "not_directory", "component": "a.txt"}, tree=TREE),
    Case("delete_file", "dotdot", {"path": "../outside/secret.txt"}, "OUTSIDE_ROOT",
         "../outside/secret.txt is outside the root", OUTSIDE_HINT,
         details={"path": "../outside/secret.txt", "kind": "dotdot"}, tree=TREE),
    Case("delete_file", "through_symlink_out", {"path": "out/secret.txt"}, "OUTSIDE_ROOT",
         "out/secret.txt is outside the root", OUTSIDE_HINT,
         details={"path": "out/secret.txt", "kind": "symlink"},
         tree={**TREE, "out": ("link", "../outside")}),
    Case("delete_file", "absolute_outside", {"path": "/etc/hostname"}, "OUTSIDE_ROOT",
         "argument 'path' is an absolute path outside the root", OUTSIDE_HINT,
         details={"field": "path", "kind": "absolute"}, tree=TREE),
    Case("delete_file", "deny_rule", {"path": ".git/config"}, "DENIED",
         ".git/config is in a path the host does not allow",
         "Do not use this path; work with other files.",
         details={"path": ".git/config", "kind": "deny_rule"},
         tree={".git/config": "[core]\n"}, toolbox_options={"deny": [".git/"]}),
    Case("delete_file", "denied_by_host", {"path": "a.txt"}, "DENIED",
         "the host refused to delete a.txt: nothing is deleted without review", HOST_HINT,
         details={"path": "a.txt", "operation": "delete",
                  "reason": "nothing is deleted without review", "kind": "host"},
         tree=TREE, toolbox_options={"authorize": _deny_deletes}),
    Case("delete_file", "swapped_during_authorization", {"path": "a.txt"}, "STALE",
         "a.txt changed while the call was being authorized; nothing was done",
         "Read the file again, then repeat the call.",
         details={"path": "a.txt", "kind": "swapped"}, tree=TREE, prepare=_remember_root,
         toolbox_options={"authorize": _swap_during_authorization}),
    Case("delete_file", "missing_path", {}, "INVALID_ARGUMENT",
         "delete_file: argument 'path' is required", "Pass 'path' (a string).",
         details={"field": "path"}),
    Case("delete_file", "wrong_type_path", {"path": ["a.txt"]}, "INVALID_ARGUMENT",
         "delete_file: argument 'path' must be a string, not an array",
         "Pass 'path' as a string.", details={"field": "path", "expected": "string"}),
]


# -- the safe defaults: protected paths --------------------------------------------------

CASES += [
    Case("delete_file", "protected_git_config", {"path": ".git/config"}, "DENIED",
         ".git/config is protected: the host may run it on its own, so the tools may not delete "
         "it; nothing was changed",
         "Do not change this path; if the change is needed, the host (the user) must allow it "
         "in its policy.",
         details={"path": ".git/config", "operation": "delete", "field": "path",
                  "kind": "protected"}, exact=True, tree={".git/config": "[core]\n"}),
]
