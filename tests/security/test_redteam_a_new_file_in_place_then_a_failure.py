"""An independent red-team pass over answers against the disk when a step
fails after the act: where the filesystem has no rename that never
replaces, a new file is made by linking its temporary file to the name
(``linkat``: refused if the name exists) and then removing the temporary
name.  Where that removal failed (``EIO``, ``EACCES``: injected
once through the fault-injecting backend), the new file was in place with
the content, yet ``write_file`` answered ``DENIED`` "...; nothing was
changed" (or ``INTERNAL``), and so did ``apply_patch``'s ``Add File`` and
the text editor's ``create``: a model told nothing was written retries
elsewhere, or a host undoing a turn by its answers leaves the file.

Now the answer agrees with the disk: the file is there, so the call
answers ``ok``, and its temporary name is gone.  Every backend config runs.
"""

from __future__ import annotations

import errno
import hashlib
import os
from pathlib import Path

import pytest

from corral.contained import Root, backend_by_name
from corral.integrations._text_editor import run_text_editor
from corral.testing.backends import Fault, FaultBackend
from corral.tools import Toolbox

CONTENT = "made\n"


def _write(box: Toolbox) -> bool:
    answer = box.call("write_file", {"path": "d/new.txt", "content": CONTENT})
    assert answer["ok"] or answer["code"] in ("DENIED", "INTERNAL"), answer
    if answer["ok"]:
        assert answer["sha256"] == hashlib.sha256(CONTENT.encode()).hexdigest(), answer
    return bool(answer["ok"])


def _patch(box: Toolbox) -> bool:
    answer = box.call("apply_patch", {"input": "*** Begin Patch\n*** Add File: d/new.txt\n"
                                               f"+{CONTENT}*** End Patch\n"})
    return bool(answer["ok"])


def _editor(box: Toolbox) -> bool:
    return not run_text_editor(box, {"command": "create", "path": "d/new.txt",
                                     "file_text": CONTENT}).is_error


@pytest.mark.parametrize("err", [errno.EIO, errno.EACCES], ids=["EIO", "EACCES"])
@pytest.mark.parametrize("make", [_write, _patch, _editor], ids=["write_file", "apply_patch",
                                                               "text_editor_create"])
def test_a_new_files_answer_agrees_with_the_disk_when_its_temporary_name_stays(
        tmp_path: Path, make_root, make, err: int) -> None:
    (tmp_path / "d").mkdir()
    backend = FaultBackend(backend_by_name(make_root.backend_name))
    root = Root(str(tmp_path), backend=backend, fast_path=make_root.fast_path)
    try:
        box = Toolbox(root)
        # the link made the file where the filesystem has no rename that never
        # replaces (a create's first way: one link from the start)
        backend.add(Fault("rename_at", errno.EINVAL, temp=True, times=-1))
        once = backend.add(Fault("unlink_at", err, temp=True, times=1))
        answered_ok = make(box)
    finally:
        root.close()
    assert once.fired == 1, backend.fired
    made = tmp_path / "d" / "new.txt"
    if answered_ok:
        assert made.read_text() == CONTENT
    else:
        assert not made.exists(), "refused, yet the file was made"
    assert sorted(os.listdir(tmp_path / "d")) == (["new.txt"] if answered_ok else [])
    assert answered_ok  # the link made the file: the call did write it
