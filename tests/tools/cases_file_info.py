"""Refusal catalogue: file_info."""

from __future__ import annotations

from .helpers.catalogue import Case

from corral.tools import Denied

TREE = {"src/main.py": "print(1)\n", "docs/index.md": "# docs\n"}
OUTSIDE_HINT = ("Use a path relative to the root (\".\" is the root itself); '..' may not climb "
                "above it and symlinks that lead out are not followed.")
DENY_HINT = "Do not use this path; work with other files."
HOST_HINT = "Do not repeat this call; ask the user or do something else."


def _no_metadata(request):
    raise Denied("metadata is private")


CASES = [
    Case("file_info", "not_found_typo", {"path": "scr/main.py"}, "NOT_FOUND",
         "scr/main.py does not exist: there is no scr", "Check the name; src/main.py exists.",
         details={"path": "scr/main.py", "missing": "scr", "field": "path",
                  "didYouMean": ["src/main.py"]},
         suggested_tool="file_info", suggested_args={"path": "src/main.py"}, tree=TREE),
    Case("file_info", "not_found_nothing_close", {"path": "src/zzzzzz"}, "NOT_FOUND",
         "src/zzzzzz does not exist", "Check the path; list_directory on src shows what is there.",
         details={"path": "src/zzzzzz", "missing": "src/zzzzzz"},
         suggested_tool="list_directory", suggested_args={"path": "src"}, tree=TREE),
    Case("file_info", "dotdot", {"path": "../outside/secret.txt"}, "OUTSIDE_ROOT",
         "../outside/secret.txt is outside the root", OUTSIDE_HINT,
         details={"path": "../outside/secret.txt", "kind": "dotdot"}),
    Case("file_info", "absolute_outside", {"path": "/etc/passwd"}, "OUTSIDE_ROOT",
         "argument 'path' is an absolute path outside the root", OUTSIDE_HINT,
         details={"field": "path", "kind": "absolute"}),
    Case("file_info", "through_link_out", {"path": "out/secret.txt"}, "OUTSIDE_ROOT",
         "out/secret.txt is outside the root", OUTSIDE_HINT,
         details={"path": "out/secret.txt", "kind": "symlink"},
         tree={"out": ("link", "../outside")}),
    Case("file_info", "link_out_with_slash", {"path": "out/"}, "OUTSIDE_ROOT",
         "out/ is outside the root", OUTSIDE_HINT, details={"path": "out/", "kind": "symlink"},
         tree={"out": ("link", "../outside")}),
    Case("file_info", "deny_rule", {"path": ".env"}, "DENIED",
         ".env is in a path the host does not allow", DENY_HINT,
         details={"path": ".env", "kind": "deny_rule"},
         tree={".env": "TOKEN=1\n"}, toolbox_options={"deny": [".env"]}),
    Case("file_info", "deny_rule_through_alias", {"path": "meta/config"}, "DENIED",
         "meta/config is in a path the host does not allow", DENY_HINT,
         details={"path": "meta/config", "kind": "deny_rule"},
         tree={".git/config": "[core]\n", "meta": ("link", ".git")},
         toolbox_options={"deny": [".git/"]}),
    Case("file_info", "denied_by_host", {"path": "docs/index.md"}, "DENIED",
         "the host refused to inspect docs/index.md: metadata is private", HOST_HINT,
         details={"path": "docs/index.md", "operation": "inspect",
                  "reason": "metadata is private", "kind": "host"},
         tree=TREE, toolbox_options={"authorize": _no_metadata}),
    Case("file_info", "nul", {"path": "src\x00"}, "INVALID_ARGUMENT",
         "file_info: argument 'path' contains a NUL byte",
         "Remove the NUL character from 'path'.", details={"field": "path", "problem": "nul"}),
    Case("file_info", "missing_path", {}, "INVALID_ARGUMENT",
         "file_info: argument 'path' is required", "Pass 'path' (a string).",
         details={"field": "path"}),
    Case("file_info", "unknown_argument", {"path": ".", "follow": True}, "INVALID_ARGUMENT",
         "file_info: argument 'follow' is not an argument of this tool",
         "Remove 'follow'; the arguments are: path.", details={"field": "follow"}),
]
