"""An independent red-team pass (round twenty-five, second team) over the
configs a cloud development environment runs as a workspace starts, read
with docs/policy.md's test: protected is what a program runs on its own,
with no question put to the user.  ``.devcontainer`` (Codespaces) and
Cursor's background-agent ``.cursor/environment.json`` were protected;
these, of the same kind, were not:

- Gitpod's ``.gitpod.yml``: its ``tasks`` (``before``, ``init``,
  ``command``) are shell commands run at every workspace start, and a
  prebuild runs ``before`` and ``init`` on its own for new commits
  (gitpod.io/docs/configure/workspaces/tasks); Gitpod Flex (Ona) runs the
  tasks and services of ``.gitpod/automations.yaml`` triggered by
  ``postDevcontainerStart``;
- Firebase Studio (Project IDX): ``.idx/dev.nix``'s
  ``idx.workspace.onCreate`` / ``onStart`` and its previews' ``command``
  run as the workspace opens (developers.google.com/idx/guides/customize-idx-env);
- CodeSandbox: ``.codesandbox/tasks.json``'s ``setupTasks`` run when the
  sandbox starts, and each task with ``runAtStart``
  (codesandbox.io/docs/learn/devboxes/task);
- Replit: ``.replit``'s ``onBoot`` runs as the Repl boots.

On main each was written, moved into place, made a directory of and
edited: ``ok``, the model's command then run by the user's next workspace
(with its git credentials).  Each must be refused as ``protected``
(reading stays allowed, the host can lift it); a project's own file of a
near name (``gitpod.md``, ``docs/.replit.md``, ``tasks.json``) stays the
model's.  Every backend config.
"""

from __future__ import annotations

import pytest

from corral.tools import Policy, Toolbox

from .helpers.config_runs import check_what_it_runs_is_protected

CONFIGS = {
    ".gitpod.yml": "tasks:\n  - init: sh scripts/init.sh\n    command: npm run dev\n",
    ".gitpod/automations.yaml": ("tasks:\n  setup:\n    name: setup\n    command: sh x.sh\n"
                                 "    triggeredBy: [postDevcontainerStart]\n"),
    ".gitpod/automations.yml": "tasks: {}\n",
    ".idx/dev.nix": "{ pkgs, ... }: { idx.workspace.onStart = { x = \"sh x.sh\"; }; }\n",
    ".codesandbox/tasks.json": '{"setupTasks": ["sh x.sh"]}\n',
    ".replit": 'onBoot = "sh x.sh"\nrun = "npm start"\n',
}
PATHS = [*CONFIGS, "pkg/.gitpod.yml", "web/.codesandbox/tasks.json", "app/.idx/dev.nix"]


def _body(path: str) -> str:
    return CONFIGS.get(path) or CONFIGS[path.split("/", 1)[1]]


def _refused(answer: dict) -> None:
    assert answer["ok"] is False and answer["details"]["kind"] == "protected", answer


@pytest.mark.parametrize("path", PATHS)
def test_written_moved_or_made_there_is_refused(tmp_path, make_root, path):
    body = _body(path)
    (tmp_path / "staged").write_text(body)
    with Toolbox(make_root(str(tmp_path))) as toolbox:
        write = toolbox.call("write_file", {"path": path, "content": body})
        move = toolbox.call("move_file", {"source": "staged", "destination": path})
        made = toolbox.call("make_directory", {"path": path})
    for answer in (write, move, made):
        _refused(answer)
    assert not (tmp_path / path).exists()
    assert (tmp_path / "staged").read_text() == body


@pytest.mark.parametrize("path", PATHS)
def test_an_existing_one_is_not_changed_but_stays_readable(tmp_path, make_root, path):
    body = _body(path)
    (tmp_path / path).parent.mkdir(parents=True, exist_ok=True)
    (tmp_path / path).write_text(body)
    with Toolbox(make_root(str(tmp_path))) as toolbox:
        read = toolbox.call("read_file", {"path": path})
        edit = toolbox.call("edit_file", {"path": path, "oldText": "sh x", "newText": "sh y"}
                            if "sh x" in body else
                            {"path": path, "oldText": "npm", "newText": "pnpm"})
        delete = toolbox.call("delete_file", {"path": path})
    assert read["ok"] is True, read
    _refused(edit)
    _refused(delete)
    assert (tmp_path / path).read_text() == body


@pytest.mark.parametrize("path", PATHS)
def test_the_host_can_lift_it(tmp_path, make_root, path):
    with Toolbox(make_root(str(tmp_path)), policy=Policy.build(defaults=False)) as toolbox:
        answer = toolbox.call("write_file", {"path": path, "content": "x\n"})
    assert answer["ok"] is True, answer
    assert (tmp_path / path).read_text() == "x\n"


@pytest.mark.parametrize("path", ["gitpod.md", "docs/.replit.md", "tasks.json",
                                  "idx/dev.nix", "codesandbox/tasks.json", ".gitpod.yml.bak"])
def test_a_projects_own_near_names_stay_the_models(tmp_path, make_root, path):
    with Toolbox(make_root(str(tmp_path))) as toolbox:
        answer = toolbox.call("write_file", {"path": path, "content": "notes\n"})
    assert answer["ok"] is True, answer
    assert (tmp_path / path).read_text() == "notes\n"


@pytest.mark.parametrize("config", [".gitpod", ".codesandbox", ".idx", "pkg/.gitpod"])
def test_a_folder_moved_in_as_one_is_refused(tmp_path, make_root, config):
    inner = {".gitpod": "automations.yaml", ".codesandbox": "tasks.json", ".idx": "dev.nix"}
    name = inner[config.rsplit("/", 1)[-1]]
    (tmp_path / "staged").mkdir()
    (tmp_path / "staged" / name).write_text("x\n")
    with Toolbox(make_root(str(tmp_path))) as toolbox:
        answer = toolbox.call("move_file", {"source": "staged", "destination": config})
    _refused(answer)
    assert not (tmp_path / config).exists() and (tmp_path / "staged" / name).exists()


# What those configs run as the workspace starts, from the folder holding
# them: the scripts a command names are protected, as a dev container's
# lifecycle commands' are; what runs only when the user asks (a CodeSandbox
# task without runAtStart, a Gitpod Flex task triggered by hand, Replit's
# run) stays the model's.
RUNS = {
    ".gitpod.yml": ("tasks:\n  - before: sh scripts/before.sh\n    init: |\n      npm install\n"
                    "      bash scripts/init.sh\n    command: ./scripts/start.sh\n",
                    ["scripts/before.sh", "scripts/init.sh", "scripts/start.sh"]),
    ".gitpod/automations.yaml": (
        "tasks:\n  setup:\n    name: setup\n    command: sh scripts/setup.sh\n"
        "    triggeredBy:\n      - postDevcontainerStart\n"
        "  by-hand:\n    name: by hand\n    command: sh scripts/other.sh\n"
        "    triggeredBy: [manual]\n"
        "services:\n  db:\n    name: db\n    triggeredBy: [postEnvironmentStart]\n"
        "    commands:\n      start: ./scripts/db.sh\n",
        ["scripts/setup.sh", "scripts/db.sh"]),
    ".codesandbox/tasks.json": (
        '{"setupTasks": ["sh scripts/setup.sh", {"name": "b", "command": "node tools/build.js"}],'
        ' "tasks": {"dev": {"name": "dev", "command": "sh scripts/dev.sh", "runAtStart": true},'
        ' "lint": {"name": "lint", "command": "sh scripts/other.sh"}}}\n',
        ["scripts/setup.sh", "tools/build.js", "scripts/dev.sh"]),
    ".replit": ('onBoot = "sh scripts/boot.sh"\nrun = "sh scripts/other.sh"\n',
                ["scripts/boot.sh"]),
}


@pytest.mark.parametrize("config", list(RUNS))
def test_what_it_runs_as_the_workspace_starts_is_protected(tmp_path, make_root, config):
    text, programs = RUNS[config]
    check_what_it_runs_is_protected(tmp_path, make_root, config, text, programs)
