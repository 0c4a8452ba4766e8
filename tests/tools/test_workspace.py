"""``Workspace``: the tools of several roots behind one call.

One root: exactly the Toolbox.  Several: a path names its root by its first
component or by an absolute host path inside it; answers name paths the same
way; a call never spans two roots; the roots protocol's intersection never
widens what the command line allowed.
"""

from __future__ import annotations

import asyncio
import os
from pathlib import Path
from typing import Any

import pytest

from corral.contained import Root
from corral.tools import CancelToken, Progress, ReadRequest, Toolbox, ToolSpec, Workspace
from corral.tools._runtime.context import ToolContext
from corral.tools._runtime.registry import success_schema
from corral.hosts import root_names
from corral.tools._runtime.workspace import policy_beneath


def _tree(base: Path) -> dict[str, Path]:
    web, api = base / "web", base / "api"
    (web / "src").mkdir(parents=True)
    (api / "pkg").mkdir(parents=True)
    (web / "src" / "app.js").write_text("console.log('web')\n")
    (web / "index.html").write_text("<p>web</p>\n")
    (api / "pkg" / "main.py").write_text("print('api')\n")
    (api / "only_api.txt").write_text("api only\n")
    (base / "outside.txt").write_text("LEAKMARK\n")
    return {"web": web, "api": api}


def _opener(root: Root, parent: Toolbox, base: str) -> Toolbox:
    return Toolbox(root)


@pytest.fixture
def dirs(tmp_path: Path) -> dict[str, Path]:
    return _tree(tmp_path)


@pytest.fixture
def boxes(dirs):
    made = {name: Toolbox(path) for name, path in dirs.items()}
    yield made
    for box in made.values():
        box.close()


@pytest.fixture
def ws(boxes) -> Workspace:
    return Workspace(boxes, opener=_opener)


# -- names -----------------------------------------------------------------------

def test_root_names_are_base_names_made_unique(tmp_path):
    assert root_names([str(tmp_path / "a" / "web"), str(tmp_path / "b" / "web"),
                       str(tmp_path / "api"), "/", str(tmp_path / "c" / "web") + "/"]) == \
        ["web", "web-2", "api", "root", "web-3"]


def test_unusable_names_are_refused(boxes):
    for name in ("", ".", "..", "a/b"):
        with pytest.raises(ValueError):
            Workspace({name: boxes["web"]})


# -- one root: the Toolbox itself ------------------------------------------------------

@pytest.mark.parametrize("tool,args", [
    ("read_file", {"path": "index.html"}), ("list_directory", None),
    ("glob", {"pattern": "**/*"}), ("read_file", {"path": "../outside.txt"}),
    ("read_file", {"path": "src/ap.js"}), ("write_file", {"path": "n/new.txt", "content": "x"}),
    ("no_such_tool", {}),
])
def test_one_root_is_exactly_its_toolbox(tool, args, dirs, tmp_path):
    with Toolbox(dirs["web"]) as alone, Toolbox(tmp_path / "web") as other:
        expected = alone.call(tool, args)
        if tool == "write_file":
            (dirs["web"] / "n" / "new.txt").unlink()
            (dirs["web"] / "n").rmdir()
        got = Workspace({"web": other}).call(tool, args)
    assert got == expected
    assert Workspace({"web": alone}).path_rule() == ""


# -- several roots: routing --------------------------------------------------------------

def test_the_first_component_names_the_root(ws):
    envelope = ws.call("read_file", {"path": "api/pkg/main.py"})
    assert envelope["ok"] is True and envelope["path"] == "api/pkg/main.py"
    assert "print('api')" in envelope["content"]
    assert ws.call("read_file", {"path": "./web/index.html"})["path"] == "web/index.html"


def test_answers_name_paths_with_their_root(ws, dirs):
    listing = ws.call("list_directory", {"path": "web"})
    assert listing["path"] == "web" and {e["name"] for e in listing["entries"]} == {
        "src", "index.html"}
    found = ws.call("glob", {"pattern": "**/*.js", "path": "web"})
    assert found["path"] == "web" and found["paths"] == ["web/src/app.js"]
    grep = ws.call("grep", {"pattern": "api", "path": "api"})
    assert {m["path"] for m in grep["matches"]} == {"api/pkg/main.py", "api/only_api.txt"}
    written = ws.call("write_file", {"path": "web/a/b/c.txt", "content": "c"})
    assert written["path"] == "web/a/b/c.txt"
    assert written["createdDirectories"] == ["web/a", "web/a/b"]
    assert (dirs["web"] / "a" / "b" / "c.txt").read_text() == "c"
    moved = ws.call("move_file", {"source": "web/a/b/c.txt", "destination": "web/c.txt"})
    assert (moved["source"], moved["destination"]) == ("web/a/b/c.txt", "web/c.txt")


def test_new_tools_name_paths_with_their_root(ws, dirs):
    os.symlink("pkg/main.py", dirs["api"] / "link")
    info = ws.call("file_info", {"path": "api/link"})
    assert (info["path"], info["target"]) == ("api/link", "api/pkg/main.py")
    made = ws.call("make_directory", {"path": "web/a/b"})
    assert made["createdDirectories"] == ["web/a", "web/a/b"]
    both = ws.call("read_files", {"paths": ["api/pkg/main.py", "api/only_api.txt"]})
    assert [f["path"] for f in both["files"]] == ["api/pkg/main.py", "api/only_api.txt"]
    across = ws.call("read_files", {"paths": ["api/pkg/main.py", "web/index.html"]})
    assert across["code"] == "UNSUPPORTED" and across["details"]["kind"] == "cross_root"


def test_refusals_name_paths_with_their_root_and_suggest_working_calls(ws):
    missing = ws.call("read_file", {"path": "web/src/ap.js"})
    assert missing["code"] == "NOT_FOUND"
    assert missing["details"]["path"] == "web/src/ap.js"
    assert missing["details"]["didYouMean"] == ["web/src/app.js"]
    assert missing["suggestedArgs"] == {"path": "web/src/app.js"}
    assert ws.call(missing["suggestedTool"], missing["suggestedArgs"])["ok"] is True


def test_an_absolute_path_inside_a_root_goes_to_that_root(ws, dirs):
    envelope = ws.call("read_file", {"path": str(dirs["api"] / "pkg" / "main.py")})
    assert envelope["ok"] is True and envelope["path"] == "api/pkg/main.py"
    assert str(dirs["api"]) not in str(envelope)


def test_an_absolute_path_goes_to_the_deepest_root(dirs, boxes):
    inner = dirs["web"] / "src"
    with Toolbox(inner) as box:
        ws = Workspace({"web": boxes["web"], "src": box})
        envelope = ws.call("read_file", {"path": str(inner / "app.js")})
        assert envelope["path"] == "src/app.js"


@pytest.mark.parametrize("spelling", [
    "api//pkg/main.py", "api/./pkg//main.py", ".//api/pkg/main.py", "./api/./pkg/./main.py",
    "api\\pkg\\main.py", "api\\pkg/main.py", ".\\api\\pkg\\main.py", "api//pkg\\main.py",
])
def test_a_root_name_is_read_with_the_tools_spelling_rules(spelling, ws):
    """'api//x' must not be routed with '/x' left (an absolute path:
    OUTSIDE_ROOT), nor backslashes taken for unknown_root: routing reads paths
    as the tools do: '//' and '/./' collapse, '\\' separates names."""
    envelope = ws.call("read_file", {"path": spelling})
    assert envelope["ok"] is True, envelope
    assert envelope["path"] == "api/pkg/main.py" and "print('api')" in envelope["content"]


def test_file_uris_and_odd_absolute_spellings_route_to_their_root(ws, dirs):
    main = dirs["api"] / "pkg" / "main.py"
    host = str(main)
    for spelling in (main.as_uri(), "file://localhost" + host, host.replace("/", "//"),
                     host.replace("/pkg/", "/./pkg/"), host.replace("/", "\\"),
                     main.as_uri().replace("/pkg/", "//pkg/")):
        envelope = ws.call("read_file", {"path": spelling})
        assert envelope["ok"] is True, (spelling, envelope)
        assert "print('api')" in envelope["content"], spelling
    for outside in ("file://otherhost" + host, "file://C:/x", "file:///nowhere/x"):
        envelope = ws.call("read_file", {"path": outside})
        assert envelope["code"] == "OUTSIDE_ROOT", (outside, envelope)


def test_a_trailing_slash_survives_routing(ws):
    envelope = ws.call("list_directory", {"path": "api//pkg/"})
    assert envelope["ok"] is True and envelope["path"] == "api/pkg", envelope
    refused = ws.call("read_file", {"path": "api/pkg/main.py/"})
    assert refused["ok"] is False, refused


@pytest.mark.parametrize("path", ["web/../api/pkg/main.py", "web/..", "web/../../outside.txt",
                                  "..", "../outside.txt"])
def test_no_path_climbs_from_one_root_into_another_or_out(path, ws):
    envelope = ws.call("read_file", {"path": path})
    assert envelope["ok"] is False and envelope["code"] == "OUTSIDE_ROOT", envelope
    assert "content" not in envelope and "LEAKMARK" not in str(envelope)


def test_an_absolute_path_outside_every_root_is_not_echoed(ws, dirs, tmp_path):
    envelope = ws.call("read_file", {"path": str(tmp_path / "outside.txt")})
    assert envelope["code"] == "OUTSIDE_ROOT" and envelope["details"]["kind"] == "outside_roots"
    assert str(tmp_path) not in str(envelope)
    assert ws.call("read_file", {"path": "~/x"})["code"] == "OUTSIDE_ROOT"


def test_a_path_naming_no_root_says_which_roots_there_are(ws):
    envelope = ws.call("read_file", {"path": "only_api.txt"})
    assert envelope["code"] == "INVALID_ARGUMENT"
    assert envelope["details"]["kind"] == "unknown_root"
    assert envelope["details"]["roots"] == ["web", "api"]
    assert envelope["details"]["didYouMean"] == ["api/only_api.txt"]  # it exists in one root
    assert envelope["suggestedArgs"] == {"path": "api/only_api.txt"}
    assert ws.call("read_file", envelope["suggestedArgs"])["ok"] is True
    vague = ws.call("read_file", {"path": "nowhere.txt"})
    assert vague["details"]["kind"] == "unknown_root" and "suggestedTool" not in vague


@pytest.mark.parametrize("args", [None, {}, {"path": "."}, {"path": "./"}])
def test_the_root_of_several_is_not_a_directory(args, ws):
    envelope = ws.call("list_directory", args)
    assert envelope["code"] == "INVALID_ARGUMENT"
    assert envelope["details"]["kind"] == "root_required"
    assert envelope["suggestedTool"] == "list_directory"
    assert ws.call("list_directory", envelope["suggestedArgs"])["ok"] is True
    glob = ws.call("glob", {"pattern": "**/*"})
    assert glob["details"]["kind"] == "root_required" and "suggestedTool" not in glob


def test_a_move_between_roots_is_refused_and_touches_nothing(ws, dirs):
    envelope = ws.call("move_file", {"source": "web/index.html", "destination": "api/x.html"})
    assert envelope["code"] == "UNSUPPORTED" and envelope["details"]["kind"] == "cross_root"
    assert "read it, write it there" in envelope["hint"]
    assert (dirs["web"] / "index.html").exists() and not (dirs["api"] / "x.html").exists()
    absolute = ws.call("move_file", {"source": str(dirs["web"] / "index.html"),
                                     "destination": "api/x.html"})
    assert absolute["details"]["kind"] == "cross_root"


def test_arguments_the_toolbox_refuses_still_get_its_answer(ws):
    assert ws.call("read_file", {"path": ""})["code"] == "INVALID_ARGUMENT"
    assert ws.call("read_file", {"path": 5})["code"] == "INVALID_ARGUMENT"
    assert ws.call("read_file", "not an object")["code"] == "INVALID_ARGUMENT"
    assert ws.call("nope", {})["details"]["kind"] == "unknown_tool"


def test_descriptions_say_the_path_rule(ws):
    rule = ws.path_rule()
    assert "web, api" in rule and '"web/src/main.py"' in rule
    assert all(item["description"].endswith(rule) for item in ws.definitions())
    assert [s.name for s in ws.specs()] == ws.names
    assert ws.mutates("write_file") and not ws.mutates("read_file") and not ws.mutates(3)


def test_acall(ws):
    envelope = asyncio.run(ws.acall("read_file", {"path": "web/index.html"}))
    assert envelope["ok"] is True and envelope["path"] == "web/index.html"


def _checkpointed(ctx: ToolContext, args: dict[str, Any]) -> dict[str, Any]:
    ctx.checkpoint()
    ctx.progress(1, 1, "one step")
    return {"path": ctx.rel(args["path"])}


TOOL = ToolSpec(name="checkpointed", title="Checkpointed", description="A checkpoint.",
                schema={"type": "object", "properties": {"path": {"type": "string"}},
                        "required": ["path"], "additionalProperties": False},
                output_schema=success_schema({"path": {"type": "string"}}, ["path"]),
                run=_checkpointed, request=ReadRequest)


def test_cancel_and_progress_reach_the_root_toolbox(dirs):
    with Toolbox(dirs["web"], tools=[__name__]) as web, \
            Toolbox(dirs["api"], tools=[__name__]) as api:
        ws = Workspace({"web": web, "api": api})
        reports: list[Progress] = []
        done = ws.call("checkpointed", {"path": "api/x"}, progress=reports.append)
        assert done == {"ok": True, "path": "api/x"}
        assert reports == [Progress(1, 1, "one step")]
        token = CancelToken()
        token.cancel()
        envelope = ws.call("checkpointed", {"path": "api/x"}, cancel=token)
        assert envelope["code"] == "DENIED" and envelope["details"]["kind"] == "cancelled"


# -- the roots protocol: narrowing ------------------------------------------------------

def test_a_client_root_equal_to_or_above_a_root_keeps_it(ws, dirs, tmp_path):
    same = ws.narrowed([str(dirs["web"])])
    assert same.roots == ["web"]
    assert same.call("read_file", {"path": "index.html"})["ok"] is True  # one root: plain paths
    above = ws.narrowed([str(tmp_path)])
    assert above.roots == ["web", "api"]


def test_a_client_root_below_a_root_is_opened_beneath_it(ws, dirs):
    narrowed = ws.narrowed([str(dirs["api"] / "pkg"), str(dirs["web"])])
    try:
        assert narrowed.roots == ["pkg", "web"]
        assert narrowed.call("read_file", {"path": "pkg/main.py"})["ok"] is True
        climbed = narrowed.call("read_file", {"path": "pkg/../only_api.txt"})
        assert climbed["code"] == "OUTSIDE_ROOT"  # the client's root is the boundary now
        assert narrowed.call("read_file", {"path": str(dirs["api"] / "only_api.txt")})[
            "code"] == "OUTSIDE_ROOT"
    finally:
        narrowed.close()


def test_narrowing_never_widens(ws, tmp_path):
    (tmp_path / "elsewhere").mkdir()
    none = ws.narrowed([str(tmp_path / "elsewhere")])
    assert none.roots == []
    refused = none.call("read_file", {"path": "web/index.html"})
    assert refused["code"] == "DENIED" and refused["details"]["kind"] == "no_roots"


def test_a_client_root_through_a_link_out_of_the_root_is_dropped(ws, dirs, tmp_path):
    os.symlink(tmp_path, dirs["web"] / "up")
    narrowed = ws.narrowed([str(dirs["web"] / "up" / "elsewhere-not-there")])
    assert narrowed.roots == []


def test_without_an_opener_a_root_below_is_not_opened(boxes, dirs):
    ws = Workspace(boxes)
    assert ws.narrowed([str(dirs["api"] / "pkg")]).roots == []


def test_a_narrowed_workspace_closes_what_it_opened(ws, dirs):
    narrowed = ws.narrowed([str(dirs["api"] / "pkg")])
    opened = narrowed.toolbox("pkg")
    narrowed.close()
    assert opened.root.closed
    assert not ws.toolbox("api").root.closed


def test_the_same_directory_twice_is_one_root(ws, dirs):
    narrowed = ws.narrowed([str(dirs["web"]), str(dirs["web"]) + "/", str(dirs["web"] / ".")])
    assert narrowed.roots == ["web"]


def _directories_held(paths: list[Path]) -> list[str]:
    """Which of ``paths`` an fd of this process holds open."""
    wanted = {(st.st_dev, st.st_ino): p.name for p in paths for st in [p.stat()]}
    held = []
    for name in os.listdir("/proc/self/fd" if os.path.isdir("/proc/self/fd") else "/dev/fd"):
        try:
            st = os.fstat(int(name))
        except OSError:
            continue  # the listing's own fd, closed since
        if (st.st_dev, st.st_ino) in wanted:
            held.append(wanted[(st.st_dev, st.st_ino)])
    return held


def test_a_directory_named_many_ways_is_opened_once(boxes, dirs):
    opened: list[str] = []

    def counting(root: Root, parent: Toolbox, base: str) -> Toolbox:
        opened.append(base)
        return _opener(root, parent, base)

    os.symlink(dirs["api"] / "pkg", dirs["web"].parent / "pkg-link")
    pkg = str(dirs["api"] / "pkg")
    spellings = [pkg, pkg + "/", pkg + "/.", pkg + "//", str(dirs["api"]) + "/../api/pkg",
                 str(dirs["web"].parent / "pkg-link")]
    narrowed = Workspace(boxes, opener=counting).narrowed(spellings * 500)
    try:
        assert narrowed.roots == ["pkg"] and opened == ["pkg"]
        assert narrowed.call("read_file", {"path": "main.py"})["ok"] is True
    finally:
        narrowed.close()


def test_a_client_naming_more_roots_than_the_limit_gets_the_first_ones(boxes, dirs, caplog):
    from corral.tools._runtime.workspace import MAX_CLIENT_ROOTS
    many = [dirs["api"] / f"sub{i:03}" for i in range(MAX_CLIENT_ROOTS + 40)]
    for sub in many:
        sub.mkdir()
        (sub / "note.txt").write_text(sub.name)
    narrowed = Workspace(boxes, opener=_opener).narrowed([str(p) for p in many])
    try:
        assert narrowed.roots == [p.name for p in many[:MAX_CLIENT_ROOTS]]
        assert sorted(set(_directories_held(many))) == narrowed.roots  # those left out: closed
        last = many[MAX_CLIENT_ROOTS - 1].name
        assert narrowed.call("read_file", {"path": f"{last}/note.txt"})["ok"] is True
        assert "40 roots more" in caplog.text
    finally:
        narrowed.close()
    assert _directories_held(many) == []


def _cli_like_opener(root: Root, parent: Toolbox, base: str) -> Toolbox:
    return Toolbox(root, policy=policy_beneath(parent.policy, base))


def test_the_policy_holds_the_same_beneath(dirs):
    (dirs["api"] / "pkg" / "private.py").write_text("token\n")
    (dirs["web"] / ".vscode").mkdir()
    (dirs["web"] / ".vscode" / "tasks.json").write_text("{}\n")
    with Toolbox(dirs["api"], deny=["pkg/private.py"]) as api, Toolbox(dirs["web"]) as web:
        ws = Workspace({"api": api, "web": web}, opener=_cli_like_opener)
        narrowed = ws.narrowed([str(dirs["api"] / "pkg"), str(dirs["web"] / ".vscode")])
        try:
            # an anchored deny rule of the parent root still names the file
            denied = narrowed.call("read_file", {"path": "pkg/private.py"})
            assert denied["code"] == "DENIED" and denied["details"]["kind"] == "deny_rule"
            assert narrowed.call("read_file", {"path": "pkg/main.py"})["ok"] is True
            # **/.vscode/tasks.json matches across the client root's own path
            kept = narrowed.call("write_file", {"path": ".vscode/tasks.json", "content": "x",
                                                "overwrite": True})
            assert kept["code"] == "DENIED" and kept["details"]["kind"] == "protected"
            assert (dirs["web"] / ".vscode" / "tasks.json").read_text() == "{}\n"
        finally:
            narrowed.close()


def test_policy_beneath_composes():
    from corral.tools._policy.rules import Op, Policy

    policy = Policy.build(deny=["a/b/c/secret"])
    assert policy_beneath(policy_beneath(policy, "a"), "b/c").rule("secret", Op.READ) \
        is not None
    assert policy_beneath(policy, "a/b/c").rule("other", Op.READ) is None
