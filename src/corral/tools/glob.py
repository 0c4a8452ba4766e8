"""glob: find paths by pattern below a directory, sorted, capped honestly.

Decisions (DESIGN.md leaves them to the tool):

* A pattern without ``/`` matches names at any depth (``*.py`` is
  ``**/*.py``); with a ``/`` it is matched against the whole path below
  ``path``.  A trailing ``/`` asks for directories (listed with a ``/``).
* ``..`` in a pattern is refused (``INVALID_ARGUMENT``): patterns only ever
  match below ``path``.  An absolute pattern is taken like an absolute path:
  inside the root it is read root-relative (and anchored), outside it is
  ``OUTSIDE_ROOT``.
* Symlinks are never followed while walking.  A symlink whose name matches
  is listed only if it leads, inside the root, to a regular file (so every
  listed file can be read); other links are skipped and counted.  FIFOs,
  sockets and devices are skipped and counted.
* ``.gitignore`` files at every level (and above ``path``) are honoured, and
  ``.git`` directories skipped; both are counted, and ``includeIgnored``
  turns that off.  A ``path`` that is itself ignored is searched anyway
  (it was named), with a note.
"""

from __future__ import annotations

import os
import posixpath
import stat as st
from typing import Any

from ._context import ToolContext
from ._refusal import Code, Refusal
from ._registry import Suggests, ToolSpec, success_schema
from ._requests import GlobRequest
from ._search import IgnoreRules, Walk, ancestor_rules, compile_glob, ignored_note, open_base

DESCRIPTION = (
    "Find files by name pattern below a directory. 'pattern' is a glob (case-sensitive): '*' "
    "and '?' match within one name (leading dots included), '**' matches any number of "
    "directories, '[abc]' / '[!abc]' one character, '{a,b}' alternatives. A pattern without "
    "'/' matches names at any depth: '*.py' finds every .py file (the same as '**/*.py'); a "
    "pattern with '/' is matched against the path below 'path' (e.g. 'src/**/test_*.py'). End "
    "the pattern with '/' to find directories instead of files. 'path' is the directory to "
    "search (default \".\"); '..' is not allowed in patterns. Paths ignored by .gitignore files "
    "(at every level) and .git directories are skipped and counted; pass includeIgnored: true "
    "to include them. Symlinks are never followed; a symlink is listed only if it leads to a "
    "file inside the root. Results are root-relative paths in code-point order; when more "
    "match than the limit, 'truncated' is true. To search file contents use grep."
)

SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "pattern": {"type": "string", "minLength": 1, "maxLength": 4096,
                    "description": "Glob, e.g. \"**/*.py\", \"*.md\", \"src/{a,b}/*.ts\"."},
        "path": {"type": "string", "minLength": 1, "maxLength": 4096, "default": ".",
                 "description": "Directory to search, relative to the root (default \".\")."},
        "includeIgnored": {"type": "boolean", "default": False,
                           "description": "Also list paths ignored by .gitignore, and .git."},
    },
    "required": ["pattern"],
    "additionalProperties": False,
}


def _relative_pattern(ctx: ToolContext, pattern: str, base: str) -> tuple[str, bool]:
    """The pattern relative to ``base``, and whether it is anchored (an
    absolute pattern is; it is root-relative once its root prefix is gone)."""
    if not (pattern.startswith("/") or pattern == "~" or pattern.startswith("~/")):
        return pattern, False
    inside = ctx.rel(pattern, "pattern")  # OUTSIDE_ROOT unless it lies inside the root
    prefix = base.rstrip("/")
    if prefix in ("", "."):
        return inside, True
    if inside.startswith(prefix + "/"):
        return inside[len(prefix) + 1:], True
    # the pattern is a host path: never echoed (it would name host directories)
    raise Refusal(Code.INVALID_ARGUMENT, f"the absolute pattern is not below path {prefix}",
                  "Pass a pattern relative to 'path', or leave 'path' at \".\".",
                  details={"field": "pattern", "path": prefix, "kind": "pattern_outside_path"})


def _leads_to_file(ctx: ToolContext, real: str) -> bool:
    try:
        return st.S_ISREG(ctx.root.stat(real).st_mode)
    except OSError:  # dangling, outside, a loop: not a file here
        return False


def run(ctx: ToolContext, args: dict[str, Any]) -> dict[str, Any]:
    rel = ctx.rel(args["path"])
    given = args["pattern"]
    pattern, anchored = _relative_pattern(ctx, given, rel)
    matcher = compile_glob(pattern, anchored=anchored)
    ctx.check_deny(rel)
    info = ctx.root.stat(rel)
    shown = rel.rstrip("/") or "."
    if not st.S_ISDIR(info.st_mode):
        what = "a file" if st.S_ISREG(info.st_mode) else "not a directory"
        message = f"{shown} is a file, not a directory" if st.S_ISREG(info.st_mode) else \
            f"{shown} is {what}"
        parent = posixpath.dirname(shown) or "."
        raise Refusal(Code.INVALID_ARGUMENT, message,
                      f"glob searches a directory: pass one as 'path' (its directory is "
                      f"{parent}); to read this file use read_file.",
                      details={"path": shown, "kind": "not_directory"},
                      suggested_tool="glob", suggested_args={"pattern": given, "path": parent})
    ctx.authorize(GlobRequest(shown, given))
    include_ignored = args["includeIgnored"]
    base = open_base(ctx, rel, info, os.O_RDONLY | os.O_DIRECTORY)
    try:
        return _glob(ctx, base, matcher, given, include_ignored)
    finally:
        ctx.root.backend.close(base.fd)


def _glob(ctx: ToolContext, base: Any, matcher: Any, given: str,
          include_ignored: bool) -> dict[str, Any]:
    cap = ctx.limits.search_results
    rules: IgnoreRules | None = None
    base_ignored = False
    if not include_ignored:
        rules = ancestor_rules(ctx, base.real)
        if rules and base.real != "." and rules.ignored(base.real, True):
            base_ignored = True  # named explicitly: searched, only its own rules apply
            rules = IgnoreRules()
    walk = Walk(ctx, base, rules=rules, skip_git=not include_ignored,
                enter=matcher.could_contain if matcher.prunes else None,
                yield_dirs=matcher.dirs_only)
    paths: list[str] = []
    ignored = symlinks = special = denied = 0
    dirs_only, name_only = matcher.dirs_only, matcher.name_only
    with walk:
        for dir_sub, name, kind, _fd in walk:
            if dirs_only:
                if kind != "dir" or not matcher.match(dir_sub + name):
                    continue
                paths.append(base.shown_path(dir_sub + name) + "/")
            else:
                if not (matcher.match_name(name) if name_only else matcher.match(dir_sub + name)):
                    continue
                if kind == "other":
                    special += 1
                    continue
                if rules and walk.ignored(dir_sub, name, False):
                    ignored += 1
                    continue
                if walk.denied(dir_sub, name):
                    denied += 1
                    continue
                if kind == "symlink" and not _leads_to_file(ctx, base.real_path(dir_sub + name)):
                    symlinks += 1
                    continue
                paths.append(base.shown_path(dir_sub + name))
            if len(paths) > cap:  # one more than the cap: "truncated" is then a fact
                break
    stats = walk.stats
    over = len(paths) > cap
    del paths[cap:]
    result: dict[str, Any] = {"path": base.shown, "pattern": given, "paths": paths,
                              "truncated": over or stats.incomplete,
                              "ignored": {"paths": ignored, "directories": stats.ignored_dirs}}
    if stats.ignored_examples:
        result["ignored"]["examples"] = stats.ignored_examples
    skipped = {"symlinks": symlinks, "special": special,
               "unreadableDirectories": stats.unreadable_dirs, "tooDeep": stats.too_deep,
               "undecodableNames": stats.undecodable}
    skipped = {k: v for k, v in skipped.items() if v}
    if skipped:
        result["skipped"] = skipped
    if denied + stats.denied:
        result["denied"] = denied + stats.denied
    notes = []
    if over:
        notes.append(f"More than {cap} paths match; the first {cap} in sorted order are listed. "
                     "Narrow the pattern or the path to see the rest.")
    if stats.incomplete:
        notes.append(f"The search stopped after {ctx.limits.search_files} files, so matches may "
                     "be missing; search a smaller directory.")
    if ignored or stats.ignored_dirs:
        notes.append(ignored_note(ignored, "matching path", stats))
    if base_ignored:
        notes.append(f"{base.shown} is ignored by .gitignore; it was searched because it was "
                     "named.")
    if not paths and not over:
        notes.insert(0, f"No {'directories' if dirs_only else 'files'} match {given!r} under "
                     f"{base.shown}.")
    if notes:
        result["note"] = " ".join(notes)
    return result


# TODO(search): refine (ignored, skipped, denied, note).
OUTPUT_SCHEMA = success_schema({
    "path": {"type": "string"}, "pattern": {"type": "string"},
    "paths": {"type": "array", "items": {"type": "string"}},
    "truncated": {"type": "boolean"},
}, ["path", "pattern", "paths", "truncated"])

TOOL = ToolSpec(name="glob", title="Find files by name", description=DESCRIPTION,
                schema=SCHEMA, output_schema=OUTPUT_SCHEMA, run=run, request=GlobRequest,
                suggests=Suggests(retry_on=frozenset({"directory"})))
