"""THREATS.md rows the tree table cannot state by itself: concurrent changes
played deterministically at one point of a resolution (row 9, one thread),
magic links (13), input that is no path (14), mode bits (20), and the
strict no-symlink mode.  Every op, every backend config.
"""

from __future__ import annotations

import ctypes
import errno
import os
import stat as st
import sys

import pytest

from corral.contained import EscapeError, InvalidPathError, SpecialFileError, SymlinkError

from .helpers.trees import build, fingerprint, outside_part
from .helpers.operations import OPS, check_target, prepare
from .helpers.table import OK, C, expectation, matches, recording_root, run_ops

ESC = EscapeError


# -- row 9, in one thread: the tree changes between two steps of a walk ----------

def _race(make_root, scratch, op, fs, path, trigger, change, case_if_fired, case_if_not):
    """Run ``op`` on ``path``; right after the backend's ``open_at`` of the
    name ``trigger`` returns (the first time), ``change(tree)`` alters the
    tree.  Whether or not it fired (the openat2 fast path opens in one
    call, so nothing fires), the outcome must be what the matching case
    says, and nothing outside may change."""
    tree = build(scratch / "t", fs)
    prepare(tree, op, case_if_not.target)
    # a decoy where a walk that climbed out with ".." would land
    (tree.base / "target").write_bytes(b"decoy next to the root")
    root, recorder = recording_root(make_root, tree.ws)
    fired = []
    outside_seen = [outside_part(fingerprint(tree))]

    def after(method, args):
        if not fired and method == "open_at" and args[1] == trigger:
            fired.append(True)
            change(tree)
            outside_seen[0] = outside_part(fingerprint(tree))

    recorder.after = after
    try:
        raw = op.root(root, tree, path)
        result = ("ok", raw)
    except OSError as exc:
        result = ("err", exc)
    finally:
        root.close()
    case = case_if_fired if fired else case_if_not
    exp, _ = expectation(case, op)
    assert matches(result, exp), f"{op.name}: fired={bool(fired)}: {result!r}; expected {exp!r}"
    if result[0] == "ok" and exp is OK and case.target is not None:
        check_target(op, tree, raw, case.target, case.ltarget or case.target)
    # the op changed nothing outside (what the change itself moved there aside)
    assert outside_part(fingerprint(tree)) == outside_seen[0]
    return fired


@pytest.mark.parametrize("op", OPS, ids=[op.name for op in OPS])
def test_dir_moved_out_while_dotdot_pops_the_stack(op, make_root, scratch):
    # a/b is moved out of the root once a/b/c is open: a walk that asked the
    # kernel for ".." would climb from outside/moved/c to the base and act on
    # the decoy base/target; the fd stack pops back to the root's "target".
    def move_out(tree):
        os.rename(tree.ws / "a" / "b", tree.out / "moved")

    case = C("moved", ["a/b/c/"], "a/b/c/../../../target", target="target")
    fired = _race(make_root, scratch, op, ["a/b/c/"], case.path, "c", move_out, case, case)
    if not make_root.fast_path:
        assert fired, "the walk never opened c"


@pytest.mark.parametrize("op", OPS, ids=[op.name for op in OPS])
def test_intermediate_dir_swapped_for_outward_link(op, make_root, scratch):
    # once a is open, a/b becomes a symlink to outside/sub
    def swap(tree):
        os.rename(tree.ws / "a" / "b", tree.ws / "a" / "b-orig")
        os.symlink(tree.out / "sub", tree.ws / "a" / "b")

    fired = _race(make_root, scratch, op, ["a/b/"], "a/b/target", "a", swap,
                  C("swapped", ["a/b/"], "a/b/target", error=ESC),
                  C("not swapped", ["a/b/"], "a/b/target", target="a/b/target"))
    if not make_root.fast_path:
        assert fired


@pytest.mark.parametrize("op", OPS, ids=[op.name for op in OPS])
def test_final_component_swapped_for_outward_link(op, make_root, scratch):
    # once the parent a is open, a/target becomes a symlink to outside/secret
    def swap(tree):
        target = tree.ws / "a" / "target"
        if os.path.lexists(target):
            os.rename(target, tree.ws / "a" / "target-orig")
        os.symlink(tree.out / "secret", target)

    fired = _race(make_root, scratch, op, ["a/"], "a/target", "a", swap,
                  C("swapped", ["a/"], "a/target", error=ESC, ltarget="a/target",
                    expect={"makedirs_exist_ok": ESC}),
                  C("not swapped", ["a/"], "a/target", target="a/target"))
    if not make_root.fast_path and op.name not in ("makedirs", "makedirs_exist_ok",
                                                   "makedirs_dry"):
        assert fired


# -- row 13: magic links ----------------------------------------------------------

# Read-only ops that follow links may be pointed at any magic link: following
# one would only read.  Ops that write are pointed only at magic links that
# lead to the test's own outside directory (an fd of it), so that even a
# containment bug could not write anywhere else on this machine.
_READING = [op for op in OPS if op.follows and not op.mutates and op.name != "makedirs_dry"]
_MAGIC_ANY = ["self/root", "self/root/etc/passwd", "self/cwd", "self/exe", "self/fd/{fd}",
              "self/fd/{fd}/", "thread-self/root/etc", "self/task/{tid}/root"]
_MAGIC_OUT = ["self/fd/{fd}/secret", "self/fd/{fd}/newname", "thread-self/fd/{fd}/sub/inner",
              "self/fd/{fd}/sub/"]


def _paths(templates, fd: int) -> list[str]:
    return [t.format(fd=fd, tid=ctypes.CDLL(None).gettid()) for t in templates]


def _refused(op, call) -> None:
    if op.name == "exists":
        assert call() is False
        return
    with pytest.raises(EscapeError):
        call()


@pytest.mark.skipif(not os.path.isdir("/proc/self/fd"), reason="no procfs here")
@pytest.mark.parametrize("op", _READING, ids=[op.name for op in _READING])
def test_magic_links_in_a_proc_root_are_refused(op, make_root, scratch):
    # A Root opened on /proc itself: its magic links lead anywhere (the
    # host's "/", the cwd, any open file), so following one is an escape.
    root = make_root("/proc")
    tree = build(scratch / "t", [])
    for path in _paths(_MAGIC_ANY, root.fileno()):
        _refused(op, lambda: op.root(root, tree, path))
    assert root.exists("self/status")  # plain files and in-root links still work


def _bind_proc(where: str) -> bool:
    libc = ctypes.CDLL(None, use_errno=True)
    return libc.mount(b"/proc", os.fsencode(where), None, 4096, None) == 0  # MS_BIND


def _umount(where: str) -> None:
    ctypes.CDLL(None, use_errno=True).umount2(os.fsencode(where), 2)  # MNT_DETACH


@pytest.mark.parametrize("op", OPS, ids=[op.name for op in OPS])
def test_magic_links_through_a_bind_mounted_proc(op, make_root, scratch):
    tree = build(scratch / "t", ["p/"])
    if not sys.platform.startswith("linux") or not _bind_proc(str(tree.ws / "p")):
        pytest.skip("cannot bind-mount /proc here (needs CAP_SYS_ADMIN)")
    out_fd = os.open(tree.out, os.O_RDONLY | os.O_DIRECTORY)
    try:
        root = make_root(tree.ws)
        before = outside_part(fingerprint(tree))
        # below a magic link: every op must refuse, as for any outward link
        for path in _paths(_MAGIC_OUT, out_fd):
            _refused(op, lambda: op.root(root, tree, "p/" + path))
        if op in _READING:
            for path in _paths(_MAGIC_ANY, root.fileno()):
                _refused(op, lambda: op.root(root, tree, "p/" + path))
        # the magic link itself, as the final component: ops that follow it
        # refuse; the others meet the link (which /proc will not let change)
        final = f"p/self/fd/{out_fd}"
        if op.follows and not op.name.startswith("makedirs"):
            _refused(op, lambda: op.root(root, tree, final))
        else:
            try:
                op.root(root, tree, final)
            except (EscapeError, SymlinkError, PermissionError, FileExistsError,
                    NotADirectoryError, OSError):
                pass
        assert outside_part(fingerprint(tree)) == before
        assert root.exists("p/self") and not root.exists("p/self/root")
    finally:
        os.close(out_fd)
        _umount(str(tree.ws / "p"))


# -- row 14: input that is not a path ---------------------------------------------

@pytest.mark.parametrize("op", OPS, ids=[op.name for op in OPS])
def test_not_a_path_at_all(op, make_root, scratch):
    tree = build(scratch / "t", ["f"])
    root = make_root(tree.ws)
    before = fingerprint(tree)
    for bad in (3, None, 1.5, ["f"], object()):
        with pytest.raises(InvalidPathError):
            op.root(root, tree, bad)
    assert fingerprint(tree) == before


def test_path_max_boundary(make_root, scratch):
    # 16 components of 255 bytes: 4095 bytes, the longest path the kernel
    # takes.  The root resolves it (relative to its fd) whatever the length
    # of the host path in front of it; one byte more is ENAMETOOLONG, before
    # any system call.
    tree = build(scratch / "t", [])
    names = [chr(ord("a") + i) * 255 for i in range(16)]
    longest = "/".join(names)
    assert len(longest) == 4095
    fd = os.open(tree.ws, os.O_RDONLY | os.O_DIRECTORY)
    try:
        for name in names[:-1]:
            os.mkdir(name, dir_fd=fd)
            new = os.open(name, os.O_RDONLY | os.O_DIRECTORY, dir_fd=fd)
            os.close(fd)
            fd = new
        with open(os.open(names[-1], os.O_WRONLY | os.O_CREAT, 0o644, dir_fd=fd), "wb") as f:
            f.write(b"deep")
    finally:
        os.close(fd)
    root = make_root(tree.ws)
    assert root.read_bytes(longest) == b"deep"
    assert root.stat(longest).st_size == 4
    with pytest.raises(InvalidPathError) as info:
        root.read_bytes(longest + "x")
    assert info.value.errno == errno.ENAMETOOLONG
    with pytest.raises(InvalidPathError) as info:
        root.read_bytes("./" + longest)
    assert info.value.errno == errno.ENAMETOOLONG


def test_symlink_text_with_nul_is_refused(make_root, scratch):
    tree = build(scratch / "t", [])
    root = make_root(tree.ws)
    with pytest.raises(InvalidPathError):
        root.symlink("a\x00/../../etc", "l")
    assert not os.path.lexists(tree.ws / "l")


def test_special_file_error_names_the_kind(make_root, scratch):
    tree = build(scratch / "t", ["p|fifo", "s|sock", "n|chr"])
    root = make_root(tree.ws)
    for name, kind in (("p", "fifo"), ("s", "socket"), ("n", "char_device")):
        for call in (lambda: root.read_bytes(name), lambda: root.open(name, os.O_WRONLY)):
            with pytest.raises(SpecialFileError) as info:
                call()
            assert info.value.kind == kind
            assert info.value.errno == errno.EOPNOTSUPP
    if hasattr(os, "O_PATH"):
        # O_PATH gives an fd to look at the file without using it
        fd = root.open("p", os.O_PATH)
        try:
            assert st.S_ISFIFO(os.fstat(fd).st_mode)
        finally:
            os.close(fd)


# -- row 20: mode bits ---------------------------------------------------------------

_BAD_MODES = [0o4755, 0o2755, 0o1777, 0o10644, -1, 0o7777]


def test_mode_bits_beyond_permissions_are_refused(make_root, scratch):
    tree = build(scratch / "t", [])
    root = make_root(tree.ws)
    before = fingerprint(tree)
    calls = {
        "open": lambda m: root.open("new", os.O_CREAT | os.O_WRONLY, m),
        "mkdir": lambda m: root.mkdir("new", m),
        "makedirs": lambda m: root.makedirs("new/sub", m),
        "makedirs_dry": lambda m: root.makedirs("new/sub", m, dry_run=True),
        "write_bytes": lambda m: root.write_bytes("new", b"x", mode=m),
    }
    for name, call in calls.items():
        for mode in _BAD_MODES:
            with pytest.raises(OSError) as info:
                call(mode)
            assert info.value.errno == errno.EINVAL, (name, oct(mode))
    assert fingerprint(tree) == before, "a refused mode created something"


def test_permission_bits_are_applied_as_os_does(make_root, scratch):
    tree = build(scratch / "t", ["keep"])
    os.chmod(tree.ws / "keep", 0o640)
    root = make_root(tree.ws)
    umask = os.umask(0o022)
    os.umask(umask)
    os.close(root.open("f1", os.O_CREAT | os.O_WRONLY, 0o777))
    root.mkdir("d1", 0o777)
    root.makedirs("d2/d3", 0o750)
    root.write_bytes("f2", b"x", mode=0o600)
    root.write_bytes("f3", b"x")
    root.write_bytes("keep", b"new content")
    modes = {n: st.S_IMODE(os.lstat(tree.ws / n).st_mode)
             for n in ("f1", "d1", "d2", "d2/d3", "f2", "f3", "keep")}
    assert modes == {"f1": 0o777 & ~umask, "d1": 0o777 & ~umask, "d2": 0o750 & ~umask,
                     "d2/d3": 0o750 & ~umask, "f2": 0o600, "f3": 0o666 & ~umask,
                     "keep": 0o640}


# -- the strict mode: no symlink is followed anywhere -----------------------------------

_SYM = SymlinkError
STRICT = [
    C("strict: no link on the way", ["a/b/"], "a/b/../b/target", target="a/b/target"),
    C("strict: final link", ["link -> target"], "link", error=_SYM, ltarget="link",
      expect={"makedirs_exist_ok": _SYM}),
    C("strict: link to dir on the way", ["d/", "ld -> d"], "ld/target", error=_SYM),
    C("strict: in-root link to parent", ["a/", "a/up -> .."], "a/up/target", error=_SYM),
    C("strict: outward link", ["l -> $OUT/secret"], "l", error=_SYM, ltarget="l",
      expect={"makedirs_exist_ok": _SYM}),
    C("strict: outward link on the way", ["l -> $OUT/sub"], "l/inner", error=_SYM),
    C("strict: dotdot still an escape", ["a/"], "a/../../secret", error=ESC),
]


@pytest.mark.parametrize("case", STRICT, ids=[c.name for c in STRICT])
def test_strict_mode(case, make_root, scratch):
    run_ops(case, OPS, make_root, scratch, follow_symlinks=False)


# -- scandir entries: classified without following; followed only inside ----------

def test_dir_entries_follow_links_only_inside(make_root, scratch):
    tree = build(scratch / "t", ["d/", "d/e/", "d/f", "d/in -> e", "d/infile -> f",
                                 "d/out -> $OUT/sub", "d/outfile -> $OUT/secret",
                                 "d/dangling -> nowhere", "d/p|fifo"])
    root = make_root(tree.ws)
    entries = {e.name: e for e in root.scandir("d")}
    assert {n: e.kind for n, e in entries.items()} == {
        "e": "dir", "f": "file", "in": "symlink", "infile": "symlink", "out": "symlink",
        "outfile": "symlink", "dangling": "symlink", "p": "other"}
    assert {n: e.path for n, e in entries.items()} == {n: f"d/{n}" for n in entries}
    followed = {n: (e.is_dir(), e.is_file()) for n, e in entries.items()}
    assert followed == {"e": (True, False), "f": (False, True), "in": (True, False),
                        "infile": (False, True), "out": (False, False),
                        "outfile": (False, False), "dangling": (False, False),
                        "p": (False, False)}
    assert not any(e.is_dir(follow_symlinks=False) for n, e in entries.items() if n != "e")
    assert entries["in"].stat().st_ino == os.stat(tree.ws / "d" / "e").st_ino
    assert st.S_ISLNK(entries["out"].stat(follow_symlinks=False).st_mode)
    with pytest.raises(EscapeError):
        entries["out"].stat()


# -- row 11: a hard link inside the root to an outside file -------------------------

def test_write_bytes_replaces_a_hard_link_never_writes_through(make_root, scratch):
    tree = build(scratch / "t", ["h => $OUT/secret"])
    root = make_root(tree.ws)
    assert root.stat("h").st_nlink == 2  # visible to a caller's policy (the tools refuse)
    for kwargs in ({}, {"exclusive": False, "fsync": False}):
        root.write_bytes("h", b"new content", **kwargs)
        assert (tree.ws / "h").read_bytes() == b"new content"
        assert (tree.out / "secret").read_bytes() == b"outside secret"
        assert os.stat(tree.out / "secret").st_nlink == 1
        assert root.stat("h").st_nlink == 1


# -- fwalk's dir_fd: only a directory this Root's walk is yielding now --------

def _dir_fd_site(scratch):
    ws, outside = scratch / "ws", scratch / "outside"
    (ws / "d").mkdir(parents=True)
    (ws / "d" / "f").write_bytes(b"inside")
    outside.mkdir()
    (outside / "f").write_bytes(b"OUTSIDE")
    return ws, outside


def test_fwalk_dir_fd_opens_in_the_directory_being_yielded(make_root, scratch):
    ws, _outside = _dir_fd_site(scratch)
    root = make_root(ws)
    seen = {}
    for path, _dirs, files, fd in root.fwalk("."):
        for name in files:
            with os.fdopen(root.open(name, dir_fd=fd), "rb") as f:
                seen[f"{path}/{name}"] = f.read()
    assert seen == {"d/f": b"inside"}


def test_fwalk_dir_fd_closed_and_reused_by_the_consumer_is_ebadf(make_root, scratch):
    # the consumer closes the yielded fd and the number goes to a directory
    # outside while the walk still holds its registration: the fstat check
    # (device, inode) refuses it
    ws, outside = _dir_fd_site(scratch)
    root = make_root(ws)
    walk = root.fwalk(".")
    for path, _dirs, _files, fd in walk:
        if path == "d":
            break
    os.close(fd)
    bait = os.open(outside, os.O_RDONLY | os.O_DIRECTORY)
    try:
        assert bait == fd, "the test could not reuse the fd number"
        with pytest.raises(OSError) as info:
            root.open("f", dir_fd=fd)
        assert info.value.errno == errno.EBADF
        assert info.value.filename == "f"
    finally:
        walk.close()  # closes the walk's number, which is bait's now
    with pytest.raises(OSError):
        os.fstat(bait)


def test_fwalk_dir_fd_of_another_root_or_a_finished_walk_is_ebadf(make_root, scratch):
    ws, _outside = _dir_fd_site(scratch)
    root, other = make_root(ws), make_root(ws)
    for path, _dirs, _files, fd in other.fwalk("."):
        if path == "d":
            with pytest.raises(OSError) as info:
                root.open("f", dir_fd=fd)  # same directory, but not root's walk
            assert info.value.errno == errno.EBADF
    held = os.open(ws / "d", os.O_RDONLY | os.O_DIRECTORY)
    try:
        list(root.fwalk("."))
        with pytest.raises(OSError) as info:
            root.open("f", dir_fd=held)
        assert info.value.errno == errno.EBADF
    finally:
        os.close(held)


# -- EscapeError.reason: where the escaping step came from, as resolved -------

ESCAPES = [
    ("../x", "dotdot"),
    ("d/../../x", "dotdot"),
    ("l/../..", "dotdot"),  # l -> d: the path as written climbs out
    ("/etc/passwd", "absolute"),
    ("up/x", "symlink"),  # up -> ../..
    ("up", "symlink"),
    ("d/up2/x", "symlink"),  # d/up2 -> ../../x
    ("abs/x", "symlink"),  # abs -> /etc
    ("via/x", "symlink"),  # via -> l/../.. : the '..' is from a link's text
    ("d/../up/x", "symlink"),
]


@pytest.mark.parametrize("path, reason", ESCAPES, ids=[p for p, _ in ESCAPES])
def test_escape_reason_says_where_the_step_came_from(make_root, scratch, path, reason):
    ws = scratch / "ws"
    (ws / "d").mkdir(parents=True)
    for name, text in (("l", "d"), ("up", "../.."), ("d/up2", "../../x"), ("abs", "/etc"),
                       ("via", "l/../..")):
        os.symlink(text, ws / name)
    root = make_root(ws)
    calls = (lambda: root.open(path), lambda: root.stat(path), lambda: root.open_handle(path),
             lambda: root.target(path, follow_final=True), lambda: root.write_bytes(path, b"x"))
    for call in calls:
        with pytest.raises(EscapeError) as info:
            call()
        assert info.value.reason == reason, (path, call)
        assert info.value.errno == errno.EXDEV
