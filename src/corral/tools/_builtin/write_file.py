"""write_file: create a file, or replace one the caller has seen.

Order, all under the per-path lock: find what is there now (and the
directories that would have to be created), decide (refuse to replace
without ``overwrite`` or a matching ``expectedSha256``), describe the whole
mutation to the host, re-check that nothing was swapped meanwhile, create
the directories, write.  The write is atomic (temporary file + rename) and
keeps the replaced file's permission bits.

A final symlink is refused (kind ``symlink``), never written through and
never replaced: a model writing ``config.yml`` that is a link would
otherwise change a file it did not name, or silently cut the link.  A
hard-linked file is replaced as a directory entry, so its other links keep
the old content (a warning says so).
"""

from __future__ import annotations

import errno
import hashlib
import os
import stat as st
from dataclasses import dataclass
from typing import Any

from .._refusals.classify import close_paths
from .._read import cache as read_cache
from .._edit.content import check_write
from .._runtime.context import ToolContext
from .._runtime.limits import CREATED_SCHEMA, created_directories, listed_directories
from .._policy.rules import Op
from .._refusals.catalogue import (Code, Kind, Refusal, sha256_mismatch, special_file,
                                   special_kind, swapped)
from .._runtime.registry import ToolSpec, success_schema
from .._runtime.request_types import WriteRequest
from .._runtime.view import Pinned

DESCRIPTION = (
    "Create a file with the given content, or replace a whole file. Missing parent directories "
    "are created and listed in 'createdDirectories' (check them: a typo in a directory name "
    "shows up there). An existing file is replaced only when you pass 'expectedSha256' (the "
    "sha256 read_file returned for it; refused as stale if the file changed since) or "
    "'overwrite': true. To change part of a file use edit_file. The result gives the new "
    "'sha256', 'bytes' written and 'created' (false when a file was replaced). The content is "
    "written exactly as given (UTF-8), atomically, keeping a replaced file's permissions; "
    "symlinks are not written through. Never send read_file's line numbers: content whose "
    "every line starts with 'N<TAB>' counting up is refused (not stripped), except for .tsv "
    "files. Never elide: an overwrite whose placeholder line (such as '# ... rest of the code "
    "unchanged ...') would drop lines of the file is refused; write the whole file."
)

SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "path": {"type": "string", "minLength": 1, "maxLength": 4096,
                 "description": "The file to write, relative to the root."},
        "content": {"type": "string", "x-allowNul": True,
                    "description": "The whole new content of the file."},
        "overwrite": {"type": "boolean", "default": False,
                      "description": "Replace an existing file whatever it holds (default false)."},
        "expectedSha256": {"type": "string", "minLength": 64, "maxLength": 64,
                           "pattern": "^[0-9a-fA-F]{64}$",
                           "x-format": "64 hexadecimal digits (a sha256 from read_file)",
                           "description": "Replace the existing file only if its sha256 is this "
                                          "(from read_file)."},
    },
    "required": ["path", "content"],
    "additionalProperties": False,
}


@dataclass
class _Plan:
    """What the write will do, as decided under the lock before asking the host."""

    rel: str
    current: os.stat_result | None
    existing: str | None  # sha256 of the file being replaced


def run(ctx: ToolContext, args: dict[str, Any]) -> dict[str, Any]:
    rel = _file_path(ctx, args["path"])
    content: str = args["content"]
    limit = ctx.limits.max_write_bytes
    if len(content) > limit // 4:  # it may be over: measured without encoding it (a copy)
        size = _utf8_size(content)
        if size > limit:
            raise Refusal(Code.TOO_LARGE, f"the content is {size} bytes, over the limit of "
                          f"{limit} bytes", "Write a smaller file, or split it into several "
                          "files.", details={"path": rel, "field": "content", "bytes": size,
                                             "limit": limit}, kind=Kind.CONTENT_SIZE)
    data = content.encode("utf-8")
    expected: str | None = args.get("expectedSha256")
    if expected is not None:
        expected = expected.lower()
    digest = hashlib.sha256(data).hexdigest()
    # one step: the policy, the host's question and the write all act on what was pinned
    with ctx.view.pin(rel, Op.CREATE, create_parents=True) as target:
        plan = _plan(ctx, target, rel, expected, args["overwrite"])
        if plan.current is not None:
            target.decide(Op.REPLACE)  # a secret is not replaced
        warnings = check_write(ctx, rel, content, plan.current)
        asked, omitted = listed_directories(target.creates)
        # the host judges where the write lands (canonical), never the spelling
        ctx.view.ask(WriteRequest(target.path, bytes=len(data), sha256=digest,
                                  overwrite=plan.current is not None,
                                  existing_sha256=plan.existing,
                                  creates_directories=asked, creates_omitted=omitted), target)
        _recheck(target, plan)  # nothing may have changed while the host was deciding
        created = target.make_parents()
        current = plan.current
        if current is not None:
            read_cache.forget(current.st_dev, current.st_ino)
        target.write(data, exclusive=current is None, expect=current)

    current = plan.current
    result: dict[str, Any] = {"path": rel, "bytes": len(data), "sha256": digest,
                              **created_directories(created), "created": current is None}
    if current is not None and current.st_nlink > 1:
        warnings.append(f"{rel} had {current.st_nlink} hard links; it was replaced, and its other "
                        "links still hold the old content")
    if warnings:
        result["warnings"] = warnings
    return result


_SIZE_CHUNK = 1 << 18  # characters encoded at a time to measure a non-ASCII text


def _utf8_size(text: str) -> int:
    """``len(text.encode("utf-8"))`` without a copy of the whole text (a
    refused content may be 16 MiB): ASCII is one byte a character, other
    text is encoded a slice at a time (the schema has refused lone
    surrogates already)."""
    if text.isascii():
        return len(text)
    return sum(len(text[i:i + _SIZE_CHUNK].encode("utf-8", "surrogatepass"))
               for i in range(0, len(text), _SIZE_CHUNK))


def _file_path(ctx: ToolContext, value: str) -> str:
    """The model's path, refused if it can only name a directory."""
    rel = ctx.rel(value)
    name = rel.rstrip("/").rsplit("/", 1)[-1]
    if rel == "." or rel.endswith("/") or name == "..":
        ctx.refuse_escape(rel)  # "..", "link/": OUTSIDE_ROOT when they lead out
        shown = rel.rstrip("/") or "."
        raise Refusal(Code.INVALID_ARGUMENT, f"{shown} names a directory, not a file",
                      "Pass the path of a file to write, such as \"src/main.py\".",
                      details={"path": shown, "field": "path"}, kind=Kind.DIRECTORY)
    return rel


def _plan(ctx: ToolContext, target: Pinned, rel: str, expected: str | None,
          overwrite: bool) -> _Plan:
    """Find what is there now and decide: refuse to replace without
    ``overwrite`` or a matching ``expectedSha256``."""
    current = target.lstat()
    plan = _Plan(rel, current, None)
    if current is None:
        if expected is not None:
            raise _missing(ctx, rel, expected)
        return plan
    _check_replaceable(ctx, rel, current)
    plan.existing = existing = target.sha256(current)
    if expected is not None and expected != existing:
        raise sha256_mismatch(rel, expected, existing)
    if expected is None and not overwrite:
        raise Refusal(Code.ALREADY_EXISTS, f"{rel} already exists; nothing was written",
                      f"Pass expectedSha256 \"{existing}\" (its current sha256) or "
                      "overwrite: true to replace it, or use edit_file to change part of it.",
                      details={"path": rel, "currentSha256": existing,
                               "bytes": current.st_size}, kind=Kind.EXISTS)
    return plan


def _recheck(target: Pinned, plan: _Plan) -> None:
    """Fail closed if the entry the plan was made on changed since (the
    directory is held; the directories to create are checked when made)."""
    target.same(plan.current)
    if plan.current is not None and target.sha256(plan.current) != plan.existing:
        raise swapped(plan.rel)  # rewritten in place while the host was deciding


def _check_replaceable(ctx: ToolContext, rel: str, info: os.stat_result) -> None:
    kind = st.S_IFMT(info.st_mode)
    if kind == st.S_IFLNK:
        try:  # never written through; but a link into a rule's reach says that rule
            ctx.check_path(rel, Op.REPLACE)
        except OSError:
            pass  # leads outside, dangles or loops: refused below, saying nothing of where
        details: dict[str, Any] = {"path": rel}
        hint = "Write to the file the link points to, by its own path."
        try:
            target = ctx.root.realpath(rel)
        except OSError:
            target = None  # leads outside, dangles or loops: say nothing of where
        if target is not None and not ctx.is_denied(target):
            details["target"] = target
            hint = f"Write to {target}, the file the link points to, by that path."
        raise Refusal(Code.UNSUPPORTED, f"{rel} is a symlink; write_file does not write through "
                      "or replace symlinks", hint, details=details, kind=Kind.SYMLINK)
    if kind == st.S_IFDIR:
        raise Refusal(Code.INVALID_ARGUMENT, f"{rel} is a directory, not a file",
                      "Pass the path of a file; list_directory shows what this directory holds.",
                      details={"path": rel}, kind=Kind.DIRECTORY,
                      suggested_tool="list_directory", suggested_args={"path": rel})
    if kind != st.S_IFREG:
        raise special_file(rel, special_kind(info.st_mode),
                           hint="Use regular files only; this one cannot be replaced.")


def _missing(ctx: ToolContext, rel: str, expected: str) -> Refusal:
    """expectedSha256 names a file that is not there (a typo, or it went away)."""
    try:
        ctx.root.stat(rel)
        missing = rel
    except OSError as exc:
        if exc.errno != errno.ENOENT:
            raise
        missing = getattr(exc, "component", None) or rel
    details: dict[str, Any] = {"path": rel, "missing": missing, "expectedSha256": expected}
    candidates = [c for c in close_paths(rel, missing, ctx) if not ctx.is_denied(c)]
    if candidates:
        details["didYouMean"] = candidates
        hint = (f"Check the path ({candidates[0]} exists); to create a new file, drop "
                "expectedSha256.")
    else:
        hint = "To create a new file, drop expectedSha256; otherwise check the path."
    message = (f"{rel} does not exist, so it cannot have the expectedSha256 given"
               if missing == rel else
               f"{rel} does not exist (there is no {missing}), so it cannot have the "
               "expectedSha256 given")
    return Refusal(Code.NOT_FOUND, message, hint, details=details, kind=Kind.MISSING)


OUTPUT_SCHEMA = success_schema({
    "path": {"type": "string"}, "bytes": {"type": "integer"}, "sha256": {"type": "string"},
    **CREATED_SCHEMA,
    "created": {"type": "boolean"},
    "warnings": {"type": "array", "items": {"type": "string"}},
}, ["path", "bytes", "sha256", "createdDirectories", "created"])

TOOL = ToolSpec(name="write_file", title="Write file", description=DESCRIPTION, schema=SCHEMA,
                output_schema=OUTPUT_SCHEMA, run=run, request=WriteRequest, mutates=True,
                idempotent=True, destructive=True)
