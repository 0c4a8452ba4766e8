"""THREATS.md row 9 through the tools: renames racing read, write, edit, glob, grep.

The core harness's attacker and layouts are reused as they are
(``helpers.race.run_scenario``): a separate process swaps ``ws/sw`` (a real
directory) with ``ws/lnk`` (a symlink to ``base/outside``, same layout,
secret content) by ``renameat2(RENAME_EXCHANGE)``, or moves ``ws/x`` out of
the root and back, while the operations below run through that region.
Here the operations are tool calls (:func:`tool_ops`), on every backend
config, and each call's envelope is checked:

* never the outside secret, nor a host path, in any result or refusal;
* a success is one a race-free run could give (the inside content; a glob
  that lists the inside directory, proven by a file only it holds);
* a refusal is typed, never ``INTERNAL`` (:data:`ALLOWED`): ``OUTSIDE_ROOT``
  while the link is in place, ``NOT_FOUND`` while a directory is away,
  ``STALE`` when it changed between check and use, and the answers a
  component seen half-way through a swap gets (``INVALID_ARGUMENT``
  not_directory: opened as a link, read as a directory; ``ALREADY_EXISTS``:
  write_file saw a parent missing for an instant).  The outcome counts are
  reported;
* at the end nothing outside the root has changed (``run_scenario``).

Tool calls are much slower than core calls, so the CI default is
:data:`DEFAULT_ITERATIONS` per operation and scenario (this file stays
within about 90 s in CI); ``CORRAL_RACE_ITERATIONS``, when set, is used
here too, and ``CORRAL_TOOL_RACE_ITERATIONS`` sets the tools' count alone
(see ``tests/security/README.md``).
"""

from __future__ import annotations

import json
import os
import shutil
import sys
import time
from contextlib import nullcontext

import pytest

from .helpers.race import SECRET, Layout, RaceOp, run_scenario
from .helpers.settings import RACE_REPORT
from .helpers.world import CONFIG_IDS, CONFIGS, assert_contract
from corral.tools import Toolbox

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"),
                                reason="the attacker uses renameat2(RENAME_EXCHANGE)")

DEFAULT_ITERATIONS = 1000
# CORRAL_TOOL_RACE_ITERATIONS (tools only) wins over CORRAL_RACE_ITERATIONS
# (core and tools alike): a nightly run can scale the two apart
ITERATIONS = int(os.environ.get("CORRAL_TOOL_RACE_ITERATIONS", "0") or 0) or \
    int(os.environ.get("CORRAL_RACE_ITERATIONS", "0") or 0) or DEFAULT_ITERATIONS
SECRET_TEXT = SECRET.decode()
ALLOWED = {"OUTSIDE_ROOT", "NOT_FOUND", "STALE", "INVALID_ARGUMENT", "ALREADY_EXISTS",
           "UNSUPPORTED"}


class ToolRig:
    """What ``run_scenario`` drives: a Toolbox, with its Root's counters."""

    def __init__(self, toolbox: Toolbox) -> None:
        self.toolbox = toolbox
        self.checked = 0

    @property
    def stats(self) -> dict:
        return self.toolbox.root.stats

    def close(self) -> None:
        self.toolbox.root.close()

    def call(self, layout: Layout, tool: str, args: dict) -> dict:
        envelope = self.toolbox.call(tool, args)
        text = assert_contract(envelope)
        where = f"{tool} {args!r}"
        assert SECRET_TEXT not in text, f"ESCAPE: outside content from {where}: {envelope}"
        for piece in (layout.base, os.path.realpath(layout.base)):  # the link text is absolute
            assert piece not in text, f"ESCAPE: {piece!r} named by {where}: {envelope}"
        if not envelope["ok"]:
            assert envelope["code"] in ALLOWED, f"{where}: unexpected refusal {envelope}"
        self.checked += 1
        return envelope


def _outcome(envelope: dict) -> str:
    if envelope["ok"]:
        return "ok"
    kind = envelope["details"].get("kind")
    return f"{envelope['code']}:{kind}" if kind else envelope["code"]


MARKER = "inside-marker"  # a file only the inside directory holds (glob's proof)


def _paths(scenario: str) -> dict[str, object]:
    """Where each tool works: through the swapped directory, or through
    '..' out of the directory that moves out and back."""
    if scenario == "exchange":
        return {"reads": ["sw/f", "sw/sub/../f", "sw/sub/f"], "dir": "sw", "write": "sw/w.txt",
                "edit": "sw/r_a", "marker": f"sw/{MARKER}", "outside_write": "outside/w.txt"}
    return {"reads": ["x/y/../../secret", "x/y/../../x/y/../../secret"], "dir": "x/y/../..",
            "write": "x/y/../../w.txt", "edit": "x/y/../../r_a",
            "marker": f"x/y/../../{MARKER}", "outside_write": "w.txt"}


def _open_inside_dir(layout: Layout, scenario: str) -> int:
    """An fd of the directory the glob op must list: the root (move_out),
    or the real ``sw`` directory wherever the attacker has put it (it is
    ``ws/sw`` or ``ws/lnk``; neither name is followed, and the fd's inode
    is checked not to be the outside one)."""
    if scenario != "exchange":
        return os.open(layout.root, os.O_RDONLY | os.O_DIRECTORY)
    for _ in range(100_000):
        for name in ("sw", "lnk"):
            try:
                fd = os.open(os.path.join(layout.root, name),
                             os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW)
            except OSError:  # the symlink at this instant
                continue
            info = os.fstat(fd)
            assert (info.st_dev, info.st_ino) not in layout.outside_idents
            return fd
    raise AssertionError("the inside directory is neither at sw nor at lnk")


def plant_marker(layout: Layout, scenario: str) -> None:
    """Create :data:`MARKER` in the inside directory, race-free (by fd), so
    that every successful glob can prove it listed the inside directory.
    (The write op's file was the proof before; a run where write_file never
    got through the swaps in its 1000 tries (it needs 7 consecutive
    resolutions of ``sw`` to see the directory, about 1% of tries) then
    failed as if glob had escaped.)"""
    fd = _open_inside_dir(layout, scenario)
    try:
        made = os.open(MARKER, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o644,
                       dir_fd=fd)
        os.write(made, b"INSIDE")
        os.close(made)
    finally:
        os.close(fd)


def _identity_of_x(layout: Layout) -> tuple[int, int]:
    """(dev, ino) of the directory the attacker moves, wherever it is now."""
    for _ in range(100_000):
        for path in (os.path.join(layout.root, "x"), os.path.join(layout.base, "xo")):
            try:
                info = os.lstat(path)
            except FileNotFoundError:
                continue
            return (info.st_dev, info.st_ino)
    raise AssertionError("x is neither in the root nor out")


def _move_new_x_aside(layout: Layout, original: tuple[int, int], i: int) -> bool:
    """While x was out, write_file rightly made a new x/y (the path's missing
    parents): move that one aside, or the attacker (which moves x back only
    without replacing anything) could never bring the real x back.  While
    the new x stands there the attacker can neither replace nor take it."""
    path = os.path.join(layout.root, "x")
    try:
        info = os.lstat(path)
    except FileNotFoundError:
        return False
    if (info.st_dev, info.st_ino) == original:
        return False
    aside = os.path.join(layout.root, f"made-x{i}")
    os.rename(path, aside)
    shutil.rmtree(aside)  # only the empty x/y write_file made (the file went to the root)
    return True


def tool_ops(scenario: str) -> list[RaceOp]:
    where = _paths(scenario)

    def write(rig: ToolRig, layout: Layout, i: int, state: dict) -> str:
        if scenario == "move_out" and "x" not in state:
            state["x"] = _identity_of_x(layout)
        try:
            envelope = rig.call(layout, "write_file", {"path": where["write"],
                                                       "content": f"INSIDE {i}\n",
                                                       "overwrite": True})
        finally:
            if scenario == "move_out" and _move_new_x_aside(layout, state["x"], i):
                state["made_x"] = state.get("made_x", 0) + 1
        if envelope["ok"]:  # caught now, not only by the snapshot at the end
            escaped = os.path.join(layout.base, where["outside_write"])
            assert not os.path.lexists(escaped), f"ESCAPE: write_file made {escaped}"
        return _outcome(envelope)

    def read(rig: ToolRig, layout: Layout, i: int, state: dict) -> str:
        reads = where["reads"]
        envelope = rig.call(layout, "read_file", {"path": reads[i % len(reads)]})
        if envelope["ok"]:
            assert envelope["content"] == "1\tINSIDE", envelope
        return _outcome(envelope)

    def edit(rig: ToolRig, layout: Layout, i: int, state: dict) -> str:
        # toggles INSIDE <-> INSIDX; a refusal changes nothing, so the state is known
        old, new = ("INSIDX", "INSIDE") if state.get("edited") else ("INSIDE", "INSIDX")
        envelope = rig.call(layout, "edit_file", {"path": where["edit"], "oldText": old,
                                                  "newText": new})
        if envelope["ok"]:
            state["edited"] = not state.get("edited")
        return _outcome(envelope)

    def glob(rig: ToolRig, layout: Layout, i: int, state: dict) -> str:
        if not state.get("marker"):
            plant_marker(layout, scenario)
            state["marker"] = True
        envelope = rig.call(layout, "glob", {"pattern": "**/*", "path": where["dir"],
                                             "includeIgnored": True})
        if envelope["ok"]:
            # only the inside directory holds the marker: a listing without
            # it is a listing of the outside directory
            assert where["marker"] in envelope["paths"], \
                f"ESCAPE: glob listed a directory without the inside marker: {envelope}"
            assert all(not p.startswith(("/", "..")) for p in envelope["paths"]), envelope
        return _outcome(envelope)

    def grep(rig: ToolRig, layout: Layout, i: int, state: dict) -> str:
        envelope = rig.call(layout, "grep", {"pattern": "SIDE", "path": where["dir"],
                                             "includeIgnored": True})
        if envelope["ok"]:
            texts = [m["text"] for m in envelope["matches"]]
            # the layout's INSIDE files, the edit's toggle, the write op's file
            assert texts and all(t in ("INSIDE", "INSIDX") or t.startswith("INSIDE ")
                                 for t in texts), envelope
        return _outcome(envelope)

    none: frozenset = frozenset()  # a tool never raises: every answer is an envelope
    ops = [("write_file", write), ("read_file", read), ("edit_file", edit), ("glob", glob),
           ("grep", grep)]
    return [RaceOp(name, _until_ok(run), none) for name, run in ops]


UNTIL_OK_SECONDS = 10.0


def _until_ok(run):
    """``run``, but on the last iteration, if no call has succeeded yet, the
    call is repeated (every 2 ms, at most :data:`UNTIL_OK_SECONDS`) until
    one does: on a loaded machine a fast refusal loop can fit all its
    iterations into one stretch where the attacker is not scheduled, and
    the link stays in place throughout.  Every repeated call is checked
    like the others (an escape fails the test at once)."""
    def wrapped(rig, layout, i, state):
        outcome = run(rig, layout, i, state)
        state["ok"] = state.get("ok", 0) + (outcome == "ok")
        deadline = time.monotonic() + UNTIL_OK_SECONDS
        while i == ITERATIONS - 1 and not state["ok"] and time.monotonic() < deadline:
            time.sleep(0.002)  # let the attacker run
            state["retries"] = state.get("retries", 0) + 1
            if run(rig, layout, i, state) == "ok":
                state["ok"] = 1
                return "ok"  # the op did work once; the refusals before are counted
        return outcome
    return wrapped


@pytest.mark.long
@pytest.mark.parametrize("config", CONFIGS, ids=CONFIG_IDS)
@pytest.mark.parametrize("scenario", ["exchange", "move_out"])
def test_tools_under_rename_races(scenario, config, tmp_path, tmp_path_factory):
    rigs: list[ToolRig] = []

    def factory(path: str) -> ToolRig:
        rigs.append(ToolRig(Toolbox(config.factory(path))))
        return rigs[-1]

    report = run_scenario(scenario, str(tmp_path), factory, ITERATIONS, ops=tool_ops(scenario))
    report.update(config=config.label, layer="tools")
    RACE_REPORT.append(report)
    out = tmp_path_factory.getbasetemp() / "race-stats-tools.json"
    rows = json.loads(out.read_text()) if out.exists() else []
    out.write_text(json.dumps(rows + [report], indent=1, sort_keys=True))
    print(f"\n{json.dumps(report, sort_keys=True)}")

    assert rigs[0].checked >= ITERATIONS * len(report["ops"])  # (+ the last call's repeats)
    assert report["renames"] > 0, "the attacker never renamed anything"
    for name, op in report["ops"].items():
        # every operation must have worked at least once: a run where the
        # tree was always "away" tested only refusals
        assert op["outcomes"].get("ok", 0) > 0, (name, report)
    if ITERATIONS >= 1000:
        # the race must have been met: some answers differ from the race-free one
        disturbed = sum(n for op in report["ops"].values()
                        for outcome, n in op["outcomes"].items() if outcome != "ok")
        eagain = sum(op.get("openat2_eagain", 0) for op in report["ops"].values())
        assert disturbed + eagain > 0, report


def test_glob_check_catches_a_glob_that_lists_the_outside(tmp_path, monkeypatch):
    """The glob op's proof is deterministic: a glob whose base is opened by
    host path (following the swapped-in link) lists the outside directory
    within a few hundred calls, and the marker check reports the escape."""
    import corral.tools._builtin.glob_tool as glob_tool
    import corral.tools._runtime.view.walks as walks
    from corral.contained import Handle
    from corral.tools._runtime.view_walk import OpenDirectory
    from corral.tools._search.walk import Base

    hosts: dict[int, str] = {}

    def open_by_host_path(ctx, rel, before):  # the bug: resolves the spelling
        root = ctx.view.shared.root
        fd = os.open(os.path.join(hosts[id(root)], rel), os.O_RDONLY | os.O_DIRECTORY)
        handle = Handle(root, root.backend, fd, rel)
        return Base(OpenDirectory(handle, rel), rel, rel, os.fstat(fd))

    monkeypatch.setattr(glob_tool, "open_base", open_by_host_path)
    # the walk's own look that its base is still at its path (the tree lock
    # had) answers that swap STALE: taken out too, so the marker check alone
    # must catch the bug planted
    monkeypatch.setattr(walks, "walking", lambda call, directory: nullcontext())

    def factory(path: str) -> ToolRig:
        rig = ToolRig(Toolbox(CONFIGS[0].factory(path)))
        hosts[id(rig.toolbox.root)] = path
        return rig

    globs = [op for op in tool_ops("exchange") if op.name == "glob"]
    with pytest.raises(AssertionError, match="ESCAPE: glob listed"):
        run_scenario("exchange", str(tmp_path), factory, 20_000, ops=globs)
