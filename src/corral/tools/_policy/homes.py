"""Users' home directories in or around a root.

The startup files a shell, ssh, git or an editor reads from a home
(``.bashrc``, ``.ssh/``, ``.gitconfig``...) are protected by name wherever
they lie (:data:`~.rules.HOST_CONFIG_PROTECT`).  Two things depend on
where a home is:

* ``bin/`` and ``.local/bin/``: the ``.profile`` most systems ship puts
  them first on ``PATH`` when they exist, so a program written there runs
  in place of the user's own (``bin/ls``).  A project's ``bin/`` is its own
  business; a home's is protected (:func:`home_path_dirs`), where the home
  is the root or lies inside it;
* the other folders of a home whose contents an ordinary command runs
  (:data:`HOME_RUN_PLACES`): version managers' shims and the toolchains
  they installed, shell frameworks' scripts, what a desktop session runs
  at login; protected there as ``bin/`` is;
* a root opened inside a place the default rules protect as a whole
  (``corral serve ~/.ssh``, ``~/.config/git``, a home's ``bin/`` or
  ``.rbenv/``): every path in it is that place's
  (:func:`lies_in_protected_place`).

A home is ``$HOME`` or a home directory of the user database, compared by
real path.  Read once, when a root is opened.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from functools import lru_cache

from .rules import Op, Policy, fold

__all__ = ["HOME_PATH_DIRS", "HOME_RUN_PLACES", "home_path_dirs", "homes_around",
           "homes_within", "lies_in_protected_place",
           "protects_host_configs"]

# where the profile most systems ship (Debian's, Ubuntu's, Fedora's) looks
# for programs of the user's own, put first on PATH
HOME_PATH_DIRS = ("bin", ".local/bin")

# A home's other folders whose contents an ordinary command runs, protected
# whole where the home is the root or lies in it (what the default rules
# already protect by name anywhere, .cargo, .nvm, .pyenv, .bun, .deno,
# .config/i3, .config/qtile, .oh-my-zsh..., is left to them).  Only where a
# home is: go/, miniconda3/ or .zim/ may be a project's own folder elsewhere.
HOME_RUN_PLACES = HOME_PATH_DIRS + (
    # version managers: their shims come first on PATH (`ruby`, `node`,
    # `python` run the shim), and the toolchains they installed are what
    # the shims run; their own scripts are sourced by the shell
    ".rbenv", ".nodenv", ".goenv", ".jenv", ".plenv",
    ".volta",                       # bin/ on PATH, tools/image/ the toolchains
    ".sdkman",                      # bin/sdkman-init.sh sourced, candidates/ on PATH
    ".asdf",                        # shims/, installs/, plugins/ (their bin/ scripts run)
    ".local/share/mise",            # mise: shims/, installs/, plugins/
    ".local/share/uv",              # uv: python/ (its interpreters), tools/ (uv tool install)
    ".rustup",                      # toolchains/ (cargo's and rustc's), settings.toml
    ".dotnet",                      # tools/ on PATH (dotnet tool install -g), the SDK
    "go/bin",                       # go install: on PATH
    "go/pkg/mod",                   # go: the module cache every build compiles unchecked
    ".local/share/pnpm",            # PNPM_HOME: on PATH, global packages' bins
    ".ghcup",                       # bin/ on PATH (ghc, cabal)
    ".juliaup",                     # bin/ on PATH (julia)
    ".pixi",                        # bin/ on PATH, envs/
    "miniconda3", "anaconda3", "miniforge3",  # conda init runs bin/conda at every shell
    # shell frameworks the .zshrc or .bashrc sources whose names a project
    # may use for its own (oh-my-zsh's and its kin's are protected anywhere)
    ".zim", ".local/share/zinit", ".antigen", ".zplug",
    ".dwm",                         # dwm's autostart patch: its startup scripts
)


_known: dict[tuple[str | None, int], tuple[str, ...]] = {}


def _homes() -> tuple[str, ...]:
    """The real paths of ``$HOME`` and of every home the user database
    lists (``/`` left out: a daemon's home names no user's files); kept
    while ``$HOME`` and ``/etc/passwd`` stay as they were (each root
    opened asks)."""
    try:
        key = (os.environ.get("HOME"), os.stat("/etc/passwd").st_mtime_ns)
    except OSError:
        return _read_homes()
    known = _known.get(key)
    if known is None:
        known = _read_homes()
        _known.clear()
        _known[key] = known
    return known


def _read_homes() -> tuple[str, ...]:
    found: list[str] = []
    home = os.environ.get("HOME")
    if home and os.path.isabs(home):
        found.append(home)
    try:
        import pwd  # not on Windows
        found.extend(entry.pw_dir for entry in pwd.getpwall())
    except (ImportError, OSError):
        pass
    real = {os.path.realpath(path) for path in found if path and os.path.isabs(path)}
    real.discard("/")
    return tuple(sorted(real))


def homes_within(real_root: str) -> tuple[str, ...]:
    """Each home that is the root (at the real host path ``real_root``,
    ``"."``) or lies inside it, relative to the root."""
    root = real_root.rstrip("/") or "/"
    prefix = root if root == "/" else root + "/"
    return tuple("." if home == root else home[len(prefix):] for home in _homes()
                 if home == root or home.startswith(prefix))


def homes_around(real_root: str) -> tuple[tuple[str, str], ...]:
    """Each home the root (at the real host path ``real_root``) lies
    inside, below its top (``~/projects/x``): the home's real path, and
    the root's path relative to it."""
    root = real_root.rstrip("/")
    return tuple((home, root[len(home) + 1:]) for home in _homes()
                 if root.startswith(home + "/"))


def home_path_dirs(real_root: str) -> tuple[str, ...]:
    """The ``bin/`` and ``.local/bin/`` of each home that is the root (at
    the real host path ``real_root``) or lies inside it, and its other
    :data:`HOME_RUN_PLACES`, relative to the root."""
    return tuple(name if home == "." else f"{home}/{name}"
                 for home in homes_within(real_root) for name in HOME_RUN_PLACES)


def lies_in_protected_place(real_root: str, protect: Sequence[str]) -> bool:
    """Whether the root at the real host path ``real_root`` is, or lies
    inside, a directory the patterns ``protect`` (the default host rules,
    read from ``/``) name as a whole, or one of a home's
    :data:`HOME_RUN_PLACES` (``bin/``, ``.rbenv/``): everything in it is
    then protected, as it would be from a root above it."""
    parts = [part for part in real_root.split("/") if part]
    if not parts:
        return False
    if _under_home_path_dir(real_root):
        return True
    rules = _policy(tuple(protect))
    return any(rules.rule("/".join(parts[:end]), Op.MKDIR) is not None
               for end in range(1, len(parts) + 1))


def _under_home_path_dir(real_root: str) -> bool:
    root = fold(real_root.rstrip("/"))
    for home, places in _folded_run_places(_homes()):
        if not root.startswith(home + "/"):
            continue
        if any(root == place or root.startswith(place + "/") for place in places):
            return True
    return False


@lru_cache(maxsize=2)
def _folded_run_places(homes: tuple[str, ...]) -> tuple[tuple[str, tuple[str, ...]], ...]:
    """Each home folded, with its :data:`HOME_RUN_PLACES` folded: worked
    out once for the homes known (every root opened asks)."""
    return tuple((fold(home), tuple(fold(f"{home}/{name}") for name in HOME_RUN_PLACES))
                 for home in homes)


@lru_cache(maxsize=4)
def _policy(protect: tuple[str, ...]) -> Policy:
    return Policy(protect=protect, secrets=(), allow_git_writes=True)


def protects_host_configs(protect: Iterable[str], host: Iterable[str]) -> tuple[str, ...]:
    """The patterns of ``host`` that ``protect`` holds (the default host
    rules a policy keeps)."""
    held = set(protect)
    return tuple(pattern for pattern in host if pattern in held)
