"""A repository whose pre-commit hook runs a given shell line, and the
answer a refused write of what that line runs must be."""

from __future__ import annotations

from pathlib import Path
from typing import Any


def repository_with_hook(base: Path, hook: str) -> None:
    """A work tree at ``base`` whose ``.git/hooks/pre-commit`` runs ``hook``."""
    for sub in ("hooks", "objects", "refs"):
        (base / ".git" / sub).mkdir(parents=True, exist_ok=True)
    (base / ".git" / "HEAD").write_text("ref: refs/heads/main\n")
    (base / ".git" / "config").write_text("[core]\n\tbare = false\n")
    (base / ".git" / "hooks" / "pre-commit").write_text("#!/bin/sh\nset -e\n" + hook + "\n")


def refused_protected(answer: dict[str, Any]) -> bool:
    """Whether ``answer`` refuses the call as touching a protected name."""
    return answer["ok"] is False and answer["code"] == "DENIED" \
        and answer["details"].get("kind") == "protected"
