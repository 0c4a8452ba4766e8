"""An independent red-team pass: a link in the chain of an outer root's
hiding name, deleted through a root nested in it.

``outer/vault -> sub/l1`` and ``sub/l1 -> data`` under ``deny=["vault"]``
(or ``outer/.env -> sub/l1``, ``sub/l1 -> prod.cfg``, a secret's name):
what the chain leads to is hidden through either root.  Deleting ``l1``
through the outer root is refused (the name would no longer hide
``data``); through the inner root (``sub`` in the same Workspace, or a
client's root narrowed to ``outer/sub``) it was made, and the next
session read the file in the clear.  Every backend config.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from corral.tools import Toolbox, Workspace

SECRET = "hunter2-round-eleven"


def _deny(outer: Path) -> tuple[dict, str]:
    sub = outer / "sub"
    (sub / "data").mkdir(parents=True)
    (sub / "data" / "prod.txt").write_text(SECRET + "\n")
    os.symlink("data", sub / "l1")
    os.symlink("sub/l1", outer / "vault")
    return {"deny": ["vault"]}, "data/prod.txt"


def _secret(outer: Path) -> tuple[dict, str]:
    sub = outer / "sub"
    sub.mkdir(parents=True)
    (sub / "prod.cfg").write_text(f"API_KEY={SECRET}\n")
    os.symlink("prod.cfg", sub / "l1")
    os.symlink("sub/l1", outer / ".env")
    return {}, "prod.cfg"


_SHAPES = {"deny": _deny, "secret": _secret}


def _workspace(outer: Path, make_root, policy: dict) -> Workspace:
    return Workspace({"outer": Toolbox(make_root(str(outer)), **policy),
                      "inner": Toolbox(make_root(str(outer / "sub")))})


def _narrowed(outer: Path, make_root, policy: dict) -> Workspace:
    parent = Toolbox(make_root(str(outer)), **policy)

    def opener(root, box, base):
        return Toolbox(root, policy=box.policy.beneath(base))

    return Workspace({"outer": parent}, opener=opener).narrowed([str(outer / "sub")])


@pytest.mark.parametrize("shape", sorted(_SHAPES))
def test_a_link_in_an_outer_hiding_chain_is_not_deleted_through_the_inner_root(
        tmp_path, make_root, shape):
    outer = tmp_path / "outer"
    policy, hidden = _SHAPES[shape](outer)
    ws = _workspace(outer, make_root, policy)
    assert ws.call("read_file", {"path": f"inner/{hidden}"})["ok"] is False
    removed = ws.call("delete_file", {"path": "inner/l1"})
    assert os.path.islink(outer / "sub" / "l1"), removed
    assert removed["ok"] is False and removed["code"] == "DENIED", removed
    later = _workspace(outer, make_root, policy)  # the next session
    read = later.call("read_file", {"path": f"inner/{hidden}"})
    assert SECRET not in repr(read), read


@pytest.mark.parametrize("shape", sorted(_SHAPES))
def test_a_link_in_an_outer_hiding_chain_is_not_deleted_through_a_narrowed_root(
        tmp_path, make_root, shape):
    outer = tmp_path / "outer"
    policy, hidden = _SHAPES[shape](outer)
    narrowed = _narrowed(outer, make_root, policy)
    try:
        assert len(narrowed.roots) == 1
        removed = narrowed.call("delete_file", {"path": "l1"})
        assert os.path.islink(outer / "sub" / "l1"), removed
        assert removed["ok"] is False and removed["code"] == "DENIED", removed
    finally:
        narrowed.close()
    read = Toolbox(make_root(str(outer)), **policy).call("read_file",
                                                         {"path": f"sub/{hidden}"})
    assert SECRET not in repr(read), read


def test_a_link_in_a_hiding_chain_of_a_root_beside_is_not_deleted(tmp_path, make_root):
    """``corral serve app shared``: ``app/vault -> ../shared/l1`` and
    ``shared/l1 -> data`` under the app's ``deny=["vault"]``; ``l1``
    deleted through ``shared``."""
    app, shared = tmp_path / "app", tmp_path / "shared"
    app.mkdir()
    (shared / "data").mkdir(parents=True)
    (shared / "data" / "prod.txt").write_text(SECRET + "\n")
    os.symlink("data", shared / "l1")
    os.symlink("../shared/l1", app / "vault")

    def workspace() -> Workspace:
        return Workspace({"app": Toolbox(make_root(str(app)), deny=["vault"]),
                          "shared": Toolbox(make_root(str(shared)))})

    ws = workspace()
    assert ws.call("read_file", {"path": "shared/data/prod.txt"})["ok"] is False
    removed = ws.call("delete_file", {"path": "shared/l1"})
    moved = ws.call("move_file", {"source": "shared/l1", "destination": "shared/l2"})
    assert os.path.islink(shared / "l1"), (removed, moved)
    assert removed["ok"] is False and removed["code"] == "DENIED", removed
    read = workspace().call("read_file", {"path": "shared/data/prod.txt"})
    assert SECRET not in repr(read), read
