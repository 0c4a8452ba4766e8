"""``Root.fwalk``: ``os.fwalk`` on fds, from an already resolved directory."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING

from ._acts import SAFE
from ._errors import PathError, contained_error
from ._handle import kinds
from ._resolve import Anchor, close_quietly, open_dir_below

if TYPE_CHECKING:
    from ._backend import Backend

Row = tuple[str, list[str], list[str], int]
OnError = Callable[[OSError], None]
Vouched = dict[int, tuple[int, int]]


def _error(exc: OSError, where: str) -> OSError:
    if isinstance(exc, PathError) and exc.component is not None:
        return exc
    return contained_error(exc.errno, where, where)


def _listed(backend: Backend, fd: int) -> tuple[list[str], list[str]]:
    dirs: list[str] = []
    files: list[str] = []
    for name, kind in kinds(backend, fd):
        (dirs if kind == "dir" else files).append(name)
    return dirs, files


def _vouched(backend: Backend, walking: Vouched, row: Row) -> Iterator[Row]:
    """Yield ``row`` with its fd registered in ``walking`` (fd -> (dev, ino))
    while the consumer holds it: what ``Root.open(dir_fd=)`` accepts."""
    dfd = row[3]
    try:
        info = backend.fstat(dfd)
    except OSError as exc:  # a security module refusing the look: typed, at that folder
        raise _error(exc, row[0]) from None
    walking[dfd] = (info.st_dev, info.st_ino)
    try:
        yield row
    finally:
        walking.pop(dfd, None)


def fwalk(anchor: Anchor, fd: int, top: str, topdown: bool,
          onerror: OnError | None) -> Iterator[Row]:
    """Walk the tree below the open directory ``fd`` (canonical path
    ``top``), which it owns and closes.  Symlinks are never followed: a
    subdirectory is opened ``O_NOFOLLOW`` relative to its parent's fd, and
    one replaced by a link (or removed) since the listing is skipped.  A
    subdirectory is shown beneath the root before it is listed
    (:func:`._resolve.open_dir_below`; one that is not is skipped,
    ``EscapeError`` to ``onerror``).  Each fd is in
    ``anchor.walking`` while it is yielded (see :func:`_vouched`)."""
    backend, walking = anchor.backend, anchor.walking
    # frames: (fd, dirpath, remaining subdirectory names): an explicit stack,
    # no recursion limit, every fd closed in the finally
    stack: list[tuple[int, str, list[str]]] = []
    bottom_up: list[Row] = []
    pending: list[tuple[int, str]] = [(fd, top)]
    try:
        while pending or stack:
            if pending:
                dfd, dpath = pending.pop()
                try:
                    dirs, files = _listed(backend, dfd)
                except OSError as exc:
                    backend.close(dfd)
                    if onerror is None:
                        raise _error(exc, dpath) from None
                    onerror(_error(exc, dpath))
                    continue
                # on the stack before the yield: a consumer leaving there
                # (break, exception, close) has it closed by the finally
                remaining: list[str] = []
                stack.append((dfd, dpath, remaining))
                if topdown:
                    yield from _vouched(backend, walking, (dpath, dirs, files, dfd))
                else:
                    bottom_up.append((dpath, dirs, files, dfd))
                remaining.extend(reversed(dirs))  # topdown: as the consumer pruned it
            frame_fd, frame_path, remaining = stack[-1]
            if not remaining:
                if not topdown:
                    dpath, dirs, files, _ = bottom_up.pop()
                    yield from _vouched(backend, walking, (dpath, dirs, files, frame_fd))
                stack.pop()
                backend.close(frame_fd)
                continue
            name = remaining.pop()
            child = name if frame_path == "." else f"{frame_path}/{name}"
            try:
                # one name, O_NOFOLLOW, shown beneath the root (its parent may
                # have been moved out since it was listed)
                cfd = open_dir_below(anchor, frame_fd, name, child,
                                     os.O_RDONLY | os.O_DIRECTORY | SAFE)
            except OSError as exc:
                # replaced by a symlink or removed since listing: not followed
                if onerror is not None:
                    onerror(_error(exc, child))
                continue
            pending.append((cfd, child))
    finally:
        for frame_fd, _, _ in stack:
            close_quietly(backend, frame_fd)
        for dfd, _ in pending:
            close_quietly(backend, dfd)
