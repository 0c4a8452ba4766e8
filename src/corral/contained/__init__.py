"""corral.contained: the capability core.

A :class:`Root` is an open directory fd; every path is resolved beneath it
with dirfd system calls, so no ``..``, symlink, absolute path or concurrent
rename reaches outside.  This package raises ``OSError`` subclasses only and
knows nothing of refusals, JSON or models; it is usable alone.
"""

from ._backend import (Backend, OsBackend, available_backends, backend_by_name, backend_report,
                       default_backend, fd_capabilities)
from ._errors import (ContainedError, EscapeError, InvalidPathError, RootVanishedError,
                      SpecialFileError, StaleError, SymlinkError)
from ._extract import (Extraction, ExtractLimits, ExtractProgress, ExtractReason, ExtractStop,
                       Landed, Refused)
from ._handle import DirEntry, Handle
from ._listing import SizedListing
from ._pathview import RootPath
from ._replace import TargetChangedError
from ._resolve import MAX_SYMLINKS
from ._root import Root
from ._target import Target

__all__ = [
    "Root",
    "Handle",
    "Target",
    "DirEntry",
    "SizedListing",
    "ContainedError",
    "EscapeError",
    "InvalidPathError",
    "RootVanishedError",
    "SpecialFileError",
    "SymlinkError",
    "StaleError",
    "Backend",
    "OsBackend",
    "available_backends",
    "backend_by_name",
    "backend_report",
    "default_backend",
    "fd_capabilities",
    "MAX_SYMLINKS",
    "RootPath",
    "Extraction",
    "ExtractReason",
    "ExtractLimits",
    "ExtractProgress",
    "ExtractStop",
    "Landed",
    "Refused",
    "TargetChangedError",
]

from .._public import publish as _publish  # last: every name is bound

_publish(__name__, globals(), __all__)
