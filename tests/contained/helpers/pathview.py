"""The tree the RootPath tests share, built on the host (the shape of the
fixture tree of CPython's concrete-path tests), and a helper that turns the
host ``pathlib`` answers into root-relative text to compare with RootPath's.

    brokenLink -> non-existing      dirA/linkC -> ../dirB
    brokenLinkLoop -> brokenLinkLoop
    dirB/fileB, dirB/linkD -> ../dirB
    dirC/fileC, dirC/novel.txt, dirC/dirD/fileD
    dirE/ (empty)                   fileA ("this is file A\\n")
    linkA -> fileA                  linkB -> dirB

No link leads out of the tree, so host pathlib on it is the oracle.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path, PurePosixPath


def build(base: Path) -> None:
    for d in ("dirA", "dirB", "dirC/dirD", "dirE"):
        (base / d).mkdir(parents=True)
    (base / "fileA").write_bytes(b"this is file A\n")
    (base / "dirB" / "fileB").write_bytes(b"this is file B\n")
    (base / "dirC" / "fileC").write_bytes(b"this is file C\n")
    (base / "dirC" / "novel.txt").write_bytes(b"this is a novel\n")
    (base / "dirC" / "dirD" / "fileD").write_bytes(b"this is file D\n")
    os.symlink("fileA", base / "linkA")
    os.symlink("non-existing", base / "brokenLink")
    os.symlink("dirB", base / "linkB")
    os.symlink("../dirB", base / "dirA" / "linkC")
    os.symlink("../dirB", base / "dirB" / "linkD")
    os.symlink("brokenLinkLoop", base / "brokenLinkLoop")


def rel(base: Path, paths: Iterable[Path]) -> list[str]:
    """Host paths as sorted root-relative text."""
    return sorted(str(PurePosixPath(p.relative_to(base))) for p in paths)


def ours(paths: Iterable[object]) -> list[str]:
    return sorted(str(p) for p in paths)


def host_walk(top: Path, top_down: bool = True, follow_symlinks: bool = False):
    """``Path.walk`` of the host (3.12+), or the same rules on 3.11, which
    has none (``os.walk`` lists a link to a directory among the
    directories; ``Path.walk`` among the files unless it follows links)."""
    if hasattr(Path, "walk"):
        yield from top.walk(top_down=top_down, follow_symlinks=follow_symlinks)
        return
    try:
        entries = list(os.scandir(top))
    except OSError:
        return
    dirs = [e.name for e in entries if _is_dir(e, follow_symlinks)]
    files = [e.name for e in entries if not _is_dir(e, follow_symlinks)]
    if top_down:
        yield top, dirs, files
    for name in dirs:
        yield from host_walk(top / name, top_down, follow_symlinks)
    if not top_down:
        yield top, dirs, files


def _is_dir(entry: os.DirEntry[str], follow: bool) -> bool:
    try:
        return entry.is_dir(follow_symlinks=follow)
    except OSError:
        return False
