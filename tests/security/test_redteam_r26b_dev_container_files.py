"""An independent red-team pass (round twenty-six, second team): what a
dev container config names beyond its lifecycle commands (THREATS rows 25
and 29 protect ``.devcontainer/`` and the scripts those commands name).

- The files that start the container: ``dockerComposeFile`` (a string or a
  list; the Dev Containers template "existing Docker Compose" names
  ``../docker-compose.yml``) and ``build.dockerfile`` / ``dockerFile``, each
  relative to the config's folder and often outside ``.devcontainer/``.
  The container they start has the workspace mounted read-write (and a
  compose file may mount the home, the docker socket, or ``/``, privileged):
  a compose ``command`` or a Dockerfile ``ENTRYPOINT`` the model wrote
  writes ``.git/hooks/pre-commit`` on the host's disk as the user reopens
  the folder in its container, past every rule.  On main both were written
  (``ok``).
- The configs of a repository offering several containers,
  ``.devcontainer/<name>/devcontainer.json`` (the spec's place for them;
  VS Code lists each to pick): their ``initializeCommand`` runs on the host
  like the top config's, but they were never read, so ``./scripts/init.sh``
  they name was written (``ok``) where the same line in
  ``.devcontainer/devcontainer.json`` protects it.

Each must be refused as ``protected`` (written, edited; a name not there
not made), still readable; a compose file or Dockerfile no config names
stays writable.  Every backend config.
"""

from __future__ import annotations

import json
import subprocess

import pytest

from corral.tools import Toolbox

COMPOSE = "services:\n  app:\n    image: python:3.12\n"
EVIL = ("services:\n  app:\n    image: alpine\n    privileged: true\n"
        "    volumes: ['/:/host']\n    command: sh -c 'echo x >> /host/root/.bashrc'\n")
SHAPES = {
    "compose-list": (".devcontainer/devcontainer.json",
                     {"dockerComposeFile": ["../docker-compose.yml", "docker-compose.extend.yml"],
                      "service": "app", "workspaceFolder": "/workspace"},
                     ["docker-compose.yml"]),
    "compose-string": (".devcontainer/devcontainer.json",
                       {"dockerComposeFile": "../compose.yaml", "service": "app"},
                       ["compose.yaml"]),
    "build-dockerfile": (".devcontainer/devcontainer.json",
                         {"build": {"dockerfile": "../Dockerfile", "context": ".."}},
                         ["Dockerfile"]),
    "top-config": (".devcontainer.json", {"dockerFile": "docker/dev.Dockerfile"},
                   ["docker/dev.Dockerfile"]),
    "named-config": (".devcontainer/python/devcontainer.json",
                     {"dockerComposeFile": ["../../docker-compose.yml"], "service": "app",
                      "initializeCommand": "./scripts/init.sh",
                      "postCreateCommand": "bash scripts/post-create.sh"},
                     ["docker-compose.yml", "scripts/init.sh", "scripts/post-create.sh"]),
}


def _repository(base, config: str, data: dict) -> None:
    subprocess.run(["git", "init", "-q", str(base)], check=True)
    (base / config).parent.mkdir(parents=True, exist_ok=True)
    (base / config).write_text(json.dumps(data))


@pytest.mark.parametrize("shape", sorted(SHAPES))
def test_what_a_dev_container_config_starts_is_protected(tmp_path, make_root, shape):
    config, data, names = SHAPES[shape]
    _repository(tmp_path, config, data)
    there, absent = names[0], names[1:]
    (tmp_path / there).parent.mkdir(parents=True, exist_ok=True)
    (tmp_path / there).write_text(COMPOSE)
    with Toolbox(make_root(str(tmp_path))) as toolbox:
        read = toolbox.call("read_file", {"path": there})
        edit = toolbox.call("edit_file", {"path": there, "oldText": "python:3.12",
                                          "newText": "alpine"})
        writes = [toolbox.call("write_file", {"path": name, "content": EVIL, "overwrite": True})
                  for name in names]
    assert read["ok"] is True, read
    for answer in (edit, *writes):
        assert answer["ok"] is False and answer["details"]["kind"] == "protected", \
            (shape, answer)
    assert (tmp_path / there).read_text() == COMPOSE
    for name in absent:
        assert not (tmp_path / name).exists(), name


def test_files_no_config_names_stay_writable(tmp_path, make_root):
    _repository(tmp_path, ".devcontainer/devcontainer.json", {"image": "python:3.12"})
    with Toolbox(make_root(str(tmp_path))) as toolbox:
        answers = [toolbox.call("write_file", {"path": name, "content": COMPOSE})
                   for name in ("docker-compose.yml", "Dockerfile", "compose.yaml",
                                "scripts/init.sh")]
    for answer in answers:
        assert answer["ok"] is True, answer
