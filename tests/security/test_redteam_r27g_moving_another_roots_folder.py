"""Round twenty-seven: a move or delete that would carry away the folder
another root is served from (a Workspace's nested root, or a root another
Toolbox serves) is refused, and the refusal says why.  It said the folder
"is protected: the host may run it on its own", a reason that is not true
(nothing runs there) and gives the model nothing to act on.  Now the kind
is ``another_root`` and the sentence names the other root's folder; the
tree is unchanged, and a folder beside it still moves.
"""

from __future__ import annotations

from corral.tools import Toolbox, Workspace


def _tree(base):
    for rel in ("inner/a.txt", "inner/deep/b.txt", "other/c.txt"):
        (base / rel).parent.mkdir(parents=True, exist_ok=True)
        (base / rel).write_text("x\n")


def _says_another_root(answer, path):
    assert answer["ok"] is False, answer
    assert answer["code"] == "DENIED" and answer["details"]["kind"] == "another_root", answer
    assert "another root" in answer["message"] and "run it on its own" not in answer["message"]
    assert answer["details"]["path"] == path, answer


def test_a_workspaces_nested_root_is_not_moved_or_deleted_and_it_says_why(tmp_path, make_root):
    _tree(tmp_path)
    ws = Workspace({"a": Toolbox(make_root(str(tmp_path))),
                    "b": Toolbox(make_root(str(tmp_path / "inner" / "deep")))})
    try:
        _says_another_root(ws.call("move_file", {"source": "a/inner", "destination": "a/moved"}),
                           "a/inner")
        _says_another_root(ws.call("delete_file", {"path": "a/inner"}),
                           "a/inner")
        beside = ws.call("move_file", {"source": "a/other", "destination": "a/other2"})
    finally:
        ws.close()
    assert (tmp_path / "inner" / "deep" / "b.txt").read_text() == "x\n"
    assert not (tmp_path / "moved").exists()
    assert beside["ok"] is True, beside


def test_a_folder_another_toolbox_serves_is_not_moved_and_it_says_why(tmp_path, make_root):
    _tree(tmp_path)
    with Toolbox(make_root(str(tmp_path / "inner" / "deep"))), \
            Toolbox(make_root(str(tmp_path))) as outer:
        move = outer.call("move_file", {"source": "inner", "destination": "moved"})
    assert move["ok"] is False and move["details"]["kind"] == "another_root", move
    assert "another root" in move["message"] and "run it on its own" not in move["message"]
    assert (tmp_path / "inner" / "deep" / "b.txt").read_text() == "x\n"
    assert not (tmp_path / "moved").exists()
