"""corral's own in-flight names (a write's temporary file,
``.NAME.<12 hex>.corral-tmp``, :func:`corral.contained.is_temp_name`) are
not there for a model: no listing, search, count or suggestion shows one,
and a path naming one is refused by every tool, the same whether or not
one is there (``INVALID_ARGUMENT`` kind ``temporary_name``).

No one-at-a-time order of calls shows such a name, so a read beside a write
in flight that showed one told a state no order gives (the calls-sent-at-once
battery found it: grep answered "1 file searched, no match" of the empty
temporary file); and a call that could name one could read another call's
content before it is in place, or replace, move or delete it under that
call.  Tried two ways on every backend config: a real write paused just
before its rename (a :class:`FaultBackend` hook, the reads made meanwhile
through a second Toolbox on the plain backend, so the native listing and
scanning are the ones tried), and files of the form left on the disk as a
crashed earlier run leaves them (hidden too: nothing tells a leftover from a
write of another process in flight).  Names only like the form (another
number of hex digits, capitals, no leading dot, another suffix) stay
ordinary files.
"""

from __future__ import annotations

import json
import os
import re
import threading
from pathlib import Path
from typing import Any

import pytest

from corral.contained import Root, backend_by_name
from corral.testing.backends import Fault, FaultBackend
from corral.tools import Toolbox

BODY = "in-flight-body-7c1"  # what a temporary file holds: never in an answer
TEMP = ".a.0123456789ab.corral-tmp"
TEMP_DIR = ".d.fedcba987654.corral-tmp"  # a directory of the form
LOOK_ALIKES = (".a.0123456789a.corral-tmp", ".a.0123456789AB.corral-tmp",
               "a.0123456789ab.corral-tmp", ".a.0123456789ab.corral-tmp2",
               ".a.0123456789ab.tmp", "." + "n" * 33 + ".0123456789ab.corral-tmp")
IN_FLIGHT = re.compile(r"\.[0-9a-f]{12}\.corral-tmp")  # a temporary file named
HANG = 20.0

def is_temp_name(name: str) -> bool:
    """The form a write's temporary file is named by (said here again, not
    imported: the test states it)."""
    return re.fullmatch(r"\.[^/]{1,32}\.[0-9a-f]{12}\.corral-tmp", name, re.DOTALL) is not None
  # seconds: a hang detector only


def _reads(path: str) -> list[tuple[str, dict[str, Any]]]:
    """Every read that lists, searches, counts or suggests in ``path``."""
    return [("list_directory", {"path": path}),
            ("list_directory", {"path": path, "depth": 3}),
            ("list_directory", {"path": ".", "depth": 4}),
            ("glob", {"pattern": "**", "path": path}),
            ("glob", {"pattern": "**/.*", "path": path}),
            ("glob", {"pattern": "**/*corral-tmp*"}),
            ("glob", {"pattern": "**/"}),
            ("grep", {"pattern": "body", "path": path}),
            ("grep", {"pattern": "bo[d]y"}),
            ("grep", {"pattern": "zzz-nowhere", "path": path}),
            ("grep", {"pattern": "body", "outputMode": "counts"}),
            ("file_info", {"path": path}),
            ("read_file", {"path": f"{path}/a"}),  # missing: its didYouMean
            ("read_file", {"path": f"{path}/.a"})]


def _told(box: Toolbox, path: str) -> str:
    return json.dumps([box.call(name, args) for name, args in _reads(path)])


def _plain(make_root: Any, base: str) -> Root:
    return make_root(base)


@pytest.mark.parametrize("where", ["top", "sub"])
def test_a_write_in_flight_is_not_there_for_any_read(sec_tmp, make_root, where):
    base = Path(sec_tmp)
    (base / "sub").mkdir()
    (base / "sub" / "kept.txt").write_text("kept\n")
    rel = "tasks.json" if where == "top" else "sub/tasks.json"
    folder = "." if where == "top" else "sub"
    paused, resume = threading.Event(), threading.Event()

    def pause() -> None:
        paused.set()
        assert resume.wait(HANG), "never resumed"

    writer_backend = FaultBackend(backend_by_name(make_root.backend_name))
    fault = writer_backend.add(Fault("rename_at", None, name="tasks.json", temp=True,
                                     hook=pause))
    writer_root = Root(sec_tmp, backend=writer_backend, fast_path=make_root.fast_path)
    answer: dict[str, Any] = {}
    try:
        with Toolbox(writer_root) as writer, Toolbox(_plain(make_root, sec_tmp)) as reader:
            thread = threading.Thread(target=lambda: answer.update(
                writer.call("write_file", {"path": rel, "content": f"{BODY}\n"})))
            thread.start()
            try:
                assert paused.wait(HANG), "the write never reached its rename"
                on_disk = [n for n in os.listdir(base / folder) if is_temp_name(n)]
                assert len(on_disk) == 1, os.listdir(base / folder)  # the write is in flight
                told = _told(reader, folder)
                assert not IN_FLIGHT.search(told) and BODY not in told, told
                # a directory's size counts its entries on tmpfs: none is told
                info = reader.call("file_info", {"path": folder})
                assert "size" not in info and info["links"] == (3 if folder == "." else 2), info
                # named directly (the real name, read off the disk): refused, unread
                named = f"{folder}/{on_disk[0]}" if folder != "." else on_disk[0]
                for name, args in [("read_file", {"path": named}),
                                   ("read_files", {"paths": [named]}),
                                   ("file_info", {"path": named}),
                                   ("grep", {"pattern": "in", "path": named})]:
                    said = reader.call(name, args)
                    refusal = said["files"][0] if name == "read_files" else said
                    assert refusal.get("details", {}).get("kind") == "temporary_name", said
                    assert BODY not in json.dumps(said), said
            finally:
                resume.set()
                thread.join(HANG)
            assert not thread.is_alive()
    finally:
        writer_root.close()
    assert fault.fired == 1
    assert answer.get("ok") is True, answer
    assert (base / rel).read_text() == f"{BODY}\n"
    assert not [n for n in os.listdir(base / folder) if is_temp_name(n)]


def _left_by_a_crash(base: Path) -> None:
    """A tree with files of the form in it, as a crashed run leaves them,
    and names only like the form."""
    (base / "sub").mkdir()
    (base / "sub" / "kept.txt").write_text("kept\n")
    (base / "sub" / TEMP).write_text(f"{BODY}\n")
    (base / "sub" / ".kept.txt.00000000aaaa.corral-tmp").write_text("")  # empty, as at creation
    (base / "sub" / TEMP_DIR).mkdir()
    (base / "sub" / TEMP_DIR / "inner.txt").write_text(f"{BODY}\n")
    (base / TEMP).write_text(f"{BODY}\n")
    os.symlink("sub/kept.txt", base / "sub" / ".l.0123456789ab.corral-tmp")


def test_a_crashed_runs_temporary_files_are_not_there(sec_tmp, make_root):
    base = Path(sec_tmp)
    _left_by_a_crash(base)
    with Toolbox(_plain(make_root, sec_tmp)) as box:
        told = _told(box, "sub")
        assert not IN_FLIGHT.search(told) and BODY not in told, told
        listed = box.call("list_directory", {"path": "sub"})
        assert [e["name"] for e in listed["entries"]] == ["kept.txt"], listed
        assert listed["total"] == 1 and "denied" not in listed, listed
        # a directory's links count what it shows: sub holds no directory
        assert box.call("file_info", {"path": "sub"})["links"] == 2
        assert box.call("grep", {"pattern": "kept", "path": "sub"})["filesSearched"] == 1
        # deny rules count what they hide; a temporary name is not among them
    with Toolbox(_plain(make_root, sec_tmp), deny=["sub/kept.txt"]) as box:
        listed = box.call("list_directory", {"path": "sub"})
        assert listed["entries"] == [] and listed.get("denied") == 1, listed
        assert box.call("file_info", {"path": "sub"})["links"] == 2
        found = box.call("glob", {"pattern": "**", "path": "sub"})
        assert found["paths"] == [] and found.get("denied") == 1, found


def test_names_only_like_the_form_are_ordinary_files(sec_tmp, make_root):
    base = Path(sec_tmp)
    for name in LOOK_ALIKES:
        (base / name).write_text(f"{name} look-alike\n")
    with Toolbox(_plain(make_root, sec_tmp)) as box:
        listed = box.call("list_directory", {"path": "."})
        assert sorted(e["name"] for e in listed["entries"]) == sorted(LOOK_ALIKES), listed
        found = box.call("glob", {"pattern": "**/.*"})
        assert sorted(found["paths"]) == sorted(n for n in LOOK_ALIKES if n[0] == "."), found
        grepped = box.call("grep", {"pattern": "look-alike", "outputMode": "files"})
        assert grepped["filesSearched"] == len(LOOK_ALIKES), grepped
        for name in LOOK_ALIKES:
            assert box.call("read_file", {"path": name})["ok"], name
            assert box.call("write_file", {"path": name, "content": "new\n",
                                           "overwrite": True})["ok"], name
            assert box.call("delete_file", {"path": name})["ok"], name
    assert os.listdir(base) == []


CALLS = [("read_file", {"path": TEMP}),
         ("read_files", {"paths": [TEMP]}),
         ("file_info", {"path": TEMP}),
         ("file_info", {"path": f"sub/{TEMP_DIR}/inner.txt"}),
         ("list_directory", {"path": f"sub/{TEMP_DIR}"}),
         ("grep", {"pattern": "in", "path": TEMP}),
         ("glob", {"pattern": "**", "path": f"sub/{TEMP_DIR}"}),
         ("write_file", {"path": TEMP, "content": "model\n", "overwrite": True}),
         ("write_file", {"path": f"sub/{TEMP_DIR}/new.txt", "content": "model\n"}),
         ("edit_file", {"path": TEMP, "oldText": BODY, "newText": "model"}),
         ("delete_file", {"path": TEMP}),
         ("delete_file", {"path": f"sub/{TEMP_DIR}"}),
         ("move_file", {"source": TEMP, "destination": "out.txt"}),
         ("move_file", {"source": "sub/kept.txt", "destination": TEMP, "overwrite": True}),
         ("move_file", {"source": "sub/kept.txt", "destination": f"sub/{TEMP_DIR}/x"}),
         ("make_directory", {"path": f"{TEMP}/q"}),
         ("read_file", {"path": f"sub/../{TEMP}"}),
         ("read_file", {"path": f"./{TEMP}/"})]


@pytest.mark.parametrize("there", [True, False], ids=["there", "absent"])
def test_a_path_naming_one_is_refused_the_same_whether_or_not_it_is_there(
        sec_tmp, make_root, there):
    base = Path(sec_tmp)
    (base / "sub").mkdir()
    (base / "sub" / "kept.txt").write_text("kept\n")
    if there:
        (base / TEMP).write_text(f"{BODY}\n")
        (base / "sub" / TEMP_DIR).mkdir()
        (base / "sub" / TEMP_DIR / "inner.txt").write_text(f"{BODY}\n")
    before = sorted(os.walk(base))
    answers = []
    with Toolbox(_plain(make_root, sec_tmp)) as box:
        for name, args in CALLS:
            said = box.call(name, args)
            refusal = said["files"][0] if name == "read_files" else said
            assert refusal.get("code") == "INVALID_ARGUMENT", (name, args, said)
            assert refusal["details"]["kind"] == "temporary_name", (name, args, said)
            assert BODY not in json.dumps(said), said
            answers.append(said)
    assert sorted(os.walk(base)) == before  # nothing read, made, changed, moved or deleted
    if there:
        assert (base / TEMP).read_text() == f"{BODY}\n"
    # the same answers either way (compared with the run that has none)
    expected = _refusals_without_files(sec_tmp, make_root)
    assert answers == expected


def _refusals_without_files(sec_tmp: str, make_root: Any) -> list[dict[str, Any]]:
    other = Path(sec_tmp) / "other"
    other.mkdir()
    (other / "sub").mkdir()
    (other / "sub" / "kept.txt").write_text("kept\n")
    try:
        with Toolbox(_plain(make_root, str(other))) as box:
            return [box.call(name, args) for name, args in CALLS]
    finally:
        for top, dirs, files in os.walk(other, topdown=False):
            for name in files:
                os.unlink(os.path.join(top, name))
            for name in dirs:
                os.rmdir(os.path.join(top, name))
        os.rmdir(other)
