"""edit_file's look for oldText in a long file (past ``_FOUND_IN_C`` bytes,
looked for by the backend's :meth:`~corral.contained._backend.Backend.find`,
in C on the native backend): once, far into the file, it is edited; a second
time far after the first, or not at all, the call is refused and nothing is
written; and ``Backend.find`` is ``bytes.find`` on every backend, for every
start, needle and haystack of a seeded table (a match at the start, at the
end, across the C threshold, none, an empty needle, a start past the end).
On every backend config."""

from __future__ import annotations

import random

import pytest

from corral.tools import Toolbox
from corral.tools._builtin import edit_file as E

LINES = [f"    value_{i} = compute(item, {i})  # step {i}\n" for i in range(2000)]
TEXT = "".join(LINES)


def _edit(tmp_path, make_root, text: str, old: str, new: str) -> tuple[dict, bytes]:
    f = tmp_path / "src" / "big.py"
    f.parent.mkdir()
    f.write_text(text)
    with Toolbox(make_root(tmp_path)) as box:
        answer = box.call("edit_file", {"path": "src/big.py", "oldText": old, "newText": new})
    return answer, f.read_bytes()


def test_the_file_is_long_enough_to_be_looked_through_by_the_backend():
    assert len(TEXT.encode()) > 4 * E._FOUND_IN_C


def test_old_text_once_far_into_a_long_file_is_edited(tmp_path, make_root):
    old = "value_1500 = compute(item, 1500)"
    answer, data = _edit(tmp_path, make_root, TEXT, old, "value_1500 = kompute(item, 1500)")
    assert answer["ok"], answer
    assert answer["lines"] == [[1501, 1501]]
    assert data == TEXT.replace(old, "value_1500 = kompute(item, 1500)").encode()


def test_old_text_twice_far_apart_is_refused_and_nothing_written(tmp_path, make_root):
    twice = TEXT + "    value_3 = compute(item, 3)  # step 3\n"  # line 4 again, at the end
    answer, data = _edit(tmp_path, make_root, twice, "value_3 = compute(item, 3)  # step 3",
                         "value_3 = kompute(item, 3)  # step 3")
    assert not answer["ok"], answer
    assert answer["code"] == "AMBIGUOUS" and answer["details"]["lines"] == [4, 2001], answer
    assert data == twice.encode()


def test_old_text_missing_from_a_long_file_is_refused_and_nothing_written(tmp_path, make_root):
    answer, data = _edit(tmp_path, make_root, TEXT, "value_2000 = compute(item, 2000)",
                         "value_2000 = kompute(item, 2000)")
    assert not answer["ok"] and answer["code"] == "NOT_FOUND", answer
    assert data == TEXT.encode()


def test_backend_find_is_bytes_find(tmp_path, make_root):
    backend = make_root(tmp_path).backend
    rnd = random.Random(34)
    cases = [(b"", b"", 0), (b"", b"x", 0), (b"abc", b"", 3), (b"abc", b"", 4),
             (b"abc", b"c", 3), (b"x" * 5000 + b"y", b"xy", 0), (b"x" * 5000 + b"y", b"xy", 4999),
             (b"x" * 5000 + b"y", b"xy", 5000), (b"ab" * 3000, b"ba", 6001)]
    for _ in range(400):
        size = rnd.choice((0, 1, 7, 511, 512, 513, 700, 5000))
        data = bytes(rnd.choice(b"ab\nx") for _ in range(size))
        needle = bytes(rnd.choice(b"ab\nx") for _ in range(rnd.randrange(0, 7)))
        cases.append((data, needle, rnd.randrange(0, size + 3)))
    for data, needle, start in cases:
        assert backend.find(data, needle, start) == data.find(needle, start), (len(data),
                                                                               needle, start)
