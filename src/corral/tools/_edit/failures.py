"""The refusals of an edit that cannot be made as asked, in words a model
can act on: oldText not found (with the closest text and what differs, or
what the model most likely did: line-number prefixes, escaped line breaks,
a final line break the file lacks, an edit already made), found too often,
or found only inside its own newText.

Pure logic, no I/O: what needs the filesystem (another file that holds
oldText) comes in as a function, what the Toolbox remembers as
:class:`~corral.tools._edit.state.Applied`.  Every suggested call is a
read_file of lines that exist.
"""

from __future__ import annotations

import bisect
import re
import unicodedata
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any, Literal, NamedTuple

from .content import (TABULAR, Numbered, numbering_said, placeholder_lines, read_file_numbers,
                      strip_line_numbers, strip_margin)
from .budget import Work
from .diagnosis import Diagnosis, Difference, diagnose
from .match import (MAX_LISTED, Search, applied_copies, distinctive, tab_indented,
                    occurrences, search)
from .state import Applied
from .text import Lines
from .._refusals.catalogue import Code, Kind, Refusal
from .._runtime.answer import AnswerPath
from .._runtime.answer import sentence_path as _said

__all__ = ["Attempt", "Memory", "Elsewhere", "refusal", "missing_old_text", "ambiguous",
           "too_many", "empty_old_text", "applied_inside", "placeholder_in_new_text", "listed",
           "TOLERANT", "unclear_indentation", "numbered_new_text"]

TOLERANT = {"trailing_whitespace": "trailing whitespace",
            "indentation": "indentation and trailing whitespace",
            "whitespace": "indentation and runs of spaces inside lines"}
_PRIORITY = ("line_number_prefix", "escaped", "elision", "content", "extra_lines",
             "missing_lines", "final_newline", "quotes", "lookalike", "tabs_vs_spaces",
             "indentation", "spacing", "trailing_whitespace", "line_endings")
_ESCAPES = re.compile(r"\\(\\|n|t|r|\"|')")
_ESCAPED = {"\\": "\\", "n": "\n", "t": "\t", "r": "\r", '"': '"', "'": "'"}

Elsewhere = Callable[[str], "str | None"]  # normalized oldText -> another file holding it


@dataclass(slots=True)
class Attempt:
    """One edit of a call, as its refusals name it (never changed once
    made; not a frozen dataclass, whose ``__init__`` pays a call per field,
    as one is made for every edit)."""

    rel: str
    index: int
    multi: bool
    old: str
    new: str
    replace_all: bool
    repeated: int = 0  # how often this call failed the same way before

    def refuse(self, code: Code, message: str, hint: str, *, kind: Kind,
               details: dict[str, Any], **suggestion: Any) -> Refusal:
        return refusal(self.repeated, code, message, hint, kind=kind, details=details,
                       **suggestion)

    @property
    def label(self) -> str:
        return f"edits[{self.index}]: " if self.multi else ""

    @property
    def field(self) -> str:
        return f"edits[{self.index}].oldText" if self.multi else "oldText"

    def facts(self, **more: Any) -> dict[str, Any]:
        out: dict[str, Any] = {"path": self.rel, "field": self.field}
        if self.multi:
            out["edit"] = self.index
        return {**out, **more}

    @property
    def can_suggest(self) -> bool:
        """A read_file of the file only makes sense as it is on disk: for the
        first edit, which sees it so."""
        return self.index == 0


REPEATED = "Do not send this call again unchanged, it failed the same way before; "


def refusal(repeated: int, code: Code, message: str, hint: str, *, kind: Kind,
            details: dict[str, Any], **suggestion: Any) -> Refusal:
    """An edit's refusal; for a call that failed the same way before, with
    a hint that says so (``details.repeated``: how often it was sent)."""
    if repeated:
        details = {**details, "repeated": repeated + 1}
        hint = REPEATED + hint[0].lower() + hint[1:]
    return Refusal(code, message, hint, details=details, kind=kind, **suggestion)


def _facts(attempt: Attempt, text: Lines, **more: Any) -> dict[str, Any]:
    """The attempt's facts and the file's line endings when they are not LF."""
    out = attempt.facts(**more)
    style = text.style()
    if style not in ("lf", "none"):
        out["lineEndings"] = style
    return out


def _read_suggestion(rel: str, first: int, last: int, allowed: bool) -> dict[str, Any]:
    if not allowed:
        return {}
    return {"suggested_tool": "read_file",
            "suggested_args": {"path": rel, "offset": first, "limit": last - first + 1}}


def distinct(numbers: Iterable[int]) -> list[int]:
    out: list[int] = []
    for n in numbers:
        if not out or out[-1] != n:
            out.append(n)
    return out


def listed(numbers: list[int], more: bool, shown: int = 10) -> str:
    """Line numbers for a sentence: the first few, then how the list goes on."""
    text = ", ".join(map(str, numbers[:shown]))
    return text + (", ..." if more or len(numbers) > shown else "")


def unescape(old: str) -> str | None:
    """``old`` with ``\\n``, ``\\t``, ``\\"`` escape sequences turned into the
    characters, when it has escaped newlines and no real ones."""
    if "\n" in old or "\\n" not in old:
        return None
    return _ESCAPES.sub(lambda m: _ESCAPED[m.group(1)], old)


# -- found too often, or only inside newText ----------------------------------------


def ambiguous(attempt: Attempt, lines: Lines, found: Search) -> Refusal:
    starts = distinct(lines.line_index(r.start) + 1 for r in found.regions)[:MAX_LISTED]
    shown = listed(starts, found.count > len(found.regions) or len(starts) == MAX_LISTED)
    facts = attempt.facts(occurrences=found.count, lines=starts)
    rel, label = attempt.rel, attempt.label
    if found.strategy in TOLERANT:
        return attempt.refuse(
            Code.AMBIGUOUS, f"{label}oldText does not occur exactly in {_said(rel)}; ignoring "
            f"{TOLERANT[found.strategy]} it matches {found.count} places (lines "
            f"{shown}), and a tolerant match must be unique",
            "Copy oldText exactly from one of those places, whitespace included, with "
            "enough neighbouring lines to match once.",
            kind=Kind.MULTIPLE_TOLERANT_MATCHES, details={**facts,
            "matchStrategy": found.strategy})
    where = (f"set replaceAll: true in edits[{attempt.index}]" if attempt.multi
             else "pass replaceAll: true")
    return attempt.refuse(
        Code.AMBIGUOUS, f"{label}oldText occurs {found.count} times in {_said(rel)} "
        f"(lines {shown}); it must occur exactly once",
        f"Add neighbouring lines to oldText until it matches once, or {where} to "
        f"replace all {found.count}.", kind=Kind.MULTIPLE_MATCHES, details=facts)


def unclear_indentation(attempt: Attempt, lines: Lines, found: Search) -> Refusal:
    """newText's indentation fits both the file's and oldText's, and the two
    readings would write different text: the lines are named, and the
    suggested call (oldText copied from the file) writes newText as typed."""
    region = found.regions[0]
    first = lines.line_index(region.start) + 1
    matched = lines.normalized[region.start:region.end]
    numbers = ", ".join(map(str, found.unclear_indent[:10]))
    more = ", ..." if len(found.unclear_indent) > 10 else ""
    label, rel = attempt.label, attempt.rel
    message = (f"{label}oldText matches {_said(rel)} at line {first} only ignoring "
               f"{TOLERANT.get(found.strategy, 'whitespace')}, and the indentation of newText "
               f"line{'s' if len(found.unclear_indent) > 1 else ''} {numbers}{more} fits both the "
               "file's and oldText's, so it is unclear what to write; nothing was written")
    field = f"edits[{attempt.index}].newText" if attempt.multi else "newText"
    facts = {**attempt.facts(), "field": field, "lines": [first, lines.line_of(
        lines.to_original(max(region.start, region.end - 1)))],
        "newTextLines": found.unclear_indent[:MAX_LISTED], "matchStrategy": found.strategy,
        "fileText": matched if len(matched) <= 4096 else matched[:4096]}
    suggest: dict[str, Any] = {}
    if not attempt.multi and len(matched) <= 4096:
        args: dict[str, Any] = {"path": rel, "oldText": matched, "newText": attempt.new}
        suggest = {"suggested_tool": "edit_file", "suggested_args": args}
    return attempt.refuse(
        Code.AMBIGUOUS, message, "Copy oldText exactly from the file (details.fileText) and "
        "write newText with the indentation it must have in the file.",
        kind=Kind.UNCLEAR_INDENTATION, details=facts, **suggest)


def too_many(attempt: Attempt, count: int, limit: int) -> Refusal:
    return attempt.refuse(
        Code.TOO_LARGE, f"{attempt.label}oldText occurs {count} times in "
        f"{_said(attempt.rel)}, more than the {limit} one edit replaces",
        "Replace a more specific oldText, or rewrite the file with write_file.",
        kind=Kind.TOO_MANY_REPLACEMENTS, details=attempt.facts(occurrences=count,
        limit=limit))


def empty_old_text(attempt: Attempt) -> Refusal:
    return attempt.refuse(
        Code.INVALID_ARGUMENT, f"{attempt.label}oldText is empty, but {_said(attempt.rel)} "
        "is not", "Put the text to replace in oldText; to insert, include the line "
        "before or after the insertion point in both oldText and newText.",
        kind=Kind.EMPTY_OLD_TEXT, details={"path": attempt.rel, "field": attempt.field})


def applied_inside(attempt: Attempt, lines: Lines, found: Search) -> Refusal | None:
    """The refusal to make again an edit whose newText (containing oldText)
    is already where it would go: making it twice would duplicate text."""
    old_n, new_n = lines.normalize(attempt.old), lines.normalize(attempt.new)
    copies = applied_copies(lines.normalized, [r.start for r in found.regions], old_n, new_n)
    if not copies or len(copies) != found.count:
        return None
    first = lines.line_index(copies[0]) + 1
    last = lines.line_index(copies[0] + len(new_n.rstrip("\n"))) + 1
    return attempt.refuse(
        Code.NOT_FOUND, f"{attempt.label}oldText occurs in {_said(attempt.rel)} only inside "
        f"newText (line {first}): this edit looks already made, and making it again "
        "would duplicate text", f"Do not repeat this edit; read lines {first}-{last} "
        "to check it if unsure.",
        kind=Kind.ALREADY_APPLIED, details={**attempt.facts(occurrences=found.count),
        "lines": [first, last]},
        **_read_suggestion(attempt.rel, first, last, attempt.can_suggest))


_NUMBERED_LINE = re.compile(r"(\d+)\t")


def numbered_new_text(attempt: Attempt, lines: Lines, found_at: int) -> Refusal | None:
    """The refusal of a newText that carries read_file's ``N<TAB>`` line
    numbers when oldText does not: those numbers would be written into the
    file.  ``found_at`` is the line (1-based) where oldText matched."""
    if "\t" not in attempt.new or attempt.rel.lower().endswith(TABULAR):
        return None  # (every number read_file adds is followed by a tab)
    new_n = lines.normalize(attempt.new)
    numbered = read_file_numbers(new_n)
    if numbered is None:
        single = _NUMBERED_LINE.match(new_n)
        if single is None or "\n" in new_n.rstrip("\n") or int(single.group(1)) != found_at:
            return None
        numbered = Numbered(found_at, 1)
    if read_file_numbers(lines.normalize(attempt.old)) is not None or \
            _NUMBERED_LINE.match(lines.normalize(attempt.old)):
        return None  # oldText has them too: the file's own text (a numbered listing)
    last = numbered.first + numbered.lines - 1
    field = f"edits[{attempt.index}].newText" if attempt.multi else "newText"
    stripped = _NUMBERED_LINE.sub("", new_n) if numbered.lines == 1 else strip_margin(new_n)
    suggestion: dict[str, Any] = {}
    if not attempt.multi and len(stripped) + len(attempt.old) <= 64 * 1024:
        suggestion = {"suggested_tool": "edit_file", "suggested_args": {
            "path": attempt.rel, "oldText": attempt.old, "newText": stripped,
            **({"replaceAll": True} if attempt.replace_all else {})}}
    span = f"line {numbered.first}" if numbered.lines == 1 else \
        f"lines {numbered.first} to {last}"
    return attempt.refuse(
        Code.INVALID_ARGUMENT, f"{attempt.label}{numbering_said('newText', new_n)} ({span}), "
        f"as read_file shows lines; {_said(attempt.rel)} would contain those "
        "numbers; nothing was written",
        "Send newText without the line-number prefixes read_file adds, exactly as the file "
        "should read.", kind=Kind.LINE_NUMBER_PREFIX,
        details={"path": attempt.rel, "field": field, "firstNumber": numbered.first,
                 "lines": numbered.lines}, **suggestion)


def placeholder_in_new_text(attempt: Attempt, lines: Lines) -> Refusal | None:
    """The refusal of a newText line that stands for code it leaves out
    (``# ... rest of the code ...``) unless that line is in oldText or the
    file already."""
    if "..." not in attempt.new and "…" not in attempt.new:
        return None  # what placeholder_lines looks for first, without a copy
    found = placeholder_lines(lines.normalize(attempt.new))
    if not found:
        return None
    known = {x.strip() for x in lines.normalize(attempt.old).split("\n")}
    in_file: set[str] | None = None
    for j, line in found:
        if line.strip() in known:
            continue
        if in_file is None:
            in_file = {x.strip() for x in lines.contents}
        if line.strip() in in_file:
            continue
        field = f"edits[{attempt.index}].newText" if attempt.multi else "newText"
        return attempt.refuse(
            Code.INVALID_ARGUMENT, f"{attempt.label}newText line {j + 1} "
            f"({line.strip()!r}) stands for code it leaves out; edit_file writes "
            "newText as it is, so that code would be lost",
            "Write out the full text in newText; to keep lines unchanged, leave them "
            "out of both oldText and newText.",
            kind=Kind.PLACEHOLDER, details={"path": attempt.rel, "field": field,
            "newTextLine": j + 1})
    return None


# -- not found ------------------------------------------------------------------------


class Memory(NamedTuple):
    """What the Toolbox knows of this call: the same call made before
    (``earlier``), and the digest of the file as it is now."""

    earlier: Applied | None
    current_sha256: str


def missing_old_text(attempt: Attempt, lines: Lines, work: Work, memory: Memory,
              elsewhere: Elsewhere, note: str | None = None) -> Refusal:
    """Why ``attempt.old`` is not in ``lines``, and what to do."""
    refusal = _already_applied(attempt, lines, memory, work)
    if refusal is not None:
        return refusal
    old_n = lines.normalize(attempt.old)
    for fixed, difference, hint in _likely_mistakes(attempt, lines):
        found = search(lines, fixed, attempt.new, MAX_LISTED, work)
        if found is not None and found.count:
            return _fixed_matches(attempt, lines, found, difference, hint)
        diagnosis = diagnose(lines, lines.normalize(fixed), fixed, work)
        diagnosis.differences.insert(0, difference)
        return _no_match(attempt, lines, diagnosis, hint, None, note)
    diagnosis = diagnose(lines, old_n, attempt.old, work)
    other = elsewhere(old_n) if attempt.can_suggest else None
    return _no_match(attempt, lines, diagnosis, None, other, note)


def _already_applied(attempt: Attempt, lines: Lines, memory: Memory,
                     work: Work) -> Refusal | None:
    """The refusal when newText is already where oldText was: this same call
    made before through this Toolbox, or a distinctive newText found."""
    new_n = lines.normalize(attempt.new)
    earlier = memory.earlier
    rel, label = attempt.rel, attempt.label
    if earlier is not None and earlier.result_sha256 == memory.current_sha256:
        first, last = earlier.lines
        return attempt.refuse(
            Code.NOT_FOUND, f"{label}oldText does not occur in {_said(rel)}: an earlier call "
            f"made this same edit (at line {first}), and {_said(rel)} is as it left it",
            "Do not repeat this edit: it is made; go on with the next change.",
            kind=Kind.ALREADY_APPLIED, details=_facts(attempt, lines,
            lines=[first, last], currentSha256=memory.current_sha256),
            **_read_suggestion(rel, first, last, attempt.can_suggest))
    if not new_n.strip() or (earlier is None and not distinctive(new_n)):
        return None
    count, starts = occurrences(lines.normalized, new_n, 1)
    work.step()
    if not count or (count > 1 and not attempt.replace_all):
        return None
    first = lines.line_index(starts[0]) + 1
    last = lines.line_index(starts[0] + len(new_n.rstrip("\n"))) + 1
    return attempt.refuse(
        Code.NOT_FOUND, f"{label}oldText does not occur in {_said(rel)}, but newText is "
        f"already there (line {first}): this edit looks already made",
        f"Do not repeat this edit; read lines {first}-{last} to check it if unsure.",
        kind=Kind.ALREADY_APPLIED, details=_facts(attempt, lines, lines=[first, last]),
        **_read_suggestion(rel, first, last, attempt.can_suggest))


_FORMS: tuple[tuple[Literal["NFC", "NFD"], str], ...] = (("NFC", "NFD"), ("NFD", "NFC"))


def _likely_mistakes(attempt: Attempt, lines: Lines) -> list[tuple[str, Difference, str]]:
    """oldText as the model most likely meant it, when it shows a known
    mistake: (the fixed text, the difference, the hint)."""
    old, old_n = attempt.old, lines.normalize(attempt.old)
    out = []
    numbered = strip_line_numbers(old_n)
    if numbered is not None and numbered != old_n:
        out.append((numbered, Difference(
            "line_number_prefix", "its lines start with line numbers, which read_file shows but "
            "the file does not contain"), ("Send oldText without the line-number prefixes, exactly "
            "as the file has it.")))
    escaped = unescape(old)
    if escaped is not None and escaped != old_n:
        out.append((escaped, Difference(
            "escaped", "it has escape sequences such as \\n where the file has line breaks"),
            ("Send real line breaks and tabs in oldText and newText, not \\n or \\t escape "
            "sequences.")))
    ending = _final_newline(old_n, lines)
    if ending is not None:
        out.append(ending)
    if not old_n.isascii():
        for form, other in _FORMS:
            fixed = unicodedata.normalize(form, old_n)
            if fixed != old_n and fixed in lines.normalized:
                out.append((fixed, Difference(
                    "normalization", f"its accented letters are in Unicode {other} form "
                    f"(a letter and a combining mark) where the file has them in {form} "
                    "(one character each); they look the same but are different text"
                    if form == "NFC" else
                    f"its accented letters are in Unicode {other} form (one character each) "
                    f"where the file has them in {form} (a letter and a combining mark); they "
                    "look the same but are different text"),
                    f"Send oldText and newText in Unicode {form} form, as the file has them."))
                break
    return out


def _final_newline(old_n: str, lines: Lines) -> tuple[str, Difference, str] | None:
    """oldText without the line breaks it has after the file's end."""
    text = lines.normalized
    wanted = len(old_n) - len(old_n.rstrip("\n"))
    has = len(text) - len(text.rstrip("\n"))
    if wanted <= has:
        return None
    fixed = old_n[:len(old_n) - (wanted - has)]
    if not fixed.strip("\n") or not text.endswith(fixed):
        return None
    last = lines.count()
    if has == 0:
        what = (f"it ends with {'a line break' if wanted == 1 else f'{wanted} line breaks'}, "
                f"but the file ends after line {last} without one")
    else:
        what = f"it ends with {wanted} line breaks, but the file ends with {has}"
    return fixed, Difference("final_newline", what, last), (
        "End oldText where the file ends, without the extra line break; leave it out of newText "
        "too unless you mean to add one.")


def _fixed_matches(attempt: Attempt, lines: Lines, found: Search, difference: Difference,
                   hint: str) -> Refusal:
    starts = distinct(lines.line_index(r.start) + 1 for r in found.regions)
    where = listed(starts, found.count > len(found.regions))
    fixes = {"line_number_prefix": "without them", "escaped": "with real line breaks",
             "final_newline": "without it,", "normalization": "in the file's form"}
    message = (f"{attempt.label}oldText does not occur in {_said(attempt.rel)}: {difference.text}; "
               f"{fixes[difference.kind]} it matches line {where}")
    suggestion: dict[str, Any] = {}
    if difference.kind == "normalization" and not attempt.multi and found.count == 1:
        form: Literal["NFC", "NFD"] = "NFC" if unicodedata.normalize(
            "NFC", lines.normalize(attempt.old)) in lines.normalized else "NFD"
        suggestion = {"suggested_tool": "edit_file", "suggested_args": {
            "path": attempt.rel, "oldText": unicodedata.normalize(form, attempt.old),
            "newText": unicodedata.normalize(form, attempt.new)}}
    return attempt.refuse(
        Code.NOT_FOUND, message, hint,
        kind=Kind.NO_MATCH, details=_facts(attempt, lines, lines=starts,
        differences=[difference.as_dict()]), **suggestion)


_HINTS = {
    "elision": "Put the file's full text in oldText, without placeholders such as '...'; to "
               "leave lines out, make two smaller edits instead.",
    "content": "Copy oldText exactly from {where} of the file, then make your change in "
               "newText.",
    "quotes": "Copy oldText from {where} of the file: it uses other quote characters.",
    "lookalike": "Copy oldText from {where} of the file: it uses other look-alike characters "
                 "(dashes, spaces).",
    "tabs_vs_spaces": "Indent oldText as the file does ({unit}); copy it from {where} of the "
                      "file.",
    "indentation": "Indent oldText exactly as the file does; copy it from {where} of the file.",
    "spacing": "Copy oldText from {where} of the file, keeping its spacing.",
    "trailing_whitespace": "Copy oldText from {where} of the file, including the spaces at the "
                           "ends of its lines.",
    "final_newline": "Copy oldText from {where} of the file: the file ends without a final "
                     "line break, so oldText must too.",
}
for _kind in ("extra_lines", "missing_lines", "line_endings"):
    _HINTS[_kind] = _HINTS["content"]


def _closest_details(diagnosis: Diagnosis) -> dict[str, Any]:
    text = diagnosis.text
    closest: dict[str, Any] = {"startLine": diagnosis.start, "endLine": diagnosis.end,
                               "similarity": diagnosis.similarity}
    if len(text) > 8000:
        closest["text"], closest["textTruncated"] = text[:8000], True
    else:
        closest["text"] = text
    return closest


def _sentence(diffs: list[Difference], span: str) -> str:
    # a tolerated line-ending difference is in details, not in the sentence
    told = [d for d in diffs if d.kind != "line_endings"]
    shown = [d.text for d in told][:2]
    if not shown:
        return f"; the closest text is {span}"
    more = len(told) - len(shown)
    text = f"; the closest text, {span}, differs: " + "; ".join(shown)
    if more > 0:
        text += f" (and {more} more difference{'s' if more > 1 else ''})"
    return text


def _no_match(attempt: Attempt, lines: Lines, diagnosis: Diagnosis, hint: str | None,
              other: str | None, note: str | None) -> Refusal:
    rel = attempt.rel
    diffs = sorted(diagnosis.differences,
                   key=lambda d: (_PRIORITY.index(d.kind), d.line or 0, d.old_line or 0))
    details = _facts(attempt, lines)
    if diffs:
        details["differences"] = [d.as_dict() for d in diffs[:20]]
    limits = [x for x in (note, diagnosis.note) if x]
    if limits:
        details["limited"] = "; ".join(limits)
    message = f"{attempt.label}oldText does not occur in {_said(rel)}"
    partial = None if diagnosis.start is not None or diffs else _partial_in_long_lines(
        attempt, lines)
    if diagnosis.start is not None:
        details["closest"] = _closest_details(diagnosis)
        said, hint, suggestion = _near(attempt, lines, diagnosis, diffs, hint)
    elif partial is not None:
        details["nearest"] = partial.as_dict()
        said, hint, suggestion = partial.said(), partial.hint(rel), partial.suggestion(
            rel, attempt.can_suggest)
    else:
        said, hint, suggestion = _far(attempt, diffs, hint)
        longest = max(map(len, lines.contents), default=0)
        if longest > LONG_LINE and not diffs:
            details["longestLine"] = longest
            said += f" (it has a line of {longest} characters, read cut)"
            hint = (f"{_said(rel)} has a line of {longest} characters (minified or generated), "
                    f"which "
                    "read_file shows cut: grep with regex false for a short, distinctive part "
                    "of the text to change shows the file's text around it; copy oldText from "
                    "there exactly.")
    message += said
    if other is not None:
        details["foundIn"] = AnswerPath(other)
        message += f"; it does occur in {other}"
        hint = f"Check the path: oldText is in {other}; pass that path if it is the file you meant."
        suggestion = {"suggested_tool": "read_file", "suggested_args": {"path": other}}
    return attempt.refuse(Code.NOT_FOUND, message, hint, kind=Kind.NO_MATCH, details=details,
                          **suggestion)


def _near(attempt: Attempt, lines: Lines, diagnosis: Diagnosis, diffs: list[Difference],
          hint: str | None) -> tuple[str, str, dict[str, Any]]:
    """What to say when some text is close: the sentence's end, the hint and
    the suggested read of that text."""
    a = diagnosis.start or 1
    b = diagnosis.end or a
    where = f"line {a}" if a == b else f"lines {a}-{b}"
    said = _sentence(diffs, where)
    if hint is None:  # the suggested read shows those lines: the hint names them
        unit = "with tabs" if tab_indented(lines) else "with spaces"
        hint = _HINTS.get(diffs[0].kind if diffs else "content",
                          _HINTS["content"]).format(where=where, unit=unit)
    return said, hint, _read_suggestion(attempt.rel, a, b, attempt.can_suggest)


LONG_LINE = 1000  # characters: past this a line is read cut, and closeness by lines says little
_PARTIAL_LEAST = 8  # characters of oldText found in place before it is worth naming
_EXCERPT_MORE = 40  # characters of the file shown past oldText's length
_EXCERPT_MOST = 600
_SHOWN_DIFFERENCE = 30
_GREP_PART = 200  # characters of the found part a suggested grep looks for


class Partial(NamedTuple):
    """Where the longest start (or end) of oldText occurs in a file with long
    lines: the line and column (1-based) of the found part, how much of
    oldText it is, the file's text there, and where the two part."""

    line: int
    column: int
    matched: int
    length: int
    from_start: bool
    places: int
    excerpt: str
    excerpt_column: int
    part: str
    file_goes_on: str
    old_goes_on: str
    longest_line: int

    def as_dict(self) -> dict[str, Any]:
        return {"line": self.line, "column": self.column, "matchedChars": self.matched,
                "oldTextChars": self.length, "part": "start" if self.from_start else "end",
                "places": self.places, "text": self.excerpt, "textColumn": self.excerpt_column,
                "longestLine": self.longest_line}

    def said(self) -> str:
        part = "start" if self.from_start else "end"
        where = f"line {self.line}, column {self.column}"
        if self.places > 1:
            where += f" (the first of {self.places} places)"
        text = (f"; its longest {part} found ({self.matched} of {self.length} characters) is at "
                f"{where}")
        if self.from_start:
            return text + (f", where the file goes on {_quoted(self.file_goes_on)} and oldText "
                           f"goes on {_quoted(self.old_goes_on)}")
        return text + (f", where the file has {_quoted(self.file_goes_on)} before it and "
                       f"oldText has {_quoted(self.old_goes_on)}")

    def hint(self, rel: str) -> str:
        return (f"{_said(rel)} has a line of {self.longest_line} characters (minified or "
                f"generated), "
                "which read_file shows cut: copy oldText exactly from details.nearest.text (the "
                f"file's text from line {self.line}, column {self.excerpt_column}), keeping it "
                "short and unique; grep with regex false shows the text around a part.")

    def suggestion(self, rel: str, allowed: bool) -> dict[str, Any]:
        """A grep for the part found (as literal text): it shows the file's
        text around it, where read_file would cut the line."""
        if not allowed:
            return {}
        return {"suggested_tool": "grep",
                "suggested_args": {"pattern": self.part[:_GREP_PART], "path": rel,
                                   "regex": False}}


def _quoted(text: str) -> str:
    return repr(text) if text else "(nothing: the text ends)"


def _partial_in_long_lines(attempt: Attempt, lines: Lines) -> Partial | None:
    """The longest start or end of oldText found in a file with a line past
    :data:`LONG_LINE` characters, or ``None`` (no such line, or less than
    :data:`_PARTIAL_LEAST` characters found).  A part found is found wherever
    a shorter one is, so each length is found by halving: a few scans in C."""
    contents = lines.contents
    longest = max(map(len, contents), default=0)
    if longest <= LONG_LINE:
        return None
    text, old = lines.normalized, lines.normalize(attempt.old)
    if len(old) < _PARTIAL_LEAST:
        return None
    head = _longest_found(text, old, from_start=True)
    tail = _longest_found(text, old, from_start=False)
    from_start = head >= tail
    matched = head if from_start else tail
    if matched < _PARTIAL_LEAST:
        return None
    part = old[:matched] if from_start else old[len(old) - matched:]
    at = text.find(part)
    places = min(text.count(part), 1000)
    starts = lines.nstarts
    line = _line_of(starts, at)
    column = at - starts[line - 1] + 1
    line_end = text.find("\n", at)
    line_end = len(text) if line_end < 0 else line_end
    if from_start:
        begin = at
        end = min(line_end, at + len(old) + _EXCERPT_MORE, at + _EXCERPT_MOST)
        file_goes_on = text[at + matched:min(line_end, at + matched + _SHOWN_DIFFERENCE)]
        old_goes_on = old[matched:matched + _SHOWN_DIFFERENCE]
    else:
        line_start = starts[line - 1]
        begin = max(line_start, at + matched - len(old) - _EXCERPT_MORE,
                    at + matched - _EXCERPT_MOST)
        end = at + matched
        file_goes_on = text[max(line_start, at - _SHOWN_DIFFERENCE):at]
        old_goes_on = old[max(0, len(old) - matched - _SHOWN_DIFFERENCE):len(old) - matched]
    return Partial(line, column, matched, len(old), from_start, places, text[begin:end],
                   begin - starts[line - 1] + 1, part, file_goes_on, old_goes_on, longest)


def _longest_found(text: str, old: str, *, from_start: bool) -> int:
    low, high = 0, len(old) - 1  # all of oldText is known not to occur
    while low < high:
        mid = (low + high + 1) // 2
        part = old[:mid] if from_start else old[len(old) - mid:]
        if part in text:
            low = mid
        else:
            high = mid - 1
    return low


def _line_of(starts: list[int], at: int) -> int:
    """The 1-based line holding position ``at`` of the normalized text."""
    return bisect.bisect_right(starts, at)


def _far(attempt: Attempt, diffs: list[Difference],
         hint: str | None) -> tuple[str, str, dict[str, Any]]:
    """What to say when nothing is close."""
    said = (": " + "; ".join(d.text for d in diffs[:2]) if diffs
            else ", and nothing in it is close")
    if hint is None:
        hint = (_HINTS["elision"] if diffs and diffs[0].kind == "elision" else
                "Read the file and copy the text to change into oldText exactly.")
    suggestion: dict[str, Any] = {}
    if attempt.can_suggest:
        suggestion = {"suggested_tool": "read_file", "suggested_args": {"path": attempt.rel}}
    return said, hint, suggestion
