"""``corral doctor``: what this installation uses, and why, as data and text.

A report never raises: every part that cannot be had says why instead.
"""

from __future__ import annotations

import os
import platform
from importlib import metadata, resources
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .tools import Policy

__all__ = ["doctor_report", "doctor_text", "native_build_note"]

NATIVE_MISSING_MARKER = "_native_missing.txt"  # written by setup.py when the compile failed


def native_build_note() -> str | None:
    """Why the build that made this installation has no native module (the
    reason setup.py recorded), or ``None`` when it recorded nothing."""
    try:
        text = resources.files("corral").joinpath(NATIVE_MISSING_MARKER).read_text("utf-8")
    except (OSError, ValueError):
        return None
    return text.strip() or None


def _search_engine() -> dict[str, Any]:
    from .tools import engine_report

    return engine_report()


def _search_lines(report: dict[str, Any]) -> list[str]:
    search = report.get("search") or {}
    if search.get("re2"):
        engine = f"RE2 {search.get('re2Version') or ''}".rstrip() + " (linear time)"
    else:
        engine = f"Python re with guards ({search.get('note')})"
    return [f"grep regex engine: {engine}",
            f"grep literal scanner: {search.get('literalScanner')}"]


def _root_part(root: str, backend_problem: str | None, policy: Policy | None,
               allow_hardlinks: bool) -> dict[str, Any]:
    """The root as opened, and the policy a Toolbox over it applies (the
    defaults plus what the root itself adds, e.g. a ``.git`` file's target)."""
    from .contained import Root
    from .tools import Toolbox

    path = os.path.abspath(root) if root else root  # (abspath("") would be the working directory)
    if backend_problem:
        return {"path": path, "error": backend_problem}
    try:
        with Root(root) as opened, Toolbox(opened, policy=policy,
                                           allow_hardlinks=allow_hardlinks) as toolbox:
            return {"path": path, **opened.info(), "policy": toolbox.policy.describe()}
    except (OSError, ValueError) as exc:
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        return {"path": path, "error": reason}


def doctor_report(root: str, *, backend_problem: str | None = None,
                  policy: Policy | None = None, allow_hardlinks: bool = False
                  ) -> dict[str, Any]:
    """The facts ``corral doctor`` prints: versions, the root as opened, the
    backends (:func:`corral.contained.backend_report`), why a native module
    is missing, and the MCP SDK's version (``None`` when not installed).

    ``backend_problem`` is a mistake in the environment already found (a bad
    ``CORRAL_BACKEND``): reported as ``environment_error``, and the root is
    not opened with it.  ``policy`` (default: the safe defaults) is what
    the tools would apply there, described line by line under
    ``root.policy``."""
    from . import __version__
    from .contained import backend_report

    report: dict[str, Any] = {"corral": __version__, "python": platform.python_version()}
    if backend_problem:
        report["environment_error"] = backend_problem
    report["root"] = _root_part(root, backend_problem, policy, allow_hardlinks)
    report["backends"] = backend_report()
    report["native_build"] = native_build_note()
    report["search"] = _search_engine()
    try:
        report["mcp"] = metadata.version("mcp")
    except metadata.PackageNotFoundError:
        report["mcp"] = None
    return report


def _backend_lines(report: dict[str, Any]) -> list[str]:
    backends = report["backends"]
    if backends.get("backend") is None:
        lines = [f"backend: none usable: {backends.get('error')}"]
    else:
        how = (f"forced by CORRAL_BACKEND={backends['forced']}" if backends.get("forced")
               else "the default")
        available = ", ".join(backends.get("available") or ()) or "none"
        lines = [f"backend: {backends['backend']} ({how}; available: {available})"]
    native = backends.get("native") or {}
    if native.get("built") and not native.get("reason"):
        lines.append("native module: built and loaded")
    else:
        lines.append(f"native module: not in use: {native.get('reason')}")
        if report.get("native_build"):
            lines.append(f"  at build time: {report['native_build']}")
    return lines


def _fast_path_lines(report: dict[str, Any]) -> list[str]:
    backends, root = report["backends"], report["root"]
    fast = root if "error" not in root else (backends.get("fast_path") or {})
    if fast.get("openat2"):
        lines = [f"fast path: openat2(RESOLVE_BENEATH) in use ({fast.get('openat2_reason')})"]
    else:
        lines = [f"fast path: off ({fast.get('openat2_reason', 'unknown')}); every path is "
                 f"resolved by the fd-by-fd walk, which is as safe and slower"]
    for key, value in (backends.get("fast_path") or {}).items():
        if key not in ("backend", "openat2", "openat2_reason"):
            lines.append(f"  {key.replace('_', ' ')}: {value}")
    if "follow_symlinks" in root:
        lines.append("symlinks: " + ("followed while they stay inside the root"
                                     if root["follow_symlinks"] else "never followed"))
    return lines


def doctor_text(report: dict[str, Any]) -> str:
    """:func:`doctor_report` as the lines ``corral doctor`` prints."""
    from .hosts import one_line  # what the root's own files say is printed one line each

    backends, root = report["backends"], report["root"]
    lines = [f"corral {report['corral']} on {backends['platform']} (Python {report['python']})"]
    if report.get("environment_error"):
        lines.append(f"environment: {report['environment_error']}")
    if "error" in root:
        lines.append(f"root: {one_line(root['path']) or repr('')}: cannot open: "
                     f"{one_line(root['error'])}")
    else:
        lines.append(f"root: {root['path']}")
    lines += _backend_lines(report)
    lines += _fast_path_lines(report)
    lines += _search_lines(report)
    if root.get("policy"):
        lines.append("policy:")
        lines += [f"  {one_line(line)}" for line in root["policy"]]
    lines.append(f"mcp SDK: {report['mcp']} (not used by corral serve, which speaks MCP itself)"
                 if report["mcp"] else "mcp SDK: not installed (not needed: corral serve speaks "
                 "MCP itself)")
    return "\n".join(lines)
