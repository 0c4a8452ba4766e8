"""THREATS.md, row by row, through every tool that takes a path and every backend.

Each row test is parametrized over the backend configurations
(``os-openat2``, ``os-walk``, ``native-openat2``, ``native-walk`` as present)
and over every path-carrying argument of every tool (:data:`SLOTS`: ``path``
of read_file, write_file, edit_file, list_directory, glob, grep and
delete_file; ``source`` and ``destination`` of move_file).  Glob patterns and
grep's ``include`` are the arguments of rows 15 and 16.  Every variant of a
row runs in a fresh world (``helpers.world.World``) and every call is
checked for escape as THREATS.md defines it: no outside content, no host
path, nothing outside changed, no call blocking.

The mutating calls are built so that an escape would show: edit_file's
``oldText`` is the marker every outside file holds, write_file overwrites,
grep searches for the marker.  Row 9 (rename races) is ``test_tool_races.py``;
the faults paragraph is ``test_faults.py``.
"""

from __future__ import annotations

import fcntl
import gc
import os
import shutil
import socket
import stat
import tempfile
import unicodedata
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ..helpers import fds_opened_since, open_fds
from .helpers.world import (CONFIG_IDS, CONFIGS, EVIL, FAR, MARKER, World, assert_contract,
                            call_bounded, string_values)
from corral.contained import Root, backend_by_name
from corral.testing import TreeEntry, build_tree
from corral.testing.strategies import paths, trees
from corral.tools import Refusal, Toolbox
from .helpers.settings import PROFILE

WRITTEN = "written by the test\n"
PWNED = "PWNED"


# -- the slots: every path-carrying argument of every tool ------------------------------

@dataclass(frozen=True)
class Slot:
    tool: str
    field: str

    @property
    def id(self) -> str:
        return f"{self.tool}.{self.field}"

    @property
    def wants_dir(self) -> bool:
        return self.tool in ("list_directory", "glob", "grep")

    def args(self, path: str) -> dict[str, Any]:
        """Arguments that would reach the outside if ``path`` escaped: the
        edit's oldText and grep's pattern are the outside marker."""
        return {
            "read_file": {"path": path},
            "write_file": {"path": path, "content": WRITTEN, "overwrite": True},
            "edit_file": {"path": path, "oldText": MARKER, "newText": PWNED},
            "list_directory": {"path": path},
            "glob": {"pattern": "**/*", "path": path, "includeIgnored": True},
            "grep": {"pattern": "MARK", "path": path, "includeIgnored": True},
            "move_file": ({"source": path, "destination": "moved.txt"} if self.field == "source"
                          else {"source": "a.txt", "destination": path}),
            "delete_file": {"path": path},
        }[self.tool]

    def inside_args(self, path: str) -> dict[str, Any]:
        """Arguments for a call that must work on an inside ``path``."""
        args = self.args(path)
        if self.tool == "edit_file":
            args.update(oldText="inside", newText="edited")
        if self.tool == "grep":
            args["pattern"] = "inside"
        return args


SLOTS = [Slot("read_file", "path"), Slot("write_file", "path"), Slot("edit_file", "path"),
         Slot("list_directory", "path"), Slot("glob", "path"), Slot("grep", "path"),
         Slot("move_file", "source"), Slot("move_file", "destination"),
         Slot("delete_file", "path")]
SLOT_IDS = [slot.id for slot in SLOTS]

per_config = pytest.mark.parametrize("config", CONFIGS, ids=CONFIG_IDS)
per_slot = pytest.mark.parametrize("slot", SLOTS, ids=SLOT_IDS)

OK = ("ok", None)


def expect(envelope: dict[str, Any], want: tuple[str, str | None], where: str) -> None:
    """``want`` is ``OK`` or ``(code, details.kind)`` (kind ``None``: any)."""
    code, kind = want
    if code == "ok":
        assert envelope["ok"] is True, f"{where}: expected success, got {envelope}"
        return
    assert envelope["ok"] is False, f"{where}: expected {code}, got success {envelope}"
    assert envelope["code"] == code, f"{where}: expected {code}/{kind}, got {envelope}"
    if kind is not None:
        assert envelope["details"].get("kind") == kind, f"{where}: expected {kind}: {envelope}"


def run_variants(tmp_path: Path, config, slot: Slot, variants: list[str],
                 want: Callable[[Slot, str], tuple[str, str | None]],
                 extra: Callable[[World], None] | None = None,
                 after: Callable[[World, Slot, str, dict], None] | None = None) -> None:
    """Each variant path: the answer ``want(slot, path)``, and no escape
    (``World.call``).  A world is reused after a refusal, which must have
    changed nothing inside the root either; a success gets a fresh one."""
    world: World | None = None
    try:
        for i, raw in enumerate(variants):
            if world is None:
                world = World(tmp_path / f"v{i}", extra=extra)
                toolbox = world.toolbox(config)
                inside = world.inside()
            path = world.abs(raw)
            where = f"{slot.id} {raw!r} on {config.label}"
            envelope = world.call(toolbox, slot.tool, slot.args(path))
            expect(envelope, want(slot, raw), where)
            if after is not None:
                after(world, slot, raw, envelope)
            if envelope["ok"]:
                world.close()
                world = None
            else:
                assert world.inside() == inside, f"{where}: the refusal changed the root"
    finally:
        if world is not None:
            world.close()


def escape(_slot: Slot, _path: str, kind: str | None = None) -> tuple[str, str | None]:
    return ("OUTSIDE_ROOT", kind)


# Answers when the path's *final* component is a symlink (leading out,
# dangling, looping): tools that follow a final link refuse as the link
# resolves; write_file never follows a final link (it refuses every one,
# kind "symlink", as its catalogue pins); move_file and delete_file act on
# the link itself, inside the root, and never touch what it points at.
def final_link(refusal: tuple[str, str | None]) -> Callable[[Slot, str], tuple[str, str | None]]:
    def want(slot: Slot, _path: str) -> tuple[str, str | None]:
        if slot.tool == "write_file":
            return ("UNSUPPORTED", "symlink")
        if slot.tool == "delete_file" or slot.id == "move_file.source":
            return OK
        if slot.id == "move_file.destination":
            return ("ALREADY_EXISTS", "exists")
        return refusal
    return want


def link_itself_acted_on(world: World, slot: Slot, raw: str, envelope: dict) -> None:
    """After a move or delete of a final symlink: the link moved or went,
    as a link (its text unchanged); the outside is checked by World.call."""
    if not envelope["ok"]:
        return
    name = raw.rstrip("/")
    assert not os.path.lexists(world.root / name)
    if slot.tool == "move_file":
        assert os.path.islink(world.root / "moved.txt")


# -- row 1: '..' ------------------------------------------------------------------------

@per_config
@per_slot
def test_row01_dotdot_is_outside_root(tmp_path, config, slot):
    variants = ["..", "../", "a/../..", "a/../../x", "../x", "sub/../../a.txt", "a/./../../",
                "../ws/a.txt", "a/../../ws/sub"]
    run_variants(tmp_path, config, slot, variants, lambda s, p: escape(s, p, "dotdot"))


def _inside_effect(world: World, slot: Slot, envelope: dict[str, Any]) -> None:
    """What a successful inside call must have done, in the right place."""
    root = world.root
    if slot.tool == "read_file":
        assert "inside a" in envelope["content"]
    elif slot.tool == "write_file":
        assert (root / "a.txt").read_text() == WRITTEN
    elif slot.tool == "edit_file":
        assert (root / "a.txt").read_text() == "edited a\n"
    elif slot.tool == "list_directory":
        assert [e["name"] for e in envelope["entries"]] == ["b.txt"]
    elif slot.tool == "glob":
        assert [p.rsplit("/", 1)[-1] for p in envelope["paths"]] == ["b.txt"]
    elif slot.tool == "grep":
        assert [m["text"] for m in envelope["matches"]] == ["inside b"]
    elif slot.tool == "move_file":
        assert (root / "moved.txt").read_text() == "inside a\n"
        assert not (root / "a.txt").exists()
    elif slot.tool == "delete_file":
        assert not (root / "a.txt").exists()


def _inside_path(slot: Slot, prefix: str) -> str:
    if slot.wants_dir:
        return prefix + "sub"
    return prefix + ("moved.txt" if slot.id == "move_file.destination" else "a.txt")


@per_config
@per_slot
@pytest.mark.parametrize("prefix", ["a/../", "sub/../a/./../", "@BASE@/ws/", "@BASE@/ws/a/../"],
                         ids=["dotdot_inside", "dotdot_twice", "absolute_inside",
                              "absolute_dotdot_inside"])
def test_row01_02_inside_paths_work(tmp_path, config, slot, prefix):
    """'a/../b' inside the root works; an absolute path inside the root is
    accepted and answered root-relative (rows 1 and 2)."""
    world = World(tmp_path)
    try:
        path = world.abs(_inside_path(slot, prefix))
        envelope = world.call(world.toolbox(config), slot.tool, slot.inside_args(path))
        expect(envelope, OK, f"{slot.id} {path!r}")
        _inside_effect(world, slot, envelope)
        for value in string_values(envelope):
            assert not value.startswith("/"), f"not root-relative: {value!r} in {envelope}"
    finally:
        world.close()


# -- rows 2 and 3: absolute paths, '~', the prefix-sharing sibling ------------------------

@per_config
@per_slot
def test_row02_absolute_and_home_are_outside_root(tmp_path, config, slot):
    variants = [f"@BASE@/{FAR}/secret.txt", "@BASE@/secret.txt", "@BASE@", "@BASE@/", "//x",
                "//", "/", "/etc/passwd", "~", "~/x", "~/", f"@BASE@/ws/../{FAR}/secret.txt"]

    def want(_slot: Slot, path: str) -> tuple[str, str | None]:
        if path.startswith("~"):
            return ("OUTSIDE_ROOT", "home")
        if path.startswith("@BASE@/ws/"):  # inside by prefix, then '..' climbs out
            return ("OUTSIDE_ROOT", "dotdot")
        return ("OUTSIDE_ROOT", "absolute")

    run_variants(tmp_path, config, slot, variants, want)


@per_config
@per_slot
def test_row03_prefix_sibling_is_outside_root(tmp_path, config, slot):
    variants = [f"../{EVIL}/a.txt", f"../{EVIL}", f"../{EVIL}/sub/", f"../{EVIL}/sub/b.txt",
                f"@BASE@/{EVIL}/a.txt", f"@BASE@/{EVIL}", f"@BASE@/{EVIL}/", f"@BASE@/{EVIL}/sub"]

    def want(_slot: Slot, path: str) -> tuple[str, str | None]:
        return ("OUTSIDE_ROOT", "absolute" if path.startswith("@BASE@") else "dotdot")

    run_variants(tmp_path, config, slot, variants, want)


# -- rows 4, 6, 7, 8: symlinks that lead out ------------------------------------------------

def outward_links(world: World) -> None:
    world.link("labs", f"@BASE@/{FAR}/secret.txt")  # absolute, to a file
    world.link("ldir", f"@BASE@/{FAR}")  # absolute, to a directory
    world.link("lrel", f"../{FAR}/secret.txt")  # relative, climbing out
    world.link("lreldir", f"../{FAR}")
    world.link("lsib", f"../{EVIL}")  # to the prefix-sharing sibling
    world.link("chain1", "ldir")  # in-root links ending outside
    world.link("chain2", "chain1")
    world.link("chainf", "sub/../lrel")
    world.link("chaind", "a/../chain2/")
    world.link("dang", f"@BASE@/{FAR}/newfile")  # dangling, outside
    world.link("dangrel", f"../{FAR}/newdir")
    world.link("dangdir", f"../{FAR}/newdir2/")


@per_config
@per_slot
def test_row04_symlinks_through_to_outside(tmp_path, config, slot):
    """A link (absolute, relative, chained) as an intermediate component."""
    variants = ["ldir/secret.txt", "lreldir/secret.txt", "lsib/a.txt", "lsib/sub",
                "chain2/secret.txt", "chaind/dir", "ldir/dir", "chain1/dir/inner.txt"]
    run_variants(tmp_path, config, slot, variants, lambda s, p: escape(s, p, "symlink"),
                 extra=outward_links)


@per_config
@per_slot
def test_row04_symlinks_final_to_outside(tmp_path, config, slot):
    """A link as the final component: never followed out, target never echoed."""
    variants = ["labs", "lrel", "ldir", "lreldir", "lsib", "chain2", "chainf", "chaind"]
    run_variants(tmp_path, config, slot, variants, final_link(("OUTSIDE_ROOT", "symlink")),
                 extra=outward_links, after=link_itself_acted_on)


def loops(world: World) -> None:
    world.link("loop", "loop")  # self-loop
    world.link("p1", "p2")  # two-cycle
    world.link("p2", "p1")
    world.link("dl", "dl/x")
    for i in range(41):  # c0 -> c1 -> ... -> c40 -> a.txt: 41 links
        world.link(f"c{i}", f"c{i + 1}" if i < 40 else "a.txt")


@per_config
@per_slot
def test_row05_loops_are_typed_refusals(tmp_path, config, slot):
    """Loops and a 41-link chain: a typed refusal, fast (World.call bounds it).

    The tools that follow the path say UNSUPPORTED, kind symlink_loop.  The
    others judge the path by its parent or its shape first, and their typed
    refusal is what THREATS.md asks for (write_file: the parent "loop" is
    not a directory; move_file/delete_file: "loop/" is a symlink, not a
    directory)."""
    through = ["loop/x", "p1/x", "loop/", "c0/"]
    for i, path in enumerate(through):
        world = World(tmp_path / f"t{i}", extra=loops)
        try:
            envelope = world.call(world.toolbox(config), slot.tool, slot.args(path))
            where = f"{slot.id} {path!r} on {config.label}"
            if slot.tool in ("read_file", "edit_file", "list_directory", "glob", "grep"):
                expect(envelope, ("UNSUPPORTED", "symlink_loop"), where)
            else:
                assert envelope["ok"] is False and envelope["code"] in (
                    "UNSUPPORTED", "INVALID_ARGUMENT"), (where, envelope)
        finally:
            world.close()
    final = ["loop", "p1", "c0", "dl"]
    run_variants(tmp_path / "final", config, slot, final,
                 final_link(("UNSUPPORTED", "symlink_loop")), extra=loops,
                 after=link_itself_acted_on)


@per_config
def test_row05_forty_links_are_followed(tmp_path, config):
    """The limit is the kernel's: 40 links are followed (c1 -> ... -> a.txt)."""
    world = World(tmp_path, extra=loops)
    try:
        envelope = world.call(world.toolbox(config), "read_file", {"path": "c1"})
        assert envelope["ok"] is True and "inside a" in envelope["content"], envelope
    finally:
        world.close()


@per_config
@per_slot
def test_row06_trailing_slash_after_outward_link(tmp_path, config, slot):
    variants = ["ldir/", "ldir/.", "ldir//", "ldir/./", "lreldir/", "lreldir/.", "chain2/",
                "lsib//"]
    run_variants(tmp_path, config, slot, variants, lambda s, p: escape(s, p, "symlink"),
                 extra=outward_links)


@per_config
@per_slot
def test_row07_dangling_outward_links_create_nothing(tmp_path, config, slot):
    """Writing, creating or making directories through a dangling link that
    points outside: nothing is created there (World.call's snapshot)."""
    through = ["dang/x", "dangrel/x.txt", "dangrel/new/deep.txt", "dangdir/x.txt",
               "dangrel/"]
    run_variants(tmp_path, config, slot, through, lambda s, p: escape(s, p, "symlink"),
                 extra=outward_links)
    final = ["dang", "dangrel", "dangdir"]
    run_variants(tmp_path / "final", config, slot, final, final_link(("OUTSIDE_ROOT", "symlink")),
                 extra=outward_links, after=link_itself_acted_on)


@per_config
@per_slot
def test_row08_symlinked_parent_changes_nothing_outside(tmp_path, config, slot):
    """write, edit, move and mkdir (write_file's parents) through a parent
    directory that is a link to outside."""
    variants = ["ldir/secret.txt", "ldir/new.txt", "ldir/made/new.txt", "lreldir/dir/inner.txt",
                "lreldir/new/deeper/x.txt", "chain2/made/x.txt", "lsib/sub/b.txt"]
    run_variants(tmp_path, config, slot, variants, lambda s, p: escape(s, p, "symlink"),
                 extra=outward_links)


# -- row 10: the target swapped between authorization and action -------------------------

def _swap_rename_over(world: World, rel: str) -> None:
    os.rename(world.root / "other.txt", world.root / rel)


def _swap_link_out(world: World, rel: str) -> None:
    path = world.root / rel
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path)
    else:
        path.unlink()
    target = world.far / "secret.txt" if not rel.startswith("d") else world.far
    os.symlink(target, path)


def _swap_new_dir_link(world: World, rel: str) -> None:
    os.symlink(world.far, world.root / rel)


SWAPS = [
    # (tool, args, swapped path, swap)
    ("read_file", {"path": "a.txt"}, "a.txt", _swap_rename_over),
    ("read_file", {"path": "a.txt"}, "a.txt", _swap_link_out),
    ("edit_file", {"path": "a.txt", "oldText": "inside", "newText": PWNED}, "a.txt",
     _swap_rename_over),
    ("edit_file", {"path": "a.txt", "oldText": "inside", "newText": PWNED}, "a.txt",
     _swap_link_out),
    ("write_file", {"path": "a.txt", "content": WRITTEN, "overwrite": True}, "a.txt",
     _swap_rename_over),
    ("write_file", {"path": "a.txt", "content": WRITTEN, "overwrite": True}, "a.txt",
     _swap_link_out),
    ("delete_file", {"path": "a.txt"}, "a.txt", _swap_rename_over),
    ("delete_file", {"path": "a.txt"}, "a.txt", _swap_link_out),
    ("move_file", {"source": "a.txt", "destination": "z.txt"}, "a.txt", _swap_rename_over),
    ("move_file", {"source": "a.txt", "destination": "z.txt"}, "a.txt", _swap_link_out),
    ("grep", {"pattern": "MARK|inside", "path": "a.txt"}, "a.txt", _swap_rename_over),
    ("grep", {"pattern": "MARK|inside", "path": "a.txt"}, "a.txt", _swap_link_out),
    ("list_directory", {"path": "d"}, "d", _swap_link_out),
    ("glob", {"pattern": "**/*", "path": "d"}, "d", _swap_link_out),
    ("grep", {"pattern": "MARK|inside", "path": "d"}, "d", _swap_link_out),
    ("write_file", {"path": "d/new.txt", "content": WRITTEN}, "d", _swap_link_out),
    ("write_file", {"path": "d/t.txt", "content": WRITTEN, "overwrite": True}, "d",
     _swap_link_out),
    ("edit_file", {"path": "d/t.txt", "oldText": "inside", "newText": PWNED}, "d",
     _swap_link_out),
    ("move_file", {"source": "a.txt", "destination": "d/new.txt"}, "d", _swap_link_out),
    ("delete_file", {"path": "d/t.txt"}, "d", _swap_link_out),
    ("read_file", {"path": "d/t.txt"}, "d", _swap_link_out),
    ("write_file", {"path": "nd/x/f.txt", "content": WRITTEN}, "nd", _swap_new_dir_link),
    ("move_file", {"source": "a.txt", "destination": "nd/x/f.txt"}, "nd", _swap_new_dir_link),
]


def _swap_world(world: World) -> None:
    (world.root / "other.txt").write_text("other content\n")
    (world.root / "d").mkdir()
    (world.root / "d" / "t.txt").write_text("inside t\n")


@per_config
@pytest.mark.parametrize("case", SWAPS, ids=[f"{t}-{p}-{s.__name__[6:]}-{i}"
                                             for i, (t, _a, p, s) in enumerate(SWAPS)])
def test_row10_swap_during_authorization_fails_closed(tmp_path, config, case):
    """The host's authorize callback swaps the target (another file renamed
    over it, or a symlink to outside in its place): the call fails closed
    (STALE, or OUTSIDE_ROOT once the swapped path is resolved again), never
    acts on the swapped-in entry, never reads or writes outside."""
    tool, args, rel, swap = case
    world = World(tmp_path, extra=_swap_world)
    asked = []

    def authorize(request):
        if not asked:
            asked.append(request)
            swap(world, rel)
        return True

    try:
        envelope = world.call(world.toolbox(config, authorize=authorize), tool, args)
        assert asked, "authorize was never asked"
        assert envelope["ok"] is False and envelope["code"] in ("STALE", "OUTSIDE_ROOT"), envelope
        if swap is _swap_rename_over:  # the entry renamed over the target is untouched
            assert (world.root / rel).read_text() == "other content\n"
        if swap is _swap_link_out:  # the link put in place is still the link
            assert os.path.islink(world.root / rel)
        assert not (world.root / "z.txt").exists()
    finally:
        world.close()


# -- row 11: hard links to outside files ---------------------------------------------------

def hard_link(world: World) -> None:
    os.link(world.far / "secret.txt", world.root / "hl")


@per_config
@per_slot
def test_row11_hardlink_to_outside_file(tmp_path, config, slot):
    """Reads refused (UNSUPPORTED, kind hardlink); a write replaces the link
    and never writes through it; move and delete act on the link."""
    answers = {
        "read_file.path": ("UNSUPPORTED", "hardlink"),
        "edit_file.path": ("UNSUPPORTED", "hardlink"),
        "grep.path": ("UNSUPPORTED", "hardlink"),
        "write_file.path": OK,
        "list_directory.path": ("INVALID_ARGUMENT", "not_directory"),
        "glob.path": ("INVALID_ARGUMENT", "not_directory"),
        "move_file.source": OK,
        "move_file.destination": ("ALREADY_EXISTS", "exists"),
        "delete_file.path": OK,
    }

    def after(world: World, slot: Slot, _raw: str, envelope: dict) -> None:
        secret = world.far / "secret.txt"
        assert secret.read_text() == f"{MARKER} secret.txt\n"
        if slot.tool == "write_file":
            assert (world.root / "hl").read_text() == WRITTEN
            assert os.stat(secret).st_nlink == 1  # replaced, not written through

    run_variants(tmp_path, config, slot, ["hl"], lambda s, p: answers[s.id], extra=hard_link,
                 after=after)


@per_config
def test_row11_hardlinks_in_searches_and_allowed_edits(tmp_path, config):
    world = World(tmp_path, extra=hard_link)
    try:
        toolbox = world.toolbox(config)
        found = world.call(toolbox, "grep", {"pattern": "MARK", "includeIgnored": True})
        assert found["ok"] and found["matches"] == [] and found["skipped"]["hardlinks"] == 1
        # a host that allows hard links: the edit replaces the link, the
        # outside file keeps its content (its text may be shown: allowed)
        allowed = world.toolbox(config, allow_hardlinks=True)
        edited = world.call(allowed, "edit_file", {"path": "hl", "oldText": MARKER,
                                                   "newText": PWNED}, marker_ok=True)
        assert edited["ok"] is True, edited
        assert (world.root / "hl").read_text() == f"{PWNED} secret.txt\n"
        assert (world.far / "secret.txt").read_text() == f"{MARKER} secret.txt\n"
    finally:
        world.close()


# -- row 12: FIFO, socket, device -----------------------------------------------------------

def _bind_socket(path: Path) -> None:
    # AF_UNIX paths are limited to ~108 bytes: bind in a short directory, move it in
    short = tempfile.mkdtemp(prefix="cs", dir="/tmp")
    try:
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            sock.bind(os.path.join(short, "s"))
        finally:
            sock.close()
        os.rename(os.path.join(short, "s"), path)
    finally:
        shutil.rmtree(short)


def _can_mknod() -> bool:
    probe = tempfile.mkdtemp(prefix="corral-mknod-")
    try:
        os.mknod(os.path.join(probe, "n"), 0o600 | stat.S_IFCHR, os.makedev(1, 3))
        return True
    except OSError:
        return False
    finally:
        shutil.rmtree(probe)


SPECIALS = ["fifo", "sock"] + (["null"] if _can_mknod() else [])
SPECIAL_KIND = {"fifo": "fifo", "sock": "socket", "null": "char_device"}


def specials(world: World) -> None:
    os.mkfifo(world.root / "fifo")  # no writer: a blocking open would hang
    _bind_socket(world.root / "sock")
    if "null" in SPECIALS:
        os.mknod(world.root / "null", 0o666 | stat.S_IFCHR, os.makedev(1, 3))


@per_config
@per_slot
@pytest.mark.parametrize("special", ["fifo", "sock", "null"])
def test_row12_special_files_never_block(tmp_path, config, slot, special):
    if special not in SPECIALS:
        pytest.skip("this machine does not permit mknod (device nodes need CAP_MKNOD)")
    kind = SPECIAL_KIND[special]
    answers = {
        "read_file.path": ("UNSUPPORTED", kind), "edit_file.path": ("UNSUPPORTED", kind),
        "grep.path": ("UNSUPPORTED", kind), "write_file.path": ("UNSUPPORTED", kind),
        "list_directory.path": ("INVALID_ARGUMENT", "not_directory"),
        "glob.path": ("INVALID_ARGUMENT", "not_directory"),
        "move_file.source": OK,  # the entry is renamed, never opened
        "move_file.destination": ("ALREADY_EXISTS", "exists"),
        "delete_file.path": OK,
    }
    run_variants(tmp_path, config, slot, [special], lambda s, p: answers[s.id], extra=specials)


@per_config
def test_row12_searches_skip_and_count_special_files(tmp_path, config):
    world = World(tmp_path, extra=specials)
    try:
        toolbox = world.toolbox(config)
        n = len(SPECIALS)
        listed = world.call(toolbox, "glob", {"pattern": "**/*"})
        assert listed["skipped"]["special"] == n and not set(SPECIALS) & set(listed["paths"])
        grepped = world.call(toolbox, "grep", {"pattern": "inside"})
        assert grepped["skipped"]["special"] == n
        assert [m["path"] for m in grepped["matches"]] == ["a.txt", "sub/b.txt"]
        for special in SPECIALS:
            one = world.call(toolbox, "grep", {"pattern": "x", "include": special})
            assert one["ok"] and one["skipped"]["special"] == 1, one
        entries = world.call(toolbox, "list_directory", {"path": "."})["entries"]
        assert {e["name"]: e["kind"] for e in entries if e["name"] in SPECIALS} == \
            {s: "other" for s in SPECIALS}
    finally:
        world.close()


# -- row 13: magic links --------------------------------------------------------------------

@pytest.mark.skipif(not os.path.isdir(f"/proc/{os.getpid()}/fd"), reason="needs Linux /proc")
@per_config
@per_slot
def test_row13_magic_links_are_refused(tmp_path, config, slot):
    """A root that holds real magic links: ``/proc/<pid>`` (``root``, ``cwd``,
    ``exe``, ``fd/N``).  ``fd/N`` is an fd this test holds on an outside file:
    its link text is a host path, which must never be followed or echoed."""
    world = World(tmp_path)
    fd = os.open(world.far / "secret.txt", os.O_RDONLY | os.O_CLOEXEC)
    try:
        toolbox = Toolbox(config.factory(f"/proc/{os.getpid()}"))
        world.toolboxes.append(toolbox)
        through = ["root/etc/hostname", "root/", "cwd/x", f"fd/{fd}/..", "root/proc/self/root"]
        final = ["root", "cwd", f"fd/{fd}"]
        for path in through + final:
            args = slot.args(path)
            if slot.id == "move_file.destination":
                args["source"] = "comm"  # exists in /proc/<pid>
            envelope = world.call(toolbox, slot.tool, args)
            where = f"{slot.id} {path!r} on {config.label}"
            if path in through or slot.tool not in ("move_file", "delete_file", "write_file"):
                expect(envelope, ("OUTSIDE_ROOT", "symlink"), where)
            elif slot.tool == "write_file":
                expect(envelope, ("UNSUPPORTED", "symlink"), where)
            else:
                # procfs refuses renaming and unlinking its entries; the
                # refusal is typed and nothing was followed
                assert envelope["ok"] is False and envelope["code"] != "INTERNAL", (where,
                                                                                   envelope)
        assert os.path.samestat(os.fstat(fd), os.stat(world.far / "secret.txt"))
        glob = world.call(toolbox, "glob", {"pattern": "*", "path": "fd"})
        assert glob["ok"] and glob["paths"] == [] and glob["skipped"]["symlinks"] >= 1, glob
    finally:
        os.close(fd)
        world.close()


# -- row 14: invalid paths ------------------------------------------------------------------

INVALID = ["a\x00/../../far-q7/secret.txt", "a.txt\x00", "\x00", "x" * 256, "\u00e9" * 128,
           "sub/" + "y" * 256 + "/z", "a/" * 2500, "", "\udcff", "bad\udcffname.txt",
           "sub/\udc80"]


@per_config
@per_slot
def test_row14_invalid_paths_are_invalid_argument(tmp_path, config, slot):
    """Never INTERNAL, never cut at the NUL (which would name a.txt or a)."""
    run_variants(tmp_path, config, slot, INVALID, lambda s, p: ("INVALID_ARGUMENT", None),
                 after=lambda w, s, p, e: _untouched(w))


def _untouched(world: World) -> None:
    assert (world.root / "a.txt").read_text() == "inside a\n"
    assert sorted(os.listdir(world.root)) == ["a", "a.txt", "sub"]


@per_config
def test_row14_invalid_patterns_are_invalid_argument(tmp_path, config):
    world = World(tmp_path)
    try:
        toolbox = world.toolbox(config)
        for tool, args in [("glob", {"pattern": "a\x00/../../*"}), ("glob", {"pattern": "\udcff*"}),
                           ("grep", {"pattern": "x", "include": "a\x00*"}),
                           ("grep", {"pattern": "x", "include": "\udcff"})]:
            envelope = world.call(toolbox, tool, args)
            expect(envelope, ("INVALID_ARGUMENT", None), f"{tool} {args!r}")
    finally:
        world.close()


# -- rows 15 and 16: patterns and searches --------------------------------------------------

PATTERNS = ["../*", "../**", "**/../..", "**/../../*", f"../{EVIL}/*", "*/../../*", "a/../../*",
            "{..,a}/*", "{a,../" + FAR + "}/*", f"@BASE@/{FAR}/*", f"@BASE@/{EVIL}/*",
            f"@BASE@/{EVIL}", "@BASE@/*", "/etc/*", "/*", "//*", "~/*", "~", "[.][.]/*",
            "\\.\\./*", f"@BASE@/ws/../{FAR}/*", "l*/*", "**/secret.txt", "ldir/**",
            "*/dir/*"]


def _assert_results_inside(world: World, envelope: dict[str, Any], where: str) -> None:
    """Every path a search returned is an entry inside the root, reached
    without a link (a listed link is one that leads to a file inside)."""
    if not envelope["ok"]:
        assert envelope["code"] != "INTERNAL", (where, envelope)
        return
    found = envelope.get("paths", []) + [m["path"] for m in envelope.get("matches", [])]
    for rel in found:
        rel = rel.rstrip("/")
        assert not rel.startswith("/") and ".." not in rel.split("/"), (where, rel)
        full = world.root / rel
        assert os.path.lexists(full), (where, rel)
        real = os.path.realpath(full)
        assert real == str(world.root) or real.startswith(str(world.root) + os.sep), (where, rel)


@per_config
def test_row15_glob_and_include_patterns_match_nothing_outside(tmp_path, config):
    world = World(tmp_path, extra=outward_links)
    try:
        toolbox = world.toolbox(config)
        for raw in PATTERNS:
            pattern = world.abs(raw)
            for tool, args in [("glob", {"pattern": pattern}),
                               ("glob", {"pattern": pattern, "includeIgnored": True}),
                               ("glob", {"pattern": pattern, "path": "sub"}),
                               ("grep", {"pattern": "MARK|inside", "include": pattern}),
                               ("grep", {"pattern": "MARK|inside", "include": pattern,
                                         "includeIgnored": True})]:
                envelope = world.call(toolbox, tool, args)
                _assert_results_inside(world, envelope, f"{tool} {args!r}")
                if ".." in raw.replace("[.][.]", "").replace("\\.\\.", "") and \
                        not raw.startswith("@BASE@"):
                    # documented: '..' in a pattern is refused outright
                    expect(envelope, ("INVALID_ARGUMENT", "dotdot"), f"{tool} {args!r}")
        inside = world.call(toolbox, "glob", {"pattern": world.abs("@BASE@/ws/**/*.txt")})
        assert inside["ok"] and inside["paths"] == ["a.txt", "sub/b.txt"], inside
        outside_abs = world.call(toolbox, "glob", {"pattern": world.abs(f"@BASE@/{FAR}/*")})
        expect(outside_abs, ("OUTSIDE_ROOT", "absolute"), "glob absolute outside")
    finally:
        world.close()


@per_config
def test_row16_searches_never_follow_links_out(tmp_path, config):
    world = World(tmp_path, extra=outward_links)
    try:
        toolbox = world.toolbox(config)
        for args in [{"pattern": "**/*"}, {"pattern": "**"}, {"pattern": "**/*", "path": "sub"},
                     {"pattern": "**/inner.txt"}, {"pattern": "*/secret.txt"},
                     {"pattern": "**/", "includeIgnored": True}, {"pattern": "ldir/**"},
                     {"pattern": "chain*/**/*"}]:
            envelope = world.call(toolbox, "glob", args)
            assert envelope["ok"], envelope
            _assert_results_inside(world, envelope, f"glob {args!r}")
            linked = ("ldir", "lreldir", "lsib", "chain1", "chain2", "chaind")
            assert not any(p.split("/")[0] in linked for p in envelope["paths"]), envelope
        everything = world.call(toolbox, "glob", {"pattern": "**/*"})
        assert everything["paths"] == ["a.txt", "sub/b.txt"], everything
        assert everything["skipped"]["symlinks"] == 12, everything  # every link, none followed
        for args in [{"pattern": "MARK"}, {"pattern": "MARK", "includeIgnored": True},
                     {"pattern": "MARK", "include": "*.txt"},
                     {"pattern": "mark", "caseInsensitive": True, "context": 3},
                     {"pattern": "MARK", "outputMode": "files"},
                     {"pattern": "MARK", "outputMode": "counts"}]:
            envelope = world.call(toolbox, "grep", args)
            assert envelope["ok"] and envelope[envelope["outputMode"]] == [], envelope
            if "include" not in args:  # the links' names are not *.txt: filtered first
                assert envelope["skipped"]["symlinks"] == 12, envelope
    finally:
        world.close()


# -- row 17: the root removed or renamed ---------------------------------------------------

CALLS_ON_ROOT = [
    ("read_file", {"path": "a.txt"}), ("read_file", {"path": "missing.txt"}),
    ("write_file", {"path": "new.txt", "content": "x"}),
    ("write_file", {"path": "made/new.txt", "content": "x"}),
    ("edit_file", {"path": "a.txt", "oldText": "inside", "newText": "x"}),
    ("list_directory", {"path": "."}), ("list_directory", {"path": "sub"}),
    ("glob", {"pattern": "**/*"}), ("glob", {"pattern": "*", "path": "sub"}),
    ("grep", {"pattern": "inside"}), ("grep", {"pattern": "inside", "path": "a.txt"}),
    ("move_file", {"source": "a.txt", "destination": "b.txt"}),
    ("delete_file", {"path": "a.txt"}),
]


@per_config
@pytest.mark.parametrize("call", CALLS_ON_ROOT, ids=[f"{t}-{i}" for i, (t, _) in
                                                      enumerate(CALLS_ON_ROOT)])
def test_row17_removed_root_is_internal(tmp_path, config, call):
    """The first call after the root was removed (a fresh Toolbox, so no
    earlier call has noticed): INTERNAL, saying nothing of the host; nothing
    is re-created at the old path."""
    tool, args = call
    world = World(tmp_path)
    try:
        toolbox = world.toolbox(config)
        shutil.rmtree(world.root)
        envelope = call_bounded(lambda: toolbox.call(tool, args), what=tool)
        assert envelope == Refusal.internal().envelope(), envelope
        world.check(envelope, args, where=tool)
        assert not world.root.exists()
    finally:
        world.close()


@per_config
def test_row17_renamed_root_keeps_serving_its_directory(tmp_path, config):
    """Decision: a Root *is* its directory fd.  Renamed, it keeps serving
    the same directory under its new name; a directory created at the old
    path is never read or written.  (An absolute path a model sends with the
    old prefix is recognised as "inside" and resolved beneath the fd, never
    at the path.)"""
    world = World(tmp_path)
    try:
        toolbox = world.toolbox(config)
        moved = world.base / "ws-moved"
        os.rename(world.root, moved)
        world.root.mkdir()
        planted = "PLANTED-AT-OLD-PATH-31c8"
        (world.root / "planted.txt").write_text(planted + "\n")
        (world.root / "a.txt").write_text(planted + " a\n")
        calls = [("read_file", {"path": "a.txt"}), ("read_file", {"path": "planted.txt"}),
                 ("read_file", {"path": str(world.root / "a.txt")}),
                 ("list_directory", {"path": "."}), ("glob", {"pattern": "**/*"}),
                 ("grep", {"pattern": "PLANTED|inside"}),
                 ("write_file", {"path": "w.txt", "content": "x"}),
                 ("edit_file", {"path": "sub/b.txt", "oldText": "inside", "newText": "edited"}),
                 ("move_file", {"source": "w.txt", "destination": "sub/w.txt"}),
                 ("delete_file", {"path": "sub/w.txt"})]
        for tool, args in calls:
            envelope = call_bounded(lambda: toolbox.call(tool, args), what=tool)
            text = assert_contract(envelope)
            assert planted not in text and MARKER not in text, (tool, envelope)
            if tool == "read_file" and args["path"] != "planted.txt":
                assert envelope["ok"] and "inside a" in envelope["content"], envelope
            elif tool == "read_file":
                assert envelope["code"] == "NOT_FOUND", envelope
            else:
                assert envelope["ok"], (tool, envelope)
        assert sorted(os.listdir(world.root)) == ["a.txt", "planted.txt"]
        assert (world.root / "a.txt").read_text() == planted + " a\n"
        assert (moved / "sub" / "b.txt").read_text() == "edited b\n"
        assert not (moved / "w.txt").exists() and not (moved / "sub" / "w.txt").exists()
        assert (world.far / "secret.txt").read_text() == f"{MARKER} secret.txt\n"
    finally:
        world.close()


# -- row 18: no security decision on a name string ------------------------------------------

DENY_SECRET = "DENIED-CONTENT-4e1f"
NFC = unicodedata.normalize("NFC", "caf\u00e9")
NFD = unicodedata.normalize("NFD", "caf\u00e9")


def deny_tree(world: World) -> None:
    (world.root / ".env").write_text(f"TOKEN={DENY_SECRET}\n")
    (world.root / ".git").mkdir()
    (world.root / ".git" / "config").write_text(f"[core] {DENY_SECRET}\n")
    (world.root / NFC).write_text(f"{DENY_SECRET} nfc\n")
    world.link("innocent", ".env")
    world.link("gitlink", ".git")
    world.link("nfdlink", NFD)  # dangling on Linux (NFD is another name); denied anyway


@per_config
def test_row18_deny_rules_hold_in_any_spelling(tmp_path, config):
    """Deny rules match folded names (case, NFC/NFD) and where a path really
    leads (symlinks followed inside): spelling and links cannot get round them."""
    world = World(tmp_path, extra=deny_tree)
    try:
        toolbox = world.toolbox(config, deny=[".env", ".git/**", NFD])
        refused = [
            ("read_file", {"path": ".env"}), ("read_file", {"path": ".ENV"}),
            ("read_file", {"path": ".Env"}), ("read_file", {"path": "innocent"}),
            ("read_file", {"path": ".git/config"}), ("read_file", {"path": ".GIT/config"}),
            ("read_file", {"path": "gitlink/config"}), ("read_file", {"path": NFC}),
            ("read_file", {"path": NFD}), ("read_file", {"path": NFC.upper()}),
            ("read_file", {"path": "sub/../.env"}), ("read_file", {"path": "./.env/"}),
            ("write_file", {"path": ".ENV", "content": "x", "overwrite": True}),
            ("write_file", {"path": ".git/hooks/pre-commit", "content": "x"}),
            ("edit_file", {"path": "innocent", "oldText": "TOKEN", "newText": "x"}),
            ("edit_file", {"path": NFD, "oldText": DENY_SECRET, "newText": "x"}),
            ("move_file", {"source": ".env", "destination": "public.txt"}),
            ("move_file", {"source": "a.txt", "destination": ".ENV"}),
            ("move_file", {"source": "a.txt", "destination": ".Git/config"}),
            ("delete_file", {"path": ".EnV"}), ("delete_file", {"path": ".git/config"}),
            ("list_directory", {"path": ".GIT"}), ("list_directory", {"path": "gitlink"}),
            ("glob", {"pattern": "*", "path": ".git"}),
            ("grep", {"pattern": "core", "path": ".git/config"}),
            ("grep", {"pattern": "TOKEN", "path": "innocent"}),
        ]
        for tool, args in refused:
            envelope = world.call(toolbox, tool, args)
            expect(envelope, ("DENIED", "deny_rule"), f"{tool} {args!r}")
        for tool, args in [("grep", {"pattern": "DENIED.CONTENT", "includeIgnored": True}),
                           ("grep", {"pattern": "TOKEN|core", "includeIgnored": True,
                                     "caseInsensitive": True}),
                           ("glob", {"pattern": "**/*", "includeIgnored": True}),
                           ("list_directory", {"path": "."})]:
            envelope = world.call(toolbox, tool, args)
            text = assert_contract(envelope)
            assert envelope["ok"] and DENY_SECRET not in text, envelope
            assert ".env" not in string_values(envelope.get("paths", [])), envelope
        assert (world.root / ".env").read_text() == f"TOKEN={DENY_SECRET}\n"
        assert sorted(os.listdir(world.root / ".git")) == ["config"]
    finally:
        world.close()


# -- row 19: descriptors --------------------------------------------------------------------

class CloexecWatch:
    """A backend wrapper: every fd the core gets from its backend must carry
    FD_CLOEXEC when it is handed over; it counts them."""

    def __init__(self, inner) -> None:
        self._inner = inner
        self.opened = 0

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)

    def _seen(self, fd: int) -> int:
        self.opened += 1
        flags = fcntl.fcntl(fd, fcntl.F_GETFD)
        assert flags & fcntl.FD_CLOEXEC, f"fd {fd} from the backend lacks FD_CLOEXEC"
        return fd

    def open_at(self, *args: Any, **kwargs: Any) -> int:
        return self._seen(self._inner.open_at(*args, **kwargs))

    def openat2(self, *args: Any, **kwargs: Any) -> int:
        return self._seen(self._inner.openat2(*args, **kwargs))

    def create_directory_at(self, *args: Any, **kwargs: Any) -> int:
        return self._seen(self._inner.create_directory_at(*args, **kwargs))


@pytest.mark.skipif(not os.path.isdir("/proc/self/fd"), reason="counts fds in /proc/self/fd")
@per_config
def test_row19_every_fd_cloexec_and_none_leaks(tmp_path, config):
    """Every call, refused or not: each fd the core opened had FD_CLOEXEC,
    and it left none open."""
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
        calls = [(slot.tool, slot.args(path)) for slot in SLOTS
                 for path in ("a.txt", "sub", "sub/../a.txt", "ldir/secret.txt", "labs", "loop",
                              "c0", "fifo", "sock", "hl", "missing/x.txt", "..", "a\x00b")]
        calls += [("glob", {"pattern": "**/*"}), ("grep", {"pattern": "inside", "context": 2}),
                  ("write_file", {"path": "new/deep/f.txt", "content": "x"}),
                  ("edit_file", {"path": "sub/b.txt", "oldText": "inside", "newText": "in"})]
        # Toolboxes earlier tests dropped close their lock files when collected:
        # collected now, and not while the fds are counted
        gc.collect()
        gc.disable()
        try:
            before = open_fds()
            for tool, args in calls:
                envelope = world.call(toolbox, tool, args)
                left = fds_opened_since(before)
                assert not left, f"{tool} {args!r}: fds left open {sorted(left)}"
                assert envelope["ok"] or envelope["code"] != "INTERNAL", (tool, args, envelope)
        finally:
            gc.enable()
        assert watch.opened > len(calls)  # the wrapper really saw the core's opens
    finally:
        world.close()


# -- row 20: mode bits ----------------------------------------------------------------------

@per_config
def test_row20_no_setuid_setgid_on_create_or_replace(tmp_path, config):
    world = World(tmp_path)
    try:
        toolbox = world.toolbox(config)
        suid = world.root / "tool.sh"
        suid.write_text("echo old\n")
        os.chmod(suid, 0o6755)
        assert world.call(toolbox, "write_file", {"path": "tool.sh", "content": "echo w\n",
                                                  "overwrite": True})["ok"]
        assert stat.S_IMODE(os.stat(suid).st_mode) == 0o755  # bits kept, setuid/setgid masked
        os.chmod(suid, 0o7755)
        assert world.call(toolbox, "edit_file", {"path": "tool.sh", "oldText": "w",
                                                 "newText": "e"})["ok"]
        assert stat.S_IMODE(os.stat(suid).st_mode) == 0o755
        created = world.call(toolbox, "write_file", {"path": "n/m/new.txt", "content": "x"})
        assert created["createdDirectories"] == ["n", "n/m"]
        for rel in ("n", "n/m", "n/m/new.txt"):
            mode = stat.S_IMODE(os.stat(world.root / rel).st_mode)
            assert mode & 0o7000 == 0 and mode <= 0o777, (rel, oct(mode))
        moved = world.call(toolbox, "move_file", {"source": "tool.sh", "destination": "x/t.sh"})
        assert moved["ok"] and stat.S_IMODE(os.stat(world.root / "x").st_mode) & 0o7000 == 0
    finally:
        world.close()


# -- every row at once: generated trees and paths --------------------------------------------

POOL = ("a", "b", "l", "f", "sub", "A")
FUZZ_PREFIXES = ("@BASE@/ws/", f"@BASE@/{EVIL}/", f"@BASE@/{FAR}/")
FUZZ_TARGETS = (f"@BASE@/{FAR}", f"@BASE@/{FAR}/secret.txt", f"@BASE@/{EVIL}", "@BASE@/ws")
FUZZ_TAILS = (FAR, f"{FAR}/secret.txt", f"{EVIL}/a.txt", "ws", "ws/a.txt", "secret.txt")


@settings(PROFILE)
@given(config=st.sampled_from(CONFIGS), slot=st.sampled_from(SLOTS),
       tree=trees(POOL, absolute=FUZZ_TARGETS, climb_tails=FUZZ_TAILS),
       path=paths(POOL, absolute_prefixes=FUZZ_PREFIXES))
def test_generated_trees_and_paths_never_escape(config, slot, tree, path):
    """Hypothesis (corral.testing.strategies): a hostile generated tree in the
    root, a generated path through one tool argument.  Whatever the answer,
    nothing escapes, nothing blocks, and the answer is never INTERNAL (the
    root is alive: every cause has a case)."""
    base = tempfile.mkdtemp(prefix="corral-tools-fuzz-")
    try:
        def extra(world: World) -> None:
            build_tree(world.root, [TreeEntry(e.kind, e.path, e.target) for e in tree],
                       tokens={"@BASE@": str(world.base)})

        world = World(Path(base), extra=extra)
        try:
            envelope = world.call(world.toolbox(config), slot.tool, slot.args(world.abs(path)))
            assert envelope["ok"] or envelope["code"] != "INTERNAL", (slot.id, path, envelope)
        finally:
            world.close()
    finally:
        shutil.rmtree(base, ignore_errors=True)
