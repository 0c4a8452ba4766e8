"""Refusal catalogue: make_directory."""

from __future__ import annotations

from .helpers.catalogue import Case

from corral.tools import Denied

TREE = {"src/main.py": "print(1)\n"}
OUTSIDE_HINT = ("Use a path relative to the root (\".\" is the root itself); '..' may not climb "
                "above it and symlinks that lead out are not followed.")
DENY_HINT = "Do not use this path; work with other files."
HOST_HINT = "Do not repeat this call; ask the user or do something else."


def _no_mkdir(request):
    raise Denied("the layout is fixed")


CASES = [
    Case("make_directory", "file_in_the_way", {"path": "src/main.py"}, "ALREADY_EXISTS",
         "src/main.py already exists and is a file, not a directory; nothing was created",
         "Choose another name for the directory, or use the existing entry as it is.",
         details={"path": "src/main.py", "field": "path", "type": "file", "kind": "exists"},
         tree=TREE),
    Case("make_directory", "dangling_link_in_the_way", {"path": "build"}, "ALREADY_EXISTS",
         "build already exists and is a symlink, not a directory; nothing was created",
         "Choose another name for the directory, or use the existing entry as it is.",
         details={"path": "build", "type": "symlink", "kind": "exists"},
         tree={"build": ("link", "nowhere")}),
    Case("make_directory", "file_as_parent", {"path": "src/main.py/pkg"}, "INVALID_ARGUMENT",
         "src/main.py is a file, so src/main.py/pkg cannot be inside it",
         "Use a path whose directories exist; src/main.py is a file.",
         details={"path": "src/main.py/pkg", "component": "src/main.py",
                  "kind": "not_directory"}, tree=TREE),
    Case("make_directory", "dotdot", {"path": "../made"}, "OUTSIDE_ROOT",
         "../made is outside the root", OUTSIDE_HINT,
         details={"path": "../made", "kind": "dotdot"}),
    Case("make_directory", "absolute_outside", {"path": "/tmp/corral-made"}, "OUTSIDE_ROOT",
         "argument 'path' is an absolute path outside the root", OUTSIDE_HINT,
         details={"field": "path", "kind": "absolute"}),
    Case("make_directory", "through_link_out", {"path": "out/made"}, "OUTSIDE_ROOT",
         "out/made is outside the root", OUTSIDE_HINT,
         details={"path": "out/made", "kind": "symlink"}, tree={"out": ("link", "../outside")}),
    Case("make_directory", "dangling_link_out", {"path": "later"}, "OUTSIDE_ROOT",
         "later is outside the root", OUTSIDE_HINT, details={"path": "later", "kind": "symlink"},
         tree={"later": ("link", "../outside/made")}),
    Case("make_directory", "protected_git", {"path": ".git/hooks/pre-commit.d"}, "DENIED",
         ".git/hooks/pre-commit.d is protected: the host may run it on its own, so the tools "
         "may not create directories in it; nothing was changed",
         "Do not change this path; if the change is needed, the host (the user) must allow it "
         "in its policy.",
         details={"path": ".git/hooks/pre-commit.d", "kind": "protected",
                  "operation": "create directories in"},
         tree={".git/hooks/pre-commit.sample": "#!/bin/sh\n"}),
    Case("make_directory", "deny_rule", {"path": "private/notes"}, "DENIED",
         "private/notes is in a path the host does not allow", DENY_HINT,
         details={"path": "private/notes", "kind": "deny_rule"},
         toolbox_options={"deny": ["private/"]}),
    Case("make_directory", "deny_rule_through_dotdot", {"path": "nx/../private"}, "DENIED",
         "nx/../private is in a path the host does not allow", DENY_HINT,
         details={"kind": "deny_rule"}, toolbox_options={"deny": ["private/"]}),
    Case("make_directory", "denied_by_host", {"path": "build/out"}, "DENIED",
         "the host refused to mkdir build/out: the layout is fixed", HOST_HINT,
         details={"path": "build/out", "operation": "mkdir", "reason": "the layout is fixed",
                  "kind": "host"}, toolbox_options={"authorize": _no_mkdir}),
    Case("make_directory", "read_only_root", {"path": "build"}, "DENIED",
         "this root is read-only: make_directory is not available",
         "Do not try to change files here; read them instead.",
         details={"tool": "make_directory", "kind": "read_only"},
         toolbox_options={"read_only": True}),
    Case("make_directory", "nul", {"path": "a\x00b"}, "INVALID_ARGUMENT",
         "make_directory: argument 'path' contains a NUL byte",
         "Remove the NUL character from 'path'.", details={"field": "path", "problem": "nul"}),
    Case("make_directory", "unknown_argument", {"path": "a", "parents": True},
         "INVALID_ARGUMENT", "make_directory: argument 'parents' is not an argument of this tool",
         "Remove 'parents'; the arguments are: path.", details={"field": "parents"}),
]
