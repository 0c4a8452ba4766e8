"""An independent red-team pass over apply_patch and "every call is
bounded" (THREATS row 24): placing a patch's hunks cost the square of their
number.

Each hunk collected every place its lines occur after the cursor (to tell
an ambiguous hunk), and counted the hunks after it with the same lines one
by one; a patch of 8,000 one-line hunks (``-x`` / ``+y``, 72 KB) on a file
of 8,000 such lines took 8 s of CPU, and 16,000 ran 124 s past a 2 s
deadline (placing hunks never looked at it), holding the file's lock all
along.  Three shapes: equal hunks on equal lines (a legitimate patch:
every line changed), distinct hunks whose first line is everywhere (``-x``
then ``-a1``, ``-a2``...), and windows of a file of two lines in random
order (only chance tells them apart).

An order-of-magnitude hang detector, as ``test_bounds_hostile_input.py``:
each call may spend (in CPU time: on a loaded machine the wall clock runs
ten times that and more) a budget many times what its input costs to read;
the legitimate shapes must answer in full within it, the random one in
full or with a typed refusal that is not the time limit.  Sizes are chosen
so that a cost growing as the square of the input is many times the budget.
One backend config per shape (the cost is in matching), plus every config
for the legitimate shape at a small size.
"""

from __future__ import annotations

import random
import time
from pathlib import Path

from corral.tools import Toolbox

CPU_BUDGET = 2.0  # CPU seconds; each patch below is about 70-1,100 KB (0.1-0.3 s here)
# the call's deadline only stops a hang: under load its wall clock runs ten
# times the CPU time the work takes, so that is what is bounded
BACKSTOP = 60.0
HUNKS = 8_000


def _patch(body: str) -> str:
    return f"*** Begin Patch\n*** Update File: a.txt\n{body}*** End Patch\n"


def _within(tmp_path: Path, text: str, patch: str) -> dict:
    (tmp_path / "a.txt").write_text(text)
    with Toolbox(tmp_path) as tools:
        started = time.process_time()
        answer = tools.call("apply_patch", {"input": patch}, timeout=BACKSTOP)
        seconds = time.process_time() - started
    kind = answer.get("details", {}).get("kind") if answer["ok"] is False else None
    assert kind != "time_limit" and seconds <= CPU_BUDGET, (
        f"{answer.get('code')} {kind} after {seconds:.1f} CPU s (budget {CPU_BUDGET} s)")
    return answer


def test_equal_hunks_on_equal_lines(tmp_path: Path) -> None:
    answer = _within(tmp_path, "x\n" * HUNKS, _patch("@@\n-x\n+y\n" * HUNKS))
    assert answer["ok"] is True, answer
    assert (tmp_path / "a.txt").read_text() == "y\n" * HUNKS


def test_distinct_hunks_whose_first_line_is_everywhere(tmp_path: Path) -> None:
    text = "".join(f"x\na{k}\n" for k in range(HUNKS))
    patch = _patch("".join(f"@@\n-x\n-a{k}\n+y{k}\n" for k in range(HUNKS)))
    answer = _within(tmp_path, text, patch)
    assert answer["ok"] is True, answer
    assert (tmp_path / "a.txt").read_text() == "".join(f"y{k}\n" for k in range(HUNKS))


def test_hunks_of_common_lines_in_random_order(tmp_path: Path) -> None:
    """A file of two lines in random order, and hunks that are windows of it
    (32 lines each, so almost always found once): every place of every
    line is a candidate for every hunk."""
    rng = random.Random(11)
    count, width = 32_000, 32
    lines = [rng.choice("xy") for _ in range(count)]
    hunks = ["@@\n" + "".join(f"-{line}\n" for line in lines[at:at + width]) + "+z\n"
             for at in range(0, count - width, 2 * width)]
    text = "\n".join(lines) + "\n"
    answer = _within(tmp_path, text, _patch("".join(hunks)))
    if answer["ok"] is False:
        assert answer["code"] in ("AMBIGUOUS", "TOO_LARGE"), answer
        assert (tmp_path / "a.txt").read_text() == text


def test_equal_hunks_on_every_backend(tmp_path: Path, make_root) -> None:
    count = 2_000
    (tmp_path / "a.txt").write_text("x\n" * count)
    tools = Toolbox(make_root(str(tmp_path)))
    started = time.process_time()
    answer = tools.call("apply_patch", {"input": _patch("@@\n-x\n+y\n" * count)},
                        timeout=BACKSTOP)
    assert time.process_time() - started <= CPU_BUDGET
    assert answer["ok"] is True, answer
    assert (tmp_path / "a.txt").read_text() == "y\n" * count
    assert answer["files"][0]["hunkLines"] == list(range(1, count + 1))
