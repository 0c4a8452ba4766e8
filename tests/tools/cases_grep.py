"""Refusal catalogue: grep."""

from __future__ import annotations

import os
from pathlib import Path

from .helpers.catalogue import Case

from corral.tools import Denied

SRC = {"src/app.py": "def main():\n    return 1\n", "src/util.py": "x = 1\n",
       "README.md": "# demo\n"}
OUTSIDE_HINT = ("Use a path relative to the root (\".\" is the root itself); '..' may not climb "
                "above it and symlinks that lead out are not followed.")
HOST_HINT = "Do not repeat this call; ask the user or do something else."
REGEX_HINT = ("Fix the regular expression (RE2 syntax, as ripgrep's), or pass regex: false "
              "to search for the text literally.")
ALLOWED = ["caseInsensitive", "context", "include", "includeIgnored", "limit", "outputMode",
           "path", "pattern", "regex"]

_swap: dict[str, Path] = {}


def _remember_root(root: Path) -> None:
    _swap["root"] = root


def _swap_file_during_authorization(request) -> bool:
    root = _swap["root"]
    os.rename(root / "src" / "app.py", root / "src" / "old.py")
    (root / "src" / "app.py").write_text("def main():\n    return 2\n")
    return True


def _deny_grep(request):
    raise Denied("searching is off")


def _unsupported(name: str, pattern: str, what: str, rewrite: str, exact: bool,
                 tree: dict | None = None) -> Case:
    says = ("The suggested pattern finds the same lines." if exact else
            "The suggested pattern finds these lines and possibly more; check them.")
    return Case("grep", name, {"pattern": pattern}, "INVALID_ARGUMENT",
                f"the pattern uses {what}, which grep's regex engine (RE2, linear time) does not "
                "run", f"Use the suggested pattern, or rewrite it without {what} (RE2 has no "
                f"backtracking constructs). {says}",
                details={"field": "pattern", "kind": "regex_unsupported", "reason": what,
                         "rewrite": rewrite, "rewriteExact": exact},
                suggested_tool="grep", suggested_args={"pattern": rewrite}, tree=tree or SRC)


CASES = [
    Case("grep", "not_found_typo", {"pattern": "main", "path": "src/ap.py"}, "NOT_FOUND",
         "src/ap.py does not exist", "Check the name; src/app.py exists.",
         details={"path": "src/ap.py", "missing": "src/ap.py", "field": "path",
                  "didYouMean": ["src/app.py"]},
         suggested_tool="grep", suggested_args={"pattern": "main", "path": "src/app.py"},
         tree=SRC),
    Case("grep", "not_found_directory_typo", {"pattern": "main", "path": "scr", "limit": 5},
         "NOT_FOUND", "scr does not exist", "Check the name; src exists.",
         details={"didYouMean": ["src"]}, suggested_tool="grep",
         suggested_args={"pattern": "main", "path": "src", "limit": 5}, tree=SRC),
    Case("grep", "not_found_nothing_close", {"pattern": "main", "path": "docs/zzzzzz"},
         "NOT_FOUND", "docs/zzzzzz does not exist: there is no docs",
         "Check the path; list_directory on . shows what is there.",
         details={"path": "docs/zzzzzz", "missing": "docs", "field": "path"},
         suggested_tool="list_directory", suggested_args={"path": "."}, tree=SRC),
    # RE2's own reason; a literal search is offered only when it finds something
    Case("grep", "bad_regex", {"pattern": "def (main"}, "INVALID_ARGUMENT",
         "the pattern is not a valid regular expression: missing )", REGEX_HINT,
         details={"field": "pattern", "kind": "regex", "reason": "missing )"}, tree=SRC),
    Case("grep", "bad_regex_class", {"pattern": "[a-", "path": "src", "context": 2},
         "INVALID_ARGUMENT", "the pattern is not a valid regular expression: missing ]",
         REGEX_HINT, details={"kind": "regex", "reason": "missing ]"}, tree=SRC),
    Case("grep", "bad_regex_escape", {"pattern": r"\k"}, "INVALID_ARGUMENT",
         "the pattern is not a valid regular expression: invalid escape sequence",
         REGEX_HINT, details={"kind": "regex", "reason": "invalid escape sequence"}, tree=SRC),
    # code pasted as a regex: found as literal text, and that call is offered
    Case("grep", "code_as_regex_unbalanced", {"pattern": "main(", "path": "src"},
         "INVALID_ARGUMENT", "the pattern is not a valid regular expression: missing )",
         REGEX_HINT + " As literal text (regex: false) it is found.",
         details={"kind": "regex", "reason": "missing )"}, suggested_tool="grep",
         suggested_args={"pattern": "main(", "path": "src", "regex": False}, tree=SRC),
    # what RE2 cannot run: refused with a rewrite, verified to find the line
    _unsupported("backreference", r"(\w+) \1", "a backreference", r"(\w+) (?:\w+)", False,
                 tree={"a.txt": "the the\n"}),
    _unsupported("named_backreference", r"(?P<w>x+)y(?P=w)", "a backreference",
                 "(?P<w>x+)y(?:x+)", False, tree={"a.txt": "xxyxx\n"}),
    _unsupported("lookahead", r"def(?= main)", "a lookahead", "def(?: main)", True),
    _unsupported("lookbehind", r"(?<=def )main", "a lookbehind", "(?:def )main", True),
    _unsupported("negative_lookbehind", r"(?<!x)main", "a negative lookbehind", "main", False),
    _unsupported("variable_width_lookbehind", r"(?<=def\s+)main", "a variable-width lookbehind",
                 r"(?:def\s+)main", True),
    _unsupported("possessive", r"ma++in", "a possessive quantifier", "ma+in", False),
    _unsupported("atomic_group", r"(?>ma)in", "an atomic group", "(?:ma)in", False),
    # 'path' given as a glob: the directory and an include, verified
    Case("grep", "path_is_a_glob", {"pattern": "main", "path": "src/*.py"}, "NOT_FOUND",
         "src/*.py does not exist: 'path' names one file or directory, not a glob",
         "Pass the directory as 'path' and the file pattern as 'include'; the suggested call "
         "finds matches.",
         details={"field": "path", "path": "src/*.py", "kind": "path_is_pattern",
                  "directory": "src", "include": "*.py"},
         suggested_tool="grep", suggested_args={"pattern": "main", "path": "src",
                                                "include": "*.py"}, tree=SRC),
    Case("grep", "line_break_in_pattern", {"pattern": "def main():\n    return"},
         "INVALID_ARGUMENT", "the pattern contains a line break, and grep matches within one "
         "line", "Search for one line of the text at a time. Its first line, as literal text, "
         "is found.", details={"field": "pattern", "kind": "multiline"}, suggested_tool="grep",
         suggested_args={"pattern": "def main():", "regex": False}, tree=SRC),
    Case("grep", "dotdot_include", {"pattern": "x", "include": "../*.py"}, "INVALID_ARGUMENT",
         "include '../*.py' contains '..'; patterns only match below 'path'",
         "Remove '..' from the pattern and pass the directory to search as 'path' instead.",
         details={"field": "include", "kind": "dotdot"}, tree=SRC),
    Case("grep", "directory_as_include", {"pattern": "x", "include": "src/"},
         "INVALID_ARGUMENT", "include 'src/' names a directory, and include filters file names",
         "Pass the directory as 'path' and a file pattern such as \"*.py\" as 'include'.",
         details={"field": "include", "kind": "directory"}, tree=SRC),
    Case("grep", "fifo", {"pattern": "x", "path": "pipe"}, "UNSUPPORTED",
         "pipe is a fifo, not a regular file",
         "Use regular files only; this one cannot be read or edited.",
         details={"path": "pipe", "kind": "fifo"}, tree={"pipe": ("fifo",)}),
    Case("grep", "hardlink", {"pattern": "shared", "path": "b.txt"}, "UNSUPPORTED",
         "b.txt is a hard-linked file (2 links), which these tools do not read or edit in place",
         "Use a file that is not hard-linked, or ask the host to allow hard links.",
         details={"path": "b.txt", "kind": "hardlink", "links": 2},
         tree={"a.txt": "shared\n", "b.txt": ("hardlink", "a.txt")}),
    Case("grep", "path_dotdot", {"pattern": "secret", "path": "../outside"}, "OUTSIDE_ROOT",
         "../outside is outside the root", OUTSIDE_HINT,
         details={"path": "../outside", "kind": "dotdot"}),
    Case("grep", "path_symlink_out", {"pattern": "secret", "path": "out"}, "OUTSIDE_ROOT",
         "out is outside the root", OUTSIDE_HINT, details={"path": "out", "kind": "symlink"},
         tree={"out": ("link", "../outside")}),
    Case("grep", "file_symlink_out", {"pattern": "secret", "path": "secret.txt"},
         "OUTSIDE_ROOT", "secret.txt is outside the root", OUTSIDE_HINT,
         details={"path": "secret.txt", "kind": "symlink"},
         tree={"secret.txt": ("link", "../outside/secret.txt")}),
    Case("grep", "path_absolute_outside", {"pattern": "root", "path": "/etc"}, "OUTSIDE_ROOT",
         "argument 'path' is an absolute path outside the root", OUTSIDE_HINT,
         details={"field": "path", "kind": "absolute"}),
    Case("grep", "deny_rule", {"pattern": "KEY", "path": ".env"}, "DENIED",
         ".env is in a path the host does not allow",
         "Do not use this path; work with other files.",
         details={"path": ".env", "kind": "deny_rule"},
         tree={".env": "KEY=1\n"}, toolbox_options={"deny": [".env"]}),
    Case("grep", "denied_by_host", {"pattern": "main"}, "DENIED",
         "the host refused to grep .: searching is off", HOST_HINT,
         details={"path": ".", "operation": "grep", "reason": "searching is off",
                  "kind": "host"}, tree=SRC, toolbox_options={"authorize": _deny_grep}),
    Case("grep", "swapped_during_authorization", {"pattern": "main", "path": "src/app.py"},
         "STALE", "src/app.py changed while the call was being authorized; nothing was done",
         "Read the file again, then repeat the call.",
         details={"path": "src/app.py", "kind": "swapped"}, tree=SRC, prepare=_remember_root,
         toolbox_options={"authorize": _swap_file_during_authorization}),
    Case("grep", "unknown_output_mode", {"pattern": "main", "outputMode": "lines"},
         "INVALID_ARGUMENT", "grep: argument 'outputMode' must be one of 'matches', 'files', "
         "'counts'", "Pass one of 'matches', 'files', 'counts'.",
         details={"field": "outputMode", "allowed": ["matches", "files", "counts"]}),
    Case("grep", "negative_context", {"pattern": "main", "context": -1}, "INVALID_ARGUMENT",
         "grep: argument 'context' must be at least 0", "Pass 'context' >= 0.",
         details={"field": "context", "minimum": 0}),
    Case("grep", "zero_limit", {"pattern": "main", "limit": 0}, "INVALID_ARGUMENT",
         "grep: argument 'limit' must be at least 1", "Pass 'limit' >= 1.",
         details={"field": "limit", "minimum": 1}),
    Case("grep", "wrong_type_regex", {"pattern": "main", "regex": "false"}, "INVALID_ARGUMENT",
         "grep: argument 'regex' must be true or false, not a string",
         "Pass 'regex' as true or false.", details={"field": "regex", "expected": "boolean"}),
    Case("grep", "missing_pattern", {"path": "src"}, "INVALID_ARGUMENT",
         "grep: argument 'pattern' is required", "Pass 'pattern' (a string).",
         details={"field": "pattern"}),
    Case("grep", "unknown_argument", {"pattern": "main", "glob": "*.py"}, "INVALID_ARGUMENT",
         "grep: argument 'glob' is not an argument of this tool",
         f"Remove 'glob'; the arguments are: {', '.join(ALLOWED)}.",
         details={"field": "glob", "allowed": ALLOWED}),
]
