"""Kernel restrictions on following symlinks are not bypassed (THREATS.md
row 23): where the kernel refuses to follow a link, the walk refuses too.

* a ``nosymfollow`` mount: a real tmpfs mounted so (``helpers.trees``'s
  ``m|nosymfollow`` entry; skipped only where mounting is impossible).  Every
  op, every backend config, checked against the kernel itself (plain ``os``
  on the same host path, which the mount makes refuse with ``ELOOP``).
* ``fs.protected_symlinks``: in a sticky world-writable directory a link
  owned by neither the follower nor the directory's owner is not followed
  (``EACCES``).  The sysctl is off on this machine and may not be changed
  by a test, so :class:`corral.testing.backends.FaultBackend` states it on
  and the walk is checked against the kernel's rule as written (the fast
  path asks the kernel, which answers for itself).
"""

from __future__ import annotations

import errno
import os

import pytest

from corral.contained import Root, backend_by_name
from corral.testing.backends import FaultBackend

from .helpers.trees import build
from .helpers.operations import OPS
from .helpers.table import C, run_ops

ELOOP, EACCES = errno.ELOOP, errno.EACCES
_MOUNT = ["m|nosymfollow", "m/d/", "m/d/f", "m/l -> d", "m/lf -> d/f", "m/up -> ..",
          "m/d/back -> ../l"]

# the rename ops move to or from the root's own filesystem: EXDEV, as os says
_XDEV = {"rename_src": errno.EXDEV, "rename_dst": errno.EXDEV}

NOSYMFOLLOW = [
    # links inside the mount are not followed, on the way or at the end
    C("nosymfollow: link on the way", _MOUNT, "m/l/f", error=ELOOP),
    # (a rename between the mount and the root's own filesystem is EXDEV)
    C("nosymfollow: final link", _MOUNT, "m/lf", error=ELOOP, ltarget="m/lf",
      expect=_XDEV),
    C("nosymfollow: link to dir, slash", _MOUNT, "m/l/"),
    # os.makedirs says nothing here: its exists() takes the kernel's ELOOP for
    # "missing", then mkdir meets the link (EEXIST, ignored) and the "." ends it
    C("nosymfollow: link to dir, slash dot", _MOUNT, "m/l/.", error=ELOOP,
      no_oracle=["makedirs", "makedirs_exist_ok"]),
    C("nosymfollow: link to the parent", _MOUNT, "m/up/m/d/f", error=ELOOP),
    C("nosymfollow: nested", _MOUNT, "m/d/back/f", error=ELOOP),
    C("nosymfollow: created through", _MOUNT, "m/l/new", error=ELOOP),
    # no link on the way: everything works inside the mount
    C("nosymfollow: plain path", _MOUNT, "m/d/target", target="m/d/target", expect=_XDEV),
    C("nosymfollow: dotdot", _MOUNT, "m/d/../d/target", target="m/d/target", expect=_XDEV),
    # a link outside the mount leading into it is followed
    C("nosymfollow: link from outside", [*_MOUNT, "in -> m/d"], "in/target",
      target="m/d/target", expect=_XDEV),
]


@pytest.mark.parametrize("case", NOSYMFOLLOW, ids=[c.name for c in NOSYMFOLLOW])
def test_nosymfollow_mount(case, make_root, scratch):
    run_ops(case, OPS, make_root, scratch)


# -- fs.protected_symlinks --------------------------------------------------------

OTHER_UID = 4242


def _protected_tree(scratch, *, dir_owner: int, link_owner: int, mode: int = 0o1777):
    tree = build(scratch / "t", ["t/", "t/d/", "t/d/f", "t/l -> d", "t/lf -> d/f"])
    os.chmod(tree.ws / "t", mode)
    os.chown(tree.ws / "t", dir_owner, -1)
    for link in ("l", "lf"):
        os.lchown(tree.ws / "t" / link, link_owner, -1)
    return tree


def _walk_root(make_root, path, **faults) -> Root:
    backend = FaultBackend(backend_by_name(make_root.backend_name), **faults)
    return Root(path, backend=backend, fast_path=False)


RULES = [
    # (dir owner, link owner, dir mode, refused): the kernel's may_follow_link
    ("link owned by someone else", 0, OTHER_UID, 0o1777, True),
    ("link owned by the follower", OTHER_UID, os.geteuid(), 0o1777, False),
    ("link owned by the directory's owner", OTHER_UID, OTHER_UID, 0o1777, False),
    ("not sticky", 0, OTHER_UID, 0o0777, False),
    ("not world-writable", 0, OTHER_UID, 0o1775, False),
]


@pytest.mark.skipif(os.geteuid() != 0, reason="making files owned by another user needs root")
@pytest.mark.parametrize("name,dir_owner,link_owner,mode,refused", RULES,
                         ids=[r[0] for r in RULES])
def test_protected_symlinks_rule(name, dir_owner, link_owner, mode, refused, make_root,
                                 scratch):
    tree = _protected_tree(scratch, dir_owner=dir_owner, link_owner=link_owner, mode=mode)
    root = _walk_root(make_root, tree.ws, protected_symlinks=True)
    follows = {
        "open": lambda: os.close(root.open("t/lf")),
        "stat": lambda: root.stat("t/l/f"),
        "read_bytes": lambda: root.read_bytes("t/l/f"),
        "write_bytes": lambda: root.write_bytes("t/lf", b"x"),
        "makedirs": lambda: root.makedirs("t/l/new"),
        "open_handle": lambda: root.open_handle("t/l/").close(),
        "target": lambda: root.target("t/lf", follow_final=True).close(),
        "realpath": lambda: root.realpath("t/l/./f"),
    }
    for op, call in follows.items():
        if refused:
            with pytest.raises(PermissionError) as info:
                call()
            assert info.value.errno == EACCES, op
            assert info.value.component in ("t/l", "t/lf"), (op, info.value.component)
        else:
            call()
    # the link itself is never followed by these, so never refused
    assert root.readlink("t/l") == "d"
    assert root.lstat("t/lf").st_uid == link_owner
    with root.target("t/lf") as target:
        assert target.path == "t/lf"
    root.close()


@pytest.mark.skipif(os.geteuid() != 0, reason="making files owned by another user needs root")
def test_protected_symlinks_off_follows(make_root, scratch):
    tree = _protected_tree(scratch, dir_owner=0, link_owner=OTHER_UID)
    root = _walk_root(make_root, tree.ws, protected_symlinks=False)
    assert root.read_bytes("t/lf") == b"content of t/d/f"
    root.close()


def test_the_walk_asks_for_the_mount_flags(make_root, scratch):
    """With every filesystem stated ``nosymfollow``, no link is followed."""
    tree = build(scratch / "t", ["d/", "d/f", "l -> d"])
    root = _walk_root(make_root, tree.ws, nosymfollow=True)
    with pytest.raises(OSError) as info:
        root.stat("l/f")
    assert info.value.errno == ELOOP and info.value.component == "l"
    assert root.stat("d/f").st_size == len(b"content of d/f")
    root.close()
