"""What a model is shown of a tool's answer: a compact text made for reading.

The envelope (``Toolbox.call``, MCP ``structuredContent``) is the contract
for programs.  A model pays for every token it reads, on every turn, so the
text it is shown is rendered from the envelope instead of being its JSON:

* ``read_file``: the lines themselves (no JSON escaping), the first and
  last line shown and every tenth after its number and a tab (every
  hundredth in a read of over 1,000 lines; none in a read of under ten),
  every other line as it is (an empty line left empty), then one footer
  line in brackets: the window (when part of the file was shown: the next
  offset is its last line's plus one), what the text hides, and last the
  short digest, bare (``[1f3a09c2d4e5b6a7]`` for a whole file);
* a write, edit, move, delete or new directory: one line saying what was
  done, a file's short digest last in brackets, as a read's footer ends
  (an edit's diff only for a dry run, or when the match was loosened);
* listings and searches: one entry per line;
* a refusal: its code, its sentence once, its hint and the suggested call.

Digests are shown short (:func:`short_digest`, the first 16 hex digits of
the sha256); ``expectedSha256`` accepts that form.  Whatever a tool returns
that this module has no words for is still shown, as ``key: value``, so a
field added to a tool later reaches the model without a change here; a
tool this module does not know is shown as its envelope's compact JSON.

Every front end uses :func:`render`: the MCP server's text content, the
adapters in :mod:`corral.integrations`.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any, AnyStr

from ._formats import compact_json, escaped_usual, json_utf8, usual_only

__all__ = ["render", "render_with_json", "render_escaped", "render_refusal", "short_digest",
           "SHORT_DIGEST_CHARS", "number_every", "NumberedText", "one_line", "shown_name"]

#: Hex digits of a digest shown to a model (64 bits: a collision between two
#: versions of one file is not a practical concern, and a digest sent back is
#: checked as a prefix of the file's full sha256).
SHORT_DIGEST_CHARS = 16

_Envelope = Mapping[str, Any]
_json = compact_json
# a string as JSON, as the encoder above writes one
_escape: Callable[[str], str] = getattr(json.encoder, "c_encode_basestring", None) \
    or json.encoder.py_encode_basestring


def short_digest(digest: Any) -> str:
    """The short form of a sha256 a model reads and may send back."""
    return str(digest)[:SHORT_DIGEST_CHARS]


def render(tool: str, envelope: _Envelope) -> str:
    """The text a model is shown for ``tool``'s answer ``envelope``.

    Always valid UTF-8: a lone surrogate (how Python spells a file name
    that is not UTF-8) is written as its escape, ``\\udcff``."""
    if envelope.get("ok") is not True:
        text = render_refusal(envelope)
    else:
        known = _RENDERERS.get(tool)
        if known is None or envelope.keys().isdisjoint(known[0]):
            # a tool of the host's own, or one whose answer has another shape
            text = one_line(_json(envelope))
        else:
            text = known[1](envelope)
    if not text.isascii():
        try:
            text.encode("utf-8")
        except UnicodeEncodeError:
            text = text.encode("utf-8", "backslashreplace").decode("utf-8")
    return text


# -- pieces ------------------------------------------------------------------------

# what a name is never shown with as it is: control characters, line
# separators, and the format characters (Unicode's Cf, all of them, as of
# Unicode 15.1) a reader cannot see: bidirectional controls (``b\u202egnp.exe``
# reads as ``bexe.png``: Trojan Source, CVE-2021-42574), zero-width
# characters (``a\u200bb.txt`` looks like ``ab.txt``), the byte order mark,
# the soft hyphen, tag characters.  None is printable (str.isprintable), so
# a printable text, most names, is never searched.
_BREAKS = re.compile(
    "[\x00-\x1f\x7f-\x9f\xad\u0600-\u0605\u061c\u06dd\u070f\u0890\u0891\u08e2\u180e"
    "\u200b-\u200f\u2028-\u202e\u2060-\u2064\u2066-\u206f\ufeff\ufff9-\ufffb"
    "\U000110bd\U000110cd\U00013430-\U0001343f\U0001bca0-\U0001bca3\U0001d173-\U0001d17a"
    "\U000e0001\U000e0020-\U000e007f]")


def shown_name(value: Any) -> str:
    """A name or path as one line a model cannot misread: as it is, or,
    when it holds a control character, a line separator (a name ``a\\nb``
    would read as two entries) or an invisible format character (a
    bidirectional control, ``b\\u202egnp.exe``), begins with a space, ``[`` or
    ``"`` (an indent, a note, a quoted name) or reads as a line the answer
    says in words (:func:`_reads_as_said`), in double quotes with those
    characters escaped (``\\n``, ``\\u001b``) and its quotes and
    backslashes too."""
    text = str(value)
    if (text.isprintable() or not _BREAKS.search(text)) and text[:1] not in _OPENERS \
            and (" " not in text or not _reads_as_said(text)):  # (most names: no space, no call)
        return text
    return _quoted_name(text)


def _reads_as_said(text: str) -> bool:
    """Whether ``text`` could be read as a line an answer says in words,
    not a name: every such line holds ``": "`` (a refusal's ``CODE:
    message``, ``Try: tool {...}``, ``Warning: ...``, a field's ``key:
    value``) or is a sentence ending in a full stop (``No match.``, a
    search's note, a hint)."""
    return " " in text and (": " in text or text.endswith("."))


# what a name shown bare never begins with: a space (a listing's indent
# would take it into the folder before), a bracket (a note), a quote (a
# quoted name)
_OPENERS = frozenset(' ["')


def _opens_a_line(body: str) -> bool:
    """Whether a line of ``body`` (an entry's line each) may show a name
    that begins as :data:`_OPENERS` says no bare name does (an empty name's
    line, a space then its size or kind, is not one) or reads as a line
    said in words (a ``: ``, or a name ending in a full stop, before its
    size or ``/``): each entry is then shown by :func:`shown_name`."""
    if ": " in body or ". " in body or "./" in body:
        return True  # (rare) a name that may read as a line said in words: each entry's own look
    if body[:1] not in _OPENERS and _OPENER_AFTER_BREAK.search(body) is None:
        return False  # (nearly every listing: one scan, no line looked at)
    return _OPENING_LINE.search("\n" + body) is not None


_OPENER_AFTER_BREAK = re.compile(r'\n[ \["]')
_OPENING_LINE = re.compile(r'\n(?:["\[]| (?![0-9]+(?:\n|\Z)|\([a-z_]+\)(?:\n|\Z)))')


def _quoted_name(text: str) -> str:
    """``text`` in double quotes, its quotes, backslashes, control
    characters and line separators escaped (a JSON string)."""
    quoted = text.replace("\\", "\\\\").replace('"', '\\"')
    return '"' + _BREAKS.sub(_escaped, quoted) + '"'


_shown = shown_name


def one_line(value: Any) -> str:
    """A sentence as one line: every control character and line separator
    in it escaped (``\\n``, ``\\u2028``).  A tool's sentence may name what
    it found on the disk (a link's text, a near name, where a link leads),
    and a name holding a line break would otherwise start a line the model
    reads as the tool's own."""
    text = str(value)
    if text.isprintable() or not _BREAKS.search(text):
        return text
    return _BREAKS.sub(_escaped, text)


def _escaped(found: re.Match[str]) -> str:
    """A character :data:`_BREAKS` finds, as a JSON string escapes it (a
    tag character as its surrogate pair, ``\\udb40\\udc41``)."""
    char = found.group()
    code = ord(char)
    if code > 0xFFFF:
        high, low = divmod(code - 0x10000, 0x400)
        return f"\\u{0xD800 + high:04x}\\u{0xDC00 + low:04x}"
    return {"\n": "\\n", "\r": "\\r", "\t": "\\t"}.get(char, f"\\u{code:04x}")


def _plural(n: int, word: str, many: str | None = None) -> str:
    return f"{n} {word}" if n == 1 else f"{n} {many or word + 's'}"


def _spans(lines: Any, more: bool = False) -> str:
    """``[[3, 3], [10, 12]]`` as ``3, 10-12``."""
    parts = []
    for item in lines if isinstance(lines, list) else ():
        if isinstance(item, list) and len(item) == 2:
            a, b = item
            parts.append(str(a) if a == b else f"{a}-{b}")
        else:
            parts.append(str(item))
    return ", ".join(parts) + (", ..." if more else "")


def _value(value: Any) -> str:
    # JSON leaves U+2028, U+2029 and C1 controls as they are: escaped here too
    return one_line(value if isinstance(value, str) else _json(value))


def _rest(envelope: _Envelope, said: frozenset[str]) -> list[str]:
    """``key: value`` for every field not in ``said`` (nor ``ok``) that
    holds something: what a renderer has no words for is still shown."""
    unsaid = envelope.keys() - said  # one set operation: most answers have no such field
    unsaid.discard("ok")
    if not unsaid:
        return []
    out = []
    for key, value in envelope.items():
        if key not in unsaid or value in (None, False, 0, "", [], {}):
            continue
        out.append(f"{key}: {_value(value)}")
    return out


def _lines(*parts: str | None) -> str:
    return "\n".join(part for part in parts if part)


def _created(envelope: _Envelope, label: str = "made directories") -> str:
    made = envelope.get("createdDirectories") or []
    omitted = envelope.get("createdDirectoriesOmitted") or 0
    if not made and not omitted:
        return ""
    more = f" and {omitted} more" if omitted else ""
    return f"; {label} {', '.join(map(_shown, made))}{more}"


def _warnings(envelope: _Envelope) -> list[str]:
    return [f"Warning: {_value(w)}" for w in envelope.get("warnings") or ()]


def _suggestion(envelope: _Envelope) -> str:
    tool = envelope.get("suggestedTool")
    if not tool:
        return ""
    return f"Try: {tool} {one_line(_json(envelope.get('suggestedArgs') or {}))}"


# -- read_file and read_files --------------------------------------------------------

_READ_SAID = frozenset({"path", "content", "startLine", "endLine", "totalLines", "truncated",
                        "nextOffset", "sha256", "size", "lineEndings", "bom", "cutLines",
                        "mimeType", "data", "width", "height", "warnings"})


# the fields of a read of a whole file (the common answer): its footer is its digest alone
_WHOLE_READ = frozenset({"ok", "path", "content", "startLine", "endLine", "totalLines",
                         "truncated", "sha256", "size", "lineEndings", "bom"})


def _read_footer_lines(envelope: _Envelope) -> str:
    """The footer, and a line for each warning."""
    if envelope.keys() == _WHOLE_READ and envelope["startLine"] == 1 \
            and envelope["totalLines"] and not envelope["truncated"] and not envelope["bom"] \
            and envelope["lineEndings"] in ("lf", "none"):
        return f"[{short_digest(envelope['sha256'])}]"  # what _read_footer says of it
    return _lines(_read_footer(envelope), *_warnings(envelope))


def _read_footer(envelope: _Envelope) -> str:
    """What the lines do not say: the window (only when part of the file
    was shown: the last line's number says how long a whole file is), what
    the text hides (line endings, a BOM, cut lines) and the digest."""
    total = envelope.get("totalLines", 0)
    start, end = envelope.get("startLine", 1), envelope.get("endLine", 0)
    facts = []
    if not total:
        facts.append("empty file")
    elif start > 1 or envelope.get("truncated"):
        # the next offset is the last line's plus one (nextOffset): not said
        facts.append(f"lines {start}-{end} of {total}")
    endings = envelope.get("lineEndings")
    if endings not in (None, "lf", "none"):
        facts.append(f"{endings} line endings")
    if envelope.get("bom"):
        facts.append("UTF-8 BOM")
    cut = envelope.get("cutLines")
    if cut:
        facts.append(f"cut lines {_spans(cut)}")
    # the digest bare: the description says a read's footer ends with it,
    # and its label would be a sixth of a one-line file's answer
    facts += _rest(envelope, _READ_SAID)
    facts.append(short_digest(envelope.get("sha256", "")))
    return "[" + ", ".join(facts) + "]"


def number_every(shown: int) -> int:
    """A read of ``shown`` lines shows the number of every this many'th
    line (and of the first and last line shown), each before a tab; the
    lines between are shown as they are.  A number is a token of its own in
    o200k (two past 999), about a fiftieth of ten lines of code: every
    tenth line in a read of up to 1,000 lines, every hundredth beyond, so
    that a long read's numbers cost no more than what the answers of a
    session's other calls save against the reference server's; a read of
    fewer lines than that shows none (a whole file's are counted from 1, a
    window's footer says where it is).  A window of a long file gives the
    exact numbers a model cites."""
    return 10 if shown <= 1000 else 100


class NumberedText(str):
    """read_file's ``content`` (rows ``N<TAB>text``, numbered on from
    :attr:`first`) that also holds the rows' text without their numbers
    (:attr:`texts`, joined by line feeds), as the reader had it, and where
    each row begins in it (:attr:`starts`, when the reader knew: then
    ``texts`` is cut at a few rows, not split at every one): what a model
    is shown of it is then made from those rows, not by taking the content
    apart again.  A ``str``, so an envelope stays plain JSON.

    A reader that holds the file's bytes (:meth:`of_file`) gives them as
    they are: ``texts`` is made from them only if asked for, and a
    :attr:`plain` file's rows are cut as bytes (:func:`render_escaped`)."""

    # (class-level defaults: a read sets only what differs, each set costing
    # an instance's attribute store on every read_file call)
    first: int = 1
    starts: Sequence[int] = ()
    #: the rows are ASCII whose only characters a JSON string escapes are
    #: tabs, line feeds, quotes and backslashes (as the content then is)
    plain: bool = False
    _texts: str | None = None
    _whole: str | bytes = ""  # the rows' text with a line feed after the last, or not

    @classmethod
    def of(cls, content: str, first: int, texts: str,
           starts: Sequence[int] = ()) -> NumberedText:
        numbered = cls(content)
        numbered._texts = numbered._whole = texts
        if first != 1:
            numbered.first = first
        if starts:
            numbered.starts = starts
        return numbered

    @classmethod
    def of_file(cls, content: str, first: int, whole: str | bytes, starts: Sequence[int] = (),
                plain: bool = False) -> NumberedText:
        """``content`` whose rows are all of ``whole`` (a file's text, or its
        ASCII bytes when ``starts`` are given or ``plain``), which may end
        with a line feed."""
        numbered = cls(content)
        numbered._whole = whole
        if first != 1:
            numbered.first = first
        if starts:
            numbered.starts = starts
        if plain:
            numbered.plain = True
        return numbered

    @property
    def texts(self) -> str:
        texts = self._texts
        if texts is None:
            whole = self._whole
            text = whole.decode("ascii") if isinstance(whole, bytes) else whole
            texts = self._texts = text[:-1] if text.endswith("\n") else text
        return texts


def _margin_of_rows(content: NumberedText) -> str:
    """:func:`_margin` of a content whose rows' text the reader gave: the
    rows that keep their number get it back, the others are their text."""
    if content.starts:
        texts = content.texts
        return _margin_at_starts(texts, len(texts), content.starts, content.first, _TENTHS,
                                 _number_tab)
    texts = content.texts
    rows = texts.split("\n")
    count = len(rows)
    every = number_every(count)
    if count < every:
        return texts
    lead, tail = 0, count - 1  # the first and last row with text
    if not rows[0]:
        lead = next((i for i in range(count) if rows[i]), -1)
        if lead < 0:  # every line empty: no number is shown
            return texts
    if not rows[tail]:
        tail = next(i for i in range(count - 1, -1, -1) if rows[i])
    first = content.first
    for i in range(-first % every, count, every):
        if rows[i]:
            rows[i] = f"{first + i}\t{rows[i]}"
    # the first and last row with text keep their number (once, if a multiple)
    if (first + lead) % every:
        rows[lead] = f"{first + lead}\t{rows[lead]}"
    if tail != lead and (first + tail) % every:
        rows[tail] = f"{first + tail}\t{rows[tail]}"
    return "\n".join(rows)


def _margin_bytes(content: NumberedText) -> bytes:
    """:func:`_margin_of_rows` of a :attr:`~NumberedText.plain` content as
    ASCII, cut from the file's bytes when the reader gave them."""
    whole = content._whole
    if not content.starts or not isinstance(whole, bytes):
        return _margin_of_rows(content).encode("ascii")
    size = len(whole) - 1 if whole.endswith(b"\n") else len(whole)
    return _margin_at_starts(whole, size, content.starts, content.first, _TENTHS_BYTES,
                             _number_tab_bytes)


def _number_tab(number: int) -> str:
    return f"{number}\t"


def _number_tab_bytes(number: int) -> bytes:
    return b"%d\t" % number


def _margin_at_starts(texts: AnyStr, size: int, starts: Sequence[int], first: int,
                      tenths: Sequence[AnyStr], number_tab: Callable[[int], AnyStr]) -> AnyStr:
    """:func:`_margin_of_rows` from where each row begins in ``texts``
    (the rows' text ends at ``size``): the text is cut before each row
    that keeps its number, and the number put there (``tenths`` and
    ``number_tab`` spell a number and its tab as ``texts`` is spelled)."""
    count = len(starts)
    every = number_every(count)
    if count < every:
        return texts[:size]
    newline_at = 10 if isinstance(texts, bytes) else "\n"  # what indexing gives
    # a row has text unless it begins with a line feed, or at the end
    lead = 0  # the first row with text
    while starts[lead] == size or texts[starts[lead]] == newline_at:
        lead += 1
        if lead == count:  # every line empty: no number is shown
            return texts[:size]
    tail = count - 1  # the last
    while starts[tail] == size or texts[starts[tail]] == newline_at:
        tail -= 1
    pieces: list[AnyStr] = []
    cut = 0
    # the first and last row with text keep their number (once, if a multiple)
    if (first + lead) % every:
        cut = starts[lead]
        pieces += (texts[:cut], number_tab(first + lead))
    for i in range(-first % every, count, every):
        at = starts[i]
        if at < size and texts[at] != newline_at:
            number = first + i
            pieces += (texts[cut:at], tenths[number // 10] if number < _TENTHS_UP_TO
                       else number_tab(number))
            cut = at
    if tail != lead and (first + tail) % every:
        at = starts[tail]
        pieces += (texts[cut:at], number_tab(first + tail))
        cut = at
    pieces.append(texts[cut:size])
    return texts[:0].join(pieces)


# the numbers (with their tab) of the rows a margin numbers, made once: the
# multiples of ten (and so of a hundred) of a read of up to 2,000 lines
_TENTHS_UP_TO = 2001
_TENTHS = [f"{n}\t" for n in range(0, _TENTHS_UP_TO, 10)]
_TENTHS_BYTES = [text.encode("ascii") for text in _TENTHS]


def _margin(content: str) -> str:
    """read_file's ``N<TAB>text`` lines as a model is shown them: the first
    and last line shown and every :func:`number_every`'th after its number
    and a tab, every other line as it is (an empty line left empty).

    Every read's answer goes through here, so the common shape (every row
    numbered, the first and last row not empty) is done by one regular
    expression pass over the whole text; any other shape by the rows."""
    first_number = _FIRST_ROW_NUMBER.match(content)
    if first_number is None or _UNNUMBERED_ROW.search(content) is not None:
        return content  # not read_file's numbering: shown as it is
    count = content.count("\n") + 1
    every = number_every(count)
    if count < every:
        # a few lines: a file's are counted from 1, a window's footer says where
        return _LATER_ROW_NUMBER.sub("\n", content[first_number.end():])
    head_end, tail_start = content.find("\n"), content.rfind("\n") + 1
    # a row's text is empty when its first tab ends it
    if content.find("\t", 0, head_end) == head_end - 1 \
            or content.find("\t", tail_start) == len(content) - 1:
        return _margin_by_rows(content, every)
    # the first and last row keep their number; between them, _DROPPED_NUMBER's
    middle = _DROPPED_NUMBER[every].sub("\n", content[head_end:tail_start])
    return f"{content[:head_end]}{middle}{content[tail_start:]}"


# the first row's number and tab, and a later row without them (a search
# for a line feed is quicker than one for a line's start)
_FIRST_ROW_NUMBER = re.compile(r"[0-9]+\t")
_UNNUMBERED_ROW = re.compile(r"\n(?![0-9]+\t)")
# a later row's number and tab, with the line feed before it
_LATER_ROW_NUMBER = re.compile(r"\n[0-9]+\t")
# the line feed before a row and the number and tab that row does not keep,
# by how often numbers are shown: a number that is not a multiple (a digit
# other than 0 among its last ones), or one before an empty line (every row
# this is used on is followed by a line feed)
_DROPPED_NUMBER = {
    every: re.compile(rf"\n(?:[0-9]*[1-9]0{{0,{len(str(every)) - 2}}}\t|[0-9]+\t(?=\n))")
    for every in (10, 100)}


def _margin_by_rows(content: str, every: int) -> str:
    """:func:`_margin` of a read whose first or last row is empty, row by row."""
    rows = content.split("\n")
    numbers, _, texts = zip(*[row.partition("\t") for row in rows])
    count = len(rows)
    first = next((i for i in range(count) if texts[i]), None)
    if first is None:  # every line empty: no number is shown
        return "\n".join(texts)
    last = next(i for i in range(count - 1, -1, -1) if texts[i])
    shown = list(texts)
    for i in _multiples(numbers, every):
        if texts[i]:
            shown[i] = rows[i]
    shown[first], shown[last] = rows[first], rows[last]
    return "\n".join(shown)


def _multiples(numbers: tuple[str, ...], every: int) -> list[int]:
    """Which of ``numbers`` (ASCII digits) are multiples of ``every``: those
    ending in its zeros (a power of ten), read from the digits."""
    zeros = str(every)[1:]
    if every != 10 ** len(zeros) or min(map(len, numbers)) < len(zeros):
        return [i for i, number in enumerate(numbers) if not int(number) % every]
    if zeros == "0":
        return [i for i, number in enumerate(numbers) if number[-1] == "0"]
    return [i for i, number in enumerate(numbers) if number.endswith(zeros)]


def _read_file(envelope: _Envelope) -> str:
    if "mimeType" in envelope and "content" not in envelope:
        return _image(envelope)
    content = envelope.get("content", "")
    content = (_margin_of_rows(content) if type(content) is NumberedText
               else _margin(str(content)))
    footer = _read_footer_lines(envelope)
    # a line shown is a row even when empty (a file of one empty line)
    return f"{content}\n{footer}" if envelope.get("totalLines") else footer


def _image(envelope: _Envelope) -> str:
    facts = [str(envelope.get("mimeType")), _plural(envelope.get("size", 0), "byte")]
    if "width" in envelope and "height" in envelope:
        facts.append(f"{envelope['width']}x{envelope['height']}")
    facts.append(f"sha256 {short_digest(envelope.get('sha256', ''))}")
    facts += _rest(envelope, _READ_SAID)
    return f"[image: {', '.join(facts)}]"


# how each file's section begins in read_files' text: a line starting so is
# a header, and no line of a file's content is shown starting so
_HEADER = "== "


def _read_section(item: _Envelope) -> str:
    """One file's read in read_files' text: :func:`_read_file`'s, where a
    line of the file that would read as a header (``== secret.txt ==``: a
    file claiming another file's section) keeps its number before it, as
    the margin marks a line as the file's.  The lines shown are the rows'
    text, numbered or not, one a row, then the footer."""
    body = _read_file(item)
    if not body.startswith(_HEADER) and "\n" + _HEADER not in body:
        return body
    if not item.get("totalLines"):
        return body  # the footer alone
    rows = str(item.get("content", "")).count("\n") + 1
    start = item.get("startLine", 1)
    lines = body.split("\n")
    for i in range(min(rows, len(lines))):
        if lines[i].startswith(_HEADER):
            lines[i] = f"{start + i}\t{lines[i]}"
    return "\n".join(lines)


def _read_files(envelope: _Envelope) -> str:
    parts = []
    for item in envelope.get("files") or ():
        path = ""
        if isinstance(item, Mapping):  # a refusal names its path in its details
            details = item.get("details")
            path = item.get("path") or (details.get("path", "") if isinstance(details, Mapping)
                                        else "")
        body = (_read_section(item) if isinstance(item, Mapping) and item.get("ok") is True
                else render_refusal(item if isinstance(item, Mapping) else {}))
        parts.append(f"{_HEADER}{_shown(path)} ==\n{body}" if path else body)
    if envelope.get("refused"):
        parts.append(f"[{envelope.get('read', 0)} read, {envelope['refused']} refused]")
    parts += _rest(envelope, frozenset({"files", "read", "refused", "bytes", "budget"}))
    return "\n".join(parts)


# -- writes ------------------------------------------------------------------------------

def _write_file(envelope: _Envelope) -> str:
    verb = "Created" if envelope.get("created") else "Replaced"
    # the size is the content's the model sent: the digest says what was written
    head = (f"{verb} {_shown(envelope.get('path'))}{_created(envelope)} "
            f"[{short_digest(envelope.get('sha256', ''))}]")
    said = frozenset({"path", "bytes", "sha256", "created", "createdDirectories",
                      "createdDirectoriesOmitted", "warnings"})
    return _lines(head, *_warnings(envelope), *_rest(envelope, said))


_EDIT_SAID = frozenset({"path", "baseSha256", "sha256", "resultSha256", "dryRun", "replacements",
                        "lines", "linesTruncated", "matchStrategy", "edits", "diff",
                        "diffTruncated", "diffComplete", "lineEndings", "bom", "warnings"})


def _diff_body(diff: str) -> str:
    """The diff without its ``---``/``+++`` header: the path is said above."""
    head, _, rest = diff.partition("\n")
    if head.startswith("--- "):
        second, _, after = rest.partition("\n")
        if second.startswith("+++ "):
            return after.rstrip("\n")
    return diff.rstrip("\n")


def _edit_file(envelope: _Envelope) -> str:
    count = envelope.get("replacements", 0)
    where = _spans(envelope.get("lines"), bool(envelope.get("linesTruncated")))
    at = f" at line{'s' if ',' in where or '-' in where else ''} {where}" if where else ""
    strategies = {envelope.get("matchStrategy")} | {
        e.get("matchStrategy") for e in envelope.get("edits") or () if isinstance(e, Mapping)}
    strategies.discard(None)
    strategies.discard("exact")
    matched = f", matched {', '.join(sorted(map(str, strategies)))}" if strategies else ""
    path = _shown(envelope.get("path"))
    if envelope.get("resolvedPath"):
        path = f"{path} (-> {_shown(envelope['resolvedPath'])})"
    if envelope.get("dryRun"):
        head = (f"Dry run, nothing changed: {path} would get {_plural(count, 'replacement')}"
                f"{at}{matched}; sha256 now {short_digest(envelope.get('sha256', ''))}, after "
                f"{short_digest(envelope.get('resultSha256', ''))}")
    else:
        head = f"Edited {path}: {_plural(count, 'replacement')}{at}{matched}"
    endings = envelope.get("lineEndings")
    if endings not in (None, "lf", "none"):
        head += f"; {endings} line endings kept"
    if not envelope.get("dryRun"):
        head += f" [{short_digest(envelope.get('sha256', ''))}]"
    # the diff of an edit made as asked says nothing the model did not
    # write itself; a preview, or a match that was loosened, is shown
    diff = envelope.get("diff") if envelope.get("dryRun") or strategies else None
    note = "[diff cut short]" if diff and (envelope.get("diffTruncated") or
                                           envelope.get("diffComplete") is False) else ""
    return _lines(head, _diff_body(diff) if isinstance(diff, str) else "", note,
                  *_warnings(envelope), *_rest(envelope, _EDIT_SAID | {"resolvedPath"}))


def _move_file(envelope: _Envelope) -> str:
    kind = envelope.get("kind")
    what = "" if kind in (None, "file") else f" ({kind})"
    replaced = ", replacing what was there" if envelope.get("overwritten") else ""
    head = (f"Moved {_shown(envelope.get('source'))}{what} to {_shown(envelope.get('destination'))}"
            f"{replaced}{_created(envelope)}")
    said = frozenset({"source", "destination", "kind", "overwritten", "createdDirectories",
                      "createdDirectoriesOmitted"})
    return _lines(head, *_rest(envelope, said))


def _delete_file(envelope: _Envelope) -> str:
    kind = envelope.get("kind")
    what = "" if kind in (None, "file") else f" ({kind})"
    path = _shown(envelope.get("path"))
    head = (f"Deleted {path}{what}" if envelope.get("deleted", True)
            else f"Nothing deleted at {path}")
    return _lines(head, *_rest(envelope, frozenset({"path", "kind", "deleted"})))


def _make_directory(envelope: _Envelope) -> str:
    path = envelope.get("path")
    made = envelope.get("createdDirectories") or []
    if envelope.get("created") or made:
        parents = [_shown(p) for p in made if p != path]
        more = envelope.get("createdDirectoriesOmitted") or 0
        also = f" (and {', '.join(parents)}{f' and {more} more' if more else ''})" \
            if parents or more else ""
        head = f"Created directory {_shown(path)}{also}"
    else:
        head = f"{_shown(path)} already exists"
    said = frozenset({"path", "created", "createdDirectories", "createdDirectoriesOmitted"})
    return _lines(head, *_rest(envelope, said))


def _file_info(envelope: _Envelope) -> str:
    facts = [str(envelope.get("kind"))]
    if "target" in envelope or "targetKind" in envelope:
        facts.append(f"-> {_shown(envelope.get('target', '?'))} "
                     f"({envelope.get('targetKind', '?')})")
    if "size" in envelope:
        facts.append(_plural(envelope["size"], "byte"))
    if "mode" in envelope:
        facts.append(f"mode {envelope['mode']}")
    if envelope.get("links", 1) != 1:
        facts.append(f"{envelope['links']} links")
    for key, label in (("mtime", "modified"), ("birthtime", "created")):
        if isinstance(envelope.get(key), str):
            facts.append(f"{label} {_seconds(envelope[key])}")
    said = frozenset({"path", "kind", "target", "targetKind", "size", "mode", "links", "mtime",
                      "ctime", "atime", "birthtime", "mtimeNs", "ctimeNs", "atimeNs",
                      "birthtimeNs"})
    return _lines(f"{_shown(envelope.get('path'))}: {', '.join(facts)}", *_rest(envelope, said))


def _seconds(iso: str) -> str:
    """``2026-12-04T20:48:41.410749772Z`` as ``2026-12-04T20:48:41Z``."""
    head, dot, _ = iso.partition(".")
    return f"{head}Z" if dot else iso


# -- listings and searches ----------------------------------------------------------

_ENTRY_SAID = frozenset({"name", "kind", "size", "entries", "truncated", "total", "ignored",
                         "ignoredEntries", "unlisted", "denied"})


# an entry with these fields alone is its line, without notes or children
_PLAIN_ENTRY = frozenset({"name", "kind", "size"})


def _entry_lines(entries: Sequence[Any], indent: str, out: list[str]) -> None:
    for entry in entries:
        if type(entry) is not dict and not isinstance(entry, Mapping):
            continue
        name, kind = _shown(entry.get("name", "")), entry.get("kind")
        if kind == "dir":
            line = f"{indent}{name}/"
        elif kind == "file":
            line = f"{indent}{name} {entry['size']}" if "size" in entry else f"{indent}{name}"
        else:
            line = f"{indent}{name} ({kind})"
        if entry.keys() <= _PLAIN_ENTRY:  # most entries: nothing more to say
            out.append(line)
            continue
        notes = []
        if entry.get("ignored"):
            notes.append("ignored")
        if entry.get("truncated") and "entries" not in entry:
            notes.append("not listed")
        notes += _rest(entry, _ENTRY_SAID)
        if notes:
            line += f" ({'; '.join(notes)})"
        out.append(line)
        children = entry.get("entries")
        if isinstance(children, list):
            _entry_lines(children, indent + "  ", out)
            _level_note(entry, len(children), indent + "  ", out)


def _level_note(level: _Envelope, shown: int, indent: str, out: list[str]) -> None:
    facts = []
    total = level.get("total")
    if level.get("truncated") and isinstance(total, int) and total > shown:
        facts.append(f"{total - shown} more not shown")
    if level.get("ignoredEntries"):
        facts.append(f"{level['ignoredEntries']} ignored")
    if level.get("denied"):
        facts.append(f"{level['denied']} denied")
    if facts:
        out.append(f"{indent}[{', '.join(facts)}]")


def _plain_entries(entries: list[Any]) -> tuple[list[str], list[str]] | None:
    """What :func:`_entry_lines` makes of ``entries`` when each is a plain
    one (a dict of a name and a kind, and a file's size, in that order, as
    a listing writes them) and every line is printable (so no name needs
    quoting), and each entry's compact JSON (as the json module writes it),
    in one pass; else ``None``."""
    lines: list[str] = []
    objects: list[str] = []
    line, obj = lines.append, objects.append
    # names and kinds go into the JSON as they are: checked below, once for
    # all, for a character JSON escapes (a printable text holds no control)
    for entry in entries:
        if type(entry) is not dict:
            return None
        if len(entry) == 3:
            (key1, name), (key2, kind), (key3, size) = entry.items()
            if key1 != "name" or key2 != "kind" or key3 != "size" or kind != "file" \
                    or type(name) is not str or type(size) is not int:
                return None
            line(f"{name} {size}")
            obj(f'{{"name":"{name}","kind":"file","size":{size}}}')
        elif len(entry) == 2:
            (key1, name), (key2, kind) = entry.items()
            if key1 != "name" or key2 != "kind" or type(name) is not str \
                    or type(kind) is not str or kind == "file":
                return None
            if kind == "dir":
                line(f"{name}/")
                obj(f'{{"name":"{name}","kind":"dir"}}')
            else:
                line(f"{name} ({kind})")
                obj(f'{{"name":"{name}","kind":"{kind}"}}')
        else:
            return None
    said = "".join(lines)  # every name and kind
    if not said.isprintable():
        return None
    if '"' in said or "\\" in said:  # (rare) a quote or backslash: the json module's
        objects = [_json(entry) for entry in entries]
    return lines, objects


def _plain_lines(entries: list[Any]) -> list[str] | None:
    """What :func:`_entry_lines` makes of ``entries`` when each is a plain
    one (a name and a kind, and a file's size) and every line is printable
    (so no name needs quoting), in one pass; else ``None``."""
    try:
        # by their number, the keys looked up are all an entry has
        out = [f"{e['name']} {e['size']}" if len(e) == 3 and "size" in e and e["kind"] == "file"
               else f"{e['name']}/" if len(e) == 2 and e["kind"] == "dir"
               else f"{e['name']} ({e['kind']})" if len(e) == 2 and e["kind"] != "file"
               else "" for e in entries]  # (a line is never empty)
    except (KeyError, TypeError):  # not a mapping, or a name or kind missing
        return None
    return None if "" in out or not "".join(out).isprintable() else out


def _list_directory(envelope: _Envelope) -> str:
    entries = envelope.get("entries")
    return _listing(envelope, _plain_lines(entries) if type(entries) is list else None)


def _listing(envelope: _Envelope, lines: list[str] | None) -> str:
    """list_directory's text; ``lines``: its entries', when made already."""
    entries = envelope.get("entries") or []
    body = None if lines is None else "\n".join(lines)
    if body is not None and _opens_a_line(body):  # (rare) a name to quote
        body = None
    out: list[str] = []
    if body is None:
        _entry_lines(entries, "", out)
    elif body:
        out.append(body)
    if not entries and not envelope.get("total"):
        out.append(f"{_shown(envelope.get('path'))} is empty")
    facts = []
    if envelope.get("truncated"):
        if "shown" in envelope:  # a tree: total counts its top level only
            facts.append(f"{envelope['shown']} entries shown in all, the most one listing "
                         f"holds; {envelope.get('total')} at the top level")
        else:
            facts.append(f"{len(entries)} of {envelope.get('total')} entries shown")
    if envelope.get("unlisted"):
        facts.append(f"{envelope['unlisted']} directories not listed")
    if envelope.get("ignoredEntries"):
        facts.append(f"{envelope['ignoredEntries']} ignored entries left out")
    if envelope.get("denied"):
        facts.append(f"{envelope['denied']} denied")
    facts += _rest(envelope, _LIST_SAID)
    if facts:
        out.append(f"[{', '.join(facts)}]")
    return "\n".join(out)


def render_with_json(tool: str, envelope: _Envelope) -> tuple[str, str | None]:
    """:func:`render`'s text, and the envelope's compact JSON (what
    :func:`corral.hosts.envelope_text` writes, valid UTF-8) when both come
    from one pass over it, else ``None``: a listing whose entries are all
    plain, where the json module would spend most of an answer's time on
    its many small objects."""
    entries = envelope.get("entries")
    if tool != "list_directory" or type(envelope) is not dict or type(entries) is not list \
            or envelope.get("ok") is not True:
        return render(tool, envelope), None
    made = _plain_entries(entries)
    if made is None:
        return render(tool, envelope), None
    lines, objects = made
    text = _listing(envelope, lines)
    head, tail = _json_around(envelope, "entries")
    listed = f'"entries":[{",".join(objects)}]'
    json_text = "{" + ",".join(part for part in (head, listed, tail) if part) + "}"
    for made_text in (text, json_text):
        if not made_text.isascii():
            try:
                made_text.encode("utf-8")
            except UnicodeEncodeError:  # a lone surrogate: the usual way, which escapes it
                return render(tool, envelope), None
    return text, json_text



def _json_around(envelope: Mapping[Any, Any], middle: str) -> tuple[str, str]:
    """The envelope's fields before and after ``middle`` as the json module
    writes them (each without its braces): the answer's JSON is made of
    them with ``middle`` written between by hand."""
    before: dict[Any, Any] = {}
    after: dict[Any, Any] = {}
    side = before
    for key, value in envelope.items():
        if key == middle:
            side = after
        else:
            side[key] = value
    return _json(before)[1:-1], _json(after)[1:-1]


def render_escaped(tool: str, envelope: _Envelope) -> tuple[bytes, bytes | None]:
    """:func:`render_with_json` as UTF-8, the text as a JSON string (in its
    quotes): the two long parts of an MCP answer.  A read of ASCII text
    whose only characters JSON escapes are line feeds, tabs, quotes and
    backslashes (most files) has its text and its envelope's JSON escaped
    by replacing bytes, its content checked once for both (the json
    module's escaper takes half as long again for the content alone)."""
    if tool == "read_file" and type(envelope) is dict and envelope.get("ok") is True:
        made = _read_escaped(envelope)
        if made is not None:
            return made
    text, json_text = render_with_json(tool, envelope)
    return json_utf8(text), None if json_text is None else json_text.encode("utf-8")


def _read_escaped(envelope: dict[Any, Any]) -> tuple[bytes, bytes | None] | None:
    """:func:`render_escaped` of a text read whose content and footer hold
    only printable ASCII, line feeds, tabs, quotes and backslashes; else
    ``None``."""
    content = envelope.get("content")
    if "mimeType" in envelope:
        return None
    numbered = content if type(content) is NumberedText else None
    if numbered is None and type(content) is not str:
        return None
    text: str = envelope["content"]  # (a str: looked at above; no cast's call at run time)
    plain = numbered is not None and numbered.plain  # the reader looked at every byte
    if not plain and not text.isascii():
        return None
    raw = text.encode("ascii")
    footer = _read_footer_lines(envelope)
    if not (plain or usual_only(raw)) or not footer.isascii() \
            or not usual_only(footer.encode("ascii")):
        return None
    if numbered is not None and plain:
        shown = _margin_bytes(numbered)
    else:
        margin = _margin(text) if numbered is None else _margin_of_rows(numbered)
        if not margin.isascii():  # (a carried row that is not the content's)
            return None
        shown = margin.encode("ascii")
    escaped_footer = escaped_usual(footer.encode("ascii"))
    quoted = (b"".join((b'"', escaped_usual(shown), b"\\n", escaped_footer, b'"'))
              if envelope.get("totalLines") else b'"%b"' % escaped_footer)
    head, tail = _json_around(envelope, "content")
    try:  # (a lone surrogate: the envelope's JSON is made the usual way, which escapes it)
        made = (b"{", head.encode("utf-8"), b"," if head else b"", b'"content":"',
                escaped_usual(raw), b'",' if tail else b'"', tail.encode("utf-8"), b"}")
    except UnicodeEncodeError:
        return quoted, None
    return quoted, b"".join(made)


_LIST_SAID = frozenset({"path", "entries", "truncated", "total", "shown", "unlisted",
                        "ignoredEntries", "denied", "depth"})


_SEARCH_SAID = frozenset({"path", "pattern", "paths", "truncated", "ignored", "skipped",
                          "note", "suggestedTool", "suggestedArgs", "diagnosis", "outputMode",
                          "matches", "files", "counts", "filesSearched", "filesIncluded",
                          "limit", "context", "denied"})


def _search_tail(envelope: _Envelope, found: int) -> list[str]:
    out = []
    if envelope.get("truncated"):
        limit = envelope.get("limit")
        out.append(f"[more results not shown{f': limit {limit}' if limit else ''}]")
    note = envelope.get("note")
    if note:
        out.append(one_line(note))
    elif not found:
        out.append("No match.")
    if envelope.get("denied"):
        out.append(f"[{envelope['denied']} denied]")
    if envelope.get("diagnosis"):
        out.append(one_line(envelope["diagnosis"]))
    out.append(_suggestion(envelope))
    out += _rest(envelope, _SEARCH_SAID)
    return out


def _glob(envelope: _Envelope) -> str:
    paths = [_shown(p) for p in envelope.get("paths") or ()]
    return _lines(*paths, *_search_tail(envelope, len(paths)))


def _grep(envelope: _Envelope) -> str:
    out: list[str] = []
    mode = envelope.get("outputMode", "matches")
    if mode == "files":
        found = len(envelope.get("files") or ())
        out += [_shown(p) for p in envelope.get("files") or ()]
    elif mode == "counts":
        counts = [c for c in envelope.get("counts") or () if isinstance(c, Mapping)]
        found = len(counts)
        out += [f"{_shown(c.get('path'))}:{c.get('count')}" for c in counts]
    else:
        matches = [m for m in envelope.get("matches") or () if isinstance(m, Mapping)]
        found = len(matches)
        _grep_matches(matches, out, bool(envelope.get("context")))
    return _lines(*out, *_search_tail(envelope, found))


def _grep_path(path: Any, context: bool) -> str:
    """A path heading its matches in grep's text: quoted when it would
    read as one of the rows (``3:text``; ``7-text`` and ``--`` where the
    answer holds context lines), else as :func:`shown_name` shows it."""
    shown = _shown(path)
    if _MATCH_ROW.match(shown) or (context and (shown == "--" or _CONTEXT_ROW.match(shown))):
        return _quoted_name(shown)
    return shown


_MATCH_ROW = re.compile(r"[0-9]+:")
_CONTEXT_ROW = re.compile(r"[0-9]+-")


def _grep_matches(matches: Sequence[_Envelope], out: list[str], context: bool = False) -> None:
    """ripgrep's layout: the path once, then ``N:text`` for a matching line
    and ``N-text`` for a context line; ``--`` between separate groups.  A
    path is never shown as such a row would be (:func:`_grep_path`)."""
    path: Any = None
    last = 0
    for match in matches:
        line = match.get("line", 0)
        before = match.get("before") or []
        first = line - len(before)
        if match.get("path") != path:
            path = match.get("path")
            out.append(_grep_path(path, context))
            last = 0  # a file's line numbers count from its own start
        elif before and first > last + 1:
            out.append("--")
        shown = [(first + i, "-", text) for i, text in enumerate(before) if first + i > last]
        shown.append((line, ":", match.get("text", "")))
        shown += [(line + 1 + i, "-", text) for i, text in enumerate(match.get("after") or [])]
        for number, mark, text in shown:
            if number > last:
                out.append(f"{number}{mark}{text}")
                last = number
        extra = _rest(match, frozenset({"path", "line", "text", "before", "after"}))
        if extra:
            out.append(f"  ({'; '.join(extra)})")


# -- refusals -----------------------------------------------------------------------

# details a sentence or hint may lean on, shown short; the rest stays in the
# envelope (the sentence already says what they say)
_DETAIL_LABELS = (("currentSha256", "current sha256"), ("expectedSha256", "expected sha256"))


def render_refusal(envelope: _Envelope) -> str:
    """A refusal: ``CODE: sentence``, the hint, and the suggested call."""
    code = envelope.get("code", "INTERNAL")
    # one line each: a sentence may name what the tool found on the disk
    message = one_line(envelope.get("message", ""))
    hint = one_line(envelope.get("hint", ""))
    details = envelope.get("details")
    facts = []
    if isinstance(details, Mapping):
        for key, label in _DETAIL_LABELS:
            digest = details.get(key)
            if isinstance(digest, str) and len(digest) > SHORT_DIGEST_CHARS:
                short = short_digest(digest)
                # the digest the caller sent back is named, cut, in the
                # sentence: said again only if not (the current one is
                # always given whole enough to be sent as expectedSha256)
                said = short if key == "currentSha256" else short[:12]
                if said not in message and said not in hint:
                    facts.append(f"{label} {short}")
        close = details.get("didYouMean")
        if isinstance(close, list) and close and not any(
                one_line(name) in message or one_line(name) in hint for name in close):
            facts.append(f"did you mean: {', '.join(map(_shown, close[:5]))}")
    head = f"{code}: {message}"
    if facts:
        head += f" ({'; '.join(facts)})"
    return _shortened(_lines(head, hint, _suggestion(envelope)), _names(envelope))


# a digest standing as one: a name's characters around it make it part of
# the name (``blobs/sha256/<64 hex>``; a full stop ending a sentence does not)
_FULL_DIGEST = re.compile(r"(?<![\w/.\-'\\])[0-9a-f]{64}(?![\w/\-'\\]|\.\w)")
_NAMED = ("path", "missing", "didYouMean")  # the details that hold names of the tree


def _names(envelope: _Envelope) -> list[str]:
    """The names of the tree a refusal carries (its details', its
    suggested call's): said whole, whatever they hold."""
    details, suggested = envelope.get("details"), envelope.get("suggestedArgs")
    values: list[object] = []
    if isinstance(details, Mapping):
        for key in _NAMED:
            value = details.get(key)
            values.extend(value if isinstance(value, list) else [value])
    if isinstance(suggested, Mapping):
        values.extend(suggested.values())
    return [v for v in values if isinstance(v, str)]


def _shortened(text: str, names: list[str]) -> str:
    """Every full sha256 a sentence names, in its short form (which
    expectedSha256 takes back); never one that is (part of) a name."""
    if len(text) < 64:
        return text
    return _FULL_DIGEST.sub(lambda m: m.group() if any(m.group() in n for n in names)
                            else short_digest(m.group()), text)


_PATCH_VERBS = {"added": "Added", "updated": "Updated", "moved": "Moved", "deleted": "Deleted"}


def _apply_patch(envelope: _Envelope) -> str:
    """One line a file: what was done, where the hunks landed, its digest."""
    out = []
    for file in envelope.get("files") or ():
        if not isinstance(file, Mapping):
            continue
        line = f"{_PATCH_VERBS.get(str(file.get('action')), 'Changed')} {_shown(file.get('path'))}"
        if file.get("movedTo"):
            line += f" to {_shown(file['movedTo'])}"
        at = file.get("hunkLines") or []
        if at:
            line += f" at line{'s' if len(at) > 1 else ''} {', '.join(map(str, at))}"
        line += _created(file)
        if file.get("note"):
            line += f" ({one_line(file['note'])})"
        if file.get("sha256"):
            line += f" [{short_digest(file['sha256'])}]"
        out.append(line)
    return _lines("\n".join(out), *_rest(envelope, frozenset({"files"})))


# each tool's renderer, and the fields one of which its answer has
_RENDERERS: dict[str, tuple[tuple[str, ...], Callable[[_Envelope], str]]] = {
    "read_file": (("content", "mimeType"), _read_file),
    "read_files": (("files",), _read_files),
    "write_file": (("bytes",), _write_file),
    "edit_file": (("replacements",), _edit_file),
    "move_file": (("destination",), _move_file),
    "delete_file": (("deleted",), _delete_file),
    "make_directory": (("created", "createdDirectories"), _make_directory),
    "file_info": (("kind",), _file_info),
    "list_directory": (("entries",), _list_directory),
    "glob": (("paths",), _glob),
    "grep": (("outputMode",), _grep),
    "apply_patch": (("files",), _apply_patch),
}
