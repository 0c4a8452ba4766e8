"""THREATS row 35's dance at a subdirectory opened by its name in a
directory already held: :meth:`Handle.open_directory` and the search walk
(``contained/_tree.py``) below its top.

The held directory (``a/b``, or the search's top ``a``) was beneath the
root when it was opened.  Just before ``c`` is opened by name in it, a
:class:`FaultBackend` hook renames ``a`` out of the root and puts the
outside directory ``s`` in place of ``c`` (the technique of
``test_walk_moved_out_and_back_at_the_final_open.py``), over the real
backend of each config, on real directories.  ``s`` was never beneath the
root: it must not be listed (a typed refusal, or the directory skipped as
one that cannot be read).
"""

from __future__ import annotations

import errno
import os
from collections.abc import Callable

import pytest

from corral.contained import EscapeError, Root, backend_by_name
from corral.contained._tree import Tree, TreeVisitor
from corral.testing.backends import Fault, FaultBackend

from .helpers.walk_dance import OUTSIDE_ONLY
from .helpers.walk_dance import dance as _dance
from .helpers.walk_dance import tree as _tree


def _open_directory(root: Root, arm: Callable[[], None]) -> list[str]:
    parent = root.open_handle("a/b", os.O_RDONLY | os.O_DIRECTORY)
    try:
        arm()
        child = parent.open_directory("c")
        try:
            return sorted(child.sized_listing().names)
        finally:
            child.close()
    finally:
        parent.close()


def _search(root: Root, arm: Callable[[], None]) -> list[str]:
    top = root.open("a", os.O_RDONLY | os.O_DIRECTORY)
    try:
        arm()
        names: list[str] = []
        with Tree(root, top, 0, TreeVisitor[int](), yield_dirs=True, where="a") as tree:
            for _sub, _fd, _state, run, _kinds in tree:
                names.extend(run)
        return sorted(names)
    finally:
        root.backend.close(top)


CALLS: dict[str, Callable[[Root, Callable[[], None]], list[str]]] = {
    "open_directory": _open_directory, "search": _search,
}


@pytest.mark.parametrize("call", sorted(CALLS))
def test_a_subdirectory_swapped_in_below_a_held_directory_is_not_listed(make_root, tmp_path,
                                                                       call):
    root_dir, out = _tree(str(tmp_path))
    backend = FaultBackend(backend_by_name(make_root.backend_name))
    hook = Fault("open_at", None, name="c", hook=_dance(root_dir, out))
    root = Root(root_dir, backend=backend, fast_path=make_root.fast_path)
    try:
        try:
            names = CALLS[call](root, lambda: backend.add(hook))
        except OSError as exc:  # refused: typed, never an answer from s
            names = [type(exc).__name__]
        assert hook.fired == 1, backend.fired  # the names moved before the open of c
    finally:
        root.close()
    assert not set(names) & set(OUTSIDE_ONLY), names
    s = os.path.join(out, "a", "b", "c")
    assert sorted(os.listdir(s)) == OUTSIDE_ONLY  # s as it was


# -- a Target: a file it opens in its parent, the directories make_parents makes -------

def _file_dance(root: str, out: str) -> Callable[[], None]:
    """``a`` out; the outside file ``s/g`` in place of ``a/b/f``."""
    def move() -> None:
        os.rename(os.path.join(root, "a"), os.path.join(out, "a"))
        os.rename(os.path.join(out, "a", "b", "f"), os.path.join(out, "held"))
        os.rename(os.path.join(out, "s", "g"), os.path.join(out, "a", "b", "f"))
    return move


def test_a_file_a_target_opens_in_a_parent_moved_out_is_not_read(make_root, tmp_path):
    """``Target.open`` of a regular file in the parent the walk opened by
    name (on the openat2 configs the parent's own openat2 fails first, as
    through an in-root link)."""
    root_dir, out = _tree(str(tmp_path))
    with open(os.path.join(root_dir, "a", "b", "f"), "wb") as fh:
        fh.write(b"inside")
    faults = [Fault("open_at", errno.ENOENT, name="b")] if make_root.fast_path else []
    backend = FaultBackend(backend_by_name(make_root.backend_name), *faults)
    hook = Fault("open_at", None, name="f", hook=_file_dance(root_dir, out))
    root = Root(root_dir, backend=backend, fast_path=make_root.fast_path)
    try:
        with root.target("a/b/f") as target:
            backend.add(hook)
            try:
                handle = target.open(os.O_RDONLY)
                try:
                    data = handle.read()
                finally:
                    handle.close()
            except OSError as exc:  # refused: typed, never the outside content
                data = type(exc).__name__.encode()
        assert hook.fired == 1, backend.fired
    finally:
        root.close()
    assert data != b"OUTSIDE"


def _made_dance(root: str, out: str, *, swap_in: bool) -> Callable[[], None]:
    """``a`` out; with ``swap_in`` the outside ``s`` put where ``n`` is to be made."""
    def move() -> None:
        os.rename(os.path.join(root, "a"), os.path.join(out, "a"))
        if swap_in:
            os.rename(os.path.join(out, "s"), os.path.join(out, "a", "b", "n"))
    return move


@pytest.mark.parametrize("swap_in", [False, True], ids=["made", "found"])
def test_make_parents_in_a_parent_moved_out_goes_no_further(make_root, tmp_path, swap_in):
    """``Target.make_parents`` of ``a/b/n/m``: just before ``n`` is made in
    ``b``, ``a`` is moved out (and, for ``found``, the outside ``s`` put
    there as ``n``, which the make then finds).  ``n`` made outside cannot
    be helped (no system call makes a name beneath a root in one step); it
    is refused there, and nothing is made in ``n`` or ``s`` nor written."""
    root_dir, out = _tree(str(tmp_path))
    # the openat2 configs: the parent's own openat2 fails (as through an
    # in-root link), so the walk's own directory is held
    faults = [Fault("open_at", errno.ENOENT, name="b")] if make_root.fast_path and \
        not swap_in else []
    backend = FaultBackend(backend_by_name(make_root.backend_name), *faults)
    hook = Fault("create_directory_at", None, name="n",
                 hook=_made_dance(root_dir, out, swap_in=swap_in))
    root = Root(root_dir, backend=backend, fast_path=make_root.fast_path)
    try:
        with root.target("a/b/n/m/x", create_parents=True) as target:
            backend.add(hook)
            with pytest.raises(EscapeError) as caught:
                target.make_parents()
                target.write_bytes(b"written")
            assert caught.value.reason == "moved"
        assert hook.fired == 1, backend.fired
    finally:
        root.close()
    n = os.path.join(out, "a", "b", "n")
    assert os.listdir(n) == (OUTSIDE_ONLY if swap_in else [])  # nothing made in it


# -- a Target's acts by name in the directory it holds ---------------------------------

_NAME_CALLS = ("lstat_at", "unlink_at", "rmdir_at", "rename_at", "mkdir_at", "open_at",
               "create_directory_at", "link_at", "symlink_at")


def _once(move: Callable[[], None]) -> Callable[[], None]:
    done: list[bool] = []

    def run() -> None:
        if not done:
            done.append(True)
            move()
    return run


TARGET_ACTS: dict[str, tuple[str, Callable[[Root], None]]] = {
    # the final name in a/b, and the act on the Target of it
    "remove": ("f", lambda root: _on_target(root, "a/b/f", lambda t: t.remove())),
    "mkdir": ("y", lambda root: _on_target(root, "a/b/y", lambda t: t.mkdir())),
    "write_bytes": ("y", lambda root: _on_target(root, "a/b/y",
                                                 lambda t: t.write_bytes(b"data", fsync=False))),
    "rename_out": ("f", lambda root: _rename_target(root, "a/b/f", "pulled")),
    "rename_in": ("y", lambda root: _rename_target(root, "x", "a/b/y")),
}
_ARM: list[Callable[[], None]] = []


def _on_target(root: Root, path: str, act: Callable[..., None]) -> None:
    with root.target(path) as target:
        _ARM[0]()
        act(target)


def _rename_target(root: Root, src: str, dst: str) -> None:
    with root.target(src) as source, root.target(dst) as destination:
        _ARM[0]()
        source.rename(destination)


@pytest.mark.parametrize("call", sorted(TARGET_ACTS))
def test_a_targets_act_in_a_parent_moved_out_is_refused(make_root, tmp_path, call):
    """A Target of a name in ``a/b``, held in the directory the walk opened
    by name (on the openat2 configs the parent's openat2 fails, as through
    an in-root link): ``a`` is moved out (and the outside file put in place
    of ``f``) just before the act.  The act by name cannot be helped; it is
    refused (``EscapeError``, reason ``moved``), never answered as done."""
    name, act = TARGET_ACTS[call]
    root_dir, out = _tree(str(tmp_path))
    with open(os.path.join(root_dir, "a", "b", "f"), "wb") as fh:
        fh.write(b"inside")
    with open(os.path.join(root_dir, "x"), "wb") as fh:
        fh.write(b"x")
    faults = [Fault("open_at", errno.ENOENT, name="b")] if make_root.fast_path else []
    backend = FaultBackend(backend_by_name(make_root.backend_name), *faults)
    move = _once(_file_dance(root_dir, out) if name == "f" else _made_dance(root_dir, out,
                                                                            swap_in=False))
    hooks = [Fault(method, None, name=name, hook=move) for method in _NAME_CALLS]
    _ARM[:] = [lambda: [backend.add(hook) for hook in hooks] and None]
    root = Root(root_dir, backend=backend, fast_path=make_root.fast_path)
    try:
        with pytest.raises(EscapeError) as caught:
            act(root)
        assert caught.value.reason == "moved"
        assert sum(hook.fired for hook in hooks) >= 1, backend.fired
    finally:
        root.close()
