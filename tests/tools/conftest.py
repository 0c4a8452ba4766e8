"""Fixtures the tools tests share."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

import corral.tools._read.cache as read_cache
from corral.tools import Toolbox


@pytest.fixture
def make_toolbox(make_root: Callable[..., Any]) -> Callable[..., Toolbox]:
    """``make_toolbox(path, **options)``: a Toolbox over ``make_root(path)``,
    so the test runs on every backend config."""
    def make(path: Path, **options: Any) -> Toolbox:
        return Toolbox(make_root(path), **options)
    return make


@pytest.fixture
def settled(monkeypatch: pytest.MonkeyPatch) -> None:
    """Reads begin 'later' than the file's stamps by more than a granule, so
    the read cache may trust a file's stamps (no racy-clean window)."""
    monkeypatch.setattr(read_cache, "started",
                        lambda: read_cache.time.time_ns() + 10 * read_cache.RACY_NS)
