"""edit_file and write_file stay bounded on hostile input (THREATS
row 24's edit parts), on every backend config.

The time bounds are order-of-magnitude hang detectors only (the machine is
shared): each case costs tens of milliseconds, against minutes or hours for
a matcher that is not linear.  What each answer says is asserted exactly.
"""

from __future__ import annotations

import random
import time

import pytest

from corral.tools import CancelToken, Toolbox
from corral.tools._edit.content import placeholder_lines, read_file_numbers, strip_line_numbers
from corral.tools._edit.align import align, first_difference
from corral.tools._edit.budget import Work
from corral.tools._edit.diagnosis import keys_of
from corral.tools._edit.diff import changed_lines, unified_diff
from corral.tools._edit.text import Lines

HANG = 20.0  # seconds: far above the tens of milliseconds these take


def _code(n: int) -> list[str]:
    return [f"    value_{i} = compute(alpha={i}, beta={i * 7})\n" for i in range(n)]


def _timed(box: Toolbox, name: str, args: dict) -> dict:
    start = time.monotonic()
    out = box.call(name, args)
    assert time.monotonic() - start < HANG, f"{name} took {time.monotonic() - start:.1f} s"
    return out


def test_row24_near_miss_old_text_of_600_lines(tmp_path, make_root):
    lines = _code(600)
    (tmp_path / "f.py").write_text("".join(lines))
    typo = list(lines)
    typo[300] = typo[300].replace("compute", "compote")
    with Toolbox(make_root(tmp_path)) as box:
        out = _timed(box, "edit_file", {"path": "f.py", "oldText": "".join(typo), "newText": "x"})
    assert out["code"] == "NOT_FOUND"
    assert out["message"] == ("oldText does not occur in f.py; the closest text, lines 1-600, "
                              "differs: line 301 reads 'value_300 = compute(alpha=300, beta=2100)' "
                              "where oldText line 301 reads 'value_300 = compote(alpha=300, "
                              "beta=2100)'")
    assert out["details"]["closest"]["similarity"] == 1.0  # 1 character in 29 KB
    assert out["details"]["differences"][0]["line"] == 301


def test_row24_dry_run_diff_of_160_kb(tmp_path, make_root):
    lines = [f"line {i} of the file\n" for i in range(5000)]
    text = "".join(lines)
    (tmp_path / "f.txt").write_text(text)
    swapped = "".join(lines[i + 1] + lines[i] for i in range(0, len(lines), 2))
    with Toolbox(make_root(tmp_path)) as box:
        out = _timed(box, "edit_file", {"path": "f.txt", "oldText": text, "newText": swapped,
                                        "dryRun": True})
    assert out["ok"] is True and out["dryRun"] is True
    assert "diffComplete" not in out and "diffTruncated" not in out
    assert len(out["diff"]) > 150_000
    # a minimal diff: each pair is one line kept, one removed, one added
    assert out["diff"].count("\n-") == 2500 and out["diff"].count("\n+") == 2501
    assert (tmp_path / "f.txt").read_text() == text


@pytest.mark.parametrize("content", [" " * 1_000_000, "." * 1_000_000,
                                     "# ... nothing to see ...\n" * 40_000,
                                     "1\t" + " " * 1_000_000])
def test_row24_write_file_content_that_killed_the_placeholder_regex(tmp_path, make_root,
                                                                    content):
    with Toolbox(make_root(tmp_path)) as box:
        out = _timed(box, "write_file", {"path": "s.txt", "content": content})
    assert out["ok"] is True and out["bytes"] == len(content)
    assert (tmp_path / "s.txt").read_text() == content


def test_huge_old_text_near_miss_is_compared_around_its_first_difference(tmp_path):
    lines = _code(20_000)
    (tmp_path / "f.py").write_text("".join(lines))
    typo = list(lines)
    typo[15_000] = typo[15_000].replace("compute", "compote")
    with Toolbox(tmp_path) as box:
        out = _timed(box, "edit_file", {"path": "f.py", "oldText": "".join(typo), "newText": "x"})
    assert out["code"] == "NOT_FOUND"
    details = out["details"]
    assert details["limited"] == ("oldText has 20000 lines; only its lines 14981-16980, around "
                                  "where it first differs from the file, were compared")
    assert details["differences"][0]["line"] == 15001
    assert details["differences"][0]["oldTextLine"] == 15001


def test_indentation_rung_stops_early_and_says_so(tmp_path):
    # every window matches but for indentation, and none consistently: the
    # tolerant search is cut at its budget instead of running n * k
    k = 2000
    (tmp_path / "f.py").write_text("x\n" * 60_000)
    old = "x\n" * (k - 1) + "    x\n"
    with Toolbox(tmp_path) as box:
        out = _timed(box, "edit_file", {"path": "f.py", "oldText": old, "newText": "y"})
    assert out["code"] == "NOT_FOUND"
    assert out["details"]["limited"].startswith(
        "the search ignoring indentation stopped early: too many places match oldText but for "
        "indentation")


def test_many_placeholder_like_new_text_lines_known_to_the_file(tmp_path):
    line = "    # ... rest of the code ...\n"
    (tmp_path / "f.py").write_text("def f():\n" + line + "    return 1\n")
    with Toolbox(tmp_path) as box:
        out = _timed(box, "edit_file", {"path": "f.py", "oldText": "return 1",
                                        "newText": "return 1\n" + line * 200_000})
    assert out["ok"] is True  # every placeholder line is one the file has


# -- the pieces -----------------------------------------------------------------------


def test_alignment_is_a_correct_diff_and_minimal_on_small_inputs():
    rng = random.Random(7)
    for _ in range(500):
        a = [rng.randint(0, 3) for _ in range(rng.randint(0, 14))]
        b = [rng.randint(0, 3) for _ in range(rng.randint(0, 14))]
        alignment = align(a, b, Work().budget(10**6))
        rebuilt_a, rebuilt_b = [], []
        for tag, i1, i2, j1, j2 in alignment.opcodes():
            if tag == "equal":
                assert a[i1:i2] == b[j1:j2]
            rebuilt_a += a[i1:i2]
            rebuilt_b += b[j1:j2]
        assert (rebuilt_a, rebuilt_b) == (a, b)
        assert alignment.complete
        assert alignment.matched() == _lcs(a, b)


def test_a_block_with_no_line_in_common_is_aligned_as_the_shortest_script_aligns_it(
        monkeypatch):
    """Ranges that share no item are answered without running the shortest
    script (nothing can match), charged what it would have cost: the same
    blocks, completeness and budget left, under budgets it can and cannot
    pay, as with the script run."""
    from corral.tools._edit import align as align_module

    rng = random.Random(11)
    cases = []
    for _ in range(400):
        a = [rng.randint(0, 9) for _ in range(rng.randint(1, 8))]
        b = [rng.randint(10 if rng.random() < 0.5 else 0, 19) for _ in range(rng.randint(1, 8))]
        cases.append((a, b, rng.choice([0, 1, 5, 20, 60, 200, 10**6])))

    def aligned(run_script: bool) -> list:
        out = []
        with monkeypatch.context() as patched:
            if run_script:
                patched.setattr(align_module, "_disjoint", lambda *args: False)
            for a, b, units in cases:
                budget = Work().budget(units)
                found = align(a, b, budget)
                out.append((found.blocks, found.complete, budget.left, budget.cut))
        return out

    quick = aligned(False)
    assert quick == aligned(True)
    disjoint = [case for case in cases if not set(case[0]) & set(case[1])]
    assert len(disjoint) > 100  # the shortcut was compared, under every budget
    assert {units for _, _, units in disjoint} == {0, 1, 5, 20, 60, 200, 10**6}


def _lcs(a: list[int], b: list[int]) -> int:
    row = [0] * (len(b) + 1)
    for x in a:
        prev = 0
        for j, y in enumerate(b):
            prev, row[j + 1] = row[j + 1], prev + 1 if x == y else max(row[j + 1], row[j])
    return row[-1]


def test_alignment_over_its_budget_degrades_and_says_so():
    rng = random.Random(3)
    a = [rng.randint(0, 3) for _ in range(20_000)]
    b = [rng.randint(0, 3) for _ in range(20_000)]
    alignment = align(a, b, Work().budget(100_000))
    assert not alignment.complete
    for i, j, size in alignment.blocks:
        assert a[i:i + size] == b[j:j + size]


def test_diff_too_costly_to_align_shows_blocks_whole():
    rng = random.Random(5)
    old = "".join(f"{rng.randint(0, 3)}\n" for _ in range(30_000))
    new = "".join(f"{rng.randint(0, 3)}\n" for _ in range(30_000))
    before, after = Lines(old), Lines(new)
    diff = unified_diff("f", before, after, [(0, len(old), 0, len(new))], Work())
    assert not diff.complete
    removed = [x[1:] for x in diff.text.splitlines(True)[2:] if x.startswith("-")]
    added = [x[1:] for x in diff.text.splitlines(True)[2:] if x.startswith("+")]
    kept = [x[1:] for x in diff.text.splitlines(True)[2:] if x.startswith(" ")]
    assert len(removed) + len(kept) == 30_000 and len(added) + len(kept) == 30_000


def test_changed_lines_too_costly_to_align_is_one_range():
    rng = random.Random(9)
    old = Lines("".join(f"{rng.randint(0, 3)}\n" for _ in range(40_000)))
    new = Lines("".join(f"{rng.randint(0, 3)}\n" for _ in range(40_000)))
    ranges = changed_lines(old, new, Work())
    assert len(ranges) == 1


def test_checkpoints_run_while_work_is_done():
    calls = []
    work = Work(lambda: calls.append(1))
    a = [f"{i}" for i in range(50_000)]
    b = a[1:] + ["x"]
    align(a, b, work.budget(10**7))
    assert calls, "no checkpoint during a long alignment"


def test_checkpoint_raising_stops_the_work():
    class Stop(Exception):
        pass

    def stop() -> None:
        raise Stop

    rng = random.Random(1)
    a = [rng.randint(0, 3) for _ in range(20_000)]
    b = [rng.randint(0, 3) for _ in range(20_000)]
    with pytest.raises(Stop):
        align(a, b, Work(stop).budget(10**7))


def test_keys_are_whitespace_collapsed_and_lookalikes_folded():
    text = "  a \t b  \n\u201cq\u201d\u00a0x\n\n\t\n"
    assert keys_of(text) == [" ".join(x.split()) for x in
                             text.translate(str.maketrans({"\u201c": '"', "\u201d": '"',
                                                           "\u00a0": " "})).split("\n")]


def test_first_difference():
    for a, b in [("", ""), ("abc", "abd"), ("abc", "ab"), ("x" * 5000 + "a", "x" * 5000 + "b")]:
        expected = next((i for i, (x, y) in enumerate(zip(a, b)) if x != y), min(len(a), len(b)))
        assert first_difference(a, b) == expected


def test_placeholder_lines_and_numbers_scan_in_bounded_time():
    start = time.monotonic()
    assert placeholder_lines(" " * 2_000_000) == []
    assert placeholder_lines("." * 2_000_000) == []
    found_line = placeholder_lines("a\n# ... rest of the code ...\n")
    assert found_line == [(1, "# ... rest of the code ...")]
    assert read_file_numbers("1\t" * 1_000_000) is None
    numbered = "".join(f"{i}\tline {i}\n" for i in range(1, 100_001))
    found = read_file_numbers(numbered)
    assert found is not None and (found.first, found.lines) == (1, 100_000)
    assert strip_line_numbers("".join(f"{i}: x\n" for i in range(5, 10))) == "x\n" * 5
    assert time.monotonic() - start < HANG


# -- the call's deadline and cancellation (deterministic: no wall-clock race) ------------


class CountingToken(CancelToken):
    """A cancel token that counts how often a call looks at it, and says
    "cancelled" from the ``after``-th look on (``None``: never)."""

    def __init__(self, after: int | None = None) -> None:
        super().__init__()
        self.looks = 0
        self.after = after

    @property
    def cancelled(self) -> bool:
        self.looks += 1
        return self.after is not None and self.looks >= self.after


def _near_miss_file(tmp_path, n: int = 3000) -> tuple[str, str]:
    lines = _code(n)
    text = "".join(lines)
    (tmp_path / "f.py").write_text(text)
    typo = list(lines)
    typo[n // 2] = typo[n // 2].replace("compute", "compote")
    return text, "".join(typo)


def test_edit_checks_its_deadline_in_its_loops(tmp_path):
    _, old = _near_miss_file(tmp_path)
    token = CountingToken()
    with Toolbox(tmp_path) as box:
        out = box.call("edit_file", {"path": "f.py", "oldText": old, "newText": "x"}, cancel=token)
    assert out["code"] == "NOT_FOUND"
    assert token.looks >= 5, f"only {token.looks} checkpoints in a long diagnosis"


@pytest.mark.parametrize("args", [
    {"oldText": "OLD", "newText": "x"},  # the not-found diagnosis
    {"oldText": "TEXT", "newText": "SWAPPED", "dryRun": True},  # the diff
    {"oldText": "TEXT", "newText": "SWAPPED"},  # the diff of a real edit
])
def test_cancelled_mid_call_answers_cancelled_and_changes_nothing(tmp_path, args):
    text, old = _near_miss_file(tmp_path, 3000 if args["oldText"] == "OLD" else 20_000)
    lines = text.splitlines(True)
    swapped = "".join(lines[i + 1] + lines[i] for i in range(0, len(lines) - 1, 2))
    values = {"OLD": old, "TEXT": text, "SWAPPED": swapped}
    call = {"path": "f.py", **{k: values.get(v, v) if isinstance(v, str) else v
                               for k, v in args.items()}}
    (tmp_path / "count.py").write_text(text)
    counting = CountingToken()
    with Toolbox(tmp_path) as box:
        # how many looks the whole call takes, on a copy of the file
        assert box.call("edit_file", {**call, "path": "count.py"}, cancel=counting)["ok"] is (
            args["oldText"] == "TEXT")
        assert counting.looks >= 4
        out = box.call("edit_file", call, cancel=CountingToken(after=counting.looks // 2))
    assert out["ok"] is False
    assert (out["code"], out["details"]["kind"]) == ("DENIED", "cancelled")
    assert out["message"] == ("edit_file was cancelled by the host before it finished; nothing "
                              "was changed")
    assert (tmp_path / "f.py").read_text() == text


def test_time_limit_answers_time_limit_and_changes_nothing(tmp_path):
    text = "".join(_code(200))
    (tmp_path / "f.py").write_text(text)
    with Toolbox(tmp_path) as box:
        out = box.call("edit_file", {"path": "f.py", "oldText": "value_1 =", "newText": "v1 ="},
                       timeout=1e-9)
    assert (out["code"], out["details"]["kind"]) == ("TOO_LARGE", "time_limit")
    assert (tmp_path / "f.py").read_text() == text


def test_cancelled_while_the_host_decides_writes_nothing(tmp_path):
    text = "".join(_code(50))
    (tmp_path / "f.py").write_text(text)
    token = CancelToken()

    def authorize(request):
        token.cancel()  # the user gives up while asked

    with Toolbox(tmp_path, authorize=authorize) as box:
        out = box.call("edit_file", {"path": "f.py", "oldText": "value_1 =", "newText": "v1 ="},
                       cancel=token)
    assert (out["code"], out["details"]["kind"]) == ("DENIED", "cancelled")
    assert (tmp_path / "f.py").read_text() == text


def test_write_file_content_checks_are_bounded_by_size_not_time(tmp_path):
    # the content checks scan in C: even a hostile megabyte is far inside a 30 s deadline
    with Toolbox(tmp_path) as box:
        out = _timed(box, "write_file", {"path": "a.txt", "content": "# ...\n" * 200_000})
    assert out["ok"] is True


def test_a_stopped_call_sent_again_is_not_called_a_repeat(tmp_path):
    _, old = _near_miss_file(tmp_path)
    args = {"path": "f.py", "oldText": old, "newText": "x"}
    with Toolbox(tmp_path) as box:
        stopped = box.call("edit_file", args, cancel=CountingToken(after=2))
        again = box.call("edit_file", args)
    assert stopped["details"]["kind"] == "cancelled"
    assert again["code"] == "NOT_FOUND" and "repeated" not in again["details"]


def test_a_hundred_edits_each_replacing_everywhere_stay_bounded(tmp_path):
    # every edit's places would otherwise be carried through every later edit
    lines = [f"<{i % 100}>\n" for i in range(20_000)]
    (tmp_path / "f.txt").write_text("".join(lines))
    edits = [{"oldText": f"<{k}>", "newText": f"[{k}]", "replaceAll": True} for k in range(100)]
    with Toolbox(tmp_path) as box:
        out = _timed(box, "edit_file", {"path": "f.txt", "edits": edits})
    assert out["ok"] is True and out["replacements"] == 20_000
    assert (tmp_path / "f.txt").read_text() == "".join(f"[{i % 100}]\n" for i in range(20_000))
    first = out["edits"][0]
    assert first["replacements"] == 200 and first["linesTruncated"] is True
    assert first["lines"][:3] == [[1, 1], [101, 101], [201, 201]] and len(first["lines"]) == 100
    assert out["edits"][99]["lines"][0] == [100, 100]
    body = out["diff"].splitlines()[2:]
    assert out.get("diffTruncated") or sum(x.startswith("-") for x in body) == 20_000


@pytest.mark.parametrize("content", [" " * 1_000_000,
                                     "# other " * 125_000,
                                     "# other\n" * 125_000,
                                     ("# " + "rest " * 39 + "\n") * 5_000,
                                     "#" + " " * 1_000_000 + "rest of the code"])
def test_overwrite_with_content_that_looks_like_an_elision_in_words(tmp_path, make_root,
                                                                    content):
    """The elision-in-words scan runs on overwrites by content at most half
    the file's size (so this file is larger): bounded per comment line."""
    (tmp_path / "s.txt").write_text("x = 1\n" * 350_000)
    with Toolbox(make_root(tmp_path)) as box:
        out = _timed(box, "write_file", {"path": "s.txt", "content": content, "overwrite": True})
    assert out["ok"] is True and out["bytes"] == len(content)
    assert (tmp_path / "s.txt").read_text() == content


_PIECES = ["...", "…", ".", "..", "# ", "// ", "rest of the code", "existing", "x = 1",
           "\n", "\r\n", " ", "\t", "```", "~~~", "```py\n", "é", "—", "日"]


def test_placeholder_lines_and_fences_find_what_their_patterns_find():
    # placeholder_lines looks for "..." alone (a literal) in a text that
    # cannot hold "…", and fenced looks at the first character before its
    # regex: each must answer what the plain scan of its pattern answers
    import re

    from corral.tools._edit import content
    ellipsis = re.compile(r"\.\.\.|…")
    rng = random.Random(7)
    for _ in range(3000):
        text = "".join(rng.choice(_PIECES) for _ in range(rng.randrange(0, 40)))
        assert placeholder_lines(text) == content._scan(text, ellipsis, content.is_placeholder)
        if content._FENCE.match(text) is None:
            assert content.fenced(text, "a.py") is None, text
        else:  # the first character looked at alone lets every fence through
            assert text[:1] in content._FENCE_FIRST, text
    fence = "```python\nx = 1\n```\n"
    assert content.fenced(fence, "a.py") == "x = 1\n"
    assert content.fenced("  " + fence, "a.py") == "x = 1\n"
    assert content.fenced("\t~~~\ny\n~~~", "a.py") == "y\n"


# What a line needs to be a placeholder, in pieces: comment marks, closers,
# every blank \s takes on ASCII, phrases in any case and glued to words
_PLACEHOLDER_PIECES = ["...", "..", ".", "# ", "#", "//", "/*", "*/", "<!--", "-->", "--", ";",
                       "*", "{/*", "(", ")", "[", "]", "{", "}", " ", "\t", "\x0b", "\x0c",
                       "\r", "\x1c", "\x1f", "\n", "\r\n", "rest of", "REST OF", "Existing",
                       "unchanged", "same as before", "other code", "previous content",
                       "code goes here", "As Before", "x", "_", "9", "omittedx", "xremaining",
                       "code", " here", "x" * 90]


def test_placeholder_lines_judge_the_lines_the_plain_scan_judges():
    # placeholder_lines judges only the lines of an ASCII text that a RE2
    # pattern picks out: it must answer what judging every line with "..."
    # answers, up to the first MAX_CANDIDATES of them
    import re

    from corral.tools._edit import content
    ellipsis = re.compile(r"\.\.\.|…")
    rng = random.Random(11)
    judged_alone = "x ...\n" * content.JUDGED_ALONE  # the lines before RE2 picks
    for _ in range(4000):
        tail = "".join(rng.choice(_PLACEHOLDER_PIECES) for _ in range(rng.randrange(0, 30)))
        for text in (tail, judged_alone + tail, judged_alone[:-4] + tail):
            assert placeholder_lines(text) == content._scan(text, ellipsis,
                                                            content.is_placeholder), repr(text)
    last = "# ... rest of the code ...\n"
    for before in (content.MAX_CANDIDATES - 1, content.MAX_CANDIDATES):
        for filler in ("x = '...'\n", "... two ... on a line\r\n"):
            text = filler * before + last
            found = [(before, last.strip())] if before < content.MAX_CANDIDATES else []
            assert placeholder_lines(text) == found
            assert content._scan(text, ellipsis, content.is_placeholder) == found


_KEY_PIECES = [" ", "  ", "\t", "\n", "\x0b", "\x0c", "\x1c", "\x85", "\u2028", "\u3000", "\u00a0",
               "(", ")", "[", "]", "{", "}", "<", ">", ",", ";", ":", "=", "a", "bc", "x = 1"]


def test_the_tolerant_rungs_key_a_text_as_they_key_its_lines():
    # the indentation and whitespace rungs and the diagnosis key the whole
    # file in a few passes in C: each line's key must be the one its line
    # alone gets
    from corral.tools._edit.match import spacing_key, spacing_keys, strip_keys

    rng = random.Random(5)
    for _ in range(4000):
        text = "".join(rng.choice(_KEY_PIECES) for _ in range(rng.randrange(0, 40)))
        assert spacing_keys(text) == [spacing_key(line) for line in text.split("\n")], repr(text)
        assert strip_keys(text) == [line.strip() for line in text.split("\n")], repr(text)
        folded = text.translate(str.maketrans({"\u00a0": " ", "\u3000": " "}))
        assert keys_of(text) == [" ".join(line.split()) for line in folded.split("\n")], \
            repr(text)
