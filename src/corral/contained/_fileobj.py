"""Python file objects and text I/O beneath a root.

:func:`open_file` is ``builtins.open`` with the path resolved by the root:
``open()`` itself parses the mode, computes the flags, picks the buffer
size and builds the layers (``FileIO``, buffered, text); the fd it wraps
comes from ``Root.open`` with exactly those flags (``open()``'s *opener*
hook), so everything ``open()`` accepts and refuses is accepted and refused
the same way, and the containment is the root's.

:func:`read_text` / :func:`write_text` are ``pathlib.Path``'s, except that
``write_text`` is atomic (``Root.write_bytes``: a temporary file renamed
over the target, metadata kept).
"""

from __future__ import annotations

import codecs
import fcntl
import io
import locale
import os
from typing import IO, Any, Protocol

from . import _paths

__all__ = ["open_file", "read_text", "write_text"]


class _Opens(Protocol):
    def open(self, path: object, flags: int = ..., mode: int = ...) -> int: ...


class _Writes(Protocol):
    def write_bytes(self, path: object, data: bytes, *, mode: int | None = ...,
                    fsync: bool = ..., exclusive: bool = ...,
                    follow_symlinks: bool = ...) -> None: ...


def open_file(root: _Opens, path: object, mode: str = "r", buffering: int = -1,
              encoding: str | None = None, errors: str | None = None,
              newline: str | None = None) -> IO[Any]:
    """``open(path, mode, buffering, encoding, errors, newline)`` beneath
    ``root``; the file object's ``name`` is ``path`` as given.

    Modes are ``open()``'s: ``r``, ``w`` (truncates in place, like
    ``open()``: a hard link is written through; :meth:`Root.write_bytes`
    and :func:`write_text` replace instead), ``x`` (exclusive create: never
    follows a final symlink), ``a``, each with ``+`` and ``b``/``t``.  New
    files get 0o666 less the umask.

    Raises what ``open()`` raises for a bad mode or argument (``ValueError``,
    ``LookupError`` for an unknown encoding, here before any file is made),
    ``IsADirectoryError`` for a directory, and whatever ``Root.open``
    raises (escapes, special files, missing files...), with the
    root-relative path.
    """
    # open() would refuse a NUL itself (ValueError) before the opener runs:
    # refuse as every Root operation does (InvalidPathError)
    text = _paths.parse(path).text
    if "b" not in mode:
        encoding = io.text_encoding(encoding)
        if encoding != "locale":
            codecs.lookup(encoding)  # LookupError before "w" or "x" makes a file, not after

    def opener(_name: str, flags: int) -> int:
        fd = root.open(path, flags, 0o666)
        try:
            # Root.open may hand back O_NONBLOCK (its FIFO guard); a file
            # object wants the blocking semantics open() gives
            status = fcntl.fcntl(fd, fcntl.F_GETFL)
            if status & os.O_NONBLOCK:
                fcntl.fcntl(fd, fcntl.F_SETFL, status & ~os.O_NONBLOCK)
        except BaseException:
            os.close(fd)
            raise
        return fd

    return open(text, mode, buffering, encoding, errors, newline, opener=opener)


def read_text(root: _Opens, path: object, encoding: str | None = None,
              errors: str | None = None, newline: str | None = None) -> str:
    """The text of the file ``path``, as ``pathlib.Path.read_text``
    (universal newlines unless ``newline`` says otherwise).  Raises as
    :func:`open_file`, and ``UnicodeDecodeError``."""
    encoding = io.text_encoding(encoding)
    with open_file(root, path, "r", encoding=encoding, errors=errors, newline=newline) as f:
        return str(f.read())


def write_text(root: _Writes, path: object, data: str, encoding: str | None = None,
               errors: str | None = None, newline: str | None = None, *,
               mode: int | None = None, fsync: bool = True, exclusive: bool = False,
               follow_symlinks: bool = True) -> int:
    """Write ``data`` to ``path`` atomically (``Root.write_bytes``, whose
    keyword arguments follow), encoded as ``pathlib.Path.write_text`` would:
    ``"\\n"`` becomes ``newline`` (``None``: ``os.linesep``).  Returns the
    number of characters written, as ``write_text`` does.

    Raises ``TypeError`` for data that is not ``str``, ``ValueError`` for a
    bad ``newline``, ``LookupError`` / ``UnicodeEncodeError`` from the
    encoding, and whatever ``Root.write_bytes`` raises.
    """
    if not isinstance(data, str):
        raise TypeError(f"data must be str, not {type(data).__name__}")
    if newline not in (None, "", "\n", "\r", "\r\n"):
        raise ValueError(f"illegal newline value: {newline!r}")
    encoding = io.text_encoding(encoding)
    if encoding == "locale":
        encoding = locale.getencoding()
    ending = os.linesep if newline is None else newline
    encoded = (data.replace("\n", ending) if ending not in ("", "\n") else data).encode(
        encoding, errors or "strict")
    root.write_bytes(path, encoded, mode=mode, fsync=fsync, exclusive=exclusive,
                     follow_symlinks=follow_symlinks)
    return len(data)
