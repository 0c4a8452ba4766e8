"""An independent red-team pass (round twenty-four, third team) over
apply_patch and THREATS row 24 (every call bounded): a patch within the
16 MiB the schema takes, made of lines of one byte (a hunk of 16 million
empty context lines), was parsed line by line with no look at the call's
deadline and held as a Python tuple a line: about 40 times its size in
memory (670 MB for 16 MB) and 17 s of CPU (68 s wall at load 12),
answered "ran past its time limit of 30 s" long after the 30 s.  Several
sent at once would run a server out of memory.  Now a patch of more
lines than any model writes in one call (a million) is refused
``TOO_LARGE`` before it is read, nothing changed, with what to do; one
just under the bound is read and applied.  Measured by the peak of the
memory Python allocates during the call (``tracemalloc``), never by time.
On every backend config.
"""

from __future__ import annotations

import tracemalloc
from pathlib import Path

from corral.tools import Toolbox
MAX_LINES = 1_000_000  # lines one patch may have: more than any model writes in one call

TEXT = "".join(f"line {n}\n" for n in range(50))


def _blank_context(lines: int) -> str:
    return ("*** Begin Patch\n*** Update File: a.txt\n@@\n" + "\n" * lines +
            "-line 5\n+five\n*** End Patch\n")


def test_a_patch_of_more_lines_than_the_bound_is_refused_unread(tmp_path: Path,
                                                                make_root) -> None:
    (tmp_path / "a.txt").write_text(TEXT)
    toolbox = Toolbox(make_root(str(tmp_path)), editing="apply_patch")
    patch = _blank_context(4_000_000)  # 4 MB of the 16 MiB the schema takes
    tracemalloc.start()
    try:
        answer = toolbox.call("apply_patch", {"input": patch})
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert answer["ok"] is False, answer
    assert answer["code"] == "TOO_LARGE", answer
    assert answer["details"]["kind"] == "content_size", answer
    assert answer["details"]["limit"] == MAX_LINES, answer
    assert "nothing was changed" in answer["message"], answer
    assert "Split" in answer["hint"], answer
    assert peak < 4 * len(patch), f"{peak} bytes for a patch of {len(patch)}"
    assert (tmp_path / "a.txt").read_text() == TEXT


def test_a_patch_just_under_the_bound_is_applied(tmp_path: Path, make_root) -> None:
    lines = TEXT.split("\n")[:-1]
    added = MAX_LINES - 10  # the envelope, header and hunk lines take the rest
    (tmp_path / "a.txt").write_text(TEXT)
    toolbox = Toolbox(make_root(str(tmp_path)), editing="apply_patch")
    patch = ("*** Begin Patch\n*** Update File: a.txt\n@@\n" +
             "".join(f" {line}\n" for line in lines[-3:]) + "+x\n" * added + "*** End Patch\n")
    assert patch.count("\n") <= MAX_LINES
    answer = toolbox.call("apply_patch", {"input": patch})
    assert answer["ok"] is True, {k: answer.get(k) for k in ("code", "message")}
    assert (tmp_path / "a.txt").read_text() == TEXT + "x\n" * added
