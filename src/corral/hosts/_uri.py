"""One reading of ``file://`` URIs, for every place a host may send one (a
tool's path argument, a workspace path, an MCP client's roots)."""

from __future__ import annotations

from urllib.parse import unquote, urlsplit

__all__ = ["file_uri_path"]


def file_uri_path(uri: str) -> str | None:
    """The local path a ``file:`` URI names (``file:///a%20b`` -> ``/a b``),
    as it is spelled (not normalised), or ``None`` for anything else:
    another scheme or host, no absolute path, a URI that does not parse."""
    try:
        parts = urlsplit(uri)
    except ValueError:
        return None
    if parts.scheme.lower() != "file" or parts.netloc not in ("", "localhost"):
        return None
    if not parts.path.startswith("/"):
        return None
    return unquote(parts.path, errors="surrogateescape")
