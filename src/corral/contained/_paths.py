"""Path parsing: pure functions, no system calls.

A caller's path is checked and split here once, before anything touches the
kernel: NUL bytes and over-long input never reach a syscall (C would cut the
string at the NUL; the kernel would answer ENAMETOOLONG only for some
components).
"""

from __future__ import annotations

import errno
import os
from typing import NamedTuple

from ._errors import InvalidPathError

PATH_MAX = 4096  # bytes, including the terminating NUL, as Linux counts
NAME_MAX = 255  # bytes in one component


class ParsedPath(NamedTuple):
    text: str  # the caller's path as text, for error messages
    names: list[str]  # components without "" and "."; ".." kept
    absolute: bool
    must_be_dir: bool  # trailing "/", or a final "." or ".."
    final_is_dot: bool  # the last written component is "." or ".." (or the path is "/")
    final_is_dotdot: bool  # ... and it is ".."


def as_text(path: object) -> str:
    """The caller's path as ``str`` (bytes decoded as ``os`` would)."""
    if isinstance(path, str):
        return path
    if isinstance(path, bytes):
        return os.fsdecode(path)
    if isinstance(path, os.PathLike):
        return as_text(os.fspath(path))
    raise InvalidPathError(f"a path must be str, bytes or os.PathLike, not {type(path).__name__}")


def parse(path: object) -> ParsedPath:
    """Check and split ``path``.

    Raises :class:`InvalidPathError` for a NUL byte, a wrong type, a
    ``str`` no bytes stand for (a lone surrogate), or (with
    errno ``ENAMETOOLONG``) a path of PATH_MAX bytes or more or a component
    longer than NAME_MAX bytes.  An empty path is not refused here: like the
    kernel, resolution answers ``ENOENT``.
    """
    text = path if type(path) is str else as_text(path)
    if "\x00" in text:
        raise InvalidPathError("path contains a NUL byte", _printable(text))
    raw = text.split("/")
    # Hot path: a short ASCII path (one byte a character) can have neither a
    # component over NAME_MAX nor PATH_MAX bytes, so it needs no checks.
    if len(text) > NAME_MAX or not text.isascii():
        try:
            encoded = text.encode("utf-8", "surrogateescape")
        except UnicodeEncodeError:  # a lone surrogate no escape stands for: no bytes
            raise InvalidPathError("path cannot be encoded", _printable(text)) from None
        if len(encoded) >= PATH_MAX:
            raise InvalidPathError("path is too long", _printable(text), err=errno.ENAMETOOLONG)
        for part in raw:
            too_long = len(part.encode("utf-8", "surrogateescape")) > NAME_MAX
            if len(part) > NAME_MAX // 4 and too_long:
                raise InvalidPathError("path component is too long", _printable(text),
                                       err=errno.ENAMETOOLONG)
    last = raw[-1]
    # a clean path (no empty or "." component, the common case) is its names
    names = [p for p in raw if p and p != "."] if "" in raw or "." in raw else raw
    absolute = text[:1] == "/"
    # the last component written, ignoring trailing slashes: "./" and "a/../"
    # end in a dot just as "." and "a/.." do
    if last:
        tail = last
        final_is_dot = last in {".", ".."}
    else:
        tail = text.rstrip("/")
        tail = tail[tail.rfind("/") + 1:]
        final_is_dot = tail in (".", "..") or (not tail and absolute)
    must_be_dir = (not last or last in {".", ".."}) and text != ""
    return ParsedPath(text, names, absolute, must_be_dir, final_is_dot, tail == "..")


def refuse_nul(path: str | bytes) -> None:
    """:class:`InvalidPathError` (``EINVAL``) for a NUL in ``path``.

    For every call that hands a path to C through an FFI (ctypes, cffi): C
    takes the NUL as the end of the string, so ``"x\\0/../../evil"`` would
    silently become ``"x"``.  The ``os`` module refuses NUL itself
    (``ValueError``)."""
    found = "\0" in path if isinstance(path, str) else b"\0" in path
    if found:
        raise InvalidPathError("path contains a NUL byte")


def split_link(target: str) -> tuple[bool, list[str], bool]:
    """Split a symlink's target: (absolute, names, must_be_dir)."""
    raw = target.split("/")
    return (target.startswith("/"), [p for p in raw if p and p != "."],
            raw[-1] in ("", ".", ".."))


def is_name(text: str) -> bool:
    """Whether ``text`` is one plain name (no ``/``, not ``.`` or ``..``)."""
    return bool(text) and "/" not in text and text not in (".", "..")


def join(parts: list[str]) -> str:
    """Root-relative text for a list of names ("." for the root itself)."""
    return "/".join(parts) if parts else "."


def _printable(text: str) -> str:
    # Error messages may be logged; keep them to one bounded line.
    shown = text.replace("\x00", "\\0")
    return shown if len(shown) <= 200 else shown[:200] + "..."
