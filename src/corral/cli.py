"""The ``corral`` command: the tools of :mod:`corral.tools`, from a shell.

* ``corral serve ROOT [ROOT...]``: an MCP server over stdio (corral speaks
  the protocol itself; nothing more to install).
* ``corral call ROOT TOOL 'JSON'``: one call; prints the envelope as JSON.
* ``corral tools --format mcp|openai|openai-responses|anthropic [--strict]``: the tool
  definitions in that host's shape (no root needed).
* ``corral doctor [ROOT]``: which backend and fast path are in use, and why.

Exit status: 0 ok, 1 a refusal (the envelope says why), 2 a usage error
(unknown subcommand, option or tool, bad or too deeply nested JSON, a root
that cannot be opened, a policy pattern that could never apply, a bad
``CORRAL_BACKEND``; the message is on stderr, one line), 3 an internal
error (a bug; ``CORRAL_DEBUG=1`` shows its traceback), 130 after Ctrl-C,
141 when whoever reads stdout went away (``corral doctor | head``);
``corral serve`` stopped by a signal exits 128 + its number.  No user
mistake ends in a traceback.  Like every front end this one only serializes: the tools decide.
"""

from __future__ import annotations

import argparse
import difflib
import fnmatch
import json
import os
import shlex
import sys
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, NoReturn, TypedDict

from .hosts import FORMATS, HostFormat, envelope_json, envelope_text, one_line, root_names

if TYPE_CHECKING:
    from .contained import Root
    from .tools import Toolbox, Workspace, tool_definitions
    from .tools import Policy
    from .tools import Editing, Opener

__all__ = ["main", "envelope_json", "envelope_text", "tool_definitions", "FORMATS"]

EXIT_OK = 0
EXIT_REFUSED = 1
EXIT_USAGE = 2
EXIT_INTERNAL = 3  # corral itself failed: a bug, said in one line (CORRAL_DEBUG=1 shows it all)
EXIT_INTERRUPTED = 130  # 128 + SIGINT: Ctrl-C
EXIT_PIPE = 141  # 128 + SIGPIPE: what a shell reports for a writer whose reader left

BACKENDS = ("os", "native")
MAX_WORKERS = 256  # threads calls may run on at once
MAX_LINE_BYTES = 1 << 31  # the longest message --max-line-bytes may allow (2 GiB)

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


def _toolbox(args: argparse.Namespace, *, one_shot: bool = False,
             defer_tools: bool = False) -> Toolbox:
    """The Toolbox of ``args.root``; ``one_shot``: the process makes one
    call, which waits its whole deadline for a large tree's links rather
    than answering ``not_ready`` (a process after it would walk again);
    ``defer_tools`` as the Toolbox takes it."""
    from .tools import Limits, Toolbox

    _check_backend()
    options = toolbox_options(args)
    limits = Limits(links_wait_seconds=Limits().call_seconds) if one_shot else None
    try:
        return Toolbox(args.root, limits=limits, defer_tools=defer_tools, **options)
    except OSError as exc:
        raise UsageError(_open_error(args.root, exc)) from None
    except ValueError as exc:  # a policy pattern read against the root, a backend unusable here
        raise UsageError(str(exc)) from None


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
    names = _registered_names()
    if args.tool not in names and args.root in names:
        raise UsageError(f"ROOT is missing: the first argument is the directory the tools are "
                         f"confined to, e.g. corral call . {args.root} 'JSON'")
    if args.tool not in names:
        raise UsageError(_unknown_tool(args.tool))
    arguments = _json_arguments(args.json)
    with _toolbox(args, one_shot=True) as toolbox:
        envelope = toolbox.call(args.tool, arguments)
    # a control, a line separator or an invisible character (a bidirectional
    # control: b\u202egnp.exe reads as bexe.png) JSON writes as it is, as its
    # JSON escape: the same values for a program, none read amiss at a terminal
    # (ASCII JSON, most answers, holds none of them but DEL: a search in C)
    text = envelope_json(envelope)
    _write(text if text.isascii() and "\x7f" not in text else one_line(text))
    return EXIT_OK if envelope.get("ok") is True else EXIT_REFUSED


def _json_arguments(text: str) -> object:
    """The JSON of ``corral call``'s arguments (the toolbox checks its shape)."""
    try:
        return json.loads(text)
    except RecursionError:
        raise UsageError("the arguments are nested too deeply to read as JSON") from None
    except ValueError as exc:
        raise UsageError(f"the arguments are not valid JSON: {exc}") from None


def _cmd_tools(args: argparse.Namespace) -> int:
    fmt: HostFormat = args.format
    if args.strict and fmt not in ("openai", "openai-responses"):
        raise UsageError("--strict applies to --format openai and openai-responses only")
    from .tools import tool_definitions

    definitions = tool_definitions(None, fmt, strict=args.strict, read_only=args.read_only,
                                   editing=_editing(args))
    _write(json.dumps(definitions, indent=2, ensure_ascii=False))
    return EXIT_OK


def _cmd_serve(args: argparse.Namespace) -> int:
    from .mcp import serve

    workspace = _serve_workspace(args)  # a bad root fails before anything is served
    print(_serve_banner(args, workspace, waits_on_terminal=_stdin_is_terminal()),
          file=sys.stderr, flush=True)
    boxes = [workspace.toolbox(name) for name in workspace.roots]

    def load_tools() -> None:  # the tools' modules: imported once initialize is answered
        for box in boxes:
            box.load_tools()
    try:
        serve(workspace, max_line_bytes=args.max_line_bytes, workers=args.workers,
              warm=load_tools)
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
    several = len(args.roots) > 1
    try:
        for name, path in zip(root_names(args.roots), args.roots):
            one = argparse.Namespace(**vars(args))
            one.root = path
            if several:
                one.deny = _root_patterns(args.deny, name, path, args.roots)
                one.protect = _root_patterns(args.protect, name, path, args.roots)
            boxes[name] = _toolbox(one, defer_tools=True)
    except UsageError:
        for box in boxes.values():
            box.close()
        raise
    return Workspace(boxes, opener=_serve_opener(args))


def _root_patterns(patterns: list[str], name: str, path: str, paths: list[str]) -> list[str]:
    """The host's patterns for the root called ``name`` (at host ``path``),
    one of several (at ``paths``): each as written (it applies in every
    root), and one whose first component is ``name`` (or a glob matching
    it: ``*/secrets``) also anchored in that root without it, since with
    several roots a path is spelled ``name/...`` (``web/secrets/**`` is
    web's ``secrets/**``; as written alone it matched nothing there). An
    absolute pattern applies in the roots it lies inside only (in none, it
    is kept everywhere, and the policy says why it cannot apply)."""
    out: list[str] = []
    for pattern in patterns:
        negated = pattern.startswith("!")
        body = pattern[1:] if negated else pattern
        if os.path.isabs(body):
            inside = [p for p in paths if _lies_inside(body, p)]
            if not inside or _lies_inside(body, path):
                out.append(pattern)
            continue
        out.append(pattern)
        while body.startswith("./"):
            body = body[2:]
        first, slash, rest = body.partition("/")
        if slash and rest.strip("/.") and fnmatch.fnmatchcase(name, first):
            out.append(("!" if negated else "") + "./" + rest)
    return out


def _lies_inside(pattern: str, root: str) -> bool:
    """Whether the absolute ``pattern`` names a place inside the host
    directory ``root`` (as given or with its links resolved)."""
    pattern = os.path.normpath(pattern)
    for top in {os.path.abspath(root), os.path.realpath(root)}:
        if pattern == top or pattern.startswith(top.rstrip("/") + "/"):
            return True
    return False


def _serve_opener(args: argparse.Namespace) -> Opener:
    """How a client's root below a ROOT is served: its own Toolbox with the
    same options, and the ROOT's policy as it applies beneath."""
    from .tools import Toolbox

    def opener(root: Root, parent: Toolbox, base: str) -> Toolbox | None:
        options = toolbox_options(args)
        options["policy"] = parent.policy.beneath(base)
        return Toolbox(root, **options)
    return opener


def _stdin_is_terminal() -> bool:
    try:
        return os.isatty(0)
    except OSError:
        return False


def _serve_banner(args: argparse.Namespace, workspace: Workspace, *,
                  waits_on_terminal: bool = False) -> str:
    """A few short lines for stderr (which clients keep in their logs):
    each root, the backend, the policy in brief, and where the whole policy
    is shown; on a terminal, what the server waits for and how to stop it."""
    first = workspace.toolbox(workspace.roots[0])
    info = first.root.info()
    fast = ", openat2" if info.get("openat2") else ""
    lines = [f"corral serve: MCP over stdio ({info.get('backend', '?')} backend{fast})"]
    for name, path in zip(workspace.roots, args.roots):
        label = "root" if len(args.roots) == 1 else f"root {name}"
        lines.append(f"  {label}: {os.path.abspath(path)}")
    policy = first.policy
    git = "git writes allowed" if policy.allow_git_writes else ".git/ read-only"
    others = [p for p in policy.protect if p != "**/.git"]
    denied = f"{len(policy.deny)} denied" if policy.deny else "nothing denied"
    tools = "read-only tools" if args.read_only else "read and write tools"
    lines.append(f"  policy: {tools}; {git}; {len(others)} host-run patterns read-only; "
                 f"{len(policy.secrets)} secret patterns unreadable; {denied}")
    where = " ".join(shlex.quote(os.path.abspath(p)) for p in args.roots[:1])
    lines.append(f"  full policy: corral doctor {where}")
    if waits_on_terminal:
        lines.append("  waiting for an MCP client on stdin (JSON-RPC, one message a line); "
                     "an MCP client starts this command itself. Ctrl-C stops it.")
    return "\n".join(lines)


def _whole_number(text: str, least: int, most: int) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a whole number: {text[:40]!r}") from None
    if not least <= value <= most:
        raise argparse.ArgumentTypeError(f"must be from {least} to {most}, not {text[:40]}")
    return value


def _workers(text: str) -> int:
    return _whole_number(text, 1, MAX_WORKERS)


def _line_bytes(text: str) -> int:
    return _whole_number(text, 1, MAX_LINE_BYTES)


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
                     epilog="Exit status: 0 ok, 1 refused, 2 usage error, 3 internal error; "
                            "corral serve stopped by a signal: 128 + its number.")
    parser.add_argument("--version", action="version", version=f"corral {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND",
                                parser_class=_Parser)

    serve = sub.add_parser("serve", help="run an MCP server over stdio",
                           description="Serve the tools over MCP on stdin/stdout. With several "
                                       "roots, every path begins with a root's name (its "
                                       "directory's base name).")
    _add_root_options(serve, several=True)
    _add_read_only(serve)
    serve.add_argument("--max-line-bytes", type=_line_bytes, metavar="N",
                       default=16 * 1024 * 1024,
                       help="refuse a message longer than this (default 16 MiB)")
    serve.add_argument("--workers", type=_workers, metavar="N", default=4,
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
                            "(Chat Completions function calling), openai-responses (the "
                            "Responses API's flat function tools) or anthropic (input_schema)")
    tools.add_argument("--strict", action="store_true",
                       help="openai formats only: strict-mode schemas (every property "
                            "required, optional ones nullable, objects closed)")
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
    command = "corral"
    try:
        parser, commands = _parser()
        args, extra = parser.parse_known_args(argv)
        command = f"corral {args.command}"
        if extra:
            commands[args.command].error(f"unrecognized arguments: {' '.join(extra)}")
        func: Command = args.func
        return func(args)
    except UsageError as exc:
        print(f"{command}: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except BrokenPipeError:
        return _stdout_gone()
    except KeyboardInterrupt:
        return EXIT_INTERRUPTED
    except Exception as exc:  # a bug in corral: one line, the whole story on request
        if os.environ.get("CORRAL_DEBUG"):
            raise
        print(f"{command}: internal error ({type(exc).__name__}); this is a bug in corral: "
              "please report it with the output of CORRAL_DEBUG=1 and the same command",
              file=sys.stderr)
        return EXIT_INTERNAL


def __getattr__(name: str) -> object:
    if name == "tool_definitions":  # loaded on first use: `corral --help` imports no tools
        from .tools import tool_definitions

        return tool_definitions
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


if __name__ == "__main__":
    sys.exit(main())
