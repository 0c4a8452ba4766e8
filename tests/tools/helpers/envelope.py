"""The contract's envelope, checked: what every tool call returns, success
or refusal, after a JSON round trip."""

from __future__ import annotations

import json
from typing import Any

CODES = {"INVALID_ARGUMENT", "NOT_FOUND", "OUTSIDE_ROOT", "ALREADY_EXISTS", "AMBIGUOUS", "STALE",
         "TOO_LARGE", "UNSUPPORTED", "DENIED", "INTERNAL"}
REFUSAL_KEYS = {"ok", "code", "message", "details", "hint", "suggestedTool", "suggestedArgs"}


def assert_valid_envelope(envelope: Any) -> dict[str, Any]:
    """The contract's shape, after a JSON round trip; returns the round-tripped copy."""
    assert isinstance(envelope, dict)
    text = json.dumps(envelope, allow_nan=False)
    copy = json.loads(text)
    assert copy == envelope, "the envelope does not survive a JSON round trip"
    assert isinstance(copy.get("ok"), bool)
    if copy["ok"]:
        return copy
    assert set(copy) <= REFUSAL_KEYS, set(copy) - REFUSAL_KEYS
    assert copy["code"] in CODES
    assert isinstance(copy["message"], str) and copy["message"]
    assert isinstance(copy["details"], dict)
    assert copy["details"].get("message") == copy["message"]
    assert isinstance(copy["hint"], str) and copy["hint"]
    assert ("suggestedTool" in copy) == ("suggestedArgs" in copy)
    if "suggestedTool" in copy:
        assert isinstance(copy["suggestedTool"], str)
        assert isinstance(copy["suggestedArgs"], dict)
    if copy["code"] == "INTERNAL":
        assert set(copy["details"]) == {"message"}
    return copy
