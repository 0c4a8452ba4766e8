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

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

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


def _refusal(envelope: Mapping[str, Any]) -> EditorResult:
    parts = [f"{envelope.get('code', 'INTERNAL')}: {envelope.get('message', '')}"]
    if envelope.get("hint"):
        parts.append(str(envelope["hint"]))
    return EditorResult("\n".join(parts), True)


def _invalid(message: str) -> EditorResult:
    return EditorResult(f"INVALID_ARGUMENT: {message}", True)


def _text(args: Mapping[str, Any], name: str) -> str | None:
    value = args.get(name)
    return value if isinstance(value, str) else None


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
                     lambda e: f"Wrote {e['path']} ({e['bytes']} bytes).")
    if command == "str_replace":
        old, new = _text(args, "old_str"), args.get("new_str", "")
        if old is None or not isinstance(new, str):
            return _invalid("'str_replace' needs 'old_str' (and 'new_str', a string)")
        return _done(toolbox.call("edit_file", {"path": path, "oldText": old, "newText": new}),
                     lambda e: f"Edited {e['path']}.")
    return _insert(toolbox, path, args)


def _done(envelope: Mapping[str, Any], say: Callable[[Mapping[str, Any]], str]) -> EditorResult:
    if envelope.get("ok") is not True:
        return _refusal(envelope)
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
        args["offset"] = first
        if last != -1:
            args["limit"] = last - first + 1
    envelope = toolbox.call("read_file", args)
    if envelope.get("ok") is not True:
        details = envelope.get("details")
        if view_range is None and isinstance(details, Mapping) and \
                details.get("kind") == "directory":
            return _listing(toolbox, path)  # a link to a directory: file_info saw the link
        return _refusal(envelope)
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
            lines.append(name + ("/" if is_dir else ""))
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
                     lambda e: f"Inserted after line {line} of {e['path']}.")
    cut = read.get("cutLines")
    shown = set(cut) if isinstance(cut, list) else set()  # lines read_file shortened
    old, new_text = _insertion(lines, line, new, shown)
    envelope = toolbox.call("edit_file", {"path": path, "oldText": old, "newText": new_text,
                                          "expectedSha256": read["sha256"]})
    return _done(envelope, lambda e: f"Inserted after line {line} of {e['path']}.")


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
               cut: set[int]) -> tuple[str, str]:
    """(old, new) for edit_file: lines around the insertion point whose text
    occurs once in the file's (as edit_file counts it: anywhere, not only
    at line starts), grown a half more each time (few looks, each linear),
    and the same with ``text`` inserted.  The lines read_file shortened
    (``cut``, 1-based) are counted without their shown part and marker."""
    added = text[:-1] if text.endswith("\n") else text
    # as edit_file counts: with the final newline the lines shown leave out
    whole = "\n".join("" if number in cut else row
                      for number, row in enumerate(lines, 1)) + "\n"
    start, stop = max(after - 1, 0), min(after + 1, len(lines))
    while True:
        old = "\n".join(lines[start:stop])
        if (old and _once(whole, old)) or (start == 0 and stop == len(lines)):
            break
        grow = max(1, (stop - start) // 2)
        start, stop = max(start - grow, 0), min(stop + grow, len(lines))
    new = "\n".join([*lines[start:after], added, *lines[after:stop]])
    return old, new


def _once(whole: str, part: str) -> bool:
    """Whether ``part`` occurs exactly once in ``whole``, overlaps counted."""
    first = whole.find(part)
    return first >= 0 and whole.find(part, first + 1) < 0
