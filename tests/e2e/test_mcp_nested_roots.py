"""``corral serve proj proj/inner``: roots inside one another, over the wire.

``--deny secrets/**`` is read against each root, so it names
``proj/secrets`` for the outer root and ``proj/inner/secrets`` for the
inner one.  Before, a call through the outer root read and wrote
``proj/inner/secrets``; every root's rules now hold through every root.  On
every backend config (the server's environment chooses it).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from .helpers import backend_configs, backend_env, envelope_of, serve_roots_command

CONFIGS = backend_configs()
IDS = [f"{name}-{'openat2' if fast else 'walk'}" for name, fast in CONFIGS]


def _call(client, tool: str, args: dict) -> dict:
    answer = client.request("tools/call", {"name": tool, "arguments": args})
    return envelope_of(answer["result"], tool)


@pytest.mark.parametrize("config", CONFIGS, ids=IDS)
def test_the_inner_roots_deny_rule_holds_through_the_outer_root(tmp_path: Path, make_raw,
                                                                config) -> None:
    proj = tmp_path / "proj"
    (proj / "inner" / "secrets").mkdir(parents=True)
    (proj / "inner" / "secrets" / "prod.txt").write_text("INNER-SECRET\n")
    (proj / "inner" / "ok.txt").write_text("fine\n")
    client = make_raw(serve_roots_command([proj, proj / "inner"], "--deny", "secrets/**"),
                      env=backend_env(*config))
    client.initialize()
    read = _call(client, "read_file", {"path": "proj/inner/secrets/prod.txt"})
    assert read["ok"] is False and read["code"] == "DENIED", read
    wrote = _call(client, "write_file", {"path": "proj/inner/secrets/new.txt", "content": "x"})
    assert wrote["ok"] is False and wrote["code"] == "DENIED", wrote
    moved = _call(client, "move_file", {"source": "proj/inner", "destination": "proj/away"})
    assert moved["ok"] is False, moved
    found = _call(client, "grep", {"pattern": "INNER-SECRET", "path": "proj"})
    assert found["ok"] is True and found.get("matches") == [], found
    assert _call(client, "read_file", {"path": "proj/inner/ok.txt"})["ok"] is True
    assert sorted(p.name for p in (proj / "inner" / "secrets").iterdir()) == ["prod.txt"]
    assert (proj / "inner").is_dir() and not (proj / "away").exists()


def test_several_roots_offer_the_one_root_holding_a_path_and_name_answer_roots(
        tmp_path: Path, make_raw) -> None:
    web, api = tmp_path / "web", tmp_path / "api"
    (web / "src").mkdir(parents=True)
    (web / "secrets").mkdir()
    (api / "pkg").mkdir(parents=True)
    (web / "src" / "app.js").write_text("console.log('web')\n")
    (web / "secrets" / "k.txt").write_text("KEY\n")
    client = make_raw(serve_roots_command([web, api], "--deny", "secrets/**"))
    client.initialize()
    wrong = _call(client, "read_file", {"path": "api/src/app.js"})
    assert wrong["ok"] is False and wrong["details"]["didYouMean"] == ["web/src/app.js"], wrong
    assert wrong["suggestedArgs"] == {"path": "web/src/app.js"}, wrong
    assert _call(client, wrong["suggestedTool"], wrong["suggestedArgs"])["ok"] is True
    hidden = _call(client, "read_file", {"path": "api/secrets/k.txt"})
    absent = _call(client, "read_file", {"path": "api/secrets/none.txt"})
    assert "didYouMean" not in hidden["details"] and "didYouMean" not in absent["details"]
    files = _call(client, "grep", {"pattern": "console", "path": "web", "outputMode": "files"})
    assert files["files"] == ["web/src/app.js"], files
