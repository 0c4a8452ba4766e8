"""The commands a host program's own configuration runs without being
asked: Claude Code's hooks, the MCP servers a client starts, a VS Code
task run when the folder opens and the programs VS Code's settings name
(the interpreter, git, a terminal's shell, a linter's executable),
Cursor's hooks, a dev container's
lifecycle commands, what ``.envrc`` sources and puts on ``PATH``, mise's
hooks and what its ``[env]`` sources and puts on ``PATH`` (each of its
places, ``conf.d`` fragments and ``MISE_ENV`` files), Windsurf's hooks,
Qwen Code's MCP servers, GitHub Copilot CLI's hooks, a JetBrains IDE's
file watchers and run configurations, Helix's language servers,
formatters, key bindings and shell, Crush's MCP and language servers, the
MCP servers of Kiro, Roo Code, Amazon Q, Codex, opencode, Kilo Code, Junie and
Continue, Cursor's worktree setup commands,
Kiro's hooks, Amazon Q's and Kiro's project agents (their hooks and
MCP servers), OpenHands' hooks and setup scripts, Kilo Code's setup scripts, Factory
Droid's hooks and MCP servers,
Augment's and Tabnine CLI's hooks, Zed's context and language servers, aider's lint and test
commands, lint-staged's commands (a JSON ``.lintstagedrc``).

A name may end in a ``*`` pattern (``.github/hooks/*.json``): every entry
of that directory matching it is read.

The configurations themselves are protected by name (rules.py); the
scripts their commands name are protected as git's config programs are
(:mod:`.gitdirs` reads them at open through :func:`commands`).  What runs
only when the user asks (a task without ``folderOpen``, a debugged
program) is left out: it is the user's to run and the model's to edit.
Reading is lenient and bounded: a config that cannot be read names
nothing (it is the user's file, and the model cannot change it).
"""

from __future__ import annotations

import html
import json
import posixpath
import re
import shlex
import tomllib
from collections.abc import Iterable, Iterator
from typing import Any

from ...hosts import file_uri_path
from .gitconfig import ENVIRONMENT_MANAGERS, ProgramPath
from .hookmanagers import LEFTHOOK_CONFIGS, PRE_COMMIT_CONFIGS
from .yamlish import load as load_yaml

__all__ = ["COMPOSE", "DEV_CONTAINER_CONFIGS", "HOST_CONFIGS", "HOST_CONFIG_TOPS",
           "MISE_CONFIGS", "MOST_MATCHED", "commands", "compose_loads", "config_tops", "deno_tasks",
           "matches"]

#: mise's configurations (TOML), read by ``mise activate`` at each prompt:
#: each place with its ``.local`` and ``MISE_ENV`` variants
#: (``mise.<env>.toml``, ``mise.<env>.local.toml``) and the ``conf.d``
#: fragments (mise's ``LOCAL_CONFIG_FILENAMES`` and ``env_config_patterns``).
MISE_CONFIGS: tuple[str, ...] = (
    "mise.toml", ".mise.toml", "mise.*.toml", ".mise.*.toml", ".mise/config.toml",
    ".mise/config.*.toml", ".mise/conf.d/*.toml", "mise/config.toml", "mise/config.*.toml",
    ".config/mise.toml", ".config/mise.*.toml", ".config/mise/config.toml",
    ".config/mise/config.*.toml", ".config/mise/mise.toml", ".config/mise/mise.*.toml",
    ".config/mise/conf.d/*.toml", ".rtx.toml", ".rtx.*.toml",
)
# a home's shell startup files: what they source and run, what they put on PATH
_SHELL_STARTUP_FILES = (".bashrc", ".bash_profile", ".bash_login", ".bash_aliases", ".profile",
                        ".zshrc", ".zshenv", ".zprofile", ".zlogin", ".kshrc", ".mkshrc")
#: The configurations read, relative to the project directory holding them.
HOST_CONFIGS: tuple[str, ...] = (
    ".claude/settings.json", ".claude/settings.local.json", ".mcp.json",
    ".vscode/mcp.json", ".vscode/tasks.json", ".vscode/settings.json", "*.code-workspace",
    ".cursor/mcp.json", ".cursor/hooks.json",
    ".gemini/settings.json", ".devcontainer/devcontainer.json", ".devcontainer.json",
    ".devcontainer/*/devcontainer.json",
    "opencode.json", ".envrc", ".windsurf/hooks.json", ".qwen/settings.json",
    ".github/hooks/*.json", ".idea/watcherTasks.xml", ".idea/runConfigurations/*.xml",
    ".run/*.run.xml", ".idea/workspace.xml", ".helix/languages.toml", ".helix/config.toml",
    ".crush.json", "crush.json", ".kiro/settings/mcp.json", ".roo/mcp.json",
    ".amazonq/mcp.json", ".codex/config.toml", "opencode.jsonc", ".opencode/opencode.json",
    ".opencode/opencode.jsonc", ".zed/settings.json", ".aider.conf.yml", ".lintstagedrc",
    ".lintstagedrc.json", ".kiro/hooks/*.kiro.hook", ".continue/mcpServers/*.json",
    ".continue/mcpServers/*.yaml", ".continue/mcpServers/*.yml",
    "kilo.json", "kilo.jsonc", ".kilo/kilo.json", ".kilo/kilo.jsonc", ".kilocode/mcp.json",
    ".junie/mcp/mcp.json", ".cursor/worktrees.json",
    # Amazon Q and Kiro CLI project agents: hooks (agentSpawn...) and MCP servers
    ".amazonq/cli-agents/*.json", ".kiro/agents/*.json", ".openhands/hooks.json",
    ".factory/hooks.json", ".factory/hooks/hooks.json", ".factory/settings.json",
    ".factory/settings.local.json", ".factory/mcp.json",
    ".augment/settings.json", ".augment/settings.local.json", ".tabnine/agent/settings.json",
    # setup scripts, run from the repository's top: Kilo's Agent Manager as it
    # makes a worktree, OpenHands at each session start and as its pre-commit hook
    ".kilo/setup-script", ".kilo/setup-script.*", ".kilocode/setup-script",
    ".kilocode/setup-script.*", ".openhands/setup.sh", ".openhands/pre-commit.sh",
    # cloud workspaces: what runs as one starts (Gitpod, Gitpod Flex, CodeSandbox, Replit)
    ".gitpod.yml", ".gitpod/automations.yaml", ".gitpod/automations.yml",
    ".codesandbox/tasks.json", ".replit",
) + MISE_CONFIGS + (
    # the user's own tool configs: the programs they run at a common command
    ".npmrc", ".yarnrc", ".yarnrc.yml", "bunfig.toml", ".bunfig.toml", ".cargo/config.toml",
    ".cargo/config", "pnpm-workspace.yaml", "global.json",
    # version files: an interpreter named by its path (mise's `path:`, uv's)
    ".tool-versions", ".python-version",
) + _SHELL_STARTUP_FILES
_SHELL_STARTUP = frozenset(_SHELL_STARTUP_FILES)
_SETUP_SCRIPTS = frozenset({".kilo/setup-script", ".kilo/setup-script.*",
                            ".kilocode/setup-script", ".kilocode/setup-script.*",
                            ".openhands/setup.sh", ".openhands/pre-commit.sh"})
_RUN_CONFIGURATIONS = (".idea/runConfigurations/*.xml", ".run/*.run.xml", ".idea/workspace.xml")
#: The names a directory holds when it may hold one of them (a pattern's
#: top, ``mise.*.toml``, is matched by :func:`config_tops`), or a git hook
#: manager's config (read with its work tree's git config): one coming
#: into a directory while a view is open is read before the next call.
HOST_CONFIG_TOPS = frozenset(name.partition("/")[0] for name in (
    *HOST_CONFIGS, *PRE_COMMIT_CONFIGS, *LEFTHOOK_CONFIGS) if "*" not in name.partition("/")[0])
_TOP_PATTERNS = tuple(dict.fromkeys(name for name in HOST_CONFIGS
                                    if "/" not in name and "*" in name))
_TOP_SUFFIXES = tuple(dict.fromkeys(pattern.partition("*")[2] for pattern in _TOP_PATTERNS))
#: The entries of one directory read for one pattern, at most.
MOST_MATCHED = 32


def matches(pattern: str, name: str) -> bool:
    """Whether the entry ``name`` matches the last component ``pattern`` of
    a config's name (one ``*``: any run of characters, a dot too, as
    mise's and Copilot CLI's globs take it; a hidden entry matches only a
    pattern starting with a dot)."""
    head, star, tail = pattern.partition("*")
    if not star:
        return name == pattern
    return (len(name) >= len(head) + len(tail) and name.startswith(head)
            and name.endswith(tail) and (head.startswith(".") or not name.startswith(".")))


def config_tops(names: Iterable[str]) -> frozenset[str]:
    """The entries among ``names`` (one directory's) under which, or as
    which, a config of :data:`HOST_CONFIGS` may lie (a look at every
    directory of a tree asks: a name pays one ``endswith`` unless it ends
    as a pattern does)."""
    found = HOST_CONFIG_TOPS.intersection(names)
    patterned = [name for name in names if name.endswith(_TOP_SUFFIXES)
                 and any(matches(pattern, name) for pattern in _TOP_PATTERNS)]
    return frozenset(found.union(patterned)) if patterned else found

# the project directory, as the hosts' variables spell it (commands run from there)
_PROJECT_VARIABLES = re.compile(
    r"\$\{(?:workspaceFolder|workspaceRoot|localWorkspaceFolder|CLAUDE_PROJECT_DIR|"
    r"FACTORY_PROJECT_DIR|TABNINE_PROJECT_DIR)\}|\$(?:CLAUDE|FACTORY|TABNINE)_PROJECT_DIR\b")
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


def commands(name: str, text: str, folder: str = "") -> tuple[list[str], list[str], list[str]]:
    """``(commands, places, files)`` of the config ``name`` (one of
    :data:`HOST_CONFIGS`) holding ``text``, at ``folder`` of the project
    directory: each command a shell line run
    from the project directory; each place a file or directory (relative
    to it) the host loads or puts on ``PATH``, protected whole; each file
    a path (relative to it) the host may run or load: protected where it
    is a file or nothing is there (a directory named so is not a program).
    A YAML config the bounded reader cannot read raises
    :class:`~.yamlish.Unread` (what it runs is not known)."""
    if name == ".envrc":
        return (*_envrc(text), [])
    if name in _SHELL_STARTUP:
        return (*_shell_startup(text), [])
    if name in _SETUP_SCRIPTS:  # a shell script: its lines, as a git hook's are read
        return _spelled(line for line in text.splitlines()
                        if not line.lstrip().startswith("#")), [], []
    if name in MISE_CONFIGS:
        return (*_mise(text), [])
    if name == ".idea/watcherTasks.xml":
        return _spelled(_file_watchers(text)), [], []
    if name in _RUN_CONFIGURATIONS:
        script, named = _run_configurations(text, whole=name != ".idea/workspace.xml")
        return _spelled(script), [], named
    if name == ".helix/languages.toml":
        return _spelled(_helix(text)), [], []
    if name == ".helix/config.toml":
        return _spelled(_helix_config(text)), [], []
    if name == ".codex/config.toml":
        return _spelled(_codex(text)), [], []
    if name == ".aider.conf.yml":
        return _spelled(_aider(load_yaml(text))), [], []
    if name == ".replit":
        return _spelled(_replit(text)), [], []
    if name == "global.json":
        return [], _dotnet_sdk_paths(_jsonc(text)), []
    if name == ".tool-versions":
        return [], [place for line in text.splitlines()
                    for place in _tool_paths(line.partition("#")[0].split()[1:])], []
    if name == ".python-version":
        return [], [place for line in text.splitlines()
                    for place in _interpreter_places(line.partition("#")[0].strip())], []
    if name in _TOOL_CONFIGS:
        run, loaded = _TOOL_CONFIGS[name](text)
        return _spelled(run), [], loaded[:_MOST_TASKS]
    data = load_yaml(text) if name.endswith((".yaml", ".yml")) else _jsonc(text)
    if data is None:
        return [], [], []
    places: list[str] = []
    files: list[str] = []
    if name == ".vscode/tasks.json":
        found = list(_folder_open_tasks(data))
    elif name == ".vscode/settings.json":
        found, places, files = _vscode_settings(data)
    elif name == "*.code-workspace":
        found, places, files = _vscode_settings(_get(data, "settings"))
        found += _folder_open_tasks(_get(data, "tasks"))
    elif name in DEV_CONTAINER_CONFIGS:
        found = [line for key in _LIFECYCLE for line in _lifecycle(_get(data, key))]
        files = [path if path.startswith("/") or not folder else f"{folder}/{path}"
                 for path in _container_files(data)]
    elif name == ".github/hooks/*.json":
        found = list(_copilot_hooks(data))
    elif name == ".zed/settings.json":
        found = list(_zed(data))
    elif name in (".lintstagedrc", ".lintstagedrc.json"):
        found = list(_lint_staged(data))
    elif name == ".cursor/worktrees.json":
        found = list(_worktree_setup(data))
    elif name == ".gitpod.yml":
        found = list(_gitpod_tasks(data))
    elif name in (".gitpod/automations.yaml", ".gitpod/automations.yml"):
        found = list(_gitpod_automations(data))
    elif name == ".codesandbox/tasks.json":
        found = list(_codesandbox_tasks(data))
    else:
        found = list(_commands_in(data))
        found += [value for key in _HELPERS.get(name, ())
                  if isinstance(value := _get(data, key), str)]
        if name in _PLUGIN_CONFIGS:
            places = list(_local_plugins(data, name.rpartition("/")[0]))
    return _spelled(found), [_project_spelled(place) for place in places], files


DEV_CONTAINER_CONFIGS = (".devcontainer/devcontainer.json", ".devcontainer.json",
                         ".devcontainer/*/devcontainer.json")
#: the kind a Compose file a dev container config names is read as
#: (:attr:`ProgramPath.recipes`), whatever its name
COMPOSE = "compose.yaml"


def compose_loads(text: str) -> list[ProgramPath]:
    """What a Compose file a dev container starts loads beyond itself,
    relative to its folder: the compose files its ``include`` names (a
    path, a ``path:`` key, a string or a list: read as compose files in
    turn), a service's ``extends`` file, and the Dockerfile a service's
    ``build`` builds from (``build: ./ci`` is ``ci/Dockerfile``); a path
    through a variable or a remote context is not followed.  A file the
    bounded YAML reader cannot read raises :class:`~.yamlish.Unread`."""
    data = load_yaml(text)
    found: list[ProgramPath] = []
    includes = _get(data, "include")
    for item in includes if isinstance(includes, list) else ():
        paths = _get(item, "path") if isinstance(item, dict) else item
        found += [ProgramPath(path, True, recipes=COMPOSE) for path in _strings_of(paths)]
    services = _get(data, "services")
    for service in services.values() if isinstance(services, dict) else ():
        found += [ProgramPath(path, True, recipes=COMPOSE)
                  for path in _strings_of(_get(_get(service, "extends"), "file"))]
        build = _get(service, "build")
        if build is None:
            continue
        contexts = _strings_of(build if isinstance(build, str) else _get(build, "context"))
        context = contexts[0] if contexts else "." if isinstance(build, dict) else None
        dockerfiles = _strings_of(_get(build, "dockerfile")) or ["Dockerfile"]
        if context is not None and "://" not in context and not context.startswith("git@"):
            found.append(ProgramPath(posixpath.join(context, dockerfiles[0]), True))
    return found


def deno_tasks(text: str) -> list[str]:
    """The shell lines of ``deno.json``'s (JSONC's) ``tasks``: a line, or
    a table's ``command``."""
    tasks = _get(_jsonc(text), "tasks")
    found = [_get(task, "command") if isinstance(task, dict) else task
             for task in (tasks.values() if isinstance(tasks, dict) else ())]
    return [line for line in found if isinstance(line, str)]


def _strings_of(value: Any) -> list[str]:
    """A Compose value's paths: a string or a list of strings, none spelled
    with a variable (``${X}``: where it leads is not known here)."""
    return [item for item in (value if isinstance(value, list) else [value])
            if isinstance(item, str) and item.strip() and "$" not in item]


def _container_files(data: Any) -> Iterator[str]:
    """The compose files and Dockerfile a dev container config names,
    relative to its folder: they start the container, which has the
    workspace mounted read-write (a compose file may mount more)."""
    compose = _get(data, "dockerComposeFile")
    for path in compose if isinstance(compose, list) else [compose]:
        if isinstance(path, str) and path.strip():
            yield path.strip()
    for path in (_get(_get(data, "build"), "dockerfile"), _get(data, "dockerFile")):
        if isinstance(path, str) and path.strip():
            yield path.strip()


def _spelled(lines: Iterable[str]) -> list[str]:
    return [_project_spelled(line) for line in lines if line.strip()]


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


#: opencode's and Kilo Code's configs: their ``plugin`` (and ``plugins``)
#: arrays name npm packages and local files or directories, loaded at start
_PLUGIN_CONFIGS = frozenset({"opencode.json", "opencode.jsonc", ".opencode/opencode.json",
                             ".opencode/opencode.jsonc", "kilo.json", "kilo.jsonc",
                             ".kilo/kilo.json", ".kilo/kilo.jsonc"})
_LOCAL_PLUGIN = ("./", "../", "/", ".\\", "..\\")


def _local_plugins(data: Any, folder: str) -> Iterator[str]:
    """The local plugins of an opencode or Kilo config in ``folder``
    (relative to the project): a path relative to the config file, an
    absolute one or a ``file:`` URI (a package name is npm's, never a path);
    an entry may be ``[spec, options]`` or ``{"package": spec}``."""
    for key in ("plugin", "plugins"):
        entries = _get(data, key)
        if not isinstance(entries, list):
            continue
        for item in entries[:_MOST_TASKS]:
            spec = (item[0] if item else None) if isinstance(item, list) else \
                _get(item, "package") if isinstance(item, dict) else item
            if not isinstance(spec, str):
                continue
            if spec[:5].lower() == "file:":
                path = file_uri_path(spec)
                if path is not None:
                    yield path
            elif spec.startswith(_LOCAL_PLUGIN):
                yield spec if spec.startswith("/") or not folder else f"{folder}/{spec}"


def _worktree_setup(data: Any) -> Iterator[str]:
    """Cursor's worktree setup: each key's commands (a list of shell lines)
    or script (a path), run in the new worktree as Cursor makes it."""
    for key in ("setup-worktree", "setup-worktree-unix", "setup-worktree-windows"):
        value = _get(data, key)
        if isinstance(value, str):
            yield value
        elif isinstance(value, list):
            yield from (line for line in value if isinstance(line, str))


def _gitpod_tasks(data: Any) -> Iterator[str]:
    """Gitpod's ``.gitpod.yml``: each task's ``before``, ``init``,
    ``prebuild`` and ``command``, shell lines run as a workspace starts (a
    prebuild runs ``before`` and ``init`` on its own for a new commit)."""
    tasks = _get(data, "tasks")
    for task in tasks[:_MOST_TASKS] if isinstance(tasks, list) else ():
        for key in ("before", "init", "prebuild", "command"):
            value = _get(task, key)
            if isinstance(value, str):
                yield value


def _gitpod_automations(data: Any) -> Iterator[str]:
    """Gitpod Flex's automations: each task's ``command`` and each
    service's ``commands`` (``start``, ``ready``, ``stop``) whose
    ``triggeredBy`` starts them with the environment (every trigger but
    ``manual``)."""
    for kind, key in (("tasks", "command"), ("services", "commands")):
        entries = _get(data, kind)
        for entry in list(entries.values())[:_MOST_TASKS] if isinstance(entries, dict) else ():
            triggers = _get(entry, "triggeredBy")
            if not isinstance(triggers, list) or all(t == "manual" for t in triggers):
                continue
            value = _get(entry, key)
            if isinstance(value, str):
                yield value
            elif isinstance(value, dict):
                yield from (line for line in value.values() if isinstance(line, str))


def _codesandbox_tasks(data: Any) -> Iterator[str]:
    """CodeSandbox's ``.codesandbox/tasks.json``: its ``setupTasks`` (a
    shell line or ``{command}`` each), run in order as the sandbox starts,
    and each task with ``runAtStart``; a task run by a click is the
    user's."""
    setup = _get(data, "setupTasks")
    for task in setup[:_MOST_TASKS] if isinstance(setup, list) else ():
        line = task if isinstance(task, str) else _get(task, "command")
        if isinstance(line, str):
            yield line
    tasks = _get(data, "tasks")
    for task in list(tasks.values())[:_MOST_TASKS] if isinstance(tasks, dict) else ():
        line = _get(task, "command")
        if _get(task, "runAtStart") is True and isinstance(line, str):
            yield line


def _replit(text: str) -> Iterator[str]:
    """Replit's ``.replit`` (TOML): ``onBoot``, run as the Repl boots (a
    shell line or an argv); ``run`` waits for the Run button."""
    try:
        data = tomllib.loads(text)
    except (ValueError, RecursionError):
        return
    line = _line(_get(data, "onBoot"), None)
    if line is not None:
        yield line


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


def _shell_startup(text: str) -> tuple[list[str], list[str]]:
    """A home's shell startup file (``.bashrc``, ``.zshrc``, ``.profile``...):
    each line a command the shell runs as it starts (what it sources, read
    in turn: ``[ -f ~/.fzf.bash ] && source ~/.fzf.bash``), named from the
    folder holding it, which ``~`` and ``$HOME`` are; a variable it sets
    plainly (``export ZSH="$HOME/.oh-my-zsh"``) put in the lines after it;
    the folders inside it that a ``PATH`` assignment names: places, whole
    (a program there runs in place of the user's)."""
    variables: dict[str, str] = {}
    lines: list[str] = []
    places: list[str] = []
    for raw in text.splitlines():
        if raw.lstrip().startswith("#"):
            continue
        line = _HOME_WORD.sub(".", raw)
        if "$" in line and variables:
            line = _SHELL_VARIABLE.sub(
                lambda found: variables.get(found.group(1), found.group()), line)
        assigned = _ASSIGNMENT.match(line)
        if assigned is not None:
            name, value = assigned.group(1), assigned.group(2).strip("\"'")
            if name == "PATH":
                places += [part for part in value.split(":") if part.startswith("./")]
            else:
                variables[name] = value
        lines.append(line)
    return lines, places


# `~` or `$HOME` starting a path, at a word's start (a quote, `=`, `:` before it)
_HOME_WORD = re.compile(r"""(?:(?<=^)|(?<=[\s=:"'(]))(?:~|\$HOME\b|\$\{HOME\})(?=/)""",
                        re.MULTILINE)
_SHELL_VARIABLE = re.compile(r"\$\{?([A-Za-z_][A-Za-z0-9_]*)\}?")
_ASSIGNMENT = re.compile(r"^\s*(?:export\s+)?([A-Za-z_][A-Za-z0-9_]*)=(\S*)")


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
    tools = _get(data, "tools")
    for value in tools.values() if isinstance(tools, dict) else ():
        for item in value if isinstance(value, list) else [value]:
            places += _tool_paths([_get(item, "version") if isinstance(item, dict) else item])
    return lines, places


def _tool_paths(versions: list[Any]) -> list[str]:
    """The installations a tool's versions name by path (mise's
    ``path:./tools/py``, in ``.tool-versions`` or ``[tools]``): mise puts
    their ``bin/`` first on ``PATH``, so a program there runs for the tool."""
    return [version[5:] for version in versions
            if isinstance(version, str) and version.startswith("path:") and version[5:]]


def _interpreter_places(line: str) -> list[str]:
    """The interpreter a ``.python-version`` line names by its path (uv
    takes a path there as the interpreter its venvs and ``uv run`` run),
    with the installation holding it (``x/bin/python3``: ``x``, whose
    ``lib/`` it loads its standard library from); a version names none."""
    if "/" not in line:
        return []
    above, _, _ = line.rstrip("/").rpartition("/")
    folder, _, last = above.rpartition("/")
    return [line, folder] if last == "bin" and folder else [line]


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


def _copilot_hooks(data: Any) -> Iterator[str]:
    """GitHub Copilot CLI's hooks (``.github/hooks/*.json``, loaded from the
    working directory): each command hook's ``bash`` line, run from its
    ``cwd`` (relative to the repository's top) when it gives one."""
    events = _get(data, "hooks")
    for entries in events.values() if isinstance(events, dict) else ():
        for hook in entries if isinstance(entries, list) else ():
            line = _get(hook, "bash")
            if not isinstance(line, str):
                line = _line(_get(hook, "command"), None)
            if line is None:
                continue
            cwd = _get(hook, "cwd")
            if isinstance(cwd, str) and cwd.strip() not in ("", "."):
                yield f"cd {shlex.quote(cwd)} && {line}"
            else:
                yield line


# a JetBrains file watcher: <TaskOptions> blocks of <option name=".." value=".."/>
_OPTION = re.compile(r'<option\s+name="(program|arguments|workingDir)"\s+value="([^"]*)"')
_IDE_PROJECT = re.compile(r"\$(?:ProjectFileDir|PROJECT_DIR|ContentRoot)\$")


def _file_watchers(text: str) -> Iterator[str]:
    """A JetBrains IDE's file watchers (``.idea/watcherTasks.xml``): each
    watcher's ``program`` (with its ``arguments``) runs when a file it
    watches changes, from its working directory (the project's by default).
    A watcher turned off is read too: one click turns it on."""
    for piece in text.split("<TaskOptions")[1:_MOST_TASKS + 1]:
        block = piece.partition("</TaskOptions>")[0]
        options = {key: html.unescape(value) for key, value in _OPTION.findall(block)}
        program = _IDE_PROJECT.sub(".", options.get("program", "")).strip()
        if not program:
            continue
        line = shlex.quote(program)
        arguments = _IDE_PROJECT.sub(".", options.get("arguments", ""))
        if arguments.strip():
            line += f" {arguments}"
        directory = _IDE_PROJECT.sub(".", options.get("workingDir", "")).strip()
        if directory and directory != "." and "$" not in directory:
            line = f"cd {shlex.quote(directory)} && {line}"
        yield line


def _helix(text: str) -> Iterator[str]:
    """Helix's ``.helix/languages.toml``, merged over the user's when a file
    of the project opens: each ``[language-server.x]`` it starts (its
    ``command`` and ``args``), and each language's ``formatter`` (run on
    save with ``auto-format``) and older inline ``language-server``.  A
    ``debugger`` runs only when the user asks."""
    try:
        data = tomllib.loads(text)
    except (ValueError, RecursionError):
        return
    servers = _get(data, "language-server")
    for server in servers.values() if isinstance(servers, dict) else ():
        line = _line(_get(server, "command"), _get(server, "args"))
        if line is not None:
            yield line
    languages = _get(data, "language")
    for language in languages if isinstance(languages, list) else ():
        for key in ("formatter", "language-server"):
            part = _get(language, key)
            line = _line(_get(part, "command"), _get(part, "args"))
            if line is not None:
                yield line


# VS Code settings naming a program by their last word (folded): an
# interpreter, git, a linter's or language server's executable, a module
# loaded into the editor (``prettier.prettierPath``, ``typescript.tsdk``)
_PROGRAM_KEYS = re.compile(r"^(?:path|runtime|tsdk)$|(?:executable|interpreter|executablepath|"
                           r"interpreterpath|serverpath|binpath|binarypath|exepath|toolpath|"
                           r"commandpath|pytestpath|prettierpath|nodepath)$")
# settings run only when the user asks (a debugged program, as launch.json's)
_ASKED_KEYS = frozenset({"launch"})
# settings holding a shell line run for the user (a test runner's command)
_COMMAND_KEYS = re.compile(r"(command|commandline)$")
_VARIABLE = re.compile(r"\$\{[^}]*\}")


def _vscode_settings(data: Any) -> tuple[list[str], list[str], list[str]]:
    """The programs VS Code's settings name (``python.defaultInterpreterPath``,
    ``git.path``, ``*.executablePath``, ``rust-analyzer.server.path``,
    ``ruff.interpreter``, ``typescript.tsdk``...: a folder named so too),
    each run by the editor or an extension as the workspace opens or a
    file is saved, and the terminal's: each profile's ``path``, the legacy
    ``terminal.integrated.shell.*``; the directories
    ``terminal.integrated.env.*`` puts on ``PATH`` (places); and the files
    every other setting names, at any depth of its value (files): an
    extension runs or loads them under keys of its own choosing
    (``C_Cpp.clang_format_path``, ``go.alternateTools``, an ESLint
    ``overrideConfigFile``), which no list of names can hold, while a
    folder named so (stubs, an import path) runs nothing; a name nothing
    holds yet cannot be told a folder from a program, and is protected.
    A language's block (``"[python]": {...}``) is read as the top's;
    ``launch`` (a debugged program) runs only when the user asks."""
    lines: list[str] = []
    places: list[str] = []
    files: list[str] = []
    if not isinstance(data, dict):
        return lines, places, files
    blocks = [data] + [value for key, value in data.items()
                       if key.startswith("[") and isinstance(value, dict)]
    for block in blocks:
        for key, value in block.items():
            if not isinstance(key, str) or key.startswith("["):
                continue
            folded = key.lower()
            if folded.startswith("terminal.integrated."):
                _terminal(folded, value, lines, places)
                continue
            last = folded.rpartition(".")[2]
            if _COMMAND_KEYS.search(last):
                lines += _strings(value)
            elif _PROGRAM_KEYS.search(last):
                lines += [shlex.quote(item) for item in _strings(value)]
            elif folded not in _ASKED_KEYS:
                files += [path for text in _texts(value) for path in _path_words(text)]
    return lines, places, files[:_MOST_TASKS]


def _texts(value: Any, depth: int = 0) -> Iterator[str]:
    """The strings of a setting's value, in its lists and objects too (bounded)."""
    if isinstance(value, str):
        yield value
    elif depth < 8 and isinstance(value, (list, dict)):
        items = value.values() if isinstance(value, dict) else value
        for item in list(items)[:_MOST_TASKS]:
            yield from _texts(item, depth + 1)


_PATTERN_CHARACTERS = frozenset("*?[]{}")


def _path_words(text: str, bare: bool = False) -> list[str]:
    """The words of a config's value that name a path (relative to the
    project or absolute), the project's variables spelled ``.``: a word
    holding a ``/`` (``bare``: any word, where the key says it names a
    file), neither an option, a URL, a pattern nor a path through another
    variable."""
    spelled = _IDE_PROJECT.sub(".", _project_spelled(text)).strip()
    if not spelled or "\n" in spelled:
        return []
    words = [spelled]
    if any(character.isspace() for character in spelled):
        try:
            words = shlex.split(spelled)
        except ValueError:
            words = spelled.split()
    return [word for word in words
            if (bare or "/" in word) and not word.startswith(("-", "~")) and "$" not in word
            and "://" not in word and _PATTERN_CHARACTERS.isdisjoint(word)]


# a JetBrains run configuration's element: its attributes (an option is a
# name and a value); a key naming a file, its working directory
_TAG = re.compile(r"<[\w.:-]+((?:\s+[\w.:-]+\s*=\s*\"[^\"]*\")*)\s*/?>")
_ATTRIBUTE = re.compile(r'([\w.:-]+)\s*=\s*"([^"]*)"')
_FILE_KEY = re.compile(r"path|file|script|program|interpreter|executable|home", re.I)
_ARGUMENTS_KEY = re.compile(r"option|param|arg", re.I)  # words, a path among them has a /
_WORKING_KEY = re.compile(r"working.?dir", re.I)
_SCRIPT_TEXT_KEYS = frozenset({"SCRIPT_TEXT"})


def _run_configurations(text: str, *, whole: bool) -> tuple[list[str], list[str]]:
    """A JetBrains IDE's run configurations (a file of
    ``.idea/runConfigurations`` or ``.run``; ``whole=False``: those of
    ``.idea/workspace.xml``'s ``RunManager``, the rest of it is the IDE's
    memory of the user's work): ``(lines, files)``.  A configuration runs
    when the user asks, and each time the project opens once it is a
    startup task (``.idea/startup.xml`` names it: one click): its inline
    script's lines, and every file its options and attributes name (a
    script, an interpreter, a Python or Node file, a makefile, an SDK's
    program), taken from the project and from its working directory."""
    if not whole:
        text = text.partition('<component name="RunManager"')[2].partition("</component>")[0]
    lines: list[str] = []
    files: list[str] = []
    for piece in text.split("<configuration")[1:_MOST_TASKS + 1]:
        block = "<configuration" + piece.partition("</configuration>")[0]
        named: list[tuple[str, str]] = []
        working = ""
        for tag in _TAG.finditer(block):
            attributes = {key: html.unescape(value)
                          for key, value in _ATTRIBUTE.findall(tag.group(1))}
            if "name" in attributes and "value" in attributes:  # an <option name= value=>
                pairs = [(attributes["name"], attributes["value"])]
            else:
                pairs = [(key, value) for key, value in attributes.items() if key != "name"]
            for key, value in pairs:
                if key in _SCRIPT_TEXT_KEYS:
                    lines += value.splitlines()
                elif _WORKING_KEY.search(key):
                    working = _IDE_PROJECT.sub(".", value).strip()
                else:
                    named.append((key, value))
        for key, value in named:
            bare = bool(_FILE_KEY.search(key)) and not _ARGUMENTS_KEY.search(key)
            for word in _path_words(value, bare=bare):
                files.append(word)
                if working not in ("", ".", "./") and "$" not in working \
                        and not word.startswith(("/", "./")):
                    files.append(f"{working.rstrip('/')}/{word}")
    return lines, files[:_MOST_TASKS]


# Helix's typable commands that run their arguments as a shell command,
# and the expansion that runs one inside any command's arguments
_HELIX_SHELL_COMMANDS = frozenset({"run-shell-command", "sh", "!", "insert-output",
                                   "append-output", "pipe", "pipe-to"})
_HELIX_EXPANSION = re.compile(r"%sh\{([^}]*)\}")


def _helix_config(text: str) -> Iterator[str]:
    """Helix's ``.helix/config.toml``: the shell every shell command runs
    in (``[editor] shell``), and the shell commands its keys are bound to
    (``:sh``, ``:insert-output``, ``:pipe``..., ``%sh{...}`` in any
    command), each run at a key the user presses for what it did before."""
    try:
        data = tomllib.loads(text)
    except (ValueError, RecursionError):
        return
    shell = _get(_get(data, "editor"), "shell")
    if isinstance(shell, list) and shell and isinstance(shell[0], str) and shell[0].strip():
        yield shlex.quote(shell[0])
    for binding in _texts(_get(data, "keys")):
        yield from _HELIX_EXPANSION.findall(binding)
        if binding.startswith(":"):
            command, _, rest = binding[1:].strip().partition(" ")
            if command in _HELIX_SHELL_COMMANDS and rest.strip():
                yield rest


def _terminal(key: str, value: Any, lines: list[str], places: list[str]) -> None:
    """A ``terminal.integrated.*`` setting: a profile's ``path`` (a string or
    the first of a list that exists) runs as the shell of every new
    terminal; ``env.*``'s ``PATH`` entries come first on its ``PATH``."""
    if key.startswith(("terminal.integrated.shell.", "terminal.integrated.automationshell.")):
        lines += [shlex.quote(item) for item in _strings(value)]
    elif key.startswith(("terminal.integrated.profiles.",
                         "terminal.integrated.automationprofile.")):
        profiles = value.values() if key.startswith("terminal.integrated.profiles.") \
            and isinstance(value, dict) else [value]
        for profile in profiles:
            lines += [shlex.quote(item) for item in _strings(_get(profile, "path"))]
    elif key.startswith("terminal.integrated.env.") and isinstance(value, dict):
        for name, entries in value.items():
            if name.upper() == "PATH" and isinstance(entries, str):
                spelled = _VARIABLE.sub("$", _project_spelled(entries))  # ${env:PATH}
                places += [entry for entry in spelled.split(":") if entry and "$" not in entry]


def _strings(value: Any) -> list[str]:
    """A setting's string, or the strings of its list (``git.path`` takes both)."""
    if isinstance(value, str):
        return [value] if value.strip() else []
    if isinstance(value, list):
        return [item for item in value[:_MOST_TASKS] if isinstance(item, str) and item.strip()]
    return []


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
_USES = {"nix": ["shell.nix", "default.nix"], "flake": ["flake.nix", "flake.lock"],
         # environment managers: devenv.nix's enterShell, devbox.json's init_hook,
         # the on-activate hook of flox's manifest run at each cd
         **{manager: [place.rstrip("/") for place in places]
            for manager, places in ENVIRONMENT_MANAGERS.items()}}


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


def _codex(text: str) -> Iterator[str]:
    """Codex's ``.codex/config.toml``: each MCP server it starts
    (``[mcp_servers.x]``'s ``command`` and ``args``), and ``notify``, run
    as each turn ends."""
    try:
        data = tomllib.loads(text)
    except (ValueError, RecursionError):
        return
    yield from _commands_in(_get(data, "mcp_servers"))
    line = _line(_get(data, "notify"), None)
    if line is not None:
        yield line


def _zed(data: Any) -> Iterator[str]:
    """Zed's ``.zed/settings.json``: each context (MCP) server it starts
    (``command`` a string with ``args``, or ``{path, args}``), each
    language server's ``binary`` (``path`` and ``arguments``), and the
    terminal's shell ``program``."""
    servers = _get(data, "context_servers")
    for server in servers.values() if isinstance(servers, dict) else ():
        command = _get(server, "command")
        line = _line(_get(command, "path"), _get(command, "args")) \
            if isinstance(command, dict) else _line(command, _get(server, "args"))
        if line is not None:
            yield line
    languages = _get(data, "lsp")
    for language in languages.values() if isinstance(languages, dict) else ():
        binary = _get(language, "binary")
        line = _line(_get(binary, "path"), _get(binary, "arguments"))
        if line is not None:
            yield line
    shell = _get(_get(data, "terminal"), "shell")
    for program in (_get(shell, "program"), _get(_get(shell, "with_arguments"), "program")):
        line = _line(program, None)
        if line is not None:
            yield line


_LANGUAGE_PREFIX = re.compile(r"^[\w+#.-]+:\s+")


def _aider(data: Any) -> Iterator[str]:
    """aider's ``.aider.conf.yml``: its ``lint-cmd`` (``"python: cmd"``,
    one language's linter) and ``test-cmd``, run after each edit it
    makes, given as one value or a list."""
    for key in ("lint-cmd", "test-cmd"):
        for given in _strings(_get(data, key)):
            command = given.strip()
            if key == "lint-cmd":
                command = _LANGUAGE_PREFIX.sub("", command, count=1)
            if command:
                yield command


def _lint_staged(data: Any) -> Iterator[str]:
    """lint-staged's config (JSON): each glob's command or list of
    commands, run on the staged files at each commit (husky's usual hook)."""
    for value in data.values() if isinstance(data, dict) else ():
        yield from _strings(value)


# -- the user's own tool configs ------------------------------------------------------

# .npmrc keys naming a program npm (or pnpm) runs, and a file it loads
_NPM_PROGRAMS = frozenset({"script-shell", "git", "shell", "editor", "browser", "viewer"})
_NPM_FILES = frozenset({"pnpmfile", "global-pnpmfile", "onload-script"})


def _npmrc(text: str) -> tuple[list[str], list[str]]:
    """npm's ``.npmrc`` (``key=value`` lines): ``script-shell`` runs every
    ``npm run`` and ``npx``, ``git`` every git dependency's fetch,
    ``node-options`` is given to each node npm starts (``--require
    ./x.js``), ``pnpmfile`` names pnpm's hooks."""
    lines: list[str] = []
    files: list[str] = []
    for raw in text.splitlines()[:_MOST_TASKS]:
        line = raw.strip()
        if not line or line.startswith(("#", ";")):
            continue
        key, equals, value = line.partition("=")
        key, value = key.strip().lower(), value.strip().strip("\"'")
        if not equals or not value or "${" in value:
            continue
        if key in _NPM_PROGRAMS:
            lines.append(shlex.quote(value))
        elif key == "node-options":
            lines.append(f"node {value}")
        elif key in _NPM_FILES:
            files.append(value)
    return lines, files


def _yarnrc(text: str) -> tuple[list[str], list[str]]:
    """yarn 1's ``.yarnrc``: ``yarn-path`` is a JS file run as yarn itself."""
    files: list[str] = []
    for line in text.splitlines()[:_MOST_TASKS]:
        try:
            words = shlex.split(line, comments=True)
        except ValueError:
            continue
        if len(words) >= 2 and words[0] in ("yarn-path", "--yarn-path"):
            files.append(words[1])
    return [], files


def _yarnrc_yml(text: str) -> tuple[list[str], list[str]]:
    """yarn's ``.yarnrc.yml``: ``yarnPath`` (run as yarn itself at every
    command) and each of ``plugins`` (a path, or a table's ``path``:
    loaded at every command)."""
    data = load_yaml(text)
    files = [path for path in [_get(data, "yarnPath")] if isinstance(path, str)]
    plugins = _get(data, "plugins")
    for plugin in plugins[:_MOST_TASKS] if isinstance(plugins, list) else []:
        path = _get(plugin, "path") if isinstance(plugin, dict) else plugin
        if isinstance(path, str):
            files.append(path)
    return [], files


# pnpm-workspace.yaml's keys (pnpm 10 and 11: .npmrc's settings, camelCased)
_PNPM_PROGRAMS = ("scriptShell", "git", "shell", "editor", "browser", "viewer")
_PNPM_FILES = ("pnpmfile", "globalPnpmfile")


def _pnpm_workspace(text: str) -> tuple[list[str], list[str]]:
    """pnpm's ``pnpm-workspace.yaml``: the settings ``.npmrc`` held before
    (pnpm 11 reads only auth and registries there): ``scriptShell`` runs
    every ``pnpm run`` and ``pnpm dlx``, ``nodeOptions`` is given to each
    node pnpm starts, ``pnpmfile`` (one or a list) names install hooks."""
    data = load_yaml(text)
    lines = [shlex.quote(value) for key in _PNPM_PROGRAMS
             if isinstance(value := _get(data, key), str) and value.strip()]
    options = _get(data, "nodeOptions")
    if isinstance(options, str) and options.strip():
        lines.append(f"node {options}")
    files = [path for key in _PNPM_FILES for path in _strings(_get(data, key))]
    return lines, files


def _dotnet_sdk_paths(data: Any) -> list[str]:
    """.NET's ``global.json``: the folders its ``sdk.paths`` name (.NET 10;
    relative to it, ``$host$`` the machine's own install), where every
    ``dotnet`` command below takes its SDK from, first match wins."""
    return [path for path in _strings(_get(_get(data, "sdk"), "paths"))
            if path.strip() != "$host$"]


def _bunfig(text: str) -> tuple[list[str], list[str]]:
    """bun's ``bunfig.toml``: the ``preload`` scripts run before each
    script (``[run]`` and ``[test]`` have their own)."""
    try:
        data = tomllib.loads(text)
    except (ValueError, RecursionError):
        return [], []
    files: list[str] = []
    for table in (data, _get(data, "run"), _get(data, "test"), _get(data, "serve")):
        files += _strings(_get(table, "preload"))
    return [], files


# cargo's [build] keys naming a program run for each crate compiled
_CARGO_BUILD_PROGRAMS = ("rustc", "rustc-wrapper", "rustc-workspace-wrapper", "rustdoc")


def _cargo(text: str) -> tuple[list[str], list[str]]:
    """cargo's ``.cargo/config.toml``: ``[build]`` ``rustc``,
    ``rustc-wrapper``..., run for each crate; a target's ``runner`` (a
    string or a list: program and arguments; ``cargo run`` and ``cargo
    test`` run through it) and ``linker``; from the directory holding
    ``.cargo``."""
    try:
        data = tomllib.loads(text)
    except (ValueError, RecursionError):
        return [], []
    lines: list[str] = []
    build = _get(data, "build")
    lines += [shlex.quote(value) for key in _CARGO_BUILD_PROGRAMS
              if isinstance(value := _get(build, key), str) and value.strip()]
    targets = _get(data, "target")
    for target in list(targets.values())[:_MOST_TASKS] if isinstance(targets, dict) else []:
        for key in ("runner", "linker"):
            line = _line(_get(target, key), None)
            if line is not None and line.strip():
                lines.append(line)
    return lines, []


_TOOL_CONFIGS = {
    ".npmrc": _npmrc, ".yarnrc": _yarnrc, ".yarnrc.yml": _yarnrc_yml, "bunfig.toml": _bunfig,
    ".bunfig.toml": _bunfig, ".cargo/config.toml": _cargo, ".cargo/config": _cargo,
    "pnpm-workspace.yaml": _pnpm_workspace,
}
