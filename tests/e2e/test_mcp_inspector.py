"""``corral serve`` under MCP Inspector's CLI (``inspector --cli``, the
TypeScript SDK's client): the handshake, the tool listing with Inspector's
schema-portability checks (``--strict``), a call of every tool (its
refusals included), logging, several roots, and a concurrent load.

Each Inspector run is one process that starts the server, initializes, does
one method and exits.
"""

from __future__ import annotations

import base64
import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from corral.hosts import render
from .helpers import inspector_entry, serve_command, serve_roots_command

TIMEOUT = 120
# a 1x1 PNG
PNG = bytes.fromhex("89504e470d0a1a0a0000000d49484452000000010000000108060000001f15c489"
                    "0000000a49444154789c63000100000500010d0a2db40000000049454e44ae426082")


def inspect(server: list[str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*inspector_entry(), "--format", "json", "-q", *args, *server],
                          capture_output=True, text=True, timeout=TIMEOUT)


def result_of(done: subprocess.CompletedProcess[str]) -> dict[str, Any]:
    assert done.returncode == 0, (done.returncode, done.stdout[-2000:], done.stderr[-2000:])
    out: dict[str, Any] = json.loads(done.stdout)["result"]
    return out


def call(server: list[str], tool: str, args: dict[str, Any]) -> tuple[int, dict[str, Any]]:
    """(Inspector's exit status, the envelope): 0 for a success, 5 for an
    isError result (Inspector's "tool_is_error")."""
    done = inspect(server, "--method", "tools/call", "--tool-name", tool,
                   "--tool-args-json", json.dumps(args))
    payload = json.loads(done.stdout)["result"]
    (block,) = payload["content"]
    # the envelope is the structured content (a refusal's too); the text is
    # what a model is shown of it.  Inspector's client is JavaScript:
    # integers past 2**53 (file_info's nanosecond times) come back rounded,
    # which the text does not show
    envelope: dict[str, Any] = payload["structuredContent"]
    assert payload.get("isError", False) is (not envelope["ok"])
    assert block["text"] == render(tool, envelope), (block["text"], envelope)
    return done.returncode, envelope


@pytest.fixture(scope="module")
def tree(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("inspector") / "proj"
    (root / "src").mkdir(parents=True)
    (root / "src" / "util.py").write_text("def util():\n    return 1\n")
    (root / "notes.txt").write_text("hello\nworld\n")
    (root / "edit_me.txt").write_text("alpha\nbeta\n")
    (root / "move_me.txt").write_text("m\n")
    (root / "delete_me.txt").write_text("d\n")
    (root / "pixel.png").write_bytes(PNG)
    return root


@pytest.fixture(scope="module")
def server(tree) -> list[str]:
    return serve_command(tree)


def test_initialize(server):
    info = result_of(inspect(server, "--method", "initialize"))
    assert info["protocolVersion"] == "2025-11-25"
    assert info["serverInfo"]["name"] == "corral"
    assert set(info["capabilities"]) == {"tools", "logging"}
    assert "root" in info["instructions"]


def test_the_listing_passes_inspectors_strict_schema_checks(server):
    done = inspect(server, "--method", "tools/list", "--strict")
    tools = result_of(done)["tools"]
    assert {t["name"] for t in tools} >= {"read_file", "write_file", "edit_file",
                                         "list_directory", "glob", "grep", "move_file",
                                         "delete_file"}
    for tool in tools:
        assert tool["outputSchema"]["type"] == "object", tool["name"]
        assert tool["annotations"]["openWorldHint"] is False
        assert tool["title"]


SUCCESS = [
    ("read_file", {"path": "notes.txt"}, lambda e: "hello" in e["content"]),
    ("list_directory", {"path": "src"}, lambda e: [x["name"] for x in e["entries"]] == ["util.py"]),
    ("glob", {"pattern": "**/*.py"}, lambda e: e["paths"] == ["src/util.py"]),
    ("grep", {"pattern": "def util"}, lambda e: e["matches"][0]["path"] == "src/util.py"),
    ("write_file", {"path": "new/deep.txt", "content": "x\n"},
     lambda e: e["createdDirectories"] == ["new"]),
    ("edit_file", {"path": "edit_me.txt", "oldText": "beta", "newText": "gamma"},
     lambda e: e["replacements"] == 1),
    ("move_file", {"source": "move_me.txt", "destination": "moved.txt"},
     lambda e: e["destination"] == "moved.txt"),
    ("delete_file", {"path": "delete_me.txt"}, lambda e: e["deleted"] is True),
    ("read_files", {"paths": ["notes.txt", "src/util.py"]},
     lambda e: [f["path"] for f in e["files"]] == ["notes.txt", "src/util.py"]),
    ("file_info", {"path": "notes.txt"}, lambda e: e["kind"] == "file" and e["size"] == 12),
    ("make_directory", {"path": "made/dir"}, lambda e: e["createdDirectories"] == ["made",
                                                                                  "made/dir"]),
]


def test_every_listed_tool_has_a_case_here(server):
    listed = {t["name"] for t in result_of(inspect(server, "--method", "tools/list"))["tools"]}
    assert listed == {tool for tool, _, _ in SUCCESS}
    assert listed == {tool for tool, _, _ in REFUSALS}


@pytest.mark.parametrize("tool,args,check", SUCCESS, ids=[t for t, _, _ in SUCCESS])
def test_every_tool_succeeds(tool, args, check, server):
    status, envelope = call(server, tool, args)
    assert status == 0 and envelope["ok"] is True, envelope
    assert check(envelope), envelope


REFUSALS = [
    ("read_file", {"path": "../outside.txt"}, "OUTSIDE_ROOT"),
    ("read_file", {"path": "src"}, "INVALID_ARGUMENT"),
    ("read_file", {"path": "src/utl.py"}, "NOT_FOUND"),
    ("write_file", {"path": "notes.txt", "content": "x"}, "ALREADY_EXISTS"),
    ("edit_file", {"path": "notes.txt", "oldText": "nope", "newText": "x"}, "NOT_FOUND"),
    ("list_directory", {"path": "notes.txt"}, "INVALID_ARGUMENT"),
    ("glob", {"pattern": "*", "path": ".."}, "OUTSIDE_ROOT"),
    ("grep", {"pattern": "x", "path": "/etc"}, "OUTSIDE_ROOT"),
    ("move_file", {"source": "nope.txt", "destination": "b.txt"}, "NOT_FOUND"),
    ("delete_file", {"path": "src"}, "INVALID_ARGUMENT"),
    ("read_files", {"paths": []}, "INVALID_ARGUMENT"),
    ("file_info", {"path": "../up.txt"}, "OUTSIDE_ROOT"),
    ("make_directory", {"path": "notes.txt"}, "ALREADY_EXISTS"),
]


@pytest.mark.parametrize("tool,args,code", REFUSALS,
                         ids=[f"{t}-{c}-{i}" for i, (t, _, c) in enumerate(REFUSALS)])
def test_refusals_are_error_results_with_the_envelope(tool, args, code, server):
    status, envelope = call(server, tool, args)
    assert status == 5  # Inspector: the tool answered isError
    assert envelope["ok"] is False and envelope["code"] == code, envelope
    assert envelope["details"]["message"] == envelope["message"] and envelope["hint"]


def test_an_image_is_image_content(server):
    done = inspect(server, "--method", "tools/call", "--tool-name", "read_file",
                   "--tool-args-json", json.dumps({"path": "pixel.png"}))
    payload = result_of(done)
    text, image = payload["content"]
    assert image == {"type": "image", "mimeType": "image/png",
                     "data": base64.b64encode(PNG).decode()}
    assert text["text"].startswith("[image: image/png, ")
    assert image["data"] not in text["text"]
    assert payload["structuredContent"]["data"] == image["data"]


def test_logging_set_level(server):
    assert result_of(inspect(server, "--method", "logging/setLevel", "--log-level", "debug")) \
        == {}


def test_several_roots(tmp_path):
    (tmp_path / "web").mkdir()
    (tmp_path / "api").mkdir()
    (tmp_path / "web" / "index.html").write_text("<p>web</p>\n")
    (tmp_path / "api" / "main.py").write_text("print('api')\n")
    server = serve_roots_command([tmp_path / "web", tmp_path / "api"])
    info = result_of(inspect(server, "--method", "initialize"))
    assert "web" in info["instructions"] and "api" in info["instructions"]
    status, envelope = call(server, "read_file", {"path": "api/main.py"})
    assert status == 0 and envelope["path"] == "api/main.py"
    status, envelope = call(server, "glob", {"pattern": "*", "path": "web"})
    assert status == 0 and envelope["paths"] == ["web/index.html"]
    status, envelope = call(server, "move_file", {"source": "web/index.html",
                                                  "destination": "api/index.html"})
    assert status == 5 and envelope["details"]["kind"] == "cross_root"
    assert (tmp_path / "web" / "index.html").exists()


def test_concurrent_load_has_no_errors(server):
    done = inspect(server, "--method", "tools/call", "--tool-name", "read_file",
                   "--tool-args-json", json.dumps({"path": "notes.txt"}), "--load",
                   "--load-requests", "300", "--load-concurrency", "8")
    report = result_of(done)
    assert report["requests"] == 300 and report["ok"] == 300, report
    assert report["errors"] == 0 and report["toolErrors"] == 0, report["errorMessages"]
