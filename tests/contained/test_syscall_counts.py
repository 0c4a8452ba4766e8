"""How many system calls a Root operation makes, pinned with the counting
backend (``corral.testing.backends.CountingBackend``), on every backend
config: counts are deterministic where times are not, so a change that
resolves a path once more fails here.

Where ``openat2`` is in use, an operation that creates or replaces a name
opens its parent with one call, so it costs the same at any depth.  The walk
(``CORRAL_OPENAT2=0``, or a kernel without ``openat2``) opens and closes
each directory on the way: two calls a level, pinned here too.
"""

from __future__ import annotations

import errno
import os
import threading

import pytest

from corral.contained import EscapeError, Root, backend_by_name
from corral.testing.backends import CountingBackend, Fault, FaultBackend, Tally

from ..helpers import fds_opened_since, open_fds

DEEP = 10


def _dirs(depth: int) -> str:
    return "/".join(f"d{i}" for i in range(depth))


def _counting_root(make_root, path) -> tuple[Root, CountingBackend]:
    # make_root fixes the backend itself: build the Root around the counting one
    backend = CountingBackend(backend_by_name(make_root.backend_name))
    root = Root(path, backend=backend, fast_path=make_root.fast_path)
    return root, backend


@pytest.fixture
def counted(make_root, tmp_path):
    """(root, backend, tmp_path) with d0/.../d9 made; the root is closed after."""
    os.makedirs(tmp_path / _dirs(DEEP))
    root, backend = _counting_root(make_root, tmp_path)
    yield root, backend, tmp_path
    root.close()


def _count(backend: CountingBackend, call) -> Tally:
    with backend.counting() as tally:
        call()
    return tally


# -- the counting backend itself ------------------------------------------------

def test_counting_backend_counts_each_call_by_name(tmp_path):
    (tmp_path / "a").mkdir()
    backend = CountingBackend(backend_by_name("os"))
    root = Root(tmp_path, backend=backend, fast_path=False)
    try:
        with backend.counting() as tally:
            root.mkdir("a/b")
        # the walk: open a, mkdirat b in it, close a
        assert dict(tally.calls) == {"open_at": 1, "mkdir_at": 1, "close": 1}
        assert tally.order == ["open_at", "mkdir_at", "close"]
        assert tally.syscalls == 3 and tally["open_at"] == 1 and tally["rename_at"] == 0
        assert str(tally) == "3 syscalls (close=1, mkdir_at=1, open_at=1)"
        assert (tmp_path / "a" / "b").is_dir()
    finally:
        root.close()


def test_counting_blocks_nest_and_total_adds_up(tmp_path):
    backend = CountingBackend(backend_by_name("os"))
    root = Root(tmp_path, backend=backend, fast_path=False)
    try:
        backend.reset()
        with backend.counting() as outer:
            root.mkdir("x")
            with backend.counting() as inner:
                root.rmdir("x")
        assert inner.calls == {"rmdir_at": 1}
        assert outer.calls == {"mkdir_at": 1, "rmdir_at": 1}
        assert backend.total.calls == outer.calls
        backend.reset()
        assert backend.total.syscalls == 0
    finally:
        root.close()


def test_counting_is_exact_across_threads(tmp_path):
    backend = CountingBackend(backend_by_name("os"))
    root = Root(tmp_path, backend=backend, fast_path=False)
    (tmp_path / "f").write_bytes(b"x")
    rounds, threads = 200, 4

    def work() -> None:
        for _ in range(rounds):
            root.lstat("f")

    try:
        with backend.counting() as tally:
            runners = [threading.Thread(target=work) for _ in range(threads)]
            for runner in runners:
                runner.start()
            for runner in runners:
                runner.join()
        assert tally.calls == {"lstat_at": rounds * threads}
    finally:
        root.close()


def test_counting_weighs_calls_that_make_two_syscalls(tmp_path):
    backend = CountingBackend(backend_by_name("os"))
    root = Root(tmp_path, backend=backend, fast_path=False)
    try:
        tally = _count(backend, lambda: root.makedirs("m/n"))
        # create_directory_at is mkdirat and an O_NOFOLLOW open: two system
        # calls (m is looked up first; the leaf n is one mkdirat)
        assert tally.calls == {"open_at": 1, "create_directory_at": 1, "mkdir_at": 1,
                               "close": 1}
        assert tally.syscalls == 5
    finally:
        root.close()


def test_counting_wraps_a_fault_backend(tmp_path):
    faulty = FaultBackend(backend_by_name("os"), Fault("mkdir_at", errno.EACCES, name="x"))
    backend = CountingBackend(faulty)
    root = Root(tmp_path, backend=backend, fast_path=False)
    try:
        with backend.counting() as tally, pytest.raises(PermissionError):
            root.mkdir("x")
        assert tally.calls == {"mkdir_at": 1}
    finally:
        root.close()


def test_counting_keeps_the_native_one_call_open(make_root, tmp_path):
    """The counting backend takes the same fast paths as its inner backend:
    Root.open through the native backend is one ``open_beneath`` call."""
    os.makedirs(tmp_path / _dirs(DEEP))
    (tmp_path / _dirs(DEEP) / "f").write_bytes(b"x")
    root, backend = _counting_root(make_root, tmp_path)
    try:
        tally = _count(backend, lambda: os.close(root.open(f"{_dirs(DEEP)}/f")))
        inner = backend_by_name(make_root.backend_name)
        if make_root.fast_path and inner.open_beneath is not None:
            assert tally.calls == {"open_beneath": 1}
        elif make_root.fast_path:
            assert tally.calls == {"openat2": 1, "fstat": 1}
        else:
            assert tally.calls == {"open_at": DEEP + 1, "close": DEEP, "fstat": 1}
    finally:
        root.close()


# -- Root.write_bytes: at most 15 at any depth --------------------------------------

@pytest.mark.parametrize("replacing", [False, True], ids=["new", "replace"])
def test_write_bytes_syscalls_at_depth_1_and_10(counted, make_root, replacing):
    root, backend, base = counted
    tallies = {}
    for depth in (1, DEEP):
        path = f"{_dirs(depth)}/file"
        if replacing:
            (base / path).write_bytes(b"old")
        tallies[depth] = _count(backend, lambda: root.write_bytes(path, b"x" * 1200))
        assert (base / path).read_bytes() == b"x" * 1200
    shallow, deep = tallies[1], tallies[DEEP]
    if make_root.fast_path:
        # one openat2 opens the parent, whatever its depth
        assert deep.calls == shallow.calls, (shallow, deep)
        assert deep["openat2"] == 1 and deep["open_at"] == (2 if replacing else 1)
        assert deep.syscalls <= 15, deep
    else:
        # the walk: one open and one close more per level
        assert deep.syscalls - shallow.syscalls == 2 * (DEEP - 1), (shallow, deep)
        assert deep["open_at"] - shallow["open_at"] == DEEP - 1
    assert shallow.syscalls <= 15, shallow
    # the work itself, at any depth and in every config: one temporary
    # file, one write, one fsync, one rename
    for tally in (shallow, deep):
        assert (tally["write"], tally["fsync"], tally["rename_at"], tally["lstat_at"]) == \
            (1, 1, 1, 1)


def test_write_bytes_syscalls_pinned_exactly(counted, make_root):
    """The whole sequence at depth 10: a change to it is a change to this list."""
    root, backend, base = counted
    path = f"{_dirs(DEEP)}/file"
    if make_root.fast_path:
        resolve, release = ["openat2"], ["close"]  # one openat2 opens the parent
    else:
        resolve, release = ["open_at"] * DEEP, ["close"] * DEEP  # the walk
    new = _count(backend, lambda: root.write_bytes(path, b"new"))
    assert new.order == [*resolve, "lstat_at", "open_at", "write", "fsync", "close",
                         "rename_at", *release]
    replace = _count(backend, lambda: root.write_bytes(path, b"newer"))
    assert replace.order == [*resolve, "lstat_at", "open_at", "write",
                             "fstat",  # the owner to carry over
                             "open_at", "fstat", "flistxattr", "close",  # xattrs to carry
                             "fchmod", "fsync", "close", "rename_at", *release]
    assert replace.syscalls == 12 + len(resolve) + len(release)
    assert (base / path).read_bytes() == b"newer"


# -- other operations that create or replace: the same at any depth ---------------

def _ops(d: str):
    return [
        ("mkdir", lambda r: r.mkdir(f"{d}/m")),
        ("rmdir", lambda r: r.rmdir(f"{d}/m")),
        ("symlink", lambda r: r.symlink("f", f"{d}/s")),
        ("readlink", lambda r: r.readlink(f"{d}/s")),
        ("link", lambda r: r.link(f"{d}/f", f"{d}/h")),
        ("remove", lambda r: r.remove(f"{d}/h")),
        ("rename", lambda r: r.rename(f"{d}/f", f"{d}/g")),
        ("rename_noreplace", lambda r: r.rename(f"{d}/g", f"{d}/f", replace=False)),
        ("write_text", lambda r: r.write_text(f"{d}/f", "text")),
        ("open_file_w", lambda r: r.open_file(f"{d}/w", "w").close()),
        ("open_file_r", lambda r: r.open_file(f"{d}/f").close()),
        ("copyfile", lambda r: r.copyfile(f"{d}/f", f"{d}/c")),
        ("makedirs", lambda r: r.makedirs(f"{d}/m1/m2")),
        ("stat", lambda r: r.stat(f"{d}/f")),
        ("chmod", lambda r: r.chmod(f"{d}/f", 0o640)),
        ("truncate", lambda r: r.truncate(f"{d}/c", 1)),
    ]


def test_creating_and_replacing_cost_the_same_at_any_depth(counted, make_root):
    root, backend, base = counted
    for depth in (1, DEEP):
        (base / _dirs(depth) / "f").write_bytes(b"content")
    counts: dict[str, dict[int, Tally]] = {}
    for depth in (1, DEEP):
        for name, op in _ops(_dirs(depth)):
            counts.setdefault(name, {})[depth] = _count(backend, lambda: op(root))
    assert (base / _dirs(DEEP) / "m1" / "m2").is_dir()
    assert (base / _dirs(DEEP) / "f").read_text() == "text"
    for name, by_depth in counts.items():
        shallow, deep = by_depth[1], by_depth[DEEP]
        if make_root.fast_path:
            assert deep.calls == shallow.calls, (name, shallow, deep)
        else:
            ends = 2 if name in ("link", "rename", "rename_noreplace", "copyfile") else 1
            assert deep.syscalls - shallow.syscalls == 2 * (DEEP - 1) * ends, \
                (name, shallow, deep)


# -- the fast parent keeps the walk's answers ------------------------------------------

def test_a_final_link_climbing_back_lands_where_the_walk_lands(make_root, tmp_path):
    """A final symlink whose text climbs with ``..`` into the directories the
    one ``openat2`` went through: they are opened by name then, and the
    result is the walk's."""
    deep = tmp_path / _dirs(DEEP)
    os.makedirs(deep)
    os.symlink("../../../target", deep / "link")
    root, backend = _counting_root(make_root, tmp_path)
    try:
        fds = open_fds()
        tally = _count(backend,
                       lambda: root.write_bytes(f"{_dirs(DEEP)}/link", b"through the link"))
        assert (tmp_path / _dirs(DEEP - 3) / "target").read_bytes() == b"through the link"
        assert os.readlink(deep / "link") == "../../../target"
        assert root.realpath(f"{_dirs(DEEP)}/link") == f"{_dirs(DEEP - 3)}/target"
        # every directory opened to climb back is closed again
        assert not fds_opened_since(fds)
        assert tally["open_at"] + tally["openat2"] == tally["close"]
    finally:
        root.close()


def test_a_final_link_climbing_out_is_an_escape_at_depth(make_root, tmp_path):
    deep = tmp_path / _dirs(DEEP)
    os.makedirs(deep)
    os.symlink("../" * (DEEP + 1) + "outside", deep / "link")
    root, _ = _counting_root(make_root, tmp_path)
    try:
        with pytest.raises(EscapeError) as caught:
            root.write_bytes(f"{_dirs(DEEP)}/link", b"x")
        assert caught.value.reason == "symlink"
        assert not (tmp_path.parent / "outside").exists()
        with pytest.raises(EscapeError):
            root.symlink("x", f"{_dirs(DEEP)}/link/../../../../../../../../../../../y")
    finally:
        root.close()


def test_reopening_the_directories_climbed_into_reports_its_failure(make_root, tmp_path):
    """A directory climbed back into by a link's ``..`` that cannot be opened
    (here EACCES, injected) fails the call naming that directory, in every
    config; nothing is written."""
    deep = tmp_path / _dirs(DEEP)
    os.makedirs(deep)
    os.symlink("../../../target", deep / "link")
    faulty = FaultBackend(backend_by_name(make_root.backend_name),
                          Fault("open_at", errno.EACCES, name="d3", times=-1))
    root = Root(tmp_path, backend=faulty, fast_path=make_root.fast_path)
    try:
        with pytest.raises(PermissionError) as caught:
            root.write_bytes(f"{_dirs(DEEP)}/link", b"x")
        assert caught.value.component == "d0/d1/d2/d3"
        assert not (tmp_path / _dirs(DEEP - 3) / "target").exists()
    finally:
        root.close()


def test_a_symlink_among_the_directories_takes_the_walk(make_root, tmp_path):
    """``RESOLVE_NO_SYMLINKS`` refuses the one ``openat2``; the walk then
    follows the in-root link and names the canonical place."""
    os.makedirs(tmp_path / "real" / "sub")
    os.symlink("real", tmp_path / "via")
    root, backend = _counting_root(make_root, tmp_path)
    try:
        tally = _count(backend, lambda: root.write_bytes("via/sub/f", b"x"))
        assert (tmp_path / "real" / "sub" / "f").read_bytes() == b"x"
        assert tally["readlink_at"] == 1
        target = root.target("via/sub/f")
        try:
            assert target.path == "real/sub/f"
        finally:
            target.close()
    finally:
        root.close()


def test_makedirs_below_a_deep_directory_opens_it_once(counted, make_root):
    root, backend, base = counted
    tally = _count(backend, lambda: root.makedirs(f"{_dirs(DEEP)}/a/b/c"))
    assert (base / _dirs(DEEP) / "a" / "b" / "c").is_dir()
    # a and b are made and reopened O_NOFOLLOW; the leaf c is one mkdirat
    assert tally["create_directory_at"] == 2 and tally["mkdir_at"] == 1
    if make_root.fast_path:
        # the full parent (a/b) and a are missing: two openat2 answer
        # ENOENT, the third opens d9, and the walk creates from there,
        # looking up none of the names it knows are missing
        assert tally["openat2"] == 3 and tally["open_at"] == 0
    else:
        # the walk opens the DEEP directories and looks a up; b, in the a it
        # just made, is made without a look
        assert tally["open_at"] == DEEP + 1


def test_dry_run_plans_from_the_deepest_existing_directory(counted, make_root):
    root, _, base = counted
    planned = root.makedirs(f"{_dirs(DEEP)}/p/q", dry_run=True)
    assert planned == [f"{_dirs(DEEP)}/p", f"{_dirs(DEEP)}/p/q"]
    assert not (base / _dirs(DEEP) / "p").exists()


# -- a write on what was opened once (Target.open_existing, replacing=) ------------

def test_replacing_an_opened_file_opens_nothing_more_and_carries_its_metadata(counted, make_root):
    root, backend, base = counted
    path = base / _dirs(DEEP) / "f.txt"
    path.write_bytes(b"old")
    os.chmod(path, 0o640)
    try:
        os.setxattr(path, "user.corral-test", b"kept")
        xattrs = True
    except OSError:
        xattrs = False  # a filesystem without user xattrs: the mode is still carried
    with root.target(f"{_dirs(DEEP)}/f.txt", lockable=True) as target:
        opened = target.open_existing()
        assert opened is not None
        try:
            tally = _count(backend, lambda: target.write_bytes(b"new", replacing=opened))
        finally:
            opened.handle.close()
    assert path.read_bytes() == b"new"
    assert os.stat(path).st_mode & 0o777 == 0o640
    if xattrs:
        assert os.getxattr(path, "user.corral-test") == b"kept"
    # no lstat of the name before the write, no open of the old file: its fd is used
    assert tally["open_at"] == 1, tally  # the temporary file only
    assert tally["lstat_at"] == 1, tally  # the identity check before the rename


def test_replacing_an_opened_file_swapped_since_changes_nothing(counted, make_root):
    root, _, base = counted
    path = base / _dirs(DEEP) / "f.txt"
    path.write_bytes(b"old")
    with root.target(f"{_dirs(DEEP)}/f.txt") as target:
        opened = target.open_existing()
        assert opened is not None
        try:
            swapped = base / _dirs(DEEP) / "other.txt"
            swapped.write_bytes(b"someone else's")
            os.replace(swapped, path)
            with pytest.raises(OSError) as raised:
                target.write_bytes(b"new", replacing=opened)
        finally:
            opened.handle.close()
    assert raised.value.errno == errno.EAGAIN
    assert path.read_bytes() == b"someone else's"
    assert sorted(os.listdir(path.parent)) == ["f.txt"]  # no temporary file left


def test_open_existing_says_none_for_a_missing_name_and_raises_for_a_link(counted, make_root):
    root, _, base = counted
    os.symlink("f.txt", base / _dirs(DEEP) / "link")
    with root.target(f"{_dirs(DEEP)}/absent") as target:
        assert target.open_existing() is None
    with root.target(f"{_dirs(DEEP)}/link") as target, pytest.raises(OSError) as raised:
        target.open_existing()
    assert raised.value.errno == errno.ELOOP
    with root.target(f"{_dirs(DEEP)}/new/deeper/f", create_parents=True) as target:
        assert target.open_existing() is None  # its directories are only planned


def test_a_lockable_target_holds_a_directory_flock_can_lock(counted, make_root):
    import fcntl

    root, _, base = counted
    with root.target(f"{_dirs(DEEP)}/f.txt", lockable=True) as target:
        if make_root.fast_path and root.backend.has_openat2:
            assert target.held_lockable  # opened for reading by the one openat2
        if target.held_lockable:
            fcntl.flock(target.held_fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            fcntl.flock(target.held_fd, fcntl.LOCK_UN)
        info = os.stat(base / _dirs(DEEP))
        assert target.held_identity() == (info.st_dev, info.st_ino)
    with root.target(f"{_dirs(DEEP)}/new/f.txt", create_parents=True,
                     lockable=True) as target:
        target.make_parents()
        assert not target.held_lockable  # the new directory is held O_PATH: open_held
        info = os.stat(base / _dirs(DEEP) / "new")
        assert target.held_identity() == (info.st_dev, info.st_ino)
