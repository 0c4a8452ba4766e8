"""Nothing found is never a bare answer: the mistakes models make with search.

When grep or glob finds nothing, or cannot run the pattern it was given,
the likely mistakes are checked in order and the first rewrite that finds
something is offered as ``suggestedTool`` / ``suggestedArgs`` (tried
first, with a cap of one result, so it is a verified call):

* grep: GNU basic syntax (``foo\\|bar``), a pattern escaped twice
  (``config\\\\.get\\\\(``), code pasted as a regex (``config.get(key)``:
  found as literal text), case, an ``include`` that matched no file (a
  comma list ``*.ts,*.tsx`` is ``*.{ts,tsx}``), paths .gitignore hides; a
  ``path`` given as a glob (``lib/*.ts``: ``path`` lib, ``include`` *.ts);
  what RE2 cannot run (lookaround, backreferences...) with a rewrite.
* glob: the name of a directory (``src``, ``**/pkg``: its files are
  ``src/**``), a comma list (``*.ts,*.tsx`` is ``{*.ts,*.tsx}``; spaces
  around a brace group's commas are dropped), a pattern that repeats
  ``path`` (``path: "lib", pattern: "lib/**/*.ts"``), a ``/`` pattern
  anchored at the wrong depth, paths .gitignore hides.

Each check is one capped search at most (:data:`MAX_PROBES` per call), run
under the call's own deadline, so the diagnosis costs a few searches of the
same tree at worst.  What was checked and found nothing is said too.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from .._runtime.answer import sentence_path as _said
from .._runtime.context import ToolContext
from .._refusals.catalogue import Code, Kind, Refusal
from .globs import GLOB_CHARS, GlobMatcher, compile_glob, kept_glob, split_top
from .engine import PatternProblem
from .results import GlobResult, GrepResult, Offered
from .syntax import (bre_to_ere, looks_bre, looks_double_escaped, undouble_escapes)

__all__ = [
    "MAX_PROBES",
    "Finds",
    "case_variants",
    "glob_retry",
    "glob_tidy",
    "grep_retry",
    "path_as_pattern",
    "pattern_refusal",
    "spaced_braces",
]

MAX_PROBES = 4
Finds = Callable[[dict[str, Any]], bool]  # trial arguments -> whether grep finds anything
# the arguments as sent -> whether grep finds anything without their include,
# and whether that walk showed that they, as sent, find nothing
WithoutInclude = Callable[[dict[str, Any]], tuple[bool, bool]]
Shown = Callable[[dict[str, Any]], dict[str, Any]]  # arguments as a suggestion shows them
_METACHARS = re.compile(r"[.()\[\]{}*+?|^$\\]")


def _first_found(finds: Finds, args: dict[str, Any],
                 candidates: list[tuple[str, dict[str, Any]]]) -> tuple[str, dict[str, Any]] | None:
    for label, changes in candidates[:MAX_PROBES]:
        trial = {**args, **changes}
        if trial != args and finds(trial):
            return label, trial
    return None


def _offer(result: Offered, tool: str, args: dict[str, Any], sentence: str,
           kind: str) -> None:
    result["suggestedTool"] = tool
    result["suggestedArgs"] = args
    result["diagnosis"] = kind
    result["note"] = (result.get("note", "") + " " + sentence).strip()


# -- grep ----------------------------------------------------------------------------------

Candidates = list[tuple[str, dict[str, Any]]]  # (what is tried, the argument changes)


def _grep_candidates(args: dict[str, Any], result: GrepResult) -> Candidates:
    pattern = args["pattern"]
    out: Candidates = []
    if args["regex"]:
        if looks_bre(pattern):
            out.append(("bre", {"pattern": bre_to_ere(pattern)}))
        if looks_double_escaped(pattern):
            out.append(("double_escaped", {"pattern": undouble_escapes(pattern)}))
        if _METACHARS.search(pattern):
            out.append(("literal", {"regex": False}))
    if not args["caseInsensitive"]:
        out.append(("case", {"caseInsensitive": True}))
    include = args.get("include")
    if include and result.get("filesIncluded") == 0:
        parts = [p.strip() for p in split_top(include, ",") if p.strip()]
        if len(parts) > 1:
            out.insert(0, ("include_list", {"include": "{" + ",".join(parts) + "}"}))
        else:
            out.insert(0, ("include", {"include": None}))
    if result.get("ignored", {}).get("paths") or result.get("ignored", {}).get("directories"):
        out.append(("ignored", {"includeIgnored": True}))
    return out


_GREP_SAYS = {
    "bre": "In GNU grep's basic syntax \\| is alternation and \\( \\) a group; here they are "
           "literal characters. The suggested pattern uses the syntax grep runs (RE2) and finds "
           "matches.",
    "double_escaped": "The pattern looks escaped twice (\\\\ where one \\ was meant); with one "
                      "backslash it finds matches.",
    "literal": "Read as a regular expression the pattern matches nothing (characters such as "
               "( ) . [ ] are operators there); as literal text (regex: false) it is found.",
    "case": "Case-insensitively (caseInsensitive: true) the pattern finds matches.",
    "include_list": "include is one glob, not a comma list; the suggested {a,b} form matches "
                    "those files and finds matches.",
    "include": "Without include the pattern finds matches.",
    "ignored": "Files ignored by .gitignore were not searched; with includeIgnored: true the "
               "pattern finds matches.",
}
_CHECKED = {"bre": "GNU basic syntax", "double_escaped": "one backslash instead of two",
            "literal": "as literal text", "case": "case-insensitively",
            "include_list": "include as {a,b}", "include": "without include",
            "ignored": "with ignored files"}


def grep_retry(ctx: ToolContext, args: dict[str, Any], result: GrepResult, finds: Finds,
               shown: Shown, *, without_include: WithoutInclude | None = None) -> None:
    """After a grep that found nothing: say what would find something.  A
    hint is offered only if the arguments as sent still find nothing when it
    is verified (searched again, or, for an include that matched no file,
    shown by the probe's own walk, ``without_include``)."""
    candidates = _grep_candidates(args, result)
    hit = _grep_first_found(finds, args, candidates, without_include)
    if hit is None:
        checked = [_CHECKED[label] for label, _ in candidates[:MAX_PROBES]]
        if checked:
            result["note"] = (result.get("note", "") + " Also tried, finding nothing: "
                              + ", ".join(checked) + ".").strip()
        if any(label == "double_escaped" for label, _ in candidates):
            result["note"] += (" The pattern has doubled backslashes: \\\\ matches one "
                               "backslash in the text, so \\\\d is a backslash and a 'd', "
                               "not a digit; send one backslash per regex escape (\\d).")
        return
    label, trial, nothing_as_sent = hit
    if not nothing_as_sent and finds(args):
        skipped = result["skipped"]
        if skipped.get("unreadable") or skipped.get("unreadableDirectories"):
            return  # the check read what the search could not: no hint about the arguments
        # the tree changed after the search: what it answered and what the
        # suggestion says of the arguments would disagree
        raise Refusal(Code.STALE, f"{_said(args['path'])} changed while it was searched; "
                      "its answer is not known", "Run the same grep again.",
                      details={"path": args["path"]}, kind=Kind.SWAPPED)
    _offer(result, "grep", shown(trial), _GREP_SAYS[label], label)


def _grep_first_found(finds: Finds, args: dict[str, Any], candidates: Candidates,
                      without_include: WithoutInclude | None
                      ) -> tuple[str, dict[str, Any], bool] | None:
    """:func:`_first_found`, and whether the probe that found something
    showed the arguments as sent find nothing (``without_include``'s walk)."""
    for label, changes in candidates[:MAX_PROBES]:
        trial = {**args, **changes}
        if trial == args:
            continue
        if label == "include" and without_include is not None:
            found, nothing_as_sent = without_include(args)
        else:
            found, nothing_as_sent = finds(trial), False
        if found:
            return label, trial, nothing_as_sent
    return None


def _trial_refusal(problem: PatternProblem, args: dict[str, Any], finds: Finds,
                   shown: Shown) -> tuple[dict[str, Any] | None, str]:
    """The verified call a pattern refusal offers, and the sentence saying so."""
    candidates: list[tuple[str, dict[str, Any]]] = []
    if problem.rewrite:
        candidates.append(("rewrite", {"pattern": problem.rewrite}))
    if looks_double_escaped(args["pattern"]):
        candidates.append(("double_escaped", {"pattern": undouble_escapes(args["pattern"])}))
    if problem.kind is Kind.MULTILINE:
        first = next((p for p in re.split(r"[\r\n]+", args["pattern"]) if p.strip()), "")
        if first:
            candidates.append(("first_line", {"pattern": first, "regex": False}))
    elif args["regex"]:
        candidates.append(("literal", {"regex": False}))
    hit = _first_found(finds, args, candidates)
    if hit is None:
        return None, ""
    label, trial = hit
    says = {"rewrite": "The suggested pattern finds the same lines." if problem.exact else
            "The suggested pattern finds these lines and possibly more; check them.",
            "double_escaped": "With one backslash where two were written, it finds matches.",
            "first_line": "Its first line, as literal text, is found.",
            "literal": "As literal text (regex: false) it is found."}[label]
    return shown(trial), says


def pattern_refusal(ctx: ToolContext, args: dict[str, Any], problem: PatternProblem,
                    finds: Finds, shown: Shown) -> Refusal:
    """The refusal for a pattern grep cannot run, with a verified rewrite."""
    suggestion, says = _trial_refusal(problem, args, finds, shown)
    hints = {
        Kind.MULTILINE: "Search for one line of the text at a time.",
        Kind.REGEX: "Fix the regular expression (RE2 syntax, as ripgrep's), or pass regex: false "
                 "to search for the text literally.",
        Kind.REGEX_UNSUPPORTED: "Use the suggested pattern, or rewrite it without "
                             f"{problem.reason} (RE2 has no backtracking constructs).",
        Kind.UNSAFE_REGEX: "Rewrite it without nested or repeated groups, or pass regex: false for "
                        "a literal search.",
    }
    details: dict[str, Any] = {"field": "pattern"}
    if problem.reason:
        details["reason"] = problem.reason
    if problem.rewrite:
        details["rewrite"] = problem.rewrite
        details["rewriteExact"] = problem.exact
    hint = hints[problem.kind]
    if says:
        hint = f"{hint} {says}"
    return Refusal(Code.INVALID_ARGUMENT, problem.message, hint, details=details,
                   kind=problem.kind, suggested_tool="grep" if suggestion is not None else None,
                   suggested_args=suggestion)


def path_as_pattern(ctx: ToolContext, args: dict[str, Any], finds: Finds, shown: Shown) -> None:
    """Refuse a missing ``path`` that is a glob (``lib/*.ts``) with the call
    it meant (``path`` lib, ``include`` *.ts); return if it is not one."""
    path = args["path"]
    parts = path.split("/")
    at = next((i for i, p in enumerate(parts) if set(p) & GLOB_CHARS), None)
    if at is None:
        return
    directory = "/".join(parts[:at]) or "."
    include = "/".join(parts[at:])
    if not include or args.get("include"):
        return
    trial = {**args, "path": directory, "include": include}
    suggestion = shown(trial) if finds(trial) else None
    hint = ("Pass the directory as 'path' and the file pattern as 'include'"
            + (f" (path {directory!r}, include {include!r})." if suggestion is None else
               "; the suggested call finds matches."))
    raise Refusal(Code.NOT_FOUND, f"{_said(path)} does not exist: 'path' names one file or "
                  "directory, not a glob", hint,
                  kind=Kind.PATH_IS_PATTERN, details={"field": "path", "path": path,
                           "directory": directory, "include": include},
                  suggested_tool="grep" if suggestion is not None else None,
                  suggested_args=suggestion)


# -- glob ------------------------------------------------------------------------------------

GlobProbe = Callable[[GlobMatcher, bool], GlobResult]


def spaced_braces(pattern: str) -> str | None:
    """``*.{ts, tsx}`` without the spaces around its commas (which make an
    alternative `` tsx``, matching only names with that space), or ``None``."""
    if "{" not in pattern or "," not in pattern:
        return None
    tidy = re.sub(r"\s*,\s*", ",", pattern)
    return tidy if tidy != pattern else None


def _braced(pattern: str) -> str | None:
    """``*.ts,*.tsx`` (or ``*.ts, *.tsx``) as the one glob ``{*.ts,*.tsx}``,
    and ``*.{ts, tsx}`` without the spaces around its commas; ``None`` if
    the pattern is neither."""
    parts = [p.strip() for p in split_top(pattern, ",")]
    if len(parts) > 1 and all(parts):
        return "{" + ",".join(parts) + "}"
    return spaced_braces(pattern)


_GLOB_SPECIAL = re.compile(r"([\[\]{}*?\\])")


def glob_escaped(text: str) -> str:
    """``text`` as a glob that matches exactly that name."""
    return _GLOB_SPECIAL.sub(r"\\\1", text)


def _case_classes(pattern: str) -> str | None:
    """``pattern`` with each letter of its last segment matched in either
    case (``[rR]``), when that segment is plain text."""
    head, _, last = pattern.rpartition("/")
    if not any(c.isalpha() for c in last) or _GLOB_SPECIAL.search(last.replace("*", "")):
        return None
    classes = "".join(f"[{c.lower()}{c.upper()}]" if c.isalpha() and c.lower() != c.upper()
                      else c for c in last)
    return f"{head}/{classes}" if head else classes


def case_variants(pattern: str) -> frozenset[str] | None:
    """The characters one of which a name must hold for the retry in either
    case (:func:`_case_classes`) to find what ``pattern`` did not: the other
    cases of the letters of its last segment (a name without any matches
    that segment as written).  ``None``: there is no such retry."""
    if _case_classes(pattern) is None:
        return None
    last = pattern.rpartition("/")[2]
    return frozenset(other for c in last for other in c.lower() + c.upper() if other != c)


def _glob_candidates(pattern: str, path: str, result: GlobResult) -> list[tuple[str, str]]:
    out: list[tuple[str, str]] = []
    braced = _braced(pattern)
    if braced is not None:
        out.append(("comma_list", braced))
    base = path.strip("/")
    if base not in ("", "."):
        for prefix in (base + "/", base.rsplit("/", 1)[-1] + "/"):
            if pattern.startswith(prefix) and len(pattern) > len(prefix):
                out.append(("repeats_path", pattern[len(prefix):]))
                break
    if "/" in pattern.rstrip("/") and not pattern.startswith("**/"):
        out.append(("anchored", "**/" + pattern))
        head, _, last = pattern.rstrip("/").rpartition("/")
        if "**" not in head:
            out.append(("deeper", f"{head}/**/{last}" + ("/" if pattern.endswith("/") else "")))
    return out


_GLOB_SAYS = {
    "comma_list": "A glob is one pattern, not a comma list; the suggested {{a,b}} form (no "
                  "spaces around the commas) matches each alternative and finds matches.",
    "directory": "{pattern!r} names a directory, and glob lists files (or, ending in '/', "
                 "directories): the suggested pattern lists the files in it.",
    "repeats_path": "The pattern repeats 'path' ({path}); patterns are matched below 'path', "
                    "so the suggested pattern leaves it out and finds matches.",
    "anchored": "A pattern with '/' is matched from 'path' down; at any depth (**/ in front) "
                "it finds matches.",
    "deeper": "'*' matches one directory level; with /**/ the pattern also finds files deeper "
              "down.",
    "ignored": "Paths ignored by .gitignore were left out; with includeIgnored: true the "
               "pattern finds them.",
    "case": "glob is case-sensitive; a name that differs only in case exists, and the "
            "suggested pattern spells it as it is.",
}


def _found_by(probe: GlobProbe, pattern: str, include: bool) -> list[str]:
    try:
        matcher = kept_glob(pattern)
    except Refusal:
        return []
    return list(probe(matcher, include)["paths"])


def _finds(probe: GlobProbe, pattern: str, include: bool) -> bool:
    try:
        matcher = kept_glob(pattern)
    except Refusal:
        return False
    return bool(probe(matcher, include)["paths"])


def _directory_named(pattern: str, probe: GlobProbe, include: bool, seen: bool
                     ) -> tuple[str | None, int]:
    """``pattern/**`` when ``pattern`` (not ending in ``/``) names existing
    directories, and that finds their files; and the probes it took (one
    not run because ``seen`` is false counts as taken: the probes after it
    stay the same)."""
    if pattern.endswith(("/", "**")):
        return None, 0
    if not seen or not _finds(probe, pattern + "/", include):
        return None, 1
    # a name alone matches at any depth; with a "/" it is matched from 'path'
    inside = pattern + "/**" if "/" in pattern else f"**/{pattern}/**"
    return (inside if _finds(probe, inside, include) else None), 2


def glob_tidy(args: dict[str, Any], result: GlobResult, probe: GlobProbe) -> None:
    """After a glob with spaces around a ``{...}`` group's commas that
    found something (``*.{ts, tsx}`` finds the .ts files only): the form
    without them as the suggested call, when running it finds more."""
    tidy = spaced_braces(args["pattern"])
    if tidy is None:
        return
    include = bool(args["includeIgnored"])
    try:
        found = probe(compile_glob(tidy), include)
    except Refusal:
        return
    if len(found["paths"]) > len(result["paths"]) or (found["truncated"]
                                                      and not result["truncated"]):
        path = args["path"]
        suggested = {"pattern": tidy, **({"path": path} if path != "." else {}),
                     **({"includeIgnored": True} if include else {})}
        _offer(result, "glob", suggested, "The suggested call (that pattern) finds more.",
               "comma_list")


def glob_retry(args: dict[str, Any], result: GlobResult, probe: GlobProbe, own: GlobMatcher,
               *, other_case: bool = True, dirs_named: bool = True) -> None:
    """After a glob that found nothing: say what would find something.
    ``other_case``: whether the walk that found nothing listed a name
    holding one of :func:`case_variants`; without one the retry in either
    case cannot find anything and is not run.  ``dirs_named``: whether
    that walk may have shown a directory the pattern matches; without one
    the probe for such directories is not run (it would walk the same
    directories, decided the same way).  ``own``: the call's matcher (an
    absolute pattern made relative), which the retry with includeIgnored
    runs as is."""
    pattern, path = args["pattern"], args["path"]
    include = bool(args["includeIgnored"])

    def offer(label: str, trial: str) -> None:
        suggested = {"pattern": trial, **({"path": path} if path != "." else {}),
                     **({"includeIgnored": True} if include else {})}
        _offer(result, "glob", suggested, _GLOB_SAYS[label].format(path=path, pattern=pattern),
               label)

    inside, probes = _directory_named(pattern, probe, include, dirs_named)
    if inside is not None:
        offer("directory", inside)
        return
    for label, trial in _glob_candidates(pattern, path, result)[:MAX_PROBES - 1 - probes]:
        if _finds(probe, trial, include):
            offer(label, trial)
            return
    either = _case_classes(pattern) if other_case else None
    if either is not None:
        found = _found_by(probe, either, include)
        if found:
            head = pattern.rpartition("/")[0]
            offer("case", f"{head}/{found[0].rpartition('/')[2]}" if head else
                  found[0].rpartition("/")[2])
            return
    ignored = result.get("ignored", {})
    hides = ignored.get("paths") or ignored.get("directories")
    if not include and hides and probe(own, True)["paths"]:
        suggested = {"pattern": pattern, **({"path": path} if path != "." else {}),
                     "includeIgnored": True}
        _offer(result, "glob", suggested, _GLOB_SAYS["ignored"], "ignored")
