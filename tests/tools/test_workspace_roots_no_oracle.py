"""Several roots: a denied or hidden name answers the same whether or not it
exists, in every root; a path that exists in exactly one other root is
offered there, never when that root hides it.

Two workspaces are built that differ only in whether the hidden file is
there; every call gets the very same answer from both (host paths are
spelled alike: each tree is built under a directory of the same name
length, and answers never carry host paths).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from corral.tools import Toolbox, Workspace

HIDDEN = [
    ("web", "secrets/prod.txt"),   # denied by the host's pattern
    ("web", ".env"),               # a default secret
    ("api", "secrets/prod.txt"),
    ("web", "inner/secrets/in.txt"),   # denied by the inner root only
]
# A secret's name is listed, and it may be created and deleted (the policy
# keeps only its content back): those answers differ by design.
SECRET_MAY_TELL = {"write_file", "delete_file", "file_info", "move_file", "list_directory"}


def _build(base: Path, present: bool) -> dict[str, Path]:
    web, api = base / "web", base / "api"
    for d in (web / "src", web / "secrets", web / "inner" / "secrets", api / "pkg",
              api / "secrets"):
        d.mkdir(parents=True)
    (web / "src" / "app.js").write_text("app\n")
    (api / "pkg" / "main.py").write_text("main\n")
    (api / "only_api.txt").write_text("api only\n")
    if present:
        for root, rel in HIDDEN:
            (base / root / rel).write_text("HIDDEN\n")
    return {"web": web, "api": api, "inner": web / "inner"}


def _workspace(make_root, dirs: dict[str, Path]) -> Workspace:
    return Workspace({
        "web": Toolbox(make_root(str(dirs["web"])), deny=["secrets/**"]),
        "api": Toolbox(make_root(str(dirs["api"])), deny=["secrets/**"]),
        "inner": Toolbox(make_root(str(dirs["inner"])), deny=["secrets/**"]),
    })


@pytest.fixture
def pair(tmp_path, make_root):
    with_file = _build(tmp_path / "a", present=True)
    without = _build(tmp_path / "b", present=False)
    return _workspace(make_root, with_file), _workspace(make_root, without), tmp_path


def _calls(prefix_a: Path) -> list[tuple[str, dict]]:
    calls: list[tuple[str, dict]] = []
    for root, rel in HIDDEN:
        spellings = [f"{root}/{rel}", rel, f"{root}/./{rel}", f"{root}//{rel}"]
        if rel.startswith("inner/"):
            spellings.append("inner/" + rel.split("/", 1)[1])
        for path in spellings:
            calls += [
                ("read_file", {"path": path}),
                ("file_info", {"path": path}),
                ("edit_file", {"path": path, "oldText": "HIDDEN", "newText": "SEEN"}),
                ("write_file", {"path": path, "content": "x", "overwrite": False}),
                ("delete_file", {"path": path}),
                ("move_file", {"source": path, "destination": f"{root}/moved.txt"}),
                ("list_directory", {"path": path.rsplit("/", 1)[0] if "/" in path else root}),
                ("glob", {"pattern": path}),
                ("glob", {"pattern": rel.rsplit("/", 1)[-1], "path": root}),
                ("grep", {"pattern": "HIDDEN", "path": root}),
            ]
            if rel == ".env":
                calls = [(tool, args) for tool, args in calls if tool not in SECRET_MAY_TELL]
    return calls


def _shown(tool: str, answer: dict) -> dict:
    """What must not differ: all but a search's counts of what it left out
    (told by design, never a name)."""
    if tool in ("grep", "glob") and answer.get("ok"):
        return {k: v for k, v in answer.items() if k not in ("denied", "filesIncluded")}
    return answer


def test_a_hidden_name_answers_the_same_whether_or_not_it_exists(pair):
    present, absent, _ = pair
    differ = []
    for tool, args in _calls(Path()):
        one = _shown(tool, present.call(tool, dict(args)))
        other = _shown(tool, absent.call(tool, dict(args)))
        if one != other:
            differ.append((tool, args, one, other))
    assert not differ, differ[:3]


def test_nothing_hidden_is_offered_in_another_root(pair):
    present, _, _ = pair
    for path in ("secrets/prod.txt", "api/secrets/prod.txt", "web/.env", "api/.env",
                 "api/inner/secrets/in.txt", "secrets/in.txt", "inner/secrets/in.txt"):
        answer = present.call("read_file", {"path": path})
        assert answer["ok"] is False, answer
        assert "didYouMean" not in answer["details"], answer
        assert path.rsplit("/", 1)[-1] not in repr(answer.get("suggestedArgs")), answer


def _tree(base: Path) -> tuple[Workspace, Path]:
    web, api = base / "web", base / "api"
    (web / "src").mkdir(parents=True)
    (api / "pkg").mkdir(parents=True)
    (web / "src" / "app.js").write_text("app\n")
    (api / "pkg" / "main.py").write_text("main\n")
    (web / "pkg").mkdir()
    return Workspace({"web": Toolbox(str(web)), "api": Toolbox(str(api))}), base


def test_a_path_under_the_wrong_root_is_offered_in_the_one_root_where_it_exists(tmp_path):
    ws, base = _tree(tmp_path)
    answer = ws.call("read_file", {"path": "api/src/app.js"})
    assert answer["ok"] is False and answer["code"] == "NOT_FOUND", answer
    assert answer["details"]["didYouMean"] == ["web/src/app.js"], answer
    assert "web/src/app.js" in answer["hint"], answer
    assert answer["suggestedTool"] == "read_file", answer
    assert answer["suggestedArgs"] == {"path": "web/src/app.js"}, answer
    assert ws.call(answer["suggestedTool"], answer["suggestedArgs"])["ok"] is True
    edit = ws.call("edit_file", {"path": "web/pkg/main.py", "oldText": "main", "newText": "x"})
    assert edit["ok"] is False and edit["details"]["didYouMean"] == ["api/pkg/main.py"], edit
    assert (base / "api" / "pkg" / "main.py").read_text() == "main\n"


def test_a_path_in_no_other_root_or_in_two_is_not_offered(tmp_path):
    ws, base = _tree(tmp_path)
    (base / "third" / "src").mkdir(parents=True)
    (base / "third" / "src" / "app.js").write_text("other\n")
    nowhere = ws.call("read_file", {"path": "api/src/nothing.js"})
    assert nowhere["ok"] is False and "didYouMean" not in nowhere["details"], nowhere
    ws3 = Workspace({"web": Toolbox(str(base / "web")), "api": Toolbox(str(base / "api")),
                     "third": Toolbox(str(base / "third"))})
    both = ws3.call("read_file", {"path": "api/src/app.js"})
    assert both["ok"] is False and "didYouMean" not in both["details"], both


def test_an_existing_secret_is_not_replaced_and_its_digest_is_never_told(tmp_path, make_root):
    (tmp_path / ".env").write_text("TOKEN=hunter2\n")
    box = Toolbox(make_root(str(tmp_path)))
    for args in ({"path": ".env", "content": "x"},
                 {"path": ".env", "content": "x", "overwrite": False}):
        answer = box.call("write_file", args)
        assert answer["ok"] is False and answer["code"] == "DENIED", answer
        assert answer["details"]["kind"] == "secret", answer
        assert "currentSha256" not in answer["details"] and "sha256" not in repr(answer), answer
    assert (tmp_path / ".env").read_text() == "TOKEN=hunter2\n"
