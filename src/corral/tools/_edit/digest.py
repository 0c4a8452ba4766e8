"""The sha256 a model reads and sends back as ``expectedSha256``.

What a model is shown carries the first 16 hex digits of a file's sha256
(:func:`corral.hosts.short_digest`); envelopes carry all 64.  Either is
accepted back: what is sent is checked as a prefix of the file's full
digest, so a short form is as exact as the 64 bits it holds, and anything
shorter than 16 digits is refused by the argument check.
"""

from __future__ import annotations

from typing import Any

__all__ = ["EXPECTED_DIGEST", "MIN_DIGEST_CHARS", "expected_digest", "digest_matches"]

MIN_DIGEST_CHARS = 16

#: The argument's schema: 16 to 64 hex digits.
EXPECTED_DIGEST: dict[str, Any] = {
    "type": "string", "minLength": MIN_DIGEST_CHARS, "maxLength": 64,
    "pattern": f"^[0-9a-fA-F]{{{MIN_DIGEST_CHARS},64}}$",
    "x-format": "16 to 64 hexadecimal digits of a sha256 (as read_file shows it)",
}


def expected_digest(args: dict[str, Any]) -> str | None:
    """``expectedSha256`` from checked arguments, lower-cased (or ``None``)."""
    value = args.get("expectedSha256")
    return None if value is None else str(value).lower()


def digest_matches(expected: str, digest: str) -> bool:
    """Whether ``expected`` (16 to 64 hex digits, lower case) names ``digest``."""
    return len(expected) >= MIN_DIGEST_CHARS and digest.startswith(expected)
