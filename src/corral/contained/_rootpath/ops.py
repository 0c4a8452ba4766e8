"""The parts of ``RootPath`` that take more than one root call: ``resolve``
(pathlib's non-strict rules, each step a root call), the link text of
``symlink_to(RootPath)``, ``copy`` and ``move`` (on the root's copy, mkdir,
symlink and rename) and ``walk`` (on the root's fd-based walk)."""

from __future__ import annotations

import errno
import os
import posixpath
import stat as st
from collections.abc import Callable, Iterator
from pathlib import PurePosixPath

from .._errors import EscapeError, contained_error
from .root import ViewEntry, ViewRoot

__all__ = ["resolve_in", "link_text", "copy_tree", "walk_rows"]

OnError = Callable[[OSError], None]
# realpath(strict=True) refuses a file with components after it from the
# releases that brought ALLOW_MISSING (3.11.13, 3.12.11, 3.13.4, 3.14)
_STRICT_NOTDIR = hasattr(posixpath, "ALLOW_MISSING")


class _LinkFrame:
    """A symlink being expanded: where to go back to if it leads out."""

    __slots__ = ("name_path", "stack_size")

    def __init__(self, name_path: list[str], stack_size: int) -> None:
        self.name_path, self.stack_size = name_path, stack_size


def _text(parts: list[str]) -> str:
    return "/".join(parts) or "."


def resolve_in(root: ViewRoot, path: PurePosixPath, *, strict: bool) -> str:
    """The canonical root-relative path of ``path``, component by component
    as ``os.path.realpath`` of Python 3.13 does it: ``..`` taken on what is
    resolved so far, a symlink's text followed (its loops kept as written
    unless ``strict``), a missing name kept with the rest appended unless
    ``strict``.  A link whose text leads out of the root is absent: kept
    as written (``EscapeError`` when ``strict``); a ``..`` of the spelling
    itself past the root is ``EscapeError``."""
    text = str(path)
    if path.is_absolute():
        raise EscapeError("an absolute path leads out of the root", text)
    # the unresolved components, last first; a _LinkFrame marks the end of
    # a link's text (its resolution is then recorded)
    stack: list[str | _LinkFrame] = list(reversed(path.parts))
    resolved: list[str] = []
    seen: dict[str, list[str] | None] = {}
    frames: list[_LinkFrame] = []
    absent: set[str] = set()
    while stack:
        item = stack.pop()
        if isinstance(item, _LinkFrame):
            frames.pop()
            seen[_text(item.name_path)] = list(resolved)
            continue
        if item in ("", "."):
            continue
        if item == "..":
            if resolved:
                resolved.pop()
                continue
            if strict or not frames:
                raise EscapeError("'..' leads out of the root", text)
            frame = frames.pop()  # the innermost link leads out: it is absent
            absent.add(_text(frame.name_path))
            del stack[frame.stack_size:]
            resolved = list(frame.name_path)
            continue
        candidate = resolved + [item]
        key = _text(candidate)
        remaining = any(isinstance(x, str) and x not in ("", ".") for x in stack)
        try:
            mode = root.stat(key, follow_symlinks=False).st_mode
            if not st.S_ISLNK(mode) or key in absent:
                if _STRICT_NOTDIR and strict and remaining and not st.S_ISDIR(mode) \
                        and not st.S_ISLNK(mode):
                    raise contained_error(errno.ENOTDIR, text, key)
                resolved = candidate
                continue
            if key in seen:
                known = seen[key]
                if known is not None:
                    resolved = list(known)
                    continue
                if strict:  # a loop
                    raise contained_error(errno.ELOOP, text, key)
                resolved = candidate
                continue
            target = root.readlink(key)
        except OSError:
            if strict:
                raise
            resolved = candidate
            continue
        if target.startswith("/"):
            if strict:
                raise EscapeError("a symlink leads out of the root", text, component=key)
            absent.add(key)
            resolved = candidate
            continue
        seen[key] = None
        frame = _LinkFrame(candidate, len(stack))
        stack.append(frame)
        frames.append(frame)
        stack.extend(reversed(target.split("/")))
    return _text(resolved)


def link_text(root: ViewRoot, link: PurePosixPath, target: PurePosixPath) -> str:
    """Symlink text that, read from ``link``'s directory, names ``target``
    (a root-relative path): up from the link's canonical directory to the
    root, then down ``target`` as written, less the components they share
    (real directories, so the shortcut is exact)."""
    if target.is_absolute():
        return str(target)
    here = root.realpath(link.parent).split("/") if str(link.parent) != "." else []
    here = [] if here == ["."] else here
    down = list(target.parts)
    shared = 0
    while shared < min(len(here), len(down)) and here[shared] == down[shared] \
            and down[shared] != "..":
        shared += 1
    parts = [".."] * (len(here) - shared) + down[shared:]
    return "/".join(parts) or "."


def walk_rows(root: ViewRoot, top: PurePosixPath, *, top_down: bool, on_error: OnError | None,
              follow_symlinks: bool
              ) -> Iterator[tuple[PurePosixPath, list[str], list[str]]]:
    """``Path.walk`` rows below ``top`` (as the caller spelled it): the
    root's fd-based walk when links are not followed; else a listing per
    directory through the root (in-root links followed as directories)."""
    report = on_error if on_error is not None else _ignore
    if follow_symlinks:
        yield from _walk_following(root, top, top_down, report)
        return
    try:
        canonical = root.realpath(top)
    except OSError as exc:
        report(exc)
        return
    prefix = "" if canonical == "." else canonical + "/"
    for dirpath, dirnames, filenames in root.walk(canonical, top_down, report):
        here = top if dirpath == canonical else top / dirpath[len(prefix):]
        yield here, dirnames, filenames


def _walk_following(root: ViewRoot, top: PurePosixPath, top_down: bool, report: OnError
                    ) -> Iterator[tuple[PurePosixPath, list[str], list[str]]]:
    pending: list[PurePosixPath | tuple[PurePosixPath, list[str], list[str]]] = [top]
    while pending:
        item = pending.pop()
        if isinstance(item, tuple):
            yield item
            continue
        try:
            entries = root.scandir(item)
        except OSError as exc:
            report(exc)
            continue
        dirnames: list[str] = []
        filenames: list[str] = []
        for entry in entries:
            (dirnames if _is_dir_as_spelled(root, item, entry) else filenames
             ).append(entry.name)
        if top_down:
            yield item, dirnames, filenames
        else:
            pending.append((item, dirnames, filenames))
        pending.extend(item / name for name in reversed(dirnames))


def _is_dir_as_spelled(root: ViewRoot, parent: PurePosixPath, entry: ViewEntry) -> bool:
    """A link is followed along the spelled path (its links counted, as
    ``os.scandir``'s entries count them), not from the listing's canonical
    directory."""
    try:
        if not entry.is_symlink():
            return entry.is_dir(follow_symlinks=False)
        return st.S_ISDIR(root.stat(parent / entry.name).st_mode)
    except (OSError, ValueError):
        return False


def _ignore(exc: OSError) -> None:
    """``Path.walk``'s default: an unreadable directory is skipped."""


def copy_tree(root: ViewRoot, src: PurePosixPath, dst: PurePosixPath, *,
              follow_symlinks: bool, preserve_metadata: bool) -> None:
    """``Path.copy``'s recursion, each step one root operation: a symlink
    (not followed) made again with its text, a directory made and its
    entries copied into it (its metadata once they are), a file copied by
    ``Root.copyfile`` (atomic at ``dst``).  The tree is walked with a list
    of steps, not by recursing: a tree deeper than Python's recursion limit
    is copied too."""
    # (source, destination, the directory's stat once its entries are copied)
    steps: list[tuple[PurePosixPath, PurePosixPath, os.stat_result | None]] = [(src, dst, None)]
    while steps:
        src, dst, finished = steps.pop()
        if finished is not None:
            _keep_metadata(root, dst, finished)
            continue
        info = root.stat(src, follow_symlinks=False)
        if st.S_ISLNK(info.st_mode) and not follow_symlinks:
            root.symlink(root.readlink(src), dst)
            if preserve_metadata:
                _keep_times(root, dst, info, follow=False)
            continue
        if st.S_ISLNK(info.st_mode):
            info = root.stat(src)
        if st.S_ISDIR(info.st_mode):
            names = root.listdir(src)
            root.mkdir(dst)
            if preserve_metadata:
                steps.append((src, dst, info))
            steps.extend((src / name, dst / name, None) for name in reversed(names))
            continue
        root.copyfile(src, dst)
        if preserve_metadata:
            _keep_metadata(root, dst, info)


def _keep_metadata(root: ViewRoot, dst: PurePosixPath, info: os.stat_result) -> None:
    root.chmod(dst, st.S_IMODE(info.st_mode))
    _keep_times(root, dst, info, follow=True)


def _keep_times(root: ViewRoot, dst: PurePosixPath, info: os.stat_result, *,
                follow: bool) -> None:
    root.utime(dst, ns=(info.st_atime_ns, info.st_mtime_ns), follow_symlinks=follow)
