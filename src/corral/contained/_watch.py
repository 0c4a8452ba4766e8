"""Watching directories for the entries any program makes, moves or removes
in them (Linux inotify, through the native backend's module).

A layer above that keeps what it knows of a tree (its links) learns here
what another program changed since it looked: each watched directory
reports every entry created, moved in or out, or removed, and its own
removal or move.  The kernel queues an event before the system call that
made the change returns, so a :meth:`DirectoryWatch.read` made after that
call sees it.  Watches are added by the directory's fd (the very object,
never a path resolved again); where the module or the kernel has none,
:meth:`DirectoryWatch.open` answers ``None``.
"""

from __future__ import annotations

import os
import re
import struct
from typing import NamedTuple

from ._backend import Backend
from ._replace import TEMP_SUFFIX

__all__ = ["DirectoryWatch", "WatchEvent"]

# inotify's event bits (the Linux ABI's values)
CREATED = 0x100
REMOVED = 0x200
MOVED_FROM = 0x40
MOVED_TO = 0x80
SELF_REMOVED = 0x400
SELF_MOVED = 0x800
OVERFLOW = 0x4000
DROPPED = 0x8000  # the watch is gone (its directory removed, or the watch removed)
IS_DIRECTORY = 0x40000000

_HEADER = struct.Struct("iIII")  # wd, mask, cookie, len of the name (NUL-padded)
_READ_SIZE = 4096  # at least 15 events a read; a full read is followed by another
_LARGEST_EVENT = 16 + 256  # the header and a name of NAME_MAX bytes with its NUL
_TEMP_SUFFIX_BYTES = os.fsencode(TEMP_SUFFIX)
_TEMP_BYTES = re.compile(rb"\..{0,128}\.[0-9a-f]{12}" + re.escape(_TEMP_SUFFIX_BYTES), re.DOTALL)
_MAX_REPLACES = 256  # renames of temporary files waiting for their other half


class WatchEvent(NamedTuple):
    """One change the kernel reported: the watch it came from, what
    happened (the bits above), the cookie pairing a rename's two halves,
    and the entry's name ("" for the watched directory itself)."""

    watch: int
    mask: int
    cookie: int
    name: str

    @property
    def is_directory(self) -> bool:
        return bool(self.mask & IS_DIRECTORY)


def _watching_backend() -> Backend | None:
    """The backend that can watch directories here (the native one, on
    Linux), whichever backend the roots use."""
    from ._select import backend_by_name
    try:
        backend = backend_by_name("native")
    except OSError:
        return None
    return backend if backend.can_watch else None


class DirectoryWatch:
    """One inotify instance: directories added by fd, events read without
    waiting (an empty list when none is queued)."""

    CREATED = CREATED
    REMOVED = REMOVED
    MOVED_FROM = MOVED_FROM
    MOVED_TO = MOVED_TO
    SELF_REMOVED = SELF_REMOVED
    SELF_MOVED = SELF_MOVED
    OVERFLOW = OVERFLOW
    DROPPED = DROPPED

    def __init__(self, backend: Backend, fd: int) -> None:
        self._backend = backend
        self._fd = fd
        self._replaces: set[int] = set()  # cookies of temporary files renamed away

    @classmethod
    def open(cls) -> DirectoryWatch | None:
        """A new watch, or ``None`` where none can be had (no native module,
        not Linux, the user's instances used up)."""
        backend = _watching_backend()
        if backend is None:
            return None
        try:
            fd = backend.watch_open()
        except OSError:
            return None
        return cls(backend, fd)

    @property
    def closed(self) -> bool:
        return self._fd < 0

    def add(self, dir_fd: int, backend: Backend | None = None) -> int:
        """Watch the directory ``dir_fd`` holds (through ``backend`` if it
        can watch); the watch's number (the same number for a directory
        already watched: one removal ends it for every caller that added
        it).  ``OSError`` on failure (``ENOSPC``: the user's watches are
        used up)."""
        if self._fd < 0:
            raise OSError(9, "the watch is closed")
        through = backend if backend is not None and backend.can_watch else self._backend
        return through.watch_add(self._fd, dir_fd)

    def remove(self, watch: int, backend: Backend | None = None) -> None:
        """Stop the watch numbered ``watch`` (through ``backend`` if it can
        watch); a :data:`DROPPED` event for it follows.  ``OSError``
        (``EINVAL``) where the kernel dropped it already (its directory
        removed)."""
        if self._fd < 0:
            raise OSError(9, "the watch is closed")
        through = backend if backend is not None and backend.can_watch else self._backend
        through.watch_remove(self._fd, watch)

    def read(self, backend: Backend | None = None) -> list[WatchEvent]:
        """Every event queued now, in order (one ``read``, through
        ``backend`` if given, when none is),
        but for the core's own atomic replaces: a temporary file it made,
        wrote, renamed onto its name or removed (``.<name>.<12 hex>.corral-tmp``)
        is a regular file of its own, never reported."""
        if self._fd < 0:
            return []
        events: list[WatchEvent] = []
        header = _HEADER
        temp_suffix = _TEMP_SUFFIX_BYTES
        replaces = self._replaces
        while True:
            try:
                data = os.read(self._fd, _READ_SIZE) if backend is None else \
                    backend.read(self._fd, _READ_SIZE)
            except BlockingIOError:
                return events
            offset = 0
            end = len(data)
            while offset + 16 <= end:
                watch, mask, cookie, size = header.unpack_from(data, offset)
                offset += 16
                raw = data[offset:offset + size].rstrip(b"\0")
                offset += size
                if mask & MOVED_TO and cookie in replaces:
                    replaces.discard(cookie)  # a replace's temporary file, now its target
                    continue
                if raw.endswith(temp_suffix) and not mask & IS_DIRECTORY and \
                        _TEMP_BYTES.fullmatch(raw) is not None:
                    if mask & MOVED_FROM:
                        if len(replaces) >= _MAX_REPLACES:
                            replaces.clear()  # unpaired ones: their targets are then looked at
                        replaces.add(cookie)
                    if mask & (CREATED | REMOVED | MOVED_FROM):
                        continue
                events.append(WatchEvent(watch, mask, cookie, os.fsdecode(raw)))
            if end <= _READ_SIZE - _LARGEST_EVENT:  # room for one more: none was queued
                return events

    def close(self) -> None:
        if self._fd >= 0:
            fd, self._fd = self._fd, -1
            os.close(fd)
