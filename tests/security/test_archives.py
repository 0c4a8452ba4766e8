"""Consumers: hostile tar and zip archives extracted through a Root.

The extractor below is deliberately naive about names: it passes every
member name and link target to the :class:`corral.contained.Root` as
written, with no sanitising of its own, and copies hard links by reading
their target through the root.  So everything these tests show (nothing
lands outside, and each hostile member is refused with the right error)
is the root's doing.  Run on every backend config (``make_root``).
"""

from __future__ import annotations

import io
import os
import stat
import tarfile
import zipfile

import pytest

from corral.contained import EscapeError, InvalidPathError
from corral.testing import changes, snapshot

SECRET = b"OUTSIDE-SECRET"

# the hostile zips repeat names on purpose (a link, then a file over it)
pytestmark = pytest.mark.filterwarnings("ignore:Duplicate name")


def extract(root, members, *, follow_symlinks=True):
    """Extract ``(kind, name, data_or_target)`` members in order; return
    ``{name: exception}`` for the refused ones."""
    refused = {}
    for kind, name, payload in members:
        try:
            parent = os.path.dirname(name.rstrip("/"))
            if kind != "dir" and parent:
                root.makedirs(parent, exist_ok=True)
            if kind == "dir":
                root.makedirs(name, exist_ok=True)
            elif kind == "file":
                root.write_bytes(name, payload, fsync=False, follow_symlinks=follow_symlinks)
            elif kind == "symlink":
                root.symlink(payload, name)
            elif kind == "hardlink":  # copied, never linked: read through the root
                root.write_bytes(name, root.read_bytes(payload), fsync=False,
                                 follow_symlinks=follow_symlinks)
            else:
                raise ValueError(kind)
        except OSError as exc:
            refused[name] = exc
    return refused


def tar_members(data: bytes):
    out = []
    with tarfile.open(fileobj=io.BytesIO(data)) as tf:
        for m in tf.getmembers():
            if m.isdir():
                out.append(("dir", m.name, None))
            elif m.issym():
                out.append(("symlink", m.name, m.linkname))
            elif m.islnk():
                out.append(("hardlink", m.name, m.linkname))
            elif m.isreg():
                out.append(("file", m.name, tf.extractfile(m).read()))
    return out


def zip_members(data: bytes):
    out = []
    with zipfile.ZipFile(io.BytesIO(data)) as zf:
        for info in zf.infolist():
            mode = info.external_attr >> 16
            if stat.S_ISLNK(mode):
                out.append(("symlink", info.filename, zf.read(info).decode()))
            elif info.is_dir():
                out.append(("dir", info.filename, None))
            else:
                out.append(("file", info.filename, zf.read(info)))
    return out


def make_tar(entries) -> bytes:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w", format=tarfile.GNU_FORMAT) as tf:
        for kind, name, payload in entries:
            info = tarfile.TarInfo(name)
            if kind == "file":
                info.size = len(payload)
                tf.addfile(info, io.BytesIO(payload))
                continue
            info.type = {"dir": tarfile.DIRTYPE, "symlink": tarfile.SYMTYPE,
                         "hardlink": tarfile.LNKTYPE}[kind]
            if payload is not None:
                info.linkname = payload
            tf.addfile(info)
    return buf.getvalue()


def make_zip(entries) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        for kind, name, payload in entries:
            # zip marks a directory by a trailing "/"
            info = zipfile.ZipInfo(name + "/" if kind == "dir" and not name.endswith("/") else name)
            if kind == "symlink":
                info.external_attr = (stat.S_IFLNK | 0o777) << 16
                zf.writestr(info, payload)
            elif kind == "dir":
                info.external_attr = (stat.S_IFDIR | 0o755) << 16
                zf.writestr(info, b"")
            else:
                info.external_attr = (stat.S_IFREG | 0o644) << 16
                zf.writestr(info, payload)
    return buf.getvalue()


def make_site(base):
    """``base/ws`` (the root), ``outside/`` with a secret, and the
    prefix-sharing sibling ``ws-evil/`` with one."""
    (base / "ws").mkdir()
    for d in ("outside", "ws-evil"):
        (base / d).mkdir()
        (base / d / "secret").write_bytes(SECRET)
    return base


@pytest.fixture
def site(tmp_path):
    return make_site(tmp_path)


def outside_snapshot(site):
    return snapshot(site, exclude=("ws",))


def hostile(site):
    """``(member, expected refusal)``: ``(kind, name, payload)`` and
    ``(exception class, EscapeError reason or None)``; ``None`` = extracted.
    The reason is where the escaping step came from: a ``..`` of the name
    as written is ``"dotdot"``, one from a link's text ``"symlink"``."""
    out = str(site / "outside")
    return [
        (("file", "ok/file", b"fine"), None),
        (("hardlink", "ok/hard", "ok/file"), None),  # a hard link inside: copied
        # zip-slip
        (("file", "../x", b"slip"), (EscapeError, "dotdot")),
        (("file", "ok/../../x", b"slip"), (EscapeError, "dotdot")),
        (("file", "../ws-evil/x", b"slip"), (EscapeError, "dotdot")),
        (("dir", "../newdir/", None), (EscapeError, "dotdot")),
        # absolute names
        (("file", out + "/abs", b"abs"), (EscapeError, "absolute")),
        (("file", "/" + out + "/abs2", b"abs"), (EscapeError, "absolute")),
        (("dir", out + "/absdir/", None), (EscapeError, "absolute")),
        # symlink, then write through it (final component and parent)
        (("symlink", "lnk", out), None),
        (("file", "lnk/x", b"through"), (EscapeError, "symlink")),
        (("file", "lnk", b"onto"), (EscapeError, "symlink")),
        (("symlink", "rel", "../outside/secret"), None),
        (("file", "rel", b"overwrite"), (EscapeError, "symlink")),
        # members through a symlinked parent, and a dangling one
        (("symlink", "up", "../outside"), None),
        (("dir", "up/sub/", None), (EscapeError, "symlink")),
        (("file", "up/sub/f", b"deep"), (EscapeError, "symlink")),
        (("symlink", "dang", "../outside/new-file"), None),
        (("file", "dang", b"create"), (EscapeError, "symlink")),
        # a chain of in-root links that ends outside
        (("symlink", "c1", "c2"), None),
        (("symlink", "c2", "d/../../outside"), None),
        (("dir", "d", None), None),
        (("file", "c1/y", b"chain"), (EscapeError, "symlink")),
        # hard links pointing outside: reading the target is refused
        (("hardlink", "h1", "../outside/secret"), (EscapeError, "dotdot")),
        (("hardlink", "h2", out + "/secret"), (EscapeError, "absolute")),
        (("hardlink", "h3", "lnk/secret"), (EscapeError, "symlink")),
        (("hardlink", "h4", "up/secret"), (EscapeError, "symlink")),
        # a name no file system takes
        (("file", "n/" + "x" * 256, b"long"), (InvalidPathError, None)),
    ]


def check_refusals(refused, cases):
    for (kind, name, payload), want in cases:
        got = refused.get(name)
        if want is None:
            assert got is None, f"{kind} {name!r} was refused: {got!r}"
            continue
        cls, reason = want
        assert isinstance(got, cls), f"{kind} {name!r}: {got!r}, expected {cls.__name__}"
        if reason is not None:
            assert got.reason == reason, f"{kind} {name!r}: reason {got.reason}"
        # the error names what the extractor passed (the member, its parent,
        # or the hard link's own target), never where a symlink led
        shown = got.filename
        if isinstance(got, InvalidPathError) and shown.endswith("..."):
            shown = name if name.startswith(shown[:-3]) else shown  # bounded for logs
        assert shown.rstrip("/") in (name, os.path.dirname(name), payload), got.filename
        assert "outside" not in str(got.component or "")


def _names_once(cases):
    # later members of the same name override earlier expectations: keep the
    # last per name (the extractor's refusal dict is keyed by name too)
    seen = {}
    for case in cases:
        seen[case[0][1]] = case
    return list(seen.values())


def hostile_extraction(make, site, fmt):
    """Extract the hostile archive of ``fmt`` through ``make(site/"ws")``
    and check everything (also run on a broken resolver by test_meta.py)."""
    cases = hostile(site)
    if fmt == "zip":  # zip has no hard links
        cases = [c for c in cases if c[0][0] != "hardlink"]
    members = [c[0] for c in cases]
    data = make_tar(members) if fmt == "tar" else make_zip(members)
    parsed = tar_members(data) if fmt == "tar" else zip_members(data)
    assert [m[1].rstrip("/") for m in parsed] == [m[1].rstrip("/") for m in members]

    before = outside_snapshot(site)
    root = make(site / "ws")
    refused = extract(root, parsed)
    assert changes(before, outside_snapshot(site)) == []
    check_refusals({k.rstrip("/"): v for k, v in refused.items()},
                   [((k, n.rstrip("/"), p), w) for (k, n, p), w in _names_once(cases)])
    assert root.read_bytes("ok/file") == b"fine"
    if fmt == "tar":
        assert root.read_bytes("ok/hard") == b"fine"
        assert os.stat(site / "ws/ok/hard").st_nlink == 1  # copied, not linked
    assert root.readlink("lnk") == str(site / "outside")  # links are made, never followed out
    assert not os.path.lexists(site / "x") and not os.path.lexists(site / "newdir")
    assert not os.path.lexists(site / "outside/new-file")


@pytest.mark.parametrize("fmt", ["tar", "zip"])
def test_hostile_archive_lands_nothing_outside(make_root, site, fmt):
    hostile_extraction(make_root, site, fmt)


def test_two_archive_symlink_attack(make_root, site):
    """GNU tar CVE-2025-45582: the first archive plants ``dir -> ../outside``,
    the second writes ``dir/x``.  The second is refused."""
    first = make_tar([("symlink", "dir", "../outside")])
    second = make_zip([("file", "dir/x", b"second"), ("dir", "dir/sub/", None)])
    before = outside_snapshot(site)
    root = make_root(site / "ws")
    assert extract(root, tar_members(first)) == {}
    refused = extract(root, zip_members(second))
    assert changes(before, outside_snapshot(site)) == []
    assert set(refused) == {"dir/x", "dir/sub/"}
    assert all(isinstance(e, EscapeError) for e in refused.values())


def test_replace_mode_replaces_links_inside(make_root, site):
    """An extractor that replaces existing links (``follow_symlinks=False``,
    what tarfile does) rewrites the link itself, inside the root, and still
    never writes outside."""
    members = [("symlink", "lnk", str(site / "outside" / "secret")),
               ("file", "lnk", b"replaced"),
               ("symlink", "up", "../outside"), ("file", "up/f", b"x")]
    before = outside_snapshot(site)
    root = make_root(site / "ws")
    refused = extract(root, members, follow_symlinks=False)
    assert changes(before, outside_snapshot(site)) == []
    assert set(refused) == {"up/f"} and isinstance(refused["up/f"], EscapeError)
    assert not os.path.islink(site / "ws/lnk")
    assert root.read_bytes("lnk") == b"replaced"
    assert (site / "outside" / "secret").read_bytes() == SECRET
