"""Fixtures for the end-to-end tests (helpers are in e2e_support.py)."""

from __future__ import annotations

from typing import Any

import pytest

from e2e_support import McpSession


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
