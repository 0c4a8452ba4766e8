"""An independent red-team pass (round twenty-seven, third team) over how
a root is named.  An empty root path (a host's ``corral serve "$PROJECT"``
with the variable unset, an MCP client config whose ``${workspaceFolder}``
expanded to nothing) opened the process's working directory: ``Root("")``
took ``os.path.abspath("")``, so the tools were confined to wherever the
host happened to start them (often the user's home, or ``/``), with write
tools on, where every other call of the operating system refuses an empty
path (``open("")``: ``ENOENT``).  An empty root path is refused as no such
directory, by ``Root``, by ``Toolbox``, and by every command that opens a
root (a usage error, exit 2, nothing served).  On every backend config.
"""

from __future__ import annotations

import contextlib
import io
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from corral.cli import main
from corral.tools import Toolbox


@pytest.fixture
def started_in(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    (tmp_path / "notes.txt").write_text("the host's own file\n")
    monkeypatch.chdir(tmp_path)
    return tmp_path


def test_an_empty_root_path_is_no_directory(started_in: Path,
                                            make_root: Callable[..., Any]) -> None:
    for empty in ("", b""):
        with pytest.raises(FileNotFoundError):
            make_root(empty)


def test_a_toolbox_on_an_empty_root_path_is_refused(started_in: Path) -> None:
    with pytest.raises(FileNotFoundError):
        Toolbox("")
    assert (started_in / "notes.txt").read_text() == "the host's own file\n"


@pytest.mark.parametrize(("argv", "said"), [
    (["call", "", "write_file", '{"path": "notes.txt", "content": "x"}'], "cannot open root ''"),
    (["call", "", "read_file", '{"path": "notes.txt"}'], "cannot open root ''"),
    (["serve", ""], "cannot open root ''"),
    (["serve", ".", ""], "cannot open root ''"),
    (["doctor", ""], "root: '': cannot open: No such file or directory"),
])
def test_every_command_refuses_an_empty_root_path(started_in: Path, argv: list[str],
                                                  said: str) -> None:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            status = main(argv)
        except SystemExit as exc:
            status = int(exc.code or 0)
    assert status == 2, out.getvalue() + err.getvalue()
    assert said in err.getvalue() + out.getvalue(), err.getvalue() + out.getvalue()
    assert str(started_in) not in err.getvalue() + out.getvalue()
    assert "the host's own file" not in out.getvalue()
    assert (started_in / "notes.txt").read_text() == "the host's own file\n"
