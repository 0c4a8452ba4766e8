"""THREATS.md through read_files, file_info, make_directory and the listing
tree, on every backend config.

The same rows, worlds and escape checks as ``test_threats_tools.py`` (its
world builders are imported, not copied), for every path-carrying argument
of these tools (:data:`SLOTS`): ``read_files.paths`` (one path; the
answer checked is that file's own envelope), ``file_info.path``,
``make_directory.path`` and ``list_directory.path`` with ``depth`` (the
tree).  Every call goes through ``World.call``: no outside content, no host
path, nothing outside changed, no call blocking.

What differs from the first eight tools, and why: file_info describes a
final symlink, FIFO, socket, device or hard link itself (``lstat``, nothing
opened or followed), so those are answered, with nothing of the outside;
make_directory meets an existing non-directory as ``ALREADY_EXISTS``.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any
from collections.abc import Callable

import pytest

from ..helpers import fds_opened_since, open_fds
from .helpers.world import CONFIG_IDS, CONFIGS, World, call_bounded, string_values
from corral.contained import Root, backend_by_name
from corral.tools import Refusal, Toolbox
from .test_threats_tools import (INVALID, OK, SPECIAL_KIND, SPECIALS, CloexecWatch,
                                _swap_link_out, _swap_rename_over, expect, hard_link, loops,
                                outward_links, specials)

Want = tuple[str, str | None]


@dataclass(frozen=True)
class Slot:
    tool: str
    variant: str = ""

    @property
    def id(self) -> str:
        return f"{self.tool}{'.' + self.variant if self.variant else ''}"

    def args(self, path: str) -> dict[str, Any]:
        return {"read_files": {"paths": [path]},
                "file_info": {"path": path},
                "make_directory": {"path": path},
                "list_directory": {"path": path, "depth": 3, "includeIgnored": True}}[self.tool]

    def answer(self, envelope: dict[str, Any]) -> dict[str, Any]:
        """The envelope a row judges: for read_files, the one file's own."""
        if self.tool == "read_files" and envelope.get("ok"):
            assert len(envelope["files"]) == 1, envelope
            return envelope["files"][0]  # type: ignore[no-any-return]
        return envelope


SLOTS = [Slot("read_files"), Slot("file_info"), Slot("make_directory"),
         Slot("list_directory", "tree")]
per_config = pytest.mark.parametrize("config", CONFIGS, ids=CONFIG_IDS)
per_slot = pytest.mark.parametrize("slot", SLOTS, ids=[s.id for s in SLOTS])


def run_rows(tmp_path, config, slot: Slot, variants: list[str],
             want: Callable[[Slot, str], Want], extra: Callable[[World], None] | None = None,
             ) -> None:
    """Each variant in a fresh world: the answer ``want(slot, path)`` and no escape."""
    for i, raw in enumerate(variants):
        world = World(tmp_path / f"v{i}", extra=extra)
        try:
            inside = world.inside()
            envelope = world.call(world.toolbox(config), slot.tool, slot.args(world.abs(raw)))
            answer = slot.answer(envelope)
            expect(answer, want(slot, raw), f"{slot.id} {raw!r} on {config.label}")
            if not answer["ok"]:
                assert world.inside() == inside, f"{slot.id} {raw!r}: a refusal changed the root"
        finally:
            world.close()


def outside(kind: str | None) -> Callable[[Slot, str], Want]:
    return lambda _slot, _path: ("OUTSIDE_ROOT", kind)


def final(refusal: Want, *, info: Want = OK, mkdir: Want | None = None
          ) -> Callable[[Slot, str], Want]:
    """A final component that is a link (or a special file): file_info
    describes it (``info``); make_directory answers ``mkdir``."""
    def want(slot: Slot, _path: str) -> Want:
        if slot.tool == "file_info":
            return info
        if slot.tool == "make_directory" and mkdir is not None:
            return mkdir
        return refusal
    return want


# -- rows 1-3 ---------------------------------------------------------------------------

@per_config
@per_slot
def test_row01_dotdot(tmp_path, config, slot):
    run_rows(tmp_path, config, slot, ["..", "../", "a/../..", "a/../../x", "../x",
                                      "sub/../../a.txt", "../ws/a.txt", "a/./../../"],
             outside("dotdot"))


@per_config
@per_slot
@pytest.mark.parametrize("prefix", ["a/../", "sub/../a/./../", "@BASE@/ws/", "@BASE@/ws/a/../"])
def test_row01_02_inside_paths_work(tmp_path, config, slot, prefix):
    world = World(tmp_path)
    try:
        target = "sub" if slot.tool in ("make_directory", "list_directory") else "a.txt"
        path = world.abs(prefix + target)
        envelope = world.call(world.toolbox(config), slot.tool, slot.args(path))
        answer = slot.answer(envelope)
        expect(answer, OK, f"{slot.id} {path!r}")
        if slot.tool == "read_files":
            assert "inside a" in answer["content"]
        elif slot.tool == "file_info":
            assert answer["kind"] == "file" and answer["size"] == len("inside a\n")
        elif slot.tool == "make_directory":
            assert answer["createdDirectories"] == []
        else:
            assert [e["name"] for e in answer["entries"]] == ["b.txt"]
        for value in string_values(envelope):
            assert not value.startswith("/"), f"not root-relative: {value!r} in {envelope}"
    finally:
        world.close()


@per_config
@per_slot
def test_row02_03_absolute_home_and_sibling(tmp_path, config, slot):
    variants = ["@BASE@/far-q7/secret.txt", "@BASE@/secret.txt", "@BASE@", "//x", "/",
                "/etc/passwd", "~", "~/x", "@BASE@/ws-evil/a.txt", "../ws-evil/a.txt",
                "@BASE@/ws/../far-q7/secret.txt"]

    def want(_slot: Slot, path: str) -> Want:
        if path.startswith("~"):
            return ("OUTSIDE_ROOT", "home")
        if path.startswith(("@BASE@/ws/", "../")):
            return ("OUTSIDE_ROOT", "dotdot")
        return ("OUTSIDE_ROOT", "absolute")

    run_rows(tmp_path, config, slot, variants, want)


# -- rows 4-8: symlinks that lead out ----------------------------------------------------

@per_config
@per_slot
def test_row04_06_08_links_out_on_the_way(tmp_path, config, slot):
    variants = ["ldir/secret.txt", "lreldir/secret.txt", "lsib/a.txt", "chain2/secret.txt",
                "chaind/dir", "ldir/", "ldir/.", "lreldir//", "chain2/", "ldir/made/new",
                "lreldir/new/deeper", "chain2/made"]
    run_rows(tmp_path, config, slot, variants, outside("symlink"), extra=outward_links)


@per_config
@per_slot
def test_row04_07_final_links_out(tmp_path, config, slot):
    """file_info describes the link (kind symlink, targetKind outside, no
    target, no size); the others refuse; nothing is created outside."""
    variants = ["labs", "lrel", "ldir", "lreldir", "lsib", "chain2", "chainf", "chaind", "dang",
                "dangrel", "dangdir"]
    run_rows(tmp_path, config, slot, variants, final(("OUTSIDE_ROOT", "symlink")),
             extra=outward_links)
    world = World(tmp_path / "described", extra=outward_links)
    try:
        toolbox = world.toolbox(config)
        for name in variants:
            got = world.call(toolbox, "file_info", {"path": name})
            assert (got["kind"], got["targetKind"]) == ("symlink", "outside"), got
            assert "target" not in got and "size" not in got, got
    finally:
        world.close()


@per_config
@per_slot
def test_row07_dangling_links_out_create_nothing(tmp_path, config, slot):
    run_rows(tmp_path, config, slot, ["dang/x", "dangrel/x", "dangrel/new/deep", "dangdir/x",
                                      "dangrel/"], outside("symlink"), extra=outward_links)


# -- row 5: loops -------------------------------------------------------------------------

@per_config
@per_slot
def test_row05_loops_are_typed_and_fast(tmp_path, config, slot):
    run_rows(tmp_path, config, slot, ["loop/x", "p1/x", "loop/", "c0/"],
             final(("UNSUPPORTED", "symlink_loop"), info=("UNSUPPORTED", "symlink_loop")),
             extra=loops)
    run_rows(tmp_path / "final", config, slot, ["loop", "p1", "dl"],
             final(("UNSUPPORTED", "symlink_loop")), extra=loops)


# -- row 10: swapped while the host decides ----------------------------------------------

SWAPS = [
    ("read_files", {"paths": ["a.txt"]}, "a.txt", _swap_rename_over),
    ("read_files", {"paths": ["a.txt"]}, "a.txt", _swap_link_out),
    ("file_info", {"path": "a.txt"}, "a.txt", _swap_rename_over),
    ("file_info", {"path": "a.txt"}, "a.txt", _swap_link_out),
    ("file_info", {"path": "d/t.txt"}, "d", _swap_link_out),
    ("make_directory", {"path": "d/new/deeper"}, "d", _swap_link_out),
    ("list_directory", {"path": "d", "depth": 2}, "d", _swap_link_out),
]


@per_config
@pytest.mark.parametrize("case", SWAPS, ids=[f"{t}-{p}-{s.__name__[6:]}-{i}"
                                             for i, (t, _a, p, s) in enumerate(SWAPS)])
def test_row10_swap_during_authorization_fails_closed(tmp_path, config, case):
    tool, args, rel, swap = case

    def setup(world: World) -> None:
        (world.root / "other.txt").write_text("other content\n")
        (world.root / "d").mkdir()
        (world.root / "d" / "t.txt").write_text("inside t\n")

    world = World(tmp_path, extra=setup)
    asked: list[Any] = []

    def authorize(request):
        if not asked:
            asked.append(request)
            swap(world, rel)

    try:
        envelope = world.call(world.toolbox(config, authorize=authorize), tool, args)
        answer = Slot(tool).answer(envelope)
        assert asked, "authorize was never asked"
        assert answer["ok"] is False and answer["code"] in ("STALE", "OUTSIDE_ROOT"), answer
        assert not os.path.exists(world.far / "new")
    finally:
        world.close()


# -- rows 11 and 12: hard links and special files ------------------------------------------

@per_config
@per_slot
def test_row11_hardlink_to_outside_file(tmp_path, config, slot):
    # file_info tells nothing of a hard-linked file (its other name may be
    # outside the root, or denied), as read_files reads nothing of it
    answers = {"read_files": ("UNSUPPORTED", "hardlink"), "file_info": ("UNSUPPORTED", "hardlink"),
               "make_directory": ("ALREADY_EXISTS", "exists"),
               "list_directory.tree": ("INVALID_ARGUMENT", "not_directory")}
    run_rows(tmp_path, config, slot, ["hl"], lambda s, p: answers[s.id], extra=hard_link)


@per_config
@per_slot
@pytest.mark.parametrize("special", ["fifo", "sock", "null"])
def test_row12_special_files_never_block(tmp_path, config, slot, special):
    if special not in SPECIALS:
        pytest.skip("this machine does not permit mknod (device nodes need CAP_MKNOD)")
    answers = {"read_files": ("UNSUPPORTED", SPECIAL_KIND[special]), "file_info": OK,
               "make_directory": ("ALREADY_EXISTS", "exists"),
               "list_directory.tree": ("INVALID_ARGUMENT", "not_directory")}
    run_rows(tmp_path, config, slot, [special], lambda s, p: answers[s.id], extra=specials)


@per_config
def test_row12_the_tree_lists_special_files_without_opening_them(tmp_path, config):
    world = World(tmp_path, extra=specials)
    try:
        listed = world.call(world.toolbox(config), "list_directory", {"path": ".", "depth": 3})
        kinds = {e["name"]: e["kind"] for e in listed["entries"] if e["name"] in SPECIALS}
        assert kinds == dict.fromkeys(SPECIALS, "other")
        info = world.call(world.toolbox(config), "file_info", {"path": "fifo"})
        assert info["kind"] == "fifo"
    finally:
        world.close()


# -- row 13: magic links ---------------------------------------------------------------------

@pytest.mark.skipif(not os.path.isdir(f"/proc/{os.getpid()}/fd"), reason="needs Linux /proc")
@per_config
@per_slot
def test_row13_magic_links(tmp_path, config, slot):
    world = World(tmp_path)
    fd = os.open(world.far / "secret.txt", os.O_RDONLY | os.O_CLOEXEC)
    try:
        toolbox = Toolbox(config.factory(f"/proc/{os.getpid()}"))
        world.toolboxes.append(toolbox)
        finals = ["root", "cwd", f"fd/{fd}"]
        for path in ["root/etc/hostname", "root/", "cwd/x", f"fd/{fd}/..", *finals]:
            envelope = world.call(toolbox, slot.tool, slot.args(path))
            answer = slot.answer(envelope)
            where = f"{slot.id} {path!r} on {config.label}"
            if slot.tool == "file_info" and path in finals:
                expect(answer, OK, where)  # the link itself: its target is never said
                assert answer["kind"] == "symlink" and "target" not in answer, answer
            else:
                expect(answer, ("OUTSIDE_ROOT", "symlink"), where)
    finally:
        os.close(fd)
        world.close()


# -- row 14: invalid paths; row 17: the root removed ----------------------------------------

@per_config
@per_slot
def test_row14_invalid_paths(tmp_path, config, slot):
    run_rows(tmp_path, config, slot, INVALID, lambda s, p: ("INVALID_ARGUMENT", None))


@per_config
@per_slot
def test_row17_removed_root_is_internal(tmp_path, config, slot):
    for path in ("a.txt", "sub", "missing/x"):
        world = World(tmp_path / path.replace("/", "_"))
        try:
            toolbox = world.toolbox(config)
            for child in sorted(world.root.rglob("*"), reverse=True):
                child.unlink() if not child.is_dir() or child.is_symlink() else child.rmdir()
            world.root.rmdir()
            envelope = call_bounded(lambda: toolbox.call(slot.tool, slot.args(path)),
                                    what=slot.id)
            assert envelope == Refusal.internal().envelope(), (slot.id, path, envelope)
            assert not world.root.exists()
        finally:
            world.close()


# -- row 19: every fd closed ------------------------------------------------------------------

@pytest.mark.skipif(not os.path.isdir("/proc/self/fd"), reason="counts fds in /proc/self/fd")
@per_config
def test_row19_no_fd_leaks(tmp_path, config):
    def extra(world: World) -> None:
        outward_links(world)
        loops(world)
        specials(world)
        hard_link(world)

    world = World(tmp_path, extra=extra)
    try:
        name, mode = config.label.split("-")
        watch = CloexecWatch(backend_by_name(name))
        toolbox = Toolbox(Root(world.root, backend=watch, fast_path=mode == "openat2"))
        world.toolboxes.append(toolbox)
        paths = ("a.txt", "sub", "sub/../a.txt", "ldir/secret.txt", "labs", "loop", "c0", "fifo",
                 "sock", "hl", "missing/x.txt", "..", "a\x00b", "new/deep")
        before = open_fds()
        for slot in SLOTS:
            for path in paths:
                envelope = world.call(toolbox, slot.tool, slot.args(path))
                assert not fds_opened_since(before), f"{slot.id} {path!r}: an fd leaked"
                answer = slot.answer(envelope)
                assert answer["ok"] or answer["code"] != "INTERNAL", (slot.id, path, answer)
        assert watch.opened > len(paths)
    finally:
        world.close()
