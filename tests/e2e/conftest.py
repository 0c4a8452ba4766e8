"""Fixtures the end-to-end tests share (their helpers are in helpers.py)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
import signal
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


@pytest.fixture
def signals_as_a_terminal_leaves_them() -> Iterator[None]:
    """SIGINT and SIGHUP as a terminal's shell leaves them, for the servers
    a test starts: under ``nohup``, or as a background job of a shell
    without job control, this process ignores them, its children inherit
    that, and a server rightly keeps ignoring them."""
    wanted = {signal.SIGINT: signal.default_int_handler, signal.SIGHUP: signal.SIG_DFL}
    previous = {signum: signal.getsignal(signum) for signum in wanted}
    for signum, handler in wanted.items():
        if previous[signum] is signal.SIG_IGN:
            signal.signal(signum, handler)
    try:
        yield
    finally:
        for signum, handler in previous.items():
            if handler is not None:
                signal.signal(signum, handler)
