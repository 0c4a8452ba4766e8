"""Directory fds the core did not hand out, or no longer holds (fd lifetime;
THREATS rows 19 and 22), on every backend config.

``Root.open(name, dir_fd=fd)`` must not open a name in *any* directory fd:
one that :meth:`Root.fwalk` yielded and has since closed (its number reused
by a directory outside the root: the fd-reuse class of row 22), or one that
never came from the root at all, would open a file outside the root through
the Root.  Only a fd this Root's fwalk is yielding at the time, with the
device and inode it had, is accepted (else ``EBADF``).
"""

from __future__ import annotations

import os

import pytest

from ..helpers import fds_opened_since, open_fds

SECRET = b"OUTSIDE-SECRET"


@pytest.fixture
def site(tmp_path):
    ws = tmp_path / "ws"
    outside = tmp_path / "outside"
    (ws / "d").mkdir(parents=True)
    (ws / "d" / "f").write_text("inside")
    outside.mkdir()
    (outside / "f").write_bytes(SECRET)
    return ws, outside


def _open_read(root, name: str, dir_fd: int) -> bytes | None:
    """What ``root.open(name, dir_fd=...)`` reads, or ``None`` if refused."""
    try:
        fd = root.open(name, dir_fd=dir_fd)
    except OSError:
        return None
    try:
        return os.read(fd, 100)
    finally:
        os.close(fd)


def test_a_stale_fwalk_fd_reused_outside_opens_nothing_outside(make_root, site):
    ws, outside = site
    root = make_root(str(ws))
    stale = [fd for _path, _dirs, _files, fd in root.fwalk(".")]  # closed after each step
    bait = []
    try:
        while len(bait) < 64:  # take the freed numbers with directories outside
            bait.append(os.open(outside, os.O_RDONLY | os.O_DIRECTORY))
            if bait[-1] in stale:
                break
        reused = [fd for fd in stale if fd in bait]
        assert reused, "the test could not reuse a stale fd number"
        assert _open_read(root, "f", reused[0]) != SECRET, \
            "Root.open(dir_fd=<closed fwalk fd>) read a file outside the root"
    finally:
        for fd in bait:
            os.close(fd)


def test_a_directory_fd_not_from_the_root_opens_nothing_outside(make_root, site):
    ws, outside = site
    root = make_root(str(ws))
    foreign = os.open(outside, os.O_RDONLY | os.O_DIRECTORY)
    try:
        assert _open_read(root, "f", foreign) != SECRET, \
            "Root.open(dir_fd=<fd of a directory outside>) read a file outside the root"
    finally:
        os.close(foreign)


@pytest.mark.parametrize("topdown", [True, False], ids=["topdown", "bottom-up"])
def test_a_walk_left_early_closes_every_fd(make_root, site, topdown):
    """THREATS row 19: no fd leaks after a call.  Leaving Root.walk/fwalk
    early (a break, a consumer's exception: move_file's policy walk stopping
    at its deadline or a cancel leaks one per call) leaves the directory fd
    it had just yielded open: it is in neither of the lists the generator's
    finally closes (popped from pending / the stack before the yield)."""
    ws, _outside = site
    root = make_root(str(ws))
    before = open_fds()
    for _ in range(20):
        walk = root.fwalk(".", topdown=topdown)
        next(walk)
        walk.close()
    for _ in range(20):
        for _row in root.walk(".", topdown=topdown):
            break
    left = fds_opened_since(before)
    assert not left, f"{len(left)} fds left open by 40 abandoned walks"
