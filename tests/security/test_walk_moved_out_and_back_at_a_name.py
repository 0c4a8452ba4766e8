"""THREATS row 35's dance at a final name that is looked at or acted on
without being opened, made to happen every time.

The walk hands out the parent ``a/b`` of the final name, shown beneath the
root.  Just before the look or the act (``fstatat``, ``readlinkat``,
``unlinkat``, ``renameat``, ``linkat``, ``symlinkat``, ``mkdirat``), a
:class:`FaultBackend` hook renames ``a`` out of the root and, for a name
that is there, puts an outside file in its place; over the real backend of
each config, on real directories (the technique of
``test_walk_moved_out_and_back_at_the_final_open.py``).

A fact (``stat``, ``lstat``, ``readlink``) is decided on what was resolved:
it is answered only if the parent is beneath the root after the look, so an
outside file's facts are never answered (a typed refusal instead).

An act by name cannot be undone and no system call acts by name beneath a
root in one step, so the act in a parent moved out at that moment happens
(the outside name is removed, made or moved); what the call can do is say
so: it is refused, ``EscapeError`` (reason ``moved``), never answered as
done.  On the openat2 configs the parent's own ``openat2`` is made to fail
first (as with an in-root link on the way), so the walk hands out a
directory it opened by name: the fast parent, which the kernel resolved
beneath just before the act, is the capability's own case (THREATS row 35).
"""

from __future__ import annotations

import errno
import os
from collections.abc import Callable
from dataclasses import dataclass

import pytest

from corral.contained import EscapeError, Root, backend_by_name
from corral.testing.backends import Fault, FaultBackend

_NAME_CALLS = ("open_at", "lstat_at", "readlink_at", "unlink_at", "rmdir_at", "rename_at",
               "link_at", "symlink_at", "mkdir_at", "create_directory_at")


def _tree(base: str) -> tuple[str, str]:
    root, out = os.path.join(base, "root"), os.path.join(base, "out")
    b = os.path.join(root, "a", "b")
    os.makedirs(os.path.join(b, "c"))
    os.makedirs(os.path.join(b, "e"))
    with open(os.path.join(b, "f"), "wb") as fh:
        fh.write(b"inside")
    os.symlink("c", os.path.join(b, "k"))
    with open(os.path.join(root, "x"), "wb") as fh:
        fh.write(b"x-data")
    os.makedirs(os.path.join(out, "s", "gd"))  # an outside directory
    os.makedirs(os.path.join(out, "ge"))  # an outside empty directory
    with open(os.path.join(out, "g"), "wb") as fh:  # an outside file
        fh.write(b"OUTSIDE")
    os.symlink("OUTSIDE-TEXT", os.path.join(out, "ks"))  # an outside link
    return root, out


def _dance(root: str, out: str, name: str, evil: str | None) -> Callable[[], None]:
    """``a`` out of the root; ``evil`` (an outside entry) in place of ``name``."""
    done: list[bool] = []

    def move() -> None:
        if done:
            return
        done.append(True)
        os.rename(os.path.join(root, "a"), os.path.join(out, "a"))
        if evil is not None:
            os.rename(os.path.join(out, "a", "b", name), os.path.join(out, "held"))
            os.rename(os.path.join(out, evil), os.path.join(out, "a", "b", name))
    return move


def _root(make_root, root_dir: str, out: str, name: str, evil: str | None,
          faults: list[Fault]) -> tuple[Root, list[Fault]]:
    move = _dance(root_dir, out, name, evil)
    hooks = [Fault(call, None, name=name, hook=move) for call in _NAME_CALLS]
    backend = FaultBackend(backend_by_name(make_root.backend_name), *faults, *hooks)
    return Root(root_dir, backend=backend, fast_path=make_root.fast_path), hooks


# -- facts: answered only when the parent is beneath after the look --------------

@dataclass(frozen=True)
class FactCase:
    name: str  # the final name in a/b
    evil: str  # the outside entry put in its place
    ask: Callable[[Root], object]
    from_evil: Callable[[object, os.stat_result], bool]  # the answer is the outside entry's


def _same_file(answer: object, evil: os.stat_result) -> bool:
    assert isinstance(answer, os.stat_result)
    return (answer.st_dev, answer.st_ino) == (evil.st_dev, evil.st_ino)


FACTS = {
    "stat": FactCase("c", "s", lambda root: root.stat("a/b/c"), _same_file),
    "lstat": FactCase("c", "s", lambda root: root.lstat("a/b/c"), _same_file),
    "stat_nofollow": FactCase("f", "g", lambda root: root.stat("a/b/f", follow_symlinks=False),
                              _same_file),
    "readlink": FactCase("k", "ks", lambda root: root.readlink("a/b/k"),
                         lambda answer, _evil: answer == "OUTSIDE-TEXT"),
}


@pytest.mark.parametrize("call", sorted(FACTS))
def test_no_fact_of_an_entry_swapped_in_at_the_look(make_root, tmp_path, call):
    case = FACTS[call]
    root_dir, out = _tree(str(tmp_path))
    evil = os.lstat(os.path.join(out, case.evil))
    faults = []
    if make_root.fast_path:
        # the whole-path openat2 finds "a" out: the walk runs, as in the race
        faults.append(Fault("open_at", errno.ENOENT, name=case.name))
    root, hooks = _root(make_root, root_dir, out, case.name, case.evil, faults)
    try:
        try:
            answer: object = case.ask(root)
        except OSError as exc:  # refused: typed, never an answer from outside
            answer = exc
        assert sum(hook.fired for hook in hooks) >= 1  # the names moved before the look
    finally:
        root.close()
    assert isinstance(answer, OSError) or not case.from_evil(answer, evil), answer


# -- acts: refused when the parent is not beneath after the act -------------------

@dataclass(frozen=True)
class ActCase:
    name: str  # the final name in a/b the act names
    evil: str | None  # the outside entry put in its place (None: a new name)
    act: Callable[[Root], object]


ACTS = {
    "remove": ActCase("f", "g", lambda root: root.remove("a/b/f")),
    "rmdir": ActCase("e", "ge", lambda root: root.rmdir("a/b/e")),
    "rename_from": ActCase("c", "s", lambda root: root.rename("a/b/c", "pulled")),
    "rename_to": ActCase("y", None, lambda root: root.rename("x", "a/b/y")),
    "link": ActCase("y", None, lambda root: root.link("x", "a/b/y")),
    "symlink": ActCase("y", None, lambda root: root.symlink("x", "a/b/y")),
    "mkdir": ActCase("y", None, lambda root: root.mkdir("a/b/y")),
    "makedirs": ActCase("y", None, lambda root: root.makedirs("a/b/y")),
    "write_bytes": ActCase("y", None, lambda root: root.write_bytes("a/b/y", b"data")),
}


@pytest.mark.parametrize("call", sorted(ACTS))
def test_an_act_in_a_parent_moved_out_at_the_act_is_refused(make_root, tmp_path, call):
    case = ACTS[call]
    root_dir, out = _tree(str(tmp_path))
    faults = []
    if make_root.fast_path:
        # the parent's openat2 fails (as through an in-root link): the walk
        # opens b by name in a and hands it out
        faults.append(Fault("open_at", errno.ENOENT, name="b"))
    root, hooks = _root(make_root, root_dir, out, case.name, case.evil, faults)
    try:
        with pytest.raises(EscapeError) as caught:
            case.act(root)
        assert caught.value.reason == "moved"
        assert sum(hook.fired for hook in hooks) >= 1  # the names moved before the act
    finally:
        root.close()
