"""Refusal catalogue: read_files (a refusal of the whole call; each file's own
answer is pinned in test_read_files.py)."""

from __future__ import annotations

from .helpers.catalogue import Case

from corral.tools import Limits

TREE = {"a.txt": "alpha\n", "b.txt": "beta\n", "c.txt": "gamma\n"}

CASES = [
    Case("read_files", "too_many_paths", {"paths": [f"f{i}.txt" for i in range(51)]},
         "INVALID_ARGUMENT", "read_files: argument 'paths' has 51 items, over the limit of 50",
         "Pass at most 50 items in 'paths'.", details={"field": "paths", "limit": 50}),
    Case("read_files", "over_the_hosts_limit", {"paths": ["a.txt", "b.txt", "c.txt"]},
         "INVALID_ARGUMENT", "read_files: argument 'paths' has 3 items, over the limit of 2",
         "Pass at most 2 paths; read the rest in another call.",
         details={"field": "paths", "limit": 2, "kind": "argument"}, tree=TREE,
         toolbox_options={"limits": Limits(read_files_paths=2)}),
    Case("read_files", "no_paths", {"paths": []}, "INVALID_ARGUMENT",
         "read_files: argument 'paths' needs at least 1 item(s)",
         "Pass at least 1 item(s) in 'paths'.", details={"field": "paths"}),
    Case("read_files", "paths_not_a_list", {"paths": "a.txt"}, "INVALID_ARGUMENT",
         "read_files: argument 'paths' must be an array, not a string",
         "Pass 'paths' as an array.", details={"field": "paths", "expected": "array"}),
    Case("read_files", "path_with_nul", {"paths": ["a.txt", "b\x00.txt"]}, "INVALID_ARGUMENT",
         "read_files: argument 'paths[1]' contains a NUL byte",
         "Remove the NUL character from 'paths[1]'.",
         details={"field": "paths[1]", "problem": "nul"}, tree=TREE),
    Case("read_files", "empty_path", {"paths": [""]}, "INVALID_ARGUMENT",
         "read_files: argument 'paths[0]' must not be empty", "Pass a non-empty 'paths[0]'.",
         details={"field": "paths[0]"}),
    Case("read_files", "path_not_a_string", {"paths": [3]}, "INVALID_ARGUMENT",
         "read_files: argument 'paths[0]' must be a string, not an integer",
         "Pass 'paths[0]' as a string.", details={"field": "paths[0]"}),
    Case("read_files", "offset_zero", {"paths": ["a.txt"], "offset": 0}, "INVALID_ARGUMENT",
         "read_files: argument 'offset' must be at least 1", "Pass 'offset' >= 1.",
         details={"field": "offset", "minimum": 1}, tree=TREE),
    Case("read_files", "unknown_argument", {"paths": ["a.txt"], "path": "a.txt"},
         "INVALID_ARGUMENT", "read_files: argument 'path' is not an argument of this tool",
         "Remove 'path'; the arguments are: limit, offset, paths.", details={"field": "path"},
         tree=TREE),
]
