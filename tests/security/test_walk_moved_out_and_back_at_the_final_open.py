"""The every-act race's open hole, made to happen every time.

A call that opens a directory by its name (a listing, a tree walk, rmtree, a
``Target``) opens it in its parent, which the resolver has shown beneath the
root: the openat2 fast parent (the kernel resolved it beneath), or the walk's
check.
Between that and the open of the name, row 35's attacker renames the parent's
ancestor ``a`` out of the root and puts the outside directory ``s`` in place
of the named directory ``c``.  The parent is then outside, and ``c`` in it is
``s``, which was never beneath the root: no call may list it, walk it or
remove anything in it.

The race (``test_walk_moved_out_and_back_every_act.py``) hits that window a
few times in tens of thousands of calls; here a :class:`FaultBackend` hook
moves the names just before the open of ``c``, over the real backend of each
config, on real directories.  On the openat2 configs the whole-path
``openat2`` is made to fail first (``ENOENT``, as when the dance had ``a``
out at that moment), so the walk with its fast parent runs, as in the race.
"""

from __future__ import annotations

import errno
import os
from collections.abc import Callable
from functools import partial

import pytest

from corral.contained import Root, backend_by_name
from corral.testing.backends import Fault, FaultBackend

from .helpers.walk_dance import OUTSIDE_ONLY
from .helpers.walk_dance import dance as _dance
from .helpers.walk_dance import tree as _tree


def _undo(root: str, out: str) -> None:
    if os.path.lexists(os.path.join(out, "a")):
        os.makedirs(os.path.join(out, "a", "b"), exist_ok=True)  # (an rmtree may have emptied a)
        if os.path.lexists(os.path.join(out, "a", "b", "c")):
            os.rename(os.path.join(out, "a", "b", "c"), os.path.join(out, "s"))
        os.rename(os.path.join(out, "held"), os.path.join(out, "a", "b", "c"))
        os.rename(os.path.join(out, "a"), os.path.join(root, "a"))


def _listdir(root: Root) -> list[str]:
    return sorted(root.listdir("a/b/c"))


def _scandir(root: Root) -> list[str]:
    return sorted(entry.name for entry in root.scandir("a/b/c"))


def _walk(root: Root, top: str = "a/b/c") -> list[str]:
    return sorted(name for _path, dirs, files in root.walk(top) for name in dirs + files)


def _fwalk(root: Root, top: str = "a/b/c") -> list[str]:
    return sorted(name for _path, dirs, files, _fd in root.fwalk(top) for name in dirs + files)


def _rmtree(root: Root, top: str = "a/b/c") -> list[str]:
    root.rmtree(top)
    return []


def _open_handle(root: Root) -> list[str]:
    handle = root.open_handle("a/b/c", os.O_RDONLY | os.O_DIRECTORY)
    try:
        return sorted(handle.sized_listing().names)
    finally:
        handle.close()


def _target_open(root: Root) -> list[str]:
    with root.target("a/b/c") as target:
        handle = target.open(os.O_RDONLY | os.O_DIRECTORY)
        try:
            return sorted(entry.name for entry in handle.scandir())
        finally:
            handle.close()


CALLS: dict[str, Callable[[Root], list[str]]] = {
    "listdir": _listdir, "scandir": _scandir, "walk": _walk, "fwalk": _fwalk, "rmtree": _rmtree,
    "open_handle": _open_handle, "target_open": _target_open,
}
# what opens c in the parent it resolved, with no whole-path openat2 first
_NO_WHOLE_PATH = {"rmtree", "target_open"}


@pytest.mark.parametrize("call", sorted(CALLS))
def test_a_directory_swapped_in_at_its_open_is_neither_listed_nor_changed(make_root, tmp_path,
                                                                         call):
    root_dir, out = _tree(str(tmp_path))
    faults: list[Fault] = []
    if make_root.fast_path and call not in _NO_WHOLE_PATH:
        # the whole-path openat2 finds "a" out: the walk runs (rmtree and
        # a Target open c in the resolved parent, on every config)
        faults.append(Fault("open_at", errno.ENOENT, name="c"))
    _attacked_at_the_open_of_c(make_root, root_dir, out, CALLS[call], faults)


def _attacked_at_the_open_of_c(make_root, root_dir: str, out: str,
                               act: Callable[[Root], list[str]], faults: list[Fault]) -> None:
    """Run ``act`` on a Root whose backend gives ``faults`` and then the
    dance just before ``c`` is opened by name: nothing of ``s`` answered,
    ``s`` left as it was."""
    hook = Fault("open_at", None, name="c", hook=_dance(root_dir, out))
    backend = FaultBackend(backend_by_name(make_root.backend_name), *faults, hook)
    root = Root(root_dir, backend=backend, fast_path=make_root.fast_path)
    try:
        try:
            names = act(root)
        except OSError as exc:  # refused: typed, never an answer from s
            names = [type(exc).__name__]
        assert hook.fired == 1, backend.fired  # the names moved before the open of c
    finally:
        root.close()
        _undo(root_dir, out)
    assert not set(names) & set(OUTSIDE_ONLY), names
    s = os.path.join(out, "s")
    assert os.path.isdir(s) and sorted(os.listdir(s)) == OUTSIDE_ONLY  # s as it was
    assert os.path.isdir(os.path.join(s, "gd"))


# -- below the top: a subdirectory a tree walk or rmtree opens by its name ------

_walk_a, _fwalk_a, _rmtree_a = (partial(act, top="a") for act in (_walk, _fwalk, _rmtree))


BELOW: dict[str, Callable[[Root], list[str]]] = {
    "walk": _walk_a, "fwalk": _fwalk_a, "rmtree": _rmtree_a,
}


@pytest.mark.parametrize("call", sorted(BELOW))
def test_a_subdirectory_swapped_in_below_the_top_is_neither_listed_nor_changed(make_root,
                                                                               tmp_path, call):
    """The tree walk starts at ``a`` (opened in the root's fd, beneath) and
    goes down by names: the hook moves ``a`` out and ``s`` in for ``c``
    just before ``c`` is opened in ``b``, which the walk holds."""
    root_dir, out = _tree(str(tmp_path))
    _attacked_at_the_open_of_c(make_root, root_dir, out, BELOW[call], [])
