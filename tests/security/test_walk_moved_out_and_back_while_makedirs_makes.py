"""THREATS row 35b's dance while ``makedirs`` makes the directories on the
way: ``root/a/b`` exists; ``makedirs`` of ``a/b/c/d`` (``c`` a middle
directory, ``d`` the leaf) or ``a/b/c/d/e`` (``d`` a middle one too).
Just before a directory is made in ``c`` (a directory the walk itself
made), a :class:`FaultBackend` hook renames ``a`` out of the root, so the
make lands outside.  No system call makes a name beneath a root in one
step, so that cannot be helped; what must hold is row 35b's rule for an
act by name: the caller is never told it was done (``EscapeError``,
reason ``moved``), and nothing further is made in the directory that left
(``d`` holds nothing).  Every config.
"""

from __future__ import annotations

import os

import pytest

from corral.contained import EscapeError, Root, backend_by_name
from corral.testing.backends import Fault, FaultBackend


def _tree(base: str) -> tuple[str, str]:
    root, out = os.path.join(base, "root"), os.path.join(base, "out")
    os.makedirs(os.path.join(root, "a", "b"))
    os.mkdir(out)
    return root, out


# the path made, the backend call that makes d (the leaf: mkdir_at; a middle
# directory: create_directory_at, which opens what it made)
SHAPES = {"leaf": ("a/b/c/d", "mkdir_at"), "middle": ("a/b/c/d/e", "create_directory_at")}


@pytest.mark.parametrize("shape", sorted(SHAPES))
def test_a_directory_made_in_one_the_walk_made_then_moved_out_is_refused(make_root, tmp_path,
                                                                         shape):
    path, call = SHAPES[shape]
    root_dir, out = _tree(str(tmp_path))

    def move() -> None:
        os.rename(os.path.join(root_dir, "a"), os.path.join(out, "a"))

    backend = FaultBackend(backend_by_name(make_root.backend_name))
    root = Root(root_dir, backend=backend, fast_path=make_root.fast_path)
    hook = backend.add(Fault(call, None, name="d", hook=move))
    try:
        with pytest.raises(EscapeError) as caught:
            made = root.makedirs(path)
            pytest.fail(f"told made: {made}")
        assert caught.value.reason == "moved"
        assert hook.fired == 1, backend.fired
    finally:
        root.close()
    # the make of d landed in c, outside now; nothing was made in d
    assert os.listdir(os.path.join(out, "a", "b", "c", "d")) == []
