"""Helpers for testing code that embeds corral.

Two parts:

* :mod:`corral.testing.strategies`: Hypothesis strategies that generate
  hostile paths, symlink targets and trees.  Importing it needs
  ``hypothesis`` (``pip install corral[testing]``); corral itself never
  imports it.
* this module (no third-party imports): :func:`build_tree`, which makes a
  tree drawn from :func:`corral.testing.strategies.trees` on disk, and
  :func:`snapshot` / :func:`changes`, which prove that nothing outside a
  root was created, changed or deleted.

A typical property test of one's own use of a :class:`corral.contained.Root`::

    from hypothesis import given
    from corral.testing import build_tree, changes, snapshot
    from corral.testing.strategies import paths, trees

    @given(tree=trees(absolute=("@BASE@/outside",)), path=paths())
    def test_my_extractor_stays_inside(tree, path):
        with tempfile.TemporaryDirectory() as base:
            os.mkdir(f"{base}/root"); os.mkdir(f"{base}/outside")
            build_tree(f"{base}/root", tree, tokens={"@BASE@": base})
            before = snapshot(base, exclude=("root",))
            my_code(Root(f"{base}/root"), path)        # may raise OSError
            assert changes(before, snapshot(base, exclude=("root",))) == []
"""

from __future__ import annotations

import errno
import hashlib
import os
import stat as st
from typing import Any, NamedTuple
from collections.abc import Iterable, Mapping, Sequence

__all__ = ["TreeEntry", "build_tree", "render", "snapshot", "changes"]

# a generated entry that cannot be made (name taken, parent missing or not a
# directory, name too long or invalid) is skipped, not an error
_UNMAKEABLE = {errno.EEXIST, errno.ENOENT, errno.ENOTDIR, errno.ENAMETOOLONG, errno.EINVAL}


class TreeEntry(NamedTuple):
    """One entry of a generated tree: ``kind`` is ``"dir"``, ``"file"``,
    ``"symlink"`` or ``"fifo"``; ``path`` is relative to the tree's top;
    ``target`` is the link text (symlinks) or the content (files)."""

    kind: str
    path: str
    target: str = ""


def render(text: str, tokens: Mapping[str, str] | None) -> str:
    """``text`` with each token (e.g. ``"@BASE@"``) replaced by its value.

    Strategies cannot know the temporary directory a test will use, so
    absolute prefixes and link targets are written with tokens and rendered
    once the directory exists."""
    if tokens:
        for token, value in tokens.items():
            text = text.replace(token, value)
    return text


def build_tree(top: str | os.PathLike[str], entries: Iterable[TreeEntry], *,
               tokens: Mapping[str, str] | None = None) -> list[TreeEntry]:
    """Create ``entries`` under the existing directory ``top``, in order.

    Uses plain ``os`` calls on paths *this function builds from ``top``*: it
    is meant for trusted, freshly made temporary directories.  An entry whose
    parent is missing, is not a real directory, or whose name is taken is
    skipped (generated trees are not always consistent); the entries actually
    made are returned.  Symlink targets are rendered with ``tokens``.
    """
    top = os.fspath(top)
    made = []
    for entry in entries:
        parts = entry.path.split("/")
        name = parts[-1]
        if not name or name in (".", "..") or "\x00" in entry.path:
            continue
        try:
            # never create below a symlink: the builder itself must not escape
            if not all(st.S_ISDIR(os.lstat(os.path.join(top, *parts[:i])).st_mode)
                       for i in range(1, len(parts))):
                continue
            full = os.path.join(top, *parts)
            if entry.kind == "dir":
                os.mkdir(full)
            elif entry.kind == "file":
                fd = os.open(full, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o644)
                try:
                    os.write(fd, entry.target.encode("utf-8", "surrogateescape"))
                finally:
                    os.close(fd)
            elif entry.kind == "symlink":
                os.symlink(render(entry.target, tokens), full)
            elif entry.kind == "fifo":
                os.mkfifo(full)
            else:
                raise ValueError(f"unknown entry kind {entry.kind!r}")
        except OSError as exc:
            if exc.errno in _UNMAKEABLE:
                continue
            raise
        made.append(entry)
    return made


def snapshot(top: str | os.PathLike[str], *, exclude: Sequence[str] = (),
             contents: bool = True) -> dict[str, tuple[Any, ...]]:
    """Everything below ``top`` (not ``top`` itself), without following links.

    Maps each root-relative path to ``(kind, mode, identity, size,
    mtime_ns, detail)`` where ``identity`` is ``(st_dev, st_ino)`` and
    ``detail`` is a file's SHA-256 (when ``contents``) or a link's text.
    Paths in ``exclude`` (relative to ``top``) are skipped with everything
    below them.  Compare two snapshots with :func:`changes`.
    """
    top = os.fspath(top)
    skip = {os.path.normpath(p) for p in exclude}
    out: dict[str, tuple[Any, ...]] = {}
    stack = [""]
    while stack:
        rel = stack.pop()
        try:
            names = os.listdir(os.path.join(top, rel) if rel else top)
        except OSError as exc:
            out[rel or "."] = ("unlistable", exc.errno)
            continue
        for name in names:
            child = f"{rel}/{name}" if rel else name
            if child in skip:
                continue
            full = os.path.join(top, child)
            info = os.lstat(full)
            kind = st.S_IFMT(info.st_mode)
            detail: object = None
            if kind == st.S_IFLNK:
                detail = os.readlink(full)
            elif kind == st.S_IFREG and contents:
                with open(full, "rb") as fh:
                    detail = hashlib.sha256(fh.read()).hexdigest()
            elif kind == st.S_IFDIR:
                stack.append(child)
            out[child] = (kind, st.S_IMODE(info.st_mode), (info.st_dev, info.st_ino),
                          info.st_size, info.st_mtime_ns, detail)
    return out


def changes(before: Mapping[str, tuple[Any, ...]],
            after: Mapping[str, tuple[Any, ...]]) -> list[str]:
    """Human-readable differences between two :func:`snapshot` results
    (``[]`` when nothing changed)."""
    out = []
    for path in sorted(before.keys() - after.keys()):
        out.append(f"deleted: {path}")
    for path in sorted(after.keys() - before.keys()):
        out.append(f"created: {path}")
    for path in sorted(before.keys() & after.keys()):
        if before[path] != after[path]:
            out.append(f"changed: {path}: {before[path]} -> {after[path]}")
    return out
