"""corral.tools: coding-agent file tools with typed refusals.

``Toolbox(root).call(name, args)`` runs one of ``read_file``, ``write_file``,
``edit_file``, ``list_directory``, ``glob``, ``grep``, ``move_file``,
``delete_file`` and returns a JSON-ready envelope: ``{"ok": true, ...}`` or a
refusal ``{"ok": false, "code", "message", "details", "hint",
["suggestedTool", "suggestedArgs"]}``.  Every refusal is typed and tells a
model what to do next; a cause without a case is ``INTERNAL`` and says
nothing of the host.  Every call is bounded (``timeout``, ``cancel``) and
``await toolbox.acall(...)`` runs one off the event loop.
"""

import importlib
from typing import TYPE_CHECKING, Any

from ._runtime.control import CancelToken, Progress
from ..hosts import strict_schema
from ._runtime.definitions import definition, offered_specs, tool_definitions
from ._runtime.limits import Limits
from ._policy.rules import Policy
from ._refusals.catalogue import Code, Kind, Refusal
from ._runtime.registry import TOOL_MODULES, Editing, Suggests, ToolSpec
from ._runtime.request_types import (InfoRequest, MakeDirectoryRequest, TreeRequest, Authorizer,
                                     DeleteRequest, Denied, EditRequest, GlobRequest, GrepRequest,
                                     ListRequest, MoveRequest, ReadRequest, Request, WriteRequest)
from ._runtime.toolbox import Toolbox
from ._runtime.workspace import Opener, Workspace

if TYPE_CHECKING:
    from ._patch import v4a_patch
    from ._search.engine import engine_report

TOOL_NAMES = TOOL_MODULES

# imported at their first use: the patch format's code and the search
# engine's are a tool's, which a server imports at its first call
_LATER = {"v4a_patch": "._patch", "engine_report": "._search.engine"}

__all__ = [
    "Toolbox",
    "Workspace",
    "Limits",
    "Policy",
    "CancelToken",
    "Progress",
    "Code",
    "Kind",
    "Refusal",
    "Denied",
    "Request",
    "ReadRequest",
    "WriteRequest",
    "EditRequest",
    "ListRequest",
    "GlobRequest",
    "GrepRequest",
    "MoveRequest",
    "DeleteRequest",
    "InfoRequest",
    "MakeDirectoryRequest",
    "TreeRequest",
    "ToolSpec",
    "Suggests",
    "TOOL_NAMES",
    "Authorizer",
    "tool_definitions",
    "strict_schema",
    "definition",
    "offered_specs",
    "Opener",
    "Editing",
    "v4a_patch",
    "engine_report",
]

from .._public import publish as _publish  # noqa: E402  (last: every name is bound)

_publish(__name__, globals(), [name for name in __all__ if name not in _LATER])


def __getattr__(name: str) -> Any:
    where = _LATER.get(name)
    if where is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(where, __name__), name)
    _publish(__name__, {name: value}, (name,))
    globals()[name] = value
    return value
