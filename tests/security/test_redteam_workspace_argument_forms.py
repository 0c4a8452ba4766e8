"""An independent red-team pass: a multi-root Workspace routes a call by the paths the root's Toolbox will
read, in every form a Toolbox reads arguments: a JSON text (what some
clients pass on, an MCP ``arguments`` string, a model's double-encoded
call) and another tool's name for ``path`` (``file_path``, ``filePath``,
``target_file``...).

Routed by the object's keys alone, such a call went to the first root with
its path as written: ``write_file {"file_path": "api/x.txt"}`` made
``web/api/x.txt`` (a directory ``api`` in the other repository), and a read
of ``api/a.txt`` read ``web/api/a.txt`` when web had one.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from corral.tools import Toolbox, Workspace

from ..e2e.helpers import RawClient, backend_env, serve_roots_command


def _tree(tmp_path: Path) -> None:
    (tmp_path / "web" / "api").mkdir(parents=True)
    (tmp_path / "api").mkdir()
    (tmp_path / "web" / "api" / "a.txt").write_text("web's look-alike\n")
    (tmp_path / "api" / "a.txt").write_text("api's own\n")


def _files(tmp_path: Path) -> dict[str, str]:
    return {p.relative_to(tmp_path).as_posix(): p.read_text()
            for p in sorted(tmp_path.rglob("*")) if p.is_file()}


# (how the arguments are sent) -> the arguments of a call naming `path`
FORMS = {
    "text": lambda args: json.dumps(args),
    "file_path": lambda args: {("file_path" if k == "path" else k): v for k, v in args.items()},
    "filePath": lambda args: {("filePath" if k == "path" else k): v for k, v in args.items()},
    "target_file, path null": lambda args: {
        "path": None, **{("target_file" if k == "path" else k): v for k, v in args.items()}},
    "text with file_path": lambda args: json.dumps(
        {("file_path" if k == "path" else k): v for k, v in args.items()}),
}


@pytest.mark.parametrize("form", list(FORMS))
def test_a_call_goes_to_the_root_its_path_names(tmp_path: Path, make_root, form: str) -> None:
    _tree(tmp_path)
    workspace = Workspace({"web": Toolbox(make_root(str(tmp_path / "web"))),
                           "api": Toolbox(make_root(str(tmp_path / "api")))})
    sent = FORMS[form]
    read = workspace.call("read_file", sent({"path": "api/a.txt"}))
    assert read["ok"] is True, read
    assert "api's own" in read["content"] and read["path"] == "api/a.txt", read
    wrote = workspace.call("write_file", sent({"path": "api/new.txt", "content": "n\n"}))
    assert wrote["ok"] is True and wrote["path"] == "api/new.txt", wrote
    edited = workspace.call("edit_file", sent({"path": "api/a.txt", "oldText": "own",
                                               "newText": "edited"}))
    assert edited["ok"] is True and edited["path"] == "api/a.txt", edited
    info = workspace.call("file_info", sent({"path": "web/api/a.txt"}))
    assert info["ok"] is True and info["path"] == "web/api/a.txt", info
    assert _files(tmp_path) == {"api/a.txt": "api's edited\n", "api/new.txt": "n\n",
                                "web/api/a.txt": "web's look-alike\n"}


def test_a_patch_sent_as_a_json_text_goes_to_the_root_its_headers_name(tmp_path: Path,
                                                                         make_root) -> None:
    _tree(tmp_path)
    workspace = Workspace({"web": Toolbox(make_root(str(tmp_path / "web"))),
                           "api": Toolbox(make_root(str(tmp_path / "api")))})
    answer = workspace.call("apply_patch", json.dumps(
        {"input": "*** Begin Patch\n*** Add File: api/p.txt\n+p\n*** End Patch\n"}))
    assert answer["ok"] is True and answer["files"][0]["path"] == "api/p.txt", answer
    assert (tmp_path / "api" / "p.txt").read_text() == "p\n"
    assert not (tmp_path / "web" / "api" / "p.txt").exists()


def test_serve_routes_an_arguments_string_by_its_paths(tmp_path: Path) -> None:
    _tree(tmp_path)
    client = RawClient(serve_roots_command([tmp_path / "web", tmp_path / "api"]),
                       env=backend_env())
    try:
        client.initialize()
        answers: list[dict[str, Any]] = [
            client.request("tools/call", {"name": "write_file", "arguments": json.dumps(
                {"path": "api/new.txt", "content": "n\n"})})["result"],
            client.request("tools/call", {"name": "read_file", "arguments": json.dumps(
                {"path": "api/a.txt"})})["result"]]
    finally:
        client.close()
    assert [a["structuredContent"].get("path") for a in answers] == \
        ["api/new.txt", "api/a.txt"], answers
    assert "api's own" in answers[1]["structuredContent"]["content"]
    assert _files(tmp_path) == {"api/a.txt": "api's own\n", "api/new.txt": "n\n",
                                "web/api/a.txt": "web's look-alike\n"}
