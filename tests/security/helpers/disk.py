"""What a tree holds, read straight from the disk (no corral call), to
compare an answer's claims with: every entry below ``base`` as
``(path, "link", its text)``, ``(path, "dir")`` or ``(path, "file", its text)``,
sorted."""

from __future__ import annotations

import os
from pathlib import Path


def entries(base: Path) -> list[tuple[str, ...]]:
    found: list[tuple[str, ...]] = []
    for top, dirs, files in os.walk(base):
        for name in dirs + files:
            path = os.path.join(top, name)
            rel = os.path.relpath(path, base)
            if os.path.islink(path):
                found.append((rel, "link", os.readlink(path)))
            elif os.path.isdir(path):
                found.append((rel, "dir"))
            else:
                found.append((rel, "file", Path(path).read_text()))
    return sorted(found)
