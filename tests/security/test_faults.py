"""Faults the tools must survive: full disks, permissions, I/O errors,
cross-device moves and a root that vanishes (THREATS.md, "Faults that must
lose nothing").

Two instruments:

* :class:`FaultBackend`, an :class:`~corral.contained.OsBackend` that fails
  chosen calls (``write``, ``fsync``, ``close``, ``rename_at``, ``open_at``
  of a chosen name, ``link_at``, ...) with a chosen errno, or runs a hook
  first (a root removed mid-call).  Faults are injected below the core, so
  the whole path (core mapping, the tools' classification boundary) is the
  one a real kernel error takes.  Root ignores permission bits (this
  machine runs as root), so EACCES is only ever injected.
* pyfakefs, where it truly helps: a disk that is really full
  (``set_disk_usage``), and macOS's case-insensitive lookups
  (``OSType.MACOS``).  Under pyfakefs a Root is built on
  ``corral.testing.backends.FakeFsBackend`` (no fast path, no real call on a
  fake fd), the only backend a Root accepts there; pyfakefs's fds are
  small integers that collide with real ones, so the tests also hold real
  fds at those numbers and prove nothing real is read or changed.

After every failed mutation: the old content is there byte for byte (same
inode: never replaced), no temporary file is left, the refusal is the one
``_classify.py`` gives for the errno (ENOSPC -> TOO_LARGE/no_space, EACCES
-> DENIED/permission, EIO -> INTERNAL, EXDEV on a move ->
UNSUPPORTED/cross_device, a vanished root -> INTERNAL), and the JSON names
no host path (INTERNAL: no path and no errno text at all).
"""

from __future__ import annotations

import errno
import json
import os
import shutil
import stat
import sys
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

import pytest

from .helpers.world import (CONFIG_IDS, CONFIGS, MARKER, assert_contract, call_bounded,
                            temp_files)
from corral.contained import OsBackend, Root, backend_by_name
from corral.testing import snapshot
from corral.testing.backends import FakeFsBackend
from corral.tools import Refusal, Toolbox

OLD = "old line 1\nold line 2\n"
FAST = [False] + ([True] if OsBackend().has_openat2 else [])
FAST_IDS = ["walk", "openat2"][:len(FAST)]


# -- the fault-injecting backend ----------------------------------------------------------

@dataclass
class Fault:
    method: str
    err: int | None  # None: run the hook only
    name: str | None = None  # the name (or the target of a temporary file) to hit
    times: int = 1  # how many matching calls fail (-1: all)
    hook: Callable[[], None] | None = None
    temp: bool = False  # only the temporary file standing for ``name``


class FaultBackend(OsBackend):
    """``OsBackend`` failing chosen calls.

    Name-based methods (``open_at``, ``rename_at``, ``link_at``,
    ``unlink_at``, ``mkdir_at``, ``create_directory_at``) match on the name
    they are given; fd-based ones (``write``, ``fsync``, ``close``, ``read``,
    ``pread``, ``fchmod``, ``scandir``) on the name the fd was opened by.  A
    temporary file of an atomic write (``.a.txt.<hex>.corral-tmp``) counts
    as the name it stands for (``a.txt``).  ``close`` really closes before it
    fails, as the kernel does.
    """

    def __init__(self, *faults: Fault, openat2: bool = False) -> None:
        super().__init__(openat2=openat2)
        self.faults = list(faults)
        self.fired: list[str] = []
        self._names: dict[int, str] = {}

    @staticmethod
    def target(name: str) -> str:
        if name.startswith(".") and name.endswith(".corral-tmp"):
            return name[1:].rsplit(".", 2)[0]
        return name

    def _check(self, method: str, name: str | None) -> None:
        for fault in self.faults:
            if fault.method != method or fault.times == 0:
                continue
            if fault.name is not None and (name is None or self.target(name) != fault.name):
                continue
            if fault.temp and not (name or "").endswith(".corral-tmp"):
                continue
            if fault.times > 0:
                fault.times -= 1
            self.fired.append(f"{method}:{name}")
            if fault.hook is not None:
                fault.hook()
            if fault.err is not None:
                raise OSError(fault.err, os.strerror(fault.err))

    def open_at(self, dir_fd: int, name: str, flags: int, mode: int = 0o666) -> int:
        self._check("open_at", name)
        fd = super().open_at(dir_fd, name, flags, mode)
        self._names[fd] = name
        return fd

    def openat2(self, dir_fd: int, path: str, flags: int, mode: int, resolve: int) -> int:
        name = path.rstrip("/").rsplit("/", 1)[-1]
        self._check("open_at", name)  # a fault on opening a name hits both ways of opening
        fd = super().openat2(dir_fd, path, flags, mode, resolve)
        self._names[fd] = name
        return fd

    def create_directory_at(self, dir_fd: int, name: str, mode: int) -> int:
        self._check("create_directory_at", name)
        return super().create_directory_at(dir_fd, name, mode)

    def mkdir_at(self, dir_fd: int, name: str, mode: int) -> None:
        self._check("mkdir_at", name)
        super().mkdir_at(dir_fd, name, mode)

    def rename_at(self, src_dir_fd: int, src: str, dst_dir_fd: int, dst: str,
                  flags: int = 0) -> None:
        self._check("rename_at", dst)
        super().rename_at(src_dir_fd, src, dst_dir_fd, dst, flags)

    def link_at(self, src_dir_fd: int, src: str, dst_dir_fd: int, dst: str) -> None:
        self._check("link_at", dst)
        super().link_at(src_dir_fd, src, dst_dir_fd, dst)

    def unlink_at(self, dir_fd: int, name: str) -> None:
        if not name.endswith(".corral-tmp"):  # the cleanup itself is never failed
            self._check("unlink_at", name)
        super().unlink_at(dir_fd, name)

    def write(self, fd: int, data: bytes | memoryview) -> int:
        self._check("write", self._names.get(fd))
        return super().write(fd, data)

    def fsync(self, fd: int) -> None:
        self._check("fsync", self._names.get(fd))
        super().fsync(fd)

    def fchmod(self, fd: int, mode: int) -> None:
        self._check("fchmod", self._names.get(fd))
        super().fchmod(fd, mode)

    def read(self, fd: int, size: int) -> bytes:
        self._check("read", self._names.get(fd))
        return super().read(fd, size)

    def pread(self, fd: int, size: int, offset: int) -> bytes:
        self._check("pread", self._names.get(fd))
        return super().pread(fd, size, offset)

    def scandir(self, fd: int):
        self._check("scandir", self._names.get(fd))
        return super().scandir(fd)

    def close(self, fd: int) -> None:
        name = self._names.pop(fd, None)
        super().close(fd)
        self._check("close", name)


# -- the world of one case ------------------------------------------------------------------

class Case:
    """``base/ws`` with a few files, a Toolbox on a FaultBackend, checks."""

    def __init__(self, base: Path, *faults: Fault, fast: bool = False, **options: Any) -> None:
        self.base = base
        self.root = base / "ws"
        (self.root / "sub").mkdir(parents=True)
        (self.root / "a.txt").write_text(OLD)
        (self.root / "sub" / "b.txt").write_text("inside b\n")
        (self.root / "dir").mkdir()
        os.chmod(self.root / "a.txt", 0o640)
        (base / "outside.txt").write_text(f"{MARKER}\n")
        self.backend = FaultBackend(*faults, openat2=fast)
        self.toolbox = Toolbox(Root(self.root, backend=self.backend, fast_path=fast), **options)
        self.before = self.state()

    def state(self) -> dict[str, tuple]:
        """Everything in the root: kind, mode, identity (not for directories,
        whose mtime a temporary file changes) and content or link text."""
        return {rel: (e[0], e[1], None if stat.S_ISDIR(e[0]) else e[2], e[5])
                for rel, e in snapshot(self.root).items()}

    def call(self, tool: str, args: dict[str, Any]) -> dict[str, Any]:
        envelope = call_bounded(lambda: self.toolbox.call(tool, args), what=tool)
        text = assert_contract(envelope)
        for piece in (str(self.base), os.path.realpath(self.base), MARKER):
            assert piece not in text, f"{piece!r} named by {tool} {args}: {envelope}"
        return envelope

    def refused(self, envelope: dict[str, Any], code: str, kind: str | None = None) -> None:
        assert self.backend.fired, f"the fault never fired: {envelope}"
        assert envelope["ok"] is False and envelope["code"] == code, envelope
        if code == "INTERNAL":
            assert envelope == Refusal.internal().envelope(), envelope
        elif kind is not None:
            assert envelope["details"].get("kind") == kind, envelope

    def unchanged(self, *, dirs_may_remain: tuple[str, ...] = ()) -> None:
        """The root is as before, byte for byte and inode for inode, with no
        temporary file (directories a write made before failing may stay)."""
        assert temp_files(self.root) == []
        now = {k: v for k, v in self.state().items() if k not in dirs_may_remain}
        assert now == self.before, sorted(set(now.items()) ^ set(self.before.items()))[:6]
        assert (self.root / "a.txt").read_text() == OLD
        assert (self.base / "outside.txt").read_text() == f"{MARKER}\n"

    def close(self) -> None:
        self.toolbox.root.close()


ENOSPC, EACCES, EIO, EXDEV, EPERM, EDQUOT = (errno.ENOSPC, errno.EACCES, errno.EIO, errno.EXDEV,
                                             errno.EPERM, errno.EDQUOT)
ANSWER = {ENOSPC: ("TOO_LARGE", "no_space"), EDQUOT: ("TOO_LARGE", "no_space"),
          EACCES: ("DENIED", "permission"), EPERM: ("DENIED", "permission"),
          EIO: ("INTERNAL", None)}

per_fast = pytest.mark.parametrize("fast", FAST, ids=FAST_IDS)

# -- failed writes and edits lose nothing -------------------------------------------------

MUTATIONS = {
    "write_over": ("write_file", {"path": "a.txt", "content": "new content\n", "overwrite": True}),
    "edit": ("edit_file", {"path": "a.txt", "oldText": "old line 2", "newText": "new line 2"}),
    "edit_many": ("edit_file", {"path": "a.txt", "edits": [
        {"oldText": "old line 1", "newText": "x"}, {"oldText": "old line 2", "newText": "y"}]}),
}
# where the replacing write can fail: every step of the atomic write
WRITE_FAULTS = [
    ("open_at", ENOSPC), ("open_at", EACCES), ("open_at", EDQUOT),
    ("write", ENOSPC), ("write", EIO), ("write", EDQUOT),
    ("fchmod", EPERM), ("fsync", ENOSPC), ("fsync", EIO),
    ("close", ENOSPC), ("close", EIO),  # a deferred error reported at close (NFS, full disk)
    ("rename_at", EACCES), ("rename_at", EIO), ("rename_at", ENOSPC),
]


@per_fast
@pytest.mark.parametrize("mutation", list(MUTATIONS))
@pytest.mark.parametrize("method,err", WRITE_FAULTS,
                         ids=[f"{m}-{errno.errorcode[e]}" for m, e in WRITE_FAULTS])
def test_failed_replace_keeps_the_old_file(tmp_path, fast, mutation, method, err):
    tool, args = MUTATIONS[mutation]
    # the temporary file's calls (the target itself is opened and closed to
    # be read first); the rename is the one onto the target's name
    case = Case(tmp_path, Fault(method, err, name="a.txt", temp=method != "rename_at"),
                fast=fast)
    try:
        envelope = case.call(tool, args)
        code, kind = ANSWER[err]
        case.refused(envelope, code, kind)
        case.unchanged()
        if code != "INTERNAL":
            assert envelope["details"]["path"] == "a.txt", envelope
    finally:
        case.close()


@per_fast
@pytest.mark.parametrize("method,err", [("rename_at", ENOSPC), ("rename_at", EACCES),
                                        ("rename_at", EIO), ("link_at", ENOSPC),
                                        ("link_at", EACCES), ("link_at", EIO),
                                        ("write", ENOSPC), ("fsync", EIO), ("close", ENOSPC)],
                         ids=["rename-ENOSPC", "rename-EACCES", "rename-EIO", "link-ENOSPC",
                              "link-EACCES", "link-EIO", "write-ENOSPC", "fsync-EIO",
                              "close-ENOSPC"])
def test_failed_create_leaves_nothing(tmp_path, fast, method, err):
    """A new file is created by renaming a finished temporary file into
    place with a rename that never replaces, or, where the filesystem has
    none (EINVAL here, for the link cases), by linking it there (never
    half-written under its name): a failure leaves neither."""
    faults = [Fault(method, err, name="new.txt", temp=method not in ("link_at", "rename_at"))]
    if method == "link_at":
        faults.append(Fault("rename_at", errno.EINVAL, name="new.txt", times=-1))
    case = Case(tmp_path, *faults, fast=fast)
    try:
        envelope = case.call("write_file", {"path": "new.txt", "content": "fresh\n"})
        code, kind = ANSWER[err]
        case.refused(envelope, code, kind)
        assert not (case.root / "new.txt").exists()
        case.unchanged()
    finally:
        case.close()


@per_fast
@pytest.mark.parametrize("err", [ENOSPC, EACCES, EIO], ids=["ENOSPC", "EACCES", "EIO"])
def test_failed_parent_creation(tmp_path, fast, err):
    case = Case(tmp_path, Fault("create_directory_at", err, name="deeper"), fast=fast)
    try:
        envelope = case.call("write_file", {"path": "made/deeper/new.txt", "content": "x\n"})
        code, kind = ANSWER[err]
        case.refused(envelope, code, kind)
        assert not (case.root / "made" / "deeper").exists()
        case.unchanged(dirs_may_remain=("made",))  # made before the fault, reported nowhere
    finally:
        case.close()


# -- moves, deletes, reads, searches ---------------------------------------------------------

@per_fast
@pytest.mark.parametrize("err,code,kind", [(EXDEV, "UNSUPPORTED", "cross_device"),
                                           (EACCES, "DENIED", "permission"),
                                           (EPERM, "DENIED", "permission"),
                                           (ENOSPC, "TOO_LARGE", "no_space"),
                                           (EIO, "INTERNAL", None)],
                         ids=["EXDEV", "EACCES", "EPERM", "ENOSPC", "EIO"])
@pytest.mark.parametrize("overwrite", [False, True], ids=["new", "over"])
def test_failed_move(tmp_path, fast, err, code, kind, overwrite):
    dst = "sub/b.txt" if overwrite else "moved.txt"
    case = Case(tmp_path, Fault("rename_at", err, name=dst.rsplit("/", 1)[-1]), fast=fast)
    try:
        envelope = case.call("move_file", {"source": "a.txt", "destination": dst,
                                           "overwrite": overwrite})
        case.refused(envelope, code, kind)
        case.unchanged()
    finally:
        case.close()


@per_fast
@pytest.mark.parametrize("err,code,kind", [(EACCES, "DENIED", "permission"),
                                           (EPERM, "DENIED", "permission"),
                                           (EIO, "INTERNAL", None)],
                         ids=["EACCES", "EPERM", "EIO"])
def test_failed_delete(tmp_path, fast, err, code, kind):
    case = Case(tmp_path, Fault("unlink_at", err, name="a.txt"), fast=fast)
    try:
        case.refused(case.call("delete_file", {"path": "a.txt"}), code, kind)
        case.unchanged()
    finally:
        case.close()


@per_fast
def test_read_faults(tmp_path, fast):
    case = Case(tmp_path, Fault("open_at", EACCES, name="a.txt", times=-1), fast=fast)
    try:
        case.refused(case.call("read_file", {"path": "a.txt"}), "DENIED", "permission")
        case.refused(case.call("edit_file", {"path": "a.txt", "oldText": "old",
                                             "newText": "x"}), "DENIED", "permission")
        case.unchanged()
    finally:
        case.close()
    case = Case(tmp_path / "eio", Fault("pread", EIO, name="a.txt", times=-1), fast=fast)
    try:
        case.refused(case.call("read_file", {"path": "a.txt"}), "INTERNAL")
        case.unchanged()
    finally:
        case.close()


@per_fast
def test_search_faults_skip_and_count(tmp_path, fast):
    """grep and glob keep going past files and directories they cannot
    read, and count them; a listing the filesystem refuses is DENIED."""
    case = Case(tmp_path, Fault("open_at", EACCES, name="b.txt", times=-1),
                Fault("pread", EIO, name="a.txt", times=-1),  # grep reads with pread
                Fault("scandir", EACCES, name="dir", times=-1), fast=fast)
    try:
        (case.root / "dir" / "c.txt").write_text("inside c\n")
        (case.root / "d.txt").write_text("inside d\n")
        found = case.call("grep", {"pattern": "inside|old"})
        assert found["ok"], found
        assert [m["path"] for m in found["matches"]] == ["d.txt"], found
        assert found["skipped"]["unreadable"] == 2, found  # b.txt (open), a.txt (read)
        assert found["skipped"]["unreadableDirectories"] == 1, found  # dir (listing)
        listed = case.call("glob", {"pattern": "**/*.txt"})
        assert listed["ok"] and listed["skipped"]["unreadableDirectories"] == 1, listed
        assert listed["paths"] == ["a.txt", "d.txt", "sub/b.txt"], listed
        failed = case.call("list_directory", {"path": "dir"})
        case.refused(failed, "DENIED", "permission")  # the handle names dir, as a read does
    finally:
        case.close()


# -- the root vanishing ------------------------------------------------------------------

VANISH_AT = [
    # (tool, args, method, name): the root is removed just before that call
    ("write_file", {"path": "a.txt", "content": "new\n", "overwrite": True}, "rename_at", "a.txt"),
    ("write_file", {"path": "new.txt", "content": "new\n"}, "rename_at", "new.txt"),
    ("write_file", {"path": "made/new.txt", "content": "new\n"}, "create_directory_at", "made"),
    ("edit_file", {"path": "a.txt", "oldText": "old", "newText": "x", "replaceAll": True},
     "write", "a.txt"),
    ("move_file", {"source": "a.txt", "destination": "moved.txt"}, "rename_at", "moved.txt"),
    ("delete_file", {"path": "a.txt"}, "unlink_at", "a.txt"),
]


@per_fast
@pytest.mark.parametrize("tool,args,method,name", VANISH_AT,
                         ids=[f"{t}-{m}" for t, _a, m, _n in VANISH_AT])
def test_root_vanishing_mid_call_is_internal(tmp_path, fast, tool, args, method, name):
    holder: list[Case] = []
    fault = Fault(method, None, name=name, hook=lambda: shutil.rmtree(holder[0].root))
    case = Case(tmp_path, fault, fast=fast)
    holder.append(case)
    try:
        envelope = case.call(tool, args)
        case.refused(envelope, "INTERNAL")
        assert not case.root.exists()  # nothing re-created at the old path
        assert sorted(os.listdir(tmp_path)) == ["outside.txt"]
    finally:
        case.close()


@per_fast
@pytest.mark.parametrize("tool,args", [
    ("read_file", {"path": "a.txt"}), ("list_directory", {"path": "."}),
    ("glob", {"pattern": "**/*"}), ("grep", {"pattern": "old"}),
    ("write_file", {"path": "a.txt", "content": "x", "overwrite": True}),
    ("edit_file", {"path": "a.txt", "oldText": "old", "newText": "x", "replaceAll": True}),
    ("move_file", {"source": "a.txt", "destination": "b.txt"}),
    ("delete_file", {"path": "a.txt"})], ids=lambda v: v if isinstance(v, str) else None)
def test_root_vanishing_during_authorization_is_internal(tmp_path, fast, tool, args):
    holder: list[Case] = []

    def authorize(request):
        shutil.rmtree(holder[0].root)
        return True

    case = Case(tmp_path, fast=fast, authorize=authorize)
    holder.append(case)
    try:
        envelope = case.call(tool, args)
        assert envelope == Refusal.internal().envelope(), (tool, envelope)
        assert not case.root.exists()
    finally:
        case.close()


# -- pyfakefs: a full disk, macOS case-insensitivity, real fds left alone -------------------

@pytest.fixture
def real_fds(tmp_path):
    """Real fds on a real file at the low numbers pyfakefs hands out for its
    fake fds: a call that reaches a real fd by mistake reads this file, or
    changes its mode."""
    real = tmp_path / "real-host-file.txt"
    real.write_text("REAL-HOST-CONTENT\n")
    os.chmod(real, 0o640)
    fds = [os.open(real, os.O_RDWR | os.O_CLOEXEC) for _ in range(24)]
    yield real
    for fd in fds:
        os.close(fd)
    assert real.read_text() == "REAL-HOST-CONTENT\n"
    assert stat.S_IMODE(os.stat(real).st_mode) == 0o640


def _fake_toolbox(path: str, **options: Any) -> Toolbox:
    return Toolbox(Root(path, backend=FakeFsBackend(), fast_path=False), **options)


def _fake_temp_files(top: str) -> list[str]:
    return [os.path.join(d, f) for d, _, files in os.walk(top) for f in files
            if f.endswith(".corral-tmp")]


def test_pyfakefs_full_disk_keeps_the_old_content(real_fds):
    """A really full disk (pyfakefs ``set_disk_usage``): the temporary file is
    created empty, the write fails with ENOSPC; the target keeps its bytes
    and its inode, the empty temporary file is removed."""
    from pyfakefs.fake_filesystem_unittest import Patcher

    with Patcher() as patcher:
        fs = patcher.fs
        fs.create_file("/w/ws/a.txt", contents=OLD)
        fs.create_file("/w/ws/sub/b.txt", contents="inside b\n")
        fs.set_disk_usage(len(OLD) + 200, path="/w")
        ino = os.stat("/w/ws/a.txt").st_ino
        toolbox = _fake_toolbox("/w/ws")
        big = "x\n" * 2048
        for tool, args in [("write_file", {"path": "a.txt", "content": big, "overwrite": True}),
                           ("edit_file", {"path": "a.txt", "oldText": "old line 1",
                                          "newText": big}),
                           ("write_file", {"path": "new.txt", "content": big}),
                           ("write_file", {"path": "made/new.txt", "content": big})]:
            envelope = toolbox.call(tool, args)
            assert_contract(envelope)
            assert envelope["code"] == "TOO_LARGE", (tool, envelope)
            assert envelope["details"]["kind"] == "no_space", envelope
            assert open("/w/ws/a.txt").read() == OLD and os.stat("/w/ws/a.txt").st_ino == ino
            assert _fake_temp_files("/w") == [], (tool, _fake_temp_files("/w"))
            assert not os.path.exists("/w/ws/new.txt") and not os.path.exists("/w/ws/made/new.txt")
        # room again: the same calls work, and read back what they wrote
        fs.set_disk_usage(10 * 1024 * 1024, path="/w")
        assert toolbox.call("write_file", {"path": "a.txt", "content": big,
                                           "overwrite": True})["ok"]
        read = toolbox.call("read_file", {"path": "a.txt"})
        assert read["ok"] and read["totalLines"] == 2048 and read["size"] == len(big), read
        toolbox.root.close()


def test_pyfakefs_os_backend_never_reaches_real_fds(real_fds, monkeypatch):
    """The fd-collision hazard: under pyfakefs every fd the os backend uses
    is a fake one, also for the calls pyfakefs does not fake (pread, fchmod):
    the real functions are never called (they would act on whatever real
    file holds that number), reads return the fake file's bytes, and the
    real file held open here is neither read nor changed (the fixture)."""
    from pyfakefs.fake_filesystem_unittest import Patcher

    real_calls: list[str] = []
    real_os = sys.modules["os"]  # pyfakefs swaps module attributes, not sys.modules
    for name in ("pread", "pwrite", "fchmod", "fchown", "ftruncate", "fdatasync"):
        if hasattr(real_os, name):
            real = getattr(real_os, name)
            monkeypatch.setattr(real_os, name,
                                lambda *a, _n=name, _r=real: (real_calls.append(_n), _r(*a))[1])
    with Patcher() as patcher:
        patcher.fs.create_file("/w/ws/a.txt", contents="fake content\n")
        toolbox = _fake_toolbox("/w/ws")
        read = toolbox.call("read_file", {"path": "a.txt"})
        assert read["ok"] and read["content"] == "1\tfake content", read
        # the replace copies the mode with fchmod on its temporary file's fd
        # (the fixture checks the real file's mode); pyfakefs's own open()
        # rewrites a fake file's mode, so the fake mode is not checked here
        assert toolbox.call("write_file", {"path": "a.txt", "content": "replaced\n",
                                           "overwrite": True})["ok"]
        grep = toolbox.call("grep", {"pattern": "replaced|REAL", "context": 2})
        assert [m["text"] for m in grep["matches"]] == ["replaced"], grep
        edit = toolbox.call("edit_file", {"path": "a.txt", "oldText": "replaced",
                                          "newText": "edited"})
        assert edit["ok"], edit
        toolbox.root.close()
    assert real_calls == [], f"real fd calls under pyfakefs: {real_calls}"


def test_pyfakefs_refuses_the_native_backend_for_tools(real_fds):
    """Under pyfakefs only the fake-safe backend runs: ``Toolbox(path)`` has
    no default backend there (it says which to pass), a Root on the plain os
    backend (whose pread/fchmod are real calls) or the native one (C calls
    on the real files behind the fake fd numbers) is refused, and one on
    ``FakeFsBackend`` works.  (A default that quietly picked an os backend
    emulating the calls pyfakefs lacks would test something else.)"""
    from pyfakefs.fake_filesystem_unittest import Patcher

    try:
        native = backend_by_name("native")
    except OSError:
        native = None
    with Patcher() as patcher:
        patcher.fs.create_file("/w/ws/a.txt", contents="fake\n")
        with pytest.raises(OSError, match="FakeFsBackend") as info:
            Toolbox("/w/ws")
        assert info.value.errno == errno.EINVAL
        with pytest.raises(OSError, match="FakeFsBackend"):
            Root("/w/ws", backend=OsBackend(openat2=False))
        with _fake_toolbox("/w/ws") as toolbox:
            assert toolbox.root.backend.name == "os" and toolbox.root.info()["fast_path"] is False
            assert toolbox.call("write_file", {"path": "n/new.txt", "content": "x\n"})["ok"]
            assert patcher.fs.exists("/w/ws/n/new.txt")
        if native is not None:
            with pytest.raises(OSError) as info:
                Toolbox(Root("/w/ws", backend=native))
            assert info.value.errno == errno.EINVAL


DENY_TEXT = "DENIED-BY-HOST-77aa"


def test_pyfakefs_macos_case_insensitive_deny_rules(real_fds):
    """On a case-insensitive filesystem (pyfakefs ``OSType.MACOS``) ``.ENV``
    *is* ``.env``: every spelling is refused by the rule ``.env``, a write
    or move never replaces it, searches never show it."""
    from pyfakefs.fake_filesystem import OSType
    from pyfakefs.fake_filesystem_unittest import Patcher

    with Patcher() as patcher:
        fs = patcher.fs
        fs.os = OSType.MACOS
        fs.create_file("/w/ws/.env", contents=f"TOKEN={DENY_TEXT}\n")
        fs.create_file("/w/ws/.git/config", contents=f"[core] {DENY_TEXT}\n")
        fs.create_file("/w/ws/a.txt", contents=OLD)
        fs.create_symlink("/w/ws/innocent", ".ENV")
        assert open("/w/ws/.ENV").read() == f"TOKEN={DENY_TEXT}\n"  # one file, two names
        toolbox = _fake_toolbox("/w/ws", deny=[".env", ".git/**"])
        refused = [("read_file", {"path": ".ENV"}), ("read_file", {"path": ".eNv"}),
                   ("read_file", {"path": "innocent"}), ("read_file", {"path": ".GIT/config"}),
                   ("read_file", {"path": ".Git/CONFIG"}),
                   ("write_file", {"path": ".ENV", "content": "x", "overwrite": True}),
                   ("edit_file", {"path": ".Env", "oldText": "TOKEN", "newText": "x"}),
                   ("edit_file", {"path": "innocent", "oldText": "TOKEN", "newText": "x"}),
                   ("move_file", {"source": "a.txt", "destination": ".ENV", "overwrite": True}),
                   ("move_file", {"source": ".ENV", "destination": "leak.txt"}),
                   ("delete_file", {"path": ".ENV"}), ("list_directory", {"path": ".GIT"}),
                   ("grep", {"pattern": "TOKEN", "path": ".ENV"}),
                   ("glob", {"pattern": "*", "path": ".GIT"})]
        for tool, args in refused:
            envelope = toolbox.call(tool, args)
            assert_contract(envelope)
            assert envelope["code"] == "DENIED" and envelope["details"]["kind"] == "deny_rule", \
                (tool, args, envelope)
        for tool, args in [("grep", {"pattern": "TOKEN|core", "includeIgnored": True}),
                           ("glob", {"pattern": "**/*", "includeIgnored": True}),
                           ("list_directory", {"path": "."})]:
            envelope = toolbox.call(tool, args)
            text = json.dumps(envelope)
            assert envelope["ok"] and DENY_TEXT not in text, envelope
            assert ".env" not in text.lower().replace("innocent", ""), envelope
        assert open("/w/ws/.env").read() == f"TOKEN={DENY_TEXT}\n"
        assert open("/w/ws/a.txt").read() == OLD
        assert sorted(os.listdir("/w/ws")) == [".env", ".git", "a.txt", "innocent"]
        toolbox.root.close()


# -- many threads, one file, many spellings ---------------------------------------------

@pytest.mark.parametrize("config", CONFIGS, ids=CONFIG_IDS)
def test_concurrent_edits_through_every_spelling_all_land(tmp_path, config):
    """THREATS.md: concurrent edits of one file by many threads all land.  The
    per-path lock is keyed by where a path really leads, so threads naming the
    file differently (``a/../f``, ``./f``, an absolute path, an in-root
    symlink) still take turns: no edit is lost to another's write."""
    root = tmp_path / "ws"
    (root / "a").mkdir(parents=True)
    threads, per_thread = 6, 12
    lines = [f"t{t}-{i:02d}: value 0\n" for t in range(threads) for i in range(per_thread)]
    (root / "shared.txt").write_text("".join(lines))
    os.symlink("shared.txt", root / "alias.txt")
    spellings = ["shared.txt", "a/../shared.txt", "./shared.txt", str(root / "shared.txt"),
                 "alias.txt", "a/./../alias.txt"]
    failures: list[dict] = []
    start = threading.Barrier(threads)
    toolbox = Toolbox(config.factory(str(root)))
    try:
        def worker(t: int) -> None:
            start.wait()
            for i in range(per_thread):
                result = toolbox.call("edit_file", {"path": spellings[t % len(spellings)],
                                                    "oldText": f"t{t}-{i:02d}: value 0\n",
                                                    "newText": f"t{t}-{i:02d}: value 1\n"})
                if not result["ok"]:
                    failures.append(result)

        pool = [threading.Thread(target=worker, args=(t,)) for t in range(threads)]
        for thread in pool:
            thread.start()
        for thread in pool:
            thread.join(60)
        assert not any(thread.is_alive() for thread in pool), "an edit blocked"
    finally:
        toolbox.root.close()
    assert failures == []
    assert (root / "shared.txt").read_text() == "".join(
        line.replace("value 0", "value 1") for line in lines)
    assert os.path.islink(root / "alias.txt") and temp_files(root) == []
