"""corral.contained: the capability core.

A :class:`Root` is an open directory fd; every path is resolved beneath it
with dirfd system calls, so no ``..``, symlink, absolute path or concurrent
rename reaches outside.  This package raises ``OSError`` subclasses only and
knows nothing of refusals, JSON or models; it is usable alone.
"""

from typing import TYPE_CHECKING, Any

from ._backend import (Backend, DirEntries, FileScan, OsBackend, ScanStatus, TextWindow,
                       _under_pyfakefs, fd_capabilities)
from ._select import available_backends, backend_by_name, backend_report, default_backend
from ._errors import (ContainedError, EscapeError, HardLinkError, InvalidPathError, PathError,
                      RootVanishedError, SpecialFileError, StaleError, SymlinkError)
from ._handle import DirEntry, Handle
from ._listing import SizedListing
from ._rootpath.view import RootPath
from ._replace import (TEMP_SUFFIX, HeldParent, TargetChangedError, is_temp_name,
                       without_temp_names)
from ._resolve import MAX_SYMLINKS, ST_NOSYMFOLLOW
from ._root import Root
from ._target import Opened, Target
from ._tree import Tree, TreeStats, TreeVisitor, adopt_entry, batches_natively, open_entry

if TYPE_CHECKING:
    from ._ops.extract import (Extraction, ExtractLimits, ExtractProgress, ExtractReason,
                               ExtractStop, Landed, Refused)

__all__ = [
    "Root",
    "Handle",
    "Target",
    "Opened",
    "HeldParent",
    "is_temp_name",
    "TEMP_SUFFIX",
    "without_temp_names",
    "DirEntry",
    "SizedListing",
    "PathError",
    "ContainedError",
    "EscapeError",
    "InvalidPathError",
    "RootVanishedError",
    "SpecialFileError",
    "SymlinkError",
    "StaleError",
    "HardLinkError",
    "Backend",
    "FileScan",
    "ScanStatus",
    "TextWindow",
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
    "DirEntries",
    "ST_NOSYMFOLLOW",
    "under_pyfakefs",
    "Tree",
    "TreeStats",
    "TreeVisitor",
    "open_entry",
    "adopt_entry",
    "batches_natively",
]


def under_pyfakefs() -> bool:
    """Whether pyfakefs has replaced ``os`` (a fake fd must then never reach a
    real system call); for backends written outside this package."""
    return _under_pyfakefs()

# Extraction's names are bound when first asked for: tarfile and zipfile
# come with them, and most programs (corral serve) never extract.
_EXTRACTION = ("Extraction", "ExtractReason", "ExtractLimits", "ExtractProgress", "ExtractStop",
               "Landed", "Refused")


def __getattr__(name: str) -> Any:
    if name not in _EXTRACTION:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    from ._ops import extract

    bound = {each: getattr(extract, each) for each in _EXTRACTION}
    _publish(__name__, bound, _EXTRACTION)
    globals().update(bound)
    return bound[name]


from .._public import publish as _publish  # noqa: E402  (last: every name is bound)

_publish(__name__, globals(), [name for name in __all__ if name not in _EXTRACTION])
