"""An independent red-team pass over the state a failed call leaves behind:
a call that makes parent directories first asks whether the root directory
was removed (an ``fstat`` of the root's fd, ``st_nlink == 0``).  One
failing ``fstat`` there (``EIO`` of a network filesystem, ``ENOMEM``,
injected once through the fault-injecting backend) was taken as "the root
is gone" and remembered for good: that call and every later call of the
Toolbox answered ``INTERNAL``, though the root was there and no fault
fired again (one transient error ended the session).

Now the failing call alone fails; the next calls are served.  Every
backend config runs.
"""

from __future__ import annotations

import errno
from pathlib import Path

import pytest

from corral.contained import Root, backend_by_name
from corral.testing.backends import Fault, FaultBackend
from corral.tools import Toolbox

_MAKING_PARENTS = [
    ("make_directory", {"path": "x/y"}),
    ("write_file", {"path": "x/y/f.txt", "content": "z\n"}),
    ("apply_patch", {"input": "*** Begin Patch\n*** Add File: x/y/p.txt\n+z\n*** End Patch\n"}),
]


@pytest.mark.parametrize("err", [errno.EIO, errno.ENOMEM], ids=["EIO", "ENOMEM"])
@pytest.mark.parametrize("tool,args", _MAKING_PARENTS, ids=[t for t, _ in _MAKING_PARENTS])
def test_one_failed_look_at_the_root_fails_that_call_alone(
        tmp_path: Path, make_root, tool: str, args: dict, err: int) -> None:
    (tmp_path / "a.txt").write_text("a\n")
    backend = FaultBackend(backend_by_name(make_root.backend_name))
    root = Root(str(tmp_path), backend=backend, fast_path=make_root.fast_path)
    try:
        box = Toolbox(root)
        once = backend.add(Fault("fstat", err, times=1))
        first = box.call(tool, args)
        assert once.fired == 1, backend.fired
        assert first["ok"] is False, first
        assert not (tmp_path / "x").exists()  # refused: nothing made

        later = [box.call("write_file", {"path": "later.txt", "content": "later\n"}),
                 box.call("read_file", {"path": "a.txt"}),
                 box.call("make_directory", {"path": "m/n"}),
                 box.call(tool, args)]
    finally:
        root.close()
    assert [answer["ok"] for answer in later] == [True] * 4, later
    assert (tmp_path / "later.txt").read_text() == "later\n"
    assert (tmp_path / "m" / "n").is_dir()
    assert (tmp_path / "x" / "y").is_dir()
