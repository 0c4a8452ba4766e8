"""Red-team findings against the core (issue 18: fd lifetime; THREATS rows
19 and 22), on every backend config.

``Root.open(name, dir_fd=fd)`` opens a name in *any* directory fd: one that
:meth:`Root.fwalk` yielded and has since closed (its number reused by a
directory outside the root: the fd-reuse class of row 22), or one that
never came from the root at all.  Either way a file outside the root is
opened through the Root.
"""

from __future__ import annotations

import os

import pytest

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


@pytest.mark.xfail(strict=True, reason="redteam: core to fix (dir_fd not checked: stale fwalk fd)")
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


@pytest.mark.xfail(strict=True, reason="redteam: core to fix (dir_fd not checked: foreign fd)")
def test_a_directory_fd_not_from_the_root_opens_nothing_outside(make_root, site):
    ws, outside = site
    root = make_root(str(ws))
    foreign = os.open(outside, os.O_RDONLY | os.O_DIRECTORY)
    try:
        assert _open_read(root, "f", foreign) != SECRET, \
            "Root.open(dir_fd=<fd of a directory outside>) read a file outside the root"
    finally:
        os.close(foreign)
