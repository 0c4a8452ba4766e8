"""An independent red-team pass over apply_patch and the process's open
files: a patch pins every file it names at once (one step of the policed
view), each pin holding a descriptor, so a patch of 1,100 ``Add File``
sections under the usual soft limit of 1,024 open files (macOS: 256) ran
the process out of descriptors (``EMFILE``) and was answered ``INTERNAL``
with a traceback in the log, while every other call of the server failed
with it.  The number of paths one patch names is bounded: beyond it the
patch is refused, typed, before anything is opened or written, and a patch
at the bound applies; on every backend config, under a soft limit of 1,024.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from corral.tools import Toolbox

BOUND = 100


def _adds(count: int, folder: str = "d") -> str:
    body = "".join(f"*** Add File: {folder}/f{k}.txt\n+x\n" for k in range(count))
    return f"*** Begin Patch\n{body}*** End Patch\n"


@pytest.mark.parametrize("count", [1_100, 3_000])
def test_a_patch_naming_more_files_than_the_process_may_open_is_refused(
        tmp_path: Path, make_root, usual_open_file_limit, count: int) -> None:
    (tmp_path / "keep.txt").write_text("k\n")
    tools = Toolbox(make_root(str(tmp_path)))
    answer = tools.call("apply_patch", {"input": _adds(count)})
    assert answer["ok"] is False, answer
    assert answer["code"] == "INVALID_ARGUMENT", answer
    assert str(BOUND) in answer["message"]
    assert not (tmp_path / "d").exists()
    assert tools.call("read_file", {"path": "keep.txt"})["ok"] is True


def test_moves_count_both_their_names(tmp_path: Path, make_root) -> None:
    for k in range(BOUND // 2 + 1):
        (tmp_path / f"m{k}.txt").write_text(f"{k}\n")
    body = "".join(f"*** Update File: m{k}.txt\n*** Move to: moved/m{k}.txt\n"
                   for k in range(BOUND // 2 + 1))
    tools = Toolbox(make_root(str(tmp_path)))
    answer = tools.call("apply_patch", {"input": f"*** Begin Patch\n{body}*** End Patch\n"})
    assert answer["ok"] is False and answer["code"] == "INVALID_ARGUMENT", answer
    assert not (tmp_path / "moved").exists()


def test_a_patch_at_the_bound_applies(tmp_path: Path, make_root,
                                      usual_open_file_limit) -> None:
    tools = Toolbox(make_root(str(tmp_path)))
    answer = tools.call("apply_patch", {"input": _adds(BOUND)})
    assert answer["ok"] is True, answer
    assert len(list((tmp_path / "d").iterdir())) == BOUND
