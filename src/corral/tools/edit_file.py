"""edit_file: replace text in one existing file, in one call.

The read, the occurrence count, the construction of the new content and the
write all happen under the per-path lock, so concurrent edits of different
snippets of one file never lose one another.  The host is asked (an
:class:`EditRequest` with both digests, the count and the diff) before
anything is written; afterwards the file's identity *and* content are
checked again, so a swap or a change during authorization fails closed.
The write is atomic (``Root.write_bytes``: temporary file, fsync, rename)
and keeps the permission bits.

Decisions a host can rely on:

* **Bytes the model cannot see survive.**  The UTF-8 BOM, every untouched
  line's own terminator (CRLF, CR, LF, mixed), tabs, and a missing final
  newline.  newText's line breaks are written in the style of the line they
  land in, so an LF newText goes into a CRLF file as CRLF.
* **Matching** is exact first (line endings normalized, reported as
  ``line_endings``), then ignoring trailing whitespace, then indentation
  (newText re-indented the same way); a tolerant match is applied only when
  it is unique and the result says ``matchStrategy``.  See
  :mod:`corral.tools._edit_match`.
* **A final symlink** is followed when it stays inside the root (the core
  refuses one leading out).  Authorization names the file actually changed,
  its real root-relative path, and the result gives it as ``resolvedPath``.
* **Empty oldText** is accepted only for an empty file (no bytes, or only a
  BOM): newText becomes its content.  edit_file never creates a file; a
  missing path is ``NOT_FOUND`` from the boundary (with ``didYouMean``), and
  when oldText was empty and no close name exists its hint names write_file.
* **expectedSha256** that does not match is ``STALE`` with both digests.
  The changed lines are given when the expected version's text is known to
  this Toolbox (it was the base or result of an edit made through it, kept
  in a bounded cache); otherwise they are left out: a digest cannot be
  turned back into content, and a guess would mislead.
* **Hard links** are refused unless the Toolbox allows them; then the edited
  name gets a new inode (atomic replace) and the other names keep the old
  content: an edit never writes through a link.
* A failing call repeated unchanged against the same content gets a hint
  saying so (``details.repeated``).
"""

from __future__ import annotations

import json
import os
import posixpath
import re
import stat as st
from typing import Any

from ._classify import classify
from ._context import ToolContext, sha256_hex
from ._policy import Op
from ._edit_match import (MAX_LISTED, Diagnosis, Difference, Region, Search, Span,
                          applied_copies, apply_regions, compose, diagnose, distinctive,
                          indent_style, normalize_breaks, occurrences, placeholder_lines, remap,
                          search, strip_line_numbers, unescape)
from ._edit_state import memory_of
from ._edit_text import Lines, Undecodable, changed_lines, decode, encode, unified_diff
from ._refusal import Code, Refusal, sha256_mismatch, swapped
from ._registry import Suggests, ToolSpec, success_schema
from ._requests import EditRequest, ReadRequest

DESCRIPTION = (
    "Change an existing text file by replacing text, in one call. Pass oldText, an exact copy of "
    "the text to change (same indentation, tabs and spaces; WITHOUT the line number and tab "
    "read_file puts before each line), and newText, what replaces it (\"\" deletes it). oldText "
    "must occur exactly once: include a few neighbouring lines to make it unique, or pass "
    "replaceAll: true to replace every occurrence. The edit is applied at once (dryRun: true only "
    "previews the "
    "diff). For several changes to one file pass edits: [{oldText, newText, replaceAll}] "
    "instead; they apply in order (each sees the text the previous ones left), all or nothing. "
    "The result gives the file's new sha256, the lines where each change landed (numbers in the "
    "new file) and a unified diff, so there is no need to read the file back; pass that sha256 "
    "as expectedSha256 next time to make sure nobody changed the file in between (optional). "
    "Line endings, BOM, tabs and a missing final newline are kept; newText's line breaks take "
    "the file's style. If oldText differs from the file only in trailing spaces or indentation "
    "(e.g. spaces where the file has tabs) and that looser match is unique, it is applied, "
    "newText is re-indented to match, and matchStrategy says so. A failure says what differs "
    "and where, with the file's actual text. Only existing UTF-8 text files; use write_file to "
    "create a file or to replace all of it."
)

_TEXT_LIMIT = 16 * 1024 * 1024
_EDIT_ITEM: dict[str, Any] = {
    "type": "object",
    "properties": {
        "oldText": {"type": "string", "maxLength": _TEXT_LIMIT,
                    "description": "Exact text to replace, as in the file."},
        "newText": {"type": "string", "maxLength": _TEXT_LIMIT,
                    "description": "Text that replaces oldText."},
        "replaceAll": {"type": "boolean", "default": False,
                       "description": "Replace every occurrence of oldText (default false)."},
    },
    "required": ["oldText", "newText"],
    "additionalProperties": False,
}
SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "path": {"type": "string", "minLength": 1, "maxLength": 4096,
                 "description": "File to edit, relative to the root."},
        "oldText": {"type": "string", "maxLength": _TEXT_LIMIT,
                    "description": "Exact text to replace, including whitespace; it must occur "
                                   "once unless replaceAll is true. No line-number prefixes."},
        "newText": {"type": "string", "maxLength": _TEXT_LIMIT,
                    "description": "Text that replaces oldText (\"\" deletes it)."},
        "replaceAll": {"type": "boolean", "default": False,
                       "description": "Replace every occurrence of oldText (default false)."},
        "expectedSha256": {"type": "string", "minLength": 1, "maxLength": 128,
                           "description": "Optional: the sha256 read_file or the last edit "
                                          "returned; the edit is refused if the file changed "
                                          "since."},
        "dryRun": {"type": "boolean", "default": False,
                   "description": "Only return the diff; change nothing (default false)."},
        "edits": {"type": "array", "minItems": 1, "maxItems": 100, "items": _EDIT_ITEM,
                  "description": "Several replacements applied in order, all or nothing; use "
                                 "instead of oldText/newText."},
    },
    "required": ["path"],
    "additionalProperties": False,
}

MAX_REPLACEMENTS = 100_000
_SIBLING_FILES = 32  # files looked at for "oldText is in another file"
_SIBLING_BYTES = 256 * 1024
_SHA = re.compile(r"[0-9a-fA-F]{64}")
_TOLERANT = {"trailing_whitespace": "trailing whitespace",
             "indentation": "indentation and trailing whitespace"}
_PRIORITY = ("line_number_prefix", "escaped", "elision", "content", "extra_lines",
             "missing_lines", "quotes", "lookalike", "tabs_vs_spaces", "indentation", "spacing",
             "trailing_whitespace", "line_endings")

Edit = tuple[str, str, bool]  # oldText, newText, replaceAll


def _invalid(field: str, problem: str, hint: str, kind: str = "argument",
             **details: Any) -> Refusal:
    return Refusal(Code.INVALID_ARGUMENT, f"edit_file: argument '{field}' {problem}", hint,
                   details={"field": field, "kind": kind, **details})


def _edits(args: dict[str, Any]) -> tuple[list[Edit], bool]:
    """The edits of a call and whether it used the ``edits`` form."""
    edits = args.get("edits")
    old, new = args.get("oldText"), args.get("newText")
    if edits is not None:
        if old is not None or new is not None:
            field = "oldText" if old is not None else "newText"
            raise _invalid(field, "cannot be combined with 'edits'",
                           "Put every change in edits, or pass one oldText/newText pair "
                           "without edits.")
        if args.get("replaceAll"):
            raise _invalid("replaceAll", "applies to oldText, not to 'edits'",
                           "Set replaceAll inside each item of edits instead.")
        items = [(e["oldText"], e["newText"], e["replaceAll"]) for e in edits]
        multi = True
    else:
        if old is None:
            raise _invalid("oldText", "is required (or pass 'edits')",
                           "Pass oldText (the exact text to replace) and newText.")
        if new is None:
            raise _invalid("newText", "is required with 'oldText'",
                           "Pass newText, the text that replaces oldText (\"\" deletes it).")
        items = [(old, new, args["replaceAll"])]
        multi = False
    for i, (old, new, _) in enumerate(items):
        if old == new:
            field = f"edits[{i}].newText" if multi else "newText"
            raise Refusal(Code.INVALID_ARGUMENT, f"{_label(i, multi)}oldText and newText are the "
                          "same, so the edit would change nothing",
                          "Pass the changed text in newText; if the file is already right, no "
                          "edit is needed.", details={"field": field, "kind": "no_change"})
    return items, multi


def _label(i: int, multi: bool) -> str:
    return f"edits[{i}]: " if multi else ""


def _expected(args: dict[str, Any]) -> str | None:
    value = args.get("expectedSha256")
    if value is None:
        return None
    if not _SHA.fullmatch(value):
        raise _invalid("expectedSha256", "must be the 64 hex digits of a sha256",
                       "Pass the sha256 exactly as read_file or edit_file returned it, or leave "
                       "expectedSha256 out.")
    return value.lower()


def run(ctx: ToolContext, args: dict[str, Any]) -> dict[str, Any]:
    edits, multi = _edits(args)
    expected = _expected(args)
    rel = ctx.rel(args["path"])
    ctx.check_path(rel, Op.EDIT)
    with ctx.lock(rel):
        try:
            return _edit(ctx, rel, edits, multi, expected, args)
        except FileNotFoundError as exc:
            if exc.filename != rel or any(old for old, _, _ in edits):
                raise
            # an empty oldText on a missing file: the model wants to create it
            refusal = classify(exc, tool="edit_file", args={"path": args["path"]}, ctx=ctx)
            if refusal.code is Code.NOT_FOUND and "didYouMean" not in refusal.details:
                raise refusal.replace(hint=f"Create {rel} with write_file; edit_file changes "
                                      "existing files.") from None
            raise refusal from None


def _read(ctx: ToolContext, rel: str) -> tuple[bytes, tuple[int, int]]:
    """The whole file and its identity, refusing what edit_file does not edit."""
    root = ctx.root
    backend = root.backend
    fd = root.open(rel, os.O_RDONLY)
    try:
        info = backend.fstat(fd)
        if st.S_ISDIR(info.st_mode):
            shown = rel.rstrip("/") or "."
            raise Refusal(Code.INVALID_ARGUMENT, f"{shown} is a directory, not a file",
                          "Use glob to find the files under it (list_directory shows one level); "
                          "edit_file edits one file.", details={"path": shown, "kind": "directory"},
                          suggested_tool="glob", suggested_args={"path": shown, "pattern": "**/*"})
        ctx.check_hardlink(rel, info)
        limit = ctx.limits.max_edit_file_bytes
        if info.st_size > limit:
            raise _too_large(rel, info.st_size, limit)
        chunks = []
        total = 0
        while True:
            chunk = backend.read(fd, max(65536, min(info.st_size + 1, limit + 1 - total)))
            if not chunk:
                break
            chunks.append(chunk)
            total += len(chunk)
            if total > limit:
                raise _too_large(rel, total, limit)
        return b"".join(chunks), (info.st_dev, info.st_ino)
    finally:
        backend.close(fd)


def _too_large(rel: str, size: int, limit: int) -> Refusal:
    return Refusal(Code.TOO_LARGE, f"{rel} is {size} bytes, over edit_file's limit of {limit}",
                   "Leave this file as it is, or ask the user to change it.",
                   details={"path": rel, "kind": "file_too_large", "size": size, "limit": limit})


def _edit(ctx: ToolContext, rel: str, edits: list[Edit], multi: bool, expected: str | None,
          args: dict[str, Any]) -> dict[str, Any]:
    data, identity = _read(ctx, rel)
    real = ctx.root.realpath(rel)
    base_sha = sha256_hex(data)
    memory = memory_of(ctx.state)
    key = sha256_hex(json.dumps([args, base_sha], sort_keys=True).encode("utf-8", "surrogatepass"))
    try:
        if expected is not None and expected != base_sha:
            raise _stale(ctx, rel, expected, base_sha, data)
        try:
            decoded = decode(data)
        except Undecodable as exc:
            raise _undecodable(rel, exc, len(data)) from None
        outcome = _apply(ctx, rel, decoded.text, edits, multi)
        new_data = encode(outcome.text, decoded.bom)
        if len(new_data) > ctx.limits.max_write_bytes:
            raise _result_too_large(rel, len(new_data), ctx.limits.max_write_bytes, "")
        if new_data == data:
            raise Refusal(Code.INVALID_ARGUMENT, f"the edits leave {rel} unchanged",
                          "Check newText: it must differ from the file's text; if the file is "
                          "already right, no edit is needed.",
                          details={"path": rel, "kind": "no_change"})
    except Refusal as refusal:
        raise _repeated(refusal, memory.failed(key)) from None
    memory.succeeded(key)
    new_sha = sha256_hex(new_data)
    after = outcome.lines
    diff = unified_diff(rel, outcome.base, after, outcome.spans)
    dry = bool(args["dryRun"])
    ctx.authorize(EditRequest(real, base_sha256=base_sha, result_sha256=new_sha,
                              result_bytes=len(new_data), replacements=outcome.replacements,
                              diff=diff, dry_run=dry))
    if not dry:
        ctx.ensure_same(rel, identity)
        now, _ = _read(ctx, rel)
        if sha256_hex(now) != base_sha:
            raise swapped(rel)
        ctx.root.write_bytes(rel, new_data)
        memory.remember(base_sha, decoded.text)
        memory.remember(new_sha, outcome.text)
    return _result(ctx, rel, real, base_sha, new_sha, outcome, after, diff, dry, decoded.bom,
                   multi)


class _Outcome:
    def __init__(self, text: str) -> None:
        self.text = text
        self.base = self.lines = Lines(text)
        self.replacements = 0
        self.ranges: list[tuple[int, int]] = []  # where each replacement is, in ``text``
        self.spans: list[Span] = []  # what changed: base range -> range in ``text``
        self.owners: list[int] = []  # which edit made it
        self.strategies: list[str] = []
        self.counts: list[int] = []
        self.warnings: list[str] = []


def _apply(ctx: ToolContext, rel: str, text: str, edits: list[Edit],
           multi: bool) -> _Outcome:
    """All edits in order on ``text`` (all or nothing: a refusal leaves the
    caller's text as it was, and nothing has been written)."""
    out = _Outcome(text)
    lines = out.base
    for i, (old, new, replace_all) in enumerate(edits):
        label = _label(i, multi)
        regions, strategy, count = _locate(ctx, rel, lines, i, old, new, replace_all, multi)
        _check_placeholders(rel, lines, old, new, i, multi)
        growth = sum(len(r.replacement) - (lines.to_original(r.end) - lines.to_original(r.start))
                     for r in regions)
        if len(lines.text) + growth > ctx.limits.max_write_bytes:
            raise _result_too_large(rel, len(lines.text) + growth, ctx.limits.max_write_bytes,
                                    label)
        new_text, placements = apply_regions(lines, regions)
        out.ranges = remap(out.ranges, placements) + [(p[2], p[3]) for p in placements]
        out.spans = compose(out.spans, placements)
        out.owners += [i] * len(placements)
        out.strategies.append(strategy)
        out.counts.append(count)
        out.replacements += count
        out.warnings += _warnings(rel, lines, old, new, strategy, label)
        lines = Lines(new_text)
    out.text, out.lines = lines.text, lines
    return out


def _locate(ctx: ToolContext, rel: str, lines: Lines, i: int, old: str, new: str,
            replace_all: bool, multi: bool) -> tuple[list[Region], str, int]:
    label = _label(i, multi)
    field = f"edits[{i}].oldText" if multi else "oldText"
    if old == "":
        if lines.text == "":
            return [Region(0, 0, normalize_breaks(new))], "exact", 1
        raise Refusal(Code.INVALID_ARGUMENT, f"{label}oldText is empty, but {rel} is not",
                      "Put the text to replace in oldText; to insert, include the line before "
                      "or after the insertion point in both oldText and newText.",
                      details={"path": rel, "field": field, "kind": "empty_old_text"})
    found = search(lines, old, new, MAX_REPLACEMENTS if replace_all else MAX_LISTED)
    if found is None:
        raise _not_found(ctx, rel, lines, i, old, new, replace_all, multi)
    if found.count == 1 or replace_all and found.strategy not in _TOLERANT:
        if found.count > MAX_REPLACEMENTS:
            raise Refusal(Code.TOO_LARGE, f"{label}oldText occurs {found.count} times in {rel}, "
                          f"more than the {MAX_REPLACEMENTS} one edit replaces",
                          "Replace a more specific oldText, or rewrite the file with write_file.",
                          details={"path": rel, "field": field, "occurrences": found.count,
                                   "kind": "too_many_replacements", "limit": MAX_REPLACEMENTS})
        if found.strategy in ("exact", "line_endings"):
            _check_applied(rel, lines, found, old, new, label, field, i, multi)
        return found.regions, found.strategy, found.count
    starts = _distinct(lines.line_index(r.start) + 1 for r in found.regions)[:MAX_LISTED]
    listed = _listed(starts, found.count > len(found.regions) or len(starts) == MAX_LISTED)
    facts: dict[str, Any] = {"path": rel, "field": field, "occurrences": found.count,
                             "lines": starts}
    if multi:
        facts["edit"] = i
    if found.strategy in _TOLERANT:
        raise Refusal(Code.AMBIGUOUS, f"{label}oldText does not occur exactly in {rel}; ignoring "
                      f"{_TOLERANT[found.strategy]} it matches {found.count} places (lines "
                      f"{listed}), and a tolerant match must be unique",
                      "Copy oldText exactly from one of those places, whitespace included, with "
                      "enough neighbouring lines to match once.",
                      details={**facts, "kind": "multiple_tolerant_matches",
                               "matchStrategy": found.strategy})
    where = f"set replaceAll: true in edits[{i}]" if multi else "pass replaceAll: true"
    raise Refusal(Code.AMBIGUOUS, f"{label}oldText occurs {found.count} times in {rel} "
                  f"(lines {listed}); it must occur exactly once",
                  f"Add neighbouring lines to oldText until it matches once, or {where} to "
                  f"replace all {found.count}.", details={**facts, "kind": "multiple_matches"})


def _distinct(numbers: Any) -> list[int]:
    out: list[int] = []
    for n in numbers:
        if not out or out[-1] != n:
            out.append(n)
    return out


def _listed(numbers: list[int], more: bool, shown: int = 10) -> str:
    """Line numbers for a sentence: the first few, then how the list goes on."""
    text = ", ".join(map(str, numbers[:shown]))
    return text + (", ..." if more or len(numbers) > shown else "")


def _check_applied(rel: str, lines: Lines, found: Search, old: str, new: str, label: str,
                   field: str, i: int, multi: bool) -> None:
    """Refuse to make again an edit whose newText (containing oldText) is
    already where it would go: making it twice would duplicate text."""
    old_n, new_n = normalize_breaks(old), normalize_breaks(new)
    copies = applied_copies(lines.normalized, [r.start for r in found.regions], old_n, new_n)
    if not copies or len(copies) != found.count:
        return
    first = lines.line_index(copies[0]) + 1
    last = lines.line_index(copies[0] + len(new_n.rstrip("\n"))) + 1
    facts: dict[str, Any] = {"path": rel, "field": field, "occurrences": found.count}
    if multi:
        facts["edit"] = i
    raise Refusal(Code.NOT_FOUND, f"{label}oldText occurs in {rel} only inside newText (line "
                  f"{first}): this edit looks already made, and making it again would "
                  "duplicate text", f"Do not repeat this edit; read lines {first}-{last} to "
                  "check it if unsure.",
                  details={**facts, "kind": "already_applied", "lines": [first, last]},
                  **_read_suggestion(rel, first, last, i == 0))


def _check_placeholders(rel: str, lines: Lines, old: str, new: str, i: int,
                        multi: bool) -> None:
    """Refuse a newText line that stands for code it leaves out (``# ... rest
    of the code ...``) unless that line is in oldText or the file already."""
    found = placeholder_lines(normalize_breaks(new))
    if not found:
        return
    known = {x.strip() for x in normalize_breaks(old).split("\n")}
    for j, line in found:
        if line.strip() in known or line.strip() in lines.normalized:
            continue
        field = f"edits[{i}].newText" if multi else "newText"
        raise Refusal(Code.INVALID_ARGUMENT, f"{_label(i, multi)}newText line {j + 1} "
                      f"({line.strip()!r}) stands for code it leaves out; edit_file writes "
                      "newText as it is, so that code would be lost",
                      "Write out the full text in newText; to keep lines unchanged, leave them "
                      "out of both oldText and newText.",
                      details={"path": rel, "field": field, "kind": "placeholder",
                               "newTextLine": j + 1})


def _warnings(rel: str, lines: Lines, old: str, new: str, strategy: str,
              label: str) -> list[str]:
    out = []
    old_n, new_n = normalize_breaks(old), normalize_breaks(new)
    if "\n" in old_n and "\n" not in new_n and new.count("\\n") >= 2:
        out.append(f"{label}newText has no line breaks but {new.count(chr(92) + 'n')} '\\n' "
                   "escape sequences, where oldText spanned lines; if you meant line breaks, "
                   "send real ones")
    if strategy != "indentation":
        known = set(old_n.split("\n"))
        added = [x for x in new_n.split("\n") if x[:1] in (" ", "\t") and x.strip()
                 and x not in known]
        spaces = any(x.startswith("  ") for x in added)
        tabs = any(x.startswith("\t") for x in added)
        if spaces or tabs:  # only then is the file's own style worth a look
            unit = indent_style(lines)
            if unit == "\t" and spaces:
                out.append(f"{label}newText indents with spaces, but {rel} indents with tabs")
            elif unit != "\t" and tabs and any(x.startswith(" ") for x in lines.contents):
                out.append(f"{label}newText indents with tabs, but {rel} indents with spaces")
    return out


def _result_too_large(rel: str, size: int, limit: int, label: str) -> Refusal:
    return Refusal(Code.TOO_LARGE, f"{label}the edit would make {rel} at least {size} bytes, "
                   f"over the limit of {limit}", "Make a smaller change.",
                   details={"path": rel, "kind": "result_too_large", "size": size,
                            "limit": limit})


def _undecodable(rel: str, exc: Undecodable, size: int) -> Refusal:
    if exc.kind == "binary":
        return Refusal(Code.UNSUPPORTED, f"{rel} is a binary file ({size} bytes), which edit_file "
                       "does not change", "Edit only text files; leave this one as it is.",
                       details={"path": rel, "kind": "binary", "size": size})
    facts = exc.facts
    if "encoding" in facts:
        message = (f"{rel} is {str(facts['encoding']).upper()} text, which edit_file does not "
                   "change (it edits UTF-8)")
    else:
        message = (f"{rel} is not valid UTF-8 text (the first bad byte is on line "
                   f"{facts['line']}), which edit_file does not change")
    return Refusal(Code.UNSUPPORTED, message, "Leave this file as it is, or ask the user to "
                   "convert it to UTF-8.", details={"path": rel, "kind": "encoding",
                                                    "size": size, **facts})


def _stale(ctx: ToolContext, rel: str, expected: str, current: str, data: bytes) -> Refusal:
    details: dict[str, Any] = {}
    message = (f"{rel} is not the version you expected: expectedSha256 is {expected[:12]}..., "
               f"the file's sha256 is {current[:12]}...")
    suggested: dict[str, Any] = {"path": rel}
    before = memory_of(ctx.state).recall(expected)
    if before is not None:
        try:
            now = decode(data).text
        except Undecodable:
            now = None
        if now is not None:
            ranges = changed_lines(Lines(before), Lines(now))
            if ranges:
                details["changedLines"] = ranges
                shown = ", ".join(f"{a}" if a == b else f"{a}-{b}" for a, b in ranges[:5])
                message += f"; since then lines {shown} changed"
                first, last = ranges[0][0], ranges[min(len(ranges), 5) - 1][1]
                suggested = {"path": rel, "offset": max(1, first - 3),
                             "limit": last - max(1, first - 3) + 4}
    return sha256_mismatch(rel, expected, current, message=message,
                           hint=f"Read {rel} again and redo the edit against what it says now.",
                           suggest=("read_file", suggested), **details)


def _repeated(refusal: Refusal, before: int) -> Refusal:
    if before:
        refusal = refusal.replace(
            details={"repeated": before + 1},
            hint=("Do not send this call again unchanged, it failed the same way before; "
                  + refusal.hint[0].lower() + refusal.hint[1:]))
    return refusal


# -- not found -----------------------------------------------------------------------


def _not_found(ctx: ToolContext, rel: str, lines: Lines, i: int, old: str, new: str,
               replace_all: bool, multi: bool) -> Refusal:
    label = _label(i, multi)
    old_n, new_n = normalize_breaks(old), normalize_breaks(new)
    field = f"edits[{i}].oldText" if multi else "oldText"
    facts: dict[str, Any] = {"path": rel, "field": field}
    if multi:
        facts["edit"] = i
    style = lines.style()
    if style not in ("lf", "none"):
        facts["lineEndings"] = style
    # the same read_file suggestion only makes sense for the file as it is on disk
    can_suggest = i == 0

    applied = _already_there(lines, new, replace_all)
    if applied is not None:
        first, last = applied
        return Refusal(Code.NOT_FOUND, f"{label}oldText does not occur in {rel}, but newText is "
                       f"already there (line {first}): this edit looks already made",
                       f"Do not repeat this edit; read lines {first}-{last} to check it if "
                       "unsure.", details={**facts, "kind": "already_applied",
                                           "lines": [first, last]},
                       **_read_suggestion(rel, first, last, can_suggest))

    for fixed, kind, what, hint in (
            (strip_line_numbers(old_n), "line_number_prefix",
             "its lines start with line numbers, which read_file shows but the file does not "
             "contain", "Send oldText without the line-number prefixes, exactly as the file has "
             "it."),
            (unescape(old), "escaped",
             "it has escape sequences such as \\n where the file has line breaks",
             "Send real line breaks and tabs in oldText and newText, not \\n or \\t escape "
             "sequences.")):
        if fixed is None or fixed == old_n:
            continue
        found = search(lines, fixed, new, MAX_LISTED)
        difference = Difference(kind, what)
        if found is not None:
            starts = _distinct(lines.line_index(r.start) + 1 for r in found.regions)
            where = _listed(starts, found.count > len(found.regions))
            fix = "without them" if kind == "line_number_prefix" else "with real line breaks"
            message = f"{label}oldText does not occur in {rel}: {what}; {fix} it matches line " \
                      f"{where}"
            return Refusal(Code.NOT_FOUND, message, hint,
                           details={**facts, "kind": "no_match", "lines": starts,
                                    "differences": [difference.as_dict()]})
        diagnosis = diagnose(lines, normalize_breaks(fixed), fixed)
        diagnosis.differences.insert(0, difference)
        return _no_match(ctx, rel, lines, label, facts, diagnosis, hint, can_suggest, None)

    diagnosis = diagnose(lines, old_n, old)
    other = _other_file(ctx, rel, old_n) if not multi or i == 0 else None
    return _no_match(ctx, rel, lines, label, facts, diagnosis, None, can_suggest, other)


def _already_there(lines: Lines, new: str, replace_all: bool) -> tuple[int, int] | None:
    """Lines ``(first, last)`` where newText already is, when finding it
    there means something."""
    new_n = normalize_breaks(new)
    if not distinctive(new_n):
        return None
    count, starts = occurrences(lines.normalized, new_n, 1)
    if not count or (count > 1 and not replace_all):
        return None
    first = lines.line_index(starts[0]) + 1
    last = lines.line_index(starts[0] + len(new_n.rstrip("\n"))) + 1
    return first, last


def _read_suggestion(rel: str, first: int, last: int, allowed: bool) -> dict[str, Any]:
    if not allowed:
        return {}
    return {"suggested_tool": "read_file",
            "suggested_args": {"path": rel, "offset": first, "limit": last - first + 1}}


_HINTS = {
    "elision": "Put the file's full text in oldText, without placeholders such as '...'; to "
               "leave lines out, make two smaller edits instead.",
    "content": "Copy oldText exactly from lines {a}-{b} of the file (details.closest.text), then "
               "make your change in newText.",
    "quotes": "Copy oldText from details.closest.text: the file uses other quote characters.",
    "lookalike": "Copy oldText from details.closest.text: the file uses other look-alike "
                 "characters (dashes, spaces).",
    "tabs_vs_spaces": "Indent oldText as the file does ({unit}); copy it from "
                      "details.closest.text.",
    "indentation": "Indent oldText exactly as the file does; copy it from details.closest.text.",
    "spacing": "Copy oldText from details.closest.text, keeping its spacing.",
    "trailing_whitespace": "Copy oldText from details.closest.text, including the spaces at the "
                           "ends of its lines.",
}
_HINTS["extra_lines"] = _HINTS["missing_lines"] = _HINTS["line_endings"] = _HINTS["content"]


def _no_match(ctx: ToolContext, rel: str, lines: Lines, label: str, facts: dict[str, Any],
              diagnosis: Diagnosis, hint: str | None, can_suggest: bool,
              other: str | None) -> Refusal:
    diffs = sorted(diagnosis.differences,
                   key=lambda d: (_PRIORITY.index(d.kind), d.line or 0, d.old_line or 0))
    details: dict[str, Any] = {**facts, "kind": "no_match"}
    if diffs:
        details["differences"] = [d.as_dict() for d in diffs[:20]]
    message = f"{label}oldText does not occur in {rel}"
    suggestion: dict[str, Any] = {}
    if diagnosis.start is not None:
        a, b = diagnosis.start, diagnosis.end or diagnosis.start
        text = diagnosis.text
        closest: dict[str, Any] = {"startLine": a, "endLine": b,
                                   "similarity": diagnosis.similarity}
        if len(text) > 8000:
            closest["text"], closest["textTruncated"] = text[:8000], True
        else:
            closest["text"] = text
        details["closest"] = closest
        span = f"line {a}" if a == b else f"lines {a}-{b}"
        # a tolerated line-ending difference is in details, not in the sentence
        told = [d for d in diffs if d.kind != "line_endings"]
        shown = [d.text for d in told][:2]
        if shown:
            more = len(told) - len(shown)
            message += f"; the closest text, {span}, differs: " + "; ".join(shown)
            if more > 0:
                message += f" (and {more} more difference{'s' if more > 1 else ''})"
        else:
            message += f"; the closest text is {span}"
        if hint is None:
            top = diffs[0].kind if diffs else "content"
            unit = "with tabs" if indent_style(lines) == "\t" else "with spaces"
            hint = _HINTS.get(top, _HINTS["content"]).format(a=a, b=b, unit=unit)
        suggestion = _read_suggestion(rel, a, b, can_suggest)
    else:
        if diffs:
            message += ": " + "; ".join(d.text for d in diffs[:2])
        else:
            message += ", and nothing in it is close"
        if hint is None:
            hint = (_HINTS["elision"] if diffs and diffs[0].kind == "elision" else
                    "Read the file and copy the text to change into oldText exactly.")
        if can_suggest:
            suggestion = {"suggested_tool": "read_file", "suggested_args": {"path": rel}}
    if other is not None:
        details["foundIn"] = other
        message += f"; it does occur in {other}"
        hint = f"Check the path: oldText is in {other}; pass that path if it is the file you meant."
        suggestion = {"suggested_tool": "read_file", "suggested_args": {"path": other}}
    return Refusal(Code.NOT_FOUND, message, hint, details=details, **suggestion)


def _other_file(ctx: ToolContext, rel: str, old_n: str) -> str | None:
    """A file beside ``rel`` that contains oldText exactly (cheap and
    bounded: a few small files of the same directory, deny rules and the
    host's read permission honoured; the text is named only if the host
    would let the model read it)."""
    if len(old_n.strip()) < 8:
        return None
    try:
        real = ctx.root.realpath(rel)
        parent = posixpath.dirname(real) or "."
        entries = ctx.root.scandir(parent)
    except OSError:
        return None
    ext = posixpath.splitext(real)[1]
    files = sorted((e for e in entries if e.kind == "file" and e.path != real),
                   key=lambda e: (posixpath.splitext(e.name)[1] != ext, e.name))
    for entry in files[:_SIBLING_FILES]:
        if ctx.is_denied(entry.path):
            continue
        try:
            info = entry.stat(follow_symlinks=False)
            if info.st_size > _SIBLING_BYTES or info.st_nlink > 1 and not ctx.allow_hardlinks:
                continue
            text = decode(ctx.root.read_bytes(entry.path)).text
        except (OSError, Undecodable):
            continue
        if old_n not in normalize_breaks(text):
            continue
        try:
            ctx.authorize(ReadRequest(entry.path))
        except Refusal:
            continue
        return entry.path
    return None


# -- success -------------------------------------------------------------------------


def _result(ctx: ToolContext, rel: str, real: str, base_sha: str, new_sha: str,
            outcome: _Outcome, after: Lines, diff: str, dry: bool, bom: bool,
            multi: bool) -> dict[str, Any]:
    result: dict[str, Any] = {"path": rel}
    if real != rel:
        result["resolvedPath"] = real
    result["baseSha256"] = base_sha
    if dry:
        result["sha256"] = base_sha  # the file as it still is
        result["resultSha256"] = new_sha
        result["dryRun"] = True
    else:
        result["sha256"] = new_sha
    result["replacements"] = outcome.replacements
    per_edit: list[list[list[int]]] = [[] for _ in outcome.strategies]
    for owner, (x, y) in zip(outcome.owners, outcome.ranges):
        first = after.line_of(x)
        last = after.line_of(y - 1) if y > x else first
        per_edit[owner].append([first, max(first, last)])
    if multi:
        items = []
        for ranges, strategy, count in zip(per_edit, outcome.strategies, outcome.counts):
            item: dict[str, Any] = {"replacements": count, "lines": ranges[:MAX_LISTED]}
            if len(ranges) > MAX_LISTED:
                item["linesTruncated"] = True
            if strategy != "exact":
                item["matchStrategy"] = strategy
            items.append(item)
        result["edits"] = items
    else:
        result["lines"] = per_edit[0][:MAX_LISTED]
        if len(per_edit[0]) > MAX_LISTED:
            result["linesTruncated"] = True
        if outcome.strategies[0] != "exact":
            result["matchStrategy"] = outcome.strategies[0]
    budget = ctx.limits.read_bytes
    if len(diff) > budget:
        result["diff"] = diff[:budget]
        result["diffTruncated"] = True
    else:
        result["diff"] = diff
    style = after.style()
    if style in ("crlf", "cr", "mixed"):
        result["lineEndings"] = style
    if bom:
        result["bom"] = True
    if outcome.warnings:
        result["warnings"] = outcome.warnings
    return result


# TODO(edit): describe the success fields fully (edits, lines, diff, warnings...).
OUTPUT_SCHEMA = success_schema({
    "path": {"type": "string"}, "baseSha256": {"type": "string"},
    "sha256": {"type": "string"}, "replacements": {"type": "integer"},
}, ["path", "baseSha256", "sha256", "replacements"])

TOOL = ToolSpec(name="edit_file", title="Edit file", description=DESCRIPTION, schema=SCHEMA,
                output_schema=OUTPUT_SCHEMA, run=run, request=EditRequest, mutates=True,
                idempotent=False, destructive=True, suggests=Suggests(read_instead=True))
