"""The walks for links go around the kernel's own filesystems (procfs,
sysfs, cgroup: every name there is the kernel's, no program makes a link
or a name of its choosing there), told by the filesystem's type through
the root's backend, and nothing else: a directory on another filesystem
holding user files (another mount) is walked as any, at open, by the walk
past the look at open, and when a link is made there after open.

The kernel's filesystems are met for real (a root in /proc, in /sys);
a tree holding one beside another mount is a backend reporting those
directories' device and type as a mount of each would (the test cannot
mount), on every backend config."""

from __future__ import annotations

import fcntl
import os

import pytest

from corral.contained import Root, backend_by_name
from corral.testing.backends import CountingBackend
from corral.tools import Toolbox
from corral.tools._policy.gitdirs import MAX_DEPTH
from corral.tools._runtime.view import freshness

PROC_SUPER_MAGIC = 0x9FA0
EXT4_SUPER_MAGIC = 0xEF53
DEEP = "/".join(["d"] * (MAX_DEPTH + 1))  # below what the look at open lists
UP = "/".join([".."] * (MAX_DEPTH + 2))
ORIGINAL = "original\n"

# real places of the kernel's filesystems (procfs, sysfs), where this system has them
KERNEL_PLACES = [place for place in ("/proc/self", "/sys/kernel") if os.path.isdir(place)]


@pytest.mark.parametrize("place", KERNEL_PLACES)
def test_a_root_in_a_kernel_filesystem_is_not_walked(make_root, place):
    backend = CountingBackend(backend_by_name(make_root.backend_name))
    root = Root(place, backend=backend, fast_path=make_root.fast_path)
    with backend.counting() as tally:
        box = Toolbox(root)
    with root, box:
        assert tally["scandir"] == 0, str(tally)
        assert box._view.links_settled and len(box._view.links) == 0
        assert not box._view.freshness._watched
        listed = box.call("list_directory", {"path": "."})
        assert listed["ok"], listed  # the tools still see it


def _where(fd: int) -> str:
    if hasattr(fcntl, "F_GETPATH"):
        return os.fsdecode(fcntl.fcntl(fd, fcntl.F_GETPATH, bytes(1024)).rstrip(b"\0"))
    return os.readlink(f"/proc/self/fd/{fd}")


class _Stat:
    """An ``os.stat_result`` on another device."""

    def __init__(self, info: os.stat_result, device: int) -> None:
        self._info, self.st_dev = info, device

    def __getattr__(self, name: str) -> object:
        return getattr(self._info, name)


def _mounting(name: str, mounts: dict[str, tuple[int, int]]):
    """Backend ``name`` reporting each directory at or below a key of
    ``mounts`` (a host path) on that mount's (device, filesystem type)."""
    base = type(backend_by_name(name))

    def mount_of(fd: int) -> tuple[int, int] | None:
        try:
            where = _where(fd)
        except OSError:
            return None
        for top, mount in mounts.items():
            if where == top or where.startswith(top + "/"):
                return mount
        return None

    class Mounting(base):  # type: ignore[misc, valid-type]
        def fstat(self, fd: int):
            info = super().fstat(fd)
            mount = mount_of(fd)
            return info if mount is None else _Stat(info, mount[0])

        def filesystem_type(self, fd: int) -> int:
            mount = mount_of(fd)
            return super().filesystem_type(fd) if mount is None else mount[1]

    return Mounting()


def _tree(base) -> None:
    """``kernel/`` (as procfs) and ``mounted/`` (as another mount with user
    files), each deeper than the look at open goes, each with links."""
    (base / "editor").mkdir()
    (base / "editor" / "settings.json").write_text(ORIGINAL)
    (base / "config").mkdir()
    (base / "config" / "env").write_text("API_KEY=1\n")
    (base / "notes.txt").write_text("notes\n")
    for top in ("kernel", "mounted"):
        (base / top / DEEP).mkdir(parents=True)
        (base / top / "near").mkdir()
    (base / "mounted" / DEEP / ".vscode").symlink_to(f"{UP}/editor")
    (base / "mounted" / "near" / ".env").symlink_to("../../config/env")
    (base / "kernel" / DEEP / "up").symlink_to(f"{UP}/editor")
    (base / "kernel" / "near" / "up").symlink_to("../../editor")


@pytest.mark.parametrize("followed", [4096, 1], ids=["followed-at-open", "walked-after-open"])
def test_links_on_another_mount_are_learnt_beside_a_kernel_filesystem(
        tmp_path, make_root, monkeypatch, followed):
    """The directories freshness follows at open are bounded at the root
    alone in one case (the rest is the walk's, on its thread), not in the
    other; either way ``mounted/`` is walked, ``kernel/`` is not."""
    monkeypatch.setattr(freshness, "MAX_WATCHED", followed)
    monkeypatch.setattr(freshness, "MAX_STAMPED", min(followed, freshness.MAX_STAMPED))
    base = tmp_path / "tree"
    base.mkdir()
    _tree(base)
    real = os.path.realpath(base)
    backend = _mounting(make_root.backend_name, {
        f"{real}/kernel": (0x7FFF0001, PROC_SUPER_MAGIC),
        f"{real}/mounted": (0x7FFF0002, EXT4_SUPER_MAGIC)})
    with Root(str(base), backend=backend, fast_path=make_root.fast_path) as root, \
            Toolbox(root) as box:
        view = box._view
        assert view.wait_for_links() or view._links_known.wait(60)
        assert view._links_known.is_set()  # the walk is through
        # (with one directory followed the rest lie beyond: each call looks at them)
        assert view.links_settled == (followed != 1)
        links = view.links
        assert links.knows(f"mounted/{DEEP}/.vscode") and links.knows("mounted/near/.env")
        assert not links.knows(f"kernel/{DEEP}/up") and not links.knows("kernel/near/up")
        assert not any(place.startswith("kernel") for place in view.freshness._watched)
        assert not any(place.startswith("kernel") for place in view.freshness.beyond)
        written = box.call("write_file", {"path": "editor/settings.json",
                                          "content": "OWNED\n", "overwrite": True})
        assert not written["ok"] and written["details"]["kind"] == "protected", written
        read = box.call("read_file", {"path": "config/env"})
        assert not read["ok"] and read["details"]["kind"] == "secret", read
        assert (base / "editor" / "settings.json").read_text() == ORIGINAL
        if followed == 1:
            return  # (a link made after open where nothing is followed: learnt once met)
        # a link made after open in the other mount, in a directory followed
        (base / "config" / "more").write_text("TOKEN=3\n")
        (base / "mounted" / "near" / ".envrc").symlink_to("../../config/more")
        later = box.call("write_file", {"path": "config/more", "content": "OWNED\n",
                                        "overwrite": True})
        assert not later["ok"] and later["details"]["kind"] == "protected", later
        assert (base / "config" / "more").read_text() == "TOKEN=3\n"
