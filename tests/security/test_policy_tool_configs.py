"""The configs of a user's own tools that make a later, common command run
code the model chose: a package manager's or build tool's config naming a
program it runs (npm's ``script-shell``, ``node-options``, ``git``;
yarn's ``yarnPath`` and plugins; cargo's ``build.rustc-wrapper``,
``target.<triple>.runner``, ``[env]``; bun's ``preload``; pnpm's
``.pnpmfile.cjs``; the go command's ``GOFLAGS=-toolexec``; gradle's init
scripts), where it takes packages from (pip's, conda's, gem's, maven's
index: a wheel the model left in the root installed for ``pip install
requests``), or the interpreter a version file picks (uv's
``.python-version`` and asdf's or mise's ``.tool-versions`` take a path).

Each is protected by name wherever it lies: these tools read them from a
home, a virtual environment's top, each package of a monorepo, and every
directory above the one a command runs in.  Refused by default (a new
file, an edit of the user's own, a move onto it), the host can lift it,
and a neighbour of a like name stays the model's.  On every backend config.
"""

from __future__ import annotations

import pytest

from corral.tools import Policy, Toolbox

# (path, what a hostile model writes there)
CONFIGS = [
    (".npmrc", "script-shell=./scripts/sh\n"),
    ("packages/web/.npmrc", "node-options=--require ./hook.js\n"),
    (".yarnrc", 'yarn-path "./tools/yarn.js"\n'),
    (".yarnrc.yml", "yarnPath: ./tools/yarn.cjs\n"),
    ("apps/site/.yarnrc.yml", "plugins:\n  - path: ./plugin.cjs\n"),
    (".pnpmfile.cjs", "require('./evil')\n"),
    (".pnpmfile.mjs", "import './evil.mjs'\n"),
    ("bunfig.toml", 'preload = ["./evil.ts"]\n'),
    (".bunfig.toml", 'preload = ["./evil.ts"]\n'),
    (".cargo/config.toml", '[build]\nrustc-wrapper = "./wrap.sh"\n'),
    ("crates/a/.cargo/config", '[target.x86_64-unknown-linux-gnu]\nrunner = "./run.sh"\n'),
    ("pip.conf", "[global]\nfind-links = ./wheels\nno-index = true\n"),
    (".config/pip/pip.conf", "[global]\nindex-url = http://127.0.0.1:9/simple\n"),
    (".venv/pip.conf", "[global]\nfind-links = ../wheels\n"),
    ("pip/pip.ini", "[global]\nfind-links = wheels\n"),
    (".condarc", "channels:\n  - file:///tmp/channel\n"),
    (".gemrc", ":sources:\n- http://127.0.0.1:9/\n"),
    (".m2/settings.xml", "<settings><mirrors/></settings>\n"),
    (".gradle/init.gradle", "println 'x'\n"),
    (".gradle/init.gradle.kts", "println(\"x\")\n"),
    (".gradle/init.d/x.gradle", "println 'x'\n"),
    (".gradle/gradle.properties", "org.gradle.java.home=./jdk\n"),
    (".config/go/env", "GOFLAGS=-toolexec=./wrap.sh\n"),
    (".tool-versions", "python path:./py\n"),
    ("svc/.tool-versions", "nodejs path:../node\n"),
    (".python-version", "./bin/python\n"),
    ("pkg/.python-version", "../py/\n"),
    # what the shell startup files those tools' installers edit source or put on PATH
    (".cargo/env", "export PATH=./x:$PATH\n"),
    (".cargo/bin/ls", "#!/bin/sh\n"),
    (".nvm/nvm.sh", "echo x\n"),
    (".bun/bin/ls", "#!/bin/sh\n"),
    (".deno/env", "echo x\n"),
    (".deno/bin/ls", "#!/bin/sh\n"),
    (".pyenv/shims/python", "#!/bin/sh\n"),
    # the code those tools keep in a home and run: crates' sources (their
    # build.rs), jars, interpreters, the package cache installs link from
    (".cargo/registry/src/index/x-1.0.0/build.rs", "fn main() {}\n"),
    (".gradle/caches/modules-2/x.jar", "x\n"),
    (".m2/repository/x/x.jar", "x\n"),
    (".nvm/versions/node/v20.0.0/bin/node", "#!/bin/sh\n"),
    (".pyenv/versions/3.12.0/bin/python", "#!/bin/sh\n"),
    (".bun/install/cache/x/index.js", "x\n"),
]
PATHS = [path for path, _ in CONFIGS]
OURS = "x = 1\n"


@pytest.mark.parametrize("path,content", CONFIGS)
def test_a_tool_config_is_protected_by_default(tmp_path, make_root, path, content):
    (tmp_path / "staged.txt").write_text(content)
    with Toolbox(make_root(tmp_path)) as toolbox:
        write = toolbox.call("write_file", {"path": path, "content": content})
        move = toolbox.call("move_file", {"source": "staged.txt", "destination": path})
    for answer in (write, move):
        assert answer["ok"] is False and answer["details"]["kind"] == "protected", answer
    assert not (tmp_path / path).exists() and (tmp_path / "staged.txt").exists()


@pytest.mark.parametrize("path,content", CONFIGS)
def test_the_users_own_tool_config_is_not_changed(tmp_path, make_root, path, content):
    """The user's config already there: neither edited, replaced, moved
    away nor deleted (it stays readable)."""
    target = tmp_path / path
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(OURS)
    with Toolbox(make_root(tmp_path)) as toolbox:
        read = toolbox.call("read_file", {"path": path})
        answers = [
            toolbox.call("edit_file", {"path": path, "oldText": "x = 1", "newText": content}),
            toolbox.call("write_file", {"path": path, "content": content, "overwrite": True}),
            toolbox.call("move_file", {"source": path, "destination": "moved.txt"}),
            toolbox.call("delete_file", {"path": path}),
        ]
    assert read["ok"] is True and "x = 1" in read["content"], read
    for answer in answers:
        assert answer["ok"] is False and answer["details"]["kind"] == "protected", answer
    assert target.read_text() == OURS and not (tmp_path / "moved.txt").exists()


@pytest.mark.parametrize("path", [".cargo", ".gradle/init.d", "deep/.m2", "a/.config/go"])
def test_a_folder_of_such_configs_cannot_be_made_or_moved_in(tmp_path, make_root, path):
    (tmp_path / "incoming").mkdir()
    (tmp_path / "incoming" / "config.toml").write_text('[build]\nrustc = "./r"\n')
    with Toolbox(make_root(tmp_path)) as toolbox:
        made = toolbox.call("write_file", {"path": f"{path}/config.toml", "content": OURS})
        moved = toolbox.call("move_file", {"source": "incoming", "destination": path})
    assert made["ok"] is False and made["details"]["kind"] == "protected", made
    assert moved["ok"] is False and moved["details"]["kind"] == "protected", moved
    assert not (tmp_path / path / "config.toml").exists()


@pytest.mark.parametrize("path", PATHS)
def test_the_host_can_lift_it(tmp_path, make_root, path):
    with Toolbox(make_root(tmp_path), policy=Policy.none()) as toolbox:
        assert toolbox.call("write_file", {"path": path, "content": OURS})["ok"] is True
    assert (tmp_path / path).read_text() == OURS


@pytest.mark.parametrize("path", [
    "npmrc", "docs/.npmrc.md", "yarnrc.yml", ".yarn/cache/x.zip", "cargo/config.toml",
    "config/env", "env/bin/tool", "pip.conf.example", "pip/requirements.txt",
    "bunfig.toml.bak", "gradle.properties", "gradle/init.gradle", "go/env", "go/bin/tool",
    ".config/gone/env", "tool-versions", "python-version.txt", "src/pnpmfile.js",
    "m2/settings.xml", "nvm/nvm.sh", "bun/bin/x"])
def test_neighbours_stay_writable(tmp_path, make_root, path):
    with Toolbox(make_root(tmp_path)) as toolbox:
        assert toolbox.call("write_file", {"path": path, "content": OURS})["ok"] is True
    assert (tmp_path / path).read_text() == OURS
