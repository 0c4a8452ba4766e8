"""An independent red-team pass (round twenty-three, second team), held and
kept cheap: with several roots, every answer about a denied name (the
envelope, what a model is shown of it, and Claude's text editor's view) is
the same whether the name exists or not, by every spelling (no root
prefix, the other root's, ``./web//``, ``..``, an absolute path, another
case, a link to the denied folder, near names that a suggestion could
complete), through reads, listings, searches, writes, moves, deletes and
patches, with the deny rule in every root or in one (as ``corral serve``
anchors ``web/secrets/**``), on every backend config.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any

import pytest

from corral.hosts import render
from corral.integrations._text_editor import run_text_editor
from corral.tools import Toolbox, Workspace

_NAMES = ["secrets/prod-db.txt", "secrets/sub/k.txt", "secrets/prod-db.tx", "secrets/sub/",
          "secret/prod-db.txt", "prod-db.txt", "sub/k.txt", "src/sl/prod-db.txt",
          "secrets/PROD-DB.txt"]


def _spellings(base: Path) -> list[str]:
    out = []
    for name in _NAMES:
        out += [name, f"web/{name}", f"api/{name}", f"./web//{name}", f"web/src/../{name}",
                f"{base}/web/{name}", f"Web/{name}"]
    return out


def _calls(path: str) -> list[tuple[str, dict[str, Any]]]:
    patch = "*** Begin Patch\n*** {} File: {}\n{}*** End Patch"
    return [
        ("read_file", {"path": path}),
        ("read_files", {"paths": [path]}),
        ("file_info", {"path": path}),
        ("list_directory", {"path": path, "depth": 2}),
        ("glob", {"pattern": path}),
        ("grep", {"pattern": "hunter", "include": path}),
        ("write_file", {"path": f"{path}/n.txt", "content": "x"}),
        ("edit_file", {"path": path, "oldText": "hunter2", "newText": "y"}),
        ("move_file", {"source": path, "destination": "web/src/m.txt"}),
        ("move_file", {"source": "api/src/a.py", "destination": path}),
        ("delete_file", {"path": path}),
        ("make_directory", {"path": f"{path}/q"}),
        ("apply_patch", {"input": patch.format("Update", path, "@@\n-hunter2\n+x\n")}),
        ("apply_patch", {"input": patch.format("Delete", path, "")}),
    ]


def _world(base: Path, exists: bool) -> None:
    for name in ("web", "api"):
        (base / name / "secrets").mkdir(parents=True)
        (base / name / "src").mkdir()
        (base / name / "src" / "a.py").write_text("print(1)\n")
        os.symlink("../secrets", base / name / "src" / "sl")
    if exists:
        (base / "web" / "secrets" / "prod-db.txt").write_text("hunter2\n")
        (base / "web" / "secrets" / "sub").mkdir()
        (base / "web" / "secrets" / "sub" / "k.txt").write_text("k\n")


_TIMES = re.compile(r'"(a|c|m)time(Ns)?": ("[^"]*"|\d+)|\d{4}-\d\d-\d\dT[\d:.]+Z')


def _answers(base: Path, make_root, deny: dict[str, list[str]]) -> list[str]:
    boxes = {name: Toolbox(make_root(str(base / name)), deny=deny[name], editing=editing)
             for name, editing in (("web", "corral"), ("api", "corral"))}
    patching = {name: Toolbox(make_root(str(base / name)), deny=deny[name],
                              editing="apply_patch") for name in ("web", "api")}
    workspace, patches = Workspace(boxes), Workspace(patching)
    out = []
    for path in _spellings(base):
        for tool, args in _calls(path):
            answer = (patches if tool == "apply_patch" else workspace).call(tool, args)
            out.append(_TIMES.sub("T", json.dumps(answer, sort_keys=True)))
            out.append(_TIMES.sub("T", render(tool, answer)))
        out.append(run_text_editor(boxes["web"], {"command": "view", "path": path}).text)
    return out


@pytest.mark.parametrize("deny", [
    {"web": ["secrets/**"], "api": ["secrets/**"]},
    {"web": ["secrets"], "api": ["secrets"]},
    {"web": ["**/prod-db.txt", "**/sub"], "api": ["**/prod-db.txt", "**/sub"]},
    {"web": ["secrets/**"], "api": []},
], ids=["secrets-contents", "secrets", "by-name", "one-root"])
def test_a_denied_name_is_answered_alike_whether_it_exists(tmp_path, make_root, deny):
    answers = []
    for exists in (True, False):
        base = tmp_path / str(exists)
        _world(base, exists)
        answers.append([a.replace(str(base), "BASE") for a in _answers(base, make_root, deny)])
    differing = [(i, a, b) for i, (a, b) in enumerate(zip(*answers)) if a != b]
    assert not differing, differing[:5]
    assert not any("hunter2" in a for a in answers[0] if not a.startswith("{\"code\""))


def test_a_name_the_client_s_roots_leave_out_is_answered_alike_whether_it_exists(
        tmp_path, monkeypatch, make_root):
    """``corral serve ROOT`` narrowed by the client to ``ROOT/web``: a name
    in ``ROOT/api`` (absolute, a ``file://`` URI, ``..`` out of web, a
    doubled slash) is answered the same whether it exists."""
    from corral.cli import _parser, _serve_workspace

    monkeypatch.setenv("CORRAL_BACKEND", make_root.backend_name)
    monkeypatch.setenv("CORRAL_OPENAT2", "1" if make_root.fast_path else "0")
    answers = []
    for exists in (True, False):
        base = tmp_path / str(exists)
        (base / "web" / "src").mkdir(parents=True)
        (base / "api" / "conf").mkdir(parents=True)
        if exists:
            (base / "api" / "conf" / "secret.txt").write_text("s\n")
            (base / "api" / "conf" / "d").mkdir()
        served = _serve_workspace(_parser()[0].parse_args(["serve", str(base)]))
        narrowed = served.narrowed([str(base / "web")])
        out = []
        for path in [f"{base}/api/conf/secret.txt", f"{base}/api/conf/d", f"{base}/api/conf/d/",
                     f"file://{base}/api/conf/secret.txt", "../api/conf/secret.txt",
                     f"{base}/web/../api/conf/secret.txt", f"{base}/api//conf/secret.txt"]:
            for tool, args in [("read_file", {"path": path}), ("file_info", {"path": path}),
                               ("list_directory", {"path": path}),
                               ("write_file", {"path": path, "content": "x"}),
                               ("move_file", {"source": "src", "destination": path}),
                               ("glob", {"pattern": path}), ("delete_file", {"path": path})]:
                answer = json.dumps(narrowed.call(tool, args), sort_keys=True)
                out.append(answer.replace(str(base), "BASE"))
        narrowed.close()
        for name in served.roots:
            served.toolbox(name).close()
        answers.append(out)
    assert answers[0] == answers[1]
    assert (tmp_path / "True" / "api" / "conf" / "secret.txt").read_text() == "s\n"
