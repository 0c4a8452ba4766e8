"""An independent red-team pass over a root the filesystem will not let
this process open again: a call re-opens the root directory (``"."``
beneath the root's own fd) to hold it as the parent of a new name, to list
it, to search it or to describe it.  Where the host's permissions refuse
that open (``EACCES``: a root directory without read permission, mode
0311, can still be searched by name), the error left the core without a
path, and every tool answered ``INTERNAL`` ("a bug in corral", a traceback
in the log): write_file, make_directory, delete_file, move_file,
list_directory, glob, grep, file_info, read_file.

It is the host's permission, not a bug: the answer is ``DENIED`` kind
``permission``, saying the root directory is what may not be opened, and
nothing is changed.  These machines run as root, which permissions do not
stop, so the error is injected (``corral.testing``'s ``FaultBackend``) at
each re-open of the root a call makes, one at a time, on every backend
config.
"""

from __future__ import annotations

import errno
import os
from pathlib import Path

import pytest

from corral.contained import Root, backend_by_name
from corral.testing.backends import Fault, FaultBackend
from corral.tools import Toolbox

PATCH = "*** Begin Patch\n*** Add File: q.txt\n+x\n*** End Patch"
CALLS = [
    ("read_file", {"path": "a.txt"}),
    ("read_files", {"paths": ["a.txt", "sub/c.txt"]}),
    ("file_info", {"path": "."}),
    ("file_info", {"path": "a.txt"}),
    ("list_directory", {"path": "."}),
    ("list_directory", {"path": ".", "depth": 2}),
    ("glob", {"pattern": "**/*.txt"}),
    ("grep", {"pattern": "hello"}),
    ("write_file", {"path": "n.txt", "content": "new\n"}),
    ("write_file", {"path": "a.txt", "content": "new\n", "overwrite": True}),
    ("edit_file", {"path": "a.txt", "oldText": "hello", "newText": "bye"}),
    ("make_directory", {"path": "m/n"}),
    ("move_file", {"source": "sub", "destination": "sub2"}),
    ("move_file", {"source": "a.txt", "destination": "z.txt"}),
    ("delete_file", {"path": "b.txt"}),
    ("apply_patch", {"input": PATCH}),
]
IDS = [f"{n}-{tool}" for n, (tool, _) in enumerate(CALLS)]


def _tree(base: Path) -> Path:
    (base / "sub").mkdir(parents=True)
    (base / "a.txt").write_text("hello\n")
    (base / "b.txt").write_text("b\n")
    (base / "sub" / "c.txt").write_text("hello\n")
    return base


def _snapshot(base: Path) -> dict[str, bytes | None]:
    return {str(p.relative_to(base)): None if p.is_dir() else p.read_bytes()
            for p in sorted(base.rglob("*"))}


def _toolbox(make_root, base: Path, hook, tool: str, method: str = "open_at") -> Toolbox:
    backend = FaultBackend(backend_by_name(make_root.backend_name))
    root = Root(str(base), backend=backend, fast_path=make_root.fast_path)
    box = Toolbox(root, editing="apply_patch") if tool == "apply_patch" else Toolbox(root)
    # after the Toolbox opened: what is tried is the call's own re-open
    backend.add(Fault(method, None, name=".", times=-1, hook=hook))
    return box


def _refused_parts(answer: dict) -> list[dict]:
    if answer.get("ok") is True and "files" in answer:
        return [one for one in answer["files"] if one.get("ok") is False]
    return [answer] if answer.get("ok") is False else []


@pytest.mark.parametrize(("tool", "args"), CALLS, ids=IDS)
def test_the_root_refused_when_opened_again_is_a_typed_refusal(tmp_path, make_root, tool,
                                                               args):
    opens = [0]

    def count() -> None:
        opens[0] += 1

    counted = _toolbox(make_root, _tree(tmp_path / "count"), count, tool)
    assert counted.call(tool, args)["ok"] is True
    counted.close()
    internal = []
    for nth in range(opens[0]):
        base = _tree(tmp_path / f"at{nth}")
        seen = [0]

        def fail_at(nth=nth, seen=seen) -> None:
            seen[0] += 1
            if seen[0] == nth + 1:
                raise OSError(errno.EACCES, os.strerror(errno.EACCES))

        box = _toolbox(make_root, base, fail_at, tool)
        before = _snapshot(base)
        answer = box.call(tool, args)
        box.close()
        for part in _refused_parts(answer):
            if part["code"] == "INTERNAL":
                internal.append((nth, part))
                continue
            assert part["code"] == "DENIED", (nth, part)
            assert part["details"]["kind"] == "permission", (nth, part)
            assert "root directory" in part["message"], (nth, part)
            assert str(tmp_path) not in str(part), (nth, part)
        if answer["ok"] is False:
            assert _snapshot(base) == before, (nth, answer)
    assert not internal, internal


@pytest.mark.parametrize(("tool", "args"), CALLS, ids=IDS)
def test_the_root_refused_when_its_reopened_fd_is_looked_at(tmp_path, make_root, tool, args):
    """The same where the open goes through and the first look at what it
    opened (``fstat``, as a security module may refuse a ``getattr``) is
    refused: that look named no path either."""
    looks = [0]

    def count() -> None:
        looks[0] += 1

    counted = _toolbox(make_root, _tree(tmp_path / "count"), count, tool, method="fstat")
    assert counted.call(tool, args)["ok"] is True
    counted.close()
    internal = []
    for nth in range(min(looks[0], 12)):
        base = _tree(tmp_path / f"at{nth}")
        seen = [0]

        def fail_at(nth=nth, seen=seen) -> None:
            seen[0] += 1
            if seen[0] == nth + 1:
                raise OSError(errno.EACCES, os.strerror(errno.EACCES))

        box = _toolbox(make_root, base, fail_at, tool, method="fstat")
        before = _snapshot(base)
        answer = box.call(tool, args)
        box.close()
        for part in _refused_parts(answer):
            if part["code"] == "INTERNAL":
                internal.append((nth, part))
                continue
            assert part["code"] == "DENIED", (nth, part)
            assert part["details"]["kind"] == "permission", (nth, part)
        if answer["ok"] is False:
            assert _snapshot(base) == before, (nth, answer)
    assert not internal, internal


SEARCHES = [
    ("glob", {"pattern": "**/*.txt"}),
    ("grep", {"pattern": "hello"}),
    ("glob", {"pattern": "**/*.txt", "path": "sub"}),
    ("grep", {"pattern": "hello", "path": "sub"}),
]


@pytest.mark.parametrize(("tool", "args"), SEARCHES,
                         ids=[f"{tool}-{args.get('path', '.')}" for tool, args in SEARCHES])
def test_a_search_whose_directory_may_not_be_listed_is_a_typed_refusal(tmp_path, make_root,
                                                                       tool, args):
    """A search's own directory (the root, or the folder it names) whose
    listing the host refuses (``EACCES`` on reading its entries, as a
    security module may refuse a directory's ``read``): a listing of it
    was refused ``DENIED``, a search was ``INTERNAL``."""
    base = _tree(tmp_path / "t")
    backend = FaultBackend(backend_by_name(make_root.backend_name))
    box = Toolbox(Root(str(base), backend=backend, fast_path=make_root.fast_path))
    backend.add(Fault("scandir", errno.EACCES, name=args.get("path", "."), times=-1))
    answer = box.call(tool, args)
    box.close()
    assert answer["ok"] is False, answer
    assert answer["code"] == "DENIED", answer
    assert answer["details"]["kind"] == "permission", answer
