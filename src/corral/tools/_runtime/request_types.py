"""What a host is asked before a tool acts: one typed request per operation.

Every request names root-relative paths only.  A host's ``authorize``
callable receives one of these and returns ``None`` or ``True`` to allow,
``False`` to deny, or raises :class:`Denied` with a reason the model will
read.  Any other answer denies (and says the callback misbehaved); any other
exception fails closed (``INTERNAL``).

Whether a request mutates is not said here: the :class:`~corral.tools.ToolSpec`
that asks it declares it (:func:`declare`), so it has one source.
"""

from __future__ import annotations

from dataclasses import dataclass, field
import threading
from typing import ClassVar
from collections.abc import Callable

__all__ = ["Denied", "Request", "ReadRequest", "WriteRequest", "EditRequest", "ListRequest",
           "TreeRequest", "GlobRequest", "GrepRequest", "MoveRequest", "DeleteRequest",
           "InfoRequest", "MakeDirectoryRequest", "Authorizer", "declare"]

_mutating: dict[type[Request], bool] = {}
_guard = threading.Lock()


def declare(request: type[Request], mutates: bool) -> None:
    """Record that tools asking ``request`` do (or do not) change files; a
    request class two specs describe differently is a programming error."""
    with _guard:
        before = _mutating.setdefault(request, mutates)
    if before != mutates:
        raise TypeError(f"{request.__name__} is declared both mutating and not")


class Denied(Exception):
    """Raised by a host's ``authorize`` to refuse with a reason (shown to the model)."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


@dataclass(frozen=True)
class Request:
    """An operation a tool asks ``authorize`` to allow, on ``path`` (root-relative)."""

    operation: ClassVar[str] = ""
    path: str

    @property
    def mutates(self) -> bool:
        """From the tool spec that asks this request; a request no spec
        declares counts as mutating (a read-only root refuses it)."""
        return _mutating.get(type(self), True)


@dataclass(frozen=True)
class ReadRequest(Request):
    """read_file (or read_files) asks to read the file at ``path``."""

    operation: ClassVar[str] = "read"


@dataclass(frozen=True)
class ListRequest(Request):
    """list_directory asks to list the directory at ``path``."""

    operation: ClassVar[str] = "list"


@dataclass(frozen=True)
class TreeRequest(ListRequest):
    """A tree listing of ``path``, ``depth`` levels deep."""

    depth: int = 1
    include_ignored: bool = False


@dataclass(frozen=True)
class InfoRequest(ReadRequest):
    """file_info asks to read an entry's metadata (a kind of read)."""

    operation: ClassVar[str] = "inspect"


@dataclass(frozen=True)
class GlobRequest(Request):
    """glob asks to find the paths under ``path`` that match ``pattern``."""

    operation: ClassVar[str] = "glob"
    pattern: str = ""


@dataclass(frozen=True)
class GrepRequest(Request):
    """grep asks to search the files under ``path`` for ``pattern``."""

    operation: ClassVar[str] = "grep"
    pattern: str = ""


@dataclass(frozen=True)
class WriteRequest(Request):
    """``creates_directories`` (canonical, outermost first) are created only
    after this is allowed; a long list is cut to its outermost entries and
    ``creates_omitted`` says how many more (each one left out lies inside
    the last one listed, on the way to ``path``)."""

    operation: ClassVar[str] = "write"
    bytes: int = 0
    sha256: str = ""
    overwrite: bool = False
    existing_sha256: str | None = None  # the file being replaced, if any
    creates_directories: tuple[str, ...] = field(default_factory=tuple)
    creates_omitted: int = 0


@dataclass(frozen=True)
class EditRequest(Request):
    """edit_file asks to change the file at ``path`` (before and after by hash, and the diff)."""

    operation: ClassVar[str] = "edit"
    base_sha256: str = ""
    result_sha256: str = ""
    result_bytes: int = 0
    replacements: int = 0
    diff: str = ""
    dry_run: bool = False


@dataclass(frozen=True)
class MoveRequest(Request):
    """``path`` is the source; ``creates_directories`` and
    ``creates_omitted`` as in :class:`WriteRequest`."""

    operation: ClassVar[str] = "move"
    destination: str = ""
    overwrite: bool = False
    kind: str = "file"
    creates_directories: tuple[str, ...] = field(default_factory=tuple)
    creates_omitted: int = 0


@dataclass(frozen=True)
class DeleteRequest(Request):
    """delete_file asks to remove the ``kind`` of entry at ``path``."""

    operation: ClassVar[str] = "delete"
    kind: str = "file"
    sha256: str | None = None


@dataclass(frozen=True)
class MakeDirectoryRequest(Request):
    """``creates_directories``: canonical root-relative paths, outermost
    first, created only after this is allowed (empty: it exists); a long
    list is cut to its outermost entries and ``creates_omitted`` says how
    many more (each inside the last one listed, on the way to ``path``)."""

    operation: ClassVar[str] = "mkdir"
    creates_directories: tuple[str, ...] = field(default_factory=tuple)
    creates_omitted: int = 0


Authorizer = Callable[[Request], "bool | None"]
"""``authorize(request)``: ``None``/``True`` allow, ``False`` denies; any
other answer (``0``, ``""``, ``"no"``...) denies too, as a misbehaving host."""
