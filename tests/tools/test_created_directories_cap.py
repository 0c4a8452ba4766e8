"""createdDirectories is capped, in the answer and in the host's request
(so a deep makedirs cannot make an answer or a request unbounded): the
outermost LISTED_DIRECTORIES and a count of the rest, each left out inside
the last one listed."""

from __future__ import annotations

import pytest

from corral.tools import Request, Toolbox
from corral.tools._runtime.limits import LISTED_DIRECTORIES, listed_directories

DEPTH = 300  # well past the cap, well short of what pytest's tmp cleanup can remove
DEEP = "/".join(["m"] * DEPTH)


@pytest.mark.parametrize("tool,args", [
    ("write_file", {"path": DEEP + "/x", "content": "x"}),
    ("make_directory", {"path": DEEP}),
    ("move_file", {"source": "src.txt", "destination": DEEP + "/y"}),
])
def test_answer_and_request_list_the_outermost_and_count_the_rest(tmp_path, make_root, tool,
                                                                  args):
    (tmp_path / "src.txt").write_text("x")
    asked: list[Request] = []
    with Toolbox(make_root(tmp_path), authorize=lambda r: asked.append(r) is None) as toolbox:
        answer = toolbox.call(tool, args)
    assert answer["ok"] is True, answer
    assert (tmp_path / DEEP).is_dir()
    outermost = ["/".join(["m"] * n) for n in range(1, LISTED_DIRECTORIES + 1)]
    assert answer["createdDirectories"] == outermost
    assert answer["createdDirectoriesOmitted"] == DEPTH - LISTED_DIRECTORIES
    [request] = asked
    assert list(request.creates_directories) == outermost  # type: ignore[attr-defined]
    assert request.creates_omitted == DEPTH - LISTED_DIRECTORIES  # type: ignore[attr-defined]


def test_a_short_list_is_whole_and_says_nothing_left_out(tmp_path, make_root):
    with Toolbox(make_root(tmp_path)) as toolbox:
        answer = toolbox.call("write_file", {"path": "a/b/x", "content": "x"})
    assert answer["createdDirectories"] == ["a", "a/b"]
    assert "createdDirectoriesOmitted" not in answer


def test_long_names_are_capped_by_size_too():
    created = ["/".join(["n" * 250] * k) for k in range(1, 17)]
    shown, omitted = listed_directories(created)
    assert sum(map(len, shown)) <= 8192 and shown == tuple(created[:len(shown)])
    assert omitted == len(created) - len(shown) > 0
    assert listed_directories(["/".join(["n" * 250] * 16)]) == (("/".join(["n" * 250] * 16),), 0)
