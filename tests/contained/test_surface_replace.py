"""Atomic replace (``_replace.replace_in``: old content or new, never a part), through
``Root.write_bytes`` on every backend config (THREATS.md row 27).

* What is carried over from the replaced file: mode, a foreign owner and
  group, ``user.*`` / ``security.*`` xattrs and a POSIX ACL; what is not:
  setuid/setgid, file capabilities, ``trusted.*``, the inode.
* A spy process that dropped to uid 65534 looks into the directory after
  every single step of a rewrite of a 0600 file (a backend pauses after each
  call) and must never read a temporary file, while it can read a public
  file beside it (so the spy really looks).
* Faults at each metadata step: tolerated where the step is "not
  permitted", fatal otherwise, and then the old file is untouched.

These tests change owners and spy as another uid: they need root (as CI
runs); elsewhere they are skipped with that reason.
"""

from __future__ import annotations

import errno
import json
import os
import shutil
import stat
import struct
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from corral.contained import Root, StaleError, backend_by_name
from corral.contained import OsBackend
from corral.contained._replace import TEMP_SUFFIX, replace_in

OLD, NEW = b"old secret content\n", b"NEW SECRET CONTENT, nobody else may see it\n"
FOREIGN_UID, FOREIGN_GID = 1234, 2345
SPY_UID = 65534

needs_root = pytest.mark.skipif(os.geteuid() != 0, reason="changes owners and spies as uid "
                                "65534: needs root, as CI runs")


def _xattrs_supported(where: Path) -> bool:
    probe = where / ".xattr-probe"
    probe.write_bytes(b"")
    try:
        os.setxattr(probe, "user.probe", b"1")
    except OSError as exc:
        if exc.errno in (errno.ENOTSUP, errno.EOPNOTSUPP):
            return False
        raise
    finally:
        probe.unlink()
    return True


def _acl(*entries: tuple[int, int, int]) -> bytes:
    """A ``system.posix_acl_access`` value: version 2, (tag, perm, id) entries."""
    return struct.pack("<I", 2) + b"".join(struct.pack("<HHI", *e) for e in entries)


NO_ID = 0xFFFFFFFF
# owner rw, user 4321 r, group r, mask r, other none
ACL = _acl((0x01, 6, NO_ID), (0x02, 4, 4321), (0x04, 4, NO_ID), (0x10, 4, NO_ID),
           (0x20, 0, NO_ID))
# a valid vfs_cap_data (revision 2) granting CAP_NET_BIND_SERVICE
FILE_CAP = struct.pack("<IIIII", 0x02000001, 1 << 10, 0, 0, 0)


def _temps(top: Path) -> list[str]:
    return [name for name in os.listdir(top) if name.endswith(TEMP_SUFFIX)]


@needs_root
def test_rewrite_keeps_foreign_owner_group_and_mode(make_root, scratch):
    target = scratch / "f"
    target.write_bytes(OLD)
    os.chown(target, FOREIGN_UID, FOREIGN_GID)
    os.chmod(target, 0o640)
    before = os.stat(target)
    make_root(scratch).write_bytes("f", NEW)
    after = os.stat(target)
    assert target.read_bytes() == NEW
    assert after.st_ino != before.st_ino, "not replaced: written in place"
    assert (after.st_uid, after.st_gid) == (FOREIGN_UID, FOREIGN_GID)
    assert stat.S_IMODE(after.st_mode) == 0o640
    assert _temps(scratch) == []


@needs_root
def test_rewrite_keeps_xattrs_and_acl_but_not_privileges(make_root, scratch):
    if not _xattrs_supported(scratch):
        pytest.skip("this filesystem has no user xattrs")
    target = scratch / "f"
    target.write_bytes(OLD)
    os.chown(target, FOREIGN_UID, FOREIGN_GID)
    os.chmod(target, 0o4750)  # setuid: must not survive new content
    os.setxattr(target, "user.tag", b"kept")
    os.setxattr(target, "system.posix_acl_access", ACL)
    os.setxattr(target, "security.label", b"kept too")
    os.setxattr(target, "security.capability", FILE_CAP)
    os.setxattr(target, "trusted.overlay.state", b"not carried")
    old_mode = stat.S_IMODE(os.stat(target).st_mode)  # the ACL set rw- r-- ---
    assert old_mode == 0o4640
    make_root(scratch).write_bytes("f", NEW)
    assert target.read_bytes() == NEW
    attrs = set(os.listxattr(target))
    assert os.getxattr(target, "user.tag") == b"kept"
    assert os.getxattr(target, "system.posix_acl_access") == ACL
    assert os.getxattr(target, "security.label") == b"kept too"
    assert "security.capability" not in attrs
    assert "trusted.overlay.state" not in attrs
    info = os.stat(target)
    assert (info.st_uid, info.st_gid) == (FOREIGN_UID, FOREIGN_GID)
    # the ACL's mask is the group bits; setuid is dropped
    assert stat.S_IMODE(info.st_mode) == 0o640


def test_setuid_setgid_sticky_are_dropped(make_root, scratch):
    target = scratch / "tool"
    target.write_bytes(OLD)
    os.chmod(target, 0o7755)
    make_root(scratch).write_bytes("tool", NEW)
    assert stat.S_IMODE(os.stat(target).st_mode) == 0o755


def test_new_file_modes(make_root, scratch):
    root = make_root(scratch)
    previous = os.umask(0o027)
    try:
        root.write_bytes("default", NEW)
        root.write_bytes("given", NEW, mode=0o664)  # exactly, whatever the umask
        root.write_bytes("excl", NEW, exclusive=True)
    finally:
        os.umask(previous)
    assert stat.S_IMODE(os.stat(scratch / "default").st_mode) == 0o640
    assert stat.S_IMODE(os.stat(scratch / "given").st_mode) == 0o664
    assert stat.S_IMODE(os.stat(scratch / "excl").st_mode) == 0o640
    # an explicit mode over an existing file wins over the file's own
    os.chmod(scratch / "given", 0o600)
    root.write_bytes("given", OLD, mode=0o644)
    assert stat.S_IMODE(os.stat(scratch / "given").st_mode) == 0o644


@needs_root
def test_a_followed_link_carries_its_targets_metadata(make_root, scratch):
    (scratch / "d").mkdir()
    target = scratch / "d" / "f"
    target.write_bytes(OLD)
    os.chown(target, FOREIGN_UID, FOREIGN_GID)
    os.chmod(target, 0o604)
    os.symlink("d/f", scratch / "link")
    make_root(scratch).write_bytes("link", NEW)
    assert os.path.islink(scratch / "link") and target.read_bytes() == NEW
    info = os.stat(target)
    assert (info.st_uid, info.st_gid, stat.S_IMODE(info.st_mode)) == (FOREIGN_UID, FOREIGN_GID,
                                                                       0o604)


def test_replacing_a_link_itself_is_a_new_file(make_root, scratch):
    """``follow_symlinks=False`` replaces the link: there is no file to carry
    metadata from, so the result is a new file (0o666 less the umask)."""
    (scratch / "f").write_bytes(OLD)
    os.chmod(scratch / "f", 0o600)
    os.symlink("f", scratch / "link")
    previous = os.umask(0o022)
    try:
        make_root(scratch).write_bytes("link", NEW, follow_symlinks=False)
    finally:
        os.umask(previous)
    assert not os.path.islink(scratch / "link")
    assert stat.S_IMODE(os.lstat(scratch / "link").st_mode) == 0o644
    assert (scratch / "f").read_bytes() == OLD


# -- the spy --------------------------------------------------------------------------


class Spy:
    """A forked child that dropped to uid/gid 65534 (no supplementary
    groups).  ``look()`` has it list the directory, try to read every
    temporary file and the public control file, and report."""

    def __init__(self, top: Path, public: Path) -> None:
        self._ask_r, self._ask_w = os.pipe()
        self._ans_r, self._ans_w = os.pipe()
        pid = os.fork()
        if pid == 0:  # the child: never returns into pytest
            code = 1
            try:
                os.close(self._ask_w)
                os.close(self._ans_r)
                os.setgroups([])
                os.setgid(SPY_UID)
                os.setuid(SPY_UID)
                self._serve(str(top), str(public))
                code = 0
            finally:
                os._exit(code)
        self.pid = pid
        os.close(self._ask_r)
        os.close(self._ans_w)
        self._answers = os.fdopen(self._ans_r, "r")
        self.looks = 0
        self.temps_seen = 0
        self.public_reads = 0

    def _serve(self, top: str, public: str) -> None:
        asks = os.fdopen(self._ask_r, "rb", buffering=0)
        answers = os.fdopen(self._ans_w, "w")
        while asks.read(1) == b"?":
            seen, read = [], []
            for name in os.listdir(top):
                if not name.endswith(TEMP_SUFFIX):
                    continue
                seen.append(name)
                try:
                    fd = os.open(os.path.join(top, name), os.O_RDONLY | os.O_NONBLOCK)
                except PermissionError:
                    continue
                except FileNotFoundError:
                    continue
                try:
                    read.append([name, os.read(fd, 1 << 16).decode("latin-1")])
                finally:
                    os.close(fd)
            with open(public, "rb") as f:
                control = f.read().decode("latin-1")
            answers.write(json.dumps({"uid": os.getuid(), "seen": seen, "read": read,
                                      "public": control}) + "\n")
            answers.flush()

    def look(self, step: str) -> None:
        os.write(self._ask_w, b"?")
        line = self._answers.readline()
        assert line, f"the spy died (after {step})"
        report = json.loads(line)
        assert report["uid"] == SPY_UID
        assert report["read"] == [], f"after {step} the spy read a temporary file: {report}"
        self.looks += 1
        self.temps_seen += bool(report["seen"])
        self.public_reads += report["public"] == "public\n"

    def stop(self) -> None:
        os.close(self._ask_w)
        self._answers.close()
        _, status = os.waitpid(self.pid, 0)
        assert os.waitstatus_to_exitcode(status) == 0, "the spy failed"


class PausingBackend:
    """A backend that calls ``pause(step)`` after every call it passes on,
    the fd calls (``fchown``, the xattr calls) included (so replace_in's metadata
    steps pause too)."""

    def __init__(self, inner: Any, pause: Callable[[str], None]) -> None:
        self._inner = inner
        self._pause = pause
        self._fd_calls = OsBackend()

    def __getattr__(self, attr: str) -> Any:
        value = getattr(self._inner, attr)
        if not callable(value) or attr.startswith("_") or attr == "info":
            return value

        def call(*args: Any, **kwargs: Any) -> Any:
            result = value(*args, **kwargs)
            self._pause(f"{attr}{args[1:2]}")
            return result
        return call

    def _after(self, step: str, result: Any) -> Any:
        self._pause(step)
        return result

    def fchown(self, fd: int, uid: int, gid: int) -> None:
        self._after("fchown", self._fd_calls.fchown(fd, uid, gid))

    def flistxattr(self, fd: int) -> list[str]:
        return self._after("flistxattr", self._fd_calls.flistxattr(fd))

    def fgetxattr(self, fd: int, name: str) -> bytes:
        return self._after("fgetxattr", self._fd_calls.fgetxattr(fd, name))

    def fsetxattr(self, fd: int, name: str, value: bytes) -> None:
        self._after(f"fsetxattr {name}", self._fd_calls.fsetxattr(fd, name, value))


@needs_root
@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="uid 65534 spy: Linux layout")
def test_no_other_user_ever_reads_the_temporary_file(make_root, tmp_path_factory):
    # a directory other users can reach and list (pytest's and the scratch
    # directories are 0700: the spy would see nothing there)
    shm = "/dev/shm" if os.access("/dev/shm", os.W_OK) else None
    scratch = Path(tempfile.mkdtemp(prefix="corral-spy-", dir=shm))
    try:
        os.chmod(scratch, 0o755)
        _spy_on_a_rewrite(make_root, scratch)
    finally:
        shutil.rmtree(scratch)


def _spy_on_a_rewrite(make_root, scratch: Path) -> None:
    public = scratch / "public"
    public.write_bytes(b"public\n")
    os.chmod(public, 0o644)
    secret = scratch / "secret"
    secret.write_bytes(OLD)
    os.chown(secret, FOREIGN_UID, FOREIGN_GID)
    os.chmod(secret, 0o600)
    if _xattrs_supported(scratch):
        os.setxattr(secret, "user.tag", b"x")
    spy = Spy(scratch, public)
    try:
        spy.look("start")
        backend = PausingBackend(backend_by_name(make_root.backend_name), spy.look)
        with Root(scratch, backend=backend, fast_path=make_root.fast_path) as root:
            root.write_bytes("secret", NEW)
    finally:
        spy.stop()
    assert secret.read_bytes() == NEW
    assert spy.public_reads == spy.looks, "the spy could not read the public file"
    # the spy saw the temporary file in the directory at several steps (so it
    # tried to open it), and never read it
    assert spy.temps_seen >= 4, (spy.temps_seen, spy.looks)


# -- replace_in directly: expect, faults --------------------------------------------------


class FaultyCalls(OsBackend):
    """fd calls failing one step with ``err`` (``when`` selects the calls)."""

    def __init__(self, step: str, err: int, when: Callable[..., bool] = lambda *a: True) -> None:
        self.step, self.err, self.when = step, err, when
        self.fired = 0

    def _maybe(self, step: str, *args: Any) -> None:
        if step == self.step and self.when(*args):
            self.fired += 1
            raise OSError(self.err, os.strerror(self.err))

    def fchown(self, fd: int, uid: int, gid: int) -> None:
        self._maybe("fchown", uid, gid)
        super().fchown(fd, uid, gid)

    def flistxattr(self, fd: int) -> list[str]:
        self._maybe("flistxattr")
        return super().flistxattr(fd)

    def fgetxattr(self, fd: int, name: str) -> bytes:
        self._maybe("fgetxattr", name)
        return super().fgetxattr(fd, name)

    def fsetxattr(self, fd: int, name: str, value: bytes) -> None:
        self._maybe("fsetxattr", name)
        super().fsetxattr(fd, name, value)


class CallsBackend:
    """The os backend with the fd calls of ``calls``."""

    def __init__(self, calls: OsBackend) -> None:
        self._inner = backend_by_name("os")
        self._calls = calls
        self.fchown = calls.fchown
        self.flistxattr = calls.flistxattr
        self.fgetxattr = calls.fgetxattr
        self.fsetxattr = calls.fsetxattr

    def __getattr__(self, attr: str) -> Any:
        return getattr(self._inner, attr)


def _replace(top: Path, name: str, data: bytes, backend: Any = None, **kw: Any) -> None:
    fd = os.open(top, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        try:
            current = os.stat(name, dir_fd=fd, follow_symlinks=False)
        except FileNotFoundError:
            current = None
        kw.setdefault("mode", None)
        replace_in(backend or backend_by_name("os"), fd, name, data, current=current,
                   fsync=False, exclusive=False, **kw)
    finally:
        os.close(fd)


def _old_file(top: Path) -> tuple[Path, os.stat_result]:
    target = top / "f"
    target.write_bytes(OLD)
    if os.geteuid() == 0:
        os.chown(target, FOREIGN_UID, FOREIGN_GID)
    if _xattrs_supported(top):
        os.setxattr(target, "user.tag", b"kept")
    return target, os.stat(target)


def _untouched(top: Path, target: Path, before: os.stat_result) -> None:
    assert target.read_bytes() == OLD
    assert os.stat(target).st_ino == before.st_ino
    assert _temps(top) == []


def test_expect_mismatch_writes_nothing(scratch):
    target, before = _old_file(scratch)
    with pytest.raises(StaleError) as info:
        _replace(scratch, "f", NEW, expect=(before.st_dev, before.st_ino + 1))
    assert info.value.errno == errno.EAGAIN
    _untouched(scratch, target, before)
    _replace(scratch, "f", NEW, expect=(before.st_dev, before.st_ino))
    assert target.read_bytes() == NEW


def test_expect_of_a_removed_file_writes_nothing(scratch):
    target, before = _old_file(scratch)
    fd = os.open(scratch, os.O_RDONLY | os.O_DIRECTORY)
    try:
        target.unlink()
        with pytest.raises(StaleError):
            replace_in(backend_by_name("os"), fd, "f", NEW, current=before, mode=None,
                       fsync=False, exclusive=False, expect=(before.st_dev, before.st_ino))
    finally:
        os.close(fd)
    assert not target.exists() and _temps(scratch) == []


def test_expect_with_exclusive_is_a_caller_error(scratch):
    fd = os.open(scratch, os.O_RDONLY | os.O_DIRECTORY)
    try:
        with pytest.raises(ValueError):
            replace_in(backend_by_name("os"), fd, "f", NEW, current=None, mode=None,
                       fsync=False, exclusive=True, expect=(1, 2))
    finally:
        os.close(fd)
    assert _temps(scratch) == [] and not (scratch / "f").exists()


@pytest.mark.parametrize("step", ["fchown", "flistxattr", "fgetxattr", "fsetxattr"])
def test_a_real_error_in_a_metadata_step_keeps_the_old_file(scratch, step):
    target, before = _old_file(scratch)
    if step != "fchown" and not _xattrs_supported(scratch):
        pytest.skip("this filesystem has no user xattrs")
    if step == "fchown" and os.geteuid() != 0:
        pytest.skip("a foreign owner needs root")
    calls = FaultyCalls(step, errno.EIO)
    with pytest.raises(OSError) as info:
        _replace(scratch, "f", NEW, CallsBackend(calls))
    assert info.value.errno == errno.EIO and calls.fired == 1
    _untouched(scratch, target, before)


@pytest.mark.parametrize("err", [errno.EPERM, errno.ENOTSUP, errno.EACCES])
def test_a_step_not_permitted_is_skipped(scratch, err):
    """As a user who may not give files away: fchown to the owner fails with
    EPERM, the group alone is then tried; xattrs the filesystem or the
    caller cannot set are left out; the content lands either way."""
    target, _ = _old_file(scratch)
    owner = FaultyCalls("fchown", err, when=lambda uid, gid: uid != -1)
    _replace(scratch, "f", NEW, CallsBackend(owner))
    assert target.read_bytes() == NEW
    info = os.stat(target)
    if os.geteuid() == 0:
        assert owner.fired == 1
        assert (info.st_uid, info.st_gid) == (0, FOREIGN_GID), "the group alone is carried"
    target.write_bytes(OLD)
    xattrs = FaultyCalls("fsetxattr", err)
    _replace(scratch, "f", NEW, CallsBackend(xattrs))
    assert target.read_bytes() == NEW and _temps(scratch) == []
    if _xattrs_supported(scratch):
        assert xattrs.fired == 1
        assert "user.tag" not in os.listxattr(target)


def test_an_unreadable_old_file_keeps_mode_and_owner_not_xattrs(scratch):
    """xattrs are read through an fd of the old file; when it cannot be
    opened (EACCES for a user without read permission, injected here) the
    rest is still carried."""
    target, _ = _old_file(scratch)
    os.chmod(target, 0o640)

    class NoReading(CallsBackend):
        def open_at(self, dir_fd: int, name: str, flags: int, mode: int = 0o666) -> int:
            if name == "f":
                raise PermissionError(errno.EACCES, "injected")
            return self._inner.open_at(dir_fd, name, flags, mode)

    _replace(scratch, "f", NEW, NoReading(OsBackend()))
    info = os.stat(target)
    assert target.read_bytes() == NEW and stat.S_IMODE(info.st_mode) == 0o640
    if os.geteuid() == 0:
        assert (info.st_uid, info.st_gid) == (FOREIGN_UID, FOREIGN_GID)
    if _xattrs_supported(scratch):
        assert "user.tag" not in os.listxattr(target)


class _ShortWrites:
    """A backend whose ``write`` takes at most ``most`` bytes a call, as a
    pipe or a full disk may."""

    def __init__(self, name: str, most: int) -> None:
        self._inner = backend_by_name(name)
        self.most = most
        self.calls = 0

    def write(self, fd: int, data: bytes | memoryview) -> int:
        self.calls += 1
        return self._inner.write(fd, memoryview(data).cast("B")[:self.most])

    def __getattr__(self, attr: str) -> Any:
        return getattr(self._inner, attr)


@pytest.mark.parametrize("kind", ["bytes", "bytearray", "memoryview", "array"])
def test_short_writes_and_other_buffers_land_whole(make_root, scratch, kind):
    import array
    content = bytes(range(256)) * 9  # 2,304 bytes: many short writes
    data: Any = {"bytes": content, "bytearray": bytearray(content),
                 "memoryview": memoryview(content),
                 "array": array.array("H", content)}[kind]
    (scratch / "d").mkdir()
    (scratch / "d" / "f").write_bytes(OLD)
    short = _ShortWrites(make_root.backend_name, 1000)
    with Root(str(scratch), backend=short, fast_path=make_root.fast_path) as root:
        root.write_bytes("d/f", data)  # replaces
        assert (scratch / "d" / "f").read_bytes() == content
        root.write_bytes("d/g", data)  # creates
        assert (scratch / "d" / "g").read_bytes() == content
        with root.target("d/f") as target:
            target.write_bytes(data)
        assert (scratch / "d" / "f").read_bytes() == content
    assert short.calls == 9  # three writes of three calls each: nothing written twice
    assert _temps(scratch / "d") == []
