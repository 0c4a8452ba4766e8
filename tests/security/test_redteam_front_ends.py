"""An independent red-team pass over the front ends and the vendor edit
tools, tried as a hostile model (or an unlucky disk) would: patches that
fail part way, moves and deletes of files whose mode keeps them private or
runnable.

Every test asserts the secure behaviour on every backend config.
"""

from __future__ import annotations

import errno
import os
import stat
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from corral.contained import Root, backend_by_name
from corral.testing.backends import Fault, FaultBackend
from corral.tools import Toolbox


@contextmanager
def _faulty_box(make_root, path: Path, *faults: Fault) -> Iterator[Toolbox]:
    """A Toolbox offering apply_patch on ``path`` with ``faults`` injected,
    on this test's backend config."""
    backend = FaultBackend(backend_by_name(make_root.backend_name), *faults)
    root = Root(str(path), backend=backend, fast_path=make_root.fast_path)
    try:
        yield Toolbox(root, editing="apply_patch")
    finally:
        root.close()


def _tree(base: Path) -> dict[str, tuple[bytes, int]]:
    """Every file and directory under ``base``: its bytes (files) and mode."""
    out = {}
    for path in sorted(base.rglob("*")):
        info = path.lstat()
        data = path.read_bytes() if stat.S_ISREG(info.st_mode) else b""
        out[str(path.relative_to(base))] = (data, stat.S_IMODE(info.st_mode))
    return out


def _private_and_runnable(base: Path) -> None:
    (base / "notes").mkdir()
    (base / "notes" / "private.txt").write_text("my private notes\n")
    os.chmod(base / "notes" / "private.txt", 0o600)
    (base / "run.sh").write_text("#!/bin/sh\necho hi\n")
    os.chmod(base / "run.sh", 0o750)
    (base / "b.txt").write_text("one\ntwo\n")


_DELETE_MOVE_UPDATE = """*** Begin Patch
*** Delete File: notes/private.txt
*** Update File: run.sh
*** Move to: bin/run2.sh
@@
 #!/bin/sh
-echo hi
+echo bye
*** Update File: b.txt
@@
 one
-two
+TWO
*** End Patch"""


@pytest.mark.parametrize("method,err,name", [
    ("rename_at", errno.ENOSPC, "b.txt"),   # the last file's write fails
    ("open_at", errno.ENOSPC, "run2.sh"),  # the moved file's new text finds no room
    ("unlink_at", errno.EIO, "private.txt"),  # the delete itself fails
], ids=["write", "move-source", "delete"])
def test_a_patch_that_fails_part_way_leaves_every_file_as_it_was(tmp_path, make_root, method,
                                                                  err, name):
    """A patch deleting a 0600 file and moving a 0750 script, whose later
    step fails: every file must be back as it was, its mode included (a
    private file put back world-readable is a leak to every local user; a
    script put back without its execute bit is a change the user did not
    make), and nothing the patch made may be left behind."""
    _private_and_runnable(tmp_path)
    before = _tree(tmp_path)
    fault = Fault(method, err, name=name, temp=method == "open_at")
    with _faulty_box(make_root, tmp_path, fault) as box:
        answer = box.call("apply_patch", {"input": _DELETE_MOVE_UPDATE})
    assert answer["ok"] is False, answer
    assert fault.fired, "the fault never fired: the test did not test the failure"
    assert _tree(tmp_path) == before, answer


def test_a_patch_that_moves_a_file_keeps_its_mode(tmp_path, make_root):
    """``*** Move to:`` renames the file as move_file does: a private file
    stays private, a script stays runnable."""
    _private_and_runnable(tmp_path)
    box = Toolbox(make_root(str(tmp_path)), editing="apply_patch")
    answer = box.call("apply_patch", {"input": """*** Begin Patch
*** Update File: run.sh
*** Move to: bin/run2.sh
@@
 #!/bin/sh
-echo hi
+echo bye
*** Update File: notes/private.txt
*** Move to: notes/kept.txt
@@
-my private notes
+my private notes, moved
*** End Patch"""})
    assert answer["ok"] is True, answer
    assert (tmp_path / "bin" / "run2.sh").read_text() == "#!/bin/sh\necho bye\n"
    assert stat.S_IMODE((tmp_path / "bin" / "run2.sh").stat().st_mode) == 0o750
    assert stat.S_IMODE((tmp_path / "notes" / "kept.txt").stat().st_mode) == 0o600
    assert not (tmp_path / "run.sh").exists() and not (tmp_path / "notes" / "private.txt").exists()
