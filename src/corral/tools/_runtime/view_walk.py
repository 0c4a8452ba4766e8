"""What the policed view hands a tool that lists or walks directories:
the view's own small type, so a listing tool never holds the core's
handles.

:class:`OpenDirectory` is a directory the view opened for listing, its
policy decided on where it really is (:func:`open_directory
<corral.tools._runtime.view.open_directory>`), or one a listing met below
it, opened by its canonical path with no link followed and checked to be
the directory the listing saw (:func:`open_below
<corral.tools._runtime.view.open_below>`).  Every listing of it and every
name read in it is from that one fd, nothing resolved again.  Neither
listing holds corral's own in-flight names (a write's temporary file,
:func:`corral.contained.is_temp_name`): no one-at-a-time order of calls
shows one, so they are not there, not even counted.

Nothing here decides: the view decides, then wraps what it decided on.
"""

from __future__ import annotations

import enum
import os
from types import TracebackType

from ...contained import DirEntry, Handle, SizedListing, is_temp_name, without_temp_names

__all__ = ["OpenDirectory", "LinkEnd", "without_temp_entries"]


def without_temp_entries(entries: list[DirEntry]) -> list[DirEntry]:
    """``entries`` without corral's own in-flight names (module doc):
    ``entries`` itself when it holds none, the common case, looked for in
    one scan of the names in C."""
    names = [entry.name for entry in entries]
    if without_temp_names(names) is names:
        return entries
    return [entry for entry in entries if not is_temp_name(entry.name)]


class LinkEnd(enum.Enum):
    """Where a symlink a walk met leads, as a search may use it."""

    FILE = "file"  # a regular file the policy shows
    HIDDEN = "hidden"  # a regular file a rule hides (itself or a known name leading to it)
    OTHER = "other"  # no regular file: a directory, dangling, outside, a loop


class OpenDirectory:
    """A directory the view opened: ``path`` its canonical root-relative
    path (what the policy was decided on), ``shown`` the path as the model
    wrote it.  ``stat`` is ``fstat``; the listings are of the fd.  Close
    it, or use ``with``; not thread-safe."""

    __slots__ = ("path", "shown", "_handle")

    def __init__(self, handle: Handle, shown: str) -> None:
        self.path = handle.path
        self.shown = shown
        self._handle = handle

    def fileno(self) -> int:
        """The directory's fd, for reading one name in it (an ignore file)."""
        return self._handle.fileno()

    def stat(self) -> os.stat_result:
        return self._handle.stat()

    def identity(self) -> tuple[int, int]:
        info = self._handle.stat()
        return info.st_dev, info.st_ino

    def scandir(self, *, stat: bool = False) -> list[DirEntry]:
        """The entries (unsorted), each ``lstat``-ed with ``stat``; no
        in-flight name (module doc)."""
        return without_temp_entries(self._handle.scandir(stat=stat))

    def sized_listing(self) -> SizedListing:
        """The names with each file's size or the kind of anything else;
        no in-flight name (module doc)."""
        listing = self._handle.sized_listing()
        names = listing.names
        if without_temp_names(names) is names:
            return listing
        kept = [i for i, name in enumerate(names) if not is_temp_name(name)]
        codes = listing.codes
        return SizedListing([names[i] for i in kept], [codes[i] for i in kept])

    def close(self) -> None:
        self._handle.close()

    def __enter__(self) -> OpenDirectory:
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self._handle.close()

    def __repr__(self) -> str:
        return f"<corral OpenDirectory {self.path!r}>"
