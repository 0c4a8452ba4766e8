"""corral's MCP front end: the tools of a Workspace over stdio.

It speaks the Model Context Protocol itself, with the standard library
only: JSON-RPC 2.0, one message per line; protocol versions 2024-11-05,
2025-03-26, 2025-06-18 and 2025-11-25 (the client's if it is one of them,
else the newest); ``initialize``, ``ping``, ``tools/list``, ``tools/call``,
``logging/setLevel``; ``notifications/cancelled``, progress for clients that
send a ``progressToken``, log messages, and the client's ``roots``.

Layers, each testable alone: :mod:`._wire` (framing, no I/O),
:mod:`._session` (the protocol state machine, no I/O), :mod:`._catalog`
(the tool listing per version), :mod:`._scheduler` (call ordering) and
:mod:`._server` (the stdio loop and the worker threads).  Like every front
end it only serializes: the tools decide everything.
"""

from collections.abc import Callable

from ..tools import Workspace
from ._catalog import LATEST, PROTOCOL_VERSIONS
from ._server import DEFAULT_MAX_LINE_BYTES, DEFAULT_WORKERS, StdioServer, serve_stdio

__all__ = ["serve", "StdioServer", "PROTOCOL_VERSIONS", "LATEST", "DEFAULT_MAX_LINE_BYTES",
           "DEFAULT_WORKERS"]


def serve(workspace: Workspace, *, max_line_bytes: int = DEFAULT_MAX_LINE_BYTES,
          workers: int = DEFAULT_WORKERS, warm: Callable[[], None] | None = None) -> None:
    """Serve ``workspace`` (a :class:`~corral.tools.Workspace`) on this
    process's stdin and stdout until stdin closes; ``warm``: work the
    ``initialize`` answer need not wait for, done right after it (e.g.
    :meth:`~corral.tools.Toolbox.load_tools` of toolboxes made with
    ``defer_tools``)."""
    from .. import __version__

    serve_stdio(workspace, version=__version__, max_line_bytes=max_line_bytes, workers=workers,
                warm=warm)
