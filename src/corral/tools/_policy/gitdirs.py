"""What git runs or reads inside the root, found when a toolbox opens it.

``**/.git`` is on the default protected list, but git also runs and reads
places not named ``.git``; each is protected as a whole (``protect_dirs``)
when it lies inside the root:

* the git directory a ``.git`` *file* points to (``gitdir: ../store``: a
  submodule, a ``--separate-git-dir`` checkout, a worktree), at the root or
  below it, and that directory's ``commondir`` (a worktree's hooks and
  config are its common directory's);
* a bare repository (git's own test: ``HEAD``, ``objects/``, ``refs/``), a
  local remote whose hooks ``git push`` runs;
* what each repository's ``config`` points at: ``core.hooksPath`` (taken
  both relative to the work tree, as git does, and to the git directory),
  and the files ``include.path`` / ``includeIf.*.path`` pull in (relative to
  the including file; followed, they can point further).

Bounded: directories are looked at breadth first, at most ``MAX_DIRS`` of
them and ``MAX_DEPTH`` deep, files read up to ``MAX_FILE_BYTES``, at most
``MAX_CONFIGS`` config files.  Every path is taken from the core's resolver
(canonical; outside the root or unreadable: left out).
"""

from __future__ import annotations

import os
import stat as st
from collections import deque
from collections.abc import Iterator
from dataclasses import dataclass

from ...contained import DirEntry, Root
from .locate import locate

__all__ = ["git_dirs", "scan", "Scan", "MAX_DIRS", "MAX_DEPTH"]

MAX_DIRS = 2000
MAX_DEPTH = 6
MAX_FILE_BYTES = 64 * 1024
MAX_CONFIGS = 64
_CONFIG_KEYS = {("core", "hookspath"), ("include", "path"), ("includeif", "path")}


def git_dirs(root: Root) -> tuple[str, ...]:
    """The canonical paths inside ``root`` to protect as a whole (see the module doc)."""
    return scan(root).dirs


@dataclass(frozen=True)
class Scan:
    """What one bounded look at a root found: ``dirs`` to protect as a
    whole, and ``links``: the symlinks met on the way (canonical paths of
    the links themselves), those in git's hook directories included."""

    dirs: tuple[str, ...]
    links: tuple[str, ...]


def scan(root: Root) -> Scan:
    """:func:`git_dirs` and the symlinks met by the same walk (one look at
    the tree when a toolbox opens it)."""
    found = _Found(root)
    links: list[str] = []
    queue: deque[tuple[str, int]] = deque([(".", 0)])
    looked = 0
    while queue and looked < MAX_DIRS:
        rel, depth = queue.popleft()
        looked += 1
        try:
            with root.open_handle(rel, os.O_RDONLY | os.O_DIRECTORY) as handle:
                entries = handle.scandir()
        except OSError:
            continue
        links.extend(entry.path for entry in entries if entry.is_symlink())
        names = {entry.name: entry for entry in entries}
        if rel != "." and _is_git_directory(names):
            found.repository(rel, None)
            continue  # its own directories are git's (objects/ alone has 256)
        found.work_tree(rel, names.get(".git"))
        if depth < MAX_DEPTH:
            queue.extend((entry.path, depth + 1) for entry in entries
                         if entry.name != ".git" and entry.is_dir(follow_symlinks=False))
    found.follow_configs()
    for hooks in found.hooks[:MAX_CONFIGS]:
        # the git directory's own entries too: hooks/ or config may be links
        for where in (hooks.rpartition("/")[0] or ".", hooks):
            try:
                with root.open_handle(where, os.O_RDONLY | os.O_DIRECTORY) as handle:
                    links.extend(entry.path for entry in handle.scandir() if entry.is_symlink())
            except OSError:
                continue
    return Scan(tuple(found.paths), tuple(dict.fromkeys(links)))


def _is_git_directory(names: dict[str, DirEntry]) -> bool:
    head, objects, refs = names.get("HEAD"), names.get("objects"), names.get("refs")
    return head is not None and objects is not None and refs is not None and \
        objects.is_dir() and refs.is_dir()


class _Found:
    """What the scan found so far: paths to protect, configs to read."""

    def __init__(self, root: Root) -> None:
        self.root = root
        self.paths: dict[str, None] = {}  # an ordered set
        self.configs: deque[tuple[str, str | None]] = deque()  # (config, its work tree)
        self.read: set[str] = set()
        self.hooks: list[str] = []  # hook directories, looked at for links

    def add(self, rel: str) -> str | None:
        """Protect where ``rel`` leads (canonical), if inside the root."""
        try:
            path = locate(self.root, rel).path
        except (OSError, ValueError):
            return None
        if path != ".":
            self.paths.setdefault(path)
        return path

    def repository(self, gitdir: str, work_tree: str | None) -> None:
        path = self.add(gitdir)
        if path is None or path == ".":
            return
        self.configs.append((f"{path}/config", work_tree))
        self.hooks.append(f"{path}/hooks")
        common = _read(self.root, f"{path}/commondir")
        if common is not None and common.strip():
            inside = _inside(self.root, common.strip(), path)
            shared = self.add(inside) if inside is not None else None
            if shared is not None and shared != ".":
                self.configs.append((f"{shared}/config", work_tree))

    def work_tree(self, rel: str, git: DirEntry | None) -> None:
        """The ``.git`` entry of the directory ``rel`` (a work tree), if any."""
        if git is None:
            return
        if git.is_dir(follow_symlinks=False):
            self.configs.append((git.path + "/config", rel))
            self.hooks.append(git.path + "/hooks")
            return
        text = _read(self.root, git.path) if git.is_file(follow_symlinks=False) else None
        target = _gitdir_line(text or "")
        inside = _inside(self.root, target, rel) if target else None
        if inside is not None:
            self.repository(inside, rel)

    def follow_configs(self) -> None:
        """Read each config (and what it includes) for the places it names."""
        while self.configs and len(self.read) < MAX_CONFIGS:
            config, work_tree = self.configs.popleft()
            if config in self.read:
                continue
            self.read.add(config)
            text = _read(self.root, config)
            if text is None:
                continue
            here = config.rpartition("/")[0] or "."
            for key, value in _config_paths(text):
                bases = (here,) if key == "path" or work_tree is None else (work_tree, here)
                for base in bases:
                    inside = _inside(self.root, value, base)
                    path = self.add(inside) if inside is not None else None
                    if key == "path" and path is not None and path != ".":
                        self.configs.append((path, work_tree))


def _read(root: Root, rel: str) -> str | None:
    """The start of the regular file ``rel`` (``None``: not one, or unreadable)."""
    try:
        with root.open_handle(rel, os.O_RDONLY | os.O_NONBLOCK) as handle:
            if not st.S_ISREG(handle.stat().st_mode):
                return None
            return handle.pread(MAX_FILE_BYTES, 0).decode("utf-8", "replace")
    except OSError:
        return None


def _gitdir_line(text: str) -> str | None:
    for line in text.splitlines():
        key, _, value = line.partition(":")
        if key.strip() == "gitdir" and value.strip():
            return value.strip()
    return None


def _inside(root: Root, value: str, base: str) -> str | None:
    """``value`` (a path git read from a file in ``base``: relative to it, or
    absolute) as a path relative to the root, or ``None`` when it cannot be
    inside (``~``, another absolute path)."""
    if value.startswith("~"):
        return None
    if not value.startswith("/"):
        return value if base == "." else f"{base}/{value}"
    for prefix in {root.path.rstrip("/"), os.path.realpath(root.path).rstrip("/")}:
        if value.startswith(prefix + "/"):
            return value[len(prefix) + 1:]
    return None


def _config_paths(text: str) -> Iterator[tuple[str, str]]:
    """``(key, value)`` of each ``core.hooksPath``, ``include.path`` and
    ``includeIf.<condition>.path`` in a git config file's text."""
    section = ""
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line[0] in "#;":
            continue
        if line.startswith("["):
            head = line[1:].partition("]")[0].strip()
            section = head.split(None, 1)[0].split(".", 1)[0].lower() if head else ""
            continue
        key, _, value = line.partition("=")
        key = key.strip().lower()
        if (section, key) in _CONFIG_KEYS:
            value = _unquoted(value)
            if value:
                yield key, value


def _unquoted(value: str) -> str:
    """A config value without its comment and quotes (enough for paths)."""
    out: list[str] = []
    quoted = False
    for char in value.strip():
        if char == '"':
            quoted = not quoted
        elif char in "#;" and not quoted:
            break
        else:
            out.append(char)
    return "".join(out).strip()


def in_git_directory(root: Root, canonical: str, creates: tuple[str, ...] = ()) -> bool:
    """Whether the deepest existing directory on the way to ``canonical``,
    or the one above it, is a git directory now (``HEAD``, ``objects/``,
    ``refs/``): ``X/config``, ``X/hooks/x``, ``X/info/attributes`` of a
    repository made after the toolbox opened, or beyond the scan's bounds,
    however many directories the call itself would create on the way
    (``X/hooks/deep/x`` with ``hooks`` missing is inside ``X``).  Decided
    when a call would change something.  Six ``lstat`` calls at most."""
    above = canonical.rpartition("/")[0]
    while above and above in creates:
        above = above.rpartition("/")[0]
    for _ in range(2):
        if not above:
            return False
        if _looks_like_git_directory(root, above):
            return True
        above = above.rpartition("/")[0]
    return False


def _looks_like_git_directory(root: Root, rel: str) -> bool:
    try:
        head = root.lstat(f"{rel}/HEAD")
        if not st.S_ISREG(head.st_mode):
            return False
        return all(st.S_ISDIR(root.stat(f"{rel}/{sub}").st_mode) for sub in ("objects", "refs"))
    except OSError:
        return False
