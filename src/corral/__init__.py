"""corral: a capability-secured filesystem layer for Python.

Two layers, data flowing one way:

* :mod:`corral.contained`: :class:`Root`, an open directory beneath which
  every path is resolved (``OSError`` subclasses only).
* :mod:`corral.tools`: coding-agent file tools over a ``Root`` whose every
  refusal is typed and says what to do next.
"""

from .contained import (ContainedError, EscapeError, InvalidPathError, Root, RootVanishedError,
                        SpecialFileError, SymlinkError)

__version__ = "0.1.0"

__all__ = [
    "Root",
    "ContainedError",
    "EscapeError",
    "InvalidPathError",
    "RootVanishedError",
    "SpecialFileError",
    "SymlinkError",
    "__version__",
]
