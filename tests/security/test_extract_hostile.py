"""THREATS.md row 28: hostile tar and zip archives through ``Root.extract``.

Every archive is built here, member by member.  Each test extracts it on
every backend config (``make_root``) into ``base/ws`` next to
``base/outside`` (a secret, a file to overwrite) and ``base/ws-evil`` (the
sibling sharing the root's name as a prefix), and checks that

* nothing outside ``ws`` was created, changed or removed (snapshot);
* every hostile member is reported refused, with the reason;
* every benign member landed byte-exact (and nothing hostile landed at all).

tests/security/test_archives.py drives the Root with a deliberately naive
extractor of its own (the root alone keeps it safe); these tests drive
corral's extractor, which also applies tarfile's data-filter rules.
"""

from __future__ import annotations

import gzip
import io
import os
import stat
import tarfile
import zipfile
from collections.abc import Iterable
from pathlib import Path

import pytest

from corral.contained import ExtractReason, Root
from corral.testing import changes, snapshot

SECRET = b"OUTSIDE-SECRET"

# hostile zips repeat names on purpose (a link, then a file over it)
pytestmark = pytest.mark.filterwarnings("ignore:Duplicate name")


# -- building archives -------------------------------------------------------------------

def tar_bytes(entries: Iterable[tuple], fmt: int = tarfile.GNU_FORMAT) -> bytes:
    """``(kind, name, payload[, mode])``: kind ``file`` (payload: bytes),
    ``dir``, ``symlink`` / ``hardlink`` (payload: the link name), ``chr``,
    ``blk``, ``fifo``."""
    types = {"dir": tarfile.DIRTYPE, "symlink": tarfile.SYMTYPE, "hardlink": tarfile.LNKTYPE,
             "chr": tarfile.CHRTYPE, "blk": tarfile.BLKTYPE, "fifo": tarfile.FIFOTYPE}
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w", format=fmt) as tf:
        for kind, name, payload, *rest in entries:
            info = tarfile.TarInfo(name)
            info.mtime = 1_600_000_000
            if rest:
                info.mode = rest[0]
            if kind == "file":
                info.size = len(payload)
                tf.addfile(info, io.BytesIO(payload))
                continue
            info.type = types[kind]
            if kind in ("symlink", "hardlink"):
                info.linkname = payload
            if kind in ("chr", "blk"):
                info.devmajor, info.devminor = 1, 3  # /dev/null's
            tf.addfile(info)
    return buf.getvalue()


def zip_bytes(entries: Iterable[tuple]) -> bytes:
    """As :func:`tar_bytes`; ``fifo`` and ``chr`` become entries whose Unix
    mode says so."""
    kinds = {"symlink": stat.S_IFLNK, "dir": stat.S_IFDIR, "file": stat.S_IFREG,
             "fifo": stat.S_IFIFO, "chr": stat.S_IFCHR}
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        for kind, name, payload, *rest in entries:
            mode = rest[0] if rest else (0o755 if kind == "dir" else 0o644)
            info = zipfile.ZipInfo(name + "/" if kind == "dir" and not name.endswith("/")
                                   else name)
            info.create_system = 3
            info.external_attr = (kinds[kind] | mode) << 16
            data = payload.encode() if isinstance(payload, str) else (payload or b"")
            zf.writestr(info, data)
    return buf.getvalue()


# -- the site --------------------------------------------------------------------------------

@pytest.fixture
def site(sec_tmp):
    base = Path(sec_tmp)
    (base / "ws").mkdir()
    for d in ("outside", "ws-evil"):
        (base / d).mkdir()
        (base / d / "secret").write_bytes(SECRET)
    (base / "outside" / "flag").write_bytes(SECRET)
    return base


def outside(site: Path) -> dict:
    return snapshot(site, exclude=("ws",))


def run(make_root, site: Path, data: bytes, **kw):
    """Extract ``data`` (tar or zip, detected) through a Root of ``site/ws``;
    assert nothing outside changed; return the Extraction."""
    before = outside(site)
    root = make_root(site / "ws")
    result = root.extract(io.BytesIO(data), **kw)
    assert changes(before, outside(site)) == []
    return result


def reasons(result) -> dict[str, str]:
    """``{name: reason}`` of the refused members (the last refusal of a name)."""
    return {r.name.rstrip("/"): r.reason.value for r in result.refused}


def landed(site: Path, rel: str) -> bytes:
    path = site / "ws" / rel
    assert not path.is_symlink(), f"{rel} is a symlink"
    return path.read_bytes()


BUILDERS = {"tar": tar_bytes, "zip": zip_bytes}


# -- names --------------------------------------------------------------------------------------

@pytest.mark.parametrize("fmt", ["tar", "zip"])
def test_zip_slip_and_absolute_names(make_root, site, fmt):
    out = str(site / "outside")
    members = [
        ("file", "ok/file", b"fine"),
        ("file", "../x", b"slip"),
        ("file", "ok/../../x", b"slip"),
        ("file", "a/b/../../../x", b"slip"),
        ("file", "../ws-evil/x", b"prefix sibling"),
        ("dir", "../newdir", None),
        ("file", out + "/abs", b"absolute"),
        ("file", "/" + out + "/abs2", b"absolute"),
        ("file", "/etc/corral-test-should-not-exist", b"absolute"),
        ("dir", out + "/absdir", None),
        ("file", "ok/./inside/../kept", b"kept"),
    ]
    result = run(make_root, site, BUILDERS[fmt](members))
    assert reasons(result) == {
        "../x": "outside", "ok/../../x": "outside", "a/b/../../../x": "outside",
        "../ws-evil/x": "outside", "../newdir": "outside", out + "/abs": "absolute",
        "/" + out + "/abs2": "absolute", "/etc/corral-test-should-not-exist": "absolute",
        out + "/absdir": "absolute"}
    assert landed(site, "ok/file") == b"fine" and landed(site, "ok/kept") == b"kept"
    assert not (site / "x").exists() and not (site / "newdir").exists()
    assert not os.path.exists("/etc/corral-test-should-not-exist")
    for r in result.refused:  # an error never names a host path
        assert str(site) not in str(r.error or "") or r.reason == ExtractReason.ABSOLUTE


# -- symlinks, then members through them ----------------------------------------------------------

@pytest.mark.parametrize("fmt", ["tar", "zip"])
def test_symlink_then_a_member_through_it(make_root, site, fmt):
    out = str(site / "outside")
    members = [
        ("dir", "sub", None),
        ("symlink", "abs", out),  # absolute: refused, so "abs/x" makes a directory
        ("file", "abs/x", b"through abs"),
        ("symlink", "rel", "../outside"),  # climbs out: refused
        ("file", "rel/secret", b"overwrite"),
        ("symlink", "relfile", "../outside/secret"),
        ("file", "relfile", b"replaces the name, never writes through"),
        ("symlink", "inside", "sub"),  # stays inside: made, and followed inside
        ("file", "inside/f", b"via an in-root link"),
        ("symlink", "dang", "../outside/new-file"),  # dangling, climbing: refused
        ("file", "dang", b"create"),
        ("symlink", "c1", "c2"),  # a chain: c1 -> c2 -> d/../../outside
        ("dir", "d", None),
        ("symlink", "c2", "d/../../outside"),
        ("file", "c1/y", b"chain"),
        ("symlink", "later", "d/made-later"),  # dangling, plain names: fine
        ("file", "d/made-later", b"the link's target"),
    ]
    result = run(make_root, site, BUILDERS[fmt](members))
    assert reasons(result) == {"abs": "link_absolute", "rel": "link_outside",
                               "relfile": "link_outside", "dang": "link_outside",
                               "c2": "link_outside", "c1/y": "conflict"}
    ws = site / "ws"
    assert landed(site, "abs/x") == b"through abs" and (ws / "abs").is_dir()
    assert landed(site, "rel/secret") == b"overwrite" and (ws / "rel").is_dir()
    assert landed(site, "relfile") == b"replaces the name, never writes through"
    assert os.readlink(ws / "inside") == "sub" and landed(site, "sub/f") == b"via an in-root link"
    assert landed(site, "dang") == b"create"
    assert os.readlink(ws / "c1") == "c2" and not os.path.lexists(ws / "c2")
    assert os.readlink(ws / "later") == "d/made-later"
    assert (ws / "later").read_bytes() == b"the link's target"
    assert not (site / "outside" / "new-file").exists()


def test_links_already_in_the_tree_redirect_nothing_outside(make_root, site):
    """GNU tar CVE-2025-45582: a first archive (or anyone) planted
    ``dir -> ../outside``; a second archive writes ``dir/x``, makes
    ``dir/sub/``, hard-links ``dir/secret``, overwrites the link's target."""
    ws = site / "ws"
    os.symlink("../outside", ws / "dir")
    os.symlink(str(site / "outside" / "secret"), ws / "abs-secret")
    os.symlink("../outside/secret", ws / "rel-secret")
    for fmt in ("tar", "zip"):
        members = [("file", "dir/x", b"second"), ("dir", "dir/sub", None),
                   ("file", "dir/secret", b"overwrite")]
        if fmt == "tar":
            members += [("hardlink", "h1", "dir/secret"), ("hardlink", "h2", "abs-secret"),
                        ("hardlink", "h3", "rel-secret")]
        result = run(make_root, site, BUILDERS[fmt](members))
        want = {"dir/x": "outside", "dir/sub": "outside", "dir/secret": "outside"}
        if fmt == "tar":
            want.update(h1="link_outside", h2="link_outside", h3="link_outside")
        assert reasons(result) == want, fmt
        assert result.extracted == []
    assert (site / "outside" / "secret").read_bytes() == SECRET


def test_realpath_limit_chain_cve_2025_4517(make_root, site):
    """The symlink-chain plus path-length bypass of tarfile's filters: short
    links ``a``, ``a/b``, ... to long directory names make ``a/b/.../p``
    expand past PATH_MAX, so ``os.path.realpath`` stops expanding; a link
    there points back up to the top, and ``escape -> <that link>/..`` is the
    parent of the destination.  A hard link through ``escape`` then reaches
    an outside file, and members write through it.  The root resolves every
    link itself: ``escape`` is refused, the hard link finds nothing, and the
    files after it land inside."""
    steps = "abcdefghijklmnop"
    dest_len = len(str(site / "ws")) + 1
    component = "d" * min(255, (4096 - dest_len) // (len(steps) + 1))
    members, path = [], ""
    for step in steps:
        members.append(("dir", f"{path}{component}", None, 0o777))
        members.append(("symlink", f"{path}{step}", component))
        path = f"{path}{component}/"
    linkpath = "/".join(steps) + "/" + "l" * 254
    members += [
        ("symlink", linkpath, "/".join([".."] * len(steps))),
        ("symlink", "escape", linkpath + "/.."),
        ("hardlink", "flaglink", "escape/flag"),
        ("file", "flaglink", b"overwrite"),
        ("file", "escape/newfile", b"new"),
    ]
    result = run(make_root, site, tar_bytes(members))
    assert reasons(result) == {"escape": "link_outside", "flaglink": "link_missing"}
    ws = site / "ws"
    assert (site / "outside" / "flag").read_bytes() == SECRET
    assert not (site / "newfile").exists()
    assert landed(site, "flaglink") == b"overwrite"
    assert landed(site, "escape/newfile") == b"new" and (ws / "escape").is_dir()
    # the chain and the long link lead inside (to the top): they were made
    assert os.readlink(ws / "a") == component
    assert Root(ws).realpath(linkpath) == "."


# -- hard links, special files, modes -----------------------------------------------------

def test_hard_links(make_root, site):
    ws = site / "ws"
    os.link(site / "outside" / "secret", ws / "pre-linked")  # already in the tree
    members = [
        ("file", "f", b"content"),
        ("hardlink", "h-inside", "f"),
        ("hardlink", "h-dotdot", "../outside/secret"),
        ("hardlink", "h-abs", str(site / "outside" / "secret")),
        ("hardlink", "h-missing", "nothing"),
        ("dir", "d", None),
        ("hardlink", "h-dir", "d"),
        ("symlink", "ls", "f"),
        ("hardlink", "h-to-link", "ls"),  # links the symlink's file, as CPython 3.14
        ("hardlink", "f", "h-inside"),  # onto its own inode: nothing changes
    ]
    result = run(make_root, site, tar_bytes(members))
    assert reasons(result) == {"h-dotdot": "link_outside", "h-abs": "link_absolute",
                               "h-missing": "link_missing", "h-dir": "link_directory"}
    assert os.stat(ws / "h-inside").st_ino == os.stat(ws / "f").st_ino
    assert os.stat(ws / "f").st_nlink == 3  # f, h-inside, h-to-link
    assert not os.path.islink(ws / "h-to-link") and os.readlink(ws / "ls") == "f"
    assert os.lstat(ws / "h-to-link").st_ino == os.stat(ws / "f").st_ino
    assert os.stat(site / "outside" / "secret").st_nlink == 2  # only the pre-existing link


@pytest.mark.parametrize("fmt", ["tar", "zip"])
def test_devices_fifos_and_setuid(make_root, site, fmt):
    members = [("fifo", "pipe", None), ("chr", "null", None), ("file", "suid", b"x", 0o4755),
               ("file", "sgid-sticky", b"x", 0o7777), ("file", "noexec", b"x", 0o644),
               ("file", "groupwrite", b"x", 0o666), ("file", "nothing", b"x", 0o000),
               ("file", "execonly", b"x", 0o111)]
    if fmt == "tar":
        members.insert(1, ("blk", "disk", None))
    result = run(make_root, site, BUILDERS[fmt](members))
    specials = {"pipe", "null"} | ({"disk"} if fmt == "tar" else set())
    assert reasons(result) == dict.fromkeys(specials, "special")
    ws = site / "ws"
    for name in specials:
        assert not os.path.lexists(ws / name)
    modes = {name: stat.S_IMODE(os.stat(ws / name).st_mode)
             for name in ("suid", "sgid-sticky", "noexec", "groupwrite", "nothing", "execonly")}
    # what tarfile's own data filter gives each of these modes
    assert modes == {"suid": 0o755, "sgid-sticky": 0o755, "noexec": 0o644,
                     "groupwrite": 0o644, "nothing": 0o600, "execonly": 0o711}
    for member in tarfile.open(fileobj=io.BytesIO(tar_bytes(
            [m for m in members if m[0] == "file"]))):
        assert tarfile.data_filter(member, str(ws)).mode == modes[member.name]


def test_stop_on_refusal(make_root, site):
    members = [("file", "a", b"1"), ("file", "../x", b"slip"), ("file", "b", b"2")]
    result = run(make_root, site, tar_bytes(members), stop_on_refusal=True)
    assert result.stopped and result.extracted == ["a"]
    assert [(r.name, r.reason) for r in result.refused] == [("../x", ExtractReason.OUTSIDE)]
    assert not (site / "ws" / "b").exists()


def test_long_and_invalid_names(make_root, site):
    members = [("file", "n/" + "x" * 256, b"long"), ("file", "ok", b"ok"),
               ("file", "d/" * 2100 + "f", b"too deep"), ("symlink", "empty-target", "")]
    result = run(make_root, site, tar_bytes(members, fmt=tarfile.PAX_FORMAT))
    assert reasons(result) == {"n/" + "x" * 256: "invalid_name", "d/" * 2100 + "f":
                               "invalid_name", "empty-target": "invalid_name"}
    assert landed(site, "ok") == b"ok"


# -- unreadable members, damaged streams ------------------------------------------------

def _two_member_zip(method: int) -> bytearray:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", method) as zf:
        zf.writestr("a.txt", b"hello " * 100)
        zf.writestr("b.txt", b"second")
    return bytearray(buf.getvalue())


def _first_entry(data: bytearray, flag: int = 0, method: int | None = None) -> bytes:
    """``data`` with the first entry's flag bits or-ed in and its compression
    method replaced, in its local header and in the central directory."""
    central = data.find(b"PK\x01\x02")
    data[6] |= flag
    data[central + 8] |= flag
    if method is not None:
        data[8:10] = method.to_bytes(2, "little")
        data[central + 10:central + 12] = method.to_bytes(2, "little")
    return bytes(data)


def _damaged_data(method: int) -> bytes:
    data = _two_member_zip(method)
    start = 30 + len("a.txt")  # a.txt's stored (or compressed) bytes
    data[start:start + 8] = b"\xff" * 8
    return bytes(data)


UNREADABLE_ZIPS = {
    "encrypted": lambda: _first_entry(_two_member_zip(zipfile.ZIP_DEFLATED), flag=1),
    "unknown-method": lambda: _first_entry(_two_member_zip(zipfile.ZIP_DEFLATED), method=99),
    "corrupt-deflate": lambda: _damaged_data(zipfile.ZIP_DEFLATED),
    "bad-crc": lambda: _damaged_data(zipfile.ZIP_STORED),
    "corrupt-lzma": lambda: _damaged_data(zipfile.ZIP_LZMA),
}


@pytest.mark.parametrize("kind", sorted(UNREADABLE_ZIPS))
def test_an_unreadable_zip_member_is_refused_and_the_rest_extracted(make_root, site, kind):
    result = run(make_root, site, UNREADABLE_ZIPS[kind]())
    assert reasons(result) == {"a.txt": "unreadable"}
    assert result.refused[0].message.startswith("the member's data cannot be read: ")
    assert result.extracted == ["b.txt"] and landed(site, "b.txt") == b"second"
    assert sorted(os.listdir(site / "ws")) == ["b.txt"]  # no a.txt, no temp file


@pytest.mark.parametrize("mode", ["w", "w:gz", "w:bz2", "w:xz"])
@pytest.mark.parametrize("kept", [0.3, 0.75])
def test_a_truncated_tar_raises_read_error_and_leaves_no_partial_member(make_root, site,
                                                                        mode, kept):
    members = [("file", name, os.urandom(100_000)) for name in ("a.txt", "b.txt")]
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode=mode) as tf:
        for _, name, payload in members:
            info = tarfile.TarInfo(name)
            info.size = len(payload)
            tf.addfile(info, io.BytesIO(payload))
    whole = buf.getvalue()
    before = outside(site)
    with pytest.raises(tarfile.ReadError):
        make_root(site / "ws").extract(io.BytesIO(whole[:int(len(whole) * kept)]))
    assert changes(before, outside(site)) == []
    for name in os.listdir(site / "ws"):  # only whole members, never a temp file
        assert name == "a.txt" and landed(site, name) == members[0][2]


def _gnu_sparse(name: str, blocks: list[tuple[int, bytes]], size: int) -> bytes:
    """An old-GNU sparse tar member (type ``S``, at most 4 blocks in its
    header): ``blocks`` of ``(offset, data)`` in a file of ``size`` bytes."""
    header = bytearray(512)
    header[0:len(name)] = name.encode()
    stored = b"".join(data for _, data in blocks)
    for start, value in ((100, 0o644), (108, 0), (116, 0), (124, len(stored)),
                         (136, 1_600_000_000)):
        width = 8 if start < 124 else 12
        header[start:start + width] = b"%0*o\0" % (width - 1, value)
    header[156:157] = b"S"
    header[257:265] = b"ustar  \0"
    for i, (offset, data) in enumerate(blocks):
        header[386 + 24 * i:398 + 24 * i] = b"%011o\0" % offset
        header[398 + 24 * i:410 + 24 * i] = b"%011o\0" % len(data)
    header[483:495] = b"%011o\0" % size
    header[148:156] = b" " * 8
    header[148:156] = b"%06o\0 " % sum(header)
    return bytes(header) + stored + b"\0" * (-len(stored) % 512) + b"\0" * 1024


@pytest.mark.parametrize("mode", ["r", "r|", "r|gz"])
def test_a_sparse_member_keeps_its_holes_and_its_bytes(make_root, site, mode):
    """Passed as a TarFile, seekable or a stream (read forward only)."""
    mib = 1024 * 1024
    blocks = [(0, b"head"), (8 * mib, b"middle" * 1000), (30 * mib, b"x" * 70_000)]
    size = 40 * mib
    data = _gnu_sparse("sp", blocks, size)
    expected = bytearray(size)
    for offset, chunk in blocks:
        expected[offset:offset + len(chunk)] = chunk
    with tarfile.open(fileobj=io.BytesIO(data)) as tf:  # tarfile reads what we meant
        extracted = tf.extractfile("sp")
        assert extracted is not None and extracted.read() == expected
    packed = gzip.compress(data) if mode.endswith("gz") else data
    before = outside(site)
    with tarfile.open(fileobj=io.BytesIO(packed), mode=mode) as tf:
        result = make_root(site / "ws").extract(tf)
    assert changes(before, outside(site)) == []
    assert result.extracted == ["sp"] and not result.refused
    assert landed(site, "sp") == expected
    info = os.stat(site / "ws" / "sp")
    assert stat.S_IMODE(info.st_mode) == 0o644 and info.st_mtime == 1_600_000_000
    assert info.st_blocks * 512 < 4 * mib, "the holes were written out"


@pytest.mark.parametrize("blocks", [[(0, b"abcd"), (2, b"xy")], [(60, b"past the end")]],
                         ids=["overlapping", "past-the-size"])
def test_a_sparse_map_describing_no_file_is_refused(make_root, site, blocks):
    result = run(make_root, site, _gnu_sparse("sp", blocks, 64))
    assert reasons(result) == {"sp": "unreadable"}
    assert os.listdir(site / "ws") == []


def test_hard_link_members_date_only_files_the_extraction_made(make_root, site):
    """tarfile gives a hard-link member's mode and mtime to the file; corral
    only to a file an earlier member made, never to one that was in the tree
    (it may be a second name of an inode outside)."""
    ws = site / "ws"
    (ws / "mine").write_bytes(b"already here")
    os.chmod(ws / "mine", 0o600)
    os.utime(ws / "mine", (1_400_000_000, 1_400_000_000))
    members = [("file", "new", b"made here", 0o600), ("hardlink", "new-again", "new", 0o755),
               ("hardlink", "mine-again", "mine", 0o755)]
    result = run(make_root, site, tar_bytes(members))
    assert result.ok and result.extracted == ["new", "new-again", "mine-again"]
    made, old = os.stat(ws / "new"), os.stat(ws / "mine")
    assert (stat.S_IMODE(made.st_mode), made.st_mtime, made.st_nlink) == (0o755, 1_600_000_000, 2)
    assert (stat.S_IMODE(old.st_mode), old.st_mtime, old.st_nlink) == (0o600, 1_400_000_000, 2)
    assert os.stat(ws / "mine-again").st_ino == old.st_ino


@pytest.mark.parametrize("length", [4097, 10_000_000])
def test_a_zip_symlink_target_beyond_path_max_is_refused_unread(make_root, site, length):
    result = run(make_root, site, zip_bytes([("symlink", "long", "a" * length),
                                             ("symlink", "short", "target"),
                                             ("file", "target", b"t")]))
    assert reasons(result) == {"long": "invalid_name"}
    assert result.refused[0].message == "a symlink whose target is longer than 4096 bytes"
    assert not os.path.lexists(site / "ws" / "long")
    assert os.readlink(site / "ws" / "short") == "target"
