"""Checks of text a model writes (write_file's content, edit_file's newText
and oldText): signs that it is not what the file should hold.

Every check is linear in the text and scans it in C (``str.find``, one
compiled pattern over the whole text); the per-line work in Python is
bounded by a count of candidate lines, so a megabyte of spaces or a
million placeholder-looking lines costs a scan, not minutes.  In an ASCII
text, one RE2 pass picks the lines that can be placeholders, so lines with
"..." that cannot be cost no Python step each.

* A **placeholder** line stands for code the model did not repeat
  (``# ... rest of the code unchanged ...``, ``// ... existing code ...``).
  A line is a candidate only if it has an ellipsis, is at most 200
  characters long, and is a comment or bracketed (or starts with the
  ellipsis) with a phrase such as "rest of", "existing", "unchanged"; or it
  is a bare comment ellipsis (``# ...``).
* An **elision in words** says the same without an ellipsis, or in words
  the phrase list lacks (``# rest of the file is unchanged``, ``// (other
  functions omitted for brevity)``, ``# ... 297 more functions ...``): a
  comment line (``#``, ``//``, ``/*``, ``*``, ``<!--``, ``--``, ``;``,
  ``%``, ``(*``) of at most 200 characters and 16 words, any case, whose
  words are all from a small vocabulary of leaving out, with one naming
  code ("code", "functions", "file", "methods"...) and one saying it was
  left out: "rest", "omitted", "unchanged", "same", "before"..., or "remaining",
  "other", "existing", "previous", "more" beside an ellipsis or a number
  (alone they head sections: "# Other methods").  Ordinary comments ("# the
  rest of the args are passed through") use other words.
* **Line-number prefixes** as read_file prints them (``12<TAB>``) on every
  line, counting up by one: content copied from read_file's output.

write_file refuses, before writing (see :func:`check_write`):

* an overwrite whose content has a placeholder line the file does not have
  and leaves out lines of the file it replaces (at least
  :data:`LOST_LINES` of them, and at least a tenth): most of the file would
  be gone from disk; or, with only an elision in words, is at most half the
  size of the file and leaves out at least half of its lines (an elision in
  words is only looked for in content that short: a rewrite may well say
  "same as the other functions");
  lines are counted with their repeats (a file of one line repeated 5,000
  times, rewritten as that line and a placeholder, loses 4,999);
* content whose every line (at least two) carries read_file's ``N<TAB>``
  prefix, counting up by one.  Refused rather than stripped: write_file
  writes exactly what it is given, a silent rewrite of the bytes would hide
  the mistake, and a file of tab-separated data may number its rows that
  way.  So it is allowed for ``.tsv``/``.tab`` files and when the file it
  replaces is numbered the same way itself.
"""

from __future__ import annotations

import functools
import itertools
import os
import posixpath
import re
from collections import Counter
from collections.abc import Callable
from typing import Any, NamedTuple

from .._runtime.answer import sentence_path as _said
from .._runtime.context import ToolContext
from .._runtime.view import Pinned
from .._refusals.catalogue import Code, Kind, Refusal

__all__ = [
    "LOST_LINES",
    "Elisions",
    "Numbered",
    "check_write",
    "elided_in_words",
    "fenced",
    "is_placeholder",
    "placeholder_lines",
    "read_file_numbers",
    "says_elided",
    "strip_line_numbers",
    "margin_numbers",
    "strip_margin",
    "numbering_said",
]

MAX_PLACEHOLDER_LINE = 200
MAX_CANDIDATES = 2_000  # lines with an ellipsis looked at more closely
JUDGED_ALONE = 16  # of them, judged one by one before RE2 picks among the rest
LOST_LINES = 5
TABULAR = (".tsv", ".tab")

_ELLIPSIS = re.compile(r"\.\.\.|…")
# _ELLIPSIS for a text without "…": a literal, which the regex engine looks
# for several times faster than the alternation (or than str's "in")
_DOTS = re.compile(r"\.\.\.")
_COMMENTED = re.compile(r"^\s*(?:#|//|/\*|<!--|--|;|\*|\{/\*)|^\s*[(\[{].*[)\]}]\s*$")
_LEADING_ELLIPSIS = re.compile(r"^\s*(?:\.\.\.|…)")
_PHRASE = re.compile(r"\b(?:rest of|existing|unchanged|remaining|omitted|same as (?:before|above)|"
                     r"other (?:code|methods|functions)|previous (?:code|content)|"
                     r"code (?:here|goes here)|as before)\b", re.IGNORECASE)
_BARE = re.compile(r"^\s*(?:#|//|/\*|<!--|--|;)\s*(?:\.\.\.|…)\s*(?:\*/|-->)?\s*$")
# The lines of an ASCII text that can be placeholders, found by RE2 in one
# linear pass: a bare comment ellipsis, or a line with "..." and a phrase.
# On ASCII, RE2's case folding and \b agree with re's, and _ASCII_BLANK is
# what \s matches there but the line break, so every placeholder line is
# one of these (each is still judged by is_placeholder).
_ASCII_BLANK = r"[\t\x0b\x0c\r\x1c-\x1f ]"
_SUSPECT_PATTERN = (
    rf"(?im)^(?:{_ASCII_BLANK}*(?:#|//|/\*|<!--|--|;){_ASCII_BLANK}*\.\.\.{_ASCII_BLANK}*"
    rf"(?:\*/|-->)?{_ASCII_BLANK}*$"
    rf"|[^\n]*\.\.\.[^\n]*{_PHRASE.pattern}|[^\n]*{_PHRASE.pattern}[^\n]*\.\.\.)")
_DOTS_TO_LINE_END = re.compile(r"\.\.\.[^\n]*")  # one match per line holding "..."


@functools.cache
def _suspects() -> Any:
    """RE2's scan for the suspect lines, or ``None`` without google-re2;
    compiled at its first use: few texts need it, and re2's import is some
    4 ms of every process that makes a Toolbox."""
    try:
        import re2  # type: ignore[import-untyped]
    except ImportError:  # pragma: no cover - google-re2 is a dependency; the scan does without
        return None
    options = re2.Options()
    options.log_errors = False
    return re2.compile(_SUSPECT_PATTERN.encode("ascii"), options)


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


# Words that say code was left out, words naming code, and the words
# around them: a comment of these alone is an elision in words.  A weak
# word ("# other methods" heads a section) counts only beside a strong one,
# an ellipsis or a number ("# ... 297 more functions ...").
_LEFT_OUT_STRONG = _words("rest remainder omitted omit elided skipped unchanged untouched "
                          "unmodified same before")
_LEFT_OUT_WEAK = _words("remaining other others existing previous more")
_LEFT_OUT = _LEFT_OUT_STRONG | _LEFT_OUT_WEAK
_CODE = _words("code file files function functions method methods class classes line lines "
               "content contents implementation implementations definition definitions body "
               "helpers helper module imports tests logic handlers components sections cases "
               "routes fields properties members parts")
_AROUND = _words("the a an of is are remains remain stays stay as above below here for "
                 "brevity not shown kept left out and or all this that these those it its be "
                 "was were has have been still also intact identical like in from original "
                 "goes go no changes change needed keep to etc so on you your my our they "
                 "them")
_ELISION_VOCABULARY = _LEFT_OUT | _CODE | _AROUND
MAX_ELISION_WORDS = 16
# Candidates for an elision in words: a comment line with a left-out word in
# its first 200 characters (bounded: at most 200 steps per comment line).
_WORDED_CANDIDATE = re.compile(
    r"^[ \t]*(?:#|//|/\*|\*|<!--|--|;|%|\(\*|\{/\*)[^\n]{0,200}?\b(?:"
    + "|".join(sorted(_LEFT_OUT, key=len, reverse=True)) + r")\b",
    re.MULTILINE | re.IGNORECASE)
_WORD = re.compile(r"[a-z]+")

# read_file's prefix: the line number and a tab.  Other tools' styles
# ("  12→", "12: ", "L12: ", "12 | ") are recognised in oldText only.
_READ_FILE_NUMBER = re.compile(r"^(\d+)\t", re.MULTILINE)
_ANY_NUMBER = re.compile(r"^[ \t]*L?(\d+)(?:\t|→|:[ \t]?|[ \t]?\|[ \t]?|(?=\n)|\Z)",
                         re.MULTILINE)


def is_placeholder(line: str) -> bool:
    """Whether one line stands for code left out."""
    if len(line) > MAX_PLACEHOLDER_LINE or ("..." not in line and "…" not in line):
        return False
    if _BARE.match(line):
        return True
    # the anchored tests first: the phrase is looked for at every character
    return bool(_COMMENTED.match(line) or _LEADING_ELLIPSIS.match(line)) \
        and bool(_PHRASE.search(line))


def says_elided(line: str) -> bool:
    """Whether one comment line says in words that code was left out (the
    module's docstring); the caller has checked it is a comment."""
    if len(line) > MAX_PLACEHOLDER_LINE:
        return False
    words = _WORD.findall(line.lower())
    if len(words) > MAX_ELISION_WORDS or not _ELISION_VOCABULARY.issuperset(words) \
            or _CODE.isdisjoint(words):
        return False
    if not _LEFT_OUT_STRONG.isdisjoint(words):
        return True
    return not _LEFT_OUT_WEAK.isdisjoint(words) \
        and ("..." in line or "…" in line or any(c.isdigit() for c in line))


def _scan(text: str, pattern: re.Pattern[str],
          accept: Callable[[str], bool]) -> list[tuple[int, str]]:
    """Lines of ``text`` (0-based index, line without its break) holding a
    match of ``pattern`` that ``accept`` takes; only the first
    MAX_CANDIDATES such lines are looked at."""
    return _scan_lines(text, pattern, accept, MAX_CANDIDATES)[0]


def _scan_lines(text: str, pattern: re.Pattern[str], accept: Callable[[str], bool],
                most: int) -> tuple[list[tuple[int, str]], int | None]:
    """:func:`_scan` of the first ``most`` lines holding a match, with where
    the line after them starts (``None``: there is none)."""
    out: list[tuple[int, str]] = []
    line_no = 0
    counted = 0  # line_no is the line of text[counted]
    pos = 0
    for _ in range(most):
        found = pattern.search(text, pos)
        if found is None:
            return out, None
        start = text.rfind("\n", 0, found.start()) + 1
        end = text.find("\n", found.end())
        end = len(text) if end < 0 else end
        line_no += text.count("\n", counted, start)
        counted = start
        line = text[start:end].rstrip("\r")
        if accept(line):
            out.append((line_no, line))
        pos = end + 1
    return out, pos


def placeholder_lines(text: str) -> list[tuple[int, str]]:
    """Lines of ``text`` (0-based index, line without its break) that
    stand for code left out; only the first MAX_CANDIDATES lines with an
    ellipsis are looked at."""
    if "…" in text:  # (at once for a text of ASCII or Latin-1 characters: none can be "…")
        return _scan(text, _ELLIPSIS, is_placeholder)
    if _DOTS.search(text) is None:
        return []
    if not text.isascii() or _suspects() is None:
        return _scan(text, _DOTS, is_placeholder)
    # a few lines are judged one by one (a pass of RE2 costs more than they
    # do), the rest only where the suspects' scan finds them
    out, rest = _scan_lines(text, _DOTS, is_placeholder, JUDGED_ALONE)
    if rest is not None and rest < len(text):
        out += _suspect_lines(text, rest, MAX_CANDIDATES - JUDGED_ALONE)
    return out


def _suspect_lines(text: str, pos: int, most: int) -> list[tuple[int, str]]:
    """:func:`placeholder_lines` of the ASCII ``text`` from the line start
    ``pos`` on, of its first ``most`` lines with "...": only the lines
    the suspects' scan finds (each holds "...") are judged."""
    out = []
    line_no = 0
    counted = 0  # line_no is the line of text[counted]
    # where the line after the first ``most`` with "..." starts (a step per
    # such line, at most ``most``): RE2 then scans only the text before it
    beyond = next(itertools.islice(_DOTS_TO_LINE_END.finditer(text, pos), most, None), None)
    within = len(text) if beyond is None else text.rfind("\n", 0, beyond.start()) + 1
    for found in _suspects().finditer(text[:within].encode("ascii"), pos):
        start = found.start()  # a line's start: the pattern begins with ^
        end = text.find("\n", start)
        line = text[start:len(text) if end < 0 else end].rstrip("\r")
        if is_placeholder(line):
            line_no += text.count("\n", counted, start)
            counted = start
            out.append((line_no, line))
    return out


def elided_in_words(text: str) -> list[tuple[int, str]]:
    """Comment lines of ``text`` that say in words that code was left out
    (:func:`says_elided`), as :func:`placeholder_lines` gives lines; only the
    first MAX_CANDIDATES comment lines with a left-out word are looked at."""
    return _scan(text, _WORDED_CANDIDATE, says_elided)


class Numbered(NamedTuple):
    first: int  # the number on the first line
    lines: int  # how many lines carry one


def _line_count(text: str) -> int:
    """Lines as read_file counts them (a final line break ends the last one)."""
    body = text.removesuffix("\n")
    return body.count("\n") + 1


def _counting_up(numbers: list[str], lines: int) -> Numbered | None:
    if len(numbers) != lines or lines < 2:
        return None
    first = int(numbers[0])
    if list(map(int, numbers)) != list(range(first, first + lines)):
        return None
    return Numbered(first, lines)


def read_file_numbers(text: str) -> Numbered | None:
    """The numbering when every line of ``text`` starts with read_file's
    ``N<TAB>`` prefix, counting up by one, or when it carries the margin a
    model is shown of a read (:func:`margin_numbers`); ``None`` otherwise."""
    if "\t" not in text:  # every number is followed by a tab: one scan in C, no copy
        return None
    body = text.replace("\r\n", "\n")
    if text[:1].isdigit():
        full = _counting_up(_READ_FILE_NUMBER.findall(body), _line_count(body))
        if full is not None:
            return full
    return margin_numbers(body)


#: a read shows the number of every this many'th line, by how many lines it
#: shows (every tenth, or hundredth past 1,000), and of the first and last
#: line shown, after it a tab; every other line as it is
MARGIN_EVERY = (10, 100)


def _margin_rows(text: str) -> tuple[list[str], int, list[int]] | None:
    """``text``'s rows, the number its first row would have, and the rows
    that carry a number, when ``text`` (``\\n`` breaks) is lines as a model
    is shown a read; ``None`` otherwise."""
    # a tab first (memchr), then the numbered line (a regex step per character)
    if "\t" not in text or _READ_FILE_NUMBER.search(text) is None:
        return None
    rows = text.removesuffix("\n").split("\n")
    if len(rows) < 2:
        return None
    first: int | None = None
    numbered: list[int] = []
    for place, row in enumerate(rows):
        match = _READ_FILE_NUMBER.match(row)
        if match is None:
            continue
        start = int(match.group(1)) - place
        if first is None:
            first = start
        elif start != first:
            return None  # numbers that disagree: the text's own
        numbered.append(place)
    if first is None or first < 1:
        return None
    kept = [place for place, row in enumerate(rows) if row]
    ends = {kept[0], kept[-1]}
    if not any(_numbered_every(first, kept, numbered, ends, every) for every in MARGIN_EVERY):
        return None
    # one number alone is too little to tell a read from a file's own text,
    # unless it is where a read puts one
    if len(numbered) < 2 and (first + numbered[0]) % MARGIN_EVERY[0]:
        return None
    return rows, first, numbered


def _numbered_every(first: int, kept: list[int], numbered: list[int], ends: set[int],
                    every: int) -> bool:
    """Whether the rows ``numbered`` are those a read numbering every
    ``every``'th line shows: each such line it holds, and else only its
    first and last."""
    marked = set(numbered)
    for place in kept:
        line = first + place
        on = line % every == 0
        if on and place not in marked:
            return False
        if not on and place in marked and place not in ends:
            return False
    return True


def margin_numbers(text: str) -> Numbered | None:
    """The numbering when ``text`` (``\\n`` breaks) is lines as a model is
    shown a read: each line as it is, but for the first and last line shown
    and every tenth (or hundredth, in a long read), which follow their number
    and a tab, each number its line's place counted from the first;
    ``None`` otherwise."""
    found = _margin_rows(text)
    if found is None:
        return None
    rows, first, _ = found
    return Numbered(first, len(rows))


def numbering_said(field: str, text: str) -> str:
    """How ``field``'s ``text`` (``\\n`` breaks) carries a read's numbers."""
    if len(_READ_FILE_NUMBER.findall(text)) == _line_count(text):
        return f"every line of {field} starts with a line number and a tab"
    return (f"lines of {field} start with a read's margin (the line's number and a tab, on "
            "the first, last and every tenth line)")


def strip_margin(text: str) -> str:
    """``text`` without read_file's numbers: every line's ``N<TAB>`` when
    all carry one, else those of a read's margin (each at its place)."""
    body = text.removesuffix("\n")
    rows = body.split("\n")
    numbers = _READ_FILE_NUMBER.findall(body)
    if len(numbers) == len(rows):
        return _READ_FILE_NUMBER.sub("", text)
    found = _margin_rows(text)
    if found is None:
        return text
    _, first, numbered = found
    for place in numbered:
        rows[place] = rows[place][len(str(first + place)) + 1:]
    return "\n".join(rows) + text[len(body):]


def strip_line_numbers(old: str) -> str | None:
    """``old`` (``\\n`` breaks) without line-number prefixes in any read
    tool's style, when every line has one and the numbers count up by one,
    or without the margin of a read as a model is shown it; ``None``
    otherwise."""
    if margin_numbers(old) is not None:
        return strip_margin(old)
    if not old.lstrip(" \t")[:2].lstrip("L")[:1].isdigit():
        return None
    if _counting_up(_ANY_NUMBER.findall(old), _line_count(old)) is None:
        return None
    return _ANY_NUMBER.sub("", old)


# -- write_file ------------------------------------------------------------------


def check_write(ctx: ToolContext, rel: str, content: str,
                replacing: os.stat_result | None, pinned: Pinned | None = None) -> list[str]:
    """Refuse ``content`` for ``rel`` when it is certainly a mistake (see
    the module's docstring); the warnings for what may be one.  ``replacing``
    is the file being overwritten, ``None`` for a new file; ``pinned`` the
    write's pinned location, where the file replaced is read to compare."""
    existing: str | None = None
    # (each look's own first test, made here: most content passes all three
    # without a call)
    numbered = read_file_numbers(content) if "\t" in content else None
    if numbered is not None and posixpath.splitext(rel)[1].lower() not in TABULAR:
        existing = _existing_text(ctx, pinned, replacing)
        if existing is None or read_file_numbers(existing) is None:
            raise _numbered(rel, numbered, content, replacing is not None)
    inner = fenced(content, rel) if content[:1] in _FENCE_FIRST else None
    if inner is not None:
        if existing is None:
            existing = _existing_text(ctx, pinned, replacing)
        if existing is None or fenced(existing, rel) is None:
            raise _fence(rel, content, inner, replacing is not None)
    placeholders = placeholder_lines(content)
    worded: list[tuple[int, str]] = []
    if replacing is not None:
        # an elision in words is looked for only where the content is at most
        # half the size of the file it replaces (characters <= bytes): the
        # scan costs a regex step per comment character, skipped on rewrites
        if len(content) * 2 <= replacing.st_size:
            worded = [found for found in elided_in_words(content) if found not in placeholders]
        if placeholders or worded:
            if existing is None:
                existing = _existing_text(ctx, pinned, replacing)
            _check_elision(rel, content, Elisions(placeholders, worded), existing,
                           replacing.st_size)
    # (a backslash found first by memchr: "\\n" is looked for a step per
    # character or two)
    if not placeholders and not worded and ("\\" not in content or "\\n" not in content):
        return []  # what _warnings would say: nothing
    return _warnings(content, min(placeholders + worded, default=None))


def warnings_alone(content: str, replacing_size: int) -> list[str] | None:
    """What :func:`check_write` says of ``content`` replacing a file of
    ``replacing_size`` bytes where it would read nothing of that file (no
    numbered, fenced or elided text to compare with it, no elision in words
    looked for): its warnings; ``None`` where it may read the file (ask
    :func:`check_write` with the write's pinned entry)."""
    # a one-character look first (memchr: a step per 16 or 32 characters), the
    # longer strings scanned for (a step each few characters) only where it finds one
    if "\t" in content or content[:1] in _FENCE_FIRST or \
            ("." in content and "..." in content) or \
            "\u2026" in content or len(content) * 2 <= replacing_size:
        return None
    if "\\" not in content or "\\n" not in content:
        return []
    return _warnings(content, None)


def _existing_text(ctx: ToolContext, pinned: Pinned | None,
                   info: os.stat_result | None) -> str | None:
    """The text of the file being replaced, if it is small enough to compare
    and is UTF-8 text; ``None`` otherwise.  Read from the write's pinned
    entry, and only if it is still the file the write decided on."""
    if pinned is None or info is None or info.st_size > ctx.limits.max_edit_file_bytes:
        return None
    try:
        data, _ = pinned.read(info.st_size, expect=info)
        return data.decode("utf-8")
    except Refusal:  # STALE: not the file write_file decided on, nothing to compare
        return None
    except (OSError, UnicodeDecodeError):
        return None


SUGGESTED_CONTENT = 64 * 1024  # characters of content a suggested call repeats, at most
_MARKUP = frozenset({".md", ".markdown", ".mdx", ".rmd", ".qmd", ".rst", ".txt", ".adoc"})
# The leading blanks are taken possessively: backtracking through each of a
# megabyte of spaces to try the fence again made a write of them 10x slower.
_FENCE = re.compile(r"\A[ \t]*+(```+|~~~+)[ \t]*[\w+#.-]*[ \t]*\r?\n")
_FENCE_FIRST = frozenset(" \t`~")  # the characters a text _FENCE matches can start with


def fenced(text: str, rel: str) -> str | None:
    """The text inside a Markdown code fence that wraps all of ``text``
    (the fence line first, its closing line last), for a file that is not
    itself markup; ``None`` when ``text`` is not so wrapped."""
    if text[:1] not in _FENCE_FIRST:  # what _FENCE.match needs first, by one test
        return None
    if "`" not in text and "~" not in text:  # (memchr: no step per leading blank)
        return None
    opening = _FENCE.match(text)
    if opening is None or posixpath.splitext(rel)[1].lower() in _MARKUP:
        return None
    fence = opening.group(1)
    body = text[opening.end():].rstrip(" \t\r\n")
    if not body.endswith(fence):
        return None
    inner = body[:-len(fence)]
    if inner and not inner.endswith("\n"):
        return None  # the closing fence is not on a line of its own
    if fence in inner:
        return None  # a fence inside: several blocks, not one wrapper
    return inner.replace("\r\n", "\n") if "\r\n" in text else inner


def _suggested_write(rel: str, content: str, replacing: bool) -> dict[str, Any]:
    if len(content) > SUGGESTED_CONTENT:
        return {}
    args: dict[str, Any] = {"path": rel, "content": content}
    if replacing:
        args["overwrite"] = True
    return {"suggested_tool": "write_file", "suggested_args": args}


def _fence(rel: str, content: str, inner: str, replacing: bool) -> Refusal:
    last = content.rstrip("\r\n").count("\n") + 1
    return Refusal(Code.INVALID_ARGUMENT,
                   f"content is wrapped in a Markdown code fence (lines 1 and {last}); "
                   f"{_said(rel)} "
                   "would begin and end with those fence lines; nothing was written",
                   "Send only the file's text, without the ``` lines around it.",
                   details={"path": rel, "field": "content", "lines": [1, last]},
                   kind=Kind.MARKDOWN_FENCE, **_suggested_write(rel, inner, replacing))


def _numbered(rel: str, numbered: Numbered, content: str, replacing: bool) -> Refusal:
    last = numbered.first + numbered.lines - 1
    body = content.replace("\r\n", "\n")
    stripped = strip_margin(body)
    return Refusal(Code.INVALID_ARGUMENT,
                   f"{numbering_said('content', body)} ({numbered.first} to {last}), as "
                   f"read_file shows lines; {_said(rel)} would contain those numbers; nothing was "
                   "written",
                   "Send content without the line-number prefixes read_file adds, exactly as "
                   "the file should read.",
                   details={"path": rel, "field": "content", "firstNumber": numbered.first,
                            "lines": numbered.lines}, kind=Kind.LINE_NUMBER_PREFIX,
                   **_suggested_write(rel, stripped, replacing))


class Elisions(NamedTuple):
    """The lines of a write's content that stand for code left out."""

    placeholders: list[tuple[int, str]]  # with an ellipsis and a listed phrase
    worded: list[tuple[int, str]]  # in words only: refused when at least half is lost

    def new(self, kept: set[str]) -> Elisions:
        """Those the file does not have itself (``kept``: its stripped lines)."""
        return Elisions([found for found in self.placeholders if found[1].strip() not in kept],
                        [found for found in self.worded if found[1].strip() not in kept])


def _lost_lines(existing: str, content: str) -> tuple[int, int]:
    """How many of the non-empty lines of ``existing`` (counted with their
    repeats) ``content`` does not have, and how many there are."""
    before = Counter(stripped for line in existing.splitlines() if (stripped := line.strip()))
    after = Counter(line.strip() for line in content.splitlines())
    return (before - after).total(), before.total()


def _elision_line(content: str, elisions: Elisions, existing: str | None,
                  existing_bytes: int) -> tuple[tuple[int, str], int, int | None] | None:
    """The placeholder line to refuse an overwrite for, with the lines lost
    and the file's lines (``None``: judged by size); ``None``: no refusal."""
    if existing is None:  # too large to compare, or not text: judge by size
        if len(content.encode("utf-8")) * 2 > existing_bytes:
            return None
        return (elisions.placeholders + elisions.worded)[0], 0, None
    new = elisions.new({line.strip() for line in existing.splitlines()})
    lost, total = _lost_lines(existing, content)
    if lost < LOST_LINES:
        return None
    if new.placeholders and lost * 10 >= total:
        return new.placeholders[0], lost, total
    if new.worded and lost * 2 >= total:
        return new.worded[0], lost, total
    return None


def _check_elision(rel: str, content: str, elisions: Elisions, existing: str | None,
                   existing_bytes: int) -> None:
    """Refuse an overwrite whose placeholder line stands for lines of the
    file that would be lost."""
    found = _elision_line(content, elisions, existing, existing_bytes)
    if found is None:
        return
    (line_no, line), lost, total = found
    said = _said(rel)
    amount = f"{lost} of the {total} non-blank lines of {said}" if total else f"most of {said}"
    details: dict[str, object] = {"path": rel, "field": "content",
                                  "contentLine": line_no + 1, "placeholder": line.strip()}
    if total:
        details.update(lostLines=lost, fileLines=total)
    raise Refusal(Code.INVALID_ARGUMENT,
                  f"content line {line_no + 1} ({line.strip()!r}) stands for code it leaves out: "
                  f"{amount} would be lost; nothing was written",
                  f"Use edit_file to change only part of {_said(rel)}, or write the whole file "
                  "without placeholders.", details=details, kind=Kind.PLACEHOLDER)


def _warnings(content: str, placeholder: tuple[int, str] | None) -> list[str]:
    """Cheap, non-blocking signs of a damaged write (``placeholder``: the
    first line that may stand for code left out)."""
    out = []
    if "\n" not in content and "\\n" in content and len(content) > 80:
        out.append("the content has no line breaks but contains literal \\n sequences; if it was "
                   "escaped twice, write it again with real line breaks")
    if placeholder is not None:
        out.append(f"the content contains the placeholder line {placeholder[1].strip()!r}; "
                   "if code was left out, write the whole file")
    return out
