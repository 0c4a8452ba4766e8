"""Claude's text editor tool (``str_replace_based_edit_tool``) run on a
toolbox: each command becomes corral's own call, so every rule of the
toolbox (containment, protected names, secrets, deny rules, the host's
authorize, locks, digests) holds as it does for corral's tools.

``view`` reads a file with line numbers (``view_range``, ``-1`` to the end)
or lists a directory two levels deep; ``create`` is ``write_file`` with
``overwrite`` (the write guard still refuses what it refuses: a symlink, a
protected name, elided or line-numbered content); ``str_replace`` is
``edit_file``; ``insert`` is an ``edit_file`` whose old text is the lines
around the insertion point, grown until they occur once, and whose
``expectedSha256`` is the digest of the text the position was counted in,
so a file changed in between is refused, never inserted into at the wrong
place.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..hosts import one_line, shown_name
from ._common import as_word, named_in, reworded

if TYPE_CHECKING:
    from ..tools import Toolbox

__all__ = ["EDITOR_NAME", "EDITOR_TYPE", "EditorResult", "run_text_editor"]

EDITOR_TYPE = "text_editor_20250728"
EDITOR_NAME = "str_replace_based_edit_tool"
_COMMANDS = ("view", "create", "str_replace", "insert")
_WHOLE_FILE_LINES = 1 << 20  # read_file's limit in lines for insert's count (capped by bytes)


@dataclass(frozen=True)
class EditorResult:
    """What goes back to the model: ``text`` and whether it is an error."""

    text: str
    is_error: bool


# corral's argument names in a refusal, as the editor's model knows them
_CORRAL_FIELDS = as_word("oldText|newText")
_EDITOR_FIELDS = {"oldText": "old_str", "newText": "new_str"}
# the corral tool a command runs, named in its sentences: the command instead
_CORRAL_TOOLS = as_word("write_file|edit_file")
_CORRAL_CONTENT = as_word("'content'")
_CHANGING_COMMANDS = ("create", "str_replace", "insert")


def _refusal(envelope: Mapping[str, Any], *, command: str = "",
             view_range: list[int] | None = None) -> EditorResult:
    """corral's refusal in the editor's words: its arguments and commands,
    never a field the editor does not have (``replaceAll``, ``offset``,
    ``expectedSha256``) that a model would send and see ignored."""
    details = envelope.get("details")
    kind = details.get("kind") if isinstance(details, Mapping) else None
    message, hint = str(envelope.get("message", "")), envelope.get("hint")
    path = shown_name(str(details.get("path", ""))) if isinstance(details, Mapping) else ""
    if kind == "multiple_matches" and command == "str_replace":
        hint = ("Add neighbouring lines to old_str until it matches once: str_replace "
                "changes one place.")
    elif kind == "empty_old_text":
        hint = ("Put the text to replace in old_str; to add lines, use insert with "
                "insert_line (0: at the top).")
    elif kind == "offset_past_end" and view_range is not None and isinstance(details, Mapping):
        total = details.get("totalLines")
        message = (f"view_range {view_range} starts past the end of {path}, which has "
                   f"{total} lines")
        hint = (f"Pass a view_range within [1, {total}], or view the file without view_range "
                "(it may have changed).")
    elif kind == "sha256_mismatch":  # the insert's own digest: the file changed meanwhile
        message = f"{path} changed while the insert was made; nothing was changed"
        hint = "View the file again and insert against what it holds now."
    # one line each: a sentence may name what the tool found on the disk
    names = named_in(details)  # said as they are: only the tool's own words are the editor's

    def words(text: str) -> str:
        return one_line(reworded(text, lambda part: _editor_words(part, command), names))

    parts = [f"{envelope.get('code', 'INTERNAL')}: {words(message)}"]
    if hint:
        parts.append(words(str(hint)))
    return EditorResult("\n".join(parts), True)


def _editor_words(text: str, command: str) -> str:
    text = _CORRAL_FIELDS.sub(lambda found: _EDITOR_FIELDS[found.group()], text)
    if command in _CHANGING_COMMANDS:
        text = _CORRAL_TOOLS.sub(command, text)
    if command == "create":
        text = _CORRAL_CONTENT.sub("'file_text'", text)
    return text


def _invalid(message: str) -> EditorResult:
    return EditorResult(f"INVALID_ARGUMENT: {message}", True)


def _text(args: Mapping[str, Any], name: str) -> str | None:
    value = args.get(name)
    return value if isinstance(value, str) else None


_MOST_LINES = 2**53 - 1  # the largest offset or limit read_file takes (JSON's exact integers)


def run_text_editor(toolbox: Toolbox, args: Any) -> EditorResult:
    """Run one ``str_replace_based_edit_tool`` block's ``input``."""
    if not isinstance(args, Mapping):
        return _invalid("the input must be an object with 'command' and 'path'")
    command, path = args.get("command"), args.get("path")
    if command not in _COMMANDS:
        return _invalid(f"'command' must be one of {', '.join(_COMMANDS)}")
    if not isinstance(path, str) or not path:
        return _invalid("'path' must be a non-empty string")
    if command == "view":
        return _view(toolbox, path, args.get("view_range"))
    if command == "create":
        file_text = _text(args, "file_text")
        if file_text is None:
            return _invalid("'create' needs 'file_text', the whole content of the file")
        return _done(toolbox.call("write_file", {"path": path, "content": file_text,
                                                 "overwrite": True}),
                     lambda e: f"Wrote {shown_name(e['path'])} ({e['bytes']} bytes).", command)
    if command == "str_replace":
        old, new = _text(args, "old_str"), args.get("new_str", "")
        if old is None or not isinstance(new, str):
            return _invalid("'str_replace' needs 'old_str' (and 'new_str', a string)")
        return _done(toolbox.call("edit_file", {"path": path, "oldText": old, "newText": new}),
                     lambda e: f"Edited {shown_name(e['path'])}.", command)
    return _insert(toolbox, path, args)


def _done(envelope: Mapping[str, Any], say: Callable[[Mapping[str, Any]], str],
          command: str = "") -> EditorResult:
    if envelope.get("ok") is not True:
        return _refusal(envelope, command=command)
    return EditorResult(say(envelope), False)


def _view(toolbox: Toolbox, path: str, view_range: Any) -> EditorResult:
    info = toolbox.call("file_info", {"path": path})
    if info.get("ok") is True and info.get("kind") in ("dir", "directory"):
        if view_range is not None:
            return _invalid("'view_range' applies to files, not to a directory")
        return _listing(toolbox, path)
    args: dict[str, Any] = {"path": path}
    if view_range is not None:
        if (not isinstance(view_range, list) or len(view_range) != 2
                or not all(isinstance(n, int) and not isinstance(n, bool) for n in view_range)):
            return _invalid("'view_range' is [first, last] line numbers (last -1: to the end)")
        first, last = view_range
        if first < 1 or (last != -1 and last < first):
            return _invalid("'view_range' starts at line 1 or later and ends at or after its "
                            "start (or -1 for the end of the file)")
        # numbers past what read_file counts: no file has so many lines, so a
        # start there is past the end, and an end there is the end
        args["offset"] = min(first, _MOST_LINES)
        if last != -1 and last - first + 1 <= _MOST_LINES:
            args["limit"] = last - first + 1
    envelope = toolbox.call("read_file", args)
    if envelope.get("ok") is not True:
        details = envelope.get("details")
        if view_range is None and isinstance(details, Mapping) and \
                details.get("kind") == "directory":
            return _listing(toolbox, path)  # a link to a directory: file_info saw the link
        return _refusal(envelope, command="view", view_range=view_range)
    text = str(envelope.get("content", ""))
    end, total = envelope.get("endLine"), envelope.get("totalLines")
    asked_end = args["offset"] + args["limit"] - 1 if "limit" in args else total
    if isinstance(asked_end, int) and isinstance(total, int):
        asked_end = min(asked_end, total)  # a range past the end asks for no more than there is
    if isinstance(end, int) and isinstance(asked_end, int) and end < asked_end:
        text += (f"\n[shown up to line {end} of {total}; view_range [{end + 1}, -1] shows "
                 "more]")
    return EditorResult(text, False)


def _listing(toolbox: Toolbox, path: str) -> EditorResult:
    """A directory two levels deep, as ``view`` shows one."""
    listing = toolbox.call("list_directory", {"path": path, "depth": 2})
    if listing.get("ok") is not True:
        return _refusal(listing)
    return EditorResult(_tree_text(listing), False)


def _tree_text(listing: Mapping[str, Any]) -> str:
    lines: list[str] = []

    def walk(entries: Any, prefix: str) -> None:
        for entry in entries or ():
            name = f"{prefix}{entry.get('name')}"
            is_dir = entry.get("kind") in ("dir", "directory")
            lines.append(shown_name(name + ("/" if is_dir else "")))
            walk(entry.get("entries"), name + "/")

    walk(listing.get("entries"), "")
    if listing.get("truncated"):
        lines.append("[listing cut short: view a subdirectory to see more]")
    return "\n".join(lines) if lines else "(empty directory)"


def _insert(toolbox: Toolbox, path: str, args: Mapping[str, Any]) -> EditorResult:
    # Claude 4 models send 'insert_text'; the tool's documentation says 'new_str'
    new = _text(args, "new_str")
    if new is None:
        new = _text(args, "insert_text")
    line = args.get("insert_line")
    if new is None:
        return _invalid("'insert' needs 'new_str', the text to insert")
    if not isinstance(line, int) or isinstance(line, bool) or line < 0:
        return _invalid("'insert_line' is the line after which to insert (0: at the top)")
    read = toolbox.call("read_file", {"path": path, "limit": _WHOLE_FILE_LINES})
    if read.get("ok") is not True:
        return _refusal(read)
    if read.get("truncated"):
        return EditorResult("TOO_LARGE: the file is too large to insert into by line number; "
                            "use str_replace with the lines around the insertion point.", True)
    lines = _plain_lines(str(read.get("content", "")))
    if line > len(lines):
        return _invalid(f"'insert_line' {line} is past the end of the file "
                        f"({len(lines)} lines)")
    if not "".join(lines):  # empty, or empty lines only: nothing to anchor on, so the whole
        return _done(toolbox.call("write_file", {"path": path, "content": _whole(read, lines,
                                                                                 line, new),
                                                 "expectedSha256": read["sha256"]}),
                     lambda e: f"Inserted after line {line} of {shown_name(e['path'])}.",
                     "insert")
    cut = read.get("cutLines")
    cut_lines = {n - 1 for n in cut} if isinstance(cut, list) else set()  # 0-based
    if not cut_lines:  # (a lone "\r" inside a line is matched as that character)
        old, new_text = _insertion(lines, line, new, lambda: _ends_with_a_break(read, lines))
        envelope = toolbox.call("edit_file", {"path": path, "oldText": old, "newText": new_text,
                                              "expectedSha256": read["sha256"]})
        return _done(envelope,
                     lambda e: f"Inserted after line {line} of {shown_name(e['path'])}.",
                     "insert")
    known = _known(lines, cut_lines)
    return _insert_beside_cut(toolbox, path, read, _Partial(known, cut_lines,
                                                            "\n".join(known) + "\n"),
                              line, new)


def _whole(read: Mapping[str, Any], lines: list[str], after: int, text: str) -> str:
    """The whole new text of a file that is empty or empty lines only (each
    ended, as a last line can only be: its byte order mark and line ending
    kept), ``text`` inserted after line ``after``."""
    if not lines:
        return text
    eol = "\r\n" if read.get("lineEndings") == "crlf" else "\n"
    added = (text[:-1] if text.endswith("\n") else text).replace("\n", eol)
    body = eol * after + added + eol + eol * (len(lines) - after)
    return ("\ufeff" if read.get("bom") is True else "") + body


def _plain_lines(numbered: str) -> list[str]:
    if not numbered:
        return []
    return [row.split("\t", 1)[1] if "\t" in row else "" for row in numbered.split("\n")]


def _insertion(lines: list[str], after: int, text: str,
               ended: Callable[[], bool]) -> tuple[str, str]:
    """(old, new) for edit_file: lines around the insertion point whose text
    occurs once in the file's (as edit_file counts it: anywhere, not only
    at line starts), grown a half more each time (few looks, each linear),
    and the same with ``text`` inserted.  A new text already in the file
    (an empty line inserted after the last line, or beside an empty one)
    would be read by edit_file as an edit already made: grown until it is
    not, the file's final line break (``ended``) part of both once the
    lines reach the end (looked at only then: a digest of the file)."""
    whole = "\n".join(lines) + "\n"  # as edit_file counts: with the final newline
    start, stop = max(after - 1, 0), min(after + 1, len(lines))
    final: bool | None = None
    while True:
        old, new = _around(lines, after, text, start, stop)
        if stop == len(lines) and (final := ended() if final is None else final):
            old, new = old + "\n", new + "\n"
        if (old and _once(whole, old) and new not in whole) or \
                (start == 0 and stop == len(lines)):
            return old, new
        start, stop = _grown(start, stop, 0, len(lines))


def _ends_with_a_break(read: Mapping[str, Any], lines: list[str]) -> bool:
    """Whether the file read ends with a line break: its digest is that of
    its lines each ended (known for one kind of line ending only)."""
    eol = {"lf": "\n", "crlf": "\r\n"}.get(str(read.get("lineEndings")))
    if eol is None or not lines:
        return False
    text = ("\ufeff" if read.get("bom") is True else "") + eol.join(lines) + eol
    return hashlib.sha256(text.encode("utf-8")).hexdigest() == read.get("sha256")


def _around(lines: list[str], after: int, text: str, start: int, stop: int
            ) -> tuple[str, str]:
    """(old, new): ``lines[start:stop]`` as one text, and with ``text`` (its
    final newline left out) inserted after line ``after``.  ``start ==
    after > 0`` begins at the line break ending line ``after``."""
    added = text[:-1] if text.endswith("\n") else text
    left = lines[start:after] if start < after or after == 0 else [""]
    right = lines[after:stop]
    return "\n".join([*left, *right]), "\n".join([*left, added, *right])


def _grown(start: int, stop: int, low: int, high: int) -> tuple[int, int]:
    grow = max(1, (stop - start) // 2)
    return max(start - grow, low), min(stop + grow, high)


_CUT_MARKER = re.compile(r" \[\.\.\. line cut: (\d+) of \d+ characters shown\]\Z")


def _known(lines: list[str], cut: set[int]) -> list[str]:
    """The start of each line an oldText can carry: a cut line's shown
    start, its marker left out (what follows it is never seen)."""
    known = list(lines)
    for at in cut:
        if at < len(known):
            found = _CUT_MARKER.search(known[at])
            known[at] = known[at][:int(found.group(1))] if found else ""
    return known


@dataclass(frozen=True)
class _Partial:
    """A file some of whose lines read_file cut short, so an oldText cannot
    carry them whole: ``known``, each line's start that it can; ``partial``,
    those lines (0-based); ``whole``, the text as edit_file matches it, as
    far as it is known."""

    known: list[str]
    partial: set[int]
    whole: str


def _insert_beside_cut(toolbox: Toolbox, path: str, read: Mapping[str, Any], file: _Partial,
                       after: int, text: str) -> EditorResult:
    """Insert after line ``after`` of a file some of whose lines an oldText
    cannot carry whole (read_file cut them short): the old text is only
    what is known next to the point (whole lines, back to the line after a
    partial one; forward, up to a partial line's known start), grown until edit_file
    finds it once.  The text is the file's own at that place, so found once
    it is found there."""
    known, cut = file.known, file.partial
    count = len(known)
    low = max((at + 1 for at in cut if at < after), default=0)
    high = min((at + 1 for at in cut if at >= after), default=count)
    if after == count and low == count:  # nothing known after the last line
        unended = "the end of the file cannot be found by its text"
        if count == 1:  # one line: its line break, if it has one, is the file's only one
            added = text[:-1] if text.endswith("\n") else text
            envelope = toolbox.call("edit_file", {"path": path, "oldText": "\n",
                                                  "newText": f"\n{added}\n",
                                                  "expectedSha256": read["sha256"]})
            details = envelope.get("details")
            if isinstance(details, Mapping) and details.get("kind") == "no_match":
                return _cut_refusal(path, after, unended)  # it has none
            return _done(envelope,
                         lambda e: f"Inserted after line {after} of {shown_name(e['path'])}.",
                         "insert")
        return _cut_refusal(path, after, unended)
    whole = file.whole
    start, stop = max(after - 1, low), min(after + 1, high)
    tried, why = 0, "the text around it that can be known occurs more than once"
    while True:
        old, new = _around(known, after, text, start, stop)
        widest = start == low and stop == high
        # a new text already there would be read as an edit already made: grown first
        if old and ((_once(whole, old) and new not in whole) or widest):
            envelope = toolbox.call("edit_file", {"path": path, "oldText": old,
                                                  "newText": new,
                                                  "expectedSha256": read["sha256"]})
            tried += 1
            details = envelope.get("details")
            kind = details.get("kind") if isinstance(details, Mapping) else None
            if envelope.get("ok") is True or kind not in _GROW_ON:
                return _done(envelope, lambda e: f"Inserted after line {after} of "
                                                 f"{shown_name(e['path'])}.", "insert")
            if kind == "already_applied":
                why = ("the text around it that can be known, with the inserted text, is "
                       "already in the file")
        if widest or tried >= _MOST_TRIES:
            return _cut_refusal(path, after, why)
        start, stop = _grown(start, stop, low, high)


# edit_file's refusals of an insert's old text that more of the text around may cure
_GROW_ON = ("multiple_matches", "already_applied")


_MOST_TRIES = 8  # edit_file calls one insert beside cut lines makes at most


def _cut_refusal(path: str, after: int, why: str) -> EditorResult:
    return EditorResult(f"AMBIGUOUS: a line next to line {after} of {shown_name(path)} is longer "
                        f"than read_file shows (it cuts long lines), and {why}; nothing was "
                        "changed.\nInsert after another line, or use str_replace with text you "
                        "know occurs once next to the insertion point.", True)


def _once(whole: str, part: str) -> bool:
    """Whether ``part`` occurs exactly once in ``whole``, overlaps counted."""
    first = whole.find(part)
    return first >= 0 and whole.find(part, first + 1) < 0
