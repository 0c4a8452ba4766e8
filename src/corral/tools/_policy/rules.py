"""The host's rules for what the tools may touch, and the safe defaults.

Three kinds of rule, each a list of gitignore-style patterns matched against
the *canonical* root-relative path a call resolved to (never the spelling),
folded so that names a case-insensitive or normalising filesystem treats as
one match as one (``.GIT`` = ``.git``, NFD = NFC, the ignorable code
points dropped):

* ``deny``: nothing is read, listed, searched or changed there, and its
  names never appear in an answer (counts only).
* ``protect``: readable, but never written, edited, moved (either end),
  deleted or created: files the host runs on its own (``.git/`` hooks and
  config, direnv's ``.envrc``, editor and agent settings that start
  commands).  ``allow_git_writes`` lifts the ``.git`` part alone.
* ``secrets``: plain secret files (``.env``, private keys, credential
  stores): not read, searched, edited, moved away or replaced; searches skip
  them and say so by count.

With no policy argument a :class:`~corral.tools.Toolbox` applies
:meth:`Policy.default`; ``Policy.none()`` is no rule at all.  The lists and
why each entry is there are in the README's "Safe defaults" section.
"""

from __future__ import annotations

import enum
import fnmatch
import os
import re
import sys
import unicodedata
import warnings
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field, replace
from functools import cached_property, lru_cache
from typing import Any, Generic, NamedTuple, TypeVar


from .._refusals.catalogue import Kind

__all__ = ["Policy", "Scope", "Op", "GIT_PROTECT", "HOST_CONFIG_PROTECT", "DEFAULT_PROTECT",
           "DEFAULT_SECRETS", "fold"]


class Op(str, enum.Enum):
    """What a call does to a location (the verb a refusal names)."""

    READ = "read"
    SEARCH = "search"
    LIST = "list"
    CREATE = "create"  # a new file
    REPLACE = "replace"  # an existing file, by a write or a move onto it
    EDIT = "edit"
    MOVE_FROM = "move"
    MOVE_TO = "move onto"  # a name nothing holds yet
    DELETE = "delete"
    MKDIR = "create directories in"

    @property
    def mutates(self) -> bool:
        return self in _MUTATING

    def __str__(self) -> str:
        return self.value


_MUTATING = frozenset({Op.CREATE, Op.REPLACE, Op.EDIT, Op.MOVE_FROM, Op.MOVE_TO, Op.DELETE,
                       Op.MKDIR})
# What a secret file refuses: whatever reveals, relocates or destroys its
# content (creating a file by such a name, or deleting one, is allowed).
_SECRET_OPS = frozenset({Op.READ, Op.SEARCH, Op.EDIT, Op.MOVE_FROM, Op.REPLACE})


# Everything git runs or reads as configuration: hooks, config
# (core.fsmonitor, core.hooksPath, filters, aliases), info/attributes...
GIT_PROTECT: tuple[str, ...] = ("**/.git",)

# Configuration a host program runs on its own, without the user asking for
# that file to run (the README's "Safe defaults" says which attack each stops).
HOST_CONFIG_PROTECT: tuple[str, ...] = (
    "**/.envrc",                      # direnv: sourced by the shell on cd
    "**/.vscode/tasks.json",          # VS Code: tasks with runOn: folderOpen
    "**/.vscode/settings.json",       # VS Code: executable paths, terminal env, auto-approve
    "**/.vscode/launch.json",         # VS Code: debug configurations, preLaunchTask
    "**/.vscode/mcp.json",            # VS Code: MCP servers (commands) it starts
    "**/*.code-workspace",            # VS Code: workspace settings, tasks and launch in one
    "**/.cursor/mcp.json",            # Cursor: MCP servers
    "**/.cursor/environment.json",    # Cursor: background agent install/start commands
    "**/.claude/settings.json",       # Claude Code: hooks (commands), permissions
    "**/.claude/settings.local.json",
    # Claude Code: skills and custom commands (allowed-tools granted without
    # asking, !`command` lines run as they load) and subagents (tools,
    # permissionMode, hooks), picked by the agent on its own
    "**/.claude/skills",
    "**/.claude/commands",
    "**/.claude/agents",
    "**/.mcp.json",                   # Claude Code: project MCP servers
    "**/.gemini/settings.json",       # Gemini CLI: MCP servers, tool discovery commands
    "**/.codex/config.toml",          # Codex: MCP servers, sandbox and approval settings
    "**/.zed/settings.json",          # Zed: language server binaries and their arguments
    "**/.zed/tasks.json",
    "**/.idea/workspace.xml",         # JetBrains: run configurations, startup tasks
    "**/.idea/runConfigurations",
    "**/.idea/watcherTasks.xml",      # JetBrains: file watchers, a program run on each change
    "**/.idea/startup.xml",           # JetBrains: run configurations run as the project opens
    "**/.run",                        # JetBrains: shared run configurations
    "**/.devcontainer",               # Dev Containers: initializeCommand runs on the host
    "**/.devcontainer.json",
    # cloud workspaces: commands run as one starts, with the user's git
    # credentials (a Gitpod prebuild runs init on its own for a new commit)
    "**/.gitpod.yml",                 # Gitpod: tasks' before, init, command
    "**/.gitpod/automations.yaml",    # Gitpod Flex (Ona): tasks run postDevcontainerStart
    "**/.gitpod/automations.yml",
    "**/.idx/dev.nix",                # Firebase Studio (IDX): onCreate, onStart, previews
    "**/.codesandbox/tasks.json",     # CodeSandbox: setupTasks, tasks runAtStart
    "**/.replit",                     # Replit: onBoot runs as the Repl boots
    "**/.husky",                      # husky: git hook scripts (core.hooksPath=.husky)
    "**/.githooks",                   # the usual core.hooksPath directory
    "**/.pre-commit-config.yaml",     # pre-commit: local hooks are commands, run on commit
    "**/lefthook.yml",                # lefthook: commands run on git hooks
    "**/lefthook.yaml",
    "**/.lefthook.yml",
    "**/.lefthook.yaml",
    "**/lefthook-local.yml",
    "**/lefthook-local.yaml",         # lefthook reads each name in YAML, TOML and JSON
    "**/.lefthook-local.yml",
    "**/.lefthook-local.yaml",
    "**/lefthook.toml",
    "**/.lefthook.toml",
    "**/lefthook-local.toml",
    "**/.lefthook-local.toml",
    "**/lefthook.json",
    "**/.lefthook.json",
    "**/lefthook-local.json",
    "**/.lefthook-local.json",
    "**/lefthook.jsonc",
    "**/.lefthook.jsonc",
    "**/lefthook-local.jsonc",
    "**/.lefthook-local.jsonc",
    "**/.lefthook",                   # lefthook: the scripts a hook runs (.lefthook/<hook>/)
    "**/.lefthook-local",
    "**/.cursor/hooks.json",          # Cursor: shell commands run around the agent loop
    "**/opencode.json",               # opencode: local MCP servers (commands), started at launch
    "**/opencode.jsonc",
    "**/.opencode/opencode.json",
    "**/.opencode/opencode.jsonc",
    "**/.opencode/plugin",            # opencode: JS/TS plugins, loaded (run) at launch
    "**/.opencode/plugins",
    "**/.opencode/tool",              # opencode: custom tools, JS/TS modules imported at launch
    "**/.opencode/tools",
    # opencode: agents and commands, as Claude Code's: front matter sets a
    # subagent's tools and permissions (picked on its own), !`cmd` runs
    "**/.opencode/agent",
    "**/.opencode/agents",
    "**/.opencode/command",
    "**/.opencode/commands",
    "**/kilo.json",                   # Kilo Code (an opencode fork): MCP servers, plugins
    "**/kilo.jsonc",
    "**/.kilo/kilo.json",
    "**/.kilo/kilo.jsonc",
    "**/.kilo/plugin",
    "**/.kilo/plugins",
    "**/.kilo/tool",
    "**/.kilo/tools",
    "**/.kilo/agent",
    "**/.kilo/agents",
    "**/.kilo/command",
    "**/.kilo/commands",
    "**/.kilocode/mcp.json",          # Kilo Code's extension: MCP servers, as Roo Code's
    # Kilo Code's legacy project folder, read as .kilo/: plugins registered
    # at startup, agents and commands as opencode's
    "**/.kilocode/plugin",
    "**/.kilocode/plugins",
    "**/.kilocode/tool",
    "**/.kilocode/tools",
    "**/.kilocode/agent",
    "**/.kilocode/agents",
    "**/.kilocode/command",
    "**/.kilocode/commands",
    # Kilo Code's Agent Manager: the setup script it runs as it makes an agent's worktree
    "**/.kilo/setup-script",
    "**/.kilo/setup-script.*",
    "**/.kilocode/setup-script",
    "**/.kilocode/setup-script.*",
    "**/.cursor/cli.json",            # Cursor CLI: permissions.allow (Shell(**)) runs unasked
    "**/.cursor/worktrees.json",      # Cursor: setup commands run as it makes an agent's worktree
    "**/.gemini/extensions",          # Gemini CLI: workspace extensions' MCP servers, at start
    "**/.junie/mcp/mcp.json",         # JetBrains Junie: project MCP servers
    # OpenHands: setup.sh runs as it starts on the repository, pre-commit.sh
    # becomes its sessions' git hook, hooks.json's commands run at its events
    "**/.openhands/setup.sh",
    "**/.openhands/pre-commit.sh",
    "**/.openhands/hooks.json",
    # Factory's Droid: hook commands run at its events, project MCP servers
    "**/.factory/hooks.json",
    "**/.factory/hooks/hooks.json",
    "**/.factory/settings.json",
    "**/.factory/settings.local.json",
    "**/.factory/mcp.json",
    # Amp: workspace settings override the user's (amp.permissions, amp.dangerouslyAllowAll)
    "**/.amp/settings.json",
    "**/.amp/settings.jsonc",
    # Augment and Tabnine CLI: project hooks (commands) applied to every contributor
    "**/.augment/settings.json",
    "**/.augment/settings.local.json",
    "**/.tabnine/agent/settings.json",
    "**/.lintstagedrc",               # lint-staged (husky's usual hook): commands run on commit
    "**/.lintstagedrc.*",
    "**/lint-staged.config.*",
    "**/.aider.conf.yml",             # aider: lint-cmd / test-cmd, run after every edit
    "**/site-packages/*.pth",         # Python: 'import' lines run at every interpreter start
    "**/pyvenv.cfg",                  # a venv: 'home' says where its interpreter's stdlib is
    # Python: imported at every interpreter start from any directory on
    # sys.path (an editable install's .pth puts the project's own src there)
    "**/sitecustomize.py",
    "**/sitecustomize",
    "**/usercustomize.py",
    "**/usercustomize",
    "**/.kiro/hooks",                 # Kiro: agent hooks (commands) run on file events
    "**/.kiro/settings/mcp.json",     # Kiro: MCP servers
    "**/.roo/mcp.json",               # Roo Code: MCP servers
    "**/.amazonq/mcp.json",           # Amazon Q Developer: MCP servers
    # Amazon Q and Kiro CLI: a project agent overrides the user's agent of
    # its name; its hooks (agentSpawn) run commands, allowedTools run unasked
    "**/.amazonq/cli-agents",
    "**/.kiro/agents",
    "**/.continue/mcpServers",        # Continue: MCP server definitions
    "**/.exrc",                       # vim/neovim 'exrc': sourced when the editor starts here
    "**/.nvimrc",
    "**/.nvim.lua",
    "**/.dir-locals.el",              # Emacs: directory variables (eval: forms) on file open
    "**/.dir-locals-2.el",
    "**/.github/hooks",               # GitHub Copilot CLI: hooks' bash lines, loaded from the cwd
    "**/.clinerules/hooks",           # Cline: hook scripts run on task and tool events
    "**/.windsurf/hooks.json",        # Windsurf: Cascade hooks (commands)
    "**/.qwen/settings.json",         # Qwen Code: MCP servers (commands), as Gemini CLI's
    # mise: [hooks] and [env] _.source run in the shell at cd; a config is
    # trusted by its path, so a trusted file changed runs without asking
    "**/mise.toml",
    "**/mise.*.toml",
    "**/.mise.toml",
    "**/.mise.*.toml",
    "**/.mise/config.toml",
    "**/.mise/config.*.toml",
    "**/mise/config.toml",
    "**/mise/config.*.toml",
    "**/.config/mise.toml",
    "**/.config/mise.*.toml",
    "**/.config/mise/config.toml",
    "**/.config/mise/config.*.toml",
    "**/.config/mise/conf.d",
    "**/.mise/conf.d",
    "**/.rtx.toml",                   # mise's former name, still loaded
    "**/.rtx.*.toml",
    "**/.helix/languages.toml",       # Helix: language servers started as a file opens
    "**/.helix/config.toml",          # Helix: keys bound to shell commands
    "**/.crush.json",                 # Crush: MCP and language servers (commands) it starts
    "**/crush.json",
    "**/.hg/hgrc",                    # Mercurial: hooks (pre-<command>), extensions
    "**/.jj/repo/config.toml",        # Jujutsu: pager, diff and merge tools it runs
) + (
    # What a login or interactive shell, ssh, git, an editor or a desktop
    # session reads from a user's home and runs: by name wherever it lies
    # (a root at a home or above the homes, a dotfiles checkout the home
    # links or stows to); no project keeps a file of these names for
    # another use.  A home's bin/ is protected only where it is a home
    # (homes.py): a project's own bin/ stays writable.
    "**/.bashrc",                     # bash: sourced by every interactive shell
    "**/.bash_profile",               # bash: login shells
    "**/.bash_login",
    "**/.bash_logout",
    "**/.bash_aliases",               # sourced by the .bashrc most distributions ship
    "**/.profile",                    # sh, dash, bash, ksh: login shells; sets PATH
    "**/.zshrc",                      # zsh: .zshenv runs for every zsh, scripts too
    "**/.zshenv",
    "**/.zprofile",
    "**/.zlogin",
    "**/.zlogout",
    "**/.kshrc",
    "**/.mkshrc",
    "**/.cshrc",                      # csh, tcsh
    "**/.tcshrc",
    "**/.login",
    "**/.logout",
    "**/.config/fish",                # fish: config.fish, conf.d/, functions/
    "**/.inputrc",                    # readline: macros typed into the shell
    "**/.config/environment.d",       # systemd: the session's environment (PATH)
    "**/.pam_environment",
    "**/.xprofile",                   # X sessions: run at graphical login
    "**/.xinitrc",
    "**/.xsession",
    "**/.xsessionrc",
    "**/.config/autostart",           # desktop sessions: programs started at login
    "**/.config/systemd/user",        # systemd user services
    "**/.ssh",                        # ssh: config (ProxyCommand, LocalCommand, Match exec),
    #                                   authorized_keys (command=), rc, environment
    "**/.gitconfig",                  # git: the user's config (core.fsmonitor, aliases...)
    "**/.config/git",                 # git: config, attributes (filters), hooks people keep
    "**/.direnvrc",                   # direnv: sourced before every .envrc
    "**/.config/direnv",
    "**/.vimrc",                      # vim, neovim, emacs: read at every start
    "**/.gvimrc",
    "**/.vim",
    "**/.config/nvim",
    "**/.emacs",
    "**/.emacs.el",
    "**/.emacs.d",
    "**/.config/emacs",
    "**/.tmux.conf",                  # tmux, screen: run-shell, default-command
    "**/.config/tmux",
    "**/.screenrc",
    "**/.ipython",                    # IPython: a profile's config and startup/ run at every start
    "**/.Rprofile",                   # R: sourced at start (the working directory's first)
    "**/.irbrc",                      # irb, pry: Ruby run at start
    "**/.pryrc",
    "**/.gdbinit",                    # gdb: commands (shell, python) run at start
    "**/.psqlrc",                     # psql: \! runs a shell command at start
    "**/.aws/config",                 # AWS CLI and SDKs: credential_process runs a command
    "**/.kube/config",                # kubectl: a user's exec plugin runs at every call
    "**/.gnupg",                      # gpg: gpg-agent.conf's pinentry-program (a signed commit)
    "**/.terraformrc",                # terraform: provider dev_overrides and mirrors it runs
    "**/terraform.rc",
    "**/.hgrc",                       # Mercurial, the user's: hooks (pre-<command>), extensions
    "**/.config/hg",
    "**/.config/powershell",          # pwsh: profile.ps1, Microsoft.PowerShell_profile.ps1 at start
    "**/.config/nushell",             # nu: config.nu, env.nu at start
    "**/.xonshrc",                    # xonsh: rc.xsh, rc.d/ at start
    "**/.config/xonsh",
    "**/.config/starship.toml",       # starship: [custom.x] command runs at every prompt
    "**/.config/gh",                  # gh: config.yml's pager, editor, browser; hosts.yml's token
    "**/ansible.cfg",                 # ansible, read from where it runs: vault_password_file and
    "**/.ansible.cfg",                #   inventory name executables run at every ansible-playbook
    "**/.aws/credentials",            # merged into .aws/config's profiles: credential_process
    "**/.docker/cli-plugins",         # docker: searched before the system's (docker-compose)
    "**/.sqliterc",                   # sqlite3: .shell, .system at start
    "**/.pdbrc",                      # pdb: read at every start from the home and where it runs
    "**/.config/kitty",               # terminal emulators: the shell or command a window starts,
    "**/.config/alacritty",           #   and wezterm's config is Lua run at start
    "**/.wezterm.lua",
    "**/.config/wezterm",
    "**/.config/ghostty",
    "**/.tmux",                       # tmux: tpm's plugins, run by the line tpm puts in .tmux.conf
    "**/.config/gdb",                 # gdb: gdbinit (read before .gdbinit), gdbearlyinit
    "**/.gdbearlyinit",
    "**/.lldbinit",                   # lldb: platform shell, script at every start
    "**/.lldbinit-*",
    "**/.config/vim",                 # vim 9.1: vimrc read from here as from .vimrc
    "**/.psqlrc-*",                   # psql: .psqlrc-<major>[.<minor>] read in .psqlrc's place
    "**/.config/irb",                 # irb: irbrc; irb.rc and _irbrc from where it runs
    "**/irb.rc",
    "**/_irbrc",
    "**/.config/pry",                 # pry: pryrc
    "**/.config/sqlite3",             # sqlite3: sqliterc where .sqliterc is missing
    # REPLs' startup files, run at every start (from the home, some from
    # where they run too): Julia, GHCi (:! runs a shell), IEx, Erlang,
    # SBCL, the OCaml toplevel, Octave, Guile
    "**/.julia/config/startup.jl",
    "**/.ghci",
    "**/.ghc/ghci.conf",
    "**/.config/ghc/ghci.conf",
    "**/.iex.exs",
    "**/.erlang",
    "**/.sbclrc",
    "**/.ocamlinit",
    "**/.octaverc",
    "**/.guile",
    # less: a lesskey file's #env wins over the environment (LESSOPEN runs
    # a program at every less, man, git pager); lesspipe runs lessfilter
    "**/.lesskey",
    "**/.config/lesskey",
    "**/.less",
    "**/.lessfilter",
    "**/.config/lessfilter",
    # curl, wget: a proxy with checks off, or an output file, at every
    # fetch (curl https://install.sh | sh runs what the proxy sends)
    "**/.curlrc",
    "**/_curlrc",
    "**/.wgetrc",
    "**/.config/wget",
    "**/.muttrc",                     # mutt: source "cmd|" runs cmd at start
    "**/.mutt",
    "**/.config/mutt",
    "**/.mailcap",                    # the programs an attachment is viewed with
    "**/.config/uv",                  # uv: uv.toml's index-url, as pip.conf's
    "**/.jupyter",                    # Jupyter: *_config.py, Python run by jupyter lab
    "**/.local/share/jupyter",        # Jupyter: a kernel spec's argv, run as a notebook opens
    "**/.config/jj",                  # Jujutsu, the user's: ui.pager at every jj log
    "**/.jjconfig.toml",
    "**/.config/lazygit",             # lazygit: the pager, custom commands
    "**/.config/bat",                 # bat: its --pager, run at every bat
    "**/.config/ranger",              # ranger: commands.py loaded at start, rc.conf's shell
    "**/.Renviron",                   # R: R_PROFILE_USER, R_LIBS_USER at every start
    "**/.config/micro",               # micro: init.lua at start
    "**/.config/kak",                 # Kakoune: %sh{} in kakrc at start
    "**/.config/zellij",              # zellij: default_shell, layouts' commands
    "**/.config/foot",                # foot: the shell a window starts
    # window managers: exec lines run at login (and on reload)
    "**/.config/i3",
    "**/.config/sway",
    "**/.config/hypr",
    "**/.config/bspwm",
    "**/.config/awesome",
    "**/.config/openbox",
    "**/.config/qtile",               # config.py, autostart.sh: Python and shell at login
    "**/.xmonad",                     # xmonad.hs, compiled and run at login
    "**/.config/xmonad",
    "**/.config/sxhkd",               # every key binding is a shell command
    "**/.config/herbstluftwm",        # autostart is a script
    "**/.config/labwc",
    "**/.config/river",               # init is a script
    "**/.config/niri",
    "**/.config/leftwm",
    "**/.config/wayfire.ini",
    "**/.config/xfce4/xinitrc",
    "**/.config/lxsession",
    "**/.fluxbox",
    "**/.icewm",
    # KDE runs these folders' scripts at login, at session start and at logout
    "**/.config/autostart-scripts",
    "**/.config/plasma-workspace/env",
    "**/.config/plasma-workspace/shutdown",
    # shell frameworks: the next shell sources their scripts (custom/*.zsh by glob)
    "**/.oh-my-zsh",
    "**/.oh-my-bash",
    "**/.bash_it",
    "**/.zprezto",
    "**/.zinit",
    # xdg-open: mimeapps.list picks a desktop entry, whose Exec= it runs
    "**/.config/mimeapps.list",
    "**/.config/*-mimeapps.list",
    "**/.local/share/applications",
    # secrets too (refused as such): made new, they name what runs
    "**/.docker/config.json",         # docker: cliPluginsExtraDirs, credsStore, credHelpers
    "**/.pypirc",                     # twine: repository, sent the token it asks for
    # what an editor or agent runs from a home at its start: installed
    # extensions' code, user settings naming programs, servers and plugins
    "**/.vscode/extensions",
    "**/.vscode-server",
    "**/.vscode-oss/extensions",
    "**/.cursor/extensions",
    "**/.cursor-server",
    "**/.windsurf/extensions",
    "**/.config/Code/User",
    "**/.config/Code - Insiders/User",
    "**/.config/Cursor/User",
    "**/.config/VSCodium/User",
    "**/.config/Windsurf/User",
    "**/Library/Application Support/Code/User",
    "**/Library/Application Support/Cursor/User",
    "**/Library/Application Support/VSCodium/User",
    "**/.config/zed",
    "**/.config/helix",
    "**/.config/goose",
    "**/.continue/config.yaml",
    "**/.continue/config.json",
    "**/.continue/config.ts",
    "**/.config/opencode",
    "**/.local/share/nvim/site",
) + (
    # The user's own tool configs that make a later, common command run
    # code the model chose: a program it runs, the place it takes packages
    # from, the interpreter a version file picks.  By name anywhere: the
    # tools read them from a home, a venv's top, each package of a
    # monorepo and every directory above the one a command runs in.
    "**/.npmrc",                      # npm, pnpm: script-shell, node-options, git, pnpmfile
    "**/.yarnrc",                     # yarn 1: yarn-path, a JS file run as yarn itself
    "**/.yarnrc.yml",                 # yarn: yarnPath, plugins (JS loaded at every command)
    "**/.pnpmfile.cjs",               # pnpm: hooks run at every install
    "**/.pnpmfile.mjs",
    "**/pnpm-workspace.yaml",         # pnpm 10, 11: .npmrc's settings (scriptShell, nodeOptions,
    #                                   pnpmfile), read there and no longer from .npmrc
    "**/.config/pnpm",                # pnpm's user config (config.yaml, rc): the same, everywhere
    "**/bunfig.toml",                 # bun: preload scripts, the registry installs take from
    "**/.bunfig.toml",
    "**/.cargo",                      # cargo: config (rustc-wrapper, runner, [env]), env
    #                                   (sourced by the profile), bin/ (on PATH), crates' code
    "**/pip.conf",                    # pip: index-url, find-links (a wheel the model left)
    "**/pip.ini",
    "**/.condarc",                    # conda: channels
    "**/.gemrc",                      # gem: sources, options given to every gem command
    "**/.m2",                         # maven: settings.xml (mirrors), the jars builds run
    "**/.gradle",                     # gradle: init scripts run by every build, properties, jars
    "**/.config/go",                  # go: env (GOFLAGS=-toolexec runs a program at each build)
    "**/.tool-versions",              # asdf, mise: "python path:./x" runs x for python
    "**/.python-version",             # uv: a path picks the interpreter its venvs run
    "**/rust-toolchain.toml",         # rustup: [toolchain] path, the cargo and rustc every
    "**/rust-toolchain",              #   command below runs (found walking up, as uv's files)
    "**/uv.toml",                     # uv: index-url, find-links (what uv pip install takes)
    "**/global.json",                 # .NET: sdk.paths, the SDK every dotnet command runs
    "**/.nvm",                        # what installers source in the shell or put on PATH
    "**/.bun",
    "**/.deno",
    "**/.pyenv",
)

DEFAULT_PROTECT: tuple[str, ...] = GIT_PROTECT + HOST_CONFIG_PROTECT

DEFAULT_SECRETS: tuple[str, ...] = (
    "**/.env",                        # dotenv files: API keys, database passwords
    "**/.env.*",
    "!**/.env.example",               # ... except the templates meant to be read and shared
    "!**/.env.*.example",
    "!**/.env.sample",
    "!**/.env.*.sample",
    "!**/.env.template",
    "!**/.env.*.template",
    "!**/.env.dist",
    "!**/.env.defaults",
    "**/id_rsa",                      # SSH private keys (the .pub halves stay readable)
    "**/id_dsa",
    "**/id_ecdsa",
    "**/id_ecdsa_sk",
    "**/id_ed25519",
    "**/id_ed25519_sk",
    "**/*.pem",                       # TLS/PKCS keys and bundles
    "**/*.key",
    "**/*.p12",
    "**/*.pfx",
    "**/.netrc",                      # credential stores read by curl, git, pip...
    "**/_netrc",
    "**/.pgpass",
    "**/.git-credentials",
    "**/.pypirc",
    "**/.aws/credentials",
    "**/.docker/config.json",
    "**/.htpasswd",
    "**/*.tfstate",                   # Terraform state holds every secret in plain text
    "**/*.tfstate.backup",
    "**/gha-creds-*.json",            # google-github-actions/auth's credentials in the workspace
)

# Code points a normalising disk ignores in names: HFS+'s (git's is_hfs_dotgit
# list: ".g\u200cit" is ".git" there) and every Default_Ignorable_Code_Point of
# Unicode's DerivedCoreProperties, which the Linux kernel's utf8 tables (ext4,
# f2fs and tmpfs casefolded directories) decompose to nothing: ".g\u00adit",
# a soft hyphen in it, is ".git" there
_IGNORABLE = dict.fromkeys([0x00AD, 0x034F, 0x061C, 0x115F, 0x1160, 0x17B4, 0x17B5,
                            *range(0x180B, 0x1810), *range(0x200B, 0x2010),
                            *range(0x202A, 0x202F), *range(0x2060, 0x2070), 0x3164,
                            *range(0xFE00, 0xFE10), 0xFEFF, 0xFFA0, *range(0xFFF0, 0xFFF9),
                            *range(0x1BCA0, 0x1BCA4), *range(0x1D173, 0x1D17B),
                            *range(0xE0000, 0xE1000)])


def _step_matches(name: str, step: str) -> bool:
    """Whether the folder ``name`` matches the pattern's step ``step``; a
    step without a wildcard only its own name (the default policy's all
    are: none is compiled to a regex at a Toolbox's start)."""
    if "*" in step or "?" in step or "[" in step:
        return fnmatch.fnmatchcase(name, step)
    return name == step


def _from_inside(patterns: tuple[str, ...], roots: Sequence[str]) -> tuple[str, ...]:
    """``patterns`` and, after each naming folders anywhere then a name
    below them (``**/.vscode/tasks.json``), the rest of it anchored at the
    root (``/tasks.json``) where the root lies in such folders (opened at
    ``proj/.vscode``, absolute paths ``roots``): the name a host opens from
    above the root is protected from inside it too."""
    places = [[fold(name) for name in root.split("/") if name] for root in roots]
    out: list[str] = []
    for pattern in patterns:
        out.append(pattern)
        negated = pattern.startswith("!")
        body = pattern[1:] if negated else pattern
        if not body.startswith("**/"):
            continue
        steps = body[3:].split("/")
        named = len(steps) - (steps[-1] == "")  # a trailing "/": directories only
        for k in range(1, named):
            above = [fold(step) for step in steps[:k]]
            if "**" in above:
                break
            if any(len(names) >= k and all(_step_matches(name, step)
                                           for name, step in zip(names[-k:], above))
                   for names in places):
                out.append(("!" if negated else "") + "/" + "/".join(steps[k:]))
    return tuple(out)  # in order: the last pattern that matches decides


# What a vfat, exFAT or Windows disk drops from the end of a name (".git."
# opens ".git" there), and the short (8.3) name vfat gives ".git", which git
# itself refuses as ".git" (core.protectNTFS)
_DROPPED_TAIL = re.compile(r"(?<=[^/. ])[. ]+(?=/|$)")
_SHORT_GIT = re.compile(r"(?:^|(?<=/))git~1(?=/|$)")


def _ends_search(suffixes: Sequence[str], prefixes: Sequence[str]) -> Callable[[str], object]:
    r"""A search of ``"\0" + names joined by "\0" + "\0"``, reversed, that
    finds something where a name ends with one of ``suffixes``, or with a
    dot or a space (it folds to more than its lower case), or starts with
    one of ``prefixes``: each name's end is then a literal right after a
    NUL (a prefix a look back from there), which the regex engine tests at
    the NULs alone, where a substring search per test reads every name."""
    ends = [re.escape(x[::-1]) for x in (*suffixes, ".", " ")]
    starts = [f"(?<={re.escape(x[::-1])}\0)" for x in prefixes]
    return re.compile("\0(?:" + "|".join(ends + starts) + ")").search


def fold(text: str) -> str:
    """One spelling for names a case-insensitive or normalising filesystem
    treats as one: NFC, case-folded, ignorable code points dropped, a
    name's trailing dots and spaces dropped, ``git~1`` read as ``.git``."""
    if text.isascii():
        folded = text.lower()
    else:
        folded = unicodedata.normalize("NFC", text.translate(_IGNORABLE)).casefold()
    if folded.endswith((".", " ")) or "./" in folded or " /" in folded:
        folded = _DROPPED_TAIL.sub("", folded)
    if "~1" in folded:
        folded = _SHORT_GIT.sub(".git", folded)
    return folded


class _Rules:
    """Gitignore-style patterns over folded paths, decided as git decides
    whether a path is ignored: from the top down, the last pattern matching
    a directory decides it, and a covered directory covers everything below
    it (a later ``!`` pattern cannot re-include what is inside).  A pattern
    matches one path exactly, never a descendant of it: ``!**/.env.example``
    re-includes a directory of that name, not the ``.env`` inside.

    A pattern can only match where a component matches its last name
    (``.env``, ``*.pem``, ``.env.*``), so a set of those names answers the
    common case (nothing matches) without running a pattern, and a level
    whose name no pattern can match is skipped: O(depth) name tests, the
    patterns run only at the levels they could match."""

    def __init__(self, patterns: Sequence[str]) -> None:
        lines = [fold(p) for p in patterns]
        self._lines = tuple(lines)
        self._names: set[str] = set()
        suffixes: list[str] = []
        prefixes: list[str] = []
        self._always = False
        for line in lines:
            if line.startswith(("!", "#")) or not line.strip():
                continue
            last, wild = _last_name(line)
            if not last or wild > 1 or (wild == 1 and "*" not in last):
                self._always = True
            elif wild == 0:
                self._names.add(last)
            elif last.startswith("*"):
                suffixes.append(last[1:])
            elif last.endswith("*"):
                prefixes.append(last[:-1])
            else:  # one '*' inside (gha-creds-*.json): a match starts with what precedes it
                prefixes.append(last[:last.index("*")])
        self._suffixes = tuple(suffixes)
        self._prefixes = tuple(prefixes)
        self._by_name: dict[str, tuple[tuple[re.Pattern[str], bool], ...]] = {}

    def name_may_match(self, name: str) -> bool:
        """Whether a pattern could match at the (folded) name ``name``."""
        return self._always or name in self._names or bool(
            (self._suffixes and name.endswith(self._suffixes))
            or (self._prefixes and name.startswith(self._prefixes)))

    def may_match(self, path: str) -> bool:
        return self._always or any(self.name_may_match(part) for part in path.split("/"))

    def match(self, path: str) -> bool:
        """Whether ``path`` (folded, no trailing '/') or an ancestor is covered."""
        return self.may_match(path) and self.decide(path)

    def decide(self, path: str) -> bool:
        """:meth:`match` without the quick test (the caller did it): each
        ancestor from the top, then the path itself (a directory or not:
        both are tried, so a directory-only pattern covers it too)."""
        end = -1
        while True:
            end = path.find("/", end + 1)
            prefix = path if end < 0 else path[:end]
            name = prefix[prefix.rfind("/") + 1:]
            if self.name_may_match(name) and self._covers(prefix):
                return True
            if end < 0:
                return False

    @cached_property
    def _patterns(self) -> tuple[_Pattern, ...]:
        """Each line's own compiled pattern (pathspec >= 1.0's "gitignore"
        dialect; a PathSpec's matcher is never used), last first: the last
        pattern that matches decides.  Compiled at the first name a quick
        test lets through, not at open: the defaults are some 200 regexes,
        most of a server's start, and most sessions never touch such a
        name.  A host's pattern that could not compile was refused when it
        was read (:func:`host_pattern`)."""
        import pathspec  # here: with its regex backends, a tenth of a server's start

        compiled = [(line, p) for line, p in zip(self._lines, map(_gitignore_pattern, self._lines))
                    if isinstance(p, pathspec.RegexPattern)]
        return tuple(_Pattern(_whole_path(p.regex), bool(p.include), _name_test(line))
                     for line, p in reversed(compiled)
                     if p.include is not None and p.regex is not None)

    def _candidates(self, name: str) -> tuple[tuple[re.Pattern[str], bool], ...]:
        """The patterns (last first) that could match a path whose last
        name is ``name``: a set of defaults holds some 200, and a name that
        passes the quick test is usually matched by one or two of them.
        Remembered per name, up to a bound (the names a session meets are
        few; a flood of new ones only starts the memory again)."""
        found = self._by_name.get(name)
        if found is None:
            found = tuple((p.regex, p.include) for p in self._patterns
                          if p.name_test is None or p.name_test.passes(name))
            if len(self._by_name) >= _CANDIDATES_REMEMBERED:
                self._by_name.clear()
            self._by_name[name] = found
        return found

    def _covers(self, prefix: str) -> bool:
        """Whether the last pattern matching ``prefix`` itself includes it."""
        as_dir = prefix + "/"
        for regex, include in self._candidates(prefix[prefix.rfind("/") + 1:]):
            if regex.fullmatch(prefix) or regex.fullmatch(as_dir):
                return include
        return False


_CANDIDATES_REMEMBERED = 4096


class _NameTest(NamedTuple):
    """What the last name of a path a pattern matches must be: exactly
    ``exact``, or start with ``head`` and end with ``tail``."""

    exact: str | None
    head: str
    tail: str

    def passes(self, name: str) -> bool:
        if self.exact is not None:
            return name == self.exact
        return name.startswith(self.head) and name.endswith(self.tail)


class _Pattern(NamedTuple):
    regex: re.Pattern[str]
    include: bool
    name_test: _NameTest | None  # None: a path ending in any name may match


def _name_test(line: str) -> _NameTest | None:
    """The test of a path's last name that the (folded) gitignore
    ``line`` needs to match the path, as :class:`_Rules`' quick test reads
    it, or ``None`` where the line can match whatever the last name is: one
    whose last name holds a class, a ``?``, an escape or more than one
    ``*``, or that ends in a space (gitignore's trailing-space rules).  A
    ``dir/**`` line fullmatches ``dir/`` alone (what lies below is covered
    by its ancestor), so its last name is ``dir``."""
    body = line[1:] if line.startswith("!") else line
    if body.endswith((" ", "\t")):
        return None
    last, wild = _last_name(body)
    if not last or wild > 1 or (wild == 1 and "*" not in last):
        return None
    if wild == 0:
        return _NameTest(last, "", "")
    star = last.index("*")
    return _NameTest(None, last[:star], last[star + 1:])


# folded, as names are compared: a case-insensitive disk finds JSON.py for json
_STANDARD_MODULES = frozenset(fold(name) for name in sys.stdlib_module_names)


def _shadows_standard_module(path: str, directory: str) -> bool:
    """Whether the folded ``path`` is a module ``import`` finds in
    ``directory`` before the standard library's of that name (``json.py``,
    ``json.pyc``, ``json.cpython-312-x86_64-linux-gnu.so``, a package's
    ``json/__init__.py``).  A directory without ``__init__`` there is a
    namespace package, which the standard library's module outranks: the
    user's ``test/`` or ``email/`` folder stays theirs."""
    if directory == ".":
        rest = path
    elif path.startswith(directory + "/"):
        rest = path[len(directory) + 1:]
    else:
        return False
    parts = rest.split("/")
    if len(parts) == 1:
        name, dot, _ = parts[0].partition(".")
        return bool(dot) and name in _STANDARD_MODULES
    return len(parts) == 2 and parts[1].startswith("__init__.") \
        and parts[0] in _STANDARD_MODULES


_MODULE_FILES = (".so", ".pyc", ".pyd")


def _module_sources(path: str) -> tuple[str, ...]:
    """The source file and package directory of the module whose other
    file ``import`` finds at the folded ``path``: an extension module
    (``x.so``, ``x.abi3.so``, ``x.cpython-312-x86_64-linux-gnu.so``: found
    before ``x.py``), a module without source (``x.pyc``) or a bytecode
    cache (``__pycache__/x.cpython-312.pyc``: run in place of ``x.py``);
    ``()`` for any other path."""
    if not path.endswith(_MODULE_FILES):
        return ()
    directory, _, name = path.rpartition("/")
    module = name.partition(".")[0]
    if not module:
        return ()
    if name.endswith(".pyc") and directory.rpartition("/")[2] == "__pycache__":
        directory = directory.rpartition("/")[0]
    prefix = f"{directory}/" if directory else ""
    return f"{prefix}{module}.py", f"{prefix}{module}"


def _last_name(line: str) -> tuple[str, int]:
    """A pattern's last name (``**`` aside) and how many wildcards it holds."""
    segments = [seg for seg in line.strip("/").split("/") if seg not in ("", "**")]
    last = segments[-1] if segments else ""
    return last, sum(last.count(c) for c in "*?[\\")


def host_pattern(pattern: str, roots: Sequence[str] = ()) -> str:
    """A host's pattern as the rules read it, or ``ValueError`` for one that
    could never apply (never silently ignored: a rule that matches nothing
    fails open).  Shell spellings are read as a shell user means them:
    ``./private`` and ``private/.`` are the root's ``private``
    (``/private``, ``/private/``), ``./private/**`` is ``private/**``.  With
    ``roots`` (the absolute paths the root is known by), an absolute path
    inside the root becomes the pattern anchored there; an absolute path
    elsewhere on the host is refused.  A ``/name`` whose ``/name`` does not
    exist on the host stays gitignore's anchored ``name``."""
    negated = pattern.startswith("!")
    body = pattern[1:] if negated else pattern
    if not body.strip() or body.startswith("#"):
        raise ValueError(f"policy pattern {pattern!r} matches nothing (blank, or a comment in "
                         "gitignore syntax: write \\# for a name starting with #)")
    if body.startswith("/") and roots:
        body = _root_relative(body, pattern, roots)
    dir_only = body.endswith(("/", "/.")) or body in (".", "./")
    anchored = body.startswith("/") or "/" in body.rstrip("/")
    parts = [part for part in body.split("/") if part not in ("", ".")]
    if ".." in parts:
        raise ValueError(f"policy pattern {pattern!r} has a '..' component: rules match "
                         "canonical paths inside the root, which never hold '..'")
    if not parts:
        raise ValueError(f"policy pattern {pattern!r} names the root itself (use read_only, "
                         "or a pattern such as '**' for everything in it)")
    clean = "/".join(parts)
    if body.startswith("/") or (anchored and len(parts) == 1):
        clean = "/" + clean  # an absolute path stays one until read against the root
    read = ("!" if negated else "") + clean + ("/" if dir_only else "")
    if "[" in read or "\\" in read:
        _compiles(read, pattern)
    return read


def _compiles(read: str, pattern: str) -> None:
    """``ValueError`` for a pattern the rules cannot compile, as folded,
    at open rather than in a later decision: a character class whose range
    ends before it starts (``[z-a]``, which git reads as matching nothing;
    ``[Z-a]`` once case-folded), a backslash that escapes nothing (``a\\``)."""
    try:
        _gitignore_pattern(fold(read))
    except re.error as exc:
        raise ValueError(f"policy pattern {pattern!r} has a character class the rules cannot "
                         f"read ({exc.msg}): write each range from low to high, in lower "
                         "case") from None
    except ValueError:  # pathspec's own refusal: a backslash left escaping nothing
        raise ValueError(f"policy pattern {pattern!r} is not one gitignore can read once "
                         "folded as names are (a backslash must escape a character, and a "
                         "name's trailing spaces are dropped: write \\\\ for a backslash "
                         "in a name)") from None


def _whole_path(regex: re.Pattern[str]) -> re.Pattern[str]:
    """``regex`` as the rules run it (``fullmatch`` of a path): pathspec
    makes the patterns naming everything (``*``, ``**``, ``*/``) unanchored
    regexes meant for a search (``.``, ``/``), which matched whole paths
    of one character only; such a one is made to match what its search
    finds anywhere in the path."""
    if regex.pattern.startswith("^"):
        return regex
    return re.compile(f"(?s).*(?:{regex.pattern}).*", regex.flags)


def _gitignore_pattern(line: str) -> Any:
    import pathspec.util  # here, as in Policy._patterns

    with warnings.catch_warnings():  # a literal '[' inside a class: not the host's concern
        warnings.simplefilter("ignore", FutureWarning)
        return pathspec.util.lookup_pattern("gitignore")(line)


def _root_relative(body: str, pattern: str, roots: Sequence[str]) -> str:
    for known in roots:
        root = known.rstrip("/")
        if not root:  # the root is the host's own /: every absolute path lies inside it
            return body
        if body == root or body.startswith(root + "/"):
            return "/" + body[len(root):].lstrip("/") if body != root else "/"
    first = body.lstrip("/").split("/", 1)[0]
    if first and os.path.lexists("/" + first):
        raise ValueError(f"policy pattern {pattern!r} is an absolute path outside the root "
                         f"({roots[0]}), where no rule applies; to anchor a pattern at the "
                         f"root, write it as './{body.lstrip('/')}'")
    return body


def host_patterns(patterns: Iterable[str], roots: Sequence[str] = ()) -> tuple[str, ...]:
    """:func:`host_pattern` of each (a single string is refused: it would
    be read as one pattern per character)."""
    return tuple(host_pattern(p, roots) for p in _patterns(patterns))


def _patterns(patterns: Iterable[str]) -> tuple[str, ...]:
    if isinstance(patterns, str):
        raise TypeError("policy patterns are a list of strings, not one string")
    return tuple(patterns)


def _read(patterns: Iterable[str]) -> tuple[tuple[str, ...], frozenset[str]]:
    """Each of ``patterns`` read by :func:`host_pattern`, and the read forms
    of those a host spelled as absolute paths (read against the root later)."""
    given = _patterns(patterns)
    read = tuple(host_pattern(p) for p in given)
    return read, frozenset(r for p, r in zip(given, read) if p.removeprefix("!").startswith("/"))


def _compiled(patterns: Sequence[str]) -> _Rules | None:
    return _rules(tuple(patterns)) if patterns else None


@lru_cache(maxsize=64)
def _rules(patterns: tuple[str, ...]) -> _Rules:
    """One :class:`_Rules` per list of patterns (it never changes once
    built): each root opened compiles the default list, and each policy
    a root's look extends (its places added) compiles its own."""
    return _Rules(patterns)


_DECIDED_MAX = 4096  # decisions remembered per policy (then forgotten at once)
_DECIDED_PATH_CHARS = 512  # longer paths are decided afresh each time
_CLEAR_RUNS_MAX = 1024  # runs of names remembered in all as matching no quick test (then forgotten)
_CLEAR_RUN_CHARS = 4096  # longer runs are tested afresh each time
_CLEAR_RUN_TESTS = 8  # sets of quick tests runs are remembered for (then forgotten)
# per set of quick tests, the runs of names joined by NUL found to match
# none: a pure function of the names and the tests, so a directory a search
# lists call after call is tested once; shared by every policy, so bounded
# as a whole.  A run is looked up as the joined string alone (no key tuple
# made and hashed per run: a first walk of a tree misses every time)
_CLEAR_RUNS: dict[str, set[str]] = {}  # keyed by _Quick.key
# the runs remembered in all, or more (a set emptied elsewhere is counted
# again at the next _remember_clear): the fast path adds while it is below
# the bound without summing the sets
_CLEAR_COUNT = [0]
_SCOPES_MAX = 1024  # directory scopes remembered per policy

K = TypeVar("K")
V = TypeVar("V")


class _Memo(Generic[K, V]):
    """What a policy decided, by (path, op): a decision depends on the path
    and the policy's rules alone (both fixed), so the paths a session keeps
    using are decided once.  Bounded: past ``cap`` entries all are forgotten
    at once, and a path longer than ``_DECIDED_PATH_CHARS`` is never kept."""

    __slots__ = ("_answers", "_cap")

    def __init__(self, cap: int) -> None:
        self._answers: dict[K, V] = {}
        self._cap = cap

    def recall(self, key: K, path: str, decide: Callable[[], V]) -> V:
        answers = self._answers
        try:
            return answers[key]
        except KeyError:
            pass
        value = decide()
        if len(path) <= _DECIDED_PATH_CHARS:
            if len(answers) >= self._cap:
                answers.clear()
            answers[key] = value
        return value

    def __len__(self) -> int:
        return len(self._answers)

    def __contains__(self, key: object) -> bool:
        return key in self._answers


@dataclass(frozen=True)
class Policy:
    """What the tools may touch (see the module doc).  Build one with
    :meth:`default`, :meth:`none` or :meth:`build`; ``protect_dirs`` are
    canonical directories protected as a whole (git directories a ``.git``
    file points to, found when a toolbox opens its root)."""

    protect: tuple[str, ...] = DEFAULT_PROTECT
    secrets: tuple[str, ...] = DEFAULT_SECRETS
    deny: tuple[str, ...] = ()
    allow_git_writes: bool = False
    protect_dirs: tuple[str, ...] = field(default=())
    #: canonical directories first on the sys.path of a Python program the
    #: host runs on its own: a name of the standard library's there is protected
    python_dirs: tuple[str, ...] = field(default=())
    base: str = ""  # where this policy's root is inside the root the patterns speak of
    #: other roots' rules that hold here too: (canonical directory in this
    #: root where that root lies, "" when this root lies inside it; its policy)
    nested: tuple[tuple[str, Policy], ...] = ()
    # whether absolute patterns were read against the root (Policy.rooted)
    is_rooted: bool = field(default=False, compare=False)
    #: the patterns (as read) a host spelled as absolute paths, read against
    #: the root when it is known; ``./etc`` reads as ``/etc`` too, but is the
    #: root's ``etc`` whatever the host has at its own ``/etc``
    absolute: frozenset[str] = field(default=frozenset(), compare=False)

    @classmethod
    def default(cls) -> Policy:
        return cls()

    @classmethod
    def none(cls) -> Policy:
        """No rule at all (``corral serve --no-default-policy``)."""
        return cls(protect=(), secrets=(), allow_git_writes=True)

    @classmethod
    def build(cls, *, defaults: bool = True, allow_git_writes: bool = False,
              protect: Iterable[str] = (), secrets: Iterable[str] = (),
              deny: Iterable[str] = ()) -> Policy:
        """The defaults (or nothing, ``defaults=False``) extended with more
        patterns: what the CLI flags ``--no-default-policy``,
        ``--allow-git-writes``, ``--protect GLOB``, ``--deny GLOB`` make.
        Each pattern is read by :func:`host_pattern` (``./x``, ``x/.``; an
        absolute path is made relative when a toolbox opens its root); one
        that could never apply is a ``ValueError``."""
        base = cls.default() if defaults else cls.none()
        (protect_r, protect_a), (secrets_r, secrets_a), (deny_r, deny_a) = \
            _read(protect), _read(secrets), _read(deny)
        return replace(base, protect=base.protect + protect_r,
                       secrets=base.secrets + secrets_r, deny=base.deny + deny_r,
                       allow_git_writes=allow_git_writes or not defaults,
                       absolute=base.absolute | protect_a | secrets_a | deny_a)

    def extended(self, *, deny: Iterable[str] = (), protect: Iterable[str] = (),
                 protect_dirs: Iterable[str] = (), python_dirs: Iterable[str] = ()) -> Policy:
        """This policy with more deny and protect patterns (read by
        :func:`host_pattern`), protected directories and directories a
        host-run Python program imports from (canonical paths in this
        policy's own root)."""
        (deny_r, deny_a), (protect_r, protect_a) = _read(deny), _read(protect)
        return replace(self, deny=self.deny + deny_r, protect=self.protect + protect_r,
                       absolute=self.absolute | deny_a | protect_a,
                       protect_dirs=self.protect_dirs + tuple(self._outer(d)
                                                               for d in protect_dirs),
                       python_dirs=self.python_dirs + tuple(self._outer(d)
                                                             for d in python_dirs))

    def rooted(self, roots: Sequence[str]) -> Policy:
        """Every pattern read against the absolute paths ``roots`` the root
        is known by (an absolute path inside it anchored, one outside a
        ``ValueError``): what a toolbox does once, when it opens its root."""
        if self.is_rooted:
            return self

        def read(patterns: tuple[str, ...]) -> tuple[str, ...]:
            return tuple(_from_inside(tuple(host_pattern(p, roots) if p in self.absolute else p
                                            for p in patterns), roots))
        return replace(self, protect=read(self.protect), secrets=read(self.secrets),
                       deny=read(self.deny), is_rooted=True)

    def beneath(self, base: str) -> Policy:
        """The same rules for a root opened at the canonical path ``base``
        inside this policy's root: every decision is made on ``base/path``,
        so a client root below a server root is held to the server's rules."""
        inner = base.strip("/")
        if inner in ("", "."):
            return self
        return replace(self, base=self._outer(inner))

    def holding(self, where: str, other: Policy) -> Policy:
        """This policy, and ``other``'s rules on everything at or below the
        canonical directory ``where`` ("": the whole root; ``other`` then
        decides on its own coordinates, e.g. :meth:`beneath`): what a
        workspace of nested roots gives each root, so a path reached through
        any root is held to every root's rules.  ``where`` itself and the
        directories above it may not be moved or deleted (the other root
        would lose its place)."""
        entry = (where.strip("/") if where not in (".", "./") else "", other.alone)
        if entry in self.nested:
            return self
        return replace(self, nested=self.nested + (entry,))

    @property
    def alone(self) -> Policy:
        """This policy without the rules of the roots it holds."""
        return replace(self, nested=()) if self.nested else self

    def _outer(self, canonical: str) -> str:
        if not self.base:
            return canonical
        return self.base if canonical in (".", "") else f"{self.base}/{canonical}"

    # -- decisions -------------------------------------------------------------
    @cached_property
    def _deny(self) -> _Rules | None:
        return _compiled(self.deny)

    @cached_property
    def _protect(self) -> _Rules | None:
        patterns = [p for p in self.protect if not (self.allow_git_writes and p in GIT_PROTECT)]
        return _compiled(patterns)

    @cached_property
    def _secrets(self) -> _Rules | None:
        return _compiled(self.secrets)

    @cached_property
    def _dirs(self) -> tuple[str, ...]:
        return () if self.allow_git_writes else tuple(fold(d) for d in self.protect_dirs)

    @cached_property
    def _python_dirs(self) -> tuple[str, ...]:
        return () if self.allow_git_writes else tuple(fold(d) for d in self.python_dirs)

    @cached_property  # the policy is frozen: asked on every decision
    def hides(self) -> bool:
        """Whether a listing or search may have to leave something out."""
        return (self._deny is not None or self._secrets is not None
                or any(other.hides for _, other in self.nested))

    @cached_property
    def guards_git(self) -> bool:
        """Whether git's own directories are protected (the default)."""
        return not self.allow_git_writes and any(p in GIT_PROTECT for p in self.protect)

    @cached_property
    def is_empty(self) -> bool:
        return not (self.hides or self._protect is not None or self._dirs or self._python_dirs
                    or self.nested)

    def may_refuse(self, op: Op) -> bool:
        """Whether some rule refuses ``op`` somewhere: a name leading to a
        place through a link may be any name, so only then can a link not
        known yet change a decision about ``op``."""
        if self._deny is not None:
            return True
        if op.mutates and (self._protect is not None or self._dirs or self._python_dirs
                           or self.nested):
            return True
        if op in _SECRET_OPS and self._secrets is not None:
            return True
        return any(other.may_refuse(op) for _, other in self.nested)

    @cached_property
    def _decided(self) -> _Memo[tuple[str, Op], Kind | None]:
        return _Memo(_DECIDED_MAX)

    def rule(self, canonical: str, op: Op) -> Kind | None:
        """The rule that refuses ``op`` on the canonical path ``canonical``
        (``Kind.DENY_RULE``, ``PROTECTED`` or ``SECRET``), or ``None``.
        Ancestors count: a pattern naming a directory covers what is in it."""
        return self._decided.recall((canonical, op), canonical,
                                    lambda: self._rule(canonical, op))

    def _rule(self, canonical: str, op: Op) -> Kind | None:
        kind = self._own_rule(canonical, op)
        if kind is None and self.nested:
            kind = self._nested_rule(canonical.rstrip("/") or ".", op)
        return kind

    def _nested_rule(self, canonical: str, op: Op) -> Kind | None:
        if canonical in (".", ""):
            return None
        path = fold(canonical)
        if self._pinned(canonical, op):
            return Kind.ANOTHER_ROOT  # a move or delete would carry another root away
        for where, other in self.nested:
            inside = _below(path, fold(where))
            if inside is not None:
                kind = other.rule(_tail(canonical, inside), op)
                if kind is not None:
                    return kind
        return None

    def _own_rule(self, canonical: str, op: Op) -> Kind | None:
        canonical = self._outer(canonical.rstrip("/") or ".")
        if canonical in (".", ""):
            return None
        path = fold(canonical)
        if self._deny is not None and self._deny.match(path):
            return Kind.DENY_RULE
        if op in _SECRET_OPS and self._secrets is not None and self._secrets.match(path):
            return Kind.SECRET
        if op.mutates and self._protected(path):
            # a secret also protected (.aws/credentials: made new, its
            # credential_process runs) is refused as a secret for every
            # change, so the kind never tells whether it exists
            if self._secrets is not None and self._secrets.match(path):
                return Kind.SECRET
            return Kind.PROTECTED
        return None

    def _protected(self, path: str) -> bool:
        if self._protect is not None and self._protect.match(path):
            return True
        if any(path == d or path.startswith(d + "/") for d in self._dirs) \
                or any(_shadows_standard_module(path, d) for d in self._python_dirs):
            return True
        # a file import finds a protected module in, beside or in place of its source
        return any(self._protected(source) for source in _module_sources(path))

    def visible(self, canonical: str, op: Op = Op.SEARCH) -> bool:
        """Whether an entry may be shown (listed, searched) at all."""
        return self.rule(canonical, op) is None

    def scope(self, canonical_dir: str, op: Op = Op.SEARCH) -> Scope:
        """The decisions for the entries of one directory (canonical path):
        ``scope.visible(name)`` costs one test of the name when the rules
        cannot match anywhere above it (a tree walk's common case)."""
        # remembered as rule() is (a scope is never changed once made)
        return self._scopes.recall((canonical_dir, op), canonical_dir,
                                   lambda: self._scope(canonical_dir, op))

    def _scope(self, canonical_dir: str, op: Op) -> Scope:
        own = self._own_scope(canonical_dir, op)
        if not self.nested:
            return own
        here = canonical_dir.rstrip("/") or "."
        path = "" if here in (".", "") else fold(here)
        others: list[Scope] = []
        above = False  # whether another root lies below this directory
        for where, other in self.nested:
            inside = _below(path, fold(where)) if path else ("." if not where else None)
            if inside is not None:
                others.append(other.scope(_tail(here, inside), op))
            elif not path or _below(fold(where), path) is not None:
                above = True
        if not others and not above:
            return own
        return _NestedScope(own, tuple(others), self, here, op)

    def _pinned(self, canonical: str, op: Op) -> bool:
        """Whether ``op`` on ``canonical`` would move or delete another root."""
        if op not in _PINNING_OPS:
            return False
        path = fold(canonical)
        return any(where and _below(fold(where), path) is not None
                   for where, _ in self.nested)

    def _own_scope(self, canonical_dir: str, op: Op) -> Scope:
        outer = self._outer(canonical_dir.rstrip("/") or ".")
        base = "" if outer in (".", "") else fold(outer)
        sets = [self._deny]
        if op.mutates:
            sets.append(self._protect)
        if op in _SECRET_OPS:
            sets.append(self._secrets)
        present = tuple(rules for rules in sets if rules is not None)
        checks = tuple((rules, bool(base) and rules.may_match(base)) for rules in present)
        dirs = self._dirs if op.mutates else ()
        quick = self._quicks.get(present)
        if quick is None:
            quick = self._quicks[present] = _Quick(present)
            if self._names_test:
                quick.adopt(self._names_test[0])
        return Scope(base, checks, dirs, quick,
                     shadowing=self._python_dirs if op.mutates else ())

    @cached_property
    def _scopes(self) -> _Memo[tuple[str, Op], Scope]:
        return _Memo(_SCOPES_MAX)

    @cached_property
    def _quicks(self) -> dict[tuple[_Rules, ...], _Quick]:
        return {}  # at most one per combination of the three rule sets

    @cached_property
    def _names_test(self) -> list[NamesTestMaker]:
        return []  # what makes the quick tests of a run of names (none: Python's own)

    def test_names_with(self, make: NamesTestMaker) -> None:
        """Have the quick name tests of a directory's run of names made by
        ``make`` (a backend's ``names_test``: one C call a run where the
        backend has one), here and in the other roots' policies this one
        holds.  Every maker gives the same answers, so a policy shared by
        toolboxes on different backends decides alike whichever it holds."""
        held = self._names_test
        if held and held[0] == make:
            return
        held[:] = [make]
        for quick in list(self._quicks.values()):
            quick.adopt(make)
        for _, other in self.nested:
            other.test_names_with(make)

    # -- what the host is told ------------------------------------------------------
    def describe(self) -> list[str]:
        """The effective policy, one line each (``corral serve`` prints these
        on stderr at start, ``corral doctor`` shows them)."""
        lines = []
        if self.allow_git_writes:
            lines.append("git: writes under .git/ allowed")
        else:
            extra = f" (and {', '.join(self.protect_dirs)})" if self.protect_dirs else ""
            lines.append(f"git: .git/ is read-only{extra} (lift: --allow-git-writes)")
            if self.python_dirs:
                lines.append("git: standard-library module names read-only beside the Python "
                             f"programs git runs ({', '.join(self.python_dirs)})")
        if self.base:
            lines.append(f"rules apply as beneath {self.base}/")
        for where, _ in self.nested:
            lines.append(f"another root's rules hold beneath {where}/ (not moved or deleted)"
                         if where else "another root's rules hold here")
        others = [p for p in self.protect if p not in GIT_PROTECT]
        lines.append(f"protected (read-only): {_listed(others)}")
        lines.append(f"secrets (not read or searched): {_listed(self.secrets)}")
        lines.append(f"denied (not touched at all): {_listed(self.deny)}")
        return lines

    def as_dict(self) -> dict[str, Any]:
        return {"protect": list(self.protect), "secrets": list(self.secrets),
                "deny": list(self.deny), "allowGitWrites": self.allow_git_writes,
                "protectedDirectories": list(self.protect_dirs),
                "pythonDirectories": list(self.python_dirs), "base": self.base}


# the ops that carry an entry away or put another in its place (a nested
# root's directory and those above it)
_PINNING_OPS = frozenset({Op.MOVE_FROM, Op.DELETE, Op.REPLACE})


def _below(path: str, top: str) -> str | None:
    """``path`` relative to ``top`` ("." when equal; both folded, "" is the
    root) if ``path`` is ``top`` or lies below it, else ``None``."""
    if not top:
        return path or "."
    if path == top:
        return "."
    if path.startswith(top + "/"):
        return path[len(top) + 1:]
    return None


def _tail(canonical: str, folded_rest: str) -> str:
    """The last components of ``canonical`` (as spelled) that ``folded_rest``
    (their folded form) has: folding may change a name's length, never the
    number of names."""
    if folded_rest == ".":
        return "."
    count = folded_rest.count("/") + 1
    return "/".join(canonical.split("/")[-count:])


def _listed(patterns: Sequence[str]) -> str:
    return ", ".join(p.removeprefix("**/") for p in patterns) if patterns else "none"


class _Quick:
    """The union of several rule sets' quick tests (:meth:`_Rules.name_may_match`):
    a folded name none of them can match at is passed over with three
    string tests."""

    __slots__ = ("always", "names", "suffixes", "prefixes", "tests", "key", "clear", "made_by")

    def __init__(self, sets: Sequence[_Rules]) -> None:
        self.always = any(r._always for r in sets)
        self.names = frozenset().union(*(r._names for r in sets))
        self.suffixes = tuple(x for r in sets for x in r._suffixes)
        self.prefixes = tuple(x for r in sets for x in r._prefixes)
        # the names, suffixes and prefixes a folded name may match, the suffix
        # and prefix tests (and what folds further) also as one search of a
        # run of names (:func:`_ends_search`; a file name holds no NUL), the
        # exact names one set test of the run; None: no name can match
        self.tests: _Tests | None = (
            (self.names, self.suffixes, self.prefixes, _ends_search(self.suffixes, self.prefixes))
            if self.names or self.suffixes or self.prefixes else None)
        # the tests spelled as one string (a repr: equal tests give equal
        # keys, different tests different ones): the runs found clear are
        # remembered under it, its hash made once, where a tuple of the
        # tests would be hashed afresh at every run
        self.key = repr((sorted(self.names), self.suffixes, self.prefixes))
        # the whole quick test of an ASCII run, made by a backend (in C
        # where it can: Policy.test_names_with); None: the tests above run
        self.clear: Callable[[str], bool] | None = None
        self.made_by: NamesTestMaker | None = None

    def adopt(self, make: NamesTestMaker) -> None:
        """Test runs of names with what ``make`` makes (the same answers)."""
        if self.tests is not None and self.made_by != make:
            self.clear = make(self.names, self.suffixes, self.prefixes)
            self.made_by = make


_Tests = tuple[frozenset[str], tuple[str, ...], tuple[str, ...], Callable[[str], object]]
#: a backend's ``names_test``: the quick tests of a run of names, made once
NamesTestMaker = Callable[[frozenset[str], Sequence[str], Sequence[str]], Callable[[str], bool]]


def _remember_clear(key: str, joined: str) -> None:
    """Remember that the run ``joined`` matches none of the quick tests
    spelled ``key`` (:attr:`_Quick.key`): the slow path of
    :meth:`Scope.visible_names`, taken for the first run of a set of tests
    and when the runs remembered in all reach the bound."""
    clear = _CLEAR_RUNS.get(key)
    if clear is None:
        if len(_CLEAR_RUNS) >= _CLEAR_RUN_TESTS:
            _CLEAR_RUNS.clear()
        clear = _CLEAR_RUNS[key] = set()
    # counted afresh here (the sets may have been emptied since)
    remembered = sum(map(len, _CLEAR_RUNS.values()))
    if remembered >= _CLEAR_RUNS_MAX:
        for runs in _CLEAR_RUNS.values():
            runs.clear()
        remembered = 0
    clear.add(joined)
    _CLEAR_COUNT[0] = remembered + 1


_new_scope = object.__new__


class Scope:
    """The policy's answers for the entries of one directory (see
    :meth:`Policy.scope`).  ``checks`` pairs each rule set with whether it
    may match at a directory above (then every entry is decided in full);
    when none may, a name costs the quick tests of :class:`_Quick`."""

    __slots__ = ("_prefix", "_checks", "_dirs", "_quick", "_quiet", "_shadowing")

    def __init__(self, base: str, checks: tuple[tuple[_Rules, bool], ...],
                 dirs: tuple[str, ...], quick: _Quick | None = None,
                 quiet: bool | None = None, shadowing: tuple[str, ...] = ()) -> None:
        self._prefix = base + "/" if base else ""
        self._checks = checks
        self._dirs = dirs
        self._shadowing = shadowing  # Policy.python_dirs (folded) where they count
        self._quick = quick if quick is not None else _Quick([rules for rules, _ in checks])
        self._quiet = (not dirs and not shadowing and not self._quick.always
                       and not any(a for _, a in checks) if quiet is None else quiet)

    def may_hide(self) -> bool:
        """Whether the rules may hide an entry of this directory, decided on
        the rules alone (never on what the directory holds)."""
        if not self._checks and not self._dirs and not self._shadowing:
            return False
        quick = self._quick
        return not self._quiet or quick.always or quick.tests is not None

    def _covered(self, path: str) -> bool:
        if any(path == d or path.startswith(d + "/") for d in self._dirs) \
                or any(_shadows_standard_module(path, d) for d in self._shadowing):
            return True
        # a file import finds a covered module in (Policy._protected's rule)
        return any(self._covered(source) for source in _module_sources(path))

    def visible(self, name: str) -> bool:
        """Whether the entry ``name`` of this directory may be shown."""
        if not self._checks and not self._dirs and not self._shadowing:
            return True
        folded = fold(name)
        path = self._prefix + folded
        for rules, above in self._checks:
            if (above or rules.name_may_match(folded)) and rules.decide(path):
                return False
        return not self._covered(path)

    # -- for walks (search engineer's additions) ------------------------------------
    def child(self, name: str) -> Scope | None:
        """The scope of the subdirectory ``name``, or ``None`` if that
        directory is not visible itself: one test of its name (a rule that
        matched no directory above it still can only match at a name)."""
        # a plain ASCII name folds to its lower case (fold() written out: a
        # walk asks this once a directory)
        folded = name.lower() if name.isascii() and not name.endswith((".", " ")) \
            and "~1" not in name else fold(name)
        path = self._prefix + folded
        quick = self._quick
        if self._quiet and not (folded in quick.names or folded.endswith(quick.suffixes)
                                or folded.startswith(quick.prefixes)):
            # the common case (a walk's every directory): the fields set
            # straight, without __init__'s call and its tests of what is known
            scope = _new_scope(Scope)
            scope._prefix = path + "/"
            scope._checks = self._checks
            scope._dirs = self._dirs
            scope._shadowing = ()
            scope._quick = quick
            scope._quiet = True
            return scope
        checks = []
        for rules, above in self._checks:
            hit = above or rules.name_may_match(folded)
            if hit and rules.decide(path):
                return None
            checks.append((rules, hit))
        if self._covered(path):
            return None
        return Scope(path, tuple(checks), self._dirs, quick, shadowing=self._shadowing)

    def visible_names(self, names: list[str]) -> list[str]:
        """The names among ``names`` that may be shown, in order (``visible``
        of each, in one pass over a directory's worth of names)."""
        if self._quiet:
            tests = self._quick.tests
            if tests is None:
                return names
            exact, suffixes, prefixes, ends = tests
            joined = "\0".join(names)
            if joined.isascii():
                # folded = lower-cased unless a name folds further (a "~1",
                # or a trailing dot or space, which the tests find): every
                # test at once (a run remembered clear folds no further)
                quick = self._quick
                clear_run = quick.clear
                if clear_run is not None:
                    # the backend's test (one C pass where it can: about what
                    # looking a run up among the remembered ones costs)
                    if clear_run(joined):
                        return names
                else:
                    clear = _CLEAR_RUNS.get(quick.key)
                    if clear is not None and joined in clear:
                        return names
                    lowered = joined.lower()
                    # names already lower-case are their own folded forms: no split
                    if exact.isdisjoint(names if lowered == joined else lowered.split("\0")) \
                            and not ("~" in joined and "~1" in joined) \
                            and ends(f"\0{lowered}\0"[::-1]) is None:
                        if len(joined) <= _CLEAR_RUN_CHARS:
                            if clear is not None and _CLEAR_COUNT[0] < _CLEAR_RUNS_MAX:
                                clear.add(joined)  # the common case: no call
                                _CLEAR_COUNT[0] += 1
                            else:
                                _remember_clear(quick.key, joined)
                        return names
            maybe = [n for n in names
                     if (f := fold(n)) in exact
                     or f.endswith(suffixes) or f.startswith(prefixes)]
            if not maybe:
                return names
        elif not self._checks and not self._dirs and not self._shadowing:
            return names
        else:
            maybe = names
        hidden = {n for n in maybe if not self.visible(n)}
        if not hidden:
            return names
        return [n for n in names if n not in hidden]


class _NestedScope(Scope):
    """A directory's scope where other roots' rules hold (:meth:`Policy.holding`):
    an entry is shown only if every root's scope shows it and it carries no
    other root away; subdirectories are decided afresh by the policy."""

    __slots__ = ("_own", "_others", "_policy", "_real", "_op")

    def __init__(self, own: Scope, others: tuple[Scope, ...], policy: Policy,
                 canonical_dir: str, op: Op) -> None:
        # every question is put to the scopes held: the base's state is unused
        self._own = own
        self._others = others
        self._policy = policy
        self._real = "" if canonical_dir in (".", "") else canonical_dir + "/"
        self._op = op

    def may_hide(self) -> bool:
        return True  # another root's rules, or a root below carried away

    def visible(self, name: str) -> bool:
        return (self._own.visible(name) and all(s.visible(name) for s in self._others)
                and not self._policy._pinned(self._real + name, self._op))

    def child(self, name: str) -> Scope | None:
        if not self.visible(name) or self._own.child(name) is None or any(
                s.child(name) is None for s in self._others):
            return None
        return self._policy.scope(self._real + name, self._op)

    def visible_names(self, names: list[str]) -> list[str]:
        shown = self._own.visible_names(names)
        for scope in self._others:
            shown = scope.visible_names(shown)
        return [name for name in shown if not self._policy._pinned(self._real + name, self._op)]
