"""Errors raised by the contained core.

Everything here is an ``OSError``: code that already catches ``OSError`` keeps
working, and ``errno`` is always a real errno value.  Ordinary failures (a
missing file, a file where a directory was needed, ...) are raised as the
built-in subclass ``OSError`` picks for the errno (``FileNotFoundError``,
``NotADirectoryError``, ...), made by :func:`contained_error`.  The classes
below are for what only a contained root can say.  Every one of them is a
:class:`PathError`, which declares ``component``.

Every error carries two root-relative strings: ``filename`` is the path the
caller gave, and ``component`` is the prefix of it (after following in-root
symlinks) at which resolution stopped: for ``src/utl/x.py`` with ``src/utl``
missing, ``component`` is ``"src/utl"``.  Neither ever names a host path.
"""

from __future__ import annotations

import errno as _errno
import os
from typing import Any

__all__ = [
    "PathError",
    "ContainedError",
    "EscapeError",
    "RootVanishedError",
    "InvalidPathError",
    "SpecialFileError",
    "SymlinkError",
    "StaleError",
    "HardLinkError",
    "contained_error",
    "refuse_hard_linked",
]


class PathError(OSError):
    """An ``OSError`` the core raised for a path beneath a root: ``component``
    is where resolution stopped (see the module docstring), ``None`` when
    that is not known.  ``FileNotFoundError`` and its kin from the core are
    instances too (:func:`contained_error`).  ``passed``: the canonical
    places resolution went through before it stopped (as
    :class:`EscapeError`'s), where a walk knows them."""

    component: str | None = None
    passed: tuple[str, ...] = ()


class ContainedError(PathError):
    """Base of the errors only a contained root raises."""

    default_errno = _errno.EINVAL

    def __init__(self, message: str, path: str | None = None, *, component: str | None = None,
                 err: int | None = None) -> None:
        code = self.default_errno if err is None else err
        super().__init__(code, message, path)
        self.component = component

    def __str__(self) -> str:  # no errno prefix: the message is written for people
        name = f": {self.filename!r}" if self.filename is not None else ""
        return f"{self.strerror}{name}"


class EscapeError(ContainedError):
    """Resolution would leave the root.

    Raised for ``..`` past the root, an absolute path, and a symlink whose
    target is absolute or climbs out.  ``reason`` says which, from the
    resolution itself: ``"dotdot"`` (a ``..`` of the path as written),
    ``"absolute"`` (the path) or ``"symlink"`` (a link's absolute text, or a
    ``..`` that came from a link's text).  ``errno`` is ``EXDEV``, what ``openat2(RESOLVE_BENEATH)``
    answers.  The symlink's target is never part of the error.  ``passed``
    holds the canonical places inside the root resolution went through
    before it left (links followed, directories entered and left again):
    a ``..`` that leaves names only ``..`` as its ``component``.
    """

    default_errno = _errno.EXDEV

    def __init__(self, message: str, path: str | None = None, *, component: str | None = None,
                 reason: str = "dotdot", passed: tuple[str, ...] = ()) -> None:
        super().__init__(message, path, component=component)
        self.reason = reason
        self.passed = passed


class SymlinkError(ContainedError):
    """A symlink was met by a root opened with ``follow_symlinks=False``
    (strict mode follows none).  ``errno`` is ``ELOOP``, as
    ``RESOLVE_NO_SYMLINKS`` answers."""

    default_errno = _errno.ELOOP


class StaleError(ContainedError):
    """What is on disk no longer matches what was resolved before: a
    :class:`~corral.contained.Target`'s plan (a directory it was to create
    exists now as something else, or resolution now leads elsewhere), or the
    identity a caller expected (``expect=(dev, ino)``).  Nothing was changed
    past the point of the mismatch.  ``errno`` is ``EAGAIN``: resolve again
    and decide again.
    """

    default_errno = _errno.EAGAIN


class RootVanishedError(ContainedError):
    """The root directory itself was removed after it was opened.

    Never a caller's "not found": the capability is dead, and every later call
    on the same :class:`Root` raises this too.
    """

    default_errno = _errno.ESTALE


class InvalidPathError(ContainedError):
    """The path cannot be a path at all: NUL byte, undecodable, wrong type, or
    a final component that must be a name (``.``/``..`` for ``mkdir``).

    Raised before any system call.  Over-long input is ``ENAMETOOLONG``
    (an ``InvalidPathError`` with that errno).
    """


class SpecialFileError(ContainedError):
    """The path names a FIFO, socket or device, which file operations refuse.

    The file was opened non-blocking (so nothing hung) and closed again.
    ``kind`` is ``"fifo"``, ``"socket"``, ``"char_device"`` or
    ``"block_device"``.
    """

    default_errno = _errno.EOPNOTSUPP

    def __init__(self, message: str, path: str | None = None, *, component: str | None = None,
                 kind: str = "other") -> None:
        super().__init__(message, path, component=component)
        self.kind = kind


class HardLinkError(ContainedError):
    """A regular file with more than one hard link, which an operation that
    changes a file in place (``chmod``, ``chown``, ``utime``, ``truncate``,
    opening it for writing) refuses unless the Root allows hard links
    (``Root(path, allow_hardlinks=True)``): its other names may be outside
    the root, and the change would reach them through the shared inode.
    Replacing the name (``write_bytes``, ``copyfile``, ``rename``) is
    allowed: it leaves the other names as they were.  ``links`` is the
    file's link count; ``errno`` is ``EMLINK``.
    """

    default_errno = _errno.EMLINK

    def __init__(self, message: str, path: str | None = None, *, component: str | None = None,
                 links: int = 2) -> None:
        super().__init__(message, path, component=component)
        self.links = links


def refuse_hard_linked(info: os.stat_result, text: str) -> None:
    """:class:`HardLinkError` if ``info`` is a regular file with more than
    one link (``text``: the caller's root-relative path)."""
    if info.st_nlink > 1 and (info.st_mode & 0o170000) == 0o100000:
        raise HardLinkError(f"a hard-linked file ({info.st_nlink} links) is not changed in "
                            "place", text, component=text, links=info.st_nlink)


class _BuiltinKind(PathError):
    """What the core's ``FileNotFoundError`` (and each other built-in kind)
    adds to the built-in class: :class:`PathError`'s ``component``.  It
    shows, prints and pickles as the built-in class (a pickle is read back
    as the built-in, ``component`` in its attributes), as the core's errors
    did before they declared it."""

    builtin: type[OSError] = OSError

    def __reduce__(self) -> tuple[Any, ...]:
        reduced = super().__reduce__()
        assert isinstance(reduced, tuple)  # an exception reduces to (class, args, state)
        return (self.builtin, *reduced[1:])


def _kind_of(builtin: type[OSError]) -> type[PathError]:
    # named and placed as the built-in class, so a traceback or repr reads
    # exactly as for the built-in error
    return type(builtin.__name__, (builtin, _BuiltinKind) if builtin is not OSError
                else (_BuiltinKind,),
                {"__module__": "builtins", "__qualname__": builtin.__name__, "builtin": builtin,
                 "__doc__": builtin.__doc__})


# every built-in class an errno maps to (OSError itself for the rest)
_KINDS: dict[type[OSError], type[PathError]] = {
    builtin: _kind_of(builtin)
    for builtin in {type(OSError(code, "")) for code in (*_errno.errorcode, 0)}}


def contained_error(err: int | None, path: str | None, component: str | None = None) -> PathError:
    """An ``OSError`` of the built-in subclass for ``err`` (and a
    :class:`PathError`), naming root-relative ``path`` and carrying
    ``component`` (see the module docstring).  An ``err`` of ``None`` (an
    ``OSError`` made without one) is ``EIO``."""
    code = _errno.EIO if err is None else err
    exc = _KINDS[type(OSError(code, ""))](code, os.strerror(code), path)
    exc.component = component
    return exc
