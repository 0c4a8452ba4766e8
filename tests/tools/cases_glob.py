"""Refusal catalogue: glob."""

from __future__ import annotations

import os
from pathlib import Path

from .helpers.catalogue import Case

from corral.tools import Denied

SRC = {"src/app.py": "x = 1\n", "src/lib/util.py": "y = 2\n", "README.md": "# demo\n"}
OUTSIDE_HINT = ("Use a path relative to the root (\".\" is the root itself); '..' may not climb "
                "above it and symlinks that lead out are not followed.")
HOST_HINT = "Do not repeat this call; ask the user or do something else."
DOTDOT_HINT = ("Remove '..' from the pattern and pass the directory to search as 'path' "
               "instead.")
FILE_HINT = ("glob searches a directory: pass one as 'path' (its directory is {parent}); to "
             "read this file use read_file.")

_swap: dict[str, Path] = {}


def _remember_root(root: Path) -> None:
    _swap["root"] = root


def _swap_src_during_authorization(request) -> bool:
    # the directory authorized is replaced before the search opens it
    root = _swap["root"]
    os.rename(root / "src", root / "src-old")
    (root / "src").mkdir()
    return True


def _deny_glob(request):
    raise Denied("no searching today")


CASES = [
    Case("glob", "not_found_typo", {"pattern": "*.py", "path": "scr"}, "NOT_FOUND",
         "scr does not exist", "Check the name; src exists.",
         details={"path": "scr", "missing": "scr", "field": "path", "didYouMean": ["src"]},
         suggested_tool="glob",
         suggested_args={"pattern": "*.py", "path": "src"}, tree=SRC),
    Case("glob", "not_found_nothing_close", {"pattern": "*.py", "path": "src/zzzzzz"},
         "NOT_FOUND", "src/zzzzzz does not exist",
         "Check the path; list_directory on src shows what is there.",
         details={"path": "src/zzzzzz", "missing": "src/zzzzzz", "field": "path"},
         suggested_tool="list_directory", suggested_args={"path": "src"}, tree=SRC),
    Case("glob", "file_as_path", {"pattern": "*.py", "path": "src/app.py"}, "INVALID_ARGUMENT",
         "src/app.py is a file, not a directory", FILE_HINT.format(parent="src"),
         details={"path": "src/app.py", "kind": "not_directory"},
         suggested_tool="glob", suggested_args={"pattern": "*.py", "path": "src"}, tree=SRC),
    Case("glob", "top_level_file_as_path", {"pattern": "**/*", "path": "README.md"},
         "INVALID_ARGUMENT", "README.md is a file, not a directory",
         FILE_HINT.format(parent="."), details={"path": "README.md", "kind": "not_directory"},
         suggested_tool="glob", suggested_args={"pattern": "**/*", "path": "."}, tree=SRC),
    Case("glob", "fifo_as_path", {"pattern": "*", "path": "pipe"}, "INVALID_ARGUMENT",
         "pipe is not a directory", FILE_HINT.format(parent="."),
         details={"path": "pipe", "kind": "not_directory"},
         suggested_tool="glob", suggested_args={"pattern": "*", "path": "."},
         tree={"pipe": ("fifo",)}),
    Case("glob", "dotdot_pattern", {"pattern": "../*"}, "INVALID_ARGUMENT",
         "pattern '../*' contains '..'; patterns only match below 'path'", DOTDOT_HINT,
         details={"field": "pattern", "pattern": "../*", "kind": "dotdot"}),
    Case("glob", "dotdot_after_doublestar", {"pattern": "**/../../*"}, "INVALID_ARGUMENT",
         "pattern '**/../../*' contains '..'; patterns only match below 'path'", DOTDOT_HINT,
         details={"field": "pattern", "kind": "dotdot"}),
    Case("glob", "dotdot_in_a_brace_alternative", {"pattern": "{src,..}/*.py"},
         "INVALID_ARGUMENT", "pattern '{src,..}/*.py' contains '..'; patterns only match below "
         "'path'", DOTDOT_HINT, details={"field": "pattern", "kind": "dotdot"}),
    Case("glob", "absolute_pattern_outside", {"pattern": "/etc/*"}, "OUTSIDE_ROOT",
         "argument 'pattern' is an absolute path outside the root", OUTSIDE_HINT,
         details={"field": "pattern", "kind": "absolute"}),
    Case("glob", "home_pattern", {"pattern": "~/.ssh/*"}, "OUTSIDE_ROOT",
         "~/.ssh/* is outside the root", OUTSIDE_HINT,
         details={"field": "pattern", "kind": "home"}),
    Case("glob", "absolute_brace_alternative", {"pattern": "{/etc/*,*.py}"}, "INVALID_ARGUMENT",
         "pattern '{/etc/*,*.py}' has an alternative that starts with '/'",
         "Write every alternative relative to 'path'.",
         details={"field": "pattern", "kind": "absolute"}),
    Case("glob", "pattern_names_nothing", {"pattern": "./"}, "INVALID_ARGUMENT",
         "pattern './' names nothing to match",
         "Pass a pattern such as \"**/*.py\" or \"src/*\".",
         details={"field": "pattern", "kind": "pattern"}),
    Case("glob", "too_many_alternatives", {"pattern": "{a,b}{c,d}{e,f}{g,h}{i,j}{k,l}{m,n}"},
         "INVALID_ARGUMENT", "pattern '{a,b}{c,d}{e,f}{g,h}{i,j}{k,l}{m,n}' expands to more "
         "than 64 alternatives", "Use fewer or smaller {a,b} groups.",
         details={"field": "pattern", "kind": "pattern"}),
    Case("glob", "path_dotdot", {"pattern": "*", "path": ".."}, "OUTSIDE_ROOT",
         ".. is outside the root", OUTSIDE_HINT, details={"path": "..", "kind": "dotdot"}),
    Case("glob", "path_absolute_outside", {"pattern": "*", "path": "/etc"}, "OUTSIDE_ROOT",
         "argument 'path' is an absolute path outside the root", OUTSIDE_HINT,
         details={"field": "path", "kind": "absolute"}),
    Case("glob", "path_symlink_out", {"pattern": "*", "path": "out"}, "OUTSIDE_ROOT",
         "out is outside the root", OUTSIDE_HINT, details={"path": "out", "kind": "symlink"},
         tree={"out": ("link", "../outside")}),
    Case("glob", "deny_rule", {"pattern": "*", "path": "secrets"}, "DENIED",
         "secrets is in a path the host does not allow",
         "Do not use this path; work with other files.",
         details={"path": "secrets", "kind": "deny_rule"},
         tree={"secrets/key.pem": "KEY\n"}, toolbox_options={"deny": ["secrets/"]}),
    Case("glob", "denied_by_host", {"pattern": "*.py"}, "DENIED",
         "the host refused to glob .: no searching today", HOST_HINT,
         details={"path": ".", "operation": "glob", "reason": "no searching today",
                  "kind": "host"}, tree=SRC, toolbox_options={"authorize": _deny_glob}),
    Case("glob", "denied_by_host_false", {"pattern": "*.py", "path": "src"}, "DENIED",
         "the host refused to glob src", HOST_HINT,
         details={"path": "src", "operation": "glob", "kind": "host"}, tree=SRC,
         toolbox_options={"authorize": lambda request: False}),
    Case("glob", "swapped_during_authorization", {"pattern": "*.py", "path": "src"}, "STALE",
         "src changed while the call was being authorized; nothing was done",
         "Read the file again, then repeat the call.",
         details={"path": "src", "kind": "swapped"}, tree=SRC, prepare=_remember_root,
         toolbox_options={"authorize": _swap_src_during_authorization}),
    Case("glob", "missing_pattern", {"path": "."}, "INVALID_ARGUMENT",
         "glob: argument 'pattern' is required", "Pass 'pattern' (a string).",
         details={"field": "pattern"}),
    Case("glob", "empty_pattern", {"pattern": ""}, "INVALID_ARGUMENT",
         "glob: argument 'pattern' must not be empty", "Pass a non-empty 'pattern'.",
         details={"field": "pattern"}),
    Case("glob", "wrong_type_include_ignored", {"pattern": "*", "includeIgnored": "yes"},
         "INVALID_ARGUMENT", "glob: argument 'includeIgnored' must be true or false, not a "
         "string", "Pass 'includeIgnored' as true or false.",
         details={"field": "includeIgnored", "expected": "boolean"}),
    Case("glob", "unknown_argument", {"pattern": "*", "recursive": True}, "INVALID_ARGUMENT",
         "glob: argument 'recursive' is not an argument of this tool",
         "Remove 'recursive'; the arguments are: includeIgnored, path, pattern.",
         details={"field": "recursive", "allowed": ["includeIgnored", "path", "pattern"]}),
]
