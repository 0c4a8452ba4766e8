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
from typing import Any, Literal, NotRequired, TypedDict
from collections.abc import Callable

from ...contained import PathError
from .._refusals.locator import close_paths
from .._read import cache as read_cache
from .._edit.content import check_write, warnings_alone
from .._edit.digest import EXPECTED_DIGEST, digest_matches, expected_digest
from .._runtime.answer import sentence_path as _said
from .._runtime.context import PlainCall, ToolContext, clean_path
from .._runtime.limits import (CREATED_SCHEMA, CreatedDirectories, created_directories,
                               listed_directories)
from .._policy.rules import Op
from .._refusals.catalogue import (Code, Kind, Refusal, sha256_mismatch, special_file,
                                   special_kind, swapped)
from .._runtime.registry import ToolSpec, success_schema
from .._runtime.request_types import WriteRequest
from .._runtime.view import BYTE_ORDER_MARKS, Pinned, View, replace_plain
from .._refusals.names import check_new_name
from .._read.textform import Form, apply_form, form_of

DESCRIPTION = (
    "Create a file, or replace a whole one, with content exactly as given; missing parent "
    "directories are made. Replacing needs overwrite: true or expectedSha256 (refused if "
    "the file changed since). Send the whole file, never the read margin or a placeholder "
    "such as '# ... rest unchanged ...'. To change part of a file use edit_file."
)

SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "path": {"type": "string", "minLength": 1, "maxLength": 4096},
        "content": {"type": "string", "x-allowNul": True},
        "overwrite": {"type": "boolean", "default": False},
        "expectedSha256": EXPECTED_DIGEST,
        "keepFormat": {"type": "boolean", "default": True,
                       "description": "Keep a replaced file's CRLF, BOM and UTF-16/32 "
                                      "encoding."},
        "dryRun": {"type": "boolean", "default": False,
                   "description": "Only say what the write would do."},
    },
    "required": ["path", "content"],
    "additionalProperties": False,
}


class Warned(TypedDict):
    warnings: NotRequired[list[str]]


class WriteResult(CreatedDirectories, Warned):
    path: str
    bytes: int
    sha256: str
    created: bool
    kept: NotRequired[str]  # the form of the replaced file that was kept
    dryRun: NotRequired[Literal[True]]


def run(ctx: ToolContext, args: dict[str, Any]) -> WriteResult:
    rel = ctx.rel(args["path"])
    if rel[-1] in "./":  # only such a path can name a directory ("x/", ".", "x/..")
        _refuse_directory(ctx, rel)
    content: str = args["content"]
    limit = ctx.limits.max_write_bytes
    if len(content) > limit // 4:  # it may be over: measured without encoding it (a copy)
        size = _utf8_size(content)
        if size > limit:
            raise Refusal(Code.TOO_LARGE, f"the content is {size} bytes, over the limit of "
                          f"{limit} bytes", "Write a smaller file, or split it into several "
                          "files.", details={"path": rel, "field": "content", "bytes": size,
                                             "limit": limit}, kind=Kind.CONTENT_SIZE)
    expected = expected_digest(args)
    if expected is None and args["overwrite"] and not args["dryRun"] and \
            not ctx.hears_requests and not ctx.tried_plain:
        done = _replace_plain(ctx.view.shared, ctx.checkpoint, rel, content, args["keepFormat"])
        if done is not None:
            return done
    data = content.encode("utf-8")
    kept: Form | None = None  # the replaced file's form, where one was kept
    # one step: the policy, the host's question and the write all act on what was pinned
    with ctx.view.pin(rel, Op.CREATE, create_parents=True) as target:
        current, existing = _plan(ctx, target, rel, expected, args["overwrite"])
        if current is None:
            _check_new_name(ctx, rel, target.creates, args)
        # a file there was decided for REPLACE by _plan (a secret is not replaced)
        warnings = check_write(ctx, rel, content, current, target)
        if current is not None and args["keepFormat"]:
            form = _form(target, current)
            if form is not None:  # a plain form keeps nothing: data is already its bytes
                data, kept = apply_form(content, form)
        digest = hashlib.sha256(data).hexdigest()
        if args["dryRun"]:
            return _dry(rel, data, digest, current, target.creates, kept, warnings)
        if ctx.hears_requests:  # else no one hears the request: none is built
            asked, omitted = listed_directories(target.creates)
            # the host judges where the write lands (canonical), never the spelling
            ctx.view.ask(WriteRequest(target.path, bytes=len(data), sha256=digest,
                                      overwrite=current is not None,
                                      existing_sha256=existing,
                                      creates_directories=asked, creates_omitted=omitted),
                         target)
            if ctx.asks_host:
                _recheck(target, rel, current, existing)  # nothing changed while the host decided
        ctx.checkpoint()  # the last one: stopped now, nothing is written
        if current is not None:
            read_cache.forget(current.st_dev, current.st_ino)
        if target.creates:
            with target.parents_made() as created:
                target.write(data, exclusive=current is None, expect=current)
        else:  # the common write: no directory to make (none to remove should it fail)
            created = None
            target.write(data, exclusive=current is None, expect=current)

    result: WriteResult = {"path": rel, "bytes": len(data), "sha256": digest,
                           "createdDirectories": [], "created": current is None}
    if created:
        _add_created(result, created)
    if current is not None and current.st_nlink > 1:
        warnings.append(f"{_said(rel)} had {current.st_nlink} hard links; it was replaced, and its "
                        "other links still hold the old content")
    if warnings:
        result["warnings"] = warnings
    if kept is not None and not kept.plain:
        result["kept"] = _kept_note(rel, kept)
    return result


def run_plain(call: PlainCall, args: dict[str, Any]) -> WriteResult | None:
    """:func:`run` of the commonest call, for a call nothing else hears
    (``ToolSpec.plain``): a clean path, ``overwrite``, no digest expected,
    not a dry run, content not near the limit; ``None`` for any other call
    (nothing done), or where :func:`replace_plain` does not take it (what
    changed taken in: ``call.readied``)."""
    if not args["overwrite"] or args["dryRun"] or args.get("expectedSha256") is not None:
        return None
    rel: str = args["path"]
    limits = call.limits
    content: str = args["content"]
    if rel[-1] in "./" or len(content) > limits.max_write_bytes // 4 or \
            not clean_path(rel, limits):
        return None  # as run() says it
    call.ready()
    return _replace_plain(call.view, call.checkpoint, rel, content, args["keepFormat"])


def _replace_plain(view: View, checkpoint: Callable[[], None], rel: str, content: str,
                   keep_format: bool) -> WriteResult | None:
    """The common write, a plain file replaced with ``overwrite`` and no
    one asked, in the view's plain step (:func:`replace_plain`): the same
    locks, decisions and atomic replace as :func:`run`'s step, made where
    every fact that step would weigh is known to allow it.  ``None``,
    nothing written, where it is not such a write (a file with other
    links, one whose form is kept, content compared with the file): the
    caller takes the general step."""
    # what the call warns of, known from the content alone (None: content
    # compared with the file's, looked at in full, as is content under half
    # the size of the file it replaces: the step's bound on that size)
    warnings = warnings_alone(content, 0)
    if warnings is None:
        return None
    # the bytes and their digest, made before any lock is taken
    data = content.encode("utf-8")
    digest = _EMPTY_SHA256.copy()  # (see _EMPTY_SHA256)
    digest.update(data)
    replaced = replace_plain(view, checkpoint, rel, data, 2 * len(content),
                             _FORM_HEAD if keep_format else 0)
    if replaced is None:
        return None
    read_cache.forget(replaced.st_dev, replaced.st_ino)  # read_file's digest of it
    if warnings:
        return {"path": rel, "bytes": len(data), "sha256": digest.hexdigest(),
                "createdDirectories": [], "created": False, "warnings": warnings}
    return {"path": rel, "bytes": len(data), "sha256": digest.hexdigest(),
            "createdDirectories": [], "created": False}


def _add_created(result: WriteResult, created: list[str]) -> None:
    made = created_directories(created)
    result["createdDirectories"] = made["createdDirectories"]
    if "createdDirectoriesOmitted" in made:
        result["createdDirectoriesOmitted"] = made["createdDirectoriesOmitted"]


def _kept_note(rel: str, kept: Form) -> str:
    return (f"kept the {kept.describe()} of {_said(rel)}; pass keepFormat: false to write the "
            "content exactly as given")


def _dry(rel: str, data: bytes, digest: str, current: os.stat_result | None,
         creates: tuple[str, ...], kept: Form | None, warnings: list[str]) -> WriteResult:
    """What the write would do, nothing done (the host is not asked)."""
    result: WriteResult = {"path": rel, "bytes": len(data), "sha256": digest,
                           "createdDirectories": [], "created": current is None,
                           "dryRun": True}
    _add_created(result, list(creates))
    if warnings:
        result["warnings"] = warnings
    if kept is not None and not kept.plain:
        result["kept"] = _kept_note(rel, kept)
    return result


#: a sha256 of no bytes yet, copied for each digest the plain write makes: a
#: copy skips the algorithm's look-up in OpenSSL that a new hash object makes
_EMPTY_SHA256 = hashlib.sha256()
_FORM_HEAD = 64 * 1024  # bytes of a replaced file looked at for its form
# what a head starting with none of these and holding no "\r" cannot be (so it is plain)
_MARKS = BYTE_ORDER_MARKS


def _form(target: Pinned, info: os.stat_result) -> Form | None:
    """The form (BOM, CRLF, wide encoding) of the file being replaced, from
    its head; ``None`` for a plain one, or when it cannot be read."""
    try:
        head = target.head(_FORM_HEAD, info)
    except (OSError, Refusal):
        return None
    if b"\r" not in head and not head.startswith(_MARKS):
        return None
    if len(head) >= _FORM_HEAD:
        head = head[:_FORM_HEAD]
        head = head[:head.rfind(b"\n") + 1] or head[:_FORM_HEAD - _FORM_HEAD % 4]
    form = form_of(head)
    return None if form.plain else form


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


def _check_new_name(ctx: ToolContext, rel: str, creates: tuple[str, ...],
                    args: dict[str, Any]) -> None:
    """A name write_file would create that the model most likely did not
    mean: refused, with the file meant in a suggested call."""
    refusal = check_new_name(ctx.view, rel, creates, "write_file", args)
    if refusal is not None:
        raise refusal


def _refuse_directory(ctx: ToolContext, rel: str) -> None:
    """Refuse the model's path if it can only name a directory."""
    name = rel.rstrip("/").rsplit("/", 1)[-1]
    if rel == "." or rel.endswith("/") or name == "..":
        ctx.refuse_escape(rel)  # "..", "link/": OUTSIDE_ROOT if they lead out, DENIED if hidden
        shown = rel.rstrip("/") or "."
        raise Refusal(Code.INVALID_ARGUMENT, f"{_said(shown)} names a directory, not a file",
                      "Pass the path of a file to write, such as \"src/main.py\".",
                      details={"path": shown, "field": "path"}, kind=Kind.DIRECTORY)


def _plan(ctx: ToolContext, target: Pinned, rel: str, expected: str | None,
          overwrite: bool) -> tuple[os.stat_result | None, str | None]:
    """Find what is there now and decide: refuse to replace without
    ``overwrite`` or a matching ``expectedSha256``.  What is there (``None``:
    nothing) and its sha256 (``None`` where no one compares or is told it)."""
    current = target.look()  # a regular file stays open: digest, head and write use it
    if current is None:
        if expected is not None:
            raise _missing(ctx, rel, expected)
        return None, None
    if not st.S_ISREG(current.st_mode):
        _refuse_replacing(ctx, rel, current)
    target.decide(Op.REPLACE)  # before its digest is told: a secret's is never
    if current.st_nlink > 1 and not ctx.allow_hardlinks and (expected is not None or
                                                             not overwrite):
        # its digest is its content: of a file no tool reads (its other name
        # may be outside the root, a secret's, a denied one's), never told
        # nor compared with a guess
        if expected is not None:
            ctx.check_hardlink(rel, current)
        raise Refusal(Code.ALREADY_EXISTS, f"{_said(rel)} already exists; nothing was written",
                      "Pass overwrite: true to replace it (it is hard-linked, so its content "
                      "is not read).", details={"path": rel, "links": current.st_nlink},
                      kind=Kind.EXISTS)
    if expected is None and overwrite and not ctx.asks_host:
        return current, None  # the digest of what is replaced would be compared or told to no one
    existing = target.sha256(current)
    if expected is not None and not digest_matches(expected, existing):
        raise sha256_mismatch(rel, expected, existing)
    if expected is None and not overwrite:
        raise Refusal(Code.ALREADY_EXISTS, f"{_said(rel)} already exists; nothing was written",
                      f"Pass expectedSha256 \"{existing}\" (its current sha256) or "
                      "overwrite: true to replace it, or use edit_file to change part of it.",
                      details={"path": rel, "currentSha256": existing,
                               "bytes": current.st_size}, kind=Kind.EXISTS)
    return current, existing


def _recheck(target: Pinned, rel: str, current: os.stat_result | None,
             existing: str | None) -> None:
    """Fail closed if the entry the plan was made on changed since (the
    directory is held; the directories to create are checked when made).
    Only if the host was asked: without a question the lock was held
    throughout, and the write itself checks, right before its rename, that
    the file replaced is the one planned on (an absent one is created
    without replacing anything)."""
    target.same(current)
    if current is not None and target.sha256(current) != existing:
        raise swapped(rel)  # rewritten in place while the host was deciding


def _refuse_replacing(ctx: ToolContext, rel: str, info: os.stat_result) -> None:
    """Refuse to replace what is not a regular file: a symlink, a directory,
    a special file."""
    kind = st.S_IFMT(info.st_mode)
    if kind == st.S_IFLNK:
        try:  # never written through; but a link into a rule's reach says that rule
            ctx.check_path(rel, Op.REPLACE)
        except OSError:
            # its end's directories missing: decided on where its text leads all the same
            end = ctx.view.dangling_end(rel)
            if end is not None:
                ctx.check(end, Op.REPLACE, shown=rel.rstrip("/") or ".")
            # else outside, or a loop: refused below, saying nothing of where
        details: dict[str, Any] = {"path": rel}
        hint = ("Pass the path of a regular file inside the root; this link leads outside "
                "it or to nothing, so there is no file here to write instead.")
        try:
            target = ctx.view.realpath(rel)
        except OSError:
            target = None  # leads outside, dangles or loops: say nothing of where
        if target is not None and not ctx.is_denied(target):
            details["target"] = target
            hint = f"Write to {target}, the file the link points to, by that path."
        raise Refusal(Code.UNSUPPORTED, f"{_said(rel)} is a symlink; write_file does not write "
                      "through or replace symlinks", hint, details=details, kind=Kind.SYMLINK)
    if kind == st.S_IFDIR:
        raise Refusal(Code.INVALID_ARGUMENT, f"{_said(rel)} is a directory, not a file",
                      "Pass the path of a file; list_directory shows what this directory holds.",
                      details={"path": rel}, kind=Kind.DIRECTORY,
                      suggested_tool="list_directory", suggested_args={"path": rel})
    if kind != st.S_IFREG:
        raise special_file(rel, special_kind(info.st_mode),
                           hint="Use regular files only; this one cannot be replaced.")


def _missing(ctx: ToolContext, rel: str, expected: str) -> Refusal:
    """expectedSha256 names a file that is not there (a typo, or it went away)."""
    try:
        ctx.view.stat(rel)
        missing = rel
    except OSError as exc:
        if exc.errno != errno.ENOENT:
            raise
        missing = (exc.component if isinstance(exc, PathError) else None) or rel
    details: dict[str, Any] = {"path": rel, "missing": missing, "expectedSha256": expected}
    candidates = [c for c in close_paths(rel, missing, ctx.view) if not ctx.is_denied(c)]
    if candidates:
        details["didYouMean"] = candidates
        hint = (f"Check the path ({_said(candidates[0])} exists); to create a new file, drop "
                "expectedSha256.")
    else:
        hint = "To create a new file, drop expectedSha256; otherwise check the path."
    message = (f"{_said(rel)} does not exist, so it cannot have the expectedSha256 given"
               if missing == rel else
               f"{_said(rel)} does not exist (there is no {_said(missing)}), so it cannot have the "
               "expectedSha256 given")
    return Refusal(Code.NOT_FOUND, message, hint, details=details, kind=Kind.MISSING)


OUTPUT_SCHEMA = success_schema({
    "path": {"type": "string"}, "bytes": {"type": "integer"}, "sha256": {"type": "string"},
    **CREATED_SCHEMA,
    "created": {"type": "boolean"},
    "dryRun": {"type": "boolean"},
    "kept": {"type": "string", "description": "the replaced file's line endings, byte order "
                                              "mark or encoding, kept"},
    "warnings": {"type": "array", "items": {"type": "string"}},
}, ["path", "bytes", "sha256", "createdDirectories", "created"])

TOOL = ToolSpec(name="write_file", title="Write file", description=DESCRIPTION, schema=SCHEMA,
                output_schema=OUTPUT_SCHEMA, run=run, request=WriteRequest, mutates=True,
                idempotent=True, destructive=True, plain=run_plain)
