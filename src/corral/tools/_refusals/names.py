"""Names a tool would create that the model most likely did not mean.

* A name holding a control character (a newline, a tab, an escape) or
  ending in a space: pasted with what came around it.  No editor or shell
  user makes such a name on purpose, and the model cannot see it again in
  a listing.
* A path that reads like a line of a test runner's or a compiler's output
  (``FAIL tests/int/my.test.ts``, ``Error: ... src/a.ts``) whose tail after
  a space names a file that exists: the model pasted the line, not the
  name.

Either is refused before anything is created, with the name meant in a
suggested call (the same call with that path).

Apart: a path naming one of corral's own in-flight names (a write's
temporary file, ``.NAME.<12 hex>.corral-tmp``:
:func:`corral.contained.is_temp_name`) is refused by every tool, read or
write alike, whether or not one is there (:func:`temporary_name`): no
listing shows one, and a call that could read, replace, move or delete one
could read or spoil another call's write before it is in place.  A name that already
exists is never refused here: it is the file the model named.  What
exists is looked at through the call's view (:class:`~.looking.Looking`).
"""

from __future__ import annotations

import re
from typing import Any

from ...contained import is_temp_name
from .catalogue import Code, Kind, Refusal
from .looking import Looking

__all__ = ["check_new_name", "clean_name", "names_temporary", "temporary_name"]

_CONTROL = re.compile(r"[\x00-\x1f\x7f]")
# words a log line puts before a path: a status in capitals, a label with a
# colon, quotes, test runners' marks
_MARKS = "\u2713\u2717\u00d7\u2714\u2718\u203a\u276f\u25cf"  # check, cross, chevron, dot
_LOG_PREFIX = re.compile(r"(?:^|\s)(?:[A-Z]{3,}|[^\s]*:|[" + _MARKS + r"]|-->|at)(?:\s|$)|[\"'`]")


def clean_name(rel: str) -> str:
    """``rel`` without control characters, each component without the
    spaces around it."""
    parts = [_CONTROL.sub("", part).strip() for part in rel.split("/")]
    return "/".join(p for p in parts if p)


def names_temporary(parts: list[str]) -> bool:
    """Whether one of a path's names ``parts`` is an in-flight name."""
    return any(is_temp_name(part) for part in parts)


def temporary_name(shown: str, field: str) -> Refusal:
    """The answer to a path naming an in-flight name (module doc): the same
    whether or not one is there, for every tool."""
    return Refusal(Code.INVALID_ARGUMENT,
                   f"argument '{field}' names a temporary file of a write in progress (the form "
                   ".NAME.<12 hex digits>.corral-tmp is corral's own); no tool reads, writes, "
                   "moves or deletes one",
                   "Name the file itself: a write's content appears under its own name once it "
                   "is done.", details={"path": shown, "field": field}, kind=Kind.TEMPORARY_NAME)


_DEFAULTS = (("overwrite", False), ("keepFormat", True), ("dryRun", False),
             ("replaceAll", False))


def _sent(args: dict[str, Any]) -> dict[str, Any]:
    """The call's arguments without those left at their defaults."""
    return {k: v for k, v in args.items() if (k, v) not in _DEFAULTS and v is not None}


def _retry(look: Looking, tool: str, args: dict[str, Any], field: str,
           meant: str) -> dict[str, Any]:
    """The call again with ``meant`` for the path; a read of ``meant``
    instead when it exists and the call would not replace it."""
    if look.hides(meant):
        return {}
    replacing = args.get("overwrite") or args.get("expectedSha256")
    try:
        exists = look.exists(meant)
    except OSError:
        exists = False
    if exists and not replacing:
        return {"suggested_tool": "read_file", "suggested_args": {"path": meant}}
    return {"suggested_tool": tool, "suggested_args": {**_sent(args), field: meant}}


def _shown(text: str) -> str:
    return repr(text)[1:-1] if _CONTROL.search(text) else text


def check_new_name(look: Looking, rel: str, creates: tuple[str, ...], tool: str,
                   args: dict[str, Any], field: str = "path") -> Refusal | None:
    """The refusal for creating ``rel`` (and the directories ``creates``),
    or ``None`` when its names are fine."""
    new_parts = [rel, *creates]
    odd = next((p for p in new_parts if _odd(p.rsplit("/", 1)[-1])), None)
    if odd is not None:
        return _odd_name(look, rel, odd, tool, args, field)
    if " " in rel:
        return _pasted(look, rel, tool, args, field)
    return None


def _odd(name: str) -> bool:
    return bool(_CONTROL.search(name)) or name != name.rstrip(" ") or name != name.lstrip(" ")


def _odd_name(look: Looking, rel: str, odd: str, tool: str, args: dict[str, Any],
              field: str) -> Refusal:
    name = odd.rsplit("/", 1)[-1]
    controls = sorted({f"U+{ord(c):04X}" for c in _CONTROL.findall(name)})
    what = (f"control character{'s' if len(controls) > 1 else ''} {', '.join(controls)}"
            if controls else "spaces at its start or end")
    meant = clean_name(rel)
    suggestion = _retry(look, tool, args, field, meant) if meant and meant != rel else {}
    return Refusal(Code.INVALID_ARGUMENT,
                   f"the name '{_shown(name)}' holds {what}, which a name is almost never "
                   f"meant to; nothing was created",
                   f"Pass the path without them{f', {meant}' if meant else ''}.",
                   details={"path": _shown(rel), "field": field, "name": _shown(name),
                            **({"controlCharacters": controls} if controls else {}),
                            **({"meant": meant} if meant else {})},
                   kind=Kind.CONTROL_CHARACTERS, **suggestion)


def _pasted(look: Looking, rel: str, tool: str, args: dict[str, Any],
            field: str) -> Refusal | None:
    """``rel`` when its tail after a space names a file that exists and what
    comes before reads like a log line."""
    at = rel.find(" ")
    while at >= 0:
        prefix, tail = rel[:at], rel[at + 1:].strip()
        if tail and not tail.startswith("/") and (_LOG_PREFIX.search(prefix + " ")
                                                  or "/" in tail):
            try:
                exists = look.shown(tail)
            except OSError:
                exists = False
            if exists:
                return _pasted_refusal(rel, prefix, tail, field,
                                       _retry(look, tool, args, field, tail))
        at = rel.find(" ", at + 1)
    return None


def _pasted_refusal(rel: str, prefix: str, tail: str, field: str,
                    suggestion: dict[str, Any]) -> Refusal:
    return Refusal(Code.INVALID_ARGUMENT,
                   f"{rel} reads like a line pasted from a log: {tail} exists, and "
                   f"{prefix.strip()!r} before it is not part of a name; nothing was created",
                   f"Pass the path of the file itself, {tail}.",
                   details={"path": rel, "field": field, "meant": tail},
                   kind=Kind.PASTED_PATH, **suggestion)
