"""apply_patch: the patch format GPT-5 and Codex models are trained on, and
the V4A operations of the Responses API's apply_patch tool, as one call.

All or nothing: the patch is parsed, every file it names is resolved once
and locked (one step of the policed view, the tree lock exclusive when a
file moves), every hunk of every file is placed, every policy decision is
made (on each file, and on the tree the whole patch leaves: no patch makes
a directory a git repository, however its files split ``HEAD``,
``objects/`` and ``refs/``) and the host is asked about each file, before
the first byte is written.  A refusal changes nothing and names the file, the hunk and the
nearest lines.  Then each file is written atomically (its line endings, BOM
and final newline kept); should a write fail midway (a full disk), the
files already written are put back.

corral's own rules where the format's usual hosts are destructive: an Add
File onto an existing file, and a move onto one, are refused (an Update
File changes an existing file, whose context lines prove what was read); a
symlink is neither written through nor replaced.
"""

from __future__ import annotations

import enum
import os
import stat as st
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from .._edit.content import check_write
from .._edit.text import Undecodable, decode, encode
from .._patch import (CODEX, V4A, AddFile, DeleteFile, Dialect, HunkMismatch, PatchSyntaxError,
                      UpdateFile, apply_update, new_file_text, parse_patch)
from .._policy.rules import Op
from .._read import cache as read_cache
from .._refusals.catalogue import (Code, Kind, Refusal, directory_given, exists, file_too_large,
                                   special_file, special_kind, swapped)
from .._runtime.answer import AnswerPath
from .._runtime.answer import sentence_path as _said
from .._runtime.context import ToolContext, sha256_hex
from .._runtime.limits import listed_directories
from .._runtime.registry import Suggests, ToolSpec, success_schema
from .._runtime.request_types import DeleteRequest, EditRequest, MoveRequest, WriteRequest
from .._runtime.view import Pinned, Want

DESCRIPTION = (
    "Change one or more files with a patch, all or nothing. Format: '*** Begin Patch', then "
    "for each file '*** Add File: PATH' with every line '+'; '*** Delete File: PATH'; or "
    "'*** Update File: PATH' (then '*** Move to: NEW' to rename) with hunks, each an '@@' "
    "line (optionally '@@ ' and a line of the file just above the change) then ' ' context, "
    "'-' removed and '+' added lines, 3 lines of context around each change; then "
    "'*** End Patch'. A file that exists is changed with Update File, never Add File."
)

SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "input": {"type": "string", "minLength": 1, "maxLength": 16 << 20,
                  "description": "The whole patch, '*** Begin Patch' to '*** End Patch'."},
        "dialect": {"type": "string", "enum": ["codex", "v4a"], "default": "codex",
                    "description": "v4a: the Responses API's diff rules."},
    },
    "required": ["input"],
    "additionalProperties": False,
}

_DIALECTS = {"codex": CODEX, "v4a": V4A}
# paths one patch names (a move: both): each is pinned, a descriptor held, at once
MAX_PATHS = 100
# lines one patch may have: more than any model writes in one call; each is held as a
# Python object while the patch is read, so lines of one byte cost some 40 times their size
MAX_LINES = 1_000_000
_GRAMMAR_HINT = ("Send the patch as '*** Begin Patch', file sections ('*** Add File: PATH', "
                 "'*** Update File: PATH' with '@@' hunks of ' ', '-' and '+' lines, "
                 "'*** Delete File: PATH'), then '*** End Patch'.")


@dataclass
class _File:
    """One file of the patch, planned: what is there and what it becomes."""

    op: AddFile | DeleteFile | UpdateFile
    rel: str
    dest: str | None = None
    pin: Pinned | None = None
    dest_pin: Pinned | None = None
    info: os.stat_result | None = None
    old: bytes = b""
    new: bytes = b""
    lines: list[int] = field(default_factory=list)
    loose: bool = False  # a hunk matched only with whitespace or punctuation forgiven
    made: list[str] = field(default_factory=list)  # directories made for its new name


def run(ctx: ToolContext, args: dict[str, Any]) -> dict[str, Any]:
    dialect = _DIALECTS[args["dialect"]]
    lines = args["input"].count("\n") + 1  # counted in C, before anything is read
    if lines > MAX_LINES:
        raise Refusal(Code.TOO_LARGE,
                      f"the patch is {lines} lines, over the limit of {MAX_LINES} in one call; "
                      "nothing was changed",
                      "Split it into smaller patches, a few files or hunks each.",
                      details={"field": "input", "lines": lines, "limit": MAX_LINES},
                      kind=Kind.CONTENT_SIZE)
    try:
        patch = parse_patch(args["input"])
    except PatchSyntaxError as exc:
        raise _syntax(exc) from None
    named = sum(2 if isinstance(op, UpdateFile) and op.move_to else 1 for op in patch.ops)
    if named > MAX_PATHS:
        raise Refusal(Code.INVALID_ARGUMENT,
                      f"the patch names {named} paths, over the limit of {MAX_PATHS} in one call "
                      "(a move names two); nothing was changed",
                      f"Split it into patches of at most {MAX_PATHS} paths each.",
                      details={"field": "input", "paths": named, "limit": MAX_PATHS},
                      kind=Kind.ARGUMENT)
    files = [_File(op, ctx.rel(op.path, "input"),
                   ctx.rel(op.move_to, "input") if isinstance(op, UpdateFile) and op.move_to
                   else None) for op in patch.ops]
    _no_repeats(files)
    with _pinned(ctx, files) as files:
        for file in files:
            ctx.checkpoint()
            _plan(ctx, file, dialect)
        _ask_each(ctx, files)
        for file in files:
            _recheck(ctx, file)
        ctx.checkpoint()  # the last one: from here on the files are being written
        _act(files)
    return {"files": [_answer(file) for file in files]}


# -- reading the patch ----------------------------------------------------------------

def _syntax(exc: PatchSyntaxError) -> Refusal:
    where = f" (line {exc.line}: {exc.text[:80]!r})" if exc.line else ""
    return Refusal(Code.INVALID_ARGUMENT, f"the patch cannot be read: {exc.message}{where}",
                   _GRAMMAR_HINT, details={"field": "input", "line": exc.line or None,
                                           "text": exc.text[:200] or None},
                   kind=Kind.PATCH_SYNTAX)


def _onto_itself(rel: str, dest: str, same: str) -> Refusal:
    """A section whose ``Move to`` names the file it moves (by any
    spelling): one section, so the two-sections hint would not help."""
    return Refusal(Code.INVALID_ARGUMENT,
                   f"the section for {_said(rel)} moves it to {_said(dest)}, the same file "
                   f"({_said(same)}); nothing was changed",
                   f"Drop the '*** Move to:' line to change {_said(rel)} in place, or give "
                   "'*** Move to:' a new name.",
                   details={"field": "input", "path": same}, kind=Kind.PATCH_SYNTAX)


def _no_repeats(files: list[_File]) -> None:
    seen: dict[str, int] = {}
    for number, file in enumerate(files, 1):
        if file.dest is not None and file.dest == file.rel:
            raise _onto_itself(file.rel, file.dest, file.rel)
        for name in (file.rel, file.dest):
            if name is None:
                continue
            if name in seen:
                raise Refusal(Code.INVALID_ARGUMENT,
                              f"the patch names {_said(name)} in two file sections ({seen[name]} "
                              f"and {number}); nothing was changed",
                              f"Put every change to {_said(name)} in one section.",
                              details={"field": "input", "path": name}, kind=Kind.PATCH_SYNTAX)
            seen[name] = number


# -- one step on every file -------------------------------------------------------------

def _wants(file: _File) -> list[Want]:
    if isinstance(file.op, AddFile):
        return [Want(file.rel, Op.CREATE, "input", create_parents=True)]
    if isinstance(file.op, DeleteFile):
        return [Want(file.rel, Op.DELETE, "input")]
    if file.dest is None:
        return [Want(file.rel, Op.EDIT, "input")]
    return [Want(file.rel, Op.MOVE_FROM, "input"),
            Want(file.dest, Op.MOVE_TO, "input", create_parents=True)]


@contextmanager
def _pinned(ctx: ToolContext, files: list[_File]) -> Iterator[list[_File]]:
    wants = [want for file in files for want in _wants(file)]
    moves = any(file.dest is not None for file in files)
    with ctx.view.pin_group(wants, moves=moves) as pins:
        it = iter(pins)
        for file in files:
            file.pin = next(it)
            if file.dest is not None:
                file.dest_pin = next(it)
                file.dest_pin.decide(Op.CREATE)
                file.pin.decide(Op.EDIT)
        for file in files:
            source, dest = file.pin, file.dest_pin
            if source is not None and dest is not None and source.path == dest.path:
                raise _onto_itself(source.shown, dest.shown, source.path)
        reached: dict[str, str] = {}
        for pin in pins:  # two spellings of one file: one section each is the rule
            if pin.path in reached:
                raise Refusal(Code.INVALID_ARGUMENT,
                              f"{_said(reached[pin.path])} and {_said(pin.shown)} are the same "
                              f"file ({_said(pin.path)}); nothing was changed",
                              f"Put every change to {_said(pin.path)} in one section.",
                              details={"field": "input", "path": pin.path},
                              kind=Kind.PATCH_SYNTAX)
            reached[pin.path] = pin.shown
        _no_file_where_a_directory_is_needed(wants, pins)
        yield files


def _no_file_where_a_directory_is_needed(wants: list[Want], pins: list[Pinned]) -> None:
    """A section that creates the file ``d`` and another that needs ``d``
    as a directory contradict each other: the patch's mistake, said as
    such before anything is written."""
    created = {pin.path: pin.shown for want, pin in zip(wants, pins)
               if want.op in (Op.CREATE, Op.MOVE_TO)}
    for pin in pins:
        for directory in pin.creates:
            if directory in created:
                raise Refusal(Code.INVALID_ARGUMENT,
                              f"the patch adds the file {created[directory]} and also needs "
                              f"{_said(directory)} as a directory for {_said(pin.shown)}; nothing "
                              f"was changed",
                              f"Give {_said(created[directory])} or {_said(pin.shown)} another "
                              f"name.",
                              details={"field": "input", "path": directory},
                              kind=Kind.PATCH_SYNTAX)


def _plan(ctx: ToolContext, file: _File, dialect: Dialect) -> None:
    assert file.pin is not None
    op, pin = file.op, file.pin
    if isinstance(op, AddFile):
        if pin.lstat() is not None:
            raise exists(file.rel, f"Change {_said(file.rel)} with '*** Update File: "
                                   f"{_said(file.rel)}' "
                         "(its context lines show what you read), or delete it first.",
                         field="input")
        text = new_file_text(op.lines, dialect, op.crlf)
        check_write(ctx, file.rel, text, None)
        file.new = text.encode("utf-8")
        return
    file.info = _regular(ctx, pin, file.rel)
    file.old, _ = pin.read(ctx.limits.max_edit_file_bytes, expect=file.info)
    if isinstance(op, DeleteFile):
        return
    if file.dest_pin is not None and file.dest_pin.lstat() is not None:
        raise exists(file.dest or "", f"Move {_said(file.rel)} to a name that does not exist yet, "
                     "or delete the file there first.", field="input")
    try:
        decoded = decode(file.old)
    except Undecodable as exc:
        raise Refusal(Code.UNSUPPORTED, f"{_said(file.rel)} is not UTF-8 text, so a patch cannot "
                      "change it", "Patch text files only.", details={"path": file.rel},
                      kind=Kind.BINARY if exc.kind == "binary" else Kind.ENCODING) from None
    try:
        applied = apply_update(decoded.text, op.hunks, dialect, ctx.checkpoint)
    except HunkMismatch as miss:
        raise _missed(file.rel, miss) from None
    file.new = encode(applied.text, decoded.bom, decoded.encoding)
    if len(file.new) > ctx.limits.max_write_bytes:
        raise file_too_large(file.rel, len(file.new), ctx.limits.max_write_bytes, "apply_patch")
    file.lines = applied.lines
    file.loose = any(level != "exact" for level in applied.levels)


def _regular(ctx: ToolContext, pin: Pinned, rel: str) -> os.stat_result:
    info = pin.lstat()
    if info is None:
        pin.raise_missing()
        raise swapped(rel)  # there again after all: it changed under the call
    if st.S_ISLNK(info.st_mode):
        raise Refusal(Code.UNSUPPORTED, f"{_said(rel)} is a symlink; apply_patch does not write "
                      "through, replace or delete symlinks", "Patch the file the link "
                      "points to, by its own path.", details={"path": rel, "field": "input"},
                      kind=Kind.SYMLINK)
    if st.S_ISDIR(info.st_mode):
        raise directory_given(rel, "apply_patch")
    if not st.S_ISREG(info.st_mode):
        raise special_file(rel, special_kind(info.st_mode), field="input")
    ctx.check_hardlink(rel, info)
    if info.st_size > ctx.limits.max_edit_file_bytes:
        raise file_too_large(rel, info.st_size, ctx.limits.max_edit_file_bytes, "apply_patch")
    return info


def _missed(rel: str, miss: HunkMismatch) -> Refusal:
    details: dict[str, Any] = {"path": rel, "field": "input", "hunk": miss.hunk,
                               "patchLine": miss.patch_line}
    suggested: dict[str, Any] | None = None
    if miss.nearest is not None:
        line, text = miss.nearest
        details["nearest"] = {"line": line, "text": "\n".join(text)[:2000]}
        suggested = {"path": rel, "offset": max(line - 3, 1), "limit": len(text) + 6}
    if miss.kind == "too_costly":
        return Refusal(Code.TOO_LARGE, f"{_said(rel)}: {miss.message}; nothing was changed",
                       "Split the patch into smaller ones, and give each hunk context lines "
                       "that occur in few places.", details=details, kind=Kind.TOO_MANY_PLACES)
    if miss.kind == "ambiguous":
        details["lines"] = miss.candidates
        return Refusal(Code.AMBIGUOUS, f"{_said(rel)}: {miss.message}; nothing was changed",
                       "Add context lines (or an '@@' line naming the function or class above "
                       "the change) so the hunk matches one place.", details=details,
                       kind=Kind.MULTIPLE_MATCHES)
    where = (f" The nearest lines are at line {miss.nearest[0]}." if miss.nearest else "")
    return Refusal(Code.NOT_FOUND, f"{_said(rel)}: {miss.message}; nothing was changed",
                   "Read the file again and copy the context and '-' lines exactly as they "
                   f"are now.{where}", details=details, kind=Kind.NO_MATCH,
                   suggested_tool="read_file" if suggested else None,
                   suggested_args=suggested)


# -- asking, checking again, acting ---------------------------------------------------------

def _ask(ctx: ToolContext, file: _File) -> None:
    assert file.pin is not None
    op, pin = file.op, file.pin
    new_sha = sha256_hex(file.new)
    if isinstance(op, AddFile):
        asked, omitted = listed_directories(pin.creates)
        ctx.view.ask(WriteRequest(pin.path, bytes=len(file.new), sha256=new_sha,
                                  creates_directories=asked, creates_omitted=omitted), pin)
    elif isinstance(op, DeleteFile):
        ctx.view.ask(DeleteRequest(pin.path, kind="file", sha256=sha256_hex(file.old)), pin)
    else:
        ctx.view.ask(EditRequest(pin.path, base_sha256=sha256_hex(file.old),
                                 result_sha256=new_sha, result_bytes=len(file.new),
                                 replacements=len(op.hunks)), pin)
        if file.dest_pin is not None:
            asked, omitted = listed_directories(file.dest_pin.creates)
            ctx.view.ask(MoveRequest(pin.path, destination=file.dest_pin.path,
                                     creates_directories=asked, creates_omitted=omitted),
                         pin, file.dest_pin)


def _ask_each(ctx: ToolContext, files: list[_File]) -> None:
    """Ask the host about every section; each later question is a window
    for the places asked about before it (a folder moved onto a protected
    name, a repository made meanwhile), so after the last answer every
    place is checked and decided again as the one asked about was."""
    pins = [pin for file in files for pin in (file.pin, file.dest_pin) if pin is not None]
    places = [pin.place() for pin in pins] if ctx.asks_host and len(pins) > 1 else None
    for file in files:
        _ask(ctx, file)
    if places is not None:
        for pin, place in zip(pins, places):
            pin.ensure_place(place)
            pin.release()  # what is there now is opened afresh
            pin.decide_again()


def _recheck(ctx: ToolContext, file: _File) -> None:
    """Fail closed if any file changed while the host was deciding."""
    assert file.pin is not None
    pin = file.pin
    if isinstance(file.op, AddFile):
        if pin.lstat() is not None:
            raise swapped(file.rel)
        return
    pin.same(file.info)
    now, _ = pin.read(ctx.limits.max_edit_file_bytes, expect=file.info)
    if now != file.old:
        raise swapped(file.rel)
    if file.dest_pin is not None and file.dest_pin.lstat() is not None:
        raise swapped(file.dest or "")


def _act(files: list[_File]) -> None:
    """Every write and move first, in the patch's order, every deletion
    last; should a step fail, the steps already taken are undone, newest
    first.  A moved file is renamed (it keeps its inode: mode, owner,
    extended attributes) before its new text replaces it, so only a
    deleted file is ever put back from its bytes, and that only when a
    later deletion fails."""
    done: list[tuple[_File, _Step]] = []
    try:
        for file in files:
            if not isinstance(file.op, DeleteFile):
                _write(file, done)
        for file in files:
            if isinstance(file.op, DeleteFile):
                assert file.pin is not None
                file.pin.remove()
                done.append((file, _Step.DELETED))
    except BaseException:
        for file, step in reversed(done):
            _undo(file, step)
        raise


class _Step(enum.Enum):
    """One change made to the tree, and so one to undo."""

    MADE = "made"            # the directories an added or moved file's new name needed
    WRITTEN = "written"      # an added file created, or an updated file replaced
    RENAMED = "renamed"      # a moved file renamed to its new name
    REWRITTEN = "rewritten"  # a moved file's new text put in place at its new name
    DELETED = "deleted"


def _write(file: _File, done: list[tuple[_File, _Step]]) -> None:
    assert file.pin is not None
    pin, info = file.pin, file.info
    if info is not None:
        read_cache.forget(info.st_dev, info.st_ino)
    if isinstance(file.op, AddFile):
        file.made = pin.make_parents()
        done.append((file, _Step.MADE))
        pin.write(file.new, exclusive=True, expect=None)
    elif file.dest_pin is not None:
        file.made = file.dest_pin.make_parents()
        done.append((file, _Step.MADE))
        pin.rename_to(file.dest_pin, replace=False)
        done.append((file, _Step.RENAMED))
        file.dest_pin.write(file.new, exclusive=False, expect=info)
        done.append((file, _Step.REWRITTEN))
        return
    else:
        pin.write(file.new, exclusive=False, expect=info)
    done.append((file, _Step.WRITTEN))


def _undo(file: _File, step: _Step) -> None:
    """Undo one step (best effort: the failure that stopped the patch is
    what the caller hears).  A file put back from its bytes gets the
    permission bits it had from its first byte."""
    assert file.pin is not None
    pin = file.pin
    try:
        if step is _Step.DELETED:
            assert file.info is not None
            pin.write(file.old, exclusive=True, expect=None, mode=st.S_IMODE(file.info.st_mode))
        elif step is _Step.REWRITTEN:
            assert file.dest_pin is not None
            file.dest_pin.write(file.old, exclusive=False, expect=file.dest_pin.lstat())
        elif step is _Step.RENAMED:
            assert file.dest_pin is not None
            file.dest_pin.rename_to(pin, replace=False)
        elif step is _Step.MADE:
            (file.dest_pin or pin).unmake_parents(file.made)
        elif isinstance(file.op, AddFile):
            pin.remove()
        else:
            pin.write(file.old, exclusive=False, expect=pin.lstat())
    except OSError:
        pass


def _answer(file: _File) -> dict[str, Any]:
    assert file.pin is not None
    if isinstance(file.op, AddFile):
        return {"path": file.pin.path, "action": "added", "sha256": sha256_hex(file.new),
                "createdDirectories": list(file.made)}  # made by this call, not planned
    if isinstance(file.op, DeleteFile):
        return {"path": file.pin.path, "action": "deleted"}
    answer: dict[str, Any] = {"path": file.pin.path, "action": "updated",
                              "sha256": sha256_hex(file.new), "hunkLines": file.lines}
    if file.dest_pin is not None:  # with the directories its move made, as an added file
        answer.update(action="moved", movedTo=AnswerPath(file.dest_pin.path),
                      createdDirectories=list(file.made))
    if file.loose:
        answer["note"] = ("a hunk matched only with whitespace or punctuation differences "
                          "forgiven")
    return answer


OUTPUT_SCHEMA = success_schema({
    "files": {"type": "array", "items": {
        "type": "object",
        "properties": {
            "path": {"type": "string"},
            "action": {"type": "string", "enum": ["added", "updated", "moved", "deleted"]},
            "sha256": {"type": "string"},
            "movedTo": {"type": "string"},
            "hunkLines": {"type": "array", "items": {"type": "integer"}},
            "createdDirectories": {"type": "array", "items": {"type": "string"}},
            "note": {"type": "string"},
        },
        "required": ["path", "action"],
    }},
}, ["files"])

TOOL = ToolSpec(name="apply_patch", title="Apply patch", description=DESCRIPTION, schema=SCHEMA,
                output_schema=OUTPUT_SCHEMA, run=run, request=EditRequest, mutates=True,
                idempotent=False, destructive=True, suggests=Suggests(read_instead=True))
