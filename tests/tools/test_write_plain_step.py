"""write_file's plain step (``view.replace_plain``): the common replace
made in one straight step where every fact the general step would weigh is
known to allow it.  Checked two ways, on every backend config:

* twins: the same call on two identical trees, one with the plain step and
  one with the general step alone, gives the same answer and leaves the same
  tree (bytes, modes, xattrs, a new inode), over a seeded table of contents,
  files, places, policies and options;
* each fact that rules the plain step out takes the general step, and the
  answer and the tree are what the general step makes of them: a known
  link, a protected or denied name, a root holding this one, a host asked,
  a move by another Toolbox, a file swapped while the step held it, a file
  with other links, a form kept, content compared with the file.
"""

from __future__ import annotations

import itertools
import os
import random
import stat
import threading
from pathlib import Path
from typing import Any

import pytest

from corral.contained import HeldParent
from corral.tools import Policy, Toolbox
from corral.tools._builtin import write_file as W

from .helpers import twins

PLAIN = "".join(f"x{i} = 1\n" for i in range(150))
CONTENTS = {
    "plain": PLAIN, "escaped-newline": PLAIN + 's = "a\\nb"\n', "one-line-escaped":
    "a\\nb" * 40, "non-ascii": PLAIN + "é = 'ü'\n", "empty": "", "one-line": "a\n",
    "big": PLAIN * 50, "nul": "a\0b\n", "tab": "\tx\n", "dots": "x = 1  # ...\n",
    "ellipsis": PLAIN + "# …\n", "fence": "```py\nx\n```\n", "half": PLAIN[:len(PLAIN) // 3],
}
FILES = {
    "plain": (PLAIN.encode(), 0o644), "private": (PLAIN.encode(), 0o600),
    "exec": (PLAIN.encode(), 0o755), "crlf": (PLAIN.replace("\n", "\r\n").encode(), 0o644),
    "bom": (b"\xef\xbb\xbf" + PLAIN.encode(), 0o644), "small": (b"x\n", 0o644),
    "empty": (b"", 0o640), "utf16": ("x = 1\n".encode("utf-16"), 0o644),
}
PLACES = ["d0/f.py", "d0/d1/d2/f.txt", "src/main.py", "a/b.md", "top.py"]
POLICIES = {"default": lambda: None, "none": Policy.none,
            "deny-other": lambda: Policy.build(deny=["secret/**"], protect=["*.lock"])}
CASES = list(itertools.product(sorted(CONTENTS), sorted(FILES), PLACES, (True, False),
                               (False, True), sorted(POLICIES)))
SAMPLE = random.Random(34).sample(CASES, 48)


@pytest.fixture
def plain_taken(monkeypatch: pytest.MonkeyPatch) -> list[bool]:
    """Whether each write_file call took the plain step."""
    taken: list[bool] = []
    monkeypatch.setattr(W, "_replace_plain", twins.recording(W._replace_plain, taken))
    return taken


@pytest.mark.parametrize("content,file,place,keep,xattr,policy", SAMPLE)
def test_twins_answer_and_leave_the_same(tmp_path, make_toolbox, monkeypatch, content, file,
                                         place, keep, xattr, policy):
    data, mode = FILES[file]
    real = W._replace_plain
    taken: list[bool] = []
    answers, trees, renewed = [], [], []
    for side in ("plain", "general"):
        top = tmp_path / side
        top.mkdir()
        twins.build(top, place, data, mode, xattr)
        monkeypatch.setattr(W, "_replace_plain", twins.recording(real, taken)
                            if side == "plain" else (lambda *args: None))
        box = make_toolbox(top, policy=POLICIES[policy]())
        args = {"path": place, "content": CONTENTS[content], "overwrite": True,
                "keepFormat": keep}
        assert box.call("write_file", {**args, "content": PLAIN})["ok"]  # the memo filled
        taken.clear()
        current = (top / place).read_bytes()
        answer, tree, replaced = twins.acted(box, top, place, "write_file", args)
        answers.append(answer)
        trees.append(tree)
        renewed.append(replaced)
        if side == "plain":
            took = list(taken)
            fast = twins.fast(box)
        box.close()
    assert answers[0] == answers[1]
    assert trees[0] == trees[1]
    assert renewed[0] == renewed[1] == bool(answers[0]["ok"])
    text = CONTENTS[content]
    plain_file = b"\r" not in current[:65536] and not current.startswith(
        (b"\xef\xbb\xbf", b"\xff\xfe", b"\xfe\xff", b"\x00\x00\xfe\xff"))
    qualifies = fast and "/" in place and (plain_file or not keep) and "\t" not in text and \
        text[:1] not in " \t`~" and "..." not in text and "\u2026" not in text and \
        len(text) * 2 > len(current)
    assert took == [qualifies], (took, qualifies, answers[0])


def _tree(tmp_path: Path) -> Path:
    f = tmp_path / "src" / "main.py"
    f.parent.mkdir(parents=True)
    f.write_text(PLAIN)
    return f


def _write(box: Toolbox, rel: str = "src/main.py", content: str = PLAIN.replace("1", "2"),
           **more: Any) -> dict[str, Any]:
    return box.call("write_file", {"path": rel, "content": content, "overwrite": True, **more})


def test_the_common_write_takes_the_plain_step(tmp_path, make_toolbox, plain_taken):
    f = _tree(tmp_path)
    box = make_toolbox(tmp_path)
    for _ in range(3):
        assert _write(box)["ok"]
    assert f.read_text() == PLAIN.replace("1", "2")
    # the first call decides the general way and remembers; later ones go straight
    assert plain_taken == [False, twins.fast(box), twins.fast(box)]


def test_a_known_link_takes_the_general_step(tmp_path, make_toolbox, plain_taken):
    f = _tree(tmp_path)
    os.symlink("src/main.py", tmp_path / "alias.py")
    box = make_toolbox(tmp_path, policy=Policy.build(protect=["alias.py"]))
    for _ in range(2):
        answer = _write(box)
        assert not answer["ok"] and answer["code"] == "DENIED", answer
    assert f.read_text() == PLAIN  # a protected name leads here: never written
    assert plain_taken == [False, False]


@pytest.mark.parametrize("rel,rules", [("src/main.py", {"protect": ["src/*.py"]}),
                                       ("src/main.py", {"deny": ["src/**"]}),
                                       ("src/pkg.lock", {"protect": ["*.lock"]})])
def test_a_protected_or_denied_name_takes_the_general_step(tmp_path, make_toolbox,
                                                           plain_taken, rel, rules):
    _tree(tmp_path)
    (tmp_path / rel).write_text(PLAIN)
    box = make_toolbox(tmp_path, policy=Policy.build(**rules))
    for _ in range(2):
        answer = _write(box, rel)
        assert not answer["ok"] and answer["code"] == "DENIED", answer
    assert (tmp_path / rel).read_text() == PLAIN
    assert plain_taken == [False, False]


def test_a_root_holding_this_one_takes_the_general_step(tmp_path, make_toolbox, plain_taken):
    """A denied link in the root holding this one, leading here, rules what
    it leads to here: the plain step never weighs other roots' links."""
    inner = tmp_path / "inner"
    f = inner / "data" / "f.txt"
    f.parent.mkdir(parents=True)
    f.write_text(PLAIN)
    os.symlink("inner/data", tmp_path / "vault")
    outer_box = make_toolbox(tmp_path, policy=Policy.build(deny=["vault"]))
    inner_box = make_toolbox(inner)
    inner_box.held_by([(outer_box, "inner")])
    for _ in range(2):
        answer = _write(inner_box, "data/f.txt")
        assert not answer["ok"] and answer["code"] == "DENIED", answer
    assert f.read_text() == PLAIN
    assert plain_taken == [False, False]


def test_a_host_asked_takes_the_general_step(tmp_path, make_toolbox, plain_taken):
    f = _tree(tmp_path)
    asked: list[Any] = []
    box = make_toolbox(tmp_path, authorize=asked.append)
    for _ in range(2):
        assert _write(box)["ok"]
    assert len(asked) == 2 and f.read_text() == PLAIN.replace("1", "2")
    assert plain_taken == []  # (not even looked for: someone hears the request)


def test_a_move_by_another_toolbox_takes_the_general_step(tmp_path, make_toolbox,
                                                          plain_taken):
    """A move made meanwhile (another Toolbox here, another thread) is
    taken in first: the call that sees it takes the general step, which
    learns the links again."""
    f = _tree(tmp_path)
    (tmp_path / "d").mkdir()
    box = make_toolbox(tmp_path, policy=Policy.build(protect=["keep/**"]))
    other = make_toolbox(tmp_path, policy=Policy.build(protect=["keep/**"]))
    assert _write(box)["ok"] and _write(box)["ok"]

    def move() -> None:
        assert other.call("move_file", {"source": "d", "destination": "e"})["ok"]

    mover = threading.Thread(target=move)
    mover.start()
    mover.join()
    assert _write(box)["ok"] and _write(box)["ok"]
    fast = twins.fast(box)
    assert plain_taken == [False, fast, False, fast]
    assert f.read_text() == PLAIN.replace("1", "2") and (tmp_path / "e").is_dir()


def test_a_file_swapped_while_held_is_stale_and_untouched(tmp_path, make_toolbox,
                                                          monkeypatch, plain_taken):
    f = _tree(tmp_path)
    box = make_toolbox(tmp_path)
    assert _write(box)["ok"]
    swapped = []
    real_look = HeldParent.open_regular

    def look_then_swap(self: HeldParent, below: int, head: int) -> Any:
        got = real_look(self, below, head)
        if not swapped:  # another program replaces the file between the look and the write
            other = f.parent / "theirs"
            other.write_text("theirs\n")
            os.rename(other, f)
            swapped.append(True)
        return got

    monkeypatch.setattr(HeldParent, "open_regular", look_then_swap)
    answer = _write(box)
    if not twins.fast(box):
        assert answer["ok"] and plain_taken == [False, False]
        return
    assert not answer["ok"] and answer["code"] == "STALE", answer
    assert f.read_text() == "theirs\n"
    assert [n for n in os.listdir(f.parent) if n.endswith(".corral-tmp")] == []
    # the plain step looked (its head read) and refused; the general step never ran
    assert swapped == [True] and plain_taken == [False]


def test_a_file_replaced_between_calls_is_written_anew(tmp_path, make_toolbox, plain_taken):
    """The plain step opens what is there at the call: a file another
    program replaced since the last call is the one replaced now."""
    f = _tree(tmp_path)
    box = make_toolbox(tmp_path)
    assert _write(box)["ok"]
    other = f.parent / "theirs"
    other.write_text(PLAIN)
    os.chmod(other, 0o600)
    os.rename(other, f)
    assert _write(box, content=PLAIN.replace("1", "3"))["ok"]
    assert f.read_text() == PLAIN.replace("1", "3")
    assert stat.S_IMODE(f.stat().st_mode) == 0o600
    assert plain_taken == [False, twins.fast(box)]


def test_a_hard_linked_file_takes_the_general_step(tmp_path, make_toolbox, plain_taken):
    f = _tree(tmp_path)
    box = make_toolbox(tmp_path)
    assert _write(box)["ok"]
    os.link(f, tmp_path / "twin.py")
    answer = _write(box, content=PLAIN)
    assert answer["ok"] and "hard links" in " ".join(answer["warnings"])
    assert (tmp_path / "twin.py").read_text() == PLAIN.replace("1", "2")
    assert f.read_text() == PLAIN
    assert plain_taken == [False, False]


@pytest.mark.parametrize("content,why", [
    ("\tx = 1\n", "numbered"), ("     1\tx = 1\n", "numbered as read_file shows"),
    ("x = 1\n# ...\n", "elided"), ("```\nx\n```\n", "fenced"), ("x = 1\n", "a third")])
def test_content_compared_with_the_file_takes_the_general_step(tmp_path, make_toolbox,
                                                               monkeypatch, plain_taken,
                                                               content, why):
    answers, texts = [], []
    for side in ("plain", "general"):
        f = _tree(tmp_path / side)
        box = make_toolbox(tmp_path / side)
        assert _write(box, content=PLAIN)["ok"]
        if side == "general":
            monkeypatch.setattr(W, "_replace_plain", lambda *args: None)
        answers.append(_write(box, content=content))
        texts.append(f.read_text())
    assert plain_taken == [False, False, False], why  # (the third: the general twin's first)
    assert answers[0] == answers[1] and texts[0] == texts[1]


def test_a_kept_form_takes_the_general_step(tmp_path, make_toolbox, plain_taken):
    f = _tree(tmp_path)
    box = make_toolbox(tmp_path)
    assert _write(box)["ok"]
    f.write_bytes(PLAIN.replace("\n", "\r\n").encode())
    answer = _write(box)
    assert answer["ok"] and "kept" in answer
    assert f.read_bytes() == PLAIN.replace("1", "2").replace("\n", "\r\n").encode()
    assert plain_taken == [False, False]


def test_a_new_repository_beside_the_file_takes_the_general_step(tmp_path, make_toolbox,
                                                                 plain_taken):
    """A repository made beside the file after the first call: the plain
    step sees its HEAD and the general step refuses the write."""
    f = _tree(tmp_path)
    box = make_toolbox(tmp_path)
    assert _write(box)["ok"]
    (f.parent / "HEAD").write_text("ref: refs/heads/main\n")
    (f.parent / "objects").mkdir()
    (f.parent / "refs").mkdir()
    answer = _write(box, content=PLAIN)
    assert not answer["ok"] and answer["code"] == "DENIED", answer
    assert f.read_text() == PLAIN.replace("1", "2")
    assert plain_taken == [False, False]


def test_links_not_settled_take_the_general_step(tmp_path, make_toolbox, monkeypatch,
                                                 plain_taken):
    """A walk for links under way once the call is ready (another program
    changed the tree meanwhile): the plain step is not taken; the general
    step waits for the walk, which finds a protected link made meanwhile
    leading to the file, and refuses."""
    from corral.tools._runtime.view import View, call as view_call

    f = _tree(tmp_path)
    box = make_toolbox(tmp_path, policy=Policy.build(protect=["alias.py"]))
    assert _write(box)["ok"]
    # made unseen by the kernel watch: only the walk learns it
    monkeypatch.setattr(box._view, "freshness", None)
    os.symlink("src/main.py", tmp_path / "alias.py")
    gate = threading.Event()
    real_walk = View._walk_tree_links

    def gated_walk(self: View) -> None:
        gate.wait(10)
        real_walk(self)

    real_ready = view_call.ready

    def ready_then_walk(view: View, call: Any, acts: bool = True) -> None:
        real_ready(view, call, acts)
        view.learn_every_link_later(((".", 0),))
        threading.Timer(0.2, gate.set).start()

    monkeypatch.setattr(View, "_walk_tree_links", gated_walk)
    monkeypatch.setattr(view_call, "ready", ready_then_walk)  # every call's, plain or not
    answer = _write(box, content=PLAIN)
    assert not answer["ok"] and answer["code"] == "DENIED", answer
    assert f.read_text() == PLAIN.replace("1", "2")
    assert plain_taken == [False, False]
