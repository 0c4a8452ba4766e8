"""Host configs the bounded look at open does not reach: an ``.envrc``
(``PATH_add bin``, ``. ./scripts/env.sh``) eight levels down, one in a
directory past the first 2,000 the look lists (beside 2,100 others), and
70 directories each holding one (more than the look reads).  direnv
loads each when the user enters its directory, so what it puts on
``PATH`` and sources is protected wherever the config lies."""
from __future__ import annotations

import time
from pathlib import Path

import pytest

from corral.tools import Toolbox

ENVRC = "PATH_add bin\n. ./scripts/env.sh\n"


def _project(base: Path, rel: str) -> None:
    (base / rel / "bin").mkdir(parents=True)
    (base / rel / "scripts").mkdir()
    (base / rel / "scripts" / "env.sh").write_text("export A=1\n")
    (base / rel / ".envrc").write_text(ENVRC)


def _deep(base: Path) -> list[str]:
    _project(base, "a/b/c/d/e/f/g/app")
    return ["a/b/c/d/e/f/g/app"]


def _wide(base: Path) -> list[str]:
    for i in range(2100):
        (base / f"d{i:04d}").mkdir()
    _project(base, "zz/app")  # below every one of them, breadth first
    return ["zz/app"]


def _many(base: Path) -> list[str]:
    projects = [f"p{i:02d}" for i in range(70)]
    for rel in projects:
        _project(base, rel)
    return projects


_SHAPES = {"deep": _deep, "wide": _wide, "many": _many}


@pytest.mark.parametrize("shape", sorted(_SHAPES))
def test_what_an_envrc_past_the_look_runs_is_protected(sec_tmp, make_root, shape):
    base = Path(sec_tmp)
    projects = _SHAPES[shape](base)
    box = Toolbox(make_root(sec_tmp))
    for rel in projects:
        for path, tool, args in (
                (f"{rel}/bin/git", "write_file", {"content": "#!/bin/sh\necho MODEL\n"}),
                (f"{rel}/scripts/env.sh", "write_file", {"content": "echo MODEL\n",
                                                         "overwrite": True}),
                (f"{rel}/scripts/env.sh", "edit_file", {"oldText": "A=1", "newText": "A=2"})):
            answer = box.call(tool, {"path": path, **args})
            deadline = time.monotonic() + 30
            while (not answer["ok"] and answer["details"].get("kind") == "not_ready"
                   and time.monotonic() < deadline):  # the walk past the look is under way
                answer = box.call(tool, {"path": path, **args})
            assert answer["ok"] is False and answer["code"] == "DENIED", (path, answer)
        assert not (base / rel / "bin" / "git").exists()
        assert (base / rel / "scripts" / "env.sh").read_text() == "export A=1\n"


def test_what_a_repository_past_the_look_runs_is_protected(sec_tmp, make_root):
    """A repository eight levels down (a vendored checkout): its config's
    ``core.fsmonitor`` script and what its ``pre-commit`` hook runs."""
    base = Path(sec_tmp)
    repo = base / "a/b/c/d/e/f/g/repo"
    for sub in ("hooks", "objects", "refs/heads"):
        (repo / ".git" / sub).mkdir(parents=True)
    (repo / ".git" / "HEAD").write_text("ref: refs/heads/main\n")
    (repo / ".git" / "config").write_text("[core]\n\tfsmonitor = ./fs.sh\n")
    (repo / ".git" / "hooks" / "pre-commit").write_text("#!/bin/sh\n./check.sh\n")
    box = Toolbox(make_root(sec_tmp))
    for name in ("fs.sh", "check.sh"):
        path = f"a/b/c/d/e/f/g/repo/{name}"
        answer = box.call("write_file", {"path": path, "content": "#!/bin/sh\necho MODEL\n"})
        deadline = time.monotonic() + 30
        while (not answer["ok"] and answer["details"].get("kind") == "not_ready"
               and time.monotonic() < deadline):
            answer = box.call("write_file", {"path": path, "content": "#!/bin/sh\necho MODEL\n"})
        assert answer["ok"] is False and answer["code"] == "DENIED", (path, answer)
        assert not (repo / name).exists()
