"""A move finds the roots served now on its way (THREATS row 60) by their
places, read once a move, not by a look at each folder of the way: each
directory is named by its filesystem and its path there, from the process's
mounts, so a folder shown twice (a bind mount) is one place.  Where the
places cannot be told, the move looks at each folder as it did before, and
the other process's write still never lands in what the move carries."""

from __future__ import annotations

import pytest

from corral.tools._runtime.view import decide
from tests.security import test_redteam_r25a_nested_roots_in_two_processes as nested

MOUNTS = (
    b"22 1 8:1 / / rw,relatime shared:1 - ext4 /dev/sda1 rw\n"
    b"30 22 8:2 / /home rw,relatime shared:2 - ext4 /dev/sda2 rw\n"
    # a folder of /home shown again under /srv (a bind mount), with a space
    b"31 22 8:2 /user/my\\040proj /srv/proj rw,relatime shared:3 - ext4 /dev/sda2 rw\n"
    b"32 30 0:40 / /home/user/tmp rw - tmpfs tmpfs rw\n"
    # a second mount on the same point: the later one is on top
    b"33 30 0:41 / /home/user/tmp rw - tmpfs tmpfs rw\n"
)


@pytest.mark.no_backend
def test_a_path_is_placed_in_its_filesystem() -> None:
    mounts = decide._Mounts(MOUNTS)
    assert mounts.place("/") == ("8:1", "/")
    assert mounts.place("/etc/x") == ("8:1", "/etc/x")
    assert mounts.place("/home") == ("8:2", "/")
    assert mounts.place("/homeless") == ("8:1", "/homeless")  # not under /home
    assert mounts.place("/home/user/my proj/web") == ("8:2", "/user/my proj/web")
    # the same folder through the bind mount: the same place
    assert mounts.place("/srv/proj/web") == ("8:2", "/user/my proj/web")
    assert mounts.place("/srv/proj") == ("8:2", "/user/my proj")
    assert mounts.place("/home/user/tmp/a") == ("0:41", "/a")


@pytest.fixture
def unplaced(monkeypatch: pytest.MonkeyPatch) -> None:
    """Where the served roots are cannot be told here (no ``/proc``, a root
    served by an older corral that wrote no path)."""
    monkeypatch.setattr(decide, "served_places", lambda keys: None)


def test_unplaced_a_move_still_holds_the_inner_roots_lock(tmp_path, make_root,
                                                          unplaced) -> None:
    nested.test_a_folder_of_an_inner_root_moved_onto_vscode_while_its_server_writes(
        tmp_path, make_root)
