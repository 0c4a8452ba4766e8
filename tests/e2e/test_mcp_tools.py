"""``corral serve`` through the official SDK clients, the 2.x line and the
1.x line: the tools it lists, one successful call of each, and every refusal
code arriving intact.

One server process per SDK line serves the module (a few more for the
read-only and protocol-version checks).  Expected envelopes come from an
in-process ``Toolbox`` with the same options on the same tree: the server
must add, drop and change nothing.  Every success's structured content is
validated against the tool's outputSchema (``McpSession.call``).
"""

from __future__ import annotations

import base64
import json
import os
from pathlib import Path
from typing import Any

import pytest

from corral.hosts import render
from corral.tools import Code, Toolbox
from .helpers import PROTOCOL_VERSIONS, SDKS, envelope_of, serve_command

DENY = "secret.env"

TREE: dict[str, str] = {
    "src/util.py": "def util():\n    return 1\n",
    "src/app.py": "import util\nprint(util.util())\n",
    "notes.txt": "hello\nworld\n",
    "dup.txt": "same\nsame\n",
    "edit_me.txt": "alpha\nbeta\n",
    "move_me.txt": "move me\n",
    "delete_me.txt": "bye\n",
    "hard.txt": "two names\n",
    DENY: "TOKEN=hunter2\n",
}

# One successful call per tool, and what it must have done.  A tool missing
# here, or listed here and not served, fails test_every_tool_has_a_success_case.
SUCCESS: dict[str, dict[str, Any]] = {
    "read_file": {"path": "notes.txt"},
    "write_file": {"path": "made/deep/new.txt", "content": "made\n"},
    "edit_file": {"path": "edit_me.txt", "oldText": "beta", "newText": "gamma"},
    "list_directory": {"path": "src"},
    "glob": {"pattern": "**/*.py"},
    "grep": {"pattern": "def util", "path": "src"},
    "move_file": {"source": "move_me.txt", "destination": "moved.txt"},
    "delete_file": {"path": "delete_me.txt"},
    "read_files": {"paths": ["notes.txt", "src/util.py"]},
    "file_info": {"path": "notes.txt"},
    "make_directory": {"path": "new/dir"},
}


def _effect(tool: str, root: Path, envelope: dict[str, Any]) -> None:
    """What each successful call must have done, checked on disk or in the envelope."""
    text = json.dumps(envelope)
    if tool == "read_file":
        assert "hello" in envelope["content"] and "world" in envelope["content"]
    elif tool == "write_file":
        assert (root / "made/deep/new.txt").read_text() == "made\n"
        assert set(envelope["createdDirectories"]) == {"made", "made/deep"}
    elif tool == "edit_file":
        assert (root / "edit_me.txt").read_text() == "alpha\ngamma\n"
    elif tool == "list_directory":
        assert sorted(e["name"] for e in envelope["entries"]) == ["app.py", "util.py"]
    elif tool == "glob":
        assert "src/util.py" in text and "src/app.py" in text
    elif tool == "grep":
        assert "src/util.py" in text and "src/app.py" not in text
    elif tool == "move_file":
        assert not (root / "move_me.txt").exists()
        assert (root / "moved.txt").read_text() == "move me\n"
    elif tool == "delete_file":
        assert not (root / "delete_me.txt").exists()
    elif tool == "read_files":
        assert [f["path"] for f in envelope["files"]] == ["notes.txt", "src/util.py"]
        assert "hello" in envelope["files"][0]["content"]
    elif tool == "file_info":
        assert (envelope["kind"], envelope["size"]) == ("file", len("hello\nworld\n"))
    elif tool == "make_directory":
        assert (root / "new/dir").is_dir() and envelope["createdDirectories"] == ["new", "new/dir"]
    else:  # pragma: no cover - a new tool needs its entry above
        raise AssertionError(f"no expected effect written for {tool}")


# One refusal per code (INTERNAL has its own module: it needs a root that
# vanishes).  Each is answered identically by an in-process Toolbox.
REFUSALS: list[tuple[str, str, dict[str, Any]]] = [
    (Code.INVALID_ARGUMENT, "read_file", {"path": "src"}),  # a directory: suggests glob
    (Code.INVALID_ARGUMENT, "no_such_tool", {}),
    (Code.INVALID_ARGUMENT, "read_file", {"path": "notes.txt", "bogus": 1}),
    (Code.NOT_FOUND, "read_file", {"path": "src/utl.py"}),  # didYouMean src/util.py
    (Code.OUTSIDE_ROOT, "read_file", {"path": "../outside/secret.txt"}),
    (Code.ALREADY_EXISTS, "write_file", {"path": "notes.txt", "content": "x"}),
    (Code.AMBIGUOUS, "edit_file", {"path": "dup.txt", "oldText": "same", "newText": "other"}),
    (Code.STALE, "write_file", {"path": "notes.txt", "content": "x", "overwrite": True,
                                "expectedSha256": "0" * 64}),
    (Code.TOO_LARGE, "edit_file", {"path": "huge.txt", "oldText": "a", "newText": "b"}),
    (Code.UNSUPPORTED, "read_file", {"path": "hard.txt"}),  # hard link (kind hardlink)
    (Code.UNSUPPORTED, "read_file", {"path": "fifo"}),
    (Code.DENIED, "read_file", {"path": DENY}),
]


@pytest.fixture(scope="module", params=SDKS)
def sdk(request) -> str:
    """The SDK line driving the module's server (each gets its own tree)."""
    return request.param


@pytest.fixture(scope="module")
def tree(sdk, tmp_path_factory) -> Path:
    base = tmp_path_factory.mktemp(f"mcp-tools-{sdk}")
    root = base / "root"
    for rel, text in TREE.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    os.link(root / "hard.txt", base / "hard-twin.txt")
    os.mkfifo(root / "fifo")
    (root / "odd").mkdir()
    (root / "odd" / os.fsdecode(b"bad\xff.txt")).write_text("x")
    (root / "huge.txt").write_bytes(b"a\n" * (9 * 1024 * 1024 // 2))  # over edit_file's 8 MiB
    (base / "outside").mkdir()
    (base / "outside" / "secret.txt").write_text("OUTSIDE\n")
    return root


@pytest.fixture(scope="module")
def toolbox(tree):
    with Toolbox(tree, deny=[DENY]) as box:
        yield box


@pytest.fixture(scope="module")
def session(sdk, tree, make_session):
    return make_session(serve_command(tree, "--deny", DENY), sdk=sdk)


def test_lists_exactly_the_toolbox_tools(session, toolbox):
    listed = session.list_tools()
    assert [tool["name"] for tool in listed] == toolbox.names
    definitions = {item["name"]: item for item in toolbox.definitions()}
    for tool in listed:
        assert tool["description"] == definitions[tool["name"]]["description"]
        assert tool["inputSchema"] == definitions[tool["name"]]["inputSchema"]
        mutates = toolbox.spec(tool["name"]).mutates
        notes = tool["annotations"]
        assert notes["readOnlyHint"] is (not mutates)
        assert notes["openWorldHint"] is False
        assert isinstance(notes["destructiveHint"], bool)
        assert isinstance(notes["idempotentHint"], bool)
        assert notes["title"] == tool["title"] and tool["title"]
        if not mutates:
            assert notes["destructiveHint"] is False and notes["idempotentHint"] is True


def test_every_tool_has_an_output_schema(session):
    for tool in session.list_tools():
        schema = tool.get("outputSchema")
        assert isinstance(schema, dict) and schema.get("type") == "object", tool["name"]


def test_offers_tools_and_logging_and_nothing_else(session):
    caps = session.capabilities
    assert "tools" in caps and "logging" in caps
    assert not {"resources", "prompts", "completions"} & set(caps)
    answer = session.send("call", name="read_file", arguments={"path": "notes.txt"})
    assert answer["ok"] is True
    assert session.server_info["name"] == "corral"


def test_every_tool_has_a_success_case(toolbox):
    assert sorted(SUCCESS) == sorted(toolbox.names)


@pytest.mark.parametrize("tool", sorted(SUCCESS))
def test_each_tool_succeeds(tool, session, toolbox, tree):
    assert tool in [t["name"] for t in session.list_tools()], f"{tool} is not served"
    args = SUCCESS[tool]
    mutates = toolbox.spec(tool).mutates
    expected = None if mutates else toolbox.call(tool, args)
    envelope = session.envelope(tool, args)
    assert envelope["ok"] is True, envelope
    if expected is not None:
        assert envelope == expected
    _effect(tool, tree, envelope)


@pytest.mark.parametrize("code,tool,args", REFUSALS,
                         ids=[f"{code.value}-{tool}-{i}" for i, (code, tool, args)
                              in enumerate(REFUSALS)])
def test_each_refusal_reaches_the_client_intact(code, tool, args, session, toolbox):
    result = session.call(tool, args)
    assert result["isError"] is True
    envelope = envelope_of(result)
    assert envelope == toolbox.call(tool, args)
    assert envelope["ok"] is False and envelope["code"] == code.value
    assert envelope["details"]["message"] == envelope["message"]
    assert isinstance(envelope["hint"], str) and envelope["hint"]


def test_every_code_but_internal_is_covered():
    covered = {code for code, _tool, _args in REFUSALS}
    assert covered == set(Code) - {Code.INTERNAL}


PNG = bytes.fromhex("89504e470d0a1a0a0000000d49484452000000010000000108060000001f15c489"
                    "0000000a49444154789c63000100000500010d0a2db40000000049454e44ae426082")


def test_images_are_image_content(session, tree):
    (tree / "pixel.png").write_bytes(PNG)
    result = session.call("read_file", {"path": "pixel.png"})  # structured content validated
    text, image = result["content"]
    assert image == {"type": "image", "mimeType": "image/png",
                     "data": base64.b64encode(PNG).decode()}
    # the text says what the image is, not its base64 again
    assert text["text"].startswith("[image: image/png, ") and "1x1" in text["text"]
    assert image["data"] not in text["text"]
    assert result["structuredContent"]["data"] == image["data"]
    several = session.call("read_files", {"paths": ["notes.txt", "pixel.png"]})
    assert [block["type"] for block in several["content"]] == ["text", "image"]
    files = several["structuredContent"]["files"]
    assert "hello" in files[0]["content"] and files[1]["mimeType"] == "image/png"
    assert "== notes.txt ==\nhello\n" in several["content"][0]["text"]
    assert "== pixel.png ==\n[image: image/png" in several["content"][0]["text"]


def test_suggested_call_reaches_the_client_and_works(session):
    envelope = session.envelope("read_file", {"path": "src"})
    assert envelope["code"] == "INVALID_ARGUMENT"
    assert envelope["suggestedTool"] == "glob"
    followed = session.envelope(envelope["suggestedTool"], envelope["suggestedArgs"])
    assert followed["ok"] is True


def test_arguments_may_be_omitted(session, toolbox):
    assert session.envelope("list_directory") == toolbox.call("list_directory", None)


def test_no_host_path_in_any_answer(session, tree):
    host = str(tree.parent)
    for tool, args in [("read_file", {"path": "nope.txt"}),
                       ("read_file", {"path": str(tree.parent / "outside" / "secret.txt")}),
                       ("list_directory", {"path": "."}), ("glob", {"pattern": "**/*"})]:
        assert host not in json.dumps(session.call(tool, args))


def test_absolute_path_inside_is_answered_root_relative(session, tree):
    result = session.call("read_file", {"path": str(tree / "notes.txt")})
    envelope = envelope_of(result)
    assert envelope["ok"] is True and envelope["path"] == "notes.txt"
    assert str(tree) not in result["content"][0]["text"]


def test_non_utf8_name_is_escaped_and_the_server_survives(session, toolbox):
    result = session.call("list_directory", {"path": "odd"})
    (block,) = result["content"]
    assert block["text"].isascii()  # the lone surrogate is escaped, not sent as bad UTF-8
    assert "bad\\udcff.txt" in block["text"]  # as its escape, six characters
    assert toolbox.call("list_directory", {"path": "odd"})["entries"][0]["name"] == \
        os.fsdecode(b"bad\xff.txt")
    # structured content must still be there (and validate): the name spelled as its escape
    assert result["structuredContent"]["entries"][0]["name"] == "bad\\udcff.txt"
    assert session.envelope("read_file", {"path": "notes.txt"})["ok"] is True


def test_read_only_server(tree, make_session):
    args = {"path": "ro.txt", "content": "x"}
    with Toolbox(tree, read_only=True) as box:
        names = box.names
        expected = box.call("write_file", args)
    assert "write_file" not in names and expected["ok"] is False
    session = make_session(serve_command(tree, "--read-only"))
    assert [tool["name"] for tool in session.list_tools()] == names
    assert session.envelope("write_file", args) == expected
    assert not (tree / "ro.txt").exists()


@pytest.mark.parametrize("version", PROTOCOL_VERSIONS)
def test_each_protocol_version(version, sdk, tree, make_session, toolbox):
    """The client offers ``version``; the server answers with it, lists the
    tools with what that version knows, and calls work."""
    session = make_session(serve_command(tree, "--deny", DENY), sdk=sdk, protocol_version=version)
    assert session.protocol_version == version
    listed = session.list_tools()
    assert [tool["name"] for tool in listed] == toolbox.names
    structured = version >= "2025-06-18"
    assert all(("outputSchema" in tool) is structured for tool in listed)
    assert all(("annotations" in tool) is (version >= "2025-03-26") for tool in listed)
    result = session.call("read_file", {"path": "notes.txt"})
    assert ("structuredContent" in result) is structured
    expected = toolbox.call("read_file", {"path": "notes.txt"})
    assert result["content"][0]["text"] == render("read_file", expected)
    if structured:
        assert result["structuredContent"] == expected
    refusal = session.call("read_file", {"path": DENY})
    assert refusal["isError"] is True
    denied = toolbox.call("read_file", {"path": DENY})
    assert refusal["content"][0]["text"] == render("read_file", denied)
    if structured:  # a refusal's envelope too
        assert refusal["structuredContent"] == denied


def test_default_connection_is_the_newest_handshake_version(session):
    """Each client's own default: the 1.x client offers 2025-11-25; the 2.x
    client first probes server/discover (a 2026 method), which corral
    answers -32601, and falls back to initialize at 2025-11-25."""
    assert session.protocol_version == "2025-11-25"
