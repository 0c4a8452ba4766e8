"""The ``corral`` command: the tools of :mod:`corral.tools`, from a shell.

* ``corral serve ROOT [ROOT...]``: an MCP server over stdio (corral speaks
  the protocol itself; nothing more to install).
* ``corral call ROOT TOOL 'JSON'``: one call; prints the envelope as JSON.
* ``corral tools --format mcp|openai|anthropic [--strict]``: the tool
  definitions in that host's shape (no root needed).
* ``corral doctor [ROOT]``: which backend and fast path are in use, and why.

Exit status: 0 ok, 1 a refusal (the envelope says why), 2 a usage error
(unknown subcommand, option or tool, bad JSON, a root that cannot be opened,
a bad ``CORRAL_BACKEND``; the message is on stderr), 141 when whoever reads
stdout went away (``corral doctor | head``).  No user mistake ends in a
traceback.  Like every front end this one only serializes: the tools decide.
"""

from __future__ import annotations

import argparse
import difflib
import json
import os
import sys
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, NoReturn, TypedDict

from .hosts import FORMATS, HostFormat, envelope_json, envelope_text, root_names
from .tools import tool_definitions

if TYPE_CHECKING:
    from .contained import Root
    from .tools import Toolbox, Workspace
    from .tools import Policy
    from .tools import Editing, Opener

__all__ = ["main", "envelope_json", "envelope_text", "tool_definitions", "FORMATS"]

EXIT_OK = 0
EXIT_REFUSED = 1
EXIT_USAGE = 2
EXIT_PIPE = 141  # 128 + SIGPIPE: what a shell reports for a writer whose reader left

BACKENDS = ("os", "native")

Command = Callable[[argparse.Namespace], int]


class ToolboxOptions(TypedDict):
    """What the root options say about a Toolbox (``Toolbox(root, **options)``)."""

    policy: Policy
    allow_hardlinks: bool
    read_only: bool
    editing: Editing


class UsageError(Exception):
    """A mistake on the command line or in the environment: stderr, exit 2."""


# -- shared checks ---------------------------------------------------------------

def _backend_problem() -> str | None:
    """What is wrong with ``CORRAL_BACKEND``, if anything."""
    forced = os.environ.get("CORRAL_BACKEND", "").strip().lower()
    if forced and forced not in BACKENDS:
        return (f"CORRAL_BACKEND={os.environ['CORRAL_BACKEND']!r} is not a backend; "
                f"expected one of {', '.join(BACKENDS)} (or unset it)")
    return None


def _check_backend() -> None:
    problem = _backend_problem()
    if problem:
        raise UsageError(problem)


def _open_error(root: str, exc: Exception) -> str:
    reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
    return f"cannot open root {root!r}: {reason}"


def _policy(args: argparse.Namespace) -> Policy:
    """The policy the flags ask for: the safe defaults (or none, with
    ``--no-default-policy``), ``--allow-git-writes``, more ``--protect`` and
    ``--deny`` patterns."""
    from .tools import Policy

    try:
        return Policy.build(defaults=not args.no_default_policy,
                            allow_git_writes=args.allow_git_writes,
                            protect=args.protect, deny=args.deny)
    except ValueError as exc:  # a pattern that could never apply (--deny ./)
        raise UsageError(str(exc)) from None


def toolbox_options(args: argparse.Namespace) -> ToolboxOptions:
    """The Toolbox keyword arguments the root options ask for (every
    subcommand that opens a root, ``serve``'s extra roots included)."""
    return ToolboxOptions(policy=_policy(args), allow_hardlinks=args.allow_hardlinks,
                          read_only=getattr(args, "read_only", False),
                          editing=_editing(args))


def _editing(args: argparse.Namespace) -> Editing:
    return "apply_patch" if getattr(args, "apply_patch", False) else "corral"


def _toolbox(args: argparse.Namespace) -> Toolbox:
    from .tools import Toolbox

    _check_backend()
    try:
        return Toolbox(args.root, **toolbox_options(args))
    except (OSError, ValueError) as exc:  # ValueError: an unusable backend choice
        raise UsageError(_open_error(args.root, exc)) from None


def _registered_names() -> list[str]:
    """Every tool a toolbox answers: the registered ones, and those it
    answers without listing them (apply_patch)."""
    from .tools import TOOL_NAMES, offered_specs

    names = list(TOOL_NAMES)
    return names + [spec.name for spec in offered_specs(editing="apply_patch")
                    if spec.name not in names]


def _unknown_tool(name: str) -> str:
    names = _registered_names()
    close = difflib.get_close_matches(name, names, n=1, cutoff=0.6)
    shown = name if len(name) <= 64 else name[:61] + "..."
    guess = f"; did you mean {close[0]}?" if close else ""
    return f"there is no tool called {shown!r}{guess} (tools: {', '.join(names)})"


# -- commands ------------------------------------------------------------------------

def _cmd_call(args: argparse.Namespace) -> int:
    if args.tool not in _registered_names():
        raise UsageError(_unknown_tool(args.tool))
    try:
        arguments = json.loads(args.json)
    except ValueError as exc:
        raise UsageError(f"the arguments are not valid JSON: {exc}") from None
    with _toolbox(args) as toolbox:
        envelope = toolbox.call(args.tool, arguments)
    _write(envelope_json(envelope))
    return EXIT_OK if envelope.get("ok") is True else EXIT_REFUSED


def _cmd_tools(args: argparse.Namespace) -> int:
    fmt: HostFormat = args.format
    if args.strict and fmt != "openai":
        raise UsageError("--strict applies to --format openai only")
    definitions = tool_definitions(None, fmt, strict=args.strict, read_only=args.read_only,
                                   editing=_editing(args))
    _write(json.dumps(definitions, indent=2, ensure_ascii=False))
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


def _serve_workspace(args: argparse.Namespace) -> Workspace:
    """One Toolbox per ROOT (each its own Root and policy), named by
    ``root_names``; a client root below one of them gets a Toolbox with the
    same options (see :func:`_serve_opener`)."""
    from .tools import Workspace

    boxes: dict[str, Toolbox] = {}
    try:
        for name, path in zip(root_names(args.roots), args.roots):
            args.root = path
            boxes[name] = _toolbox(args)
    except UsageError:
        for box in boxes.values():
            box.close()
        raise
    return Workspace(boxes, opener=_serve_opener(args))


def _serve_opener(args: argparse.Namespace) -> Opener:
    """How a client's root below a ROOT is served: its own Toolbox with the
    same options, and the ROOT's policy as it applies beneath."""
    from .tools import Toolbox

    def opener(root: Root, parent: Toolbox, base: str) -> Toolbox | None:
        options = toolbox_options(args)
        options["policy"] = parent.policy.beneath(base)
        return Toolbox(root, **options)
    return opener


def _serve_banner(args: argparse.Namespace, workspace: Workspace) -> str:
    """The effective policy, for stderr: what each root is and what holds."""
    lines = ["corral serve: MCP over stdio"]
    for name, path in zip(workspace.roots, args.roots):
        label = "root" if len(args.roots) == 1 else f"root {name}"
        lines.append(f"  {label}: {os.path.abspath(path)}")
    lines.append("  tools: " + ("read-only" if args.read_only else "read and write"))
    first = workspace.toolbox(workspace.roots[0])
    lines += [f"  {line}" for line in first.policy.describe()]
    lines.append("  hard-linked files: " + ("allowed" if args.allow_hardlinks else "refused"))
    return "\n".join(lines)


def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a whole number: {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, not {value}")
    return value


def _cmd_doctor(args: argparse.Namespace) -> int:
    from ._doctor import doctor_report, doctor_text

    report = doctor_report(args.root, backend_problem=_backend_problem(), policy=_policy(args),
                           allow_hardlinks=args.allow_hardlinks)
    _write(json.dumps(report, indent=2) if args.json else doctor_text(report))
    if "error" in report["root"] or report.get("environment_error"):
        return EXIT_USAGE
    return EXIT_OK if report["backends"].get("backend") else EXIT_REFUSED


# -- output ----------------------------------------------------------------------

def _write(text: str) -> None:
    sys.stdout.write(text + "\n")
    sys.stdout.flush()


def _stdout_gone() -> int:
    """The reader of stdout left: point fd 1 at /dev/null so the flush at
    exit cannot raise again, and report it as a shell would."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError):  # no real fd 1 (redirected in-process)
        pass
    return EXIT_PIPE


# -- the parser ----------------------------------------------------------------------

class _Parser(argparse.ArgumentParser):
    """Usage errors exit 2 with this (sub)command's usage, never the top one's."""

    def error(self, message: str) -> NoReturn:
        self.print_usage(sys.stderr)
        self.exit(EXIT_USAGE, f"{self.prog}: error: {message}\n")


def _add_root_options(parser: argparse.ArgumentParser, *, several: bool = False) -> None:
    if several:
        parser.add_argument("roots", metavar="ROOT", nargs="+",
                            help="a directory the tools are confined to (one or more)")
    else:
        parser.add_argument("root", metavar="ROOT", help="the directory the tools are confined to")
    _add_policy_options(parser)


def _add_policy_options(parser: argparse.ArgumentParser) -> None:
    policy = parser.add_argument_group(
        "policy", "By default writes under .git/ and to host-run configuration (.envrc, editor "
                  "and agent settings) are refused and secret files (.env, keys) are not read.")
    policy.add_argument("--allow-git-writes", action="store_true",
                        help="let the tools write under .git/ (hooks and config included)")
    policy.add_argument("--no-default-policy", action="store_true",
                        help="drop the default protections and secret rules altogether")
    policy.add_argument("--protect", metavar="GLOB", action="append", default=[],
                        help="gitignore-style pattern that may be read but never changed "
                             "(repeatable)")
    policy.add_argument("--deny", metavar="GLOB", action="append", default=[],
                        help="gitignore-style pattern refused everywhere (repeatable), "
                             "e.g. --deny 'build/**'")
    policy.add_argument("--allow-hardlinks", action="store_true",
                        help="let reads and edits use files with more than one link")


def _add_read_only(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--read-only", action="store_true",
                        help="offer only the tools that change nothing")
    parser.add_argument("--apply-patch", action="store_true",
                        help="offer apply_patch (the patch format GPT-5 and Codex models are "
                             "trained on) in place of write_file, edit_file, move_file, "
                             "delete_file and make_directory")


def _parser() -> tuple[argparse.ArgumentParser, dict[str, argparse.ArgumentParser]]:
    from . import __version__

    parser = _Parser(prog="corral",
                     description="Coding-agent file tools confined to one directory.",
                     epilog="Exit status: 0 ok, 1 refused, 2 usage error.")
    parser.add_argument("--version", action="version", version=f"corral {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND",
                                parser_class=_Parser)

    serve = sub.add_parser("serve", help="run an MCP server over stdio",
                           description="Serve the tools over MCP on stdin/stdout. With several "
                                       "roots, every path begins with a root's name (its "
                                       "directory's base name).")
    _add_root_options(serve, several=True)
    _add_read_only(serve)
    serve.add_argument("--max-line-bytes", type=_positive_int, metavar="N",
                       default=16 * 1024 * 1024,
                       help="refuse a message longer than this (default 16 MiB)")
    serve.add_argument("--workers", type=_positive_int, metavar="N", default=4,
                       help="tool calls run at once at most (default 4)")
    serve.set_defaults(func=_cmd_serve)

    call = sub.add_parser("call", help="call one tool and print its JSON envelope",
                          description="Call one tool; exit 0 ok, 1 refused, 2 usage error.")
    _add_root_options(call)
    _add_read_only(call)
    call.add_argument("tool", metavar="TOOL", help="tool name, e.g. read_file")
    call.add_argument("json", metavar="JSON", nargs="?", default="{}",
                      help="the arguments as a JSON object (default {})")
    call.set_defaults(func=_cmd_call)

    tools = sub.add_parser("tools", help="print the tool definitions for a host",
                           description="Print the tool definitions as JSON in a host's shape.")
    tools.add_argument("--format", choices=FORMATS, default="mcp",
                       help="mcp (name, description, inputSchema, annotations), openai "
                            "(function calling) or anthropic (input_schema)")
    tools.add_argument("--strict", action="store_true",
                       help="openai only: strict-mode schemas (every property required, "
                            "optional ones nullable, objects closed)")
    _add_read_only(tools)
    tools.set_defaults(func=_cmd_tools)

    doctor = sub.add_parser("doctor", help="say which backend, fast path and policy are in use",
                            description="Report the backend, fast path and effective policy "
                                        "for ROOT, and why.")
    doctor.add_argument("root", metavar="ROOT", nargs="?", default=".",
                        help="directory to open (default: the current one)")
    doctor.add_argument("--json", action="store_true", help="print the report as JSON")
    _add_policy_options(doctor)
    doctor.set_defaults(func=_cmd_doctor)
    return parser, dict(sub.choices)


def main(argv: Sequence[str] | None = None) -> int:
    """Run the ``corral`` command; returns the exit status (see the module doc)."""
    parser, commands = _parser()
    try:
        args, extra = parser.parse_known_args(argv)
        if extra:
            commands[args.command].error(f"unrecognized arguments: {' '.join(extra)}")
        func: Command = args.func
        return func(args)
    except UsageError as exc:
        print(f"corral {args.command}: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except BrokenPipeError:
        return _stdout_gone()


if __name__ == "__main__":
    sys.exit(main())
