"""apply_patch in a multi-root Workspace goes to the root its file headers
name, each path read as that root's; a patch naming files in two roots, or
a path under no root's name, is refused and nothing is written anywhere."""

from __future__ import annotations

from pathlib import Path

import pytest

from corral.tools import Toolbox, Workspace


@pytest.fixture
def workspace(tmp_path: Path) -> Workspace:
    (tmp_path / "web" / "api").mkdir(parents=True)
    (tmp_path / "api").mkdir()
    (tmp_path / "web" / "api" / "x.py").write_text("a\n")
    return Workspace({"web": Toolbox(tmp_path / "web"), "api": Toolbox(tmp_path / "api")})


def _files(tmp_path: Path) -> set[str]:
    return {p.relative_to(tmp_path).as_posix() for p in tmp_path.rglob("*") if p.is_file()}


def patch(*sections: str) -> dict[str, str]:
    return {"input": "*** Begin Patch\n" + "".join(sections) + "*** End Patch\n"}


def test_an_added_file_lands_in_the_root_its_header_names(workspace: Workspace,
                                                          tmp_path: Path) -> None:
    answer = workspace.call("apply_patch", patch("*** Add File: api/new.py\n+b\n"))
    assert answer["ok"] is True, answer
    assert answer["files"][0]["path"] == "api/new.py"
    assert (tmp_path / "api" / "new.py").read_text() == "b\n"
    assert _files(tmp_path) == {"web/api/x.py", "api/new.py"}


def test_an_update_is_read_beneath_its_root(workspace: Workspace, tmp_path: Path) -> None:
    assert workspace.call("read_file", {"path": "web/api/x.py"})["ok"] is True
    answer = workspace.call("apply_patch",
                            patch("*** Update File: web/api/x.py\n@@\n-a\n+b\n"))
    assert answer["ok"] is True, answer
    assert answer["files"][0]["path"] == "web/api/x.py"
    assert (tmp_path / "web" / "api" / "x.py").read_text() == "b\n"


@pytest.mark.parametrize("sections", [
    ("*** Add File: api/n2.py\n+b\n", "*** Add File: web/n3.py\n+c\n"),
    ("*** Update File: web/api/x.py\n*** Move to: api/moved.py\n@@\n-a\n+c\n",),
], ids=["two-files", "move-across"])
def test_a_patch_spanning_two_roots_is_refused_and_writes_nothing(
        workspace: Workspace, tmp_path: Path, sections: tuple[str, ...]) -> None:
    workspace.call("read_file", {"path": "web/api/x.py"})
    answer = workspace.call("apply_patch", patch(*sections))
    assert answer["ok"] is False and answer["code"] == "UNSUPPORTED", answer
    assert answer["details"]["kind"] == "cross_root"
    assert _files(tmp_path) == {"web/api/x.py"}
    assert (tmp_path / "web" / "api" / "x.py").read_text() == "a\n"


def test_a_path_under_no_roots_name_is_refused(workspace: Workspace, tmp_path: Path) -> None:
    answer = workspace.call("apply_patch", patch("*** Add File: n4.py\n+b\n"))
    assert answer["ok"] is False and answer["code"] == "INVALID_ARGUMENT", answer
    assert answer["details"]["kind"] == "unknown_root"
    assert _files(tmp_path) == {"web/api/x.py"}
