"""A write tool's two steps compared on twin trees: what a tree holds, and
the file the call acts on, built the same way on each twin."""

from __future__ import annotations

import os
import stat
from collections.abc import Callable
from pathlib import Path
from typing import Any

from corral.tools import Toolbox


def snapshot(top: Path) -> dict[str, tuple[Any, ...]]:
    """Every entry under ``top``: its kind, mode, bytes and xattr names."""
    out = {}
    for dirpath, dirs, files in os.walk(top):
        for name in dirs + files:
            path = Path(dirpath) / name
            info = path.lstat()
            regular = stat.S_ISREG(info.st_mode)
            out[str(path.relative_to(top))] = (
                stat.S_IFMT(info.st_mode), stat.S_IMODE(info.st_mode),
                path.read_bytes() if regular else None,
                sorted(os.listxattr(path, follow_symlinks=False)) if regular else None)
    return out


def build(top: Path, place: str, data: bytes, mode: int, xattr: bool) -> None:
    """The file at ``place`` (``data``, ``mode``, an xattr if asked), and
    ``other.txt`` at the top."""
    f = top / place
    f.parent.mkdir(parents=True, exist_ok=True)
    f.write_bytes(data)
    os.chmod(f, mode)
    (top / "other.txt").write_text("other\n")
    if xattr:
        try:
            os.setxattr(f, "user.corral-test", b"v")
        except OSError:
            pass  # no user xattrs here: both twins alike


def fast(box: Toolbox) -> bool:
    """Whether the box's root resolves with openat2 (the plain steps' condition)."""
    return bool(box.root.info()["fast_path"])


def recording(step: Callable[..., Any], made: list[bool]) -> Callable[..., Any]:
    """``step`` (a step that answers ``None`` where it does not make the
    call), each call's whether it made it appended to ``made``."""
    def spy(*args: Any) -> Any:
        done = step(*args)
        made.append(done is not None)
        return done
    return spy


def acted(box: Toolbox, top: Path, place: str, tool: str,
          args: dict[str, Any]) -> tuple[dict[str, Any], dict[str, tuple[Any, ...]], bool]:
    """``tool``'s answer to ``args`` acting on the file at ``place``, the
    tree after, and whether the file was replaced (its inode number new:
    the old file is kept open meanwhile, so its number is not reused)."""
    held = os.open(top / place, os.O_RDONLY)
    try:
        before = os.fstat(held).st_ino
        answer = box.call(tool, args)
        return answer, snapshot(top), (top / place).stat().st_ino != before
    finally:
        os.close(held)
