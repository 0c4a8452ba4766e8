"""What the git hook managers of a work tree run at a commit or a push,
read from their configs (YAML by :mod:`.yamlish`, lefthook's TOML and
JSON too): pre-commit's local hooks (``.pre-commit-config.yaml``) and
lefthook's commands, jobs and scripts (``lefthook.yml`` and the other
names it reads).  Each is a :class:`Runs`: shell lines with the directory
(relative to the work tree's top) they run from, files the manager runs
or sources, directories it runs every file of, and other configs it reads.
A config that cannot be read raises :class:`~.yamlish.Unread`.
"""

from __future__ import annotations

import json
import shlex
import tomllib
from dataclasses import dataclass, field
from typing import Any

from .yamlish import Unread, load

__all__ = ["PRE_COMMIT_CONFIGS", "LEFTHOOK_CONFIGS", "Runs", "read", "Unread"]

PRE_COMMIT_CONFIGS = (".pre-commit-config.yaml", ".pre-commit-config.yml")
# lefthook reads one main config and one -local one, by any of these names
LEFTHOOK_CONFIGS = tuple(f"{place}{stem}.{ext}"
                         for place in ("", ".", ".config/")
                         for stem in ("lefthook", "lefthook-local")
                         for ext in ("yml", "yaml", "toml", "json", "jsonc"))
# the directories lefthook runs a hook's scripts from (``<dir>/<hook>/<script>``)
_SOURCE_DIRS = {"source_dir": ".lefthook", "source_dir_local": ".lefthook-local"}
_MOST_WALKED = 20_000  # nodes of one config looked at for commands


@dataclass
class Runs:
    """What one config runs, relative to the work tree's top."""

    commands: list[tuple[str, str]] = field(default_factory=list)  # (shell line, from)
    files: list[str] = field(default_factory=list)  # run or sourced (a file, never a folder)
    places: list[str] = field(default_factory=list)  # every file there may run
    configs: list[str] = field(default_factory=list)  # read as configs of the same manager
    whole: bool = False  # what it names could not all be weighed


def parsed(name: str, text: str) -> Any:
    """The data of the config ``name`` holding ``text`` (``Unread`` if it cannot be read)."""
    if name.endswith(".toml"):
        try:
            return tomllib.loads(text)
        except (tomllib.TOMLDecodeError, RecursionError):
            raise Unread("not TOML") from None
    if name.endswith((".json", ".jsonc")):
        try:
            return json.loads(text)
        except (ValueError, RecursionError):
            raise Unread("not JSON") from None
    return load(text)


def read(name: str, text: str) -> Runs:
    """What the config ``name`` (one of :data:`PRE_COMMIT_CONFIGS` or
    :data:`LEFTHOOK_CONFIGS`, or a config lefthook ``extends`` with)
    holding ``text`` runs."""
    data = parsed(name, text)
    if name in PRE_COMMIT_CONFIGS:
        return _pre_commit(data)
    return _lefthook(data)


def _pre_commit(data: Any) -> Runs:
    """A local hook's ``entry`` and ``args`` (a ``script`` entry is a file
    at the top); a local path among its ``additional_dependencies`` is
    installed (its build runs) when the hook's environment is made.  A
    remote repository's hooks run that repository's code."""
    runs = Runs()
    repos = data.get("repos") if isinstance(data, dict) else None
    for repo in repos if isinstance(repos, list) else []:
        if not isinstance(repo, dict) or repo.get("repo") != "local":
            continue
        hooks = repo.get("hooks")
        for hook in hooks if isinstance(hooks, list) else []:
            if not isinstance(hook, dict) or not isinstance(hook.get("entry"), str):
                continue
            entry = hook["entry"].strip()
            first = entry.split(maxsplit=1)[0] if entry else ""
            if hook.get("language") == "script" and first and "/" not in first:
                entry = "./" + entry
            args = hook.get("args")
            words = [arg for arg in args if isinstance(arg, str)] if isinstance(args, list) \
                else []
            runs.commands.append((entry + "".join(f" {shlex.quote(w)}" for w in words), "."))
            deps = hook.get("additional_dependencies")
            for dep in deps if isinstance(deps, list) else []:
                if isinstance(dep, str) and (dep == "." or dep.startswith(("./", "../"))):
                    runs.places.append(dep)
    return runs


def _lefthook(data: Any) -> Runs:
    """Every ``run`` (from its job's ``root``), ``runner`` and template,
    the ``rc`` file sourced before each command, the program ``lefthook``
    names, the script directories, and the configs it ``extends``."""
    runs = Runs()
    if not isinstance(data, dict):
        return runs
    rc = data.get("rc")
    if isinstance(rc, str) and rc.strip():
        runs.files.append(rc.strip())
    for key in ("lefthook",):
        if isinstance(data.get(key), str):
            runs.commands.append((data[key], "."))
    templates = data.get("templates")
    if isinstance(templates, dict):
        runs.commands.extend((value, ".") for value in templates.values()
                             if isinstance(value, str))
    for key, default in _SOURCE_DIRS.items():
        value = data.get(key)
        runs.places.append(value.strip() if isinstance(value, str) and value.strip()
                           else default)
    extends = data.get("extends")
    for path in [extends] if isinstance(extends, str) else \
            extends if isinstance(extends, list) else []:
        if isinstance(path, str):
            if any(char in path for char in "*?["):
                runs.whole = True  # a pattern of configs: not weighed one by one
            else:
                runs.configs.append(path)
    budget = [_MOST_WALKED]
    for key, value in data.items():
        if key not in ("rc", "lefthook", "templates", "extends", *_SOURCE_DIRS):
            _jobs(value, ".", runs, budget)
    if budget[0] < 0:
        runs.whole = True
    return runs


def _jobs(node: Any, root: str, runs: Runs, budget: list[int]) -> None:
    """The commands of a hook, its commands, jobs and groups (a ``root``
    holds for what is below it)."""
    budget[0] -= 1
    if budget[0] < 0:
        return
    if isinstance(node, list):
        for item in node:
            _jobs(item, root, runs, budget)
        return
    if not isinstance(node, dict):
        return
    here = node.get("root")
    if isinstance(here, str) and here.strip():
        root = here.strip().rstrip("/") or "."
    for key in ("run", "runner"):
        if isinstance(node.get(key), str):
            runs.commands.append((node[key], root))
    for value in node.values():
        if isinstance(value, (dict, list)):
            _jobs(value, root, runs, budget)
