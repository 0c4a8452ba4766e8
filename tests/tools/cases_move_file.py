"""Refusal catalogue: move_file."""

from __future__ import annotations

import os
from pathlib import Path

from .helpers.catalogue import Case

from corral.tools import Denied

TREE = {"a.txt": "alpha\n", "b.txt": "beta\n", "docs/guide.md": "# guide\n", "empty": None}
OUTSIDE_HINT = ("Use a path relative to the root (\".\" is the root itself); '..' may not climb "
                "above it and symlinks that lead out are not followed.")
HOST_HINT = "Do not repeat this call; ask the user or do something else."
DENY_HINT = "Do not use this path; work with other files."
EXISTS_HINT = "Choose another destination, or pass overwrite: true to replace it."

_swap: dict[str, Path] = {}


def _remember_root(root: Path) -> None:
    _swap["root"] = root


def _swap_source_during_authorization(request) -> bool:
    root = _swap["root"]
    os.rename(root / "a.txt", root / "a-old.txt")
    (root / "a.txt").write_text("planted\n")
    return True


def _deny_moves(request):
    raise Denied("the tree is frozen")


CASES = [
    Case("move_file", "source_not_found", {"source": "zzzzzz.txt", "destination": "c.txt"},
         "NOT_FOUND", "zzzzzz.txt does not exist",
         "Check the path; list_directory on . shows what is there.",
         details={"path": "zzzzzz.txt", "missing": "zzzzzz.txt", "field": "source"},
         suggested_tool="list_directory", suggested_args={"path": "."}, tree=TREE),
    Case("move_file", "source_not_found_typo", {"source": "a.tx", "destination": "c.txt"},
         "NOT_FOUND", "a.tx does not exist", "Check the name; a.txt exists.",
         details={"field": "source", "didYouMean": ["a.txt", "b.txt"]},
         suggested_tool="read_file", suggested_args={"path": "a.txt"}, tree=TREE),
    Case("move_file", "destination_exists", {"source": "a.txt", "destination": "b.txt"},
         "ALREADY_EXISTS", "b.txt already exists", EXISTS_HINT,
         details={"field": "destination", "path": "b.txt", "kind": "exists",
                  "existing": "file"}, tree=TREE),
    Case("move_file", "destination_is_a_directory", {"source": "a.txt", "destination": "docs"},
         "ALREADY_EXISTS", "docs already exists",
         "docs is a directory: to move a.txt into it pass destination \"docs/\", or choose "
         "another name.", details={"path": "docs", "kind": "exists", "existing": "directory"},
         tree=TREE),
    Case("move_file", "into_directory_name_taken", {"source": "a.txt", "destination": "docs/"},
         "ALREADY_EXISTS", "docs/a.txt already exists", EXISTS_HINT,
         details={"path": "docs/a.txt", "kind": "exists"},
         tree={**TREE, "docs/a.txt": "other\n"}),
    Case("move_file", "same_path", {"source": "a.txt", "destination": "./a.txt"},
         "INVALID_ARGUMENT", "a.txt and a.txt are the same path", "Pass a different destination.",
         details={"source": "a.txt", "destination": "a.txt", "kind": "same_path"}, tree=TREE),
    Case("move_file", "same_path_through_symlinked_parent",
         {"source": "docs/guide.md", "destination": "alias/guide.md"}, "INVALID_ARGUMENT",
         "docs/guide.md and alias/guide.md are the same path", "Pass a different destination.",
         details={"kind": "same_path"}, tree={**TREE, "alias": ("link", "docs")}),
    Case("move_file", "same_file_hard_links", {"source": "a.txt", "destination": "c.txt"},
         "INVALID_ARGUMENT", "a.txt and c.txt are the same file (hard links or another spelling "
         "of one name)", "Pass a different destination.",
         details={"source": "a.txt", "destination": "c.txt", "kind": "same_file"},
         tree={**TREE, "c.txt": ("hardlink", "a.txt")}),
    Case("move_file", "directory_into_itself", {"source": "docs", "destination": "docs/old/docs"},
         "INVALID_ARGUMENT", "docs/old/docs is inside docs, and a directory cannot be moved into "
         "itself", "Choose a destination outside the directory.",
         details={"source": "docs", "destination": "docs/old/docs", "kind": "into_itself"},
         tree=TREE),
    Case("move_file", "overwrite_directory", {"source": "a.txt", "destination": "empty",
                                              "overwrite": True},
         "INVALID_ARGUMENT", "empty is a directory, which move_file never replaces",
         "Choose another destination, or delete the directory first (delete_file removes empty "
         "directories).", details={"field": "destination", "path": "empty",
                                   "kind": "directory"}, tree=TREE),
    Case("move_file", "directory_over_file", {"source": "empty", "destination": "b.txt",
                                              "overwrite": True},
         "INVALID_ARGUMENT", "b.txt is a file and empty is a directory; a directory cannot "
         "replace a file", "Delete b.txt first, or choose another destination.",
         details={"path": "b.txt", "kind": "not_directory"}, tree=TREE),
    Case("move_file", "source_is_the_root", {"source": ".", "destination": "x"},
         "INVALID_ARGUMENT", "argument 'source' names the root itself, not an entry inside it",
         "Name the file or directory itself, e.g. \"src/old.py\".",
         details={"field": "source", "path": ".", "kind": "root"}, tree=TREE),
    Case("move_file", "source_ends_in_dotdot", {"source": "docs/..", "destination": "x"},
         "INVALID_ARGUMENT", "argument 'source' names a parent directory (..), not an entry "
         "inside it", "Name the file or directory itself, e.g. \"src/old.py\".",
         details={"field": "source", "kind": "root"}, tree=TREE),
    Case("move_file", "source_file_with_slash", {"source": "a.txt/", "destination": "c.txt"},
         "INVALID_ARGUMENT", "a.txt/ ends with '/', but a.txt is a file",
         "Pass \"a.txt\" without the trailing '/'.",
         details={"field": "source", "path": "a.txt", "kind": "not_directory"}, tree=TREE),
    Case("move_file", "destination_parent_is_a_file",
         {"source": "a.txt", "destination": "b.txt/a.txt"}, "INVALID_ARGUMENT",
         "b.txt is a file, so b.txt/a.txt cannot be inside it",
         "Use a path whose directories exist; b.txt is a file.",
         details={"path": "b.txt/a.txt", "kind": "not_directory", "component": "b.txt"},
         tree=TREE),
    Case("move_file", "destination_dotdot", {"source": "a.txt",
                                             "destination": "../outside/a.txt"},
         "OUTSIDE_ROOT", "../outside/a.txt is outside the root", OUTSIDE_HINT,
         details={"path": "../outside/a.txt", "kind": "dotdot"}, tree=TREE),
    Case("move_file", "destination_through_symlink_out",
         {"source": "a.txt", "destination": "out/a.txt"}, "OUTSIDE_ROOT",
         "out/a.txt is outside the root", OUTSIDE_HINT,
         details={"path": "out/a.txt", "kind": "symlink"},
         tree={**TREE, "out": ("link", "../outside")}),
    Case("move_file", "destination_absolute_outside",
         {"source": "a.txt", "destination": "/tmp/a.txt"}, "OUTSIDE_ROOT",
         "argument 'destination' is an absolute path outside the root", OUTSIDE_HINT,
         details={"field": "destination", "kind": "absolute"}, tree=TREE),
    Case("move_file", "source_outside", {"source": "../outside/secret.txt",
                                         "destination": "stolen.txt"},
         "OUTSIDE_ROOT", "../outside/secret.txt is outside the root", OUTSIDE_HINT,
         details={"path": "../outside/secret.txt", "kind": "dotdot"}, tree=TREE),
    Case("move_file", "deny_rule_source", {"source": ".env", "destination": "env.txt"},
         "DENIED", ".env is in a path the host does not allow", DENY_HINT,
         details={"path": ".env", "field": "source", "kind": "deny_rule"},
         tree={".env": "KEY=1\n"}, toolbox_options={"deny": [".env"]}),
    Case("move_file", "deny_rule_destination", {"source": "a.txt", "destination": ".env"},
         "DENIED", ".env is in a path the host does not allow", DENY_HINT,
         details={"path": ".env", "field": "destination", "kind": "deny_rule"},
         tree=TREE, toolbox_options={"deny": [".env"]}),
    Case("move_file", "deny_rule_inside_a_directory", {"source": "config", "destination": "cfg"},
         "DENIED", "config holds a path the host does not allow, so it cannot be moved",
         "Move the other entries one by one instead.",
         details={"path": "config", "field": "source", "kind": "deny_rule"},
         tree={"config/app.toml": "x = 1\n", "config/.env": "KEY=1\n"},
         toolbox_options={"deny": ["config/.env"]}),
    Case("move_file", "denied_by_host", {"source": "a.txt", "destination": "c.txt"}, "DENIED",
         "the host refused to move a.txt: the tree is frozen", HOST_HINT,
         details={"path": "a.txt", "operation": "move", "reason": "the tree is frozen",
                  "kind": "host"}, tree=TREE, toolbox_options={"authorize": _deny_moves}),
    Case("move_file", "swapped_during_authorization", {"source": "a.txt", "destination": "c.txt"},
         "STALE", "a.txt changed while the call was being authorized; nothing was done",
         "Read the file again, then repeat the call.",
         details={"path": "a.txt", "kind": "swapped"}, tree=TREE, prepare=_remember_root,
         toolbox_options={"authorize": _swap_source_during_authorization}),
    Case("move_file", "missing_destination", {"source": "a.txt"}, "INVALID_ARGUMENT",
         "move_file: argument 'destination' is required", "Pass 'destination' (a string).",
         details={"field": "destination"}, tree=TREE),
    Case("move_file", "wrong_type_overwrite", {"source": "a.txt", "destination": "b.txt",
                                               "overwrite": 1},
         "INVALID_ARGUMENT", "move_file: argument 'overwrite' must be true or false, not an "
         "integer", "Pass 'overwrite' as true or false.", details={"field": "overwrite"},
         tree=TREE),
]


# -- protected and denied destinations, host answers, a model's likely mistakes ----------

CASES += [
    Case("move_file", "protected_destination", {"source": "hook.sh",
                                                "destination": ".git/hooks/pre-commit"},
         "DENIED", ".git/hooks/pre-commit is protected: the host may run it on its own, so the "
         "tools may not move onto it; nothing was changed",
         "Do not change this path; if the change is needed, the host (the user) must allow it "
         "in its policy.",
         details={"path": ".git/hooks/pre-commit", "operation": "move onto",
                  "field": "destination", "kind": "protected"}, exact=True,
         tree={"hook.sh": "#!/bin/sh\n", ".git/hooks": None}),
    Case("move_file", "directory_holding_a_protected_path", {"source": "app", "destination": "b"},
         "DENIED", "app holds a path that is protected (the host may run it on its own), so it "
         "cannot be moved", "Move the other entries one by one instead; if this move is needed, "
         "the host (the user) must allow it.",
         details={"path": "app", "field": "source", "kind": "protected"}, exact=True,
         tree={"app/.envrc": "export A=1\n", "app/main.py": "x\n"}),
    Case("move_file", "directory_onto_a_file_offers_no_overwrite",
         {"source": "pkg", "destination": "notes.txt"}, "ALREADY_EXISTS",
         "notes.txt already exists",
         "notes.txt is a file and pkg is a directory, which cannot replace it: choose another "
         "destination, or delete notes.txt first.",
         details={"path": "notes.txt", "field": "destination", "existing": "file",
                  "kind": "exists"}, exact=True,
         tree={"pkg/a.py": "a\n", "notes.txt": "n\n"}),
]
