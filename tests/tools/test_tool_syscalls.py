"""One resolution per call: each tool's system calls, pinned, at depth 1 and 10.

Counted with :class:`corral.testing.backends.CountingBackend` (deterministic,
unlike times): a change that resolves a path once more fails here.  Every
system call strace sees in a call is counted, the view's ``flock`` calls
included (the tree lock's, taken and released, and the lock on the
directory a mutating call acts in, released by closing that directory).

The bounds: ``write_file`` and ``edit_file`` at most 2 more system
calls at depth 10 than at depth 1 (held: the same count); ``read_file`` at
most 6, and 5 where the backend's one-call open gives back the ``fstat``
it took (the native backend: :data:`READ_FILE_OPEN_STAT_MOST`; held: 6 and
5); no other tool's count grows with depth (held, but for
``glob`` and ``list_directory``, which read the ignore files of the
directories above the one they act on, as git does: their growth is pinned
at one probe a level outside a work tree and two inside one, and their
counts at depth 1); ``write_file`` and ``edit_file`` at most 19 (held: 19
and 18, :data:`WRITE_MOST`, every flock and the watch's read included; the
next write or edit of the file, in the plain step, no more, and the one
after it, its look for ``HEAD`` remembered, 17).
Their calls, all needed:

* the ``read`` of the process's kernel watch each call makes first,
  through the root's backend (did another program change a directory of
  the tree? :mod:`corral.tools._runtime.view.freshness`); it comes back
  empty, and the events of the call before (its own write) need no look
  (after a call that changed nothing, ``watch_waiting`` asks instead,
  without a read: tests/tools/test_watch_quiet_calls.py);

* the tree lock as other processes see it, kept between a process's steps:
  the ``pread`` of its count of moves (did another process move something?)
  and of the wants of it (does one wait to hold it exclusively?);
* the one resolution: ``openat2`` of the directory (opened for reading, so
  the lock is taken on it; its identity is not looked at: the lock is keyed
  by where it is), ``flock``, the final ``close`` (which releases it); ``edit_file``
  follows a final link, looked for by opening the file ``O_NOFOLLOW`` under
  the lock (no ``lstat`` first);
* the policy's look for a repository made since the toolbox opened
  (``faccessat`` of ``HEAD`` beside the file; the plain step's next write
  or edit of the file remembers it while the watch reads no event but the
  view's own replaces of other names);
* the file opened once (``open``, ``fstat``, one ``pread`` to the size
  fstat gave, ``close``): the plan, the digest, the head's form and the
  replace's metadata and extended attributes all come from that fd;
* the atomic replace: ``flistxattr`` on the old file's fd (none to carry:
  the temporary file is made with the old file's bits where they show no
  one more, 0644 here), the temporary file's ``open``, ``write``, ``fstat``
  (are its owner and mode already the old file's? then no ``fchmod``),
  ``fsync``, ``close``, the identity check (``lstat``) and the ``rename``.

A change that adds a resolution fails here.  On every backend with the
openat2 fast path (the walk resolves one
component at a time by design).
"""

from __future__ import annotations

from pathlib import Path

import os

import pytest

from corral.contained import Backend, Root, available_backends, backend_by_name
from corral.testing.backends import CountingBackend
from corral.tools import Toolbox
from corral.tools._runtime.view import decide, tree_lock

WRITE_MOST = 19  # write_file and edit_file at depth 1 and 10, every flock included
CONTENT = "".join(f"x{i} = 1\n" for i in range(150))
# tab-indented source (Go, a Makefile): content write_file compares with the
# file it replaces, so never the plain step's to write
TABBED = "".join(f"func f{i}() {{\n\treturn\n}}\n" for i in range(60))


def _deep(base: Path, depth: int) -> str:
    rel = "/".join(f"d{i}" for i in range(depth))
    (base / rel).mkdir(parents=True)
    (base / rel / "f.py").write_text(CONTENT)
    (base / rel / "g.py").write_text(CONTENT)
    return rel


def _with_openat2(name: str) -> Backend:
    """Backend ``name`` with the fast path on whatever the lane's
    ``CORRAL_OPENAT2`` says (its absence is the kernel's, then)."""
    return type(backend_by_name(name))(openat2=True)


# ids as the make_root fixture's, so the lanes that deselect those configs
# (scripts/test.sh: the main lane ran them) deselect these too
FAST = [name for name in ([os.environ["CORRAL_BACKEND"]] if os.environ.get("CORRAL_BACKEND")
                           else available_backends())
        if _with_openat2(name).has_openat2]


def _counts(base: Path, backend_name: str, depth: int) -> dict[str, int]:
    rel = _deep(base, depth)
    backend = CountingBackend(_with_openat2(backend_name))
    root = Root(str(base), backend=backend, fast_path=True)
    calls = {
        "read_file": ("read_file", {"path": f"{rel}/f.py"}),
        "write_file": ("write_file", {"path": f"{rel}/f.py", "content": CONTENT,
                                      "overwrite": True}),
        "write_file again": ("write_file", {"path": f"{rel}/f.py", "content": CONTENT,
                                            "overwrite": True}),
        "write_file once more": ("write_file", {"path": f"{rel}/f.py", "content": CONTENT,
                                                "overwrite": True}),
        "write_file yet again": ("write_file", {"path": f"{rel}/f.py", "content": CONTENT,
                                                "overwrite": True}),
        "write_file new": ("write_file", {"path": f"{rel}/new.py", "content": CONTENT}),
        "edit_file": ("edit_file", {"path": f"{rel}/f.py", "oldText": "x0 = 1",
                                    "newText": "x0 = 2"}),
        "edit_file again": ("edit_file", {"path": f"{rel}/f.py", "oldText": "x0 = 2",
                                          "newText": "x0 = 1"}),
        "edit_file once more": ("edit_file", {"path": f"{rel}/f.py", "oldText": "x0 = 1",
                                              "newText": "x0 = 2"}),
        "move_file": ("move_file", {"source": f"{rel}/g.py", "destination": f"{rel}/h.py"}),
        "write_file after move_file": ("write_file", {"path": f"{rel}/f.py", "content": CONTENT,
                                                      "overwrite": True}),
        "delete_file": ("delete_file", {"path": f"{rel}/h.py"}),
        "make_directory": ("make_directory", {"path": f"{rel}/sub"}),
        "write_file after make_directory": ("write_file", {"path": f"{rel}/f.py",
                                                           "content": CONTENT,
                                                           "overwrite": True}),
        "list_directory": ("list_directory", {"path": rel}),
        "write_file tabbed": ("write_file", {"path": f"{rel}/f.py", "content": TABBED,
                                             "overwrite": True}),
        "write_file tabbed again": ("write_file", {"path": f"{rel}/f.py", "content": TABBED,
                                                   "overwrite": True}),
    }
    counts: dict[str, int] = {}
    # the tree lock kept throughout (a loaded machine's pause between calls
    # would let it go: the next call takes it again, two calls more)
    idle = tree_lock.keep_idle_for(3600.0)
    try:
        with Toolbox(root) as box:
            box.call("read_file", {"path": f"{rel}/f.py"})  # a warm read: what it remembers
            for label, (name, args) in calls.items():
                with backend.counting() as tally:
                    answer = box.call(name, args)
                assert answer["ok"], (label, answer)
                counts[label] = tally.syscalls
    finally:
        tree_lock.keep_idle_for(idle)
        root.close()
    return counts


@pytest.fixture(autouse=True)
def no_other_server(monkeypatch):
    """The counts are of one root served alone: a move also looks up the way
    to its ends for other roots served now (THREATS row 60), one stat a
    level, only when another is served; in a test run, other tests' roots
    (this worker's Toolboxes not yet collected, the other worker's servers)
    are.  So here no other root is served."""
    monkeypatch.setattr(decide, "served_listed", set)


@pytest.fixture(params=FAST, ids=[f"{name}-openat2" for name in FAST])
def counted(tmp_path, request) -> dict[int, dict[str, int]]:
    return {depth: _counts(tmp_path / f"depth{depth}", request.param, depth)
            for depth in (1, 10)}


def test_write_and_edit_cost_their_syscalls_not_their_depth(counted):
    for tool in ("write_file", "write_file again", "edit_file", "edit_file again",
                 "edit_file once more"):
        assert counted[10][tool] <= WRITE_MOST, (tool, counted)
        assert counted[10][tool] <= counted[1][tool] + 2, (tool, counted)
    for depth in (1, 10):  # the next edit, in the plain step: no call more than the first
        assert counted[depth]["edit_file again"] <= counted[depth]["edit_file"], counted


def test_content_compared_with_the_file_costs_the_general_step_alone(counted):
    """A write the plain step would hand on (tabbed content, compared with
    the file it replaces) goes to the general step before the plain step
    reads the watch or takes a lock: it pays that step's calls, not both
    steps' (25 or 26 at depth 1 and 10 before)."""
    for depth in (1, 10):
        assert counted[depth]["write_file tabbed again"] <= WRITE_MOST, counted
    assert counted[10]["write_file tabbed again"] <= counted[1]["write_file tabbed again"] + 2, \
        counted


def test_the_events_of_the_views_own_replace_need_no_look(counted):
    """A write reads the events of the write before (its temporary file
    made and renamed onto the name, by the plain step as by the general
    one): the view's own, so nothing is looked at and it costs what the
    one before did; but for the look for ``HEAD`` beside the file, made
    by the first write in the plain step and remembered for the next."""
    for depth in (1, 10):
        assert counted[depth]["write_file yet again"] == counted[depth]["write_file once more"], \
            counted
        assert counted[depth]["write_file once more"] == \
            counted[depth]["write_file again"] - HEAD_LOOK, counted


def test_the_next_edit_remembers_there_is_no_head_beside_the_file(counted):
    """An edit in the plain step, as a write: the look for ``HEAD``
    beside the file made by the edit before, remembered while the watch
    reads no event but the view's own replaces
    (tests/security/test_redteam_repository_made_between_edits.py: a
    repository made meanwhile is looked at and refused)."""
    for depth in (1, 10):
        assert counted[depth]["edit_file again"] == \
            counted[depth]["edit_file"] - HEAD_LOOK, counted
        assert counted[depth]["edit_file once more"] == counted[depth]["edit_file again"], counted
        assert counted[depth]["edit_file once more"] == \
            counted[depth]["write_file once more"], counted


HEAD_LOOK = 1  # faccessat of HEAD beside the file


# The call after a change of the tree's shape pays for the view's look at
# where things landed, once, whatever the depth (the write's own calls as
# ``write_file again``, plus):
# * after ``move_file``, 4: the moved entry looked at where it landed
#   (``openat2``, ``fstat``, ``close``: is it a link, or a directory whose
#   links now lead elsewhere?), and the tree lock taken shared again
#   (``flock``): the move held it exclusively and let it go, so the kept
#   shared lock a plain call reuses is gone;
# * after ``make_directory``, 9: the made directory looked at where it
#   landed (``openat2``, ``fstat``, ``close``), then opened again, watched
#   and listed for links (``openat2``, ``fstat``, ``watch_add``, ``fstat``,
#   ``scandir``, ``close``): a program may put a link in it from now on.
AFTER_MOVE_MOST = 4
AFTER_MAKE_DIRECTORY_MOST = 9


def test_the_call_after_a_move_or_a_new_directory_pays_its_look_once(counted):
    for depth in (1, 10):
        plain = counted[depth]["write_file again"]
        assert counted[depth]["write_file after move_file"] <= plain + AFTER_MOVE_MOST, counted
        assert counted[depth]["write_file after make_directory"] <= \
            plain + AFTER_MAKE_DIRECTORY_MOST, counted
    for label in ("write_file after move_file", "write_file after make_directory"):
        assert counted[10][label] == counted[1][label], (label, counted)


#: a warm read_file's calls where the one-call open hands back the fstat it
#: took (``Backend.open_stat_beneath``): the kernel watch's look (its
#: FIONREAD: did another program change the tree?), the open (``openat2``
#: and ``fstat``), one ``pread``, the stamps' ``fstat`` after it (the
#: remembered digest is the bytes' only if they still hold), ``close``;
#: the file is decided on with the open's own fstat, not a second one
READ_FILE_OPEN_STAT_MOST = 5


def test_read_file_stays_within_six_syscalls(counted, request):
    backend = _with_openat2(request.node.callspec.params["counted"])
    most = 6 if backend.open_stat_beneath is None else READ_FILE_OPEN_STAT_MOST
    assert counted[1]["read_file"] <= most, counted
    assert counted[10]["read_file"] <= most, counted


# Tools that read the ignore files of the directories above the one they act
# on (git's rule: each ancestor's .gitignore applies inside a work tree) grow
# with depth by exactly this much a level: one openat2 probe for a ``.git``
# a level, and inside a work tree one for its ``.gitignore`` (none there:
# one failed call each).  Nothing else of theirs may grow.
READERS = ("list_directory", "glob")
OUTSIDE_PER_LEVEL = 1
INSIDE_PER_LEVEL = 2
# their counts at depth 1, pinned: (outside a work tree, inside one); a
# listing's own .git is known from the listing, and the root's is one
# lstat; the kernel watch's read is one of each
# a walk (the tree, glob) also looks, once it holds the tree lock, that its
# base is still at its path (an lstat and the open directory's fstat: row 62)
READERS_AT_DEPTH_1 = {"list_directory": (8, 10), "list_directory tree": (11, 13),
                      "glob": (15, 17)}
# a first call probes each directory above its path for a .git, and its
# path too unless it lists it (a listing's entries say whether one is there)
PROBES_ITS_PATH = {"list_directory": 0, "list_directory tree": 0, "glob": 1}


def test_no_other_tool_grows_with_depth(counted):
    grown = {tool: (counted[1][tool], counted[10][tool]) for tool in counted[1]
             if counted[10][tool] > counted[1][tool] and tool not in READERS}
    assert not grown, (grown, counted)


def _reader_counts(base: Path, backend_name: str, depth: int, repository: bool
                   ) -> dict[str, int]:
    rel = _deep(base, depth)
    if repository:
        (base / ".git").mkdir()
    backend = CountingBackend(_with_openat2(backend_name))
    root = Root(str(base), backend=backend, fast_path=True)
    calls = {
        "list_directory": ("list_directory", {"path": rel}),
        "list_directory tree": ("list_directory", {"path": rel, "depth": 2}),
        "glob": ("glob", {"pattern": "f.py", "path": rel}),
    }
    counts: dict[str, int] = {}
    try:
        for label, (name, args) in calls.items():
            # each in a toolbox of its own: its first call probes every level
            with Toolbox(root) as box:
                box.call("read_file", {"path": f"{rel}/f.py"})
                for again in ("", " again"):
                    with backend.counting() as tally:
                        answer = box.call(name, args)
                    assert answer["ok"], (label, answer)
                    counts[label + again] = tally.syscalls
    finally:
        root.close()
    return counts


@pytest.mark.parametrize("repository", [False, True], ids=["outside", "inside"])
@pytest.mark.parametrize("backend_name", FAST, ids=[f"{name}-openat2" for name in FAST])
def test_ancestor_ignore_files_cost_one_probe_each_per_level(tmp_path, backend_name,
                                                               repository):
    counts = {depth: _reader_counts(tmp_path / f"depth{depth}", backend_name, depth,
                                    repository) for depth in (1, 2, 10)}
    per_level = INSIDE_PER_LEVEL if repository else OUTSIDE_PER_LEVEL
    for tool, pinned in READERS_AT_DEPTH_1.items():
        assert counts[1][tool] == pinned[repository], (tool, counts)
        # from depth 2 on, the probes are all that grows (glob's own stat of
        # its path takes the one-name walk at depth 1: two calls fewer)
        assert counts[10][tool] - counts[2][tool] == 8 * per_level, (tool, counts)
        # the same call again, nothing changed meanwhile: the view's watch
        # says no entry came or went, so no level is probed for a .git again
        # (a .git made since is seen: test_list_directory_sees_a_git_made_later)
        for depth in (1, 2, 10):
            probes = depth + PROBES_ITS_PATH[tool]
            assert counts[depth][f"{tool} again"] == counts[depth][tool] - probes, (tool, counts)


@pytest.mark.parametrize("backend_name", FAST, ids=[f"{name}-openat2" for name in FAST])
def test_every_lock_is_a_counted_call(tmp_path, backend_name):
    """The counts are strace's: the tree lock's flock (shared, taken by the
    process's first step and kept for the next: a step that finds it kept
    reads whether another process waits for it, one pread, before anything
    else but the kernel watch's read) and the directory's (taken; closing the directory releases it)
    go through the backend, so a lock taken once more fails the pinned
    counts."""
    rel = _deep(tmp_path, 3)
    backend = CountingBackend(_with_openat2(backend_name))
    root = Root(str(tmp_path), backend=backend, fast_path=True)
    idle = tree_lock.keep_idle_for(3600.0)  # kept throughout: none let go mid-count
    try:
        with Toolbox(root) as box:
            for name, args, flocks, first in (
                    ("write_file", {"path": f"{rel}/f.py", "content": CONTENT,
                                    "overwrite": True}, 2, "flock"),
                    ("edit_file", {"path": f"{rel}/f.py", "oldText": "x0 = 1",
                                   "newText": "x0 = 2"}, 1, "pread")):
                with backend.counting() as tally:
                    assert box.call(name, args)["ok"]
                assert tally["flock"] == flocks, (name, str(tally))
                # (the kernel watch's read first: what another program changed)
                assert tally.order[:2] == ["read", first], tally.order
    finally:
        tree_lock.keep_idle_for(idle)
        root.close()


# A move while another root is served (a nested one here: ``d0``, served by
# a Toolbox of this process, as under two editor windows) holds that root's
# tree lock exclusively when it lies on the way to either end (THREATS row
# 60).  Where each served root lies is read once a move, whatever the depth:
# the root's path as the kernel names it (``readlink_at`` of its fd) and the
# process's mounts (``open_at``, ``read`` to the end, ``close``), each served
# root placed by its own directory's name (this process's, outside the
# backend, as the served directory's listing is); 47 to 74 calls from depth
# 1 to 10 before (one look a level, and one a parent of the root).  The
# served root's lock: ``flock``, its two ``pread``, ``flock`` to let it go.
SERVED_MOVE_MOST = 9  # calls more than the move of a root served alone


def _move_counts(base: Path, backend_name: str, depth: int,
                 nested_key: list[tuple[int, int]]) -> list[int]:
    rel = _deep(base, depth)
    info = os.stat(base / "d0")
    nested_key[:] = [(info.st_dev, info.st_ino)]  # the root served beside
    backend = CountingBackend(_with_openat2(backend_name))
    root = Root(str(base), backend=backend, fast_path=True)
    idle = tree_lock.keep_idle_for(3600.0)
    counts = []
    try:
        with Toolbox(root) as box, Toolbox(str(base / "d0")) as nested:
            assert nested.call("read_file", {"path": f"{rel.partition('/')[2] or '.'}/f.py"
                                             if depth > 1 else "f.py"})["ok"]
            box.call("read_file", {"path": f"{rel}/f.py"})
            for source, destination in (("g.py", "h.py"), ("h.py", "g.py"), ("g.py", "h.py")):
                with backend.counting() as tally:
                    answer = box.call("move_file", {"source": f"{rel}/{source}",
                                                    "destination": f"{rel}/{destination}"})
                assert answer["ok"], answer
                counts.append(tally.syscalls)
    finally:
        tree_lock.keep_idle_for(idle)
        root.close()
    return counts


@pytest.mark.parametrize("backend_name", FAST, ids=[f"{name}-openat2" for name in FAST])
def test_a_move_beside_a_served_nested_root_costs_no_look_a_level(
        tmp_path, backend_name, monkeypatch):
    monkeypatch.setattr(decide, "served_listed", set)
    nested_key: list[tuple[int, int]] = []
    alone = {depth: _move_counts(tmp_path / f"alone{depth}", backend_name, depth, nested_key)
             for depth in (1, 10)}

    def listed() -> set[tuple[int, int]]:
        # the nested root alone (not other tests' roots, nor other workers'):
        # what this process serves, less the outer root's
        return set(nested_key)

    monkeypatch.setattr(decide, "served_listed", listed)
    served: dict[int, list[int]] = {}
    for depth in (1, 10):
        served[depth] = _move_counts(tmp_path / f"served{depth}", backend_name, depth,
                                     nested_key)
    assert served[10] == served[1], (served, alone)
    for depth in (1, 10):
        for count, alone_count in zip(served[depth], alone[depth]):
            assert count <= alone_count + SERVED_MOVE_MOST, (served, alone)


#: what a read the host is asked about adds: the look that the name still
#: leads to the file it was asked about (THREATS row 10), one stat beneath
#: the root (the O_PATH open, its fstat, close)
ASKED_READ_MORE = 3


@pytest.mark.parametrize("backend_name", FAST, ids=[f"{name}-openat2" for name in FAST])
def test_a_read_the_host_is_asked_about_costs_the_look_at_its_name_alone(tmp_path,
                                                                         backend_name):
    """read_file with an ``authorize`` callback and deny rules (the
    benchmark's guarded read): the plain read's calls and the one stat
    that says the name still leads to the file decided on, at depth 1 and
    10 (held: 8 where the open gives its fstat back, 9 else)."""
    backend = CountingBackend(_with_openat2(backend_name))
    most = 6 if backend.inner.open_stat_beneath is None else READ_FILE_OPEN_STAT_MOST
    for depth in (1, 10):
        rel = _deep(tmp_path / f"depth{depth}", depth)
        asked: list[str] = []
        root = Root(str(tmp_path / f"depth{depth}"), backend=backend, fast_path=True)
        idle = tree_lock.keep_idle_for(3600.0)
        try:
            with Toolbox(root, authorize=lambda request: asked.append(request.path) or True,
                         deny=[".env", ".git/**"]) as box:
                assert box.call("read_file", {"path": f"{rel}/f.py"})["ok"]  # warm
                with backend.counting() as tally:
                    answer = box.call("read_file", {"path": f"{rel}/f.py"})
        finally:
            tree_lock.keep_idle_for(idle)
            root.close()
        assert answer["ok"] and answer["content"].startswith("1\tx0 = 1"), answer
        assert asked == [f"{rel}/f.py"] * 2, asked
        assert tally.syscalls <= most + ASKED_READ_MORE, (depth, str(tally))
