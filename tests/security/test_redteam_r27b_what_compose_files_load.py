"""An independent red-team pass (round twenty-seven, second team): THREATS
row 66 for what a dev container's compose file loads.  Row 66 protects the
compose files ``devcontainer.json`` names (``dockerComposeFile``): the
container they start has the workspace mounted read-write, and a compose
file may mount more (``/:/host``) or name the image's build.  But Compose
reads more than the file it is given: its ``include:`` list (a path, or a
``path:`` key, a string or a list), a service's ``extends: {file: base.yml}``,
and the Dockerfile a service's ``build`` names (``build: ./ci`` is
``ci/Dockerfile``; ``build: {context: ci, dockerfile: app.Dockerfile}`` is
``ci/app.Dockerfile``), all relative to the compose file.

On main the model wrote each of them (``ok``: the next "Reopen in
Container" started its services).  Each must be refused as ``protected``
(a name not there yet is not made either); an included compose file is read
as one (what it includes in turn is protected too); a compose file no dev
container names leaves them writable.  Every backend config.
"""

from __future__ import annotations

import json

import pytest

from corral.tools import Toolbox

COMPOSE = "../docker-compose.yml"
CASES = {
    "include": ("include:\n  - ci/compose.yml\nservices:\n  app:\n    image: x\n",
                {}, ["ci/compose.yml"]),
    "include-path-key": ("include:\n  - path: [ci/a.yml, ci/b.yml]\n"
                         "services:\n  app:\n    image: x\n", {}, ["ci/a.yml", "ci/b.yml"]),
    "include-nested": ("include:\n  - ci/compose.yml\nservices:\n  app:\n    image: x\n",
                       {"ci/compose.yml": "include:\n  - more.yml\n"},
                       ["ci/compose.yml", "ci/more.yml"]),
    "extends": ("services:\n  app:\n    extends:\n      file: base.yml\n      service: b\n",
                {}, ["base.yml"]),
    "build-context": ("services:\n  app:\n    build: ./ci\n", {}, ["ci/Dockerfile"]),
    "build-dockerfile": ("services:\n  app:\n    build:\n      context: ci\n"
                         "      dockerfile: app.Dockerfile\n", {}, ["ci/app.Dockerfile"]),
}


def _lay_out(base, compose: str, more: dict[str, str]) -> None:
    (base / ".devcontainer").mkdir()
    (base / ".devcontainer" / "devcontainer.json").write_text(json.dumps(
        {"dockerComposeFile": COMPOSE, "service": "app", "workspaceFolder": "/w"}))
    (base / "docker-compose.yml").write_text(compose)
    for name, text in more.items():
        (base / name).parent.mkdir(parents=True, exist_ok=True)
        (base / name).write_text(text)


@pytest.mark.parametrize("case", sorted(CASES))
def test_what_a_dev_containers_compose_file_loads_is_protected(tmp_path, make_root, case):
    compose, more, targets = CASES[case]
    _lay_out(tmp_path, compose, more)
    with Toolbox(make_root(str(tmp_path))) as toolbox:
        answers = {name: toolbox.call("write_file", {
            "path": name, "overwrite": True,
            "content": "services:\n  app:\n    volumes: ['/:/host']\n"}) for name in targets}
    for name, answer in answers.items():
        assert answer["ok"] is False and answer["details"]["kind"] == "protected", \
            (case, name, answer)
        if name in more:
            assert (tmp_path / name).read_text() == more[name]
        else:
            assert not (tmp_path / name).exists(), name


def test_a_compose_file_no_dev_container_names_leaves_them_writable(tmp_path, make_root):
    (tmp_path / "docker-compose.yml").write_text(
        "include:\n  - ci/compose.yml\nservices:\n  app:\n    build: ./ci\n"
        "    extends:\n      file: base.yml\n      service: b\n")
    with Toolbox(make_root(str(tmp_path))) as toolbox:
        answers = [toolbox.call("write_file", {"path": name, "content": "x\n"})
                   for name in ("ci/compose.yml", "ci/Dockerfile", "base.yml")]
    for answer in answers:
        assert answer["ok"] is True, answer
