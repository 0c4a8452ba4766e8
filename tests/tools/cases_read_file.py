"""Refusal catalogue: read_file."""

from __future__ import annotations

import hashlib

from .helpers.catalogue import Case

from corral.tools import Denied

# binary, and not an image: one byte off a PNG signature (a real PNG is an image:
# cases_read_file_images.py)
PNG = b"\x89PNX\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x01"
LATIN1 = b"first line\ncaf\xe9\n"
UTF16 = "hello\n".encode("utf-16")
SRC = {"src/util.py": "x = 1\n", "README.md": "# demo\n"}
OUTSIDE_HINT = ("Use a path relative to the root (\".\" is the root itself); '..' may not climb "
                "above it and symlinks that lead out are not followed.")
DENY_HINT = "Do not use this path; work with other files."
HOST_HINT = "Do not repeat this call; ask the user or do something else."
THREE = "one\ntwo\nthree\n"
LONG_NAME = "a" * 256
WIDE_PATH = "é" * 2500  # 2,500 characters, 5,000 bytes


def _deny_notes(request):
    raise Denied("notes are private today")


CASES = [
    Case("read_file", "not_found_typo_in_name", {"path": "src/utl.py"}, "NOT_FOUND",
         "src/utl.py does not exist", "Check the name; src/util.py exists.",
         details={"path": "src/utl.py", "missing": "src/utl.py", "field": "path",
                  "didYouMean": ["src/util.py"]},
         suggested_tool="read_file", suggested_args={"path": "src/util.py"}, tree=SRC),
    Case("read_file", "not_found_typo_in_parent", {"path": "scr/util.py"}, "NOT_FOUND",
         "scr/util.py does not exist: there is no scr", "Check the name; src/util.py exists.",
         details={"path": "scr/util.py", "missing": "scr", "didYouMean": ["src/util.py"]},
         suggested_tool="read_file", suggested_args={"path": "src/util.py"}, tree=SRC),
    Case("read_file", "not_found_keeps_window", {"path": "src/utl.py", "limit": 5}, "NOT_FOUND",
         "src/utl.py does not exist", "Check the name; src/util.py exists.",
         details={"didYouMean": ["src/util.py"]},
         suggested_tool="read_file", suggested_args={"path": "src/util.py", "limit": 5}, tree=SRC),
    Case("read_file", "not_found_nothing_close", {"path": "src/zzzzzz.txt"}, "NOT_FOUND",
         "src/zzzzzz.txt does not exist", "Check the path; list_directory on src shows what is "
         "there.", details={"path": "src/zzzzzz.txt", "missing": "src/zzzzzz.txt"},
         suggested_tool="list_directory", suggested_args={"path": "src"}, tree=SRC),
    Case("read_file", "not_found_hides_denied_name", {"path": ".emv"}, "NOT_FOUND",
         ".emv does not exist", "Check the path; list_directory on . shows what is there.",
         details={"path": ".emv"}, suggested_tool="list_directory", suggested_args={"path": "."},
         tree={".env": "KEY=1\n"}, toolbox_options={"deny": [".env"]}),
    Case("read_file", "directory", {"path": "src"}, "INVALID_ARGUMENT",
         "src is a directory, not a file",
         "Use glob to find the files under it (list_directory shows one level); read_file reads "
         "one file.", details={"path": "src", "kind": "directory"},
         suggested_tool="glob", suggested_args={"path": "src", "pattern": "**/*"}, tree=SRC),
    Case("read_file", "root_directory", {"path": "."}, "INVALID_ARGUMENT",
         ". is a directory, not a file",
         "Use glob to find the files under it (list_directory shows one level); read_file reads "
         "one file.", details={"path": ".", "kind": "directory"},
         suggested_tool="glob", suggested_args={"path": ".", "pattern": "**/*"}, tree=SRC),
    Case("read_file", "binary", {"path": "img.png"}, "UNSUPPORTED",
         f"img.png is a binary file ({len(PNG)} bytes), which read_file does not show",
         "Do not read binary files with read_file; look for the text file you need with glob or "
         "grep.", details={"path": "img.png", "kind": "binary", "size": len(PNG)},
         tree={"img.png": PNG}),
    Case("read_file", "undecodable", {"path": "notes.txt"}, "UNSUPPORTED",
         "notes.txt is not valid UTF-8 text (the first bad byte is on line 2)",
         "Do not read this file with read_file; ask the user to convert it to UTF-8 if you need "
         "it.", details={"path": "notes.txt", "kind": "encoding", "size": len(LATIN1), "line": 2,
                         "byteOffset": 14},
         tree={"notes.txt": LATIN1}),
    Case("read_file", "utf16", {"path": "wide.txt"}, "UNSUPPORTED",
         "wide.txt is UTF-16 text, which read_file does not decode (it reads UTF-8)",
         "Do not read this file with read_file; ask the user to convert it to UTF-8 if you need "
         "it.", details={"path": "wide.txt", "kind": "encoding", "encoding": "utf-16"},
         tree={"wide.txt": UTF16 + b"\x00"}),  # a UTF-16 mark over an odd count of bytes
    Case("read_file", "fifo", {"path": "pipe"}, "UNSUPPORTED",
         "pipe is a fifo, not a regular file",
         "Use regular files only; this one cannot be read or edited.",
         details={"path": "pipe", "kind": "fifo"}, tree={"pipe": ("fifo",)}),
    Case("read_file", "hardlink", {"path": "b.txt"}, "UNSUPPORTED",
         "b.txt is a hard-linked file (2 links), which these tools do not read or edit in place",
         "Use a file that is not hard-linked, or ask the host to allow hard links.",
         details={"path": "b.txt", "kind": "hardlink", "links": 2},
         tree={"a.txt": "shared\n", "b.txt": ("hardlink", "a.txt")}),
    Case("read_file", "symlink_out_relative", {"path": "link.txt"}, "OUTSIDE_ROOT",
         "link.txt is outside the root", OUTSIDE_HINT,
         details={"path": "link.txt", "kind": "symlink"},
         tree={"link.txt": ("link", "../outside/secret.txt")}),
    Case("read_file", "symlink_out_absolute", {"path": "passwd"}, "OUTSIDE_ROOT",
         "passwd is outside the root", OUTSIDE_HINT,
         details={"path": "passwd", "kind": "symlink"}, tree={"passwd": ("link", "/etc/passwd")}),
    Case("read_file", "symlink_out_in_parent", {"path": "out/secret.txt"}, "OUTSIDE_ROOT",
         "out/secret.txt is outside the root", OUTSIDE_HINT,
         details={"path": "out/secret.txt", "kind": "symlink"},
         tree={"out": ("link", "../outside")}),
    Case("read_file", "absolute_outside", {"path": "/etc/passwd"}, "OUTSIDE_ROOT",
         "argument 'path' is an absolute path outside the root", OUTSIDE_HINT,
         details={"field": "path", "kind": "absolute"}),
    Case("read_file", "dotdot", {"path": "../outside/secret.txt"}, "OUTSIDE_ROOT",
         "../outside/secret.txt is outside the root", OUTSIDE_HINT,
         details={"path": "../outside/secret.txt", "kind": "dotdot"}),
    Case("read_file", "dotdot_inside_then_out", {"path": "src/../../outside/secret.txt"},
         "OUTSIDE_ROOT", "src/../../outside/secret.txt is outside the root", OUTSIDE_HINT,
         details={"kind": "dotdot"}, tree=SRC),
    Case("read_file", "home", {"path": "~/.ssh/id_rsa"}, "OUTSIDE_ROOT",
         "~/.ssh/id_rsa is outside the root", OUTSIDE_HINT, details={"kind": "home"}),
    Case("read_file", "symlink_loop", {"path": "loop"}, "UNSUPPORTED",
         "loop leads through a symlink loop or more than 40 symlinks (at loop)",
         "Use the real path of the file, without the links.",
         details={"path": "loop", "kind": "symlink_loop"}, tree={"loop": ("link", "loop")}),
    Case("read_file", "file_as_parent", {"path": "README.md/x"}, "INVALID_ARGUMENT",
         "README.md is a file, so README.md/x cannot be inside it",
         "Use a path whose directories exist; README.md is a file.",
         details={"path": "README.md/x", "kind": "not_directory", "component": "README.md"},
         tree=SRC),
    Case("read_file", "nul", {"path": "a\x00b"}, "INVALID_ARGUMENT",
         "read_file: argument 'path' contains a NUL byte",
         "Remove the NUL character from 'path'.", details={"field": "path", "problem": "nul"}),
    Case("read_file", "name_256_bytes", {"path": LONG_NAME}, "INVALID_ARGUMENT",
         f"{LONG_NAME[:120]}... is not a usable path: path component is too long",
         "Pass a shorter path of plain names separated by '/'.",
         details={"kind": "path_too_long"}),
    Case("read_file", "path_5000_bytes", {"path": WIDE_PATH}, "INVALID_ARGUMENT",
         "argument 'path' is 5000 bytes, over the limit of 4096",
         "Pass a shorter path relative to the root.",
         details={"field": "path", "kind": "path_too_long", "limit": 4096}),
    Case("read_file", "path_5000_characters", {"path": "a/" * 2500}, "INVALID_ARGUMENT",
         "read_file: argument 'path' is 5000 characters, over the limit of 4096",
         "Pass a shorter 'path'.", details={"field": "path", "limit": 4096, "length": 5000}),
    Case("read_file", "empty_path", {"path": ""}, "INVALID_ARGUMENT",
         "read_file: argument 'path' must not be empty", "Pass a non-empty 'path'.",
         details={"field": "path", "kind": "argument"}),
    Case("read_file", "denied_by_host_with_reason", {"path": "notes.txt"}, "DENIED",
         "the host refused to read notes.txt: notes are private today", HOST_HINT,
         details={"path": "notes.txt", "operation": "read", "reason": "notes are private today",
                  "kind": "host"},
         tree={"notes.txt": "hello\n"}, toolbox_options={"authorize": _deny_notes}),
    Case("read_file", "denied_by_host_false", {"path": "notes.txt"}, "DENIED",
         "the host refused to read notes.txt", HOST_HINT,
         details={"path": "notes.txt", "operation": "read", "kind": "host"},
         tree={"notes.txt": "hello\n"}, toolbox_options={"authorize": lambda request: False}),
    Case("read_file", "deny_rule", {"path": ".env"}, "DENIED",
         ".env is in a path the host does not allow", DENY_HINT,
         details={"path": ".env", "kind": "deny_rule"},
         tree={".env": "KEY=1\n"}, toolbox_options={"deny": [".env"]}),
    Case("read_file", "deny_rule_case_spelling", {"path": ".ENV"}, "DENIED",
         ".ENV is in a path the host does not allow", DENY_HINT,
         details={"path": ".ENV", "kind": "deny_rule"},
         tree={".env": "KEY=1\n", ".ENV": "KEY=2\n"}, toolbox_options={"deny": [".env"]}),
    Case("read_file", "deny_rule_nfd_spelling", {"path": "cafe\u0301.txt"}, "DENIED",
         "cafe\u0301.txt is in a path the host does not allow", DENY_HINT,
         details={"kind": "deny_rule"},
         tree={"cafe\u0301.txt": "menu\n"}, toolbox_options={"deny": ["caf\u00e9.txt"]}),
    Case("read_file", "deny_rule_symlink_alias", {"path": "alias"}, "DENIED",
         "alias is in a path the host does not allow", DENY_HINT,
         details={"path": "alias", "kind": "deny_rule"},
         tree={".env": "KEY=1\n", "alias": ("link", ".env")}, toolbox_options={"deny": [".env"]}),
    Case("read_file", "deny_rule_ancestor", {"path": ".git/config"}, "DENIED",
         ".git/config is in a path the host does not allow", DENY_HINT,
         details={"path": ".git/config", "kind": "deny_rule"},
         tree={".git/config": "[core]\n"}, toolbox_options={"deny": [".git/**"]}),
    Case("read_file", "deny_rule_directory_alias", {"path": "cfg/config"}, "DENIED",
         "cfg/config is in a path the host does not allow", DENY_HINT,
         details={"kind": "deny_rule"},
         tree={".git/config": "[core]\n", "cfg": ("link", ".git")},
         toolbox_options={"deny": [".git/"]}),
    Case("read_file", "unknown_argument", {"path": "README.md", "lines": 3}, "INVALID_ARGUMENT",
         "read_file: argument 'lines' is not an argument of this tool",
         "Remove 'lines'; the arguments are: limit, offset, path.",
         details={"field": "lines", "allowed": ["limit", "offset", "path"]}, tree=SRC),
    Case("read_file", "wrong_type_path", {"path": 5}, "INVALID_ARGUMENT",
         "read_file: argument 'path' must be a string, not an integer",
         "Pass 'path' as a string.", details={"field": "path", "expected": "string"}),
    # a quoted number is taken as the number (tests/tools/test_quoted_numbers.py); a
    # string that is not one is refused
    Case("read_file", "wrong_type_offset", {"path": "README.md", "offset": "ten"},
         "INVALID_ARGUMENT", "read_file: argument 'offset' must be an integer, not a string",
         "Pass 'offset' as an integer.", details={"field": "offset"}, tree=SRC),
    Case("read_file", "offset_zero", {"path": "README.md", "offset": 0}, "INVALID_ARGUMENT",
         "read_file: argument 'offset' must be at least 1", "Pass 'offset' >= 1.",
         details={"field": "offset", "minimum": 1}, tree=SRC),
    Case("read_file", "missing_path", {}, "INVALID_ARGUMENT",
         "read_file: argument 'path' is required", "Pass 'path' (a string).",
         details={"field": "path"}),
    Case("read_file", "offset_past_end", {"path": "three.txt", "offset": 10}, "INVALID_ARGUMENT",
         "offset 10 is past the end of three.txt, which has 3 lines",
         "Pass an offset from 1 to 3; the file may have changed, so read it again from the start.",
         details={"path": "three.txt", "field": "offset", "kind": "offset_past_end",
                  "totalLines": 3, "currentSha256": hashlib.sha256(THREE.encode()).hexdigest()},
         suggested_tool="read_file", suggested_args={"path": "three.txt"},
         tree={"three.txt": THREE}),
]


# -- several matches, secrets, time limit, cancel, a host's bad answer -------------------------

def _cancelled():
    from corral.tools import CancelToken
    token = CancelToken()
    token.cancel()
    return token


BIG = "line\n" * (3 * 1024 * 1024 // 5)  # streamed: the read loop's checkpoints run
SECRET_HINT = ("Do not use this file; if its content is needed, ask the user (the host must "
               "allow secret files explicitly).")

CASES += [
    Case("read_file", "glob_pattern_many_matches", {"path": "src/*.py"}, "INVALID_ARGUMENT",
         "src/*.py is a glob pattern, not a file; it matches 2 files (src/a.py, src/b.py)",
         "Read the files one by one (read_file takes one path); they are in details.matches.",
         details={"path": "src/*.py", "field": "path", "matches": ["src/a.py", "src/b.py"],
                  "total": 2, "truncated": False, "kind": "path_is_pattern"}, exact=True,
         suggested_tool="glob", suggested_args={"pattern": "*.py", "path": "src"},
         tree={"src/a.py": "a\n", "src/b.py": "b\n", "src/c.txt": "c\n"}),
    Case("read_file", "glob_pattern_one_match", {"path": "**/*.txt"}, "INVALID_ARGUMENT",
         "**/*.txt is a glob pattern, not a file; it matches 1 file (src/c.txt)",
         "Read the file it matches: src/c.txt.",
         details={"path": "**/*.txt", "field": "path", "matches": ["src/c.txt"], "total": 1,
                  "truncated": False, "kind": "path_is_pattern"}, exact=True,
         suggested_tool="read_file", suggested_args={"path": "src/c.txt"},
         tree={"src/a.py": "a\n", "src/c.txt": "c\n"}),
    Case("read_file", "secret_file", {"path": ".env"}, "DENIED",
         ".env looks like a secret file (credentials or keys), which the tools may not read here",
         SECRET_HINT, details={"path": ".env", "operation": "read", "field": "path",
                               "kind": "secret"}, exact=True,
         tree={".env": "API_KEY=sk-1\n"}),
    Case("read_file", "secret_through_a_link", {"path": "config/settings"}, "DENIED",
         "config/settings looks like a secret file (credentials or keys), which the tools may "
         "not read here", SECRET_HINT,
         details={"path": "config/settings", "operation": "read", "field": "path",
                  "kind": "secret"}, exact=True,
         tree={"deploy/id_rsa": "-----BEGIN OPENSSH PRIVATE KEY-----\n", "config": None,
               "config/settings": ("link", "../deploy/id_rsa")}),
    Case("read_file", "time_limit", {"path": "big.log"}, "TOO_LARGE",
         "read_file ran past its time limit of 0 s and was stopped; nothing was changed",
         "Narrow the call (a smaller path, a more specific pattern, a smaller window) and try "
         "again.", details={"seconds": 0, "kind": "time_limit"}, exact=True,
         tree={"big.log": BIG}, call_options={"timeout": 0}),
    Case("read_file", "cancelled", {"path": "big.log"}, "DENIED",
         "read_file was cancelled by the host before it finished; nothing was changed",
         "Do not repeat this call unless the user asks for it again.",
         details={"kind": "cancelled"}, exact=True, tree={"big.log": BIG},
         call_options={"cancel": _cancelled()}),
    Case("read_file", "host_answer_not_a_bool", {"path": "README.md"}, "DENIED",
         "the host refused to read README.md: its authorize callback returned a value of type "
         "str, which is not an answer (only None or True allow, False denies)",
         "Do not repeat this call; ask the user to fix the host's authorize callback.",
         details={"path": "README.md", "operation": "read", "returned": "a value of type str",
                  "kind": "host_unexpected"}, exact=True, tree=SRC,
         toolbox_options={"authorize": lambda request: "no"}),
]
