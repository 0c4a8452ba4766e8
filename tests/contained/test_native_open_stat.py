"""``open_stat_beneath``: Root.open_handle's read as the native module's own
METH_FASTCALL function (``native/corral_read.h``): ``open_text_beneath``'s
arguments and open, answering ``(fd, stat)`` with the ``fstat`` its
file-type check took, so a reader deciding on what it opened takes no
second one (``Handle.opened_stat``).

It must open exactly what ``open_text_beneath`` opens (the same refusals,
-1 and never an error for what it does not take), and its stat must be
``os.fstat``'s of that fd, field for field and type for type (times before
1970, far ahead, with nanoseconds), leaking neither an fd nor a reference.
"""

from __future__ import annotations

import codecs
import os
import sys

import pytest

from corral.contained import Root
from corral.contained._native_backend import NativeBackend

RESOLVE = 0x08 | 0x02  # RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS, a Root's
UTF8 = codecs.lookup(sys.getfilesystemencoding()).name == "utf-8"
FIELDS = [name for name in dir(os.stat_result) if name.startswith("st_")]


def _native():
    """The native backend with its fast path on, whatever CORRAL_OPENAT2 says."""
    try:
        backend = NativeBackend(openat2=True)
    except (OSError, ImportError):
        return None
    return backend if backend.has_openat2 else None


NATIVE = _native()
pytestmark = [pytest.mark.skipif(NATIVE is None or not UTF8 or sys.platform != "linux",
                                 reason="the module's own fast path: native, Linux, UTF-8"),
              pytest.mark.own_backend]  # the native backend, openat2 named, whatever the lane


def _same_as_fstat(info: os.stat_result, fd: int) -> None:
    now = os.fstat(fd)
    for name in FIELDS:
        got, want = getattr(info, name), getattr(now, name)
        assert (got, type(got)) == (want, type(want)), name
    assert tuple(info) == tuple(now)


def _identity(fd: int) -> tuple[int, int]:
    info = os.fstat(fd)
    return info.st_dev, info.st_ino


@pytest.fixture
def tree(tmp_path):
    """A root holding ASCII, non-ASCII and undecodable names, a FIFO, a
    symlink inside and one leading out, files stamped before 1970 and far
    ahead; and its fd."""
    base = tmp_path / "root"
    (base / "a" / "b").mkdir(parents=True)
    (base / "a" / "b" / "f").write_bytes(b"ascii")
    (base / "é").mkdir()
    (base / "é" / "ü.txt").write_bytes(b"utf-8")
    os.makedirs(os.path.join(os.fsencode(base), b"\xff"))
    with open(os.path.join(os.fsencode(base), b"\xff", b"g\xfe"), "wb") as f:
        f.write(b"undecodable")
    (base / "old").write_bytes(b"1969")
    os.utime(base / "old", ns=(-86_400 * 365 * 10**9 - 123_456_789, -1))
    (base / "ahead").write_bytes(b"2300")
    os.utime(base / "ahead", ns=(10_500_000_000 * 10**9 + 987_654_321, 2**33 * 10**9 + 1))
    os.mkfifo(base / "fifo")
    os.symlink("a/b", base / "in")
    (tmp_path / "secret").write_bytes(b"outside")
    os.symlink("../secret", base / "out")
    fd = os.open(base, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    yield base, fd
    os.close(fd)


def test_the_module_exports_it_and_the_backend_uses_it():
    assert sys.modules["corral._native"].open_stat_beneath is NATIVE.open_stat_beneath


@pytest.mark.parametrize("path", ["a/b/f", "é/ü.txt", os.fsdecode(b"\xff/g\xfe"), "in/f",
                                  "a/./b//f", "a/b/../b/f", "a", ".", "old", "ahead"])
def test_it_opens_what_the_text_call_opens_with_its_fstat(tree, path):
    base, fd = tree
    expected = NATIVE.open_text_beneath(fd, path, os.O_RDONLY, 0, RESOLVE)
    assert expected >= 0
    opened = NATIVE.open_stat_beneath(fd, path, os.O_RDONLY, 0, RESOLVE)
    try:
        assert type(opened) is tuple and len(opened) == 2
        assert _identity(opened[0]) == _identity(expected)
        _same_as_fstat(opened[1], opened[0])
    finally:
        os.close(expected)
        if type(opened) is tuple:
            os.close(opened[0])


@pytest.mark.parametrize("path", ["out", "../x", "/etc/passwd", "fifo", "missing", "a\x00b",
                                  "", "a/b/f/"])
def test_it_refuses_what_the_text_call_refuses(tree, path):
    base, fd = tree
    assert NATIVE.open_text_beneath(fd, path, os.O_RDONLY, 0, RESOLVE) == -1
    assert NATIVE.open_stat_beneath(fd, path, os.O_RDONLY, 0, RESOLVE) == -1


@pytest.mark.parametrize("args", [
    ("a/b/f".encode(), os.O_RDONLY, 0, RESOLVE),  # bytes: the slow way takes them
    ("a/b/f", "0", 0, RESOLVE),
    ("a/b/f", os.O_RDONLY, 0.0, RESOLVE),
    ("a/b/f", 1 << 40, 0, RESOLVE),
    ("a/b/f", os.O_RDONLY, 1 << 70, RESOLVE),
    ("a/b/f", os.O_RDONLY, -1, RESOLVE),
    ("a/b/f", os.O_RDONLY, 0, -1),
    ("a/b/f", os.O_RDONLY, 0, 1 << 70),
    ("a/b/f", os.O_RDONLY, 0, 0x100),  # a resolve bit nothing here knows
    ("a/b/f", 0x40000000, 0, RESOLVE),  # an open flag outside the allow-list
    (None, os.O_RDONLY, 0, RESOLVE),
    ("a/b/f", os.O_RDONLY, 0),  # too few
    ("a/b/f", os.O_RDONLY, 0, RESOLVE, 0),  # too many
])
def test_what_it_does_not_take_is_minus_one_never_an_error(tree, args):
    base, fd = tree
    assert NATIVE.open_stat_beneath(fd, *args) == -1
    assert NATIVE.open_stat_beneath(-1, "a/b/f", os.O_RDONLY, 0, RESOLVE) == -1


def test_it_keeps_no_reference_and_leaks_no_fd(tree):
    base, fd = tree
    path = "é/ü.txt" + ""  # a str of its own
    undecodable = os.fsdecode(b"\xff/g\xfe")
    before = (sys.getrefcount(path), sys.getrefcount(undecodable), len(os.listdir("/proc/self/fd")))
    for _ in range(200):
        for name in (path, undecodable):
            opened = NATIVE.open_stat_beneath(fd, name, os.O_RDONLY, 0, RESOLVE)
            held = (sys.getrefcount(opened), sys.getrefcount(opened[1]))
            assert held == (2, 2)  # this name's, getrefcount's argument's; the tuple's
            os.close(opened[0])
        assert NATIVE.open_stat_beneath(fd, "fifo", os.O_RDONLY, 0, RESOLVE) == -1
    del name, opened
    after = (sys.getrefcount(path), sys.getrefcount(undecodable), len(os.listdir("/proc/self/fd")))
    assert after == before


def test_a_handle_a_read_opens_holds_the_opens_fstat(tree):
    """Root.open_handle of a read takes the one call: the handle's
    opened_stat is the open's (os.fstat's, field for field), no walk."""
    base, _ = tree
    with Root(base, backend=NATIVE) as root:
        for path in ("a/b/f", "ahead", "old", "a"):
            with root.open_handle(path) as handle:
                _same_as_fstat(handle.opened_stat(), handle.fd)
        assert root.stats["walk_fallbacks"] == 0


def test_a_seeded_loop_of_edges_answers_as_the_text_call(tree):
    """Lengths, flags, modes and resolve bits at and past their edges
    (for the sanitizer lane too): the same answer as open_text_beneath,
    and with it the fd's fstat."""
    import random

    base, fd = tree
    rng = random.Random(26)
    paths = ["a/b/f", "é/ü.txt", os.fsdecode(b"\xff/g\xfe"), "a" * 4095, "a" * 4096,
             "a/" * 2100, "x" * 256, "a\x00", "\x00", "", "/", "..", "in", "out", "fifo",
             "old", "ahead", "a"]
    ints = [0, 1, -1, 0o777, 0o1000, 0o7777, 2**31 - 1, -2**31, 2**31, 2**32, 2**63, -2**63,
            os.O_RDONLY, os.O_WRONLY, os.O_RDWR, os.O_CREAT, os.O_DIRECTORY, os.O_NOFOLLOW,
            getattr(os, "O_PATH", 0), getattr(os, "O_TMPFILE", 0)]
    resolves = [RESOLVE, 0, 0x04, 0x0F, 0x10, -1, 2**64, 2**64 - 1]
    for _ in range(int(os.environ.get("CORRAL_NATIVE_FUZZ_ITERATIONS", "300"))):
        path = rng.choice(paths)
        flags, mode = rng.choice(ints), rng.choice(ints[:10])
        if flags & os.O_CREAT or flags & os.O_WRONLY or flags & os.O_RDWR:
            flags &= ~(os.O_CREAT | os.O_WRONLY | os.O_RDWR)  # nothing made or changed
        resolve = rng.choice(resolves)
        got = NATIVE.open_stat_beneath(fd, path, flags, mode, resolve)
        if got != -1:  # before the second open (an O_TRUNC among the flags moves ctime)
            _same_as_fstat(got[1], got[0])
        want = NATIVE.open_text_beneath(fd, path, flags, mode, resolve)
        try:
            assert (got != -1) == (want >= 0), (path[:20], flags, mode, resolve)
            if got != -1:
                assert _identity(got[0]) == _identity(want)
        finally:
            if got != -1:
                os.close(got[0])
            if want >= 0:
                os.close(want)


@pytest.mark.parametrize("path, follow", [("a/b/f", True), ("in/f", True), ("a/b/", True),
                                          ("é/ü.txt", False), ("a/../in", False),
                                          ("a/../in", True), ("a/../ahead", True)])
def test_root_stat_of_several_names_is_the_one_call(tree, path, follow):
    """Root.stat's fast path (a path of several names) takes the O_PATH
    open and its fstat in one call: os.stat's answer (lstat's for a final
    link not followed), no walk."""
    base, _ = tree
    with Root(base, backend=NATIVE) as root:
        info = root.stat(path, follow_symlinks=follow)
        assert root.stats["walk_fallbacks"] == 0
    want = os.stat(base / path, follow_symlinks=follow)
    for name in FIELDS:
        if "atime" not in name:
            assert getattr(info, name) == getattr(want, name), name


@pytest.mark.parametrize("path, error", [("a/missing", FileNotFoundError),
                                         ("a/b/f/x", NotADirectoryError)])
def test_root_stat_still_says_why_through_the_walk(tree, path, error):
    base, _ = tree
    with Root(base, backend=NATIVE) as root:
        with pytest.raises(error):
            root.stat(path)
        assert root.stats["walk_fallbacks"] == 1
