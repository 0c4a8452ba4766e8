"""Git config files read as git reads them, and the programs they name.

:func:`entries` parses a config file's text the way git's own parser does
(sections and subsections, ``[section.sub]`` of old, keys after a section
header on its line, quotes, the ``\\"`` ``\\\\`` ``\\t`` ``\\n`` ``\\b``
escapes, backslash-newline continuation, ``#``/``;`` comments, CRLF, a
byte-order mark): section and key names folded, a subsection as written.
Text git would reject is read on as well as can be (git then refuses to
run at all, so reading more can only protect more).

:func:`program_paths` gives, for one entry, the paths a program git runs
from it may be named by: the whole value where git runs it as one
program, and, where git hands it to the shell, each word that names a path
(holds a ``/``, or is an argument such as ``sh fsmon.sh`` reads, or follows
``$(git rev-parse --show-toplevel)``-like expansions).  A bare program
name (a command word without a ``/``) is looked up on ``PATH`` and never
named; neither is ``~``.
"""

from __future__ import annotations

from collections.abc import Iterator
import re
import tomllib
from typing import Any, NamedTuple

from .pythonstart import imported_modules
from .yamlish import load as load_yaml

__all__ = ["ENVIRONMENT_MANAGERS", "Entry", "entries", "ProgramPath", "program_paths",
           "TASK_CONFIG_KINDS", "recipe_loads",
           "command_paths", "PROGRAM_KEYS", "entered_directories", "from_directories",
           "JUSTFILES", "TASKFILES", "RECIPE_FILES", "recipe_commands"]

# (section, key) -> how git runs the value; a section listed with key "*"
# takes every key.  Subsections are not looked at: ``gpg.program`` and
# ``gpg.ssh.program``, ``credential.helper`` and ``credential.<url>.helper``,
# ``filter.<driver>.clean`` all count.
_COMMAND = "command"        # run by the shell (or as one program)
_FSMONITOR = "fsmonitor"    # a boolean, or a command
_PAGER = "pager"            # pager.<cmd>: a boolean, or a command
_CREDENTIAL = "credential"  # "!cmd": the shell; "/path": a program; else git credential-<name>
_ALIAS = "alias"            # "!cmd": the shell; else a git command
_BANG = "bang"              # submodule.<name>.update: "!cmd" runs; else a mode
PROGRAM_KEYS: dict[tuple[str, str], str] = {
    ("core", "fsmonitor"): _FSMONITOR,
    ("core", "sshcommand"): _COMMAND,
    ("core", "editor"): _COMMAND,
    ("core", "pager"): _COMMAND,
    ("core", "askpass"): _COMMAND,
    ("core", "gitproxy"): _COMMAND,
    ("core", "alternaterefscommand"): _COMMAND,
    ("sequence", "editor"): _COMMAND,
    ("diff", "external"): _COMMAND,
    ("diff", "textconv"): _COMMAND,
    ("diff", "command"): _COMMAND,
    ("merge", "driver"): _COMMAND,
    ("filter", "clean"): _COMMAND,
    ("filter", "smudge"): _COMMAND,
    ("filter", "process"): _COMMAND,
    ("gpg", "program"): _COMMAND,
    ("gpg", "defaultkeycommand"): _COMMAND,
    ("credential", "helper"): _CREDENTIAL,
    ("alias", "*"): _ALIAS,
    ("pager", "*"): _PAGER,
    ("interactive", "difffilter"): _COMMAND,
    ("difftool", "cmd"): _COMMAND,
    ("difftool", "path"): _COMMAND,
    ("mergetool", "cmd"): _COMMAND,
    ("mergetool", "path"): _COMMAND,
    ("man", "cmd"): _COMMAND,
    ("man", "path"): _COMMAND,
    ("browser", "cmd"): _COMMAND,
    ("browser", "path"): _COMMAND,
    ("trailer", "command"): _COMMAND,
    ("trailer", "cmd"): _COMMAND,
    ("remote", "uploadpack"): _COMMAND,
    ("remote", "receivepack"): _COMMAND,
    ("sendemail", "sendmailcmd"): _COMMAND,
    ("submodule", "update"): _BANG,
}
_BOOLEANS = {"true", "false", "yes", "no", "on", "off", "1", "0", ""}
_OPERATORS = set(";&|()\n")  # each starts a new command: the next word is a program
_REDIRECTS = set("<>")


class Entry(NamedTuple):
    section: str            # folded
    subsection: str         # as written ("": none); folded for [section.sub]
    key: str                # folded
    value: str | None       # None: the key alone (a boolean true)


def entries(text: str) -> Iterator[tuple[str, str, str, str | None]]:
    """``(section, subsection, key, value)`` of each entry of a config file's
    text, as git reads it (see the module doc)."""
    for entry in _Parser(text).entries():
        yield entry.section, entry.subsection, entry.key, entry.value


class ProgramPath(NamedTuple):
    """A path a program git runs from a config entry may be named by."""

    path: str
    file_only: bool  # an argument: it names a file git's program reads, never a directory
    # a Python program (a script, a module run by -m or imported by -c): its
    # directory is first on sys.path, so what it imports from there runs too
    python: bool = False
    # a file a recipe file loads as recipes of its own (a justfile's import,
    # a Taskfile's includes, a makefile's include): the name of its kind,
    # whatever its own name (``ci.just`` is read as a ``justfile``)
    recipes: str = ""


def program_paths(section: str, key: str, value: str | None) -> list[ProgramPath]:
    """The paths a program git runs from this entry may be named by: the
    value run as one program, each word of a shell command with a ``/``,
    and each bare argument (``sh fsmon.sh``).  An argument of git's own
    commands (``!git -C sub status``, ``git-lfs clean``) names a
    subcommand, a ref or a directory to work in, never a program: only a
    file there counts.  Empty for an entry that runs nothing, or only
    programs found on ``PATH``."""
    how = PROGRAM_KEYS.get((section, key)) or PROGRAM_KEYS.get((section, "*"))
    if how is None or value is None:
        return []
    value = value.strip()
    if how in (_FSMONITOR, _PAGER) and value.lower() in _BOOLEANS:
        return []
    if how in (_ALIAS, _BANG):
        if not value.startswith("!"):
            return []
        value = value[1:]
    elif how == _CREDENTIAL:
        if value.startswith("!"):
            value = value[1:]
        elif not _names_path(value.split(None, 1)[0] if value else ""):
            value = "git credential-" + value  # what git runs for a helper's name
    found: list[ProgramPath] = []
    if _names_path(value):
        found.append(ProgramPath(value, False))  # run as one program (gpg.program: no shell)
    found.extend(command_paths(value))
    return list(dict.fromkeys(found))


_DIRECTORY_CHANGES = {"cd", "pushd"}
_MAKE_FOLDER = frozenset({"-C", "--directory"})
# a program's options naming the folder it works in, reading its recipes and
# configs from there (``npm --prefix web``, ``uv run --directory api poe``);
# tox's -c takes a folder as well as a file (its configs there are read)
_FOLDER_OPTIONS: dict[str, frozenset[str]] = {
    "make": _MAKE_FOLDER, "gmake": _MAKE_FOLDER, "bmake": _MAKE_FOLDER, "rake": _MAKE_FOLDER,
    "task": frozenset({"-d", "--dir"}), "tox": frozenset({"-c", "--conf"}),
    "invoke": frozenset({"-r", "--search-root"}), "inv": frozenset({"-r", "--search-root"}),
    "npm": frozenset({"--prefix", "-w", "--workspace"}), "pnpm": frozenset({"-C", "--dir"}),
    "yarn": frozenset({"--cwd"}), "bun": frozenset({"--cwd"}),
    "poe": frozenset({"-C", "--directory", "--root"}),
    "uv": frozenset({"--directory", "--project"}),
    "hatch": frozenset({"-p", "--project"}), "pdm": frozenset({"-p", "--project"}),
    "cargo": frozenset({"--cwd"}), "makers": frozenset({"--cwd"}),
}
# a runner's options naming the recipe file it reads, and the kind it is read
# as (a word after the option is a bare argument already: the glued and
# ``=`` spellings are read here); invoke's collection is a module's name
_FILE_OPTIONS: dict[str, tuple[frozenset[str], str]] = {
    "make": (frozenset({"-f", "--file", "--makefile"}), "Makefile"),
    "just": (frozenset({"-f", "--justfile"}), "justfile"),
    "task": (frozenset({"-t", "--taskfile"}), "Taskfile.yml"),
    "nox": (frozenset({"-f", "--noxfile"}), ""), "tox": (frozenset({"-c", "--conf"}), ""),
    "rake": (frozenset({"-f", "--rakefile"}), ""),
    "cargo": (frozenset({"--makefile"}), ""), "makers": (frozenset({"--makefile"}), ""),
}
_FILE_OPTIONS["gmake"] = _FILE_OPTIONS["bmake"] = _FILE_OPTIONS["make"]
_COLLECTION_OPTIONS = frozenset({"-c", "--collection"})


def _option_value(options: frozenset[str], before: str, text: str) -> str | None:
    """The value the word ``text`` (``before`` the word ahead of it) gives
    one of ``options``: the word after the option, ``--name=value``, or a
    short option's glued ``-Xvalue``."""
    if before in options and text and not text.startswith("-"):
        return text
    name, equals, value = text.partition("=")
    if equals and name.startswith("--") and name in options:
        return value
    if len(text) > 2 and text[0] == "-" and text[1] != "-" and text[:2] in options:
        return text[2:].removeprefix("=")
    return None


def _relative_folder(text: str) -> bool:
    return (bool(text) and text[0] not in "-/~$" and text not in (".", "..")
            and not text.startswith("../"))


def entered_directories(command: str) -> list[str]:
    """The directories ``command`` enters (``cd tools``, ``pushd web``), or
    a program of it is told to work in (``make -C web``, ``npm --prefix
    web``, ``uv run --directory api``: :data:`_FOLDER_OPTIONS`), relative
    ones only: what it runs afterwards is named from there."""
    entered: list[str] = []
    words = _words(command)
    for at, word in enumerate(words):
        if word.command:
            continue
        if word.program in _DIRECTORY_CHANGES:
            folder: str | None = word.text
        else:
            options = _FOLDER_OPTIONS.get(word.program)
            folder = _option_value(options, words[at - 1].text, word.text) if options else None
        if folder is not None and _relative_folder(folder):
            entered.append(folder.rstrip("/"))
    return list(dict.fromkeys(entered))


def _option_files(word: _Word, before: str) -> list[ProgramPath]:
    """The recipe file a runner's option of ``word`` names (``make
    --file=ci.mk``, ``-fci.mk``), read as its kind; invoke's ``-c name``:
    the module ``name.py`` or package ``name/`` it imports."""
    named = _FILE_OPTIONS.get(word.program)
    value = _option_value(named[0], before, word.text) if named else None
    if named and value:
        return [ProgramPath(value, True, recipes=named[1])]
    if word.program in ("invoke", "inv"):
        module = _option_value(_COLLECTION_OPTIONS, before, word.text)
        if module and module.isidentifier():
            return [ProgramPath(f"{module}.py", True, True), ProgramPath(module, False)]
    return []


def from_directories(found: list[ProgramPath], entered: list[str]) -> list[ProgramPath]:
    """``found`` as named from the top and as named from each directory in
    ``entered`` (a relative path only)."""
    if not entered:
        return found
    moved = [path._replace(path=f"{directory}/{path.path}") for path in found
             if not path.path.startswith(("/", "~")) for directory in entered]
    return list(dict.fromkeys([*found, *moved]))


def command_paths(command: str, depth: int = 2) -> list[ProgramPath]:
    """:func:`program_paths`' reading of a shell command (see
    :func:`_command_paths`), what runs after a ``cd`` named from there too."""
    return from_directories(_command_paths(command, depth), entered_directories(command))


def _command_paths(command: str, depth: int = 2) -> list[ProgramPath]:
    """The paths the shell command ``command`` may run, as
    :func:`program_paths` gives them for a value git hands to the shell;
    and where the command runs Python, the module ``-m`` names (or a ``-c``
    string imports) as the file and the package directory of that name:
    Python puts the working directory first on ``sys.path``.  A shell's
    ``-c`` string is read as a command of its own (``depth`` levels)."""
    found: list[ProgramPath] = []
    if depth:  # what a command substitution runs: `cmd`, $(cmd)
        for inner in _substitutions(command):
            found.extend(command_paths(inner, depth - 1))
    words = _words(command)
    python = False  # a Python program started in the command so far
    command_at = 0  # where the command of the word at hand starts
    script_due = False  # Python's script is its first word past the options
    node_due = False  # so is Node's, a name it resolves
    for at, word in enumerate(words):
        gits = word.program.startswith("git")
        before = words[at - 1].text if at else ""
        python = python or _is_python(word.text)
        if word.command:
            script_due = _is_python(word.text)
            node_due = word.text.rpartition("/")[2] in _NODE_RUNTIMES
        elif node_due and word.program in _NODE_RUNTIMES and word.text != "run":
            if word.text in _NODE_NO_SCRIPT:
                node_due = False
            elif _is_script_word(word.text, before) and before not in _NODE_VALUE_OPTIONS:
                node_due = False
                found.extend(_node_script(word.text))
                continue
        # a program named by an expansion ("$INSTALL_PYTHON") may be Python
        found.extend(_loaded_code(word, before))
        if word.command:
            command_at = at
        if at - command_at <= _MOST_LAUNCH_WORDS:  # a launcher's few (`uv tool run --with x tox`)
            found.extend(_recipes_read(words, command_at, at))
        if not word.command and (python or not word.program):
            modules = _python_modules(before, word.text)
            found.extend(path for module in modules
                         for path in _recipe_paths(_RECIPE_READERS.get(module, ())))
            found.extend(path for module in modules
                         for path in (ProgramPath(f"{module}.py", True, True),
                                      ProgramPath(module, False)))
            if modules or _PYTHON_RUN.match(word.text):
                script_due = False  # -m or -c: no script follows
            if modules:
                continue
            if script_due and _is_python(word.program) and _is_script_word(word.text, before):
                # any name (scripts/check, a directory's __main__.py), not only *.py
                script_due = False
                found.append(ProgramPath(word.text.rstrip("/") or word.text, True, True))
                continue
            if python and word.text.endswith(".py") and not before.startswith("-"):
                found.append(ProgramPath(word.text, True, True))
                continue
        if (not word.command and depth and word.program in _SHELLS
                and _SHELL_STRING.match(before)):
            found.extend(command_paths(word.text, depth - 1))
            continue
        if not word.command and not gits:
            found.extend(_option_files(word, before))
        if _names_path(word.text):
            # an argument names a file a program reads, never a directory it works on
            if word.command or not word.text.endswith("/"):
                found.append(ProgramPath(word.text, gits or not word.command))
        elif not word.command and not gits and _is_bare_argument(word.text):
            found.append(ProgramPath(word.text, True))
        name, equals, value = word.text.partition("=")
        if (depth and equals and not word.command and not gits and "/" not in name
                and _names_path(value)):  # -o ProxyCommand=./proxy.sh: the value runs
            found.extend(command_paths(value, depth - 1))
    return found


# programs that load more code from the directory they run in (their
# configs, their modules): the names taken from the working directory
_MAKES = {"make", "gmake", "bmake"}
_MAKEFILES = ("Makefile", "makefile", "GNUmakefile")
# make's siblings: the recipes each reads from where it runs (just takes
# "justfile" in any case: each spelling named, so the recipes are read)
JUSTFILES = ("justfile", "Justfile", "JUSTFILE", ".justfile")
TASKFILES = ("Taskfile.yml", "Taskfile.yaml", "Taskfile.dist.yml", "Taskfile.dist.yaml",
             "taskfile.yml", "taskfile.yaml", "taskfile.dist.yml", "taskfile.dist.yaml")
_TASK_RUNNERS: dict[str, tuple[str, ...]] = {"just": JUSTFILES, "task": TASKFILES}
# the other task runners: what each reads from where it runs and runs a
# task of (a name ending in "/" a directory whole, a ".py" a module Python
# imports with its directory first on sys.path); tox reads the first of its
# four configs there is, and installs the project (pyproject.toml's backend)
_GRADLE_FILES = ("build.gradle", "build.gradle.kts", "settings.gradle", "settings.gradle.kts",
                 "gradle.properties", "gradle/", "buildSrc/")
_INVOKE_FILES = ("tasks.py", "tasks/", "invoke.yaml", "invoke.yml", "invoke.json", "invoke.py")
_RECIPE_READERS: dict[str, tuple[str, ...]] = {
    "tox": ("tox.ini", "tox.toml", "setup.cfg", "pyproject.toml"),
    "nox": ("noxfile.py",),
    "invoke": _INVOKE_FILES,
    "inv": _INVOKE_FILES,
    "rake": ("Rakefile", "rakefile", "Rakefile.rb", "rakefile.rb", "rakelib/"),
    "makers": ("Makefile.toml",),
    "cargo-make": ("Makefile.toml",),
    "poe": ("pyproject.toml", "poe_tasks.toml", "poe_tasks.yaml", "poe_tasks.json"),
    # the JVM's build tools: their build scripts are code, their wrappers run
    # the jar and the distribution their properties name, gradle.properties
    # and .mvn/jvm.config the JVM's options (a -javaagent)
    "gradle": _GRADLE_FILES, "gradlew": _GRADLE_FILES,
    "mvn": ("pom.xml", ".mvn/"), "mvnw": ("pom.xml", ".mvn/"),
}
# mise runs a task of [tasks] in its configs, or a file task from its
# folders (`mise run x`, `mise r x`, `mise x`: any mise command is taken)
MISE_TASK_CONFIGS = ("mise.toml", ".mise.toml", "mise.local.toml", ".mise.local.toml",
                     "mise/config.toml", ".mise/config.toml", ".config/mise.toml",
                     ".config/mise/config.toml")
_RECIPE_READERS["mise"] = (*MISE_TASK_CONFIGS, "mise-tasks/", ".mise-tasks/", "mise/tasks/",
                           ".mise/tasks/", ".config/mise/tasks/")
#: the configs read as a runner's tasks whatever their own name, by kind
TASK_CONFIG_KINDS: dict[str, str] = {**dict.fromkeys(MISE_TASK_CONFIGS, "mise.toml"),
                                     "deno.json": "deno.json", "deno.jsonc": "deno.json"}
# a program's subcommand that is a task runner of its own
_RECIPE_SUBCOMMANDS: dict[tuple[str, str], tuple[str, ...]] = {
    ("deno", "task"): ("deno.json", "deno.jsonc", "package.json"),
    ("cargo", "make"): ("Makefile.toml",),
    ("pdm", "run"): ("pyproject.toml", "pdm.toml"),
    ("hatch", "run"): ("pyproject.toml", "hatch.toml"),
}
# the words before a program another one runs for the user (`uvx tox`,
# `bundle exec rake`), options aside
_LAUNCHERS = frozenset({("uvx",), ("uv", "run"), ("uv", "tool", "run"), ("pipx", "run"),
                        ("poetry", "run"), ("pdm", "run"), ("hatch", "run"),
                        ("pipenv", "run"), ("bundle", "exec"), ("rye", "run")})
#: the names a task runner reads from where it runs: none of them is run as
#: a shell script by its name (a ``Rakefile`` is Ruby)
RECIPE_FILES = frozenset(name for names in (*_RECIPE_READERS.values(),
                                            *_RECIPE_SUBCOMMANDS.values())
                         for name in names if not name.endswith(("/", ".py")))
_NODE_RUNNERS = {"npm", "npx", "yarn", "yarnpkg", "pnpm", "pnpx", "bun", "bunx", "corepack"}
# package.json's scripts, the modules and .bin programs they run, the
# configs that name a shell or a program to run in its place
_NODE_FILES = ("package.json", ".npmrc", ".yarnrc", ".yarnrc.yml", ".pnpmfile.cjs",
               "bunfig.toml")
_NODE_DIRS = ("node_modules", ".yarn")
#: environment managers a shell hands itself to (direnv's ``use devenv``, an
#: ``eval "$(devbox shellenv --init-hook)"``): what each runs from the
#: directory it starts in (devenv.nix's enterShell, devbox.json's init_hook,
#: flox's on-activate hook), a file, or a directory (a name ending in '/')
ENVIRONMENT_MANAGERS: dict[str, tuple[str, ...]] = {
    "devenv": ("devenv.nix", "devenv.yaml", "devenv.local.nix", "devenv.local.yaml"),
    "devbox": ("devbox.json",),
    "flox": (".flox/",),
}
# the variables naming directories a language loads its modules from
_LIBRARY_VARIABLES = {"PERL5LIB", "PERLLIB", "RUBYLIB", "PYTHONPATH", "NODE_PATH"}
_INCLUDE_FLAG_PROGRAMS = re.compile(r"(perl|ruby)[0-9.]*")


def _loaded_code(word: _Word, before: str) -> list[ProgramPath]:
    """What the program of ``word``'s command loads beyond the file it
    names: a makefile, a Node project's scripts and modules, the include
    directories of ``perl -Ilib``, ``ruby -I`` and ``PERL5LIB=`` alike."""
    text = word.text
    name, equals, value = text.partition("=")
    if equals and name in _LIBRARY_VARIABLES:
        return [ProgramPath(part, False) for part in value.split(":")
                if part and part not in (".", "..") and not part.startswith("~")]
    if word.command:
        program = text.rpartition("/")[2]
        if program in _MAKES:
            return [ProgramPath(makefile, True) for makefile in _MAKEFILES]
        if program in _TASK_RUNNERS:
            return [ProgramPath(recipes, True) for recipes in _TASK_RUNNERS[program]]
        if program in _NODE_RUNNERS:
            return ([ProgramPath(config, True) for config in _NODE_FILES]
                    + [ProgramPath(directory, False) for directory in _NODE_DIRS])
        return [ProgramPath(place.rstrip("/"), not place.endswith("/"))
                for place in ENVIRONMENT_MANAGERS.get(program, ())]
    if word.program in _MAKES and before in ("-C", "--directory"):
        return [ProgramPath(f"{text.rstrip('/')}/{makefile}", True) for makefile in _MAKEFILES]
    if _INCLUDE_FLAG_PROGRAMS.fullmatch(word.program):
        if text.startswith("-I") and len(text) > 2:
            return [ProgramPath(text[2:], False)]
        if before == "-I" and text:
            return [ProgramPath(text, False)]
    return []


def _recipe_paths(names: tuple[str, ...]) -> list[ProgramPath]:
    return [ProgramPath(name.rstrip("/"), not name.endswith("/"), name.endswith(".py"),
                        TASK_CONFIG_KINDS.get(name, "")) for name in names]


_MOST_LAUNCH_WORDS = 8


def _recipes_read(words: list[_Word], start: int, at: int) -> list[ProgramPath]:
    """What a task runner that ``words[at]`` names reads from where it
    runs, its command starting at ``start``: the command's own program
    (``tox``), its subcommand (``cargo make``), or a program a launcher
    runs (``uvx tox``, ``bundle exec rake``, ``uv run poe``)."""
    word = words[at]
    if word.command:
        return _recipe_paths(_RECIPE_READERS.get(word.text.rpartition("/")[2], ()))
    if not words[start].command:
        return []
    lead = (words[start].text.rpartition("/")[2],  # options and their folders aside
            *(w.text for i, w in enumerate(words[start + 1:at], start + 1)
              if not w.text.startswith("-")
              and words[i - 1].text not in _FOLDER_OPTIONS.get(w.program, ())))
    found = _recipe_paths(_RECIPE_SUBCOMMANDS.get((lead[0], word.text), ())) \
        if len(lead) == 1 else []
    if lead in _LAUNCHERS:
        found += _recipe_paths(_RECIPE_READERS.get(word.text.rpartition("/")[2], ()))
    return found


def recipe_commands(name: str, text: str) -> list[str] | None:
    """The shell lines a justfile or a Taskfile (by its file ``name``)
    runs, or ``None`` for another file.  A justfile: each recipe's
    indented line (its ``@``/``-`` prefix dropped) and each backtick
    evaluated as it loads; a Taskfile: every ``cmds`` item, ``cmd``,
    ``sh`` (a dynamic variable's, a precondition's) and ``status`` line,
    at any depth.  A Taskfile the bounded YAML reader cannot read raises
    :class:`~.yamlish.Unread`."""
    if name in JUSTFILES:
        lines = []
        for line in text.splitlines():
            if line[:1] in (" ", "\t"):
                if line.strip():
                    lines.append(line.strip().lstrip("@-").strip())
            else:
                lines += _BACKTICK.findall(line)
        return lines
    if name in TASKFILES:
        return list(_task_lines(load_yaml(text)))
    if name == "mise.toml":
        return _mise_tasks(text)
    return None


def _mise_tasks(text: str) -> list[str]:
    """The shell lines of a mise config's ``[tasks]``: a task's line (or
    list of them), its table's ``run`` (a line or a list), its ``file``
    (a script, run as a line naming it)."""
    try:
        tasks = tomllib.loads(text).get("tasks")
    except (ValueError, RecursionError):
        return []
    lines: list[str] = []
    for task in tasks.values() if isinstance(tasks, dict) else ():
        run = task.get("run", task.get("file")) if isinstance(task, dict) else task
        lines += [line for line in (run if isinstance(run, list) else [run])
                  if isinstance(line, str)]
    return lines


_BACKTICK = re.compile(r"`([^`\n]+)`")
# a justfile's lines that load more: `import 'x'`, `mod name`, `mod name 'x'`
# (`?`: optional), the program recipes run with, the dotenv file it exports
_JUST_IMPORT = re.compile(r"""^import\??\s+(['"])(.+?)\1""")
_JUST_MOD = re.compile(r"""^mod\??\s+([A-Za-z_][A-Za-z0-9_-]*)(?:\s+(['"])(.+?)\2)?""")
_JUST_PROGRAM = re.compile(
    r"""^set\s+(?:shell|windows-shell|script-interpreter)\s*:=\s*\[\s*(['"])(.+?)\1""")
_JUST_DOTENV = re.compile(r"""^set\s+dotenv-(?:path|filename)\s*:=\s*(['"])(.+?)\1""")
# where just looks for a module's recipes: name.just, name/mod.just, name/justfile
_JUST_MODULE_FILES = ("mod.just", *JUSTFILES)


def recipe_loads(name: str, text: str) -> list[ProgramPath]:
    """What a justfile or a Taskfile (by its file ``name``) loads beyond its
    own lines, relative to its directory: the recipe files it imports (a
    justfile's ``import``, ``mod``; a Taskfile's ``includes``, a directory
    there read as the Taskfile it holds), each marked with the kind it is
    read as; the program its lines are handed to (``set shell``); the
    dotenv files whose variables (``PATH``) every recipe runs with.  A
    Taskfile the bounded YAML reader cannot read raises
    :class:`~.yamlish.Unread`."""
    found: list[ProgramPath] = []
    if name in JUSTFILES:
        for line in text.splitlines():
            imported, module = _JUST_IMPORT.match(line), _JUST_MOD.match(line)
            program, dotenv = _JUST_PROGRAM.match(line), _JUST_DOTENV.match(line)
            if imported is not None:
                found.append(ProgramPath(imported.group(2), True, recipes="justfile"))
            elif module is not None:
                place = module.group(3)
                if place is None:
                    found.append(ProgramPath(f"{module.group(1)}.just", True, recipes="justfile"))
                    place = module.group(1)
                found.append(ProgramPath(place, True, recipes="justfile"))
                found += [ProgramPath(f"{place.rstrip('/')}/{inside}", True, recipes="justfile")
                          for inside in _JUST_MODULE_FILES]
            elif program is not None and _names_path(program.group(2)):
                found.append(ProgramPath(program.group(2), True))
            elif dotenv is not None:
                found.append(ProgramPath(dotenv.group(2), True))
    elif name in TASKFILES:
        data = load_yaml(text)
        includes = data.get("includes") if isinstance(data, dict) else None
        for value in includes.values() if isinstance(includes, dict) else ():
            place = value.get("taskfile") if isinstance(value, dict) else value
            if isinstance(place, str) and place and "{{" not in place and "://" not in place:
                found.append(ProgramPath(place, True, recipes="Taskfile.yml"))
                found += [ProgramPath(f"{place.rstrip('/')}/{inside}", True,
                                      recipes="Taskfile.yml") for inside in TASKFILES]
        dotenv = data.get("dotenv") if isinstance(data, dict) else None
        found += [ProgramPath(place, True) for place in
                  (dotenv if isinstance(dotenv, list) else [])
                  if isinstance(place, str) and place and "{{" not in place]
    return found
_TASK_LINE_KEYS = ("cmd", "sh")
_TASK_LIST_KEYS = ("cmds", "status", "preconditions")


def _task_lines(value: Any, depth: int = 0) -> Iterator[str]:
    """The shell lines of a Taskfile's value (bounded by depth)."""
    if depth > 16:
        return
    if isinstance(value, dict):
        for key, item in value.items():
            if key in _TASK_LINE_KEYS and isinstance(item, str):
                yield item
            elif key in _TASK_LIST_KEYS and isinstance(item, list):
                yield from (line for line in item if isinstance(line, str))
            if isinstance(item, (dict, list)):
                yield from _task_lines(item, depth + 1)
    elif isinstance(value, list):
        for item in value:
            yield from _task_lines(item, depth + 1)


def _substitutions(command: str) -> list[str]:
    """The commands inside the command substitutions of ``command``
    (``$(...)``, nested parentheses counted, and backquotes)."""
    found: list[str] = []
    i, size = 0, len(command)
    while i < size:
        if command.startswith("$(", i):
            depth, j = 0, i + 1
            while j < size:
                if command[j] == "(":
                    depth += 1
                elif command[j] == ")":
                    depth -= 1
                    if depth == 0:
                        break
                j += 1
            found.append(command[i + 2:j])
            i = j + 1
        elif command[i] == "`":
            close = command.find("`", i + 1)
            close = size if close < 0 else close
            found.append(command[i + 1:close])
            i = close + 1
        else:
            i += 1
    return found


_SHELLS = {"sh", "bash", "dash", "zsh", "ksh", "ash", "mksh"}
_SHELL_STRING = re.compile(r"-[a-zA-Z]*c[a-zA-Z]*$")  # -c, -ec, -lc: the next word is a command
# Python's flags that take no value, then m (the module: glued, or the next word) or c
_PYTHON_RUN = re.compile(r"-[bBdEhiIOPqRsSuvVx]*([mc])(.*)$", re.DOTALL)


def _is_python(program: str) -> bool:
    name = program.rpartition("/")[2]
    return re.fullmatch(r"(python|pypy)[0-9.]*[a-z]?", name) is not None


def _python_modules(before: str, word: str) -> list[str]:
    """The top-level modules Python runs for ``word`` of its command line,
    ``before`` being the word ahead of it: ``-mname``, or ``name`` after
    ``-m``; the modules a ``-c`` string imports."""
    glued = _PYTHON_RUN.match(word)
    if glued is not None and glued.group(2):
        flag, rest = glued.groups()
    else:
        ahead = _PYTHON_RUN.match(before)
        if ahead is None or ahead.group(2):
            return []
        flag, rest = ahead.group(1), word
    if flag == "m":
        top = rest.split(".", 1)[0]
        return [top] if top.isidentifier() else []
    return imported_modules(rest)


# the programs that run a Node script (``node scripts/lint``), the options
# whose value is the next word, and those that run no script
_NODE_RUNTIMES = frozenset({"node", "nodejs", "tsx", "ts-node", "ts-node-esm", "bun"})
_NODE_VALUE_OPTIONS = frozenset({"-r", "--require", "--import", "--loader", "-C",
                                 "--experimental-loader", "--conditions", "--env-file",
                                 "--input-type", "--title"})
_NODE_NO_SCRIPT = frozenset({"-e", "--eval", "-p", "--print", "-v", "--version", "-h",
                             "--help"})
# the names Node (and the TypeScript runners: tsx, ts-node, bun) run as a script
NODE_SUFFIXES = (".js", ".cjs", ".mjs", ".jsx", ".ts", ".cts", ".mts", ".tsx")


def _node_script(word: str) -> list[ProgramPath]:
    """The names Node may run for its script ``word``: the name (a
    directory protected whole: its ``index.js``, or what its package.json's
    ``main`` names) and the name with each extension it tries; for the
    working directory, its ``package.json`` and ``index`` files."""
    base = word.rstrip("/")
    tried = (*NODE_SUFFIXES, ".json", ".node")
    if base in ("", "."):
        return [ProgramPath("package.json", True),
                *(ProgramPath(f"index{ext}", True) for ext in tried)]
    if base.endswith(tried):  # named with its extension: that file (Node tries no other)
        return [ProgramPath(base, False)]
    return [ProgramPath(base, False), *(ProgramPath(base + ext, True) for ext in tried)]


# Python's options that take the next word as their value
_PYTHON_VALUE_OPTIONS = frozenset({"-W", "-X", "--check-hash-based-pycs"})


def _is_script_word(word: str, before: str) -> bool:
    """Whether ``word`` of a Python command line, ``before`` the word ahead
    of it, is the script Python runs (its options past)."""
    return bool(word) and not word.startswith(("-", "$", "~")) and "=" not in word \
        and before not in _PYTHON_VALUE_OPTIONS


def interpreter(program: str) -> str:
    """What kind of program the interpreter named ``program`` (a path or a
    name) is: ``"python"``, ``"node"``, ``"shell"``, or ``""``."""
    name = program.rpartition("/")[2]
    if _is_python(name):
        return "python"
    if name in _NODE_RUNTIMES or name == "deno":
        return "node"
    return "shell" if name in _SHELLS else ""


def _names_path(word: str) -> bool:
    return "/" in word and not word.startswith("~")


def _is_bare_argument(word: str) -> bool:
    return bool(word) and word[0] not in "-%$~" and "=" not in word and word not in (".", "..")


class _Word(NamedTuple):
    text: str
    command: bool   # stands where a program's name does
    program: str    # the program of the command it belongs to ("" for its own name)


# words after which the next still names a program
_KEEP_COMMAND = {"{", "}", "!", "if", "then", "else", "elif", "do", "while", "until", "time",
                 "exec", "command", "env", "nohup", "nice", "timeout", "stdbuf", "ionice",
                 "setsid"}
# programs that run the rest of their line: their options, and the numbers
# and durations they take (`nice -n 5`, `timeout 60`, `ionice -c 3`), are
# passed over to the program they run (`env -i PATH=x make`)
_WRAPPERS = _KEEP_COMMAND - {"{", "}", "!", "if", "then", "else", "elif", "do", "while",
                             "until"}
_WRAPPER_ARGUMENT = re.compile(r"-.*|[0-9]+(?:\.[0-9]+)?[smhd]?", re.DOTALL)


def _words(command: str) -> list[_Word]:
    """The shell words of ``command`` (quotes and escapes undone).  A word
    starting with an expansion (``$GIT_DIR/x``, ``"$(git rev-parse
    --show-toplevel)/x"``) is given as what follows it (``x``): relative
    paths are tried from the work tree's top and the git directory."""
    words: list[_Word] = []
    word: list[str] = []
    started = False      # a word is under way (an empty "" counts)
    expansion = False    # the word began with an expansion
    command_next = True
    wrapped = False  # a wrapper's options and values may come before the program
    program = ""
    i, size = 0, len(command)

    def end() -> None:
        nonlocal started, expansion, command_next, program, wrapped
        if started:
            text = "".join(word)
            if expansion:
                text = text.lstrip("/")
            words.append(_Word(text, command_next, "" if command_next else program))
            assignment = "=" in text and "/" not in text.partition("=")[0]
            name = text.rpartition("/")[2]  # (/usr/bin/env: env)
            if command_next and name in _WRAPPERS:
                wrapped = True
            elif (command_next and not assignment and name not in _KEEP_COMMAND
                  and not (wrapped and _WRAPPER_ARGUMENT.fullmatch(text))):
                program = name
                command_next = wrapped = False
        word.clear()
        started = expansion = False

    while i < size:
        char = command[i]
        if char in " \t":
            end()
        elif char in _OPERATORS:
            end()
            command_next, program, wrapped = True, "", False
        elif char in _REDIRECTS:
            end()
        elif char == "\\" and i + 1 < size:
            i += 1
            word.append(command[i])
            started = True
        elif char == "'":
            close = command.find("'", i + 1)
            close = size if close < 0 else close
            word.append(command[i + 1:close])
            started, i = True, close
        elif char == '"':
            i += 1
            while i < size and command[i] != '"':
                if command[i] == "$" and not word:
                    i = _expansion_end(command, i)
                    started = expansion = True
                    continue
                if command[i] == "\\" and i + 1 < size and command[i + 1] in '"\\$`':
                    i += 1
                word.append(command[i])
                i += 1
            started = True
        elif char == "$" and not word:
            i = _expansion_end(command, i) - 1
            started = expansion = True
        else:
            word.append(char)
            started = True
        i += 1
    end()
    return words


def _expansion_end(command: str, at: int) -> int:
    """Where the expansion starting at ``command[at] == "$"`` ends."""
    i = at + 1
    if i < len(command) and command[i] in "({":
        depth = 0
        while i < len(command):
            if command[i] in "({":
                depth += 1
            elif command[i] in ")}":
                depth -= 1
                if depth == 0:
                    return i + 1
            i += 1
        return i
    while i < len(command) and (command[i].isalnum() or command[i] == "_"):
        i += 1
    return i


class _Parser:
    """Git's config parser (config.c), read leniently where git would stop."""

    def __init__(self, text: str) -> None:
        self.text = text.replace("\r\n", "\n").removeprefix("\ufeff")
        self.at = 0

    def next(self) -> str:
        """The next character; ``"\\n"`` at the end, as git's reader gives."""
        if self.at >= len(self.text):
            self.at += 1
            return "\n"
        char = self.text[self.at]
        self.at += 1
        return char

    def done(self) -> bool:
        return self.at >= len(self.text)

    def entries(self) -> Iterator[Entry]:
        section, subsection = "", ""
        comment = False
        while not self.done():
            char = self.next()
            if char == "\n":
                comment = False
                continue
            if comment or char.isspace():
                continue
            if char in "#;":
                comment = True
                continue
            if char == "[":
                section, subsection = self.header()
                continue
            if not char.isalpha():
                comment = True  # git: a bad line, and the file is refused; read on
                continue
            key, value = self.entry(char)
            yield Entry(section, subsection, key, value)

    def header(self) -> tuple[str, str]:
        name: list[str] = []
        subsection = ""
        while not self.done():
            char = self.next()
            if char == "]":
                break
            if char.isspace() and char != "\n":
                subsection = self.extended()
                break
            if char == "\n":
                break
            name.append(char)
        full = "".join(name).lower()
        if "." in full:  # [section.sub]: the old spelling, folded
            full, _, subsection = full.partition(".")
        return full, subsection

    def extended(self) -> str:
        """The quoted subsection of ``[section "sub"]``, up to its ``]``."""
        out: list[str] = []
        while not self.done():
            char = self.next()
            if char == '"':
                break
            if char in "\n]":
                return ""
        while not self.done():
            char = self.next()
            if char == "\n":
                return "".join(out)
            if char == '"':
                break
            if char == "\\":
                char = self.next()
            out.append(char)
        while not self.done():
            char = self.next()
            if char in "]\n":
                break
        return "".join(out)

    def entry(self, first: str) -> tuple[str, str | None]:
        name = [first]
        char = self.next()
        while char.isalnum() or char == "-":
            name.append(char)
            char = self.next()
        while char in " \t":
            char = self.next()
        key = "".join(name).lower()
        if char == "\n":
            return key, None
        if char != "=":
            self.skip_line()
            return key, None
        return key, self.value()

    def skip_line(self) -> None:
        while not self.done() and self.next() != "\n":
            pass

    def value(self) -> str:
        out: list[str] = []
        spaces = 0
        quoted = comment = False
        while True:
            char = self.next()
            if char == "\n":
                return "".join(out)  # inside quotes: git refuses the file; read on
            if comment:
                continue
            if char.isspace() and not quoted:
                if out:
                    spaces += 1
                continue
            if not quoted and char in "#;":
                comment = True
                continue
            out.extend(" " * spaces)
            spaces = 0
            if char == "\\":
                escaped = self.next()
                if escaped == "\n":
                    continue
                out.append({"t": "\t", "b": "\b", "n": "\n"}.get(escaped, escaped))
                continue
            if char == '"':
                quoted = not quoted
                continue
            out.append(char)
