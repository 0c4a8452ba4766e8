"""``open_text_beneath``: Root.open's fast path as the native module's own
METH_FASTCALL function (``native/corral_native.h``), the path a ``str``.

It must answer exactly as ``corral_open_beneath`` does on the same bytes
(the same file, the same refusals), take the path's bytes as
``os.fsencode`` gives them (non-ASCII names and lone surrogates included),
and answer -1, never raise, for anything it does not take: the caller then
resolves the slow way, which says what is wrong.
"""

from __future__ import annotations

import codecs
import errno
import os
import shutil
import sys

import pytest

from corral.contained import InvalidPathError, Root
from corral.contained._native_backend import NativeBackend

RESOLVE = 0x08 | 0x02  # RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS, a Root's
UTF8 = codecs.lookup(sys.getfilesystemencoding()).name == "utf-8"


def _native():
    """The native backend with its fast path on, whatever CORRAL_OPENAT2
    says (the lane that turns it off for the rest of the suite still tests
    this function, which the kernel has)."""
    try:
        backend = NativeBackend(openat2=True)
    except (OSError, ImportError):
        return None
    return backend if backend.has_openat2 else None


NATIVE = _native()
pytestmark = [pytest.mark.skipif(NATIVE is None or not UTF8 or sys.platform != "linux",
                                 reason="the module's own fast path: native, Linux, UTF-8"),
              pytest.mark.own_backend]  # the native backend, openat2 named, whatever the lane
if NATIVE is not None:
    from corral._native import ffi, lib


def _identity(fd: int) -> tuple[int, int]:
    try:
        info = os.fstat(fd)
        return info.st_dev, info.st_ino
    finally:
        os.close(fd)


@pytest.fixture
def tree(tmp_path):
    """A root holding ASCII, non-ASCII and undecodable names, a FIFO, a
    symlink inside and one leading out; and its fd."""
    base = tmp_path / "root"
    (base / "a" / "b").mkdir(parents=True)
    (base / "a" / "b" / "f").write_bytes(b"ascii")
    (base / "é").mkdir()
    (base / "é" / "ü.txt").write_bytes(b"utf-8")
    os.makedirs(os.path.join(os.fsencode(base), b"\xff"))
    with open(os.path.join(os.fsencode(base), b"\xff", b"g\xfe"), "wb") as f:
        f.write(b"undecodable")
    os.mkfifo(base / "fifo")
    os.symlink("a/b", base / "in")
    (tmp_path / "secret").write_bytes(b"outside")
    os.symlink("../secret", base / "out")
    fd = os.open(base, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    yield base, fd
    os.close(fd)


def test_the_module_exports_it_and_the_backend_uses_it():
    assert sys.modules["corral._native"].open_text_beneath is NATIVE.open_text_beneath
    assert lib.corral_export(b"no.such.module", b"open_text_beneath") == -1
    assert lib.corral_export(b"corral._native", b"no_such_function") == -1


@pytest.mark.parametrize("path", ["a/b/f", "é/ü.txt", os.fsdecode(b"\xff/g\xfe"), "in/f",
                                  "a/./b//f", "a/b/../b/f", "a"])
def test_it_opens_what_the_bytes_call_opens(tree, path):
    base, fd = tree
    data = os.fsencode(path)
    expected = lib.corral_open_beneath(fd, data, len(data), os.O_RDONLY, 0, RESOLVE)
    assert expected >= 0
    opened = NATIVE.open_text_beneath(fd, path, os.O_RDONLY, 0, RESOLVE)
    assert opened >= 0
    assert _identity(opened) == _identity(expected)


@pytest.mark.parametrize("path", ["out", "../x", "/etc/passwd", "fifo", "missing", "a\x00b",
                                  "", "a/b/f/"])
def test_it_refuses_what_the_bytes_call_refuses(tree, path):
    base, fd = tree
    data = os.fsencode(path)
    assert lib.corral_open_beneath(fd, data, len(data), os.O_RDONLY, 0, RESOLVE) == -1
    assert NATIVE.open_text_beneath(fd, path, os.O_RDONLY, 0, RESOLVE) == -1


@pytest.mark.parametrize("args", [
    ("a/b/f".encode(), os.O_RDONLY, 0, RESOLVE),  # bytes: the slow way takes them
    ("a/b/f", "0", 0, RESOLVE),
    ("a/b/f", os.O_RDONLY, 0.0, RESOLVE),
    ("a/b/f", 1 << 40, 0, RESOLVE),
    ("a/b/f", -(1 << 40), 0, RESOLVE),
    ("a/b/f", os.O_RDONLY, 1 << 70, RESOLVE),
    ("a/b/f", os.O_RDONLY, -1, RESOLVE),
    ("a/b/f", os.O_RDONLY, 0o7777, RESOLVE),
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
    assert NATIVE.open_text_beneath(fd, *args) == -1


def test_a_bad_dir_fd_is_minus_one(tree):
    assert NATIVE.open_text_beneath(-1, "a/b/f", os.O_RDONLY, 0, RESOLVE) == -1
    assert NATIVE.open_text_beneath(1 << 40, "a/b/f", os.O_RDONLY, 0, RESOLVE) == -1


def test_a_str_subclass_is_opened_by_its_text(tree):
    base, fd = tree

    class Odd(str):
        def encode(self, *args, **kwargs):  # never asked: C reads the text itself
            raise AssertionError("encode called")

    opened = NATIVE.open_text_beneath(fd, Odd("a/b/f"), os.O_RDONLY, 0, RESOLVE)
    assert opened >= 0
    with os.fdopen(opened, "rb") as f:
        assert f.read() == b"ascii"


@pytest.mark.parametrize("path, content", [("a/b/f", b"ascii"), ("é/ü.txt", b"utf-8"),
                                           (os.fsdecode(b"\xff/g\xfe"), b"undecodable")])
def test_root_open_takes_the_one_call_for_every_str(tree, path, content):
    base, _ = tree
    with Root(base, backend=NATIVE) as root:
        fd = root.open(path)
        with os.fdopen(fd, "rb") as f:
            assert f.read() == content
        assert root.stats["walk_fallbacks"] == 0


def test_root_open_still_refuses_through_the_slow_way(tree):
    base, _ = tree
    with Root(base, backend=NATIVE) as root:
        with pytest.raises(InvalidPathError):
            root.open("a\x00b")
        with pytest.raises(OSError) as caught:
            root.open("missing")
        assert caught.value.errno == errno.ENOENT
        with pytest.raises(OSError):
            root.open("out")
        assert root.stats["walk_fallbacks"] == 3
        fd = root.open(b"a/b/f")  # bytes: the slow way, the same file
        with os.fdopen(fd, "rb") as f:
            assert f.read() == b"ascii"


def test_it_keeps_no_reference_and_leaks_no_fd(tree):
    base, fd = tree
    path = "é/ü.txt" + ""  # a str of its own
    undecodable = os.fsdecode(b"\xff/g\xfe")
    before = (sys.getrefcount(path), sys.getrefcount(undecodable), len(os.listdir("/proc/self/fd")))
    for _ in range(200):
        os.close(NATIVE.open_text_beneath(fd, path, os.O_RDONLY, 0, RESOLVE))
        os.close(NATIVE.open_text_beneath(fd, undecodable, os.O_RDONLY, 0, RESOLVE))
        assert NATIVE.open_text_beneath(fd, "fifo", os.O_RDONLY, 0, RESOLVE) == -1
    after = (sys.getrefcount(path), sys.getrefcount(undecodable), len(os.listdir("/proc/self/fd")))
    assert after == before


@pytest.mark.parametrize("path", ["a/b/f", "é/ü.txt", os.fsdecode(b"\xff/g\xfe"), "in/f", "out",
                                  "fifo", "a\x00b", b"a/b/f", None])
def test_the_python_form_answers_as_the_module_does(tree, path):
    """The form Darwin and other file system encodings take."""
    base, fd = tree
    native = NATIVE.open_text_beneath(fd, path, os.O_RDONLY, 0, RESOLVE)
    python = NATIVE._open_text_beneath(fd, path, os.O_RDONLY, 0, RESOLVE)
    assert (native >= 0) == (python >= 0)
    if native >= 0:
        assert _identity(native) == _identity(python)


_ATTACKER = r"""
import os, sys, time
from corral._native import lib
base, deep, seconds = sys.argv[1], sys.argv[2], float(sys.argv[3])
inside, outside = f"{base}/root/a", f"{base}/out/a"
swapped, secret = f"{base}/out/a/{deep}", f"{base}/out/s"
end = time.monotonic() + seconds
while time.monotonic() < end:
    os.rename(inside, outside)
    assert lib.corral_renameat(lib.AT_FDCWD, swapped.encode(), lib.AT_FDCWD, secret.encode(), 2) == 0
    assert lib.corral_renameat(lib.AT_FDCWD, swapped.encode(), lib.AT_FDCWD, secret.encode(), 2) == 0
    os.rename(outside, inside)
"""


def test_a_directory_renamed_out_mid_walk_never_opens_what_was_never_inside(tmp_path):
    """Why the fast path keeps RESOLVE_BENEATH for a path of plain names
    (corral_native.h): another process renames ``a`` out of the root,
    exchanges ``a/q/.../b`` with an outside directory, exchanges it back
    and renames ``a`` back in, so ``a/q/.../b/f`` is always the inside file
    while ``a`` is inside and the outside one only while ``a`` is out.  An
    open that went down ``a`` before the rename and reached ``b`` after the
    exchange would read the outside file; the kernel's last check refuses
    it (EXDEV), which shows the attack reached the window.  Without
    RESOLVE_BENEATH (RESOLVE_NO_SYMLINKS alone) nothing is refused and this
    fails; run long enough, the outside file is read (from C, 1,000 levels
    deep: 88 times in 10 s)."""
    import subprocess

    # a long walk, a wide window (and a tree shutil.rmtree's recursion can remove)
    deep = "/".join(["q"] * 300) + "/b"
    os.makedirs(tmp_path / "root" / "a")
    (tmp_path / "out" / "s").mkdir(parents=True)
    (tmp_path / "out" / "s" / "f").write_bytes(b"SECRET")
    at = os.open(tmp_path / "root" / "a", os.O_RDONLY | os.O_DIRECTORY)
    for name in deep.split("/"):
        os.mkdir(name, dir_fd=at)
        below = os.open(name, os.O_RDONLY | os.O_DIRECTORY, dir_fd=at)
        os.close(at)
        at = below
    with open(os.open("f", os.O_WRONLY | os.O_CREAT, 0o600, dir_fd=at), "wb") as f:
        f.write(b"inside")
    os.close(at)
    with Root(tmp_path / "root", backend=NATIVE) as root:
        resolve = root._native_call[2]  # the bits Root.open's fast path passes
    root_fd = os.open(tmp_path / "root", os.O_RDONLY | os.O_DIRECTORY)
    data = f"a/{deep}/f".encode()
    read, refused = {b"inside": 0, b"SECRET": 0}, 0
    attacker = subprocess.Popen([sys.executable, "-c", _ATTACKER, str(tmp_path), deep, "8"],
                                env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)})
    try:
        while attacker.poll() is None and not refused:
            # the fast path's C, through cffi for its errno
            fd = lib.corral_open_beneath(root_fd, data, len(data), os.O_RDONLY, 0, resolve)
            if fd >= 0:
                read[os.read(fd, 16)] += 1
                os.close(fd)
            elif ffi.errno == errno.EXDEV:
                refused += 1
    finally:
        attacker.kill()
        attacker.wait()
        os.close(root_fd)
        if os.path.isdir(tmp_path / "out" / "a"):  # killed with a out
            os.rename(tmp_path / "out" / "a", tmp_path / "root" / "a")
        shutil.rmtree(tmp_path / "root")
    assert read[b"SECRET"] == 0, (read, refused)
    assert refused >= 1, f"the race was never reached: {read}"


def test_a_seeded_loop_of_edges_answers_as_the_bytes_call(tree):
    """Lengths, flags, modes and resolve bits at and past their edges
    (for the sanitizer lane too): the same answer as the cffi call given
    the same bytes, and -1 where that call could not be made at all."""
    import random

    base, fd = tree
    rng = random.Random(20)
    paths = ["a/b/f", "é/ü.txt", os.fsdecode(b"\xff/g\xfe"), "a" * 4095, "a" * 4096,
             "a/" * 2100, "x" * 256, "a\x00", "\x00", "", "/", "..", "in", "out", "fifo"]
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
        got = NATIVE.open_text_beneath(fd, path, flags, mode, resolve)
        data = os.fsencode(path)
        try:
            want = lib.corral_open_beneath(fd, data, len(data), flags, mode, resolve)
        except (OverflowError, TypeError):
            want = -1
        if -2**31 <= flags < 2**31 and -2**31 <= mode < 2**31 and 0 <= resolve < 2**64:
            assert (got >= 0) == (want >= 0), (path[:20], flags, mode, resolve)
        else:
            assert got == -1
        for opened in {got, want} - {-1}:
            os.close(opened)
