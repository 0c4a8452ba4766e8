"""``Handle`` and ``Target``, the resolved location handed to callers (so
they judge where resolution went, never the spelling).

The table (test_root_table.py, ops ``open_handle``, ``target`` and
``target_follow``) pins their canonical paths on every case against plain
``os``.  Here: what only they do (a Target's plan and its act, staleness,
``expect``, the two ends of a rename, a Handle's reads), and a race: the
canonical path of a fast-path open (``openat2`` without following links,
the path taken from the spelling) while directories are renamed under it.
"""

from __future__ import annotations

import errno
import hashlib
import os
import subprocess
import sys

import pytest

from corral.contained import EscapeError, StaleError

from .helpers.trees import build, fingerprint, outside_part

RACE_ITERATIONS = int(os.environ.get("CORRAL_RACE_ITERATIONS", "3000"))


# -- Target: the plan is what make_parents does ------------------------------------

PLANS = [
    # (fs, path, path, parent, creates, passed)
    ([".git/hooks/"], "nx/../.git/hooks/x", ".git/hooks/x", ".git/hooks", (), ("nx",)),
    ([".git/"], "nx/../.git/hooks/x", ".git/hooks/x", ".git/hooks", (".git/hooks",), ("nx",)),
    (["a/"], "a/n1/n2/../n3/f", "a/n1/n3/f", "a/n1/n3", ("a/n1", "a/n1/n3"), ("a/n1/n2",)),
    (["d/", "l -> d"], "l/new/x", "d/new/x", "d/new", ("d/new",), ("l",)),
    (["d/", "d/up -> .."], "d/up/n/x", "n/x", "n", ("n",), ("d/up", "d")),
    ([], "n1/n2/f", "n1/n2/f", "n1/n2", ("n1", "n1/n2"), ()),
    (["a/b/"], "a/b/../../f", "f", ".", (), ("a/b", "a")),
    ([], "new", "new", ".", (), ()),
]


@pytest.mark.parametrize("fs,path,where,parent,creates,passed", PLANS,
                         ids=[p[1] + " " + ",".join(p[0]) for p in PLANS])
def test_target_plan_is_what_make_parents_makes(fs, path, where, parent, creates, passed,
                                                make_root, scratch):
    tree = build(scratch / "t", fs)
    root = make_root(tree.ws)
    before = fingerprint(tree)
    with root.target(path, create_parents=True) as target:
        assert (target.path, target.parent, target.creates, target.passed) == \
            (where, parent, creates, passed)
        assert target.name == where.rsplit("/", 1)[-1]
        assert fingerprint(tree) == before, "planning created something"
        assert target.lstat() is None
        assert target.make_parents() == list(creates)
        assert target.make_parents() == []
        target.write_bytes(b"planted")
    assert (tree.ws / where).read_bytes() == b"planted"
    made = {k for k in fingerprint(tree) if k not in before}
    assert made == {f"ws/{d}" for d in creates} | {f"ws/{where}"}, "made more than planned"


def test_target_never_creates_through_a_link_or_out(make_root, scratch):
    tree = build(scratch / "t", ["dl -> missing", "out -> $OUT"])
    root = make_root(tree.ws)
    with pytest.raises(FileNotFoundError) as info:
        root.target("dl/x", create_parents=True)
    assert info.value.filename == "dl/x" and info.value.component == "missing"
    for path in ("nx/../../x", "out/new/x", "nx/../out/x"):
        with pytest.raises(EscapeError):
            root.target(path, create_parents=True)
    with pytest.raises(FileNotFoundError):
        root.target("n1/x")  # without create_parents a missing parent is ENOENT
    assert sorted(os.listdir(tree.ws)) == ["dl", "out"]


def test_make_parents_refuses_what_the_plan_did_not_expect(make_root, scratch):
    tree = build(scratch / "t", [])
    root = make_root(tree.ws)
    before = outside_part(fingerprint(tree))
    with root.target("n1/n2/f", create_parents=True) as target:
        os.symlink(tree.out, tree.ws / "n1")  # planted between plan and act
        with pytest.raises(StaleError) as info:
            target.make_parents()
        assert info.value.component == "n1" and info.value.errno == errno.EAGAIN
        with pytest.raises(FileNotFoundError):
            target.write_bytes(b"x")  # the parent was never made
    assert outside_part(fingerprint(tree)) == before
    os.unlink(tree.ws / "n1")
    with root.target("n1/n2/f", create_parents=True) as target:
        os.mkdir(tree.ws / "n1")  # someone made it, as a directory: used, not listed
        assert target.make_parents() == ["n1/n2"]
        target.write_bytes(b"x")
    assert (tree.ws / "n1/n2/f").read_bytes() == b"x"


def test_target_acts_on_the_directory_it_resolved(make_root, scratch):
    tree = build(scratch / "t", ["a/f"])
    root = make_root(tree.ws)
    with root.target("a/f") as target:
        os.rename(tree.ws / "a", tree.ws / "moved")
        os.symlink(tree.out, tree.ws / "a")  # the old name now leads out
        target.write_bytes(b"new")
    assert (tree.ws / "moved/f").read_bytes() == b"new"
    assert (tree.out / "f").exists() is False


def test_target_write_expect_and_exclusive(make_root, scratch):
    tree = build(scratch / "t", ["f", "g"])
    root = make_root(tree.ws)
    with root.target("f") as target:
        info = target.lstat()
        assert info is not None
        os.rename(tree.ws / "g", tree.ws / "f")  # another file now has the name
        with pytest.raises(StaleError) as exc:
            target.write_bytes(b"x", expect=(info.st_dev, info.st_ino))
        assert exc.value.filename == "f"
        assert (tree.ws / "f").read_bytes() == b"content of g"
        now = target.lstat()
        assert now is not None
        target.write_bytes(b"x", expect=(now.st_dev, now.st_ino))
        with pytest.raises(FileExistsError):
            target.write_bytes(b"y", exclusive=True)
    assert (tree.ws / "f").read_bytes() == b"x"
    assert [n for n in os.listdir(tree.ws) if n.endswith(".corral-tmp")] == []


def test_target_follow_final_and_not(make_root, scratch):
    tree = build(scratch / "t", ["d/", "d/f", "l -> d/f", "dl -> d/new", "up -> d/.."])
    root = make_root(tree.ws)
    with root.target("l") as target:
        assert (target.path, target.passed) == ("l", ())
        target.write_bytes(b"link replaced")
    assert not os.path.islink(tree.ws / "l")
    os.unlink(tree.ws / "l")
    os.symlink("d/f", tree.ws / "l")
    with root.target("l", follow_final=True) as target:
        assert (target.path, target.parent, target.name, target.passed) == ("d/f", "d", "f",
                                                                           ("l",))
        target.write_bytes(b"through")
    assert (tree.ws / "d/f").read_bytes() == b"through" and os.path.islink(tree.ws / "l")
    with root.target("dl", follow_final=True) as target:
        assert target.path == "d/new" and target.lstat() is None
    with root.target("up", follow_final=True) as target:  # ends at a directory
        assert (target.path, target.name) == (".", None)
        with pytest.raises(IsADirectoryError):
            target.write_bytes(b"x")
        with pytest.raises(FileExistsError):
            target.mkdir()


def test_target_rename_both_ends(make_root, scratch):
    tree = build(scratch / "t", ["a", "b", "d/", "e/"])
    root = make_root(tree.ws)
    with root.target("a") as src, root.target("b") as dst:
        with pytest.raises(FileExistsError):
            src.rename(dst)  # replace=False by default
        src.rename(dst, exchange=True)
    assert (tree.ws / "a").read_bytes() == b"content of b"
    with root.target("d") as src, root.target("a/") as dst:
        with pytest.raises(NotADirectoryError) as info:
            src.rename(dst, exchange=True)  # "a/" must be a directory
        assert info.value.filename == "a/"
    with root.target("d") as src, root.target("e/") as dst:
        src.rename(dst, exchange=True)
    with root.target("a") as src, root.target("n/x", create_parents=True) as dst:
        dst.make_parents()
        src.rename(dst)
    assert (tree.ws / "n/x").read_bytes() == b"content of b"


def test_root_rename_exchange_with_a_slash_needs_directories(make_root, scratch):
    tree = build(scratch / "t", ["f", "g", "d/", "e/", "l -> d"])
    root = make_root(tree.ws)
    before = fingerprint(tree)
    # (the kernel allows exchange("f", "d/"): only the end with the "/" must be one)
    for src, dst in (("d", "f/"), ("f/", "g"), ("d", "l/"), ("d", "missing/")):
        with pytest.raises(OSError) as info:
            root.rename(src, dst, exchange=True)
        assert info.value.errno in (errno.ENOTDIR, errno.ENOENT), (src, dst, info.value)
        assert info.value.filename == (src if src.endswith("/") else dst), (src, dst)
    assert fingerprint(tree) == before
    root.rename("d", "e/", exchange=True)
    assert (tree.ws / "d").is_dir() and (tree.ws / "e").is_dir()


def test_o_path_opens_take_the_fast_path(make_root, scratch):
    tree = build(scratch / "t", ["d/", "d/f", "l -> d/f"])
    root = make_root(tree.ws)
    walked = root.stats["walk_fallbacks"]
    for path, flags in (("d/f", os.O_PATH), ("l", os.O_PATH | os.O_NOFOLLOW),
                        ("d/", os.O_PATH | os.O_DIRECTORY), ("l", os.O_PATH)):
        os.close(root.open(path, flags))
    assert root.stats["walk_fallbacks"] == walked
    fd = root.open("l", os.O_PATH | os.O_NOFOLLOW)
    try:
        assert os.path.stat.S_ISLNK(os.fstat(fd).st_mode)
    finally:
        os.close(fd)


def test_closed_target_and_handle_name_the_path(make_root, scratch):
    tree = build(scratch / "t", ["d/", "d/f"])
    root = make_root(tree.ws)
    target = root.target("d/f")
    target.close()
    target.close()
    with pytest.raises(OSError) as info:
        target.remove()
    assert info.value.errno == errno.EBADF and info.value.filename == "d/f"
    handle = root.open_handle("d/./f")
    handle.close()
    handle.close()
    assert handle.fd == -1
    with pytest.raises(OSError) as info:
        handle.read()
    assert info.value.errno == errno.EBADF and info.value.filename == "d/f"


def test_closed_target_neither_opens_nor_writes(make_root, scratch):
    tree = build(scratch / "t", ["d/", "d/f"])
    root = make_root(tree.ws)
    with root.target("d/f") as target:
        opened = target.open_existing()
        assert opened is not None
        opened.handle.close()
        with pytest.raises(OSError) as info:  # the file it would carry metadata from is closed
            target.write_bytes(b"new", replacing=opened)
        assert info.value.errno == errno.EBADF
        target.close()
        for act in (target.open_existing, lambda: target.write_bytes(b"new")):
            with pytest.raises(OSError) as info:
                act()
            assert info.value.errno == errno.EBADF and info.value.filename == "d/f"
    assert (tree.ws / "d/f").read_bytes() == b"content of d/f"


def _is_open(fd: int) -> bool:
    try:
        os.fstat(fd)
    except OSError as exc:
        assert exc.errno == errno.EBADF
        return False
    return True


def test_dropped_target_and_handle_close_their_fds_once(make_root, scratch):
    """A Target or Handle dropped open closes its fd when collected; one
    closed already closes nothing then (its old number may be another
    file's by now)."""
    tree = build(scratch / "t", ["d/", "d/f"])
    root = make_root(tree.ws)
    target = root.target("d/f")
    opened = target.open_existing()
    assert opened is not None
    fds = [target.held_fd, opened.handle.fd]
    assert all(_is_open(fd) for fd in fds)
    del target, opened
    assert not any(_is_open(fd) for fd in fds)
    for make in (lambda: root.target("d/f"), lambda: root.open_handle("d/f")):
        made = make()
        made.close()
        reused = os.open(tree.ws / "d/f", os.O_RDONLY)
        try:
            del made
            assert _is_open(reused)
        finally:
            os.close(reused)


# -- Handle -------------------------------------------------------------------------

def test_handle_reads_and_lists(make_root, scratch):
    tree = build(scratch / "t", ["d/", "d/e/", "d/f", "ld -> d", "d/l -> f"])
    big = os.urandom(3 << 20)
    (tree.ws / "big").write_bytes(big)
    root = make_root(tree.ws)
    with root.open_handle("ld/../big") as handle:
        assert handle.path == "big"
        assert handle.pread(5, 10) == big[10:15]
        assert handle.read(7) == big[:7]  # pread did not move the offset
        assert handle.read() == big[7:]
        assert handle.read() == b""
        assert handle.sha256() == hashlib.sha256(big).hexdigest()
        assert handle.stat().st_size == len(big)
    with root.open_handle("ld/") as handle:
        assert handle.path == "d"
        listed = {e.name: (e.path, e.kind) for e in handle.scandir(stat=True)}
        assert listed == {"e": ("d/e", "dir"), "f": ("d/f", "file"), "l": ("d/l", "symlink")}
        with pytest.raises(IsADirectoryError) as info:
            handle.read()
        assert info.value.filename == "d"
    with root.open_handle("d/l", os.O_PATH | os.O_NOFOLLOW) as handle:
        assert handle.path == "d/l" and os.path.stat.S_ISLNK(handle.stat().st_mode)


# -- the canonical path of a fast-path open, under renames ---------------------------

_RENAMER = r"""
import ctypes, os, sys
libc = ctypes.CDLL(None, use_errno=True)
mode, a, b = sys.argv[1], sys.argv[2].encode(), sys.argv[3].encode()
print("ready", flush=True)
import select
n = 0
while not select.select([sys.stdin], [], [], 0)[0]:
    for _ in range(256):
        if mode == "exchange":
            libc.renameat2(-100, a, -100, b, 2)
        else:
            libc.rename(a, b); libc.rename(b, a)
        n += 1
if mode == "exchange" and n % 2:
    libc.renameat2(-100, a, -100, b, 2)
print(n, flush=True)
"""


def _renamer(mode: str, a: str, b: str) -> subprocess.Popen[str]:
    proc = subprocess.Popen([sys.executable, "-c", _RENAMER, mode, a, b],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None and proc.stdout.readline().strip() == "ready"
    return proc


@pytest.mark.parametrize("scenario", ["dotdot", "exchange"])
def test_handle_path_is_where_the_fd_is_under_renames(scenario, make_root, scratch):
    """Files never move; directories and links are renamed in a loop by
    another process.  Each file's content names where it is, so a Handle
    whose ``path`` disagrees with its content reports a place resolution did
    not reach: with ``..`` taken lexically while the kernel's ``..`` went
    elsewhere, or a link followed and not accounted for."""
    tree = build(scratch / "t", ["a/b/", "a/c/", "x/", "x/c/"])
    (tree.ws / "a/c/f").write_bytes(b"a/c/f")
    (tree.ws / "x/c/f").write_bytes(b"x/c/f")
    if scenario == "dotdot":
        # a/b moves to x/b and back: a/b/.. is a, or x while b is in x
        path, proc = "a/b/../c/f", _renamer("move", str(tree.ws / "a/b"), str(tree.ws / "x/b"))
    else:
        # a/c is now the directory, now a link to ../x/c
        os.symlink("../x/c", tree.ws / "a/lc")
        path, proc = "a/c/f", _renamer("exchange", str(tree.ws / "a/c"), str(tree.ws / "a/lc"))
    root = make_root(tree.ws)
    seen: dict[str, int] = {}
    try:
        for _ in range(RACE_ITERATIONS):
            try:
                with root.open_handle(path) as handle:
                    content = handle.read().decode()
                    assert content == handle.path, (handle.path, content)
                    seen[handle.path] = seen.get(handle.path, 0) + 1
            except FileNotFoundError:
                seen["ENOENT"] = seen.get("ENOENT", 0) + 1
    finally:
        proc.communicate("stop\n", timeout=60)
    assert seen.get("a/c/f", 0) > 0, seen


def test_handle_open_root_is_a_root_of_where_the_open_landed(make_root, scratch):
    """A directory Handle's ``open_root``: a Root of the directory the open
    reached (an in-root link on the way resolved), with the parent's
    options, confined to it, and independent of the handle."""
    tree = build(scratch / "t", ["d/sub/f.txt", "l -> d", "out -> $OUT"])
    root = make_root(tree.ws)
    with root.open_handle("l/sub", os.O_RDONLY | os.O_DIRECTORY) as handle:
        assert handle.path == "d/sub"
        sub = handle.open_root()
    with sub:  # the handle is closed; the Root has its own fd
        assert sub.listdir(".") == ["f.txt"]
        assert sub.info()["backend"] == root.info()["backend"]
        assert sub.info()["fast_path"] == root.info()["fast_path"]
        with pytest.raises(EscapeError):
            sub.open("../../out")
    with root.open_handle("d/sub/f.txt") as handle, pytest.raises(NotADirectoryError):
        handle.open_root()


# -- Handle.open_directory: a walk's step from a directory to one it listed ----------


def test_open_directory_opens_one_name_beneath_its_handle(tmp_path, make_root):
    (tmp_path / "a" / "b").mkdir(parents=True)
    (tmp_path / "a" / "f").write_text("x")
    (tmp_path / "a" / "up").symlink_to("..")
    (tmp_path / "a" / "to_b").symlink_to("b")
    root = make_root(str(tmp_path))
    with root.open_handle("a", os.O_RDONLY | os.O_DIRECTORY) as top:
        with top.open_directory("b") as child:
            assert child.path == "a/b"
            info = child.stat()
            assert (info.st_dev, info.st_ino) == (os.stat(tmp_path / "a" / "b").st_dev,
                                                  os.stat(tmp_path / "a" / "b").st_ino)
        for name, code in (("to_b", (errno.ELOOP, errno.ENOTDIR)),  # a link is not followed
                           ("up", (errno.ELOOP, errno.ENOTDIR)),
                           ("f", (errno.ENOTDIR,)), ("gone", (errno.ENOENT,)),
                           ("..", (errno.EINVAL,)), ("b/../..", (errno.EINVAL,)),
                           ("", (errno.EINVAL,))):
            with pytest.raises(OSError) as raised:
                top.open_directory(name)
            assert raised.value.errno in code, (name, raised.value)
    with root.open_handle(".", os.O_RDONLY | os.O_DIRECTORY) as at_root:
        with at_root.open_directory("a") as child:
            assert child.path == "a"
