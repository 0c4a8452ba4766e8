"""The ``corral`` command: the tools of :mod:`corral.tools`, from a shell.

* ``corral serve ROOT [ROOT...]``: an MCP server over stdio (corral speaks
  the protocol itself; nothing more to install).
* ``corral call ROOT TOOL 'JSON'``: one call; prints the envelope as JSON.
  Exit 0 when ``ok``, 1 for a refusal, 2 for a usage error (bad JSON, a root
  that cannot be opened).
* ``corral tools --format mcp|openai|anthropic``: the tool definitions in
  that host's shape.
* ``corral doctor [ROOT]``: which backend and fast path are in use, and why.

Like every front end this one only serializes: the tools decide everything.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from typing import Any, Sequence

__all__ = ["main", "envelope_json", "envelope_text", "tool_definitions", "FORMATS"]

EXIT_OK = 0
EXIT_REFUSED = 1
EXIT_USAGE = 2

FORMATS = ("mcp", "openai", "anthropic")

MCP_INSTALL_HINT = "pip install 'corral[mcp]'"


def envelope_json(envelope: Any) -> str:
    """``envelope`` as one line of JSON (see :func:`envelope_text`)."""
    return envelope_text(envelope)[0]


def envelope_text(envelope: Any) -> tuple[str, bool]:
    """``envelope`` as one line of JSON, and whether that is the plain form.

    Non-ASCII text stays as it is (it is what a model reads).  A lone
    surrogate, which is how Python spells a non-UTF-8 file name, cannot be
    written as UTF-8, so such an envelope is escaped to ASCII instead
    (``\\udcff``): still exact JSON, never a crash; the flag is then false.
    """
    text = json.dumps(envelope, ensure_ascii=False, separators=(",", ":"))
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return json.dumps(envelope, separators=(",", ":")), False
    return text, True


# -- tool definitions in each host's shape ---------------------------------

def _mcp_annotations(mutates: bool) -> dict[str, Any]:
    return {"readOnlyHint": not mutates, "destructiveHint": mutates, "openWorldHint": False}


# Keywords OpenAI's strict function calling accepts; anything else makes a
# schema non-strict rather than being silently dropped.
_OPENAI_STRICT_KEYWORDS = frozenset({
    "type", "properties", "required", "additionalProperties", "items", "enum", "const",
    "description", "anyOf", "$ref", "$defs", "title",
})


def _openai_strict_ok(schema: Any) -> bool:
    """Whether ``schema`` already meets OpenAI's strict subset: every object
    closed and every property required.  Optional arguments are not made
    required-and-nullable: that would change what a tool accepts."""
    if isinstance(schema, list):
        return all(_openai_strict_ok(item) for item in schema)
    if not isinstance(schema, dict):
        return True
    if not set(schema) <= _OPENAI_STRICT_KEYWORDS:
        return False
    if schema.get("type") == "object" or "properties" in schema:
        props = schema.get("properties", {})
        if schema.get("additionalProperties") is not False:
            return False
        if set(schema.get("required", ())) != set(props):
            return False
        if not all(_openai_strict_ok(sub) for sub in props.values()):
            return False
    return all(_openai_strict_ok(schema[key]) for key in ("items", "anyOf", "$defs")
               if key in schema)


def tool_definitions(toolbox: Any, fmt: str) -> list[dict[str, Any]]:
    """The toolbox's definitions in the shape host ``fmt`` expects (see
    :data:`FORMATS`); names, descriptions and schemas are the toolbox's own."""
    out: list[dict[str, Any]] = []
    for item in toolbox.definitions():
        name, description, schema = item["name"], item["description"], item["inputSchema"]
        if fmt == "mcp":
            out.append({"name": name, "description": description, "inputSchema": schema,
                        "annotations": _mcp_annotations(toolbox.spec(name).mutates)})
        elif fmt == "openai":
            out.append({"type": "function",
                        "function": {"name": name, "description": description,
                                     "parameters": schema,
                                     "strict": _openai_strict_ok(schema)}})
        elif fmt == "anthropic":
            out.append({"name": name, "description": description, "input_schema": schema})
        else:
            raise ValueError(f"unknown format {fmt!r}; expected one of {', '.join(FORMATS)}")
    return out


# -- commands ----------------------------------------------------------------

class _UsageError(Exception):
    """A mistake on the command line: reported on stderr, exit 2."""


def _toolbox(args: argparse.Namespace) -> Any:
    from .tools import Toolbox

    try:
        return Toolbox(args.root, deny=args.deny or (), allow_hardlinks=args.allow_hardlinks,
                       read_only=args.read_only)
    except OSError as exc:
        reason = exc.strerror or str(exc)
        raise _UsageError(f"cannot open root {args.root!r}: {reason}") from None


def _cmd_call(args: argparse.Namespace) -> int:
    try:
        arguments = json.loads(args.json)
    except ValueError as exc:
        raise _UsageError(f"the arguments are not valid JSON: {exc}") from None
    with _toolbox(args) as toolbox:
        envelope = toolbox.call(args.tool, arguments)
    print(envelope_json(envelope))
    return EXIT_OK if envelope.get("ok") is True else EXIT_REFUSED


def _cmd_tools(args: argparse.Namespace) -> int:
    import tempfile

    # Definitions do not depend on the root; an empty directory keeps this
    # command from touching (or needing) any real one.
    with tempfile.TemporaryDirectory(prefix="corral-tools-") as empty:
        args.root, args.deny, args.allow_hardlinks = empty, (), False
        with _toolbox(args) as toolbox:
            definitions = tool_definitions(toolbox, args.format)
    print(json.dumps(definitions, indent=2, ensure_ascii=False))
    return EXIT_OK


def _cmd_serve(args: argparse.Namespace) -> int:
    from .mcp import serve

    workspace = _serve_workspace(args)  # a bad root fails before anything is served
    print(_serve_banner(args, workspace), file=sys.stderr, flush=True)
    try:
        serve(workspace, max_line_bytes=args.max_line_bytes, workers=args.workers)
    except KeyboardInterrupt:
        return 130
    finally:
        workspace.close()
        for name in workspace.roots:
            workspace.toolbox(name).close()
    return EXIT_OK


def _serve_workspace(args: argparse.Namespace) -> Any:
    """One Toolbox per ROOT (each its own Root and policy), named by
    ``root_names``; a client root below one of them gets a Toolbox with the
    same options (see :func:`_serve_opener`)."""
    from .tools import Workspace
    from .tools._workspace import root_names

    boxes: dict[str, Any] = {}
    try:
        for name, path in zip(root_names(args.roots), args.roots):
            args.root = path
            boxes[name] = _toolbox(args)
    except _UsageError:
        for box in boxes.values():
            box.close()
        raise
    return Workspace(boxes, opener=_serve_opener(args))


def _serve_opener(args: argparse.Namespace) -> Any:
    from .tools import Toolbox

    # A deny pattern with a '/' inside is anchored to the root it was given
    # for; beneath that root it would mean something else, so a client root
    # below is not opened (narrower, never wider) while such a rule is set.
    anchored = [p for p in args.deny if "/" in p.rstrip("/").removeprefix("**/")]

    def opener(root: Any, parent: Any, base: str) -> Any:
        if anchored:
            return None
        return Toolbox(root, deny=args.deny or (), allow_hardlinks=args.allow_hardlinks,
                       read_only=args.read_only)
    return opener


def _serve_banner(args: argparse.Namespace, workspace: Any) -> str:
    """The effective policy, for stderr: what each root is and what holds."""
    lines = ["corral serve: MCP over stdio"]
    for name, path in zip(workspace.roots, args.roots):
        label = "root" if len(args.roots) == 1 else f"root {name}"
        lines.append(f"  {label}: {os.path.abspath(path)}")
    lines.append("  tools: " + ("read-only" if args.read_only else "read and write"))
    lines.append("  deny: " + (", ".join(args.deny) if args.deny else "none"))
    lines.append("  hard-linked files: " + ("allowed" if args.allow_hardlinks else "refused"))
    return "\n".join(lines)


def _doctor_report(root: str) -> dict[str, Any]:
    import platform
    from importlib import metadata

    from . import Root, __version__
    from .contained._backend import backend_report

    report: dict[str, Any] = {"corral": __version__, "python": platform.python_version()}
    try:
        with Root(root) as opened:
            report["root"] = {"path": os.path.abspath(root), **opened.info()}
    except OSError as exc:
        report["root"] = {"path": os.path.abspath(root),
                          "error": exc.strerror or str(exc)}
    report["backends"] = backend_report()
    try:
        report["mcp"] = metadata.version("mcp")
    except metadata.PackageNotFoundError:
        report["mcp"] = None
    return report


def _doctor_text(report: dict[str, Any]) -> str:
    backends, root = report["backends"], report["root"]
    lines = [f"corral {report['corral']} on {backends['platform']} (Python {report['python']})"]
    if "error" in root:
        lines.append(f"root: {root['path']}: cannot open: {root['error']}")
    else:
        lines.append(f"root: {root['path']}")
    if backends.get("backend") is None:
        lines.append(f"backend: none usable: {backends.get('error')}")
    else:
        how = f"forced by CORRAL_BACKEND={backends['forced']}" if backends.get("forced") \
            else "the default"
        lines.append(f"backend: {backends['backend']} ({how}; available: "
                     f"{', '.join(backends.get('available') or ()) or 'none'})")
    native = backends.get("native") or {}
    lines.append("native module: " + ("built and loaded" if native.get("built") and
                                      not native.get("reason")
                                      else f"not in use: {native.get('reason')}"))
    fast = root if "error" not in root else (backends.get("fast_path") or {})
    if fast.get("openat2"):
        lines.append(f"fast path: openat2(RESOLVE_BENEATH) in use ({fast.get('openat2_reason')})")
    else:
        lines.append(f"fast path: off ({fast.get('openat2_reason', 'unknown')}); every path is "
                     f"resolved by the fd-by-fd walk, which is as safe and slower")
    for key, value in (backends.get("fast_path") or {}).items():
        if key not in ("backend", "openat2", "openat2_reason"):
            lines.append(f"  {key.replace('_', ' ')}: {value}")
    if "follow_symlinks" in root:
        lines.append("symlinks: " + ("followed while they stay inside the root"
                                     if root["follow_symlinks"] else "never followed"))
    lines.append(f"mcp: {report['mcp']}" if report["mcp"]
                 else f"mcp: not installed (corral serve needs it: {MCP_INSTALL_HINT})")
    return "\n".join(lines)


def _cmd_doctor(args: argparse.Namespace) -> int:
    report = _doctor_report(args.root)
    print(json.dumps(report, indent=2) if args.json else _doctor_text(report))
    if "error" in report["root"]:
        return EXIT_USAGE
    return EXIT_OK if report["backends"].get("backend") else EXIT_REFUSED


def _positive_int(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, not {value}")
    return value


def _add_toolbox_options(parser: argparse.ArgumentParser, *, root: bool | str = True) -> None:
    if root == "many":
        parser.add_argument("roots", metavar="ROOT", nargs="+",
                            help="a directory the tools are confined to (one or more)")
    elif root:
        parser.add_argument("root", metavar="ROOT", help="the directory the tools are confined to")
    if root:
        parser.add_argument("--deny", metavar="GLOB", action="append", default=[],
                            help="gitignore-style pattern refused everywhere (repeatable), "
                                 "e.g. --deny .env --deny '.git/**'")
        parser.add_argument("--allow-hardlinks", action="store_true",
                            help="let reads and edits use files with more than one link")
    parser.add_argument("--read-only", action="store_true",
                        help="offer only the tools that change nothing")


def _parser() -> argparse.ArgumentParser:
    from . import __version__

    parser = argparse.ArgumentParser(
        prog="corral", description="Coding-agent file tools confined to one directory.")
    parser.add_argument("--version", action="version", version=f"corral {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    serve = sub.add_parser("serve", help="run an MCP server over stdio",
                           description="Serve the tools over MCP on stdin/stdout. With several "
                                       "roots, every path begins with a root's name (its "
                                       "directory's base name).")
    _add_toolbox_options(serve, root="many")
    serve.add_argument("--max-line-bytes", type=_positive_int, metavar="N",
                       default=16 * 1024 * 1024,
                       help="refuse a message longer than this (default 16 MiB)")
    serve.add_argument("--workers", type=_positive_int, metavar="N", default=4,
                       help="tool calls run at once at most (default 4)")
    serve.set_defaults(func=_cmd_serve)

    call = sub.add_parser("call", help="call one tool and print its JSON envelope",
                          description="Call one tool; exit 0 ok, 1 refused, 2 usage error.")
    _add_toolbox_options(call)
    call.add_argument("tool", metavar="TOOL", help="tool name, e.g. read_file")
    call.add_argument("json", metavar="JSON", nargs="?", default="{}",
                      help="the arguments as a JSON object (default {})")
    call.set_defaults(func=_cmd_call)

    tools = sub.add_parser("tools", help="print the tool definitions for a host",
                           description="Print the tool definitions as JSON in a host's shape.")
    tools.add_argument("--format", choices=FORMATS, default="mcp",
                       help="mcp (name, description, inputSchema), openai (function calling) "
                            "or anthropic (input_schema)")
    _add_toolbox_options(tools, root=False)
    tools.set_defaults(func=_cmd_tools)

    doctor = sub.add_parser("doctor", help="say which backend and fast path are in use",
                            description="Report the backend and fast path for ROOT, and why.")
    doctor.add_argument("root", metavar="ROOT", nargs="?", default=".",
                        help="directory to open (default: the current one)")
    doctor.add_argument("--json", action="store_true", help="print the report as JSON")
    doctor.set_defaults(func=_cmd_doctor)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the ``corral`` command; returns the exit status."""
    args = _parser().parse_args(argv)
    try:
        return args.func(args)
    except _UsageError as exc:
        print(f"corral {args.command}: {exc}", file=sys.stderr)
        return EXIT_USAGE


if __name__ == "__main__":
    sys.exit(main())
