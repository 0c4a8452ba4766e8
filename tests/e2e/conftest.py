"""Fixtures for the end-to-end tests (helpers are in e2e_support.py)."""

from __future__ import annotations

from typing import Any

import pytest

from e2e_support import McpSession, RawClient


@pytest.fixture(scope="module")
def make_session():
    """A factory ``make_session(command, **kwargs) -> McpSession``; every
    session it made is closed at the end of the module."""
    made: list[McpSession] = []

    def make(command: list[str], **kwargs: Any) -> McpSession:
        session = McpSession(command, **kwargs)
        made.append(session)
        return session

    yield make
    for session in made:
        session.close()


@pytest.fixture
def make_raw():
    """A factory ``make_raw(command, **kwargs) -> RawClient``; each is closed
    (stdin shut, process awaited) at the end of the test."""
    made: list[RawClient] = []

    def make(command: list[str], **kwargs: Any) -> RawClient:
        client = RawClient(command, **kwargs)
        made.append(client)
        return client

    yield make
    for client in made:
        client.close()
