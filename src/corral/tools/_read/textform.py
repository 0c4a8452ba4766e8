"""What kind of text a file's bytes are, and how to write text back in the
same form: pure logic, no I/O.

* **Binary by content**, as git and ripgrep decide it: a NUL byte in the
  head, or (for what git's rule lets through) a large share of control
  characters there, which no text editor writes.
* **Wide encodings with a byte order mark** (UTF-16, UTF-32, either byte
  order), which Windows tools and PowerShell write: decoded whole and
  written back in the same encoding with the same mark.
* **The form of a file being replaced**: its BOM and whether every line
  ends in CRLF, so a whole-file overwrite keeps them unless asked not to.
"""

from __future__ import annotations

import codecs
from typing import NamedTuple

__all__ = ["HEAD", "Form", "form_of", "looks_binary", "many_controls", "controls",
           "wide_encoding", "decode_wide", "encode_wide", "apply_form"]

HEAD = 8000  # bytes looked at, as git does
_TEXT_CONTROLS = frozenset(b"\t\n\r\f\b\x1b\x0b")
_CONTROLS = bytes(b for b in range(32) if b not in _TEXT_CONTROLS) + b"\x7f"

# Longest first: a UTF-32-LE mark starts with the UTF-16-LE one.
_WIDE = ((codecs.BOM_UTF32_LE, "utf-32-le"), (codecs.BOM_UTF32_BE, "utf-32-be"),
         (codecs.BOM_UTF16_LE, "utf-16-le"), (codecs.BOM_UTF16_BE, "utf-16-be"))
UTF8_BOM = codecs.BOM_UTF8
#: the NUL byte as the int ``in`` looks for: ``b"\0" in data`` first tries the
#: one-byte needle as an int, making and dropping a TypeError (ten times the memchr)
_NUL = 0


def wide_encoding(data: bytes) -> str | None:
    """The wide encoding ``data``'s byte order mark announces, if any."""
    for mark, name in _WIDE:
        if data.startswith(mark):
            return name
    return None


def decode_wide(data: bytes) -> tuple[str, str] | None:
    """The encoding and text (mark left out) of wide text with a BOM;
    ``None`` when there is no mark or the bytes do not decode."""
    name = wide_encoding(data)
    if name is None:
        return None
    mark = len(codecs.BOM_UTF32_LE) if name.startswith("utf-32") else 2
    try:
        text = data[mark:].decode(name)
    except UnicodeDecodeError:
        return None
    if "\x00" in text or looks_binary(text[:HEAD].encode("utf-8", "surrogatepass")):
        return None
    return name, text


def encode_wide(text: str, encoding: str) -> bytes:
    """``text`` in ``encoding`` with its byte order mark."""
    mark = {n: m for m, n in _WIDE}[encoding]
    return mark + text.encode(encoding)


def looks_binary(head: bytes) -> bool:
    """Whether a file starting with ``head`` is binary: a NUL in it, or more
    than a tenth of it control characters that text does not hold."""
    head = head[:HEAD]
    return _NUL in head or many_controls(head)


def many_controls(head: bytes) -> bool:
    """Whether more than a tenth of ``head`` (a file's first ``HEAD``
    bytes) is control characters that text does not hold."""
    return controls(head) * 10 > len(head)


def controls(data: bytes) -> int:
    """How many of ``data``'s bytes are control characters that text does
    not hold (what :func:`many_controls` counts)."""
    return len(data) - len(data.translate(None, _CONTROLS))


class Form(NamedTuple):
    """How a text file is written: ``bom`` (UTF-8 mark), ``crlf`` (every line
    break is CRLF), ``encoding`` (a wide one, with its mark)."""

    bom: bool = False
    crlf: bool = False
    encoding: str | None = None

    @property
    def plain(self) -> bool:
        return not (self.bom or self.crlf or self.encoding)

    def describe(self) -> str:
        parts = []
        if self.encoding:
            parts.append(f"{self.encoding.upper()} with its byte order mark")
        elif self.bom:
            parts.append("UTF-8 byte order mark")
        if self.crlf:
            parts.append("CRLF line endings")
        return " and ".join(parts)


def form_of(data: bytes) -> Form:
    """The form of an existing file from its bytes (or the head of them)."""
    wide = decode_wide(data)
    if wide is not None:
        encoding, text = wide
        breaks = text.count("\n")
        return Form(crlf=breaks > 0 and text.count("\r\n") == breaks, encoding=encoding)
    breaks = data.count(b"\n")
    return Form(bom=data.startswith(UTF8_BOM), crlf=breaks > 0 and data.count(b"\r\n") == breaks)


def apply_form(content: str, form: Form) -> tuple[bytes, Form]:
    """``content`` written in ``form`` where it does not say otherwise, and
    what was kept: a BOM the content lacks, CRLF for content whose breaks
    are all LF, the wide encoding."""
    crlf = form.crlf and "\n" in content and "\r" not in content
    if crlf:
        content = content.replace("\n", "\r\n")
    if form.encoding:
        body = content.removeprefix("\ufeff")
        return encode_wide(body, form.encoding), Form(crlf=crlf, encoding=form.encoding)
    bom = form.bom and not content.startswith("\ufeff")
    data = content.encode("utf-8")
    return (UTF8_BOM + data if bom else data), Form(bom=bom, crlf=crlf)
