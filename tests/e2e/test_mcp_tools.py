"""``corral serve`` through the SDK's stdio client: the tools it lists, one
successful call of each, and every refusal code arriving intact.

One server process serves the module (a few more for the read-only and
legacy-handshake checks).  Expected envelopes come from an in-process
``Toolbox`` with the same options on the same tree: the server must add,
drop and change nothing.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from corral.tools import Code, Toolbox
from e2e_support import serve_command

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


@pytest.fixture(scope="module")
def tree(tmp_path_factory) -> Path:
    base = tmp_path_factory.mktemp("mcp-tools")
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
def session(tree, make_session):
    return make_session(serve_command(tree, "--deny", DENY))


def test_lists_exactly_the_toolbox_tools(session, toolbox):
    listed = session.list_tools()
    assert [tool.name for tool in listed] == toolbox.names
    definitions = {item["name"]: item for item in toolbox.definitions()}
    for tool in listed:
        assert tool.description == definitions[tool.name]["description"]
        assert tool.input_schema == definitions[tool.name]["inputSchema"]
        mutates = toolbox.spec(tool.name).mutates
        assert tool.annotations.read_only_hint is (not mutates)
        assert tool.annotations.open_world_hint is False


def test_offers_tools_and_nothing_else(session):
    caps = session.client.server_capabilities
    assert caps.tools is not None
    assert caps.resources is None and caps.prompts is None and caps.completions is None
    with pytest.raises(Exception) as raised:
        session.portal.call(session.client.list_resources)
    assert "not found" in str(raised.value).lower()


def test_every_tool_has_a_success_case(toolbox):
    assert sorted(SUCCESS) == sorted(toolbox.names)


@pytest.mark.parametrize("tool", sorted(SUCCESS))
def test_each_tool_succeeds(tool, session, toolbox, tree):
    assert tool in [t.name for t in session.list_tools()], f"{tool} is not served"
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
    assert result.is_error is True
    (block,) = result.content
    envelope = json.loads(block.text)
    assert envelope == toolbox.call(tool, args)
    assert envelope["ok"] is False and envelope["code"] == code.value
    assert envelope["details"]["message"] == envelope["message"]
    assert isinstance(envelope["hint"], str) and envelope["hint"]
    assert result.structured_content == envelope


def test_every_code_but_internal_is_covered():
    covered = {code for code, _tool, _args in REFUSALS}
    assert covered == set(Code) - {Code.INTERNAL}


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
        assert host not in session.call(tool, args).content[0].text


def test_absolute_path_inside_is_answered_root_relative(session, tree):
    result = session.call("read_file", {"path": str(tree / "notes.txt")})
    envelope = json.loads(result.content[0].text)
    assert envelope["ok"] is True and envelope["path"] == "notes.txt"
    assert str(tree) not in result.content[0].text


def test_non_utf8_name_is_escaped_and_the_server_survives(session, toolbox):
    result = session.call("list_directory", {"path": "odd"})
    (block,) = result.content
    assert block.text.isascii()  # the lone surrogate is escaped, not sent as bad UTF-8
    envelope = json.loads(block.text)
    assert envelope == toolbox.call("list_directory", {"path": "odd"})
    assert envelope["entries"][0]["name"] == os.fsdecode(b"bad\xff.txt")
    # structured content (the tools declare an outputSchema) spells it as its escape
    assert result.structured_content["entries"][0]["name"] == "bad\\udcff.txt"
    assert session.envelope("read_file", {"path": "notes.txt"})["ok"] is True


def test_read_only_server(tree, make_session):
    args = {"path": "ro.txt", "content": "x"}
    with Toolbox(tree, read_only=True) as box:
        names = box.names
        expected = box.call("write_file", args)
    assert "write_file" not in names and expected["ok"] is False
    session = make_session(serve_command(tree, "--read-only"))
    assert [tool.name for tool in session.list_tools()] == names
    assert session.envelope("write_file", args) == expected
    assert not (tree / "ro.txt").exists()


def test_legacy_handshake(tree, make_session, toolbox):
    session = make_session(serve_command(tree, "--deny", DENY), mode="legacy")
    assert session.client.protocol_version < "2026"  # the initialize handshake was used
    assert [tool.name for tool in session.list_tools()] == toolbox.names
    assert session.envelope("read_file", {"path": "notes.txt"}) == toolbox.call(
        "read_file", {"path": "notes.txt"})
    refusal = session.envelope("read_file", {"path": DENY})
    assert refusal == toolbox.call("read_file", {"path": DENY})
