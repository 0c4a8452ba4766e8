"""Git work trees for fixtures whose .gitignore files must apply: outside
a work tree none does, as in git and ripgrep."""

from __future__ import annotations

from pathlib import Path

__all__ = ["make_repository"]


def make_repository(top: Path) -> Path:
    """A git work tree at ``top`` in git's minimal layout (``.git/HEAD``,
    ``objects/``, ``refs/``: what ``git rev-parse`` accepts); ``top``."""
    git = top / ".git"
    for sub in ("objects", "refs/heads"):
        (git / sub).mkdir(parents=True, exist_ok=True)
    if not (git / "HEAD").exists():
        (git / "HEAD").write_text("ref: refs/heads/main\n")
    return top
