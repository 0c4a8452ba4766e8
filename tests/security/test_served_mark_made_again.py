"""A served mark made again while another process looks at the marks.

Each root a view holds open is said in a file of the lock directory
(``served/<device>-<inode>``, held with a shared ``flock``); a move looks
at them (``served_roots``) so as not to carry a live root away, and removes
a mark nobody holds (a dead process's).  Between its open of a mark and
its ``flock``, the root's last server may remove that mark and a new
server make the name again: the look then holds the old, unheld file, and
must not unlink the new server's mark (after which a move in any process
carries that live root away: its Toolbox goes on deciding by names it no
longer has).

The race is made to happen: the look's ``flock`` is preceded, once, by the
removal and a new server in a process of its own.
"""

from __future__ import annotations

import fcntl
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from corral.tools._runtime.view import tree_lock

_SERVER = """
import fcntl, os, sys
fd = os.open(sys.argv[1], os.O_RDONLY | os.O_CREAT | os.O_CLOEXEC | os.O_NOFOLLOW, 0o600)
fcntl.flock(fd, fcntl.LOCK_SH)
print("held", flush=True)
sys.stdin.readline()
"""


class _RemovedAndMadeAgainFirst:
    """``fcntl`` as the look sees it: its first exclusive try comes after
    the mark it opened was removed and a new server made the name again."""

    def __init__(self, name: str, servers: list[subprocess.Popen[str]]) -> None:
        self._name = name
        self._servers = servers

    def __getattr__(self, attribute: str) -> Any:
        return getattr(fcntl, attribute)

    def flock(self, fd: int, operation: int) -> None:
        if operation & fcntl.LOCK_EX and not self._servers:
            os.unlink(self._name)  # the root's last server, done
            server = subprocess.Popen([sys.executable, "-c", _SERVER, self._name],
                                      stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
            self._servers.append(server)
            assert server.stdout is not None
            assert server.stdout.readline().strip() == "held"
        fcntl.flock(fd, operation)


def test_a_mark_made_again_meanwhile_is_neither_removed_nor_missed(tmp_path: Path,
                                                                   monkeypatch) -> None:
    locks = tmp_path / "corral-locks"
    locks.mkdir(mode=0o700)
    monkeypatch.setattr(tree_lock, "_place", [str(locks)])
    monkeypatch.setattr(tree_lock, "_served_place", [])
    served = tree_lock._served_directory()
    assert served == str(locks / "served")
    key = (0x1234, 0x5678)  # a root no view of this process holds
    name = os.path.join(served, f"{key[0]:x}-{key[1]:x}")
    os.close(os.open(name, os.O_RDONLY | os.O_CREAT, 0o600))  # its last server still closing
    servers: list[subprocess.Popen[str]] = []
    monkeypatch.setattr(tree_lock, "fcntl", _RemovedAndMadeAgainFirst(name, servers))
    try:
        found = tree_lock.served_roots()
        assert servers, "the race was not made"
        assert os.path.exists(name), "the live server's mark was removed"
        assert key in found
        monkeypatch.setattr(tree_lock, "fcntl", fcntl)
        assert key in tree_lock.served_roots()  # looked at again: still served
    finally:
        for server in servers:
            server.communicate("\n", timeout=600)
