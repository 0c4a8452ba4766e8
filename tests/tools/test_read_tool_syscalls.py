"""The read tools through the view: one resolution per call, counted.

Counted with :class:`corral.testing.backends.CountingBackend` at depth 1 and
10 on every backend with the openat2 fast path (as
``test_tool_syscalls.py`` does for the mutating tools):

* ``read_file`` with a host that is asked and deny rules set: the open and
  its fstat, the read, the host's answer checked by one more resolution of
  the name and one read of the kernel's watch (what other programs changed
  while the host decided), the close (9; the fstat taken for the decision
  is reused);
* ``grep`` of one file, the host asked too: searched from the fd the
  decision was made on (9, as read_file: the path resolved once);
* ``file_info``: the one resolution, two looks at the entry (before and
  after the host's answer) and the watch's read after the answer.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from corral.contained import Backend, Root, available_backends, backend_by_name
from corral.testing.backends import CountingBackend
from corral.tools import Toolbox

MOST = {"read_file asked": 9, "grep of one file": 9, "file_info": 6}


def _with_openat2(name: str) -> Backend:
    return type(backend_by_name(name))(openat2=True)


FAST = [name for name in ([os.environ["CORRAL_BACKEND"]] if os.environ.get("CORRAL_BACKEND")
                           else available_backends())
        if _with_openat2(name).has_openat2]


def _counts(base: Path, backend_name: str, depth: int) -> dict[str, int]:
    rel = "/".join(f"d{i}" for i in range(depth))
    (base / rel).mkdir(parents=True)
    (base / rel / "f.py").write_text("".join(f"x{i} = 1\n" for i in range(150)))
    backend = CountingBackend(_with_openat2(backend_name))
    root = Root(str(base), backend=backend, fast_path=True)
    calls = {
        "read_file asked": ("read_file", {"path": f"{rel}/f.py"}),
        "grep of one file": ("grep", {"pattern": "x1", "path": f"{rel}/f.py"}),
        "file_info": ("file_info", {"path": f"{rel}/f.py"}),
    }
    counts: dict[str, int] = {}
    try:
        with Toolbox(root, authorize=lambda request: True, deny=["secret/**"]) as box:
            for label, (name, args) in calls.items():
                box.call(name, args)  # warm: what a tool remembers between calls
                with backend.counting() as tally:
                    answer = box.call(name, args)
                assert answer["ok"], (label, answer)
                counts[label] = tally.syscalls
    finally:
        root.close()
    return counts


@pytest.mark.parametrize("backend_name", FAST, ids=[f"{name}-openat2" for name in FAST])
def test_the_read_tools_resolve_once_at_any_depth(tmp_path, backend_name):
    counted = {depth: _counts(tmp_path / f"depth{depth}", backend_name, depth)
               for depth in (1, 10)}
    for label, most in MOST.items():
        assert counted[1][label] <= most, (label, counted)
        assert counted[10][label] == counted[1][label], (label, counted)
