"""The native backend (``corral._native``) and backend selection.

Which backend this install must give, the NUL guard in front of every native
call, the rename flags through ``Root.rename`` on every backend,
createDirectoryAt refusing a symlink planted between its two calls, and the
refusal to run native code under pyfakefs.
"""

from __future__ import annotations

import errno
import os
import shlex
import shutil
import stat
import sys
import sysconfig

import pytest

from corral.contained import InvalidPathError, OsBackend, Root, backend_by_name, default_backend
from corral.contained import _select
from corral.contained import backend_report
from corral.contained._backend import RENAME_EXCHANGE, RENAME_NOREPLACE

RESOLVE_BENEATH = 0x08
RESOLVE_NO_MAGICLINKS = 0x02

FORCED = os.environ.get("CORRAL_BACKEND", "").strip().lower()
NATIVE_SKIPPED = os.environ.get("CORRAL_NATIVE", "").strip().lower() in ("0", "no", "false", "off")


def _compiler_present() -> bool:
    cc = (sysconfig.get_config_var("CC") or "").strip()
    names = [shlex.split(cc)[0]] if cc else []
    return any(shutil.which(name) for name in [*names, "cc"])


def _native_backend():
    """The native backend, or ``None`` where this install has none."""
    try:
        return backend_by_name("native")
    except OSError:
        return None


NATIVE = _native_backend()
if NATIVE is not None:
    from corral._native import ffi, lib
    from corral.contained._native_backend import NativeBackend


def _tree(path) -> list[tuple[str, bool]]:
    """Every entry beneath ``path`` (relative name, is a symlink), sorted."""
    out = []
    for dirpath, dirnames, filenames in os.walk(path):
        for name in dirnames + filenames:
            full = os.path.join(dirpath, name)
            out.append((os.path.relpath(full, path), os.path.islink(full)))
    return sorted(out)


# -- which backend is active ---------------------------------------------------

def test_the_active_backend_is_what_this_install_promises(tmp_path):
    report = backend_report()
    with Root(tmp_path) as root:
        assert root.backend.name == report["backend"]
    if FORCED:
        assert report["backend"] == FORCED
        assert default_backend().name == FORCED
    elif NATIVE_SKIPPED:
        # CORRAL_NATIVE=0 at install: no module, the os backend, and a reason
        assert report["backend"] == "os"
        assert report["native"]["built"] is False
        assert "CORRAL_NATIVE=0" in report["native"]["reason"]
    elif sys.platform == "darwin" or (sys.platform.startswith("linux") and _compiler_present()):
        # built by default wherever a compiler is present; required on Darwin
        assert report["backend"] == "native", report
        assert report["native"] == {"built": True, "reason": None}
        assert report["available"] == ["native", "os"]
        assert report["fast_path"]["module"].endswith((".so", ".pyd"))
    else:
        assert report["backend"] == "os"
        assert report["native"]["reason"]


def test_report_names_the_fast_path_and_why():
    report = backend_report()
    info = report["fast_path"]
    assert info["backend"] == report["backend"]
    assert isinstance(info["openat2"], bool)
    disabled = os.environ.get("CORRAL_OPENAT2", "1").strip().lower() in ("0", "no", "false", "off")
    if disabled:
        assert info["openat2"] is False
        assert "CORRAL_OPENAT2=0" in info["openat2_reason"]
    elif sys.platform.startswith("linux"):
        # every kernel this project supports has openat2 (5.6+)
        assert info["openat2"] is True
        assert "openat2" in info["openat2_reason"]


def test_an_unbuilt_module_is_unavailable_not_hidden(monkeypatch):
    """Only "corral._native is not installed" means unavailable; the reason
    says what to do.  Simulated by hiding the module from the import system."""
    monkeypatch.setitem(sys.modules, "corral._native", None)
    monkeypatch.delitem(sys.modules, "corral.contained._native_backend", raising=False)
    monkeypatch.setattr(_select, "_cache", {})
    monkeypatch.setattr(_select, "native_unavailable_reason", None)
    if sys.platform == "darwin":  # required there: missing is an error
        with pytest.raises(ImportError, match="native module on macOS"):
            _select._load_native()
        return
    with pytest.raises(OSError) as info:
        backend_by_name("native")
    assert info.value.errno == errno.ENOSYS
    assert "not built" in _select.native_unavailable_reason
    assert backend_report()["native"] == {"built": False,
                                          "reason": _select.native_unavailable_reason}
    assert _select.available_backends() == ["os"]


class _BrokenNative:
    """A meta-path finder that makes importing ``corral._native`` fail the
    way a broken build does."""

    def __init__(self, exc: ImportError) -> None:
        self.exc = exc

    def find_spec(self, name, path=None, target=None):
        if name == "corral._native":
            raise self.exc
        return None


@pytest.mark.parametrize("exc", [
    ImportError("undefined symbol: corral_openat2"),  # a build against the wrong headers
    ModuleNotFoundError("No module named '_cffi_backend'", name="_cffi_backend"),  # cffi missing
], ids=["bad-symbol", "cffi-missing"])
def test_a_broken_native_module_is_an_error_not_a_fallback(monkeypatch, exc):
    """A module that exists but fails to import must raise, never quietly
    leave the os backend in charge."""
    monkeypatch.setattr(_select, "_cache", {})
    monkeypatch.delitem(sys.modules, "corral.contained._native_backend", raising=False)
    monkeypatch.delitem(sys.modules, "corral._native", raising=False)
    monkeypatch.setattr(sys, "meta_path", [_BrokenNative(exc), *sys.meta_path])
    with pytest.raises(ImportError) as info:
        backend_by_name("native")
    assert info.value is exc
    if not FORCED:
        with pytest.raises(ImportError):
            default_backend()
    report = backend_report()
    assert report["native"]["built"] is True
    assert "cannot load" in report["native"]["reason"]
    assert "native" not in report["available"]


# -- NUL bytes never reach C ---------------------------------------------------

BACKENDS = _select.available_backends() if not FORCED else [FORCED]


@pytest.fixture(params=BACKENDS)
def backend(request):
    return backend_by_name(request.param)


def test_c_really_cuts_at_nul_so_the_guard_is_needed(tmp_path):
    """The hazard itself, below the guard: C stops at the NUL.  Through the
    raw cffi module where it is built, else through the raw ctypes call."""
    (tmp_path / "a").write_bytes(b"a")
    fd = os.open(tmp_path, os.O_RDONLY | os.O_DIRECTORY)
    try:
        if NATIVE is not None:
            step = ffi.new("int *")
            made = lib.corral_create_directory_at(fd, b"x\0/../../evil", 0o755,
                                                  NATIVE.dir_flags, step)
            assert made >= 0
            os.close(made)
            expected = [("a", False), ("x", False)]
        else:
            from corral.contained import _linux
            _linux.renameat2(fd, "a\0/../../evil", fd, "x", RENAME_NOREPLACE)
            expected = [("x", False)]
    finally:
        os.close(fd)
    assert _tree(tmp_path) == expected


def _nul_calls(b, dfd):
    """Every backend method that takes a name, given a name with a NUL."""
    return {
        "openat2": lambda: b.openat2(dfd, "a\0/../x", os.O_RDONLY, 0, RESOLVE_BENEATH),
        "openat2-create": lambda: b.openat2(dfd, "new\0x", os.O_WRONLY | os.O_CREAT, 0o600,
                                            RESOLVE_BENEATH),
        "create_directory_at": lambda: b.create_directory_at(dfd, "new\0/../../evil", 0o755),
        "rename_at-noreplace-src": lambda: b.rename_at(dfd, "a\0x", dfd, "moved",
                                                       RENAME_NOREPLACE),
        "rename_at-noreplace-dst": lambda: b.rename_at(dfd, "a", dfd, "moved\0x",
                                                       RENAME_NOREPLACE),
        "rename_at-exchange": lambda: b.rename_at(dfd, "a", dfd, "b\0x", RENAME_EXCHANGE),
        "rename_at-plain": lambda: b.rename_at(dfd, "a", dfd, "moved\0x"),
        "open_at": lambda: b.open_at(dfd, "new\0x", os.O_WRONLY | os.O_CREAT, 0o600),
        "lstat_at": lambda: b.lstat_at(dfd, "a\0x"),
        "readlink_at": lambda: b.readlink_at(dfd, "l\0x"),
        "mkdir_at": lambda: b.mkdir_at(dfd, "new\0x", 0o755),
        "unlink_at": lambda: b.unlink_at(dfd, "a\0x"),
        "rmdir_at": lambda: b.rmdir_at(dfd, "d\0x"),
        "link_at": lambda: b.link_at(dfd, "a", dfd, "new\0x"),
        "symlink_at": lambda: b.symlink_at("a", dfd, "new\0x"),
        "symlink_at-target": lambda: b.symlink_at("a\0x", dfd, "new"),
    }


NUL_CALLS = ["openat2", "openat2-create", "create_directory_at", "rename_at-noreplace-src",
             "rename_at-noreplace-dst", "rename_at-exchange", "rename_at-plain", "open_at",
             "lstat_at", "readlink_at", "mkdir_at", "unlink_at", "rmdir_at", "link_at",
             "symlink_at", "symlink_at-target"]
# the calls that hand the path to C through an FFI (cffi or ctypes)
FFI_CALLS = {"openat2", "openat2-create", "rename_at-noreplace-src", "rename_at-noreplace-dst",
             "rename_at-exchange"}


@pytest.mark.parametrize("call", NUL_CALLS)
def test_every_name_with_a_nul_is_refused_before_any_system_call(tmp_path, backend, call):
    (tmp_path / "a").write_bytes(b"a")
    (tmp_path / "b").write_bytes(b"b")
    (tmp_path / "d").mkdir()
    (tmp_path / "l").symlink_to("a")
    before = _tree(tmp_path)
    ffi_call = call in FFI_CALLS or (call == "create_directory_at" and backend.name == "native")
    dfd = os.open(tmp_path, os.O_RDONLY | os.O_DIRECTORY)
    try:
        if ffi_call:
            # refused in Python before the FFI, as an OSError (EINVAL)
            with pytest.raises(InvalidPathError) as info:
                _nul_calls(backend, dfd)[call]()
            assert info.value.errno == errno.EINVAL
        else:
            # the calls left to the os module, which refuses NUL itself
            with pytest.raises(ValueError, match="null"):
                _nul_calls(backend, dfd)[call]()
    finally:
        os.close(dfd)
    assert _tree(tmp_path) == before
    assert (tmp_path / "a").read_bytes() == b"a" and (tmp_path / "b").read_bytes() == b"b"


def test_root_refuses_nul_on_every_backend(tmp_path, backend):
    with Root(tmp_path, backend=backend) as root:
        for op in (lambda: root.makedirs("x\0/../../evil"), lambda: root.open("x\0y"),
                   lambda: root.rename("x\0", "y", replace=False)):
            with pytest.raises(InvalidPathError):
                op()
    assert _tree(tmp_path) == []


# -- rename flags through Root.rename, every backend ------------------------------

def test_rename_without_replace_refuses_an_existing_destination(make_root, tmp_path):
    (tmp_path / "src").write_bytes(b"source")
    (tmp_path / "dst").write_bytes(b"destination")
    root = make_root(tmp_path)
    with pytest.raises(FileExistsError) as info:
        root.rename("src", "dst", replace=False)
    assert info.value.filename == "dst"
    assert (tmp_path / "src").read_bytes() == b"source"
    assert (tmp_path / "dst").read_bytes() == b"destination"
    root.rename("src", "sub-free-name", replace=False)
    assert not (tmp_path / "src").exists()
    assert (tmp_path / "sub-free-name").read_bytes() == b"source"


def test_rename_without_replace_refuses_a_dangling_symlink_destination(make_root, tmp_path):
    """A symlink at the destination is "existing", even when it dangles; it
    is neither followed nor replaced."""
    (tmp_path / "src").write_bytes(b"source")
    (tmp_path / "dst").symlink_to("nowhere")
    root = make_root(tmp_path)
    with pytest.raises(FileExistsError):
        root.rename("src", "dst", replace=False)
    assert os.readlink(tmp_path / "dst") == "nowhere"
    assert not (tmp_path / "nowhere").exists()


def test_rename_exchange_swaps_atomically(make_root, tmp_path):
    (tmp_path / "a").write_bytes(b"A")
    (tmp_path / "d").mkdir()
    (tmp_path / "d" / "inner").write_bytes(b"inner")
    root = make_root(tmp_path)
    root.rename("a", "d", exchange=True)
    assert (tmp_path / "d").read_bytes() == b"A"
    assert (tmp_path / "a" / "inner").read_bytes() == b"inner"
    with pytest.raises(FileNotFoundError):
        root.rename("a", "missing", exchange=True)
    assert (tmp_path / "a" / "inner").read_bytes() == b"inner"


def test_rename_exchange_swaps_symlinks_themselves(make_root, tmp_path):
    (tmp_path / "f").write_bytes(b"F")
    (tmp_path / "link").symlink_to("f")
    (tmp_path / "g").write_bytes(b"G")
    root = make_root(tmp_path)
    root.rename("link", "g", exchange=True)
    assert os.readlink(tmp_path / "g") == "f"
    assert (tmp_path / "link").read_bytes() == b"G"
    assert (tmp_path / "f").read_bytes() == b"F"


def test_rename_flags_at_the_backend(tmp_path, backend):
    (tmp_path / "a").write_bytes(b"A")
    (tmp_path / "b").write_bytes(b"B")
    dfd = os.open(tmp_path, os.O_RDONLY | os.O_DIRECTORY)
    try:
        with pytest.raises(FileExistsError):
            backend.rename_at(dfd, "a", dfd, "b", RENAME_NOREPLACE)
        backend.rename_at(dfd, "a", dfd, "b", RENAME_EXCHANGE)
        assert (tmp_path / "a").read_bytes() == b"B"
        assert (tmp_path / "b").read_bytes() == b"A"
        with pytest.raises(OSError) as info:  # both at once is meaningless
            backend.rename_at(dfd, "a", dfd, "b", RENAME_NOREPLACE | RENAME_EXCHANGE)
        assert info.value.errno == errno.EINVAL
        with pytest.raises(OSError) as info:  # an unknown flag never reaches the kernel
            backend.rename_at(dfd, "a", dfd, "c", 0x80)
        assert info.value.errno == errno.EINVAL
    finally:
        os.close(dfd)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a", "b"]


# -- createDirectoryAt ------------------------------------------------------------

def _plant(outside):
    """Replace a just-made directory ``name`` (in ``dirfd``) with a symlink to ``outside``."""
    def plant(dirfd, name):
        os.rmdir(name, dir_fd=dirfd)
        os.symlink(str(outside), name, dir_fd=dirfd)
    return plant


@pytest.fixture
def planted(monkeypatch, tmp_path, request):
    """``install(backend_name)`` makes the next create_directory_at of that
    backend find a symlink to ``tmp_path/outside`` where it made its directory.

    For the native backend the same C is used, built with its test hook
    (the ``native_test_module`` fixture; the installed module has none) and
    put behind the native backend's calls for the test."""
    outside = tmp_path / "outside"
    outside.mkdir()
    hooks = []

    def install(name):
        plant = _plant(outside)
        if name == "native":
            variant = request.getfixturevalue("native_test_module")
            from corral.contained import _native_backend
            monkeypatch.setattr(_native_backend, "_lib", variant.lib)
            monkeypatch.setattr(_native_backend, "_ffi", variant.ffi)

            def hook(dirfd, cname):
                plant(dirfd, variant.ffi.string(cname).decode())
            callback = variant.ffi.callback("void(int, const char *)", hook)
            hooks.append((variant, callback))  # keep it alive while C holds it
            variant.lib.corral_set_create_directory_hook(callback)
        else:
            real_mkdir = os.mkdir

            def mkdir(path, mode=0o777, *, dir_fd=None):
                real_mkdir(path, mode, dir_fd=dir_fd)
                plant(dir_fd, path)
            monkeypatch.setattr(os, "mkdir", mkdir)
        return outside

    yield install
    for variant, _callback in hooks:
        variant.lib.corral_set_create_directory_hook(variant.ffi.NULL)


def _backends_here():
    return [name for name in ("native", "os") if name != "native" or NATIVE is not None]


@pytest.mark.parametrize("name", _backends_here())
def test_create_directory_at_refuses_a_symlink_planted_after_mkdirat(tmp_path, planted, name):
    backend = backend_by_name(name)
    work = tmp_path / "work"
    work.mkdir()
    outside = planted(name)
    dfd = os.open(work, os.O_RDONLY | os.O_DIRECTORY)
    try:
        with pytest.raises(OSError) as info:
            backend.create_directory_at(dfd, "new", 0o755)
    finally:
        os.close(dfd)
    # O_DIRECTORY|O_NOFOLLOW on a symlink: ENOTDIR with O_PATH (Linux), ELOOP otherwise
    assert info.value.errno in (errno.ENOTDIR, errno.ELOOP)
    if name == "native":
        assert "directory created, but reopening it failed" in str(info.value)
    assert os.path.islink(work / "new")
    assert list(outside.iterdir()) == []


def test_makedirs_never_continues_through_a_planted_symlink(make_root, tmp_path, planted):
    work = tmp_path / "work"
    work.mkdir()
    outside = planted(make_root.backend_name)
    root = make_root(work)
    with pytest.raises(OSError) as info:
        root.makedirs("a/b/c")
    assert info.value.errno in (errno.ENOTDIR, errno.ELOOP)
    assert info.value.filename == "a/b/c"
    assert list(outside.iterdir()) == []  # b and c were never made out there
    assert _tree(work) == [("a", True)]


def test_create_directory_at_returns_the_directory_it_made(make_root, tmp_path):
    root = make_root(tmp_path)
    assert root.makedirs("a/b/c", mode=0o750) == ["a", "a/b", "a/b/c"]
    info = os.stat(tmp_path / "a" / "b" / "c")
    assert stat.S_ISDIR(info.st_mode)
    assert stat.S_IMODE(info.st_mode) == 0o750 & ~_umask()
    dfd = os.open(tmp_path / "a" / "b", os.O_RDONLY | os.O_DIRECTORY)
    try:
        fd = root.backend.create_directory_at(dfd, "d", 0o700)
        try:
            assert os.get_inheritable(fd) is False
            assert os.path.samestat(os.fstat(fd), os.stat(tmp_path / "a" / "b" / "d"))
        finally:
            os.close(fd)
        with pytest.raises(FileExistsError):
            root.backend.create_directory_at(dfd, "d", 0o700)
    finally:
        os.close(dfd)


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


# -- the kernel-enforced fast path -------------------------------------------------

ESCAPE_ERRNOS = {errno.EXDEV, errno.EACCES, getattr(errno, "ENOTCAPABLE", errno.EXDEV)}
AT_FDCWD = -2 if sys.platform == "darwin" else -100


def test_openat2_is_kernel_enforced(tmp_path, backend):
    if not backend.has_openat2:
        assert backend.openat2_reason  # says why (disabled, or the kernel lacks it)
        with pytest.raises(OSError) as info:
            backend.openat2(AT_FDCWD, "x", os.O_RDONLY, 0, RESOLVE_BENEATH)
        assert info.value.errno == errno.ENOSYS
        return
    work = tmp_path / "work"
    (work / "sub").mkdir(parents=True)
    (work / "sub" / "f").write_bytes(b"inside")
    (tmp_path / "secret").write_bytes(b"outside")
    (work / "up").symlink_to("..")
    (work / "in").symlink_to("sub/f")
    dfd = os.open(work, os.O_RDONLY | os.O_DIRECTORY)
    resolve = RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS
    try:
        inside_paths = ["sub/f", "in"]
        if sys.platform.startswith("linux"):
            inside_paths.append("sub/../sub/f")  # Linux lets ".." move within the root
        for inside in inside_paths:
            fd = backend.openat2(dfd, inside, os.O_RDONLY | os.O_CLOEXEC, 0, resolve)
            try:
                assert os.read(fd, 100) == b"inside"
            finally:
                os.close(fd)
        for escape in ("../secret", "up/secret", str(tmp_path / "secret"), "sub/../../secret"):
            with pytest.raises(OSError) as info:
                backend.openat2(dfd, escape, os.O_RDONLY | os.O_CLOEXEC, 0, resolve)
            # EXDEV on Linux; Darwin's O_RESOLVE_BENEATH answers EACCES
            assert info.value.errno in ESCAPE_ERRNOS, escape
    finally:
        os.close(dfd)


# -- never under pyfakefs --------------------------------------------------------------

def test_native_code_never_runs_under_pyfakefs(tmp_path):
    """pyfakefs fds collide with real ones: a native call on one would act on
    the real directory behind that number.  Hold a real fd on a real
    directory, then show that nothing native runs while patched."""
    from pyfakefs.fake_filesystem_unittest import Patcher

    from corral.testing.backends import FakeFsBackend

    real = tmp_path / "real"
    real.mkdir()
    real_fd = os.open(real, os.O_RDONLY | os.O_DIRECTORY)
    try:
        with Patcher() as patcher:
            patcher.fs.create_dir("/fake/work")
            if NATIVE is not None:
                with pytest.raises(OSError) as info:
                    Root("/fake/work", backend=NATIVE)
                assert info.value.errno == errno.EINVAL
                assert "pyfakefs" in str(info.value)
                with pytest.raises(OSError):
                    NativeBackend()
            # no default under pyfakefs, and no plain os backend either (its
            # pread and fchmod are real calls): only the fake-safe backend
            with pytest.raises(OSError, match="FakeFsBackend"):
                default_backend()
            with pytest.raises(OSError, match="FakeFsBackend"):
                Root("/fake/work", backend=OsBackend(openat2=False))
            backend = FakeFsBackend()
            assert backend.name == "os" and backend.has_openat2 is False
            with Root("/fake/work", backend=backend) as root:
                assert root.makedirs("made/here") == ["made", "made/here"]
                root.write_bytes("made/here/f", b"fake")
                assert root.read_bytes("made/here/f") == b"fake"
            assert patcher.fs.exists("/fake/work/made/here/f")
            assert backend_report()["pyfakefs"] is True
    finally:
        os.close(real_fd)
    assert list(real.iterdir()) == []
    assert not os.path.exists("/fake")


# -- the backend protocol and the published guarantee ------------------------------------

def test_backend_protocol_methods_raise_not_implemented():
    from corral.contained import Backend

    bare = Backend()
    calls = {"open_at": (3, "x", 0), "openat2": (3, "x", 0, 0, 0), "close": (3,),
             "fstat": (3,), "lstat_at": (3, "x"), "readlink_at": (3, "x"),
             "mkdir_at": (3, "x", 0o700), "create_directory_at": (3, "x", 0o700),
             "unlink_at": (3, "x"), "rmdir_at": (3, "x"), "rename_at": (3, "a", 3, "b"),
             "link_at": (3, "a", 3, "b"), "symlink_at": ("t", 3, "x"), "scandir": (3,),
             "read": (3, 1), "pread": (3, 1, 0), "write": (3, b"x"), "fsync": (3,),
             "fchmod": (3, 0o600)}
    for method, args in calls.items():
        with pytest.raises(NotImplementedError, match=method):
            getattr(bare, method)(*args)
    assert bare.mount_flags(3) == 0 and bare.protected_symlinks() is False
    assert bare.avoids_symlink_attacks is False and bare.open_beneath is None


def test_avoids_symlink_attacks_is_computed_from_the_platform(tmp_path, monkeypatch):
    from corral.contained import fd_capabilities

    assert fd_capabilities() is True and Root.avoids_symlink_attacks is True
    assert all(backend_by_name(n).avoids_symlink_attacks for n in BACKENDS)
    # a Python whose os.open takes no dir_fd (as on some platforms): no guarantee
    monkeypatch.setattr(os, "supports_dir_fd", os.supports_dir_fd - {os.open})
    assert fd_capabilities() is False
    weak = OsBackend(openat2=False)
    assert weak.avoids_symlink_attacks is False
    with pytest.raises(OSError) as info:
        Root(tmp_path, backend=weak)
    assert info.value.errno == errno.ENOSYS
    monkeypatch.setattr(os, "supports_fd", os.supports_fd - {os.scandir})
    assert fd_capabilities() is False


def test_a_fake_root_collected_after_pyfakefs_closes_no_real_fd(tmp_path):
    """A Root (or Handle) made under pyfakefs holds a fake fd number; closed
    after the patcher is gone, it must not close the real fd that has that
    number now."""
    from pyfakefs.fake_filesystem_unittest import Patcher

    from corral.testing.backends import FakeFsBackend

    with Patcher() as patcher:
        patcher.fs.create_file("/fake/work/f", contents="x")
        root = Root("/fake/work", backend=FakeFsBackend())
        handle = root.open_handle("f")
        numbers = (root.fileno(), handle.fd)
    real = {n: os.open(tmp_path, os.O_RDONLY) for n in range(2)}
    try:
        before = {fd: os.fstat(fd).st_ino for fd in range(3, 64) if _is_open(fd)}
        handle.close()
        root.close()
        after = {fd: os.fstat(fd).st_ino for fd in range(3, 64) if _is_open(fd)}
        assert after == before, (numbers, sorted(set(before) - set(after)))
    finally:
        for fd in real.values():
            os.close(fd)


def _is_open(fd: int) -> bool:
    try:
        os.fstat(fd)
    except OSError:
        return False
    return True


@pytest.mark.parametrize("name", [n for n in _backends_here() if n == "native"])
def test_the_installed_module_has_no_test_hook(name):
    """The hook that lets a test plant a symlink between mkdirat and the
    open exists only in test builds: the module a user runs has no writable
    function pointer to call."""
    assert not hasattr(lib, "corral_set_create_directory_hook")


def test_numbers_c_cannot_hold_answer_as_the_os_module_does(make_root, tmp_path):
    """Root.open with a mode or flags past what C holds: the one-call native
    open steps aside, and every backend answers as ``os.open`` does (a mode
    beyond 0o777 is EINVAL; flags past a C int are ``OverflowError``)."""
    (tmp_path / "f").write_bytes(b"x")
    root = make_root(tmp_path)
    with pytest.raises(OSError) as caught:
        root.open("f", os.O_RDONLY, 10**40)
    assert caught.value.errno == errno.EINVAL
    for flags in (10**40, 2**31):
        with pytest.raises(OverflowError):
            root.open("f", flags)
    os.close(root.open("f", os.O_RDONLY))  # and the root still works
