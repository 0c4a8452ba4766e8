"""The commands a host program's own configuration runs without being
asked: Claude Code's hooks, the MCP servers a client starts, a VS Code
task run when the folder opens, Cursor's hooks, a dev container's
lifecycle commands, what ``.envrc`` sources and puts on ``PATH``, mise's
hooks and what its ``[env]`` sources and puts on ``PATH``, Windsurf's hooks,
Qwen Code's MCP servers.

The configurations themselves are protected by name (rules.py); the
scripts their commands name are protected as git's config programs are
(:mod:`.gitdirs` reads them at open through :func:`commands`).  What runs
only when the user asks (a task without ``folderOpen``, a debugged
program) is left out: it is the user's to run and the model's to edit.
Reading is lenient and bounded: a config that cannot be read names
nothing (it is the user's file, and the model cannot change it).
"""

from __future__ import annotations

import json
import re
import shlex
import tomllib
from collections.abc import Iterator
from typing import Any

__all__ = ["HOST_CONFIGS", "HOST_CONFIG_TOPS", "MISE_CONFIGS", "commands"]

#: mise's configurations (TOML), read by ``mise activate`` at each prompt.
MISE_CONFIGS: tuple[str, ...] = (
    "mise.toml", ".mise.toml", "mise.local.toml", ".mise.local.toml", ".mise/config.toml",
    "mise/config.toml", ".config/mise.toml", ".config/mise/config.toml",
)
#: The configurations read, relative to the project directory holding them.
HOST_CONFIGS: tuple[str, ...] = (
    ".claude/settings.json", ".claude/settings.local.json", ".mcp.json",
    ".vscode/mcp.json", ".vscode/tasks.json", ".cursor/mcp.json", ".cursor/hooks.json",
    ".gemini/settings.json", ".devcontainer/devcontainer.json", ".devcontainer.json",
    "opencode.json", ".envrc", ".windsurf/hooks.json", ".qwen/settings.json",
) + MISE_CONFIGS
#: The names a directory holds when it may hold one of them.
HOST_CONFIG_TOPS = frozenset(name.partition("/")[0] for name in HOST_CONFIGS)

# the project directory, as the hosts' variables spell it (commands run from there)
_PROJECT_VARIABLES = re.compile(
    r"\$\{(?:workspaceFolder|workspaceRoot|localWorkspaceFolder|CLAUDE_PROJECT_DIR)\}"
    r"|\$CLAUDE_PROJECT_DIR\b")
# commands beside the hooks and servers: Claude Code's helpers, Gemini CLI's tool discovery
_HELPERS = {
    ".claude/settings.json": ("apiKeyHelper", "awsAuthRefresh", "awsCredentialExport",
                              "otelHeadersHelper"),
    ".gemini/settings.json": ("toolDiscoveryCommand", "toolCallCommand"),
}
_HELPERS[".claude/settings.local.json"] = _HELPERS[".claude/settings.json"]
_HELPERS[".qwen/settings.json"] = _HELPERS[".gemini/settings.json"]  # Qwen Code: Gemini CLI's
_LIFECYCLE = ("initializeCommand", "onCreateCommand", "updateContentCommand",
              "postCreateCommand", "postStartCommand", "postAttachCommand")
_MOST_TASKS = 1000


def commands(name: str, text: str) -> tuple[list[str], list[str]]:
    """``(commands, places)`` of the config ``name`` (one of
    :data:`HOST_CONFIGS`) holding ``text``: each command a shell line run
    from the project directory; each place a file or directory (relative
    to it) the host loads or puts on ``PATH``, protected whole."""
    if name == ".envrc":
        return _envrc(text)
    if name in MISE_CONFIGS:
        return _mise(text)
    data = _jsonc(text)
    if data is None:
        return [], []
    if name == ".vscode/tasks.json":
        found = list(_folder_open_tasks(data))
    elif name in (".devcontainer/devcontainer.json", ".devcontainer.json"):
        found = [line for key in _LIFECYCLE for line in _lifecycle(_get(data, key))]
    else:
        found = list(_commands_in(data))
        found += [value for key in _HELPERS.get(name, ())
                  if isinstance(value := _get(data, key), str)]
    return [_project_spelled(line) for line in found if line.strip()], []


def _get(data: Any, key: str) -> Any:
    return data.get(key) if isinstance(data, dict) else None


def _project_spelled(command: str) -> str:
    return _PROJECT_VARIABLES.sub(".", command)


def _line(command: Any, args: Any) -> str | None:
    """A command and its arguments as one shell line (``None``: no command)."""
    if isinstance(command, list):
        words = [word for word in command if isinstance(word, str)]
        if not words:
            return None
        head = " ".join(shlex.quote(word) for word in words)
    elif isinstance(command, str):
        head = command
    else:
        return None
    if isinstance(args, list):
        words = [arg if isinstance(arg, str) else _get(arg, "value") for arg in args]
        head += "".join(f" {shlex.quote(word)}" for word in words if isinstance(word, str))
    return head


def _commands_in(data: Any, depth: int = 0) -> Iterator[str]:
    """Every ``command`` (with its ``args``) in a hooks or servers config."""
    if depth > 12:
        return
    if isinstance(data, dict):
        line = _line(data.get("command"), data.get("args"))
        if line is not None:
            yield line
        for value in data.values():
            if isinstance(value, (dict, list)):
                yield from _commands_in(value, depth + 1)
    elif isinstance(data, list):
        for item in data:
            yield from _commands_in(item, depth + 1)


def _lifecycle(value: Any) -> Iterator[str]:
    """A dev container command: a shell line, an argv, or named ones of those."""
    if isinstance(value, dict):
        for item in value.values():
            yield from _lifecycle(item)
        return
    line = _line(value, None)
    if line is not None:
        yield line


def _folder_open_tasks(data: Any) -> Iterator[str]:
    """The commands of the tasks VS Code runs when the folder opens, and of
    the tasks those depend on (by label), each with its platform's
    override."""
    tasks = [task for task in (_get(data, "tasks") or [])[:_MOST_TASKS] if isinstance(task, dict)]
    by_label = {task["label"]: task for task in tasks if isinstance(task.get("label"), str)}
    queue = [task for task in tasks
             if _get(_get(task, "runOptions"), "runOn") == "folderOpen"]
    seen: set[int] = set()
    while queue:
        task = queue.pop()
        if id(task) in seen:
            continue
        seen.add(id(task))
        for part in (task, _get(task, "linux"), _get(task, "osx")):
            line = _line(_get(part, "command"), _get(part, "args"))
            if line is not None:
                yield line
        needs = task.get("dependsOn")
        for label in [needs] if isinstance(needs, str) else needs or []:
            if isinstance(label, str) and label in by_label:
                queue.append(by_label[label])


def _envrc(text: str) -> tuple[list[str], list[str]]:
    """direnv's ``.envrc``, sourced by the shell on ``cd``: each line is a
    command (``source_env x``, ``. ./x.sh``); besides, what its functions
    load or put on ``PATH`` (:data:`_DIRENV_LOADS`), protected whole:
    ``PATH_add bin`` makes a ``bin/ls`` there run in place of the user's,
    ``dotenv`` exports what ``.env`` says (``PROMPT_COMMAND`` too)."""
    lines: list[str] = []
    places: list[str] = []
    for line in text.splitlines():
        try:
            words = shlex.split(line, comments=True)
        except ValueError:
            lines.append(line)
            continue
        if not words:
            continue
        verb, rest = words[0], [word for word in words[1:] if "$" not in word]
        if verb not in _DIRENV_QUIET:
            lines.append(line)  # a command: what it runs, as a hook's line
        if verb == "PATH_add":
            places += rest
        elif verb == "path_add":
            places += rest[1:] if rest[:1] == ["PATH"] else []  # PYTHONPATH src: the user's
        elif verb in _DIRENV_LOADS:
            given = [word for word in rest if not word.startswith("-")]
            places += given or list(_DIRENV_LOADS[verb])
        elif verb == "layout" and rest:
            places += _LAYOUTS.get(rest[0].rstrip("0123456789."), [])
        elif verb == "use" and rest:
            places += _USES.get(rest[0], []) if len(rest) == 1 or rest[1] == "." else rest[1:2]
    return lines, places


def _mise(text: str) -> tuple[list[str], list[str]]:
    """mise's config, read by ``mise activate`` at each prompt: its
    ``[hooks]`` (``enter``, ``cd``, ``leave``...: a shell line, a list of
    them, or a table's ``script``) are commands; ``[env]``'s ``_.source``
    scripts are sourced (as ``. x`` lines), and ``_.path`` (put first on
    ``PATH``) and ``_.file`` (dotenv files exported) are places."""
    try:
        data = tomllib.loads(text)
    except (ValueError, RecursionError):  # not TOML, or nested past the parser's depth
        return [], []
    lines = list(_mise_lines(_get(data, "hooks")))
    special = _get(_get(data, "env"), "_")
    lines += [f". {shlex.quote(path)}" for path in _mise_paths(_get(special, "source"))]
    places = [*_mise_paths(_get(special, "path")), *_mise_paths(_get(special, "file"))]
    return lines, places


def _mise_lines(value: Any, depth: int = 0) -> Iterator[str]:
    """The shell lines of mise's hooks: strings, in lists or tables."""
    if isinstance(value, str):
        yield value
    elif depth < 4 and isinstance(value, (list, dict)):
        for item in value.values() if isinstance(value, dict) else value:
            yield from _mise_lines(item, depth + 1)


def _mise_paths(value: Any) -> Iterator[str]:
    """An ``_.source``/``_.path``/``_.file`` value's paths: a string, a
    table's ``path``, or a list of those."""
    for item in value if isinstance(value, list) else [value]:
        path = _get(item, "path") if isinstance(item, dict) else item
        if isinstance(path, str) and path and "{{" not in path:
            yield path


# direnv functions loading a file of the project (its default when none is given)
_DIRENV_LOADS: dict[str, tuple[str, ...]] = {
    "dotenv": (".env",), "dotenv_if_exists": (".env",), "source_env": (),
    "source_env_if_exists": (),
}
# direnv functions whose words name no program to run (read for their places, if any)
_DIRENV_QUIET = frozenset({
    "PATH_add", "path_add", "MANPATH_add", "dotenv", "dotenv_if_exists", "watch_file",
    "watch_dir", "layout", "use", "export", "env_vars_required", "strict_env", "unstrict_env",
    "source_up", "source_up_if_exists", "log_status", "log_error", "has", "expand_path",
    "find_up", "on_git_branch", "direnv_version", "user_rel_path", "unset"})
# what ``layout x`` puts on PATH; what ``use x`` evaluates (a shellHook runs in the shell)
_LAYOUTS = {"node": ["node_modules/.bin"], "python": [".direnv"], "pipenv": [".direnv"],
            "poetry": [".direnv"], "pyenv": [".direnv"], "uv": [".venv", ".direnv"]}
_USES = {"nix": ["shell.nix", "default.nix"], "flake": ["flake.nix", "flake.lock"]}


def _jsonc(text: str) -> Any:
    """JSON with ``//`` and ``/* */`` comments and trailing commas (as VS
    Code and Claude Code write their configs); ``None`` if it is not."""
    try:
        return json.loads(text)
    except ValueError:
        pass
    # between two string literals the text is one piece: a trailing comma
    # and the bracket closing after it always lie in the same one
    cleaned = "".join(piece if literal else _TRAILING_COMMA.sub(r"\1", piece)
                      for literal, piece in _pieces(text))
    try:
        return json.loads(cleaned)
    except ValueError:
        return None


_PLAIN = re.compile(r'[^"/]+|/')
_TRAILING_COMMA = re.compile(r",(\s*[}\]])")


def _pieces(text: str) -> Iterator[tuple[bool, str]]:
    """``text`` as (is a string literal, piece) pieces in order, comments
    left out (a block comment is a space)."""
    at, size = 0, len(text)
    plain: list[str] = []
    while at < size:
        if text[at] == '"':
            if plain:
                yield False, "".join(plain)
                plain = []
            end = at + 1
            while end < size and text[end] != '"':
                end += 2 if text[end] == "\\" else 1
            yield True, text[at:end + 1]
            at = end + 1
        elif text.startswith("//", at):
            end = text.find("\n", at)
            at = size if end < 0 else end
        elif text.startswith("/*", at):
            end = text.find("*/", at + 2)
            at = size if end < 0 else end + 2
            plain.append(" ")
        else:
            run = _PLAIN.match(text, at)
            assert run is not None  # one of the two alternatives matches any character
            plain.append(run.group())
            at = run.end()
    if plain:
        yield False, "".join(plain)
