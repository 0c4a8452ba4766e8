"""``Root.hold_parent`` and ``HeldParent``: a file's directory held by one
``openat2`` that follows no link, for one replace of that file on the
identity opened (the tools' plain write).  Run on every backend config: where
the root has no openat2 fast path the answer is ``None`` (the caller takes
``Root.target``)."""

from __future__ import annotations

import errno
import fcntl
import gc
import os
import stat

import pytest

from corral.contained import HeldParent, StaleError
from corral.contained._backend import REPLACED

from ..helpers import fds_opened_since, open_fds


def _fast(root) -> bool:
    return bool(root.info()["fast_path"])


def _tree(tmp_path):
    (tmp_path / "a" / "b").mkdir(parents=True)
    f = tmp_path / "a" / "b" / "f.txt"
    f.write_bytes(b"old\n")
    os.chmod(f, 0o640)
    return f


def _temps(directory) -> list[str]:
    return [n for n in os.listdir(directory) if n.endswith(".corral-tmp")]


def test_replace_keeps_mode_and_xattrs_and_makes_a_new_file(tmp_path, make_root):
    f = _tree(tmp_path)
    try:
        os.setxattr(f, "user.corral-test", b"kept")
        xattrs = True
    except OSError:
        xattrs = False  # the filesystem has none: the mode alone is carried
    root = make_root(tmp_path)
    held = root.hold_parent("a/b/f.txt")
    if not _fast(root):
        assert held is None
        return
    assert isinstance(held, HeldParent)
    before = os.stat(f)
    with held:
        assert held.path == "a/b/f.txt" and held.name == "f.txt"
        assert held.lock()
        info = held.open_file()
        assert info is not None and (info.st_dev, info.st_ino) == (before.st_dev, before.st_ino)
        assert held.head(2) == b"ol"
        assert held.head(100) == b"old\n"
        held.replace(b"new content\n")
    after = os.stat(f)
    assert f.read_bytes() == b"new content\n"
    assert after.st_ino != before.st_ino
    assert stat.S_IMODE(after.st_mode) == 0o640
    if xattrs:
        assert os.getxattr(f, "user.corral-test") == b"kept"
    assert _temps(f.parent) == []
    assert held.fileno() == -1  # closed by the block


@pytest.mark.parametrize("spelled", ["f.txt", "a/../a/b/f.txt", "/a/b/f.txt", "a/b/",
                                     "a/b/f.txt/", "link/b/f.txt", "a/linkb/f.txt",
                                     "missing/f.txt", "a/b/f.txt\0x", ""])
def test_not_one_plain_resolution_is_none(tmp_path, make_root, spelled):
    """A path the one openat2 cannot answer is ``None``, nothing raised,
    nothing opened: a single name (the root itself holds it), ``..``, an
    absolute path, a directory's spelling, a link or a missing directory
    on the way, a NUL."""
    _tree(tmp_path)
    (tmp_path / "f.txt").write_text("top\n")
    os.symlink("a", tmp_path / "link")
    os.symlink("b", tmp_path / "a" / "linkb")
    root = make_root(tmp_path)
    gc.collect()  # an earlier test's objects closed now, not during the call
    before = open_fds()
    assert root.hold_parent(spelled) is None
    assert not fds_opened_since(before)


def test_a_closed_root_is_none(tmp_path, make_root):
    _tree(tmp_path)
    root = make_root(tmp_path)
    root.close()
    assert root.hold_parent("a/b/f.txt") is None


def test_the_lock_excludes_and_is_excluded(tmp_path, make_root):
    _tree(tmp_path)
    root = make_root(tmp_path)
    if not _fast(root):
        assert root.hold_parent("a/b/f.txt") is None
        return
    other = os.open(tmp_path / "a" / "b", os.O_RDONLY | os.O_DIRECTORY)
    try:
        fcntl.flock(other, fcntl.LOCK_EX)
        with root.hold_parent("a/b/f.txt") as held:
            assert not held.lock()  # held elsewhere: no wait, False
        fcntl.flock(other, fcntl.LOCK_UN)
        with root.hold_parent("a/b/f.txt") as held:
            assert held.lock()
            with pytest.raises(OSError) as raised:
                fcntl.flock(other, fcntl.LOCK_EX | fcntl.LOCK_NB)
            assert raised.value.errno in (errno.EWOULDBLOCK, errno.EAGAIN)
        fcntl.flock(other, fcntl.LOCK_EX | fcntl.LOCK_NB)  # let go by the close
    finally:
        os.close(other)


def test_open_file_is_none_for_a_link_or_nothing(tmp_path, make_root):
    f = _tree(tmp_path)
    os.symlink("f.txt", f.parent / "ln")
    root = make_root(tmp_path)
    if not _fast(root):
        return
    for name, what in (("ln", "a link, never followed"), ("gone", "nothing there")):
        with root.hold_parent(f"a/b/{name}") as held:
            assert held.open_file() is None, what
            with pytest.raises(ValueError):
                held.replace(b"x")
    assert os.readlink(f.parent / "ln") == "f.txt" and f.read_bytes() == b"old\n"


def test_a_fifo_opens_without_blocking_and_is_not_replaced(tmp_path, make_root):
    _tree(tmp_path)
    os.mkfifo(tmp_path / "a" / "b" / "pipe")
    root = make_root(tmp_path)
    if not _fast(root):
        return
    with root.hold_parent("a/b/pipe") as held:
        info = held.open_file()
        assert info is not None and stat.S_ISFIFO(info.st_mode)
        with pytest.raises(ValueError):
            held.replace(b"x")
    assert stat.S_ISFIFO(os.lstat(tmp_path / "a" / "b" / "pipe").st_mode)


@pytest.mark.parametrize("swap", ["replaced", "removed", "link"])
def test_a_file_swapped_after_the_open_is_stale_and_untouched(tmp_path, make_root, swap):
    f = _tree(tmp_path)
    root = make_root(tmp_path)
    if not _fast(root):
        return
    with root.hold_parent("a/b/f.txt") as held:
        assert held.open_file() is not None
        if swap == "replaced":
            other = f.parent / "other"
            other.write_bytes(b"someone else's\n")
            os.rename(other, f)
        elif swap == "removed":
            f.unlink()
        else:
            f.unlink()
            os.symlink("/etc/passwd", f)
        with pytest.raises(StaleError) as raised:
            held.replace(b"mine\n")
        assert raised.value.filename == "a/b/f.txt"
    if swap == "replaced":
        assert f.read_bytes() == b"someone else's\n"
    elif swap == "removed":
        assert not os.path.lexists(f)
    else:
        assert os.readlink(f) == "/etc/passwd"
    assert _temps(f.parent) == []


def test_the_directory_moved_after_the_hold_is_written_where_it_went(tmp_path, make_root):
    """Nothing is resolved again: the held fd is the directory, wherever it
    went, and a link put where it was is never followed."""
    f = _tree(tmp_path)
    root = make_root(tmp_path)
    if not _fast(root):
        return
    outside = tmp_path.parent / f"{tmp_path.name}-outside"
    outside.mkdir()
    (outside / "f.txt").write_bytes(b"outside\n")
    with root.hold_parent("a/b/f.txt") as held:
        assert held.open_file() is not None
        os.rename(f.parent, tmp_path / "moved")
        os.symlink(str(outside), f.parent)
        held.replace(b"mine\n")
    assert (tmp_path / "moved" / "f.txt").read_bytes() == b"mine\n"
    assert (outside / "f.txt").read_bytes() == b"outside\n"


def test_holds_looks_beside_the_file(tmp_path, make_root):
    f = _tree(tmp_path)
    (f.parent / "HEAD").write_text("ref\n")
    os.symlink("nowhere", f.parent / "dangling")
    root = make_root(tmp_path)
    if not _fast(root):
        return
    with root.hold_parent("a/b/f.txt") as held:
        assert held.holds("HEAD")
        assert held.holds("dangling")  # the link itself, not followed
        assert not held.holds("objects")


class _Recording:
    """A backend recording the mode each temporary file is made with (by
    its open, or by the one call of a whole replace that made it), and the
    calls made on it, by name."""

    def __new__(cls, inner):
        class Recording(type(inner)):  # type: ignore[misc]
            made: list[int] = []
            calls: list[str] = []

            def open_at(self, dir_fd, path, flags, mode=0o777):
                if path.endswith(".corral-tmp"):
                    Recording.made.append(mode)
                return super().open_at(dir_fd, path, flags, mode)

            def fchmod(self, fd, mode):
                Recording.calls.append("fchmod")
                return super().fchmod(fd, mode)

            def replace_file(self, dir_fd, tmp, name, data, flags, mode, owner, expect):
                made = super().replace_file(dir_fd, tmp, name, data, flags, mode, owner, expect)
                if made == REPLACED:  # (else nothing is left of it: the open follows)
                    Recording.made.append(mode)
                return made

            def replace_held(self, dir_fd, source_fd, tmp, name, data, flags, mode, owner,
                             expect):
                made = super().replace_held(dir_fd, source_fd, tmp, name, data, flags, mode,
                                            owner, expect)
                if made == REPLACED:  # (else nothing is left of it: the open follows)
                    Recording.made.append(mode)
                return made

        return Recording(openat2=True)


def _replace_recorded(tmp_path, make_root, mode: int, xattr: bool = False):
    """Replace a file of ``mode`` through a held parent: the temporary
    file's mode at creation, the fchmod calls and the mode after (``None``
    where the config has no fast path or the filesystem no xattrs)."""
    f = _tree(tmp_path)
    os.chmod(f, mode)
    if xattr:
        try:
            os.setxattr(f, "user.corral-test", b"kept")
        except OSError:
            return None
    from corral.contained import Root, backend_by_name
    backend = _Recording(backend_by_name(make_root.backend_name))
    if not make_root.fast_path or not backend.has_openat2:
        return None
    type(backend).made.clear()
    type(backend).calls.clear()
    with Root(str(tmp_path), backend=backend, fast_path=True) as root:
        held = root.hold_parent("a/b/f.txt")
        assert held is not None
        with held:
            assert held.open_file() is not None
            held.replace(b"new\n")
    assert f.read_bytes() == b"new\n"
    if xattr:
        assert os.getxattr(f, "user.corral-test") == b"kept"
    return type(backend).made, type(backend).calls, stat.S_IMODE(os.stat(f).st_mode)


@pytest.mark.parametrize("mode", [0o640, 0o604, 0o660, 0o044, 0o664])
def test_a_file_some_see_more_of_than_others_is_replaced_by_a_temporary_0600(
        tmp_path, make_root, mode):
    """Permission bits that give a group other than everyone's (or the owner
    less than everyone) would show someone the temporary file (owned by the
    writer, its group maybe not the file's) who cannot read the file: it is
    made 0600, its bits set after the content."""
    recorded = _replace_recorded(tmp_path, make_root, mode)
    if recorded is None:
        return
    made, calls, after = recorded
    assert made == [0o600] and calls == ["fchmod"] and after == mode


@pytest.mark.parametrize("mode", [0o644, 0o755, 0o600, 0o700, 0o444, 0o400])
def test_a_file_every_other_user_sees_alike_is_replaced_without_a_chmod(
        tmp_path, make_root, mode):
    """Bits that give the group what they give everyone else, and the owner
    no less: the temporary file made with them shows no one what the file
    did not, so no chmod follows (where the umask left them whole)."""
    recorded = _replace_recorded(tmp_path, make_root, mode)
    if recorded is None:
        return
    made, calls, after = recorded
    umask = os.umask(0)
    os.umask(umask)
    assert made == [mode] and after == mode
    assert calls == ([] if mode & umask == 0 else ["fchmod"])


def test_a_file_with_extended_attributes_is_replaced_by_a_temporary_0600(tmp_path, make_root):
    """An ACL or a label may deny someone the bits allow: until they are
    carried over the temporary file is 0600."""
    recorded = _replace_recorded(tmp_path, make_root, 0o644, xattr=True)
    if recorded is None:
        return
    made, calls, after = recorded
    assert made == [0o600] and calls == ["fchmod"] and after == 0o644
