"""What the policed view hands a tool that reads: the view's own small
types, so a read tool never holds the core's handles.

:class:`OpenFile` is a file the view opened for reading, its policy
decided on what was opened (:meth:`CallView.open_read
<corral.tools._runtime.view.CallView.open_read>`); every read is from
that one fd, nothing resolved again.  :class:`Entry` is one entry resolved
for looking at it (file_info), its ``lstat`` taken in the directory held
open.  :class:`Lead` says where a symlink leads, as far as the policy lets
it be said.

Nothing here decides: the view decides, then wraps what it decided on.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from types import TracebackType
from typing import NamedTuple

from ...contained import Backend, Handle, Target, TextWindow

__all__ = ["OpenFile", "Entry", "Lead"]


class OpenFile:
    """A file (or directory) the view opened for reading: ``path`` is its
    canonical root-relative path (what the policy was decided on),
    ``shown`` the path as the model wrote it.  Reads are positioned
    (``pread``: the fd's offset never moves) and ``stat`` is ``fstat``
    (:meth:`unchanged` asks whether an earlier one's stamps still hold;
    ``opened_stat`` is the file's as opened, :meth:`Handle.opened_stat`);
    ``text_window`` is the backend's native rendering of a numbered window
    (``None`` where the backend has none).  Close it, or use ``with``; not
    thread-safe."""

    __slots__ = ("path", "shown", "pread", "stat", "opened_stat", "text_window", "_handle",
                 "_stamps_held")

    path: str
    shown: str
    pread: Callable[[int, int], bytes]
    stat: Callable[[], os.stat_result]
    opened_stat: Callable[[], os.stat_result]
    text_window: Callable[[bytes, int, int, int, int, int], TextWindow | None]

    def __init__(self, handle: Handle, backend: Backend, shown: str) -> None:
        self.path = handle.path
        self.shown = shown
        # the handle's own bound methods: a read costs no call more than the core's
        self.pread = handle.pread
        self.stat = handle.stat
        self.opened_stat = handle.opened_stat
        self.text_window = backend.text_window
        self._handle = handle
        self._stamps_held = backend.stamps_held

    def unchanged(self, before: os.stat_result) -> bool:
        """Whether the file still has the size and the modification and
        change times of ``before`` (an earlier :meth:`stat` of it): one
        ``fstat`` now, ``False`` if it fails."""
        return self._stamps_held(self._handle.fd, before.st_size, before.st_mtime_ns,
                                 before.st_ctime_ns) == 1

    def close(self) -> None:
        self._handle.close()

    def __enter__(self) -> OpenFile:
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self._handle.close()

    def __repr__(self) -> str:
        return f"<corral OpenFile {self.path!r}>"


class Entry:
    """One entry the view resolved to look at (its final name not followed
    unless asked): ``path`` canonical, ``shown`` as written, ``info`` its
    ``lstat`` when it was resolved.  :meth:`lstat` looks again in the
    directory resolution reached and holds open, never by resolving the
    path again.  Close it (leave its ``with`` block) when done."""

    __slots__ = ("path", "shown", "info", "_target")

    def __init__(self, target: Target, shown: str, info: os.stat_result) -> None:
        self.path = target.path
        self.shown = shown
        self.info = info
        self._target = target

    def lstat(self) -> os.stat_result | None:
        """The entry's ``lstat`` (``None``: not there)."""
        return self._target.lstat()

    def __enter__(self) -> Entry:
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self._target.close()


class Lead(NamedTuple):
    """Where a symlink leads, as a listing may say it: ``path`` its
    canonical in-root target (``None``: not named), ``kind`` the kind of
    what is there, ``"missing"``, ``"loop"`` or ``"outside"`` (``None``:
    nothing may be said, the target lies where the policy hides)."""

    path: str | None
    kind: str | None
