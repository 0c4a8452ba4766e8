"""What git runs or reads inside the root, and what makes a directory a
git repository.

``**/.git`` is on the default protected list, but git also runs and reads
places not named ``.git``; each is protected as a whole (``protect_dirs``)
when it lies inside the root:

* the git directory a ``.git`` *file* points to (``gitdir: ../store``: a
  submodule, a ``--separate-git-dir`` checkout, a worktree), at the root or
  below it, and that directory's ``commondir`` (a worktree's hooks and
  config are its common directory's);
* a bare repository (:func:`is_repository`), a local remote whose hooks
  ``git push`` runs;
* what each repository's ``config`` (and ``config.worktree``) points at: ``core.hooksPath`` (taken
  both relative to the work tree, as git does, and to the git directory),
  and the files ``include.path`` / ``includeIf.*.path`` pull in (relative to
  the including file; followed, they can point further);
* the programs a config names (:mod:`.gitconfig`: ``core.fsmonitor``,
  ``core.sshCommand``, editors, pagers, ``gpg.program``,
  ``credential.helper``, filter/diff/merge drivers, ``!`` aliases and the
  like): the value where git runs it as one program, and each word of a
  shell command that names a path, taken from the top of the work tree
  (where git runs them; a bare repository's: its git directory) and from
  the git directory.  A bare program name is found on ``PATH``: not here.
  An argument word (``sh fsmon.sh``; any of a git command's) names a
  file, never a directory (``cd src``, ``git -C sub``).  The scripts in a
  hooks directory are read the same way, line by line (the hook
  ``pre-commit install`` writes runs ``python -mpre_commit``: Python
  looks in the working directory first).
  Each link on the way to a named path (or a ``core.hooksPath``) is
  protected itself too: removed, a file or directory of the model's own
  could stand where git looks.

The configs are read when the toolbox opens; a config cannot be changed
through the tools (it is in a git directory), and one changed outside them
is read by the next toolbox.

Whether a directory is a repository is git's own test read wider, so that
nothing git would take for one is missed: an entry named ``HEAD`` (of any
type or content) beside ``objects`` and ``refs`` (git asks only that it may
enter them), or beside a ``commondir`` file (git then looks for
``objects``/``refs`` where it points, which a later change can supply).
Names are compared folded, as a case-insensitive disk compares them.

Bounded: directories are looked at breadth first, at most ``MAX_DIRS`` of
them and ``MAX_DEPTH`` deep, files read up to ``MAX_FILE_BYTES``, at most
``MAX_CONFIGS`` config files, ``MAX_PROGRAMS`` program paths and
``MAX_PYTHON_FILES`` Python files read for their imports (as many Node
scripts for the relative paths they load), the last
``MAX_LINK_STEPS`` steps of a named path looked at for links.  A file that
names programs and is longer than ``MAX_FILE_BYTES``, more programs than
``MAX_PROGRAMS``, more configs, hook directories or work trees than
``MAX_CONFIGS``, more files a pattern matches than ``MOST_MATCHED`` or
Python files than ``MAX_PYTHON_FILES`` leave what the rest names unknown:
the look then says every path must be protected (``Scan.whole``).  Everything is read through a
:class:`GitLook` (the policed view's reading of the root); every path is
canonical (outside the root or unreadable: left out).
"""

from __future__ import annotations

import json
import os
import posixpath
import re
from collections import deque
from collections.abc import Iterable
from dataclasses import dataclass
from typing import NamedTuple, Protocol

from ...contained import DirEntry
from .._refusals.catalogue import Code, Kind, Refusal
from .hookmanagers import LEFTHOOK_CONFIGS, PRE_COMMIT_CONFIGS
from .hookmanagers import read as read_hook_manager
from .hostconfig import (COMPOSE, DEV_CONTAINER_CONFIGS, HOST_CONFIGS, MOST_MATCHED,
                         compose_loads, config_tops, deno_tasks)
from .hostconfig import commands as host_commands
from .hostconfig import matches as host_config_matches
from .gitconfig import (JUSTFILES, NODE_SUFFIXES, RECIPE_FILES, TASKFILES, ProgramPath,
                        command_paths, entered_directories, entries, from_directories, interpreter,
                        program_paths, recipe_commands, recipe_loads, TASK_CONFIG_KINDS)
from .pythonstart import imported_modules
from .rules import fold
from .yamlish import Unread

__all__ = ["GitLook", "scan", "Scan", "MAX_DIRS", "MAX_DEPTH", "SHAPE_NAMES", "shape_name",
           "is_repository", "looks_like_common_directory", "names_a_shape_entry",
           "in_git_directory", "in_git_subdirectory", "GIT_SUBDIRECTORIES",
           "looks_like_repository", "made_repository", "carried_repository",
           "lies_in_git_directory", "enclosing_work_trees",
           "scan_enclosing", "scan_user_configs", "scan_user_configs_above", "USER_GIT_CONFIGS",
           "Enclosing"]

MAX_DIRS = 2000
MAX_DEPTH = 6
MAX_FILE_BYTES = 256 * 1024  # git and the hosts read a config whole (1,000 branches: 88 KB)
MAX_CONFIGS = 1024  # configs, hook directories, work trees read (a root of checkouts: one each)
MAX_LINK_STEPS = 8  # the last steps of a named path looked at for links
MAX_PYTHON_FILES = 64  # a hook's Python modules read for the modules they import
MAX_PROGRAMS = 512  # distinct program paths (and their bases) looked up across the configs
_CONFIG_KEYS = {("core", "hookspath"), ("include", "path"), ("includeif", "path"),
                ("init", "templatedir")}
# a user's own git configs, in a home: read by git in every repository
USER_GIT_CONFIGS = (".gitconfig", ".config/git/config")
# the names git runs from a hooks directory (githooks(5)): protected one by
# one where that directory is the root itself (never protected as a whole)
HOOK_NAMES = ("applypatch-msg", "pre-applypatch", "post-applypatch", "pre-commit",
              "pre-merge-commit", "prepare-commit-msg", "commit-msg", "post-commit",
              "pre-rebase", "post-checkout", "post-merge", "pre-push", "pre-receive", "update",
              "proc-receive", "post-receive", "post-update", "reference-transaction",
              "push-to-checkout", "pre-auto-gc", "post-rewrite", "sendemail-validate",
              "fsmonitor-watchman", "p4-changelist", "p4-prepare-changelist",
              "p4-post-changelist", "p4-pre-submit", "post-index-change")
# the entries git's "is this a git directory" test looks at, by folded name
SHAPE_NAMES = {"head": "HEAD", "objects": "objects", "refs": "refs", "commondir": "commondir"}


class GitLook(Protocol):
    """What the scan and the repository test read of a root."""

    @property
    def known_as(self) -> tuple[str, ...]:
        """The root's own absolute spellings (a path git read may use one)."""

    def entries(self, rel: str) -> list[DirEntry]:
        """The entries of the directory ``rel`` (``OSError`` if it is not one)."""

    def text(self, rel: str, limit: int) -> str | None:
        """The first ``limit`` bytes of the regular file ``rel`` as text
        (``None``: not one, or unreadable)."""

    def canonical(self, rel: str) -> str | None:
        """Where ``rel`` (inside the root, or a host path) leads (final link
        followed), canonical, as a host program reaches it (out of the
        root and back in too); ``None``: outside the root or not
        resolvable."""

    def present(self, rel: str, names: Iterable[str]) -> frozenset[str]:
        """Which of ``names`` are entries of the directory ``rel`` (``lstat``)."""


# the directories git makes inside a git directory: a file written in one
# of them, however deep, is looked at as lying in a repository one level up
GIT_SUBDIRECTORIES = frozenset({"hooks", "info", "refs", "objects", "logs", "modules",
                                "worktrees", "branches", "remotes", "lfs", "rr-cache"})
MOST_GIT_SUBDIRECTORIES = 8


def shape_name(name: str) -> str | None:
    """The entry of git's repository test ``name`` stands for (``HEAD``,
    ``objects``, ``refs``, ``commondir``), compared folded, or ``None``."""
    return SHAPE_NAMES.get(fold(name))


def is_repository(names: Iterable[str]) -> bool:
    """Whether a directory holding entries by these names (each as
    :func:`shape_name` gives it, or as listed) passes git's test, read wide:
    ``HEAD`` beside ``objects`` and ``refs``, or beside ``commondir``."""
    held = {shape for name in names if (shape := shape_name(name)) is not None}
    return "HEAD" in held and ("commondir" in held or {"objects", "refs"} <= held)


def names_a_shape_entry(rel: str) -> bool:
    """Whether a component of the path ``rel`` as spelled is named as an
    entry of the repository test (a call that may create one)."""
    if rel.isascii():  # fold is lower() on ASCII: one lower() and a set test for the path
        return not SHAPE_NAMES.keys().isdisjoint(rel.lower().split("/"))
    return any(shape_name(part) is not None for part in rel.split("/") if part)


def carried_repository(shown: str, inner: str, field: str, *, leaving: bool) -> Refusal:
    """A move of a directory (or of a link to one) holding a repository at ``inner``."""
    where = shown if inner in ("", ".") else f"{shown}/{inner}"
    what = "holds" if leaving else "leads to"
    return Refusal(Code.DENIED,
                   f"{shown} {what} a git repository ({where}), whose hooks and config git "
                   "runs; the tools do not move one; nothing was changed",
                   "Move a repository with git or mv in a shell; move the other entries one by "
                   "one.", details={"path": shown, "field": field, "repository": where},
                   kind=Kind.PROTECTED)


def made_repository(shown: str, directory: str, operation: str, field: str) -> Refusal:
    """A call whose result would make ``directory`` a git repository."""
    where = "the root" if directory == "." else directory
    return Refusal(Code.DENIED,
                   f"{shown}: this would make {where} a git repository (HEAD beside objects/ "
                   "and refs/, or beside commondir), whose hooks and config git runs; the "
                   f"tools never make one, so they may not {operation} it; nothing was changed",
                   "Make repositories with git itself (git init, git clone) in a shell, not "
                   "with file tools; for other files, pick names git does not read there.",
                   details={"path": shown, "operation": operation, "field": field,
                            "repository": where},
                   kind=Kind.PROTECTED)


@dataclass(frozen=True)
class Scan:
    """What one bounded look at a root found: ``dirs`` to protect as a
    whole (directories, and the programs and links the configs name), and
    ``links``: the symlinks met on the way (canonical paths of the links
    themselves), those in git's hook directories included."""

    dirs: tuple[str, ...]
    links: tuple[str, ...]
    complete: bool = True  # False: the bounds left directories unlooked at (links there unmet)
    # the directories the look did not list (each with its depth below the
    # root), the rest of the tree beyond them: where a walk for the links
    # left unmet starts (a repository's own directories are among them)
    unlooked: tuple[tuple[str, int], ...] = ()
    # directories first on the sys.path of a Python program git runs: a
    # module named as one of the standard library's there runs in its place
    python_dirs: tuple[str, ...] = ()
    # the config files read (or looked for: an include not there yet) and
    # the hook directories: what another program changes there later
    # changes what this look would find
    configs: tuple[str, ...] = ()
    hooks: tuple[str, ...] = ()
    # a file naming programs was longer than the look reads, or named more
    # than it looks up: what the rest names is not known, all is protected
    whole: bool = False


def scan(look: GitLook) -> Scan:
    """The directories to protect as a whole (see the module doc) and the
    symlinks met by the same walk (one look at the tree when a toolbox
    opens it)."""
    found = _Found(look)
    links: list[str] = []
    unlooked: list[tuple[str, int]] = []
    queue: deque[tuple[str, int]] = deque([(".", 0)])
    looked = 0
    complete = True
    while queue and looked < MAX_DIRS:
        rel, depth = queue.popleft()
        looked += 1
        try:
            entries = look.entries(rel)
        except OSError:
            continue
        links.extend(entry.path for entry in entries if entry.is_symlink())
        names = {entry.name: entry for entry in entries}
        below = [entry.path for entry in entries
                 if entry.name != ".git" and entry.is_dir(follow_symlinks=False)]
        if rel != "." and is_repository(names):
            found.repository(rel, None)
            unlooked.extend((path, depth + 1) for path in below)
            continue  # its own directories are git's (objects/ alone has 256)
        found.work_tree(rel, names.get(".git"))
        tops = config_tops(names)
        if tops:
            found.projects.append((rel, tops))
        if depth < MAX_DEPTH:
            queue.extend((path, depth + 1) for path in below)
        elif below:
            complete = False
            unlooked.extend((path, depth + 1) for path in below)
    if queue:
        complete = False
        unlooked.extend(queue)
    found.follow_configs()
    found.hook_manager_programs()
    found.hook_programs()
    found.host_config_programs()
    if len(set(found.hooks)) > MAX_CONFIGS:
        found.whole = True  # links in the hook directories past the bound: not met
    for hooks in found.hooks[:MAX_CONFIGS]:
        # the git directory's own entries too: hooks/ or config may be links
        for where in (hooks.rpartition("/")[0] or ".", hooks):
            try:
                links.extend(entry.path for entry in look.entries(where) if entry.is_symlink())
            except OSError:
                continue
    return Scan(tuple(found.paths), tuple(dict.fromkeys(links)), complete, tuple(unlooked),
                tuple(found.python_dirs), tuple(sorted(found.read)),
                tuple(dict.fromkeys(found.hooks)), found.whole)


class _Found:
    """What the scan found so far: paths to protect, configs to read."""

    def __init__(self, look: GitLook) -> None:
        self.look = look
        self.paths: dict[str, None] = {}  # an ordered set
        # (config, its work tree, its git directory)
        self.configs: deque[tuple[str, str | None, str]] = deque()
        self.programs: set[tuple[ProgramPath, str | None, str, str]] = set()  # looked up
        self.whole = False  # a file or program left unread: every path protected
        self.read: set[str] = set()
        self.hooks: list[str] = []  # hook directories, looked at for links
        # (hook directory, its work tree, its git directory): the hooks' commands are read
        self.hook_runs: list[tuple[str, str | None, str]] = []
        self.work_trees_found: list[tuple[str, str]] = []  # (work tree, its git directory)
        self.opened_configs: dict[str, bool] = {}  # makefiles and package.json read
        self.python_read: set[str] = set()  # Python files read for their imports, in all
        self.node_read: set[str] = set()  # Node scripts read for what they load, in all
        self.node_loads: set[str] = set()  # the relative paths they name, in all
        # directories a Python program git runs has first on sys.path
        self.python_dirs: dict[str, None] = {}
        # directories holding a host's own config, and the names there it may lie under
        self.projects: list[tuple[str, frozenset[str]]] = []
        self.host_configs_read: set[str] = set()
        # a user's config (and what it includes) -> the home's absolute
        # spelling, which ``~`` names in it
        self.tilde: dict[str, str] = {}
        self.tilde_now: str | None = None

    def text(self, rel: str) -> str | None:
        """The text of a file that names programs (as :meth:`GitLook.text`);
        one longer than ``MAX_FILE_BYTES`` makes the look protect all."""
        text = self.look.text(rel, MAX_FILE_BYTES + 1)
        if text is not None and len(text.encode("utf-8", "replace")) > MAX_FILE_BYTES:
            self.whole = True
        return text

    def add(self, rel: str) -> str | None:
        """Protect where ``rel`` leads (canonical), if inside the root."""
        path = self.look.canonical(rel)
        if path is not None and path != ".":
            self.paths.setdefault(path)
        return path

    def add_named(self, rel: str) -> str | None:
        """Protect where ``rel`` leads and each link on the way to it (the
        link itself: removed, it could be replaced by a directory or file of
        the model's own that git would run in its place)."""
        path = self.add(rel)
        parts = rel.rstrip("/").split("/")
        last = len(parts) - 1
        for step in range(last, max(last - MAX_LINK_STEPS, -1), -1):
            name = parts[step]
            if name in ("", ".", ".."):
                continue
            parent = "/".join(parts[:step]) or ("/" if rel.startswith("/") else ".")
            above = self.look.canonical(parent)
            if above is None:
                continue
            spelled = name if above == "." else f"{above}/{name}"
            if step == last:
                leads = path
            elif self.look.present(above, (name,)):
                leads = self.look.canonical("/".join(parts[:step + 1]))
            else:
                continue
            if spelled != leads:
                self.paths.setdefault(spelled)
        return path

    def repository(self, gitdir: str, work_tree: str | None) -> None:
        path = self.add(gitdir)
        if path is None or path == ".":
            return
        self.git_directory_configs(path, work_tree)
        self.hooks.append(f"{path}/hooks")
        self.hook_runs.append((f"{path}/hooks", work_tree, path))
        common = self.look.text(f"{path}/commondir", MAX_FILE_BYTES)
        if common is not None and common.strip():
            inside = _inside(self.look, common.strip(), path)
            shared = self.add(inside) if inside is not None else None
            if shared is not None and shared != ".":
                self.configs.append((f"{shared}/config", work_tree, path))

    def git_directory_configs(self, git_dir: str, work_tree: str | None) -> None:
        """A git directory's ``config``, and its ``config.worktree`` (read
        with ``extensions.worktreeConfig``) where there is one."""
        self.configs.append((f"{git_dir}/config", work_tree, git_dir))
        if self.look.present(git_dir, ("config.worktree",)):
            self.configs.append((f"{git_dir}/config.worktree", work_tree, git_dir))

    def work_tree(self, rel: str, git: DirEntry | None) -> None:
        """The ``.git`` entry of the directory ``rel`` (a work tree), if any."""
        if git is None:
            return
        if git.is_dir(follow_symlinks=False):
            self.git_directory_configs(git.path, rel)
            self.hooks.append(git.path + "/hooks")
            self.hook_runs.append((git.path + "/hooks", rel, git.path))
            self.work_trees_found.append((rel, git.path))
            return
        text = self.look.text(git.path, MAX_FILE_BYTES) if git.is_file(follow_symlinks=False) \
            else None
        target = _gitdir_line(text or "")
        inside = _inside(self.look, target, rel) if target else None
        if inside is not None:
            self.repository(inside, rel)
            self.work_trees_found.append((rel, inside))

    def follow_configs(self) -> None:
        """Read each config (and what it includes) for the places it names."""
        while self.configs and len(self.read) < MAX_CONFIGS:
            config, work_tree, git_dir = self.configs.popleft()
            if config in self.read:
                continue
            self.read.add(config)
            text = self.text(config)
            if text is None:
                continue
            self.tilde_now = self.tilde.get(config)
            if self.tilde_now is not None:
                text = _HOME_TILDE.sub(lambda _: self.tilde_now or "~", text)
            here = config.rpartition("/")[0] or "."
            found = list(entries(text))
            trees = (work_tree, *self.work_trees(found, git_dir))
            for section, _, key, value in found:
                for tree in trees:
                    if (section, key) in _CONFIG_KEYS:
                        if value:
                            self.config_path(key, value, here, tree, git_dir)
                    else:
                        for named in program_paths(section, key, value):
                            self.program(named, tree, git_dir)
        if any(config not in self.read for config, _, _ in self.configs):
            self.whole = True  # configs past the bound: what they name is not known

    def work_trees(self, found: list[tuple[str, str, str, str | None]],
                   git_dir: str) -> tuple[str, ...]:
        """The work trees a config's ``core.worktree`` names (relative to
        the git directory), inside the root: git takes a relative
        ``core.hooksPath`` from there and runs the programs it names there
        (a submodule's git directory has one)."""
        trees: list[str] = []
        for section, _, key, value in found:
            if (section, key) == ("core", "worktree") and value:
                inside = _inside(self.look, value, git_dir)
                tree = self.look.canonical(inside) if inside is not None else None
                if tree is not None and tree not in trees:
                    trees.append(tree)
        return tuple(trees)

    def config_path(self, key: str, value: str, here: str, work_tree: str | None,
                    git_dir: str) -> None:
        """A ``core.hooksPath`` (from the work tree, as git takes it, and the
        git directory) or an include (from the including file: followed)."""
        bases = (here,) if key == "path" else \
            tuple(dict.fromkeys((*_bases(work_tree, git_dir), here)))
        for base in bases:
            inside = _inside(self.look, value, base)
            path = self.add_named(inside) if inside is not None else None
            if key == "path" and path is not None and path != ".":
                self.configs.append((path, work_tree, git_dir))
                if self.tilde_now is not None:
                    self.tilde[path] = self.tilde_now
            elif key == "hookspath" and path == ".":
                self.paths.update(dict.fromkeys(HOOK_NAMES))
            elif key == "templatedir" and path == ".":
                self.paths.setdefault("hooks")  # copied into each repository git makes
            if key == "hookspath" and path is not None:
                self.hook_runs.append((path, work_tree, git_dir))

    def hook_manager_programs(self) -> None:
        """What the hook managers of each work tree run at a commit, from
        its top: a pre-commit local hook's ``entry`` and ``args``,
        lefthook's ``run`` (from a job's ``root``), ``runner``, ``rc``,
        script directories and the configs it ``extends``, the scripts in
        ``.husky/`` (their configs are protected by name; the programs they
        name were not).  Read by :mod:`.hookmanagers`; a config it cannot
        read leaves what it names unknown: every path is protected."""
        if len(self.work_trees_found) > MAX_CONFIGS:
            self.whole = True
        for work_tree, git_dir in self.work_trees_found[:MAX_CONFIGS]:
            self.hook_runs.append((_joined(work_tree, ".husky"), work_tree, git_dir))
            queue = deque(PRE_COMMIT_CONFIGS + LEFTHOOK_CONFIGS)
            seen: set[str] = set()
            while queue:
                name = queue.popleft()
                path = _joined(work_tree, name)
                if path in seen:
                    continue
                seen.add(path)
                if len(seen) > MAX_CONFIGS:
                    self.whole = True
                    break
                text = self.text(path)
                if text is None:
                    continue
                self.read.add(path)  # (among the configs the view follows: a change is read again)
                try:
                    runs = read_hook_manager(name, text)
                except Unread:
                    self.whole = True
                    continue
                self.whole = self.whole or runs.whole
                for extended in runs.configs:
                    inside = _inside(self.look, extended, work_tree)
                    if inside is not None:
                        self.add_named(inside)
                        queue.append(extended)  # read as lefthook reads it, from the top
                for place in runs.places:
                    inside = _inside(self.look, place, work_tree)
                    if inside is not None:
                        self.add_named(inside)
                for file in runs.files:
                    self.program(ProgramPath(file, True), work_tree, git_dir)
                for command, root in runs.commands:
                    here = _joined(work_tree, root) if root != "." else work_tree
                    lines = [line for line in command.splitlines()
                             if not line.lstrip().startswith("#")]
                    entered = list(dict.fromkeys(directory for line in lines
                                                 for directory in entered_directories(line)))
                    for line in lines:
                        for named in from_directories(command_paths(line), entered):
                            self.program(named, here, git_dir)

    def hook_programs(self) -> None:
        """What each hook runs (:func:`command_paths` of each line of its
        script): git runs a hook from the top of the work tree (a bare
        repository's: its git directory), so ``python -m pre_commit`` in
        the hook ``pre-commit install`` writes runs a ``pre_commit.py``
        there, and ``./scripts/lint.sh`` that script."""
        runs = list(dict.fromkeys(self.hook_runs))
        if len(runs) > MAX_CONFIGS:
            self.whole = True
        for hooks, work_tree, git_dir in runs[:MAX_CONFIGS]:
            try:
                scripts = sorted(entry.path for entry in self.look.entries(hooks)
                                 if entry.name in HOOK_NAMES)
            except OSError:
                continue
            for script in scripts:
                text = self.text(script)
                lines = [line for line in (text or "").splitlines()
                         if not line.lstrip().startswith("#")]
                # a cd on one line holds for the lines after it
                entered = list(dict.fromkeys(directory for line in lines
                                             for directory in entered_directories(line)))
                for line in lines:
                    for named in from_directories(command_paths(line), entered):
                        self.program(named, work_tree, git_dir)

    def host_config_programs(self) -> None:
        """What a host program's own configuration runs without being
        asked (:mod:`.hostconfig`: Claude Code's hooks, MCP servers, a
        folderOpen task, a dev container's commands, ``.envrc``), from the
        project directory holding it; a directory ``.envrc`` puts on
        ``PATH`` is protected whole (its programs run in place of the
        user's).  The configs are protected by name: read once, here."""
        for project, tops in self.projects:  # (one a directory looked at: MAX_DIRS at most)
            for name in HOST_CONFIGS:
                top = name.partition("/")[0]
                if not any(host_config_matches(top, held) for held in tops):
                    continue
                for path in self.config_files(project, name, tops):
                    self.host_config(project, name, path)

    def config_files(self, project: str, name: str, tops: frozenset[str]) -> list[str]:
        """The files of ``project`` the config ``name`` (its last component
        may be a pattern) stands for: listed when it is one."""
        folder, _, last = name.rpartition("/")
        if "*" in folder:  # `.devcontainer/*/devcontainer.json`: in each folder there
            parent, _, step = folder.rpartition("/")
            try:
                entries = self.look.entries(_joined(project, parent))
            except OSError:
                return []
            found = sorted(_joined(entry.path, last) for entry in entries
                           if host_config_matches(step, entry.name))
            if len(found) > MOST_MATCHED:
                self.whole = True
            return found[:MOST_MATCHED]
        if "*" not in last:
            return [_joined(project, name)]
        if not folder:
            return [_joined(project, held) for held in sorted(tops)
                    if host_config_matches(last, held)]
        try:
            entries = self.look.entries(_joined(project, folder))
        except OSError:
            return []
        matched = sorted(entry.path for entry in entries if host_config_matches(last, entry.name))
        if len(matched) > MOST_MATCHED:
            self.whole = True
        return matched[:MOST_MATCHED]

    def host_config(self, project: str, name: str, path: str) -> None:
        """What the config ``name`` at ``path`` runs, from ``project`` (a
        file two names stand for, ``mise.local.toml``, is read once)."""
        if path in self.host_configs_read:
            return
        self.host_configs_read.add(path)
        self.read.add(path)  # (among the configs the view follows: a change is read again)
        text = self.text(path)
        if not text:
            return
        try:
            lines, on_path, files = host_commands(name, text, _folder_in(path, project))
        except Unread:
            self.whole = True  # what it runs is not known
            return
        for directory in on_path:
            inside = _inside(self.look, directory, project)
            if inside is not None:
                self.add_named(inside)
        # a dev container's YAML files are its compose files (its Dockerfile is not YAML)
        composes = name in DEV_CONTAINER_CONFIGS
        for file in dict.fromkeys(files):
            kind = COMPOSE if composes and file.endswith((".yml", ".yaml")) else ""
            self.program(ProgramPath(file, True, recipes=kind), None, project)
        entered = list(dict.fromkeys(directory for line in lines
                                     for directory in entered_directories(line)))
        for line in lines:
            for named in from_directories(command_paths(line), entered):
                self.program(named, None, project)

    def program(self, named: ProgramPath, work_tree: str | None, git_dir: str) -> None:
        """A program a config names (or a word of its command): git runs it
        from the top of the work tree (a bare repository's: its git
        directory).  An argument word names a file, never a directory
        (``cd src``, ``git -C sub``: the programs there are named apart).
        A Python program's directory is first on ``sys.path``: see
        :meth:`python_program`."""
        value, file_only = named.path, named.file_only
        for base in _bases(work_tree, git_dir):
            key = (named, work_tree, git_dir, base)
            if key in self.programs:  # (a hook's every line runs echo: looked up once)
                continue
            if len(self.programs) >= MAX_PROGRAMS:
                self.whole = True
                return
            self.programs.add(key)
            inside = _inside(self.look, value, base)
            if inside is None:
                continue
            runs = "python" if named.python else "" if named.recipes else self.runs_as(inside)
            if runs == "python":
                self.python_program(inside)
            elif runs == "node":
                self.node_program(inside)
            elif not self.opened_configs.get(inside):
                self.build_config(inside, work_tree, git_dir, shell=runs == "shell",
                                  kind=named.recipes)
            if file_only:
                try:
                    self.look.entries(inside)
                    continue
                except OSError:
                    pass
            self.add_named(inside)


    def build_config(self, path: str, work_tree: str | None, git_dir: str, *,
                     shell: bool = False, kind: str = "") -> None:
        """A makefile or ``package.json`` a protected command runs: the
        commands of its recipes (scripts), named from its directory, and
        the files a makefile includes (``-include local.mk`` is read when
        someone makes it; ``include mk/*.mk`` protects ``mk`` whole: a file
        added there is read), the program its ``SHELL`` names, what a
        justfile or Taskfile loads (:func:`recipe_loads`), each read as a
        recipe file of its ``kind`` whatever its name; a shell script it
        runs (``shell``, or by its name): its lines, as a hook's."""
        name = kind or path.rpartition("/")[2]
        shell = shell or name.endswith(_SHELL_SUFFIXES)
        if (not shell and name not in MAKEFILE_NAMES and not name.endswith(".mk")
                and name != "package.json" and name not in JUSTFILES and name not in TASKFILES
                and name != COMPOSE and name not in _TASK_CONFIGS):
            return
        self.opened_configs[path] = True
        text = self.text(path)
        if not text:
            return
        here = path.rpartition("/")[0] or "."
        commands: list[str] = []
        if shell:
            # run from where its caller runs (the work tree's top): read as a hook is
            lines = [line for line in text.splitlines() if not line.lstrip().startswith("#")]
            entered = list(dict.fromkeys(directory for line in lines
                                         for directory in entered_directories(line)))
            for line in lines:
                for named in from_directories(command_paths(line), entered):
                    self.program(named, work_tree, git_dir)
            return
        if name == COMPOSE:
            try:
                loads = compose_loads(text)
            except Unread:
                self.whole = True  # what it starts is not known
                return
            for loaded in loads:
                self.program(loaded, here, git_dir)
            return
        if name == "package.json":
            commands = _package_scripts(text)
        elif name == "deno.json":
            commands = deno_tasks(text)
        elif name in JUSTFILES or name in TASKFILES or name == "mise.toml":
            try:
                commands = recipe_commands(name, text) or []
                loads = recipe_loads(name, text)
            except Unread:
                self.whole = True  # what its tasks run is not known
                return
            for loaded in loads:
                self.program(loaded, here, git_dir)
        else:
            for line in text.splitlines():
                if line.startswith("\t"):
                    commands.append(line.lstrip("\t@-+ "))
                    continue
                shell_set = _MAKE_SHELL.match(line)
                if shell_set is not None and "/" in shell_set.group(1) \
                        and "$" not in shell_set.group(1):
                    self.program(ProgramPath(shell_set.group(1), True), here, git_dir)
                included = _MAKE_INCLUDE.match(line)
                if included is not None:
                    for word in _make_included(included.group(1)):
                        wildcard = _GLOB_CHARS.search(word)
                        if wildcard is not None:
                            # every file the pattern meets, now or later: its fixed folder
                            folder = word[:wildcard.start()].rpartition("/")[0]
                            if not folder or "$" in folder:
                                self.whole = True  # the top's or an unknown folder's files
                            else:
                                self.program(ProgramPath(folder, False), here, git_dir)
                        elif "$" not in word:
                            self.program(ProgramPath(word, True, recipes="Makefile"),
                                         here, git_dir)
        for command in commands:
            for named in command_paths(command):
                self.program(named, here, git_dir)

    def python_program(self, program: str) -> None:
        """The Python file ``program`` runs with its directory first on
        ``sys.path``: a module of the standard library's name there runs in
        place of it (``python_dirs``), and so does each module the program
        imports, and those import in turn (``MAX_PYTHON_FILES`` read in
        all; a package directory is protected whole).  A directory named as
        the program runs its ``__main__.py``, with itself first on ``sys.path``."""
        canonical = self.look.canonical(program)
        if canonical is None:
            return
        try:
            self.look.entries(canonical)
        except OSError:
            directory = canonical.rpartition("/")[0] or "."
        else:
            directory = canonical
            canonical = _joined(directory, "__main__.py")
            self.add_named(canonical)
        self.python_dirs.setdefault(directory)
        queue = deque([canonical])
        read = self.python_read
        while queue and len(read) < MAX_PYTHON_FILES:
            path = queue.popleft()
            if path in read:
                continue
            read.add(path)
            text = self.text(path)
            for module in imported_modules(text or ""):
                for name in (f"{module}.py", module):
                    beside = _joined(directory, name)
                    self.add_named(beside)
                    if name.endswith(".py"):
                        queue.append(self.look.canonical(beside) or beside)
        if any(path not in read for path in queue):
            self.whole = True  # modules past the bound: what they import is not known


    def runs_as(self, path: str) -> str:
        """What runs the program file ``path`` (see :func:`interpreter`): its
        ``#!`` line's program (past ``env`` and its options); without one,
        a Node script by its name, and a text file of no other kind the
        shell, which runs it itself; ``""`` for a binary, a makefile (a
        justfile, a Taskfile), package.json or a directory."""
        name = path.rpartition("/")[2]
        if name in MAKEFILE_NAMES or name.endswith(".mk") or name == "package.json" \
                or name in JUSTFILES or name in TASKFILES or name in RECIPE_FILES \
                or "dockerfile" in name.lower():  # a container's build steps, not the host's
            return ""
        head = self.look.text(path, 512)
        if head is None or "\0" in head:
            return ""
        if head.startswith("#!"):
            words = head[2:].split("\n", 1)[0].split()
            if words and words[0].rpartition("/")[2] == "env":
                words = [word for word in words[1:] if not word.startswith("-") and "=" not in word]
            return interpreter(words[0]) if words else ""
        if name.endswith(NODE_SUFFIXES):
            return "node"
        return "shell" if name.endswith(_SHELL_SUFFIXES) or "." not in name else ""

    def node_program(self, program: str) -> None:
        """The Node script ``program``: each relative path its quoted
        strings name (``require('./a')``, ``import b from '../lib/b.mjs'``,
        ``import('./c')``, a ``Worker`` or ``fork`` of ``'./d.js'``) runs
        with it, under every name Node tries for it (``a`` itself, which
        covers the folder of that name, then ``a.js``, ``a.cjs``...), and
        the scripts among them load in turn (``MAX_PYTHON_FILES`` read and
        ``MAX_PROGRAMS`` paths in all)."""
        canonical = self.look.canonical(program)
        if canonical is None:
            return
        queue = deque([canonical])
        read, looked = self.node_read, set()
        while queue and len(read) < MAX_PYTHON_FILES:
            path = queue.popleft()
            if path in looked:
                continue
            looked.add(path)
            text = self.text(path)
            if text is None:  # a name Node would try, not a file now
                continue
            read.add(path)
            directory = path.rpartition("/")[0] or "."
            for named in dict.fromkeys(_NODE_RELATIVE.findall(text)):
                base = posixpath.normpath(_joined(directory, named))
                if base in (".", "..") or base.startswith("../") or base in self.node_loads:
                    continue
                if len(self.node_loads) >= MAX_PROGRAMS:
                    self.whole = True  # past the bound: what the rest loads is not known
                    return
                self.node_loads.add(base)
                # a name with its extension is the file (found, Node tries no other)
                tried = [base] if base.endswith(_NODE_NAMED) else \
                    [base, *(base + ext for ext in _NODE_TRIED)]
                if path.endswith(_TYPESCRIPT_SUFFIXES):  # a TypeScript runner's names too
                    stem, dot, suffix = base.rpartition(".")
                    tried += [base + ext for ext in _TYPESCRIPT_SUFFIXES]
                    if dot and f".{suffix}" in NODE_SUFFIXES:  # './a.js' may be a.ts
                        tried += [stem + ext for ext in _TYPESCRIPT_SUFFIXES]
                for name in dict.fromkeys(tried):
                    self.add_named(name)
                    if name.endswith(NODE_SUFFIXES):
                        queue.append(self.look.canonical(name) or name)
        if any(path not in looked for path in queue):
            self.whole = True  # scripts past the bound: what they load is not known

# the names Node's require tries after the name itself; a TypeScript file's loader's
_NODE_TRIED = (".js", ".json", ".node", ".cjs", ".mjs")
_TYPESCRIPT_SUFFIXES = (".ts", ".tsx", ".mts", ".cts")
_NODE_NAMED = (*NODE_SUFFIXES, ".json", ".node")
# a quoted relative path in a script: './a', "../lib/b.mjs", `./c`
_NODE_RELATIVE = re.compile(r"""['"`](\.{1,2}/[^'"`\s$]*)['"`]""")
MAKEFILE_NAMES = ("Makefile", "makefile", "GNUmakefile")
_SHELL_SUFFIXES = (".sh", ".bash", ".zsh", ".ksh")
_TASK_CONFIGS = frozenset(TASK_CONFIG_KINDS.values())  # (the kinds build_config reads)
_MAKE_INCLUDE = re.compile(r"^\s*-?s?include\s+(.+)$")
# `SHELL := ./tools/sh` (any assignment): the program every recipe line is handed to
_MAKE_SHELL = re.compile(r"^\s*(?:override\s+|export\s+)?SHELL\s*[:?+!]*=\s*(\S+)")
_GLOB_CHARS = re.compile(r"[*?\[]")
_MAKE_WILDCARD = re.compile(r"\$[({]wildcard\s+([^$)}]*)[)}]")  # ([^$]: linear)


def _make_included(words: str) -> list[str]:
    """The names of a makefile's ``include`` line: its words, a
    ``$(wildcard ...)``'s patterns read as the patterns they are."""
    return _MAKE_WILDCARD.sub(lambda found: found.group(1), words).split()


def _package_scripts(text: str) -> list[str]:
    """The commands of a ``package.json``'s ``scripts`` (none if it is not
    JSON of that shape)."""
    try:
        scripts = json.loads(text).get("scripts")
    except (ValueError, AttributeError, RecursionError):
        return []
    if not isinstance(scripts, dict):
        return []
    return [value for value in scripts.values() if isinstance(value, str)]


# ``~`` where a shell or git expands it to the home: a word's start
_HOME_TILDE = re.compile(r"(?:(?<=^)|(?<=[\s=\"'!:]))~(?=/|\s|$)", re.MULTILINE)


def _joined(directory: str, name: str) -> str:
    return name if directory in (".", "") else f"{directory}/{name}"


def _folder_in(path: str, project: str) -> str:
    """The folder of the file ``path`` relative to ``project`` (``""``: the project's own)."""
    folder = path.rpartition("/")[0]
    if project in (".", ""):
        return folder
    return folder[len(project) + 1:] if folder.startswith(project + "/") else ""


def _bases(work_tree: str | None, git_dir: str) -> tuple[str, ...]:
    return (git_dir,) if work_tree is None else (work_tree, git_dir)


def _gitdir_line(text: str) -> str | None:
    for line in text.splitlines():
        key, _, value = line.partition(":")
        if key.strip() == "gitdir" and value.strip():
            return value.strip()
    return None


def _inside(look: GitLook, value: str, base: str) -> str | None:
    """``value`` (a path git read from a file in ``base``: relative to it, or
    absolute) as a path relative to the root, or ``None`` when it cannot be
    inside (``~``).  Another absolute path is given as it is: where it
    leads is the look's to say (another name of the root's directory)."""
    if value.startswith("~"):
        return None
    if not value.startswith("/"):
        return value if base == "." else f"{base}/{value}"
    for known in look.known_as:
        prefix = known.rstrip("/")
        if value.startswith(prefix + "/"):
            return value[len(prefix) + 1:]
    return value


def in_git_directory(look: GitLook, canonical: str, creates: tuple[str, ...] = ()) -> bool:
    """Whether the deepest existing directory on the way to ``canonical``,
    or the one above it, is a repository now (:func:`is_repository`):
    ``X/config``, ``X/hooks/x``, ``X/info/attributes`` of a repository made
    after the toolbox opened, or beyond the scan's bounds, however many
    directories the call itself would create on the way (``X/hooks/deep/x``
    with ``hooks`` missing is inside ``X``); the root too (a toolbox opened
    on a bare repository).  Decided when a call would change something.
    Eight ``lstat`` calls at most."""
    above = canonical.rpartition("/")[0]
    while above and above in creates:
        above = above.rpartition("/")[0]
    for _ in range(2):
        if looks_like_repository(look, above or "."):
            return True
        if not above:
            return False
        above = above.rpartition("/")[0]
    return in_git_subdirectory(look, canonical.rpartition("/")[0])


def in_git_subdirectory(look: GitLook, directory: str) -> bool:
    """Whether a directory on the way to ``directory`` (itself included)
    is named as git names what it makes in a repository (``refs``,
    ``objects``, ``hooks``...) and the directory holding it is a repository
    now: ``r.git/refs/heads/main``, ``r.git/objects/ab/cdef`` of a repository
    made after the toolbox opened, however deep.  A path naming more such
    directories than :data:`MOST_GIT_SUBDIRECTORIES` counts as in one (what
    cannot be weighed is protected).  Nothing looked at on a path naming
    none (the common case)."""
    parts = directory.lower().split("/")
    if GIT_SUBDIRECTORIES.isdisjoint(parts):
        return False
    holders = [i for i, part in enumerate(parts) if part in GIT_SUBDIRECTORIES]
    if len(holders) > MOST_GIT_SUBDIRECTORIES:
        return True
    spelled = directory.split("/")
    return any(looks_like_repository(look, "/".join(spelled[:i]) or ".") for i in holders)


def looks_like_repository(look: GitLook, rel: str) -> bool:
    """:func:`is_repository` of the directory ``rel`` as it is now, or a
    common git directory (:func:`looks_like_common_directory`): two
    ``lstat`` when it holds neither ``HEAD`` nor ``objects``."""
    present = look.present(rel, ("HEAD", "objects"))
    if not present:
        return False
    if "HEAD" not in present:
        return looks_like_common_directory(look, rel)
    return is_repository({"HEAD", *present, *look.present(rel, ("refs", "commondir"))})


def looks_like_common_directory(look: GitLook, rel: str) -> bool:
    """Whether the directory ``rel`` is laid out as git lays out a linked
    work tree's common directory: ``objects/`` (with git's ``info/`` and
    ``pack/``) beside ``refs/``, no ``HEAD`` needed (a ``commondir`` file
    elsewhere names it, and git reads its ``config``, ``hooks/`` and
    ``info/``).  Only ever a reason to protect what is there, never to
    refuse making one; a folder of one's own named ``objects`` is not it."""
    inner = "objects" if rel in (".", "") else f"{rel}/objects"
    return "refs" in look.present(rel, ("refs",)) and \
        look.present(inner, ("info", "pack")) == {"info", "pack"}



def lies_in_git_directory(real: str) -> bool:
    """Whether the directory at the real host path ``real`` (a root, when it
    is opened) lies inside a git directory: one of the directories above it
    is named ``.git`` or passes git's test (:func:`is_repository`).  The
    scan at open sees the root and below; what git runs from a hooks
    directory the root was opened at lies above.  One ``lstat`` a level."""
    parts = real.rstrip("/").split("/")
    for end in range(len(parts) - 1, 0, -1):
        if fold(parts[end - 1]) == ".git" and end > 1:
            return True
        above = "/".join(parts[:end]) or "/"
        if _present(above, "HEAD") and is_repository(
                name for name in SHAPE_NAMES.values() if _present(above, name)):
            return True
    return False


def _present(directory: str, name: str) -> bool:
    try:
        os.lstat(os.path.join(directory, name))
    except OSError:
        return False
    return True


def enclosing_work_trees(real: str, most: int) -> list[str]:
    """The tops of the work trees above the directory at the real host path
    ``real``, nearest first, at most ``most`` of them (``most + 1`` found
    tells the caller there are more): git run in any of them (a repository
    holding a submodule, a checkout kept inside another) runs what its
    config and hooks name inside the root.  One ``lstat`` a level."""
    tops: list[str] = []
    path = real.rstrip("/") or "/"
    while len(tops) <= most:
        parent = os.path.dirname(path)
        if parent == path:
            break
        path = parent
        if _present(path, ".git"):
            tops.append(path)
    return tops


class Enclosing(NamedTuple):
    """What an enclosing work tree runs inside a root below its top, as
    paths relative to the root: ``dirs`` protected as a whole,
    ``python_dirs`` as :class:`Scan`'s; ``whole``: the root itself is
    named (a ``core.hooksPath`` there), or a file read was past the look's
    bounds (what the rest names is unknown): all of it protected."""

    dirs: tuple[str, ...] = ()
    python_dirs: tuple[str, ...] = ()
    whole: bool = False


def scan_enclosing(look: GitLook, below: str) -> Enclosing:
    """What the work tree ``look`` reads (at its top) runs inside the root
    opened at ``below`` (its path relative to that top), as paths relative
    to the root: the programs its git config names, the scripts its hooks
    run, what the host configs in the directories from its top down to the
    root run (each as :func:`scan` finds them inside a root).  The first
    of the pair are protected as a whole, the second are ``python_dirs``.
    Bounded as :func:`scan` is; only the work tree's top, its git
    directory and the directories on the way to the root are read, never
    the rest of its tree.  A path that is the root itself protects all of
    it (as the whole directory is protected when the root is the top)."""
    found = _Found(look)
    try:
        top = {entry.name: entry for entry in look.entries(".")}
    except OSError:
        return Enclosing()
    found.work_tree(".", top.get(".git"))
    parts = below.split("/")
    for depth in range(len(parts)):
        rel = "/".join(parts[:depth]) or "."
        try:  # listed: a config named by a pattern (``*.code-workspace``) is found too
            names = top if rel == "." else {entry.name: entry for entry in look.entries(rel)}
        except OSError:
            continue
        tops = config_tops(names)
        if tops:
            found.projects.append((rel, tops))
    found.follow_configs()
    found.hook_manager_programs()
    found.hook_programs()
    found.host_config_programs()
    return Enclosing(_within_root(found.paths, below), _within_root(found.python_dirs, below),
                     found.whole or below in found.paths or below in found.python_dirs)


def scan_user_configs(look: GitLook, homes: Iterable[tuple[str, str]]) -> Enclosing:
    """What the git configs of users whose homes lie in the root run there
    (``homes``: each home's path in the root and the absolute spelling
    ``~`` stands for in its configs): git reads them in every repository,
    so their programs, hooks directory (``core.hooksPath``), template
    directory (``init.templateDir``: its hooks are copied into each new
    repository) and includes are weighed as a repository's are, relative
    paths from the home.  Bounded as :func:`scan` is."""
    found = _user_configs(look, homes)
    return Enclosing(tuple(found.paths), tuple(found.python_dirs), found.whole)


def scan_user_configs_above(look: GitLook, spelled: str, below: str) -> Enclosing:
    """What the git configs of the user whose home ``look`` reads (at its
    top; ``spelled``, the absolute path ``~`` stands for) run inside a
    root below the home at ``below`` (its path relative to the home), as
    paths relative to the root: git reads them in every repository of the
    user's, the root's too (:func:`scan_user_configs`).  A path that is
    the root or holds it (a global ``core.hooksPath`` opened as the root)
    protects all of it."""
    found = _user_configs(look, [(".", spelled)])
    named = (*found.paths, *found.python_dirs)
    whole = found.whole or any(below == path or below.startswith(path + "/")
                               for path in named)
    return Enclosing(_within_root(found.paths, below), _within_root(found.python_dirs, below),
                     whole)


def _user_configs(look: GitLook, homes: Iterable[tuple[str, str]]) -> _Found:
    found = _Found(look)
    for home, spelled in homes:
        for name in USER_GIT_CONFIGS:
            config = _joined(home, name)
            found.tilde[config] = spelled
            found.configs.append((config, None, home))
    found.follow_configs()
    found.hook_programs()
    return found


def host_config_places(look: GitLook, places: Iterable[tuple[str, frozenset[str]]]) -> Scan:
    """What the host configs and work trees in ``places`` run (directories
    the look at open did not reach, each with the names a config may lie
    under, ``.git`` among them for a work tree), as :func:`scan` finds it:
    ``dirs``, ``python_dirs``, ``whole`` and the configs and hooks read."""
    found = _Found(look)
    for place, tops in places:
        if ".git" in tops:
            try:
                git = next((entry for entry in look.entries(place) if entry.name == ".git"), None)
            except OSError:
                git = None
            found.work_tree(place, git)
        if tops - {".git"}:
            found.projects.append((place, tops - {".git"}))
    found.follow_configs()
    found.hook_manager_programs()
    found.hook_programs()
    found.host_config_programs()
    return Scan(tuple(found.paths), (), python_dirs=tuple(found.python_dirs),
                configs=tuple(sorted(found.read)), hooks=tuple(dict.fromkeys(found.hooks)),
                whole=found.whole)


def _within_root(paths: Iterable[str], below: str) -> tuple[str, ...]:
    top = below + "/"
    return tuple(path[len(top):] for path in paths if path.startswith(top))
