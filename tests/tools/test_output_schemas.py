"""Every tool's output_schema describes its real success envelopes, and every
tool is exported in every host format with its title and annotations."""

from __future__ import annotations

import json
from typing import Any

import jsonschema
import pytest

from .helpers.images import png

from corral.tools import Toolbox, tool_definitions
from ..helpers import make_repository
from corral.hosts import FORMATS
from corral.tools._runtime.registry import load_tools

# (tool, arguments) calls that succeed on the tree below; at least one per tool
SAMPLES: list[tuple[str, dict[str, Any]]] = [
    ("read_file", {"path": "src/app.py"}),
    ("read_file", {"path": "src/app.py", "offset": 2, "limit": 1}),
    ("read_file", {"path": "logo.png"}),
    ("write_file", {"path": "new/file.txt", "content": "hello\n"}),
    ("edit_file", {"path": "src/app.py", "oldText": "x = 1", "newText": "x = 2"}),
    ("edit_file", {"path": "src/app.py", "edits": [{"oldText": "y = 2", "newText": "y = 3"}],
                   "dryRun": True}),
    ("list_directory", {"path": "."}),
    ("list_directory", {"path": ".", "depth": 3}),
    ("list_directory", {"path": ".", "depth": 2, "includeIgnored": True}),
    ("glob", {"pattern": "**/*.py"}),
    ("grep", {"pattern": "x", "path": "src"}),
    ("grep", {"pattern": "nothing-matches-this"}),
    ("move_file", {"source": "notes.txt", "destination": "moved/notes.txt"}),
    ("delete_file", {"path": "old.txt"}),
    ("read_files", {"paths": ["src/app.py", "logo.png", "missing.txt"]}),
    ("file_info", {"path": "src/app.py"}),
    ("file_info", {"path": "link"}),
    ("file_info", {"path": "out"}),
    ("make_directory", {"path": "a/b/c"}),
    ("make_directory", {"path": "src"}),
]


def build(base):
    (base / "src").mkdir()
    (base / "src" / "app.py").write_text("x = 1\ny = 2\n")
    (base / "notes.txt").write_text("n\n")
    (base / "old.txt").write_text("o\n")
    (base / "logo.png").write_bytes(png(4, 4))
    make_repository(base)
    (base / ".gitignore").write_text("*.log\n")
    (base / "src" / "debug.log").write_text("l\n")
    (base / "link").symlink_to("src/app.py")
    (base / "out").symlink_to("/")


def validator(schema):
    cls = jsonschema.validators.validator_for(schema, default=jsonschema.Draft202012Validator)
    cls.check_schema(schema)
    return cls(schema)


def test_every_registered_tool_has_a_sample():
    missing = set(load_tools()) - {tool for tool, _ in SAMPLES}
    assert not missing, f"tools without a success sample: {sorted(missing)}"


@pytest.mark.parametrize(("tool", "args"), SAMPLES,
                         ids=[f"{t}-{i}" for i, (t, _) in enumerate(SAMPLES)])
def test_a_real_success_envelope_validates(tmp_path, make_root, tool, args):
    build(tmp_path)
    toolbox = Toolbox(make_root(tmp_path))
    envelope = json.loads(json.dumps(toolbox.call(tool, args)))
    assert envelope["ok"] is True, envelope
    schema = toolbox.spec(tool).output_schema
    errors = sorted(validator(schema).iter_errors(envelope), key=str)
    assert not errors, [e.message for e in errors]


def test_a_wrong_envelope_does_not_validate(tmp_path):
    """The schemas are not vacuous: a text read without content, an image
    without data, a tree entry without a kind are all rejected."""
    build(tmp_path)
    toolbox = Toolbox(tmp_path)
    for tool, args, drop in (("read_file", {"path": "src/app.py"}, ("content",)),
                             ("read_file", {"path": "logo.png"}, ("data",)),
                             ("file_info", {"path": "src/app.py"}, ("mtime",)),
                             ("read_files", {"paths": ["src/app.py"]}, ("budget",))):
        envelope = toolbox.call(tool, args)
        for key in drop:
            del envelope[key]
        assert not validator(toolbox.spec(tool).output_schema).is_valid(envelope), (tool, drop)
    listing = toolbox.call("list_directory", {"path": ".", "depth": 2})
    src = next(e for e in listing["entries"] if e["name"] == "src")
    del src["entries"][0]["kind"]
    assert not validator(toolbox.spec("list_directory").output_schema).is_valid(listing)


@pytest.mark.parametrize("fmt", FORMATS)
def test_every_tool_in_every_host_format(fmt):
    names = list(load_tools())
    for strict in (False, True):
        definitions = tool_definitions(None, fmt, strict=strict)
        found = [d.get("name") or d["function"]["name"] for d in definitions]
        assert found == names
        for definition in definitions:
            json.dumps(definition)  # plain JSON, whatever the format
            if fmt == "mcp":
                assert definition["title"] and definition["outputSchema"]["type"] == "object"
                notes = definition["annotations"]
                assert notes["openWorldHint"] is False and notes["title"] == definition["title"]


def test_annotations_of_the_new_tools():
    mcp = {d["name"]: d["annotations"] for d in tool_definitions(None, "mcp")}
    assert mcp["read_files"] == {"title": "Read several files", "readOnlyHint": True,
                                 "destructiveHint": False, "idempotentHint": True,
                                 "openWorldHint": False}
    assert mcp["file_info"]["readOnlyHint"] is True
    assert mcp["make_directory"] == {"title": "Make directory", "readOnlyHint": False,
                                     "destructiveHint": False, "idempotentHint": True,
                                     "openWorldHint": False}
    read_only = {d["name"] for d in tool_definitions(None, "mcp", read_only=True)}
    assert {"read_files", "file_info"} <= read_only and "make_directory" not in read_only
