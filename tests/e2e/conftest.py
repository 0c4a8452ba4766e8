"""Fixtures the end-to-end tests share (their helpers are in helpers.py)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, TypeVar

import pytest

from .helpers import McpSession, RawClient

Client = TypeVar("Client", McpSession, RawClient)


def _made(kind: Callable[..., Client]) -> Iterator[Callable[..., Client]]:
    """A factory of ``kind`` clients, each closed when the fixture ends."""
    made: list[Client] = []

    def make(command: list[str], **kwargs: Any) -> Client:
        client = kind(command, **kwargs)
        made.append(client)
        return client

    yield make
    for client in made:
        client.close()


@pytest.fixture(scope="module")
def make_session():
    """``make_session(command, **kwargs) -> McpSession`` (an SDK client);
    every session it made is closed at the end of the module."""
    yield from _made(McpSession)


@pytest.fixture
def make_raw():
    """``make_raw(command, **kwargs) -> RawClient``; each is closed (stdin
    shut, process awaited) at the end of the test."""
    yield from _made(RawClient)


@pytest.fixture
def notes_root(tmp_path: Path) -> Path:
    """A root holding only ``notes.txt`` ("hello"), for tests of the
    server's protocol and life cycle rather than of the tools."""
    (tmp_path / "notes.txt").write_text("hello\n")
    return tmp_path
