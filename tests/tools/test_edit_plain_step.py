"""edit_file's plain step (``CallView.edit_plain``): the commonest edit (one
exact edit of a plain UTF-8 file, no one asked) made in one straight step
where every fact the general step would weigh is known to allow it.
Checked two ways, on every backend config:

* twins: the same call on two identical trees, one with the plain step and
  one with the general step alone, gives the same answer and leaves the same
  tree (bytes, modes, xattrs, a new inode where written), over a seeded
  table of files, edits, places, policies and options; the plain step is
  taken exactly where the general step's quick edit makes the call;
* each fact that rules the plain step out takes the general step, and the
  answer and the tree are what the general step makes of them: a known
  link, a protected or denied name, a host asked, a move by another
  Toolbox, a file with other links, one over the limit, a form to keep
  (CRLF, a BOM), a file that is not UTF-8, an expectedSha256 that does not
  match, a repository made beside it; and a file swapped between the read
  and the write is ``STALE``, nothing written.
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
from corral.tools import Limits, Policy, Toolbox
from corral.tools._builtin import edit_file as E

from .helpers import twins

PLAIN = "".join(f"x{i} = 1\n" for i in range(150))
FILES = {
    "plain": (PLAIN.encode(), 0o644), "private": (PLAIN.encode(), 0o600),
    "exec": (PLAIN.encode(), 0o755), "crlf": (PLAIN.replace("\n", "\r\n").encode(), 0o644),
    "bom": (b"\xef\xbb\xbf" + PLAIN.encode(), 0o644), "no-final-newline":
    (PLAIN.encode()[:-1], 0o644), "non-ascii": ((PLAIN + "\u00e9 = '\u00fc'\n").encode(), 0o644),
    "latin1": (PLAIN.encode() + b"caf\xe9 = 1\n", 0o644), "nul": (b"x0 = 1\n\0\n", 0o644),
    "utf16": ("x0 = 1\n".encode("utf-16"), 0o644), "tabs": (b"\tx0 = 1\n\tx1 = 1\n", 0o644),
    "empty": (b"", 0o640),
    "big": ((PLAIN + "".join(f"y{i} = 1\n" for i in range(40000))).encode(), 0o644),
}
EDITS: dict[str, dict[str, Any]] = {
    "one": {"oldText": "x0 = 1", "newText": "x0 = 2"},
    "last-line": {"oldText": "x149 = 1", "newText": "x149 = 2"},
    "two-lines": {"oldText": "x3 = 1\nx4 = 1\n", "newText": "x3 = 2\n"},
    "grows": {"oldText": "x5 = 1\n", "newText": "x5 = 2\ny5 = 2\nz5 = 3\n"},
    "around-old": {"oldText": "x5 = 1\n", "newText": "x5 = 1\ny5 = 2\n"},
    "non-ascii-new": {"oldText": "x7 = 1", "newText": "x7 = '\u00e9\u00e8'"},
    "indented-new": {"oldText": "x8 = 1\n", "newText": "if x:\n    x8 = 2\n"},
    "tab-new": {"oldText": "x9 = 1\n", "newText": "if x:\n\tx9 = 2\n"},
    "escaped": {"oldText": "x2 = 1\nx3 = 1", "newText": "x2 = 1\\nx3 = 2"},
    "placeholder": {"oldText": "x10 = 1\n", "newText": "x10 = 2\n# ...\n"},
    "missing": {"oldText": "x0 = 7", "newText": "x0 = 8"},
    "ambiguous": {"oldText": " = 1\n", "newText": " = 2\n"},
    "replace-all": {"oldText": "x11 = 1", "newText": "x11 = 2", "replaceAll": True},
    "trailing-space": {"oldText": "x12 = 1   \nx13 = 1", "newText": "x12 = 2\nx13 = 2"},
    "inside-new": {"oldText": "x14 = 1", "newText": "x14 = 1 + 1"},
    "items": {"edits": [{"oldText": "x15 = 1", "newText": "x15 = 2"}]},
    "empty-old": {"oldText": "", "newText": "x = 1\n"},
    "numbered": {"oldText": "x16 = 1\n", "newText": "    17\tx16 = 2\n"},
}
PLACES = ["d0/f.py", "d0/d1/d2/f.txt", "src/main.py", "top.py", "nb/n.ipynb"]
POLICIES = {"default": lambda: None, "none": Policy.none,
            "deny-other": lambda: Policy.build(deny=["secret/**"], protect=["*.lock"])}
CASES = list(itertools.product(sorted(FILES), sorted(EDITS), PLACES, (False, True),
                               sorted(POLICIES)))
SAMPLE = random.Random(34).sample(CASES, 64)
# the commonest calls, every one of them: the plain step's own table
COMMON = [(file, edit, place, False, "default")
          for file in ("plain", "private", "exec", "non-ascii", "no-final-newline", "big")
          for edit in ("one", "last-line", "two-lines", "grows", "indented-new", "escaped")
          for place in ("d0/d1/d2/f.txt",)]


def _twins(tmp_path: Path, make_toolbox: Any, monkeypatch: pytest.MonkeyPatch, file: str,
           edit: str, place: str, xattr: bool, policy: str) -> tuple[list[bool], bool]:
    """The call on both twins, compared; whether the plain twin took the
    plain step (looked for or not) and whether its root has the fast path."""
    data, mode = FILES[file]
    real_plain, real_quick = E._edit_plain, E._quick
    taken: list[bool] = []
    quick_made: list[bool] = []
    answers, trees, renewed = [], [], []
    for side in ("plain", "general"):
        top = tmp_path / side
        top.mkdir()
        twins.build(top, place, data, mode, xattr)
        monkeypatch.setattr(E, "_edit_plain", twins.recording(real_plain, taken)
                            if side == "plain" else (lambda *args: None))
        monkeypatch.setattr(E, "_quick", real_quick if side == "plain" else
                            twins.recording(real_quick, quick_made))
        box = make_toolbox(top, policy=POLICIES[policy]())
        args = {"path": place, **EDITS[edit]}
        box.call("edit_file", {**args, "dryRun": True})  # the policy's verdict remembered
        taken.clear()
        quick_made.clear()
        answer, tree, replaced = twins.acted(box, top, place, "edit_file", args)
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
    # taken exactly where the general step's quick edit made the call (a
    # plain path of two names or more, on the fast path: one openat2)
    assert took == ([fast and "/" in place and quick_made == [True]]
                    if _looked_for(EDITS[edit]) else []), (took, quick_made, answers[0])
    return took, fast


def _looked_for(edit: dict[str, Any]) -> bool:
    """Whether the plain step is looked for, by the arguments alone: one
    edit, no replaceAll, an oldText that is not empty, holds no CR and is
    not inside its newText."""
    items = edit.get("edits", [edit])
    old, new = items[0]["oldText"], items[0]["newText"]
    return len(items) == 1 and not items[0].get("replaceAll") and old != "" and \
        "\r" not in old + new and old not in new


@pytest.mark.parametrize("file,edit,place,xattr,policy", SAMPLE)
def test_twins_answer_and_leave_the_same(tmp_path, make_toolbox, monkeypatch, file, edit,
                                         place, xattr, policy):
    _twins(tmp_path, make_toolbox, monkeypatch, file, edit, place, xattr, policy)


@pytest.mark.parametrize("file,edit,place,xattr,policy", COMMON)
def test_common_twins_take_the_plain_step(tmp_path, make_toolbox, monkeypatch, file, edit,
                                          place, xattr, policy):
    took, fast = _twins(tmp_path, make_toolbox, monkeypatch, file, edit, place, xattr, policy)
    assert took == [fast]


@pytest.fixture
def plain_taken(monkeypatch: pytest.MonkeyPatch) -> list[bool]:
    """Whether each edit_file call took the plain step (looked for or not)."""
    taken: list[bool] = []
    monkeypatch.setattr(E, "_edit_plain", twins.recording(E._edit_plain, taken))
    return taken


def _tree(tmp_path: Path, text: str = PLAIN) -> Path:
    f = tmp_path / "src" / "main.py"
    f.parent.mkdir(parents=True)
    f.write_text(text)
    return f


class _Flip:
    """Edits that flip one line back and forth."""

    def __init__(self) -> None:
        self.old = "x0 = 1"

    def __call__(self, box: Toolbox, rel: str = "src/main.py", **more: Any) -> dict[str, Any]:
        new = "x0 = 2" if self.old == "x0 = 1" else "x0 = 1"
        answer = box.call("edit_file", {"path": rel, "oldText": self.old, "newText": new,
                                        **more})
        if answer["ok"] and not more.get("dryRun"):
            self.old = new
        return answer


def test_the_common_edit_takes_the_plain_step(tmp_path, make_toolbox, plain_taken):
    f = _tree(tmp_path)
    box = make_toolbox(tmp_path)
    flip = _Flip()
    for _ in range(3):
        answer = flip(box)
        assert answer["ok"], answer
    assert f.read_text() == PLAIN.replace("x0 = 1", "x0 = 2")
    assert answer["lines"] == [[1, 1]] and answer["replacements"] == 1
    # the first call decides the general way and remembers; later ones go straight
    fast = twins.fast(box)
    assert plain_taken == [False, fast, fast]


def test_a_known_link_takes_the_general_step(tmp_path, make_toolbox, plain_taken):
    f = _tree(tmp_path)
    os.symlink("src/main.py", tmp_path / "alias.py")
    box = make_toolbox(tmp_path, policy=Policy.build(protect=["alias.py"]))
    flip = _Flip()
    for _ in range(2):
        answer = flip(box)
        assert not answer["ok"] and answer["code"] == "DENIED", answer
    assert f.read_text() == PLAIN  # a protected name leads here: never written
    assert plain_taken == [False, False]


def test_an_edit_through_a_link_takes_the_general_step(tmp_path, make_toolbox, plain_taken):
    f = _tree(tmp_path)
    os.symlink("main.py", tmp_path / "src" / "alias.py")
    box = make_toolbox(tmp_path)
    flip = _Flip()
    for _ in range(2):
        answer = flip(box, "src/alias.py")
        assert answer["ok"] and answer["resolvedPath"] == "src/main.py", answer
    assert f.read_text() == PLAIN
    assert (tmp_path / "src" / "alias.py").is_symlink()
    assert plain_taken == [False, False]


@pytest.mark.parametrize("rel,rules", [("src/main.py", {"protect": ["src/*.py"]}),
                                       ("src/main.py", {"deny": ["src/**"]}),
                                       ("src/pkg.lock", {"protect": ["*.lock"]})])
def test_a_protected_or_denied_name_takes_the_general_step(tmp_path, make_toolbox,
                                                           plain_taken, rel, rules):
    _tree(tmp_path)
    (tmp_path / rel).write_text(PLAIN)
    box = make_toolbox(tmp_path, policy=Policy.build(**rules))
    flip = _Flip()
    for _ in range(2):
        answer = flip(box, rel)
        assert not answer["ok"] and answer["code"] == "DENIED", answer
    assert (tmp_path / rel).read_text() == PLAIN
    assert plain_taken == [False, False]


def test_a_host_asked_takes_the_general_step(tmp_path, make_toolbox, plain_taken):
    f = _tree(tmp_path)
    asked: list[Any] = []
    box = make_toolbox(tmp_path, authorize=asked.append)
    flip = _Flip()
    for _ in range(2):
        assert flip(box)["ok"]
    assert len(asked) == 2 and f.read_text() == PLAIN
    assert plain_taken == []  # (not even looked for: someone hears the request)


def test_a_dry_run_takes_the_general_step(tmp_path, make_toolbox, plain_taken):
    f = _tree(tmp_path)
    box = make_toolbox(tmp_path)
    flip = _Flip()
    assert flip(box)["ok"]
    answer = flip(box, dryRun=True)
    assert answer["ok"] and answer["dryRun"] is True, answer
    assert f.read_text() == PLAIN.replace("x0 = 1", "x0 = 2")
    assert plain_taken == [False]  # (the dry run: not even looked for)


def test_a_move_by_another_toolbox_takes_the_general_step(tmp_path, make_toolbox,
                                                          plain_taken):
    f = _tree(tmp_path)
    (tmp_path / "d").mkdir()
    box = make_toolbox(tmp_path, policy=Policy.build(protect=["keep/**"]))
    other = make_toolbox(tmp_path, policy=Policy.build(protect=["keep/**"]))
    flip = _Flip()
    assert flip(box)["ok"] and flip(box)["ok"]

    def move() -> None:
        assert other.call("move_file", {"source": "d", "destination": "e"})["ok"]

    mover = threading.Thread(target=move)
    mover.start()
    mover.join()
    assert flip(box)["ok"] and flip(box)["ok"]
    fast = twins.fast(box)
    assert plain_taken == [False, fast, False, fast]
    assert f.read_text() == PLAIN and (tmp_path / "e").is_dir()


def test_a_file_swapped_between_read_and_write_is_stale_and_untouched(
        tmp_path, make_toolbox, monkeypatch, plain_taken):
    f = _tree(tmp_path)
    box = make_toolbox(tmp_path)
    flip = _Flip()
    assert flip(box)["ok"]
    swapped = []
    real_read = HeldParent.read

    def read_then_swap(self: HeldParent, limit: int) -> bytes:
        got = real_read(self, limit)
        if not swapped:  # another program replaces the file between the read and the write
            other = f.parent / "theirs"
            other.write_text(PLAIN)
            os.rename(other, f)
            swapped.append(True)
        return got

    monkeypatch.setattr(HeldParent, "read", read_then_swap)
    answer = flip(box)
    if not twins.fast(box):
        assert answer["ok"] and plain_taken == [False, False]
        return
    assert not answer["ok"] and answer["code"] == "STALE", answer
    assert f.read_text() == PLAIN  # theirs, as they wrote it
    assert [n for n in os.listdir(f.parent) if n.endswith(".corral-tmp")] == []
    # the plain step read and refused; the general step never ran
    assert swapped == [True] and plain_taken == [False]


def test_a_file_changed_between_calls_is_edited_as_it_is_now(tmp_path, make_toolbox,
                                                             plain_taken):
    """The plain step reads what is there at the call: a file another
    program replaced since the last edit (other bytes than the edit wrote)
    is the one read and edited, its mode kept."""
    f = _tree(tmp_path)
    box = make_toolbox(tmp_path)
    flip = _Flip()
    assert flip(box)["ok"]
    other = f.parent / "theirs"
    other.write_text(PLAIN.replace("x0 = 1", "x0 = 2").replace("x5 = 1", "x5 = 5"))
    os.chmod(other, 0o600)
    os.rename(other, f)
    answer = flip(box)
    assert answer["ok"], answer
    assert f.read_text() == PLAIN.replace("x5 = 1", "x5 = 5")
    assert stat.S_IMODE(f.stat().st_mode) == 0o600
    assert plain_taken == [False, twins.fast(box)]


@pytest.mark.parametrize("allowed", [False, True])
def test_a_hard_linked_file_takes_the_general_step(tmp_path, make_toolbox, plain_taken,
                                                   allowed):
    f = _tree(tmp_path)
    box = make_toolbox(tmp_path, allow_hardlinks=allowed)
    flip = _Flip()
    assert flip(box)["ok"]
    os.link(f, tmp_path / "twin.py")
    answer = flip(box)
    assert answer["ok"] is allowed, answer
    assert (tmp_path / "twin.py").read_text() == PLAIN.replace("x0 = 1", "x0 = 2")
    assert f.read_text() == (PLAIN if allowed else PLAIN.replace("x0 = 1", "x0 = 2"))
    assert plain_taken == [False, False]


def test_a_file_over_the_limit_takes_the_general_step(tmp_path, make_toolbox, plain_taken):
    f = _tree(tmp_path)
    box = make_toolbox(tmp_path, limits=Limits(max_edit_file_bytes=len(PLAIN) + 10))
    flip = _Flip()
    assert flip(box)["ok"]
    f.write_text(PLAIN.replace("x0 = 1", "x0 = 2") + "#" * 20 + "\n")
    answer = flip(box)
    assert not answer["ok"] and answer["code"] == "TOO_LARGE", answer
    assert f.read_text().endswith("#" * 20 + "\n")
    assert plain_taken == [False, False]


@pytest.mark.parametrize("form", ["crlf", "bom", "latin1", "nul"])
def test_a_file_not_plain_takes_the_general_step(tmp_path, make_toolbox, plain_taken, form):
    f = _tree(tmp_path)
    box = make_toolbox(tmp_path)
    flip = _Flip()
    assert flip(box)["ok"]
    text = PLAIN.replace("x0 = 1", "x0 = 2")
    data = {"crlf": text.replace("\n", "\r\n").encode(), "bom": b"\xef\xbb\xbf" + text.encode(),
            "latin1": text.encode() + b"caf\xe9\n", "nul": text.encode() + b"\0\n"}[form]
    f.write_bytes(data)
    answer = flip(box)
    if form == "crlf":
        assert answer["ok"] and answer["lineEndings"] == "crlf", answer
        assert f.read_bytes() == PLAIN.replace("\n", "\r\n").encode()
    elif form == "bom":
        assert answer["ok"] and answer["bom"] is True, answer
        assert f.read_bytes() == b"\xef\xbb\xbf" + PLAIN.encode()
    else:
        assert not answer["ok"] and answer["code"] == "UNSUPPORTED", answer
        assert f.read_bytes() == data
    assert plain_taken == [False, False]


def test_an_expected_digest_that_does_not_match_takes_the_general_step(
        tmp_path, make_toolbox, plain_taken):
    f = _tree(tmp_path)
    box = make_toolbox(tmp_path)
    flip = _Flip()
    first = flip(box)
    assert first["ok"]
    answer = flip(box, expectedSha256=first["baseSha256"])
    assert not answer["ok"] and answer["code"] == "STALE", answer
    assert answer["details"]["currentSha256"] == first["sha256"], answer
    assert f.read_text() == PLAIN.replace("x0 = 1", "x0 = 2")
    answer = flip(box, expectedSha256=first["sha256"])
    assert answer["ok"], answer
    fast = twins.fast(box)
    assert plain_taken == [False, False, fast]


def test_a_new_repository_beside_the_file_takes_the_general_step(tmp_path, make_toolbox,
                                                                 plain_taken):
    f = _tree(tmp_path)
    box = make_toolbox(tmp_path)
    flip = _Flip()
    assert flip(box)["ok"]
    (f.parent / "HEAD").write_text("ref: refs/heads/main\n")
    (f.parent / "objects").mkdir()
    (f.parent / "refs").mkdir()
    answer = flip(box)
    assert not answer["ok"] and answer["code"] == "DENIED", answer
    assert f.read_text() == PLAIN.replace("x0 = 1", "x0 = 2")
    assert plain_taken == [False, False]


def test_a_file_found_not_plain_is_read_once_a_call_until_it_is_plain_again(
        tmp_path, make_toolbox, monkeypatch, plain_taken):
    """A CRLF file: the plain step reads it once and leaves it to the
    general step; its next edits go there at once (the file read once a
    call, not twice), until an edit of it is made the quick way again."""
    f = _tree(tmp_path)
    box = make_toolbox(tmp_path)
    flip = _Flip()
    assert flip(box)["ok"]
    f.write_bytes(f.read_bytes().replace(b"\n", b"\r\n"))
    reads: list[int] = []
    real_read = HeldParent.read

    def counted_read(self: HeldParent, limit: int) -> bytes:
        reads.append(limit)
        return real_read(self, limit)

    monkeypatch.setattr(HeldParent, "read", counted_read)
    for _ in range(3):
        answer = flip(box)
        assert answer["ok"] and answer["lineEndings"] == "crlf", answer
    fast = twins.fast(box)
    if not fast:  # the plain step is never taken: nothing read, nothing remembered
        assert plain_taken == [False] * 4 and reads == []
        return
    assert plain_taken == [False, False] and len(reads) == 1  # (then not looked for)
    f.write_bytes(f.read_bytes().replace(b"\r\n", b"\n"))  # another program makes it LF
    for _ in range(2):
        answer = flip(box)
        assert answer["ok"] and "lineEndings" not in answer, answer
    assert f.read_text() == PLAIN  # (six edits, each flipping one line)
    # the first LF edit made the quick way by the general step, the next in the plain step
    assert plain_taken == [False, False, True]
