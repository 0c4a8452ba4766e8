"""``Root.extract`` against the cases of CPython's own extraction tests,
written here as tables of our own: test_tarfile's TestExtractionFilters
(with the June 2025 fixes: CVE-2025-4517, -4330, -4138, -4435 and
CVE-2024-12718), test_zipfile's hostile member names, and archiver_tests'
OverwriteTests, for tar and zip alike where the format can say it.

Every case extracts into ``outer/dest`` through a Root of ``dest`` on every
backend config and checks the whole of ``outer`` afterwards: exactly the
expected tree inside ``dest`` (kinds, content, link text, shared inodes),
nothing else anywhere, and the refusals with their reasons.  Where corral
differs from CPython on purpose the case says so (it refuses what tarfile
strips or sanitizes, and replaces a symlink at a member's name rather than
writing through it).
"""

from __future__ import annotations

import io
import os
import stat
import tarfile
import zipfile
from pathlib import Path

import pytest

from corral.contained import ExtractReason

pytestmark = pytest.mark.filterwarnings("ignore:Duplicate name")


# -- archives ---------------------------------------------------------------------------

class Arc:
    """Members in order: ``file``, ``dir``, ``sym``, ``hard``, ``fifo``."""

    def __init__(self) -> None:
        self.members: list[tuple] = []

    def file(self, name: str, data: bytes = b"", mode: int = 0o644) -> Arc:
        self.members.append(("file", name, data, mode))
        return self

    def dir(self, name: str, mode: int = 0o755) -> Arc:
        self.members.append(("dir", name, None, mode))
        return self

    def sym(self, name: str, to: str) -> Arc:
        self.members.append(("sym", name, to, 0o777))
        return self

    def hard(self, name: str, to: str) -> Arc:
        self.members.append(("hard", name, to, 0o644))
        return self

    def fifo(self, name: str) -> Arc:
        self.members.append(("fifo", name, None, 0o644))
        return self

    def tar(self) -> bytes:
        buf = io.BytesIO()
        types = {"dir": tarfile.DIRTYPE, "sym": tarfile.SYMTYPE, "hard": tarfile.LNKTYPE,
                 "fifo": tarfile.FIFOTYPE}
        with tarfile.open(fileobj=buf, mode="w", format=tarfile.PAX_FORMAT) as tf:
            for kind, name, payload, mode in self.members:
                info = tarfile.TarInfo(name)
                info.mode, info.mtime = mode, 1_600_000_000
                if kind == "file":
                    info.size = len(payload)
                    tf.addfile(info, io.BytesIO(payload))
                    continue
                info.type = types[kind]
                if kind in ("sym", "hard"):
                    info.linkname = payload
                tf.addfile(info)
        return buf.getvalue()

    def zip(self) -> bytes:
        buf = io.BytesIO()
        with zipfile.ZipFile(buf, "w") as zf:
            for kind, name, payload, mode in self.members:
                assert kind in ("file", "dir", "sym"), "zip has no hard links or FIFOs"
                info = zipfile.ZipInfo(name + ("/" if kind == "dir" and
                                               not name.endswith("/") else ""))
                info.create_system = 3
                bits = {"file": stat.S_IFREG, "dir": stat.S_IFDIR, "sym": stat.S_IFLNK}[kind]
                info.external_attr = (bits | mode) << 16
                data = payload if kind == "file" else payload.encode() if kind == "sym" else b""
                zf.writestr(info, data)
        return buf.getvalue()


def tree(top: Path) -> dict[str, tuple]:
    """Everything beneath ``top``: ``{relative path: ("file", bytes, inode) |
    ("dir",) | ("link", text) | ("fifo",)}``; inodes renumbered in order of
    appearance, so shared ones show as equal numbers."""
    out: dict[str, tuple] = {}
    inodes: dict[int, int] = {}
    for dirpath, dirnames, filenames in os.walk(top):
        for name in sorted(dirnames + filenames):
            path = Path(dirpath) / name
            rel = str(path.relative_to(top))
            info = os.lstat(path)
            if stat.S_ISLNK(info.st_mode):
                out[rel] = ("link", os.readlink(path))
            elif stat.S_ISDIR(info.st_mode):
                out[rel] = ("dir",)
            elif stat.S_ISREG(info.st_mode):
                number = inodes.setdefault(info.st_ino, len(inodes))
                out[rel] = ("file", path.read_bytes(), number)
            else:
                out[rel] = ("other",)
    return out


@pytest.fixture
def outer(sec_tmp):
    top = Path(sec_tmp) / "outer"
    (top / "dest").mkdir(parents=True)
    return top


def run(make_root, outer: Path, data: bytes, **kwargs):
    """Extract into ``outer/dest``; return (refusal reasons by name, the tree
    of ``outer``, the result)."""
    root = make_root(outer / "dest")
    result = root.extract(io.BytesIO(data), **kwargs)
    reasons = {r.name.rstrip("/"): r.reason for r in result.refused}
    return reasons, tree(outer), result


def dest(**entries: tuple) -> dict[str, tuple]:
    out = {"dest": ("dir",)}
    for name, entry in entries.items():
        out["dest/" + name.replace("__", "/")] = entry
    return out


FILE0 = ("file", b"", 0)


# -- TestExtractionFilters -----------------------------------------------------------------

FORMATS = pytest.mark.parametrize("fmt", ["tar", "zip"])


def build(arc: Arc, fmt: str) -> bytes:
    return arc.tar() if fmt == "tar" else arc.zip()


@FORMATS
def test_benign_file(make_root, outer, fmt):
    reasons, got, _ = run(make_root, outer, build(Arc().file("benign.txt"), fmt))
    assert reasons == {} and got == dest(**{"benign.txt": FILE0})


@FORMATS
def test_absolute_name_is_refused_where_tarfile_strips_the_slash(make_root, outer, fmt):
    name = str(outer / "escaped.evil")
    reasons, got, _ = run(make_root, outer, build(Arc().file(name), fmt))
    assert reasons == {name: ExtractReason.ABSOLUTE} and got == dest()


@FORMATS
def test_parent_symlink(make_root, outer, fmt):
    """``current -> .``, ``parent -> current/..`` (the destination's
    parent: refused), then ``parent/evil`` lands in a directory ``parent``."""
    arc = Arc().sym("current", ".").sym("parent", "current/..").file("parent/evil", b"e")
    reasons, got, _ = run(make_root, outer, build(arc, fmt))
    assert reasons == {"parent": ExtractReason.LINK_OUTSIDE}
    assert got == dest(current=("link", "."), parent=("dir",), parent__evil=("file", b"e", 0))


@FORMATS
def test_parent_symlink2(make_root, outer, fmt):
    """``current -> .``, ``current/parent -> ..`` (``..`` of the destination:
    refused), ``parent/evil`` lands inside."""
    arc = Arc().sym("current", ".").sym("current/parent", "..").file("parent/evil", b"e")
    reasons, got, _ = run(make_root, outer, build(arc, fmt))
    assert reasons == {"current/parent": ExtractReason.LINK_OUTSIDE}
    assert got == dest(current=("link", "."), parent=("dir",), parent__evil=("file", b"e", 0))


@FORMATS
def test_absolute_symlink(make_root, outer, fmt):
    arc = Arc().sym("parent", str(outer)).file("parent/evil", b"e")
    reasons, got, _ = run(make_root, outer, build(arc, fmt))
    assert reasons == {"parent": ExtractReason.LINK_ABSOLUTE}
    assert got == dest(parent=("dir",), parent__evil=("file", b"e", 0))


def test_absolute_hardlink(make_root, outer):
    (outer / "foo").write_bytes(b"outside")
    reasons, got, _ = run(make_root, outer, Arc().hard("parent", str(outer / "foo")).tar())
    assert reasons == {"parent": ExtractReason.LINK_ABSOLUTE}
    assert got == {**dest(), "foo": ("file", b"outside", 0)}


@pytest.mark.parametrize("arc", [
    Arc().sym("../moo", "..//tmp/moo"),  # sly relative 0
    Arc().dir("tmp/").sym("tmp/../../moo", "tmp/../..//tmp/moo"),  # sly relative 2
], ids=["relative0", "relative2"])
@FORMATS
def test_sly_relative_names(make_root, outer, fmt, arc):
    reasons, got, _ = run(make_root, outer, build(arc, fmt))
    name = arc.members[-1][1]
    assert reasons == {name: ExtractReason.OUTSIDE}
    assert got == (dest(tmp=("dir",)) if len(arc.members) == 2 else dest())


def test_deep_symlink(make_root, outer):
    arc = (Arc().file("targetdir/target", b"abc").hard("linkdir/hardlink", "targetdir/target")
           .sym("linkdir/symlink", "../targetdir/target"))
    reasons, got, _ = run(make_root, outer, arc.tar())
    assert reasons == {}
    assert got == dest(targetdir=("dir",), targetdir__target=("file", b"abc", 0),
                       linkdir=("dir",), linkdir__hardlink=("file", b"abc", 0),
                       linkdir__symlink=("link", "../targetdir/target"))


def test_chains(make_root, outer):
    """Symlinks made before what they point at (dangling, plain names:
    made), and a hard link to a symlink: it links the symlink's file."""
    arc = (Arc().sym("linkdir/symlink", "hardlink").sym("symlink2", "linkdir/hardlink2")
           .file("targetdir/target", b"abc").hard("linkdir/hardlink", "targetdir/target")
           .hard("linkdir/hardlink2", "linkdir/symlink"))
    reasons, got, _ = run(make_root, outer, arc.tar())
    assert reasons == {}
    assert got == dest(linkdir=("dir",), linkdir__symlink=("link", "hardlink"),
                       symlink2=("link", "linkdir/hardlink2"),
                       targetdir=("dir",), targetdir__target=("file", b"abc", 0),
                       linkdir__hardlink=("file", b"abc", 0),
                       linkdir__hardlink2=("file", b"abc", 0))
    assert (outer / "dest/symlink2").read_bytes() == b"abc"


def test_modes(make_root, outer):
    """The data filter's modes: no setuid/setgid/sticky, no write for group
    or others, execute only where the owner has it, owner read+write;
    directories get the default mode."""
    arc = (Arc().file("all_bits", mode=0o7777).file("perm_bits", mode=0o777)
           .file("exec_group_other", mode=0o677).file("read_group_only", mode=0o040)
           .file("no_bits", mode=0).dir("dir/", mode=0o3077).dir("dir_all_bits/", mode=0o7777))
    root = make_root(outer / "dest")
    root.extract(io.BytesIO(arc.tar()))
    umask = os.umask(0)
    os.umask(umask)
    want = {"all_bits": 0o755, "perm_bits": 0o755, "exec_group_other": 0o644,
            "read_group_only": 0o640, "no_bits": 0o600, "dir": 0o777 & ~umask,
            "dir_all_bits": 0o777 & ~umask}
    got = {name: stat.S_IMODE(os.stat(outer / "dest" / name).st_mode) for name in want}
    assert got == want


def test_special_files_are_refused(make_root, outer):
    reasons, got, _ = run(make_root, outer, Arc().fifo("foo").tar())
    assert reasons == {"foo": ExtractReason.SPECIAL} and got == dest()


def test_custom_filter_moves_and_drops(make_root, outer):
    seen: list[str] = []

    def custom(member, path):
        seen.append(path)
        if member.name == "move_this":
            return member.replace(name="moved")
        if member.name == "ignore_this":
            return None
        return member

    arc = Arc().file("move_this").file("ignore_this").file("keep")
    reasons, got, result = run(make_root, outer, arc.tar(), filter=custom)
    assert reasons == {} and result.skipped == ["ignore_this"]
    assert got == dest(moved=("file", b"", 1), keep=FILE0)
    assert seen and all(os.path.samefile(path, outer / "dest") for path in seen)


def test_a_filter_only_narrows(make_root, outer):
    """What a filter returns still meets containment: a name moved outside,
    a link aimed out, setuid bits, are refused or masked."""
    def widen(member, path):
        if member.name == "a":
            return member.replace(name="../escaped")
        if member.name == "b":
            link = member.replace(linkname="../../etc")
            link.type, link.size = tarfile.SYMTYPE, 0
            return link
        return member.replace(mode=0o6777)

    reasons, got, _ = run(make_root, outer, Arc().file("a").file("b").file("c").tar(),
                          filter=widen)
    assert reasons == {"../escaped": ExtractReason.OUTSIDE, "b": ExtractReason.LINK_OUTSIDE}
    assert got == dest(c=FILE0)
    assert stat.S_IMODE(os.stat(outer / "dest/c").st_mode) == 0o755


def test_filter_names_and_types(make_root, outer):
    root = make_root(outer / "dest")
    data = Arc().file("foo").tar()
    with pytest.raises(ValueError):
        root.extract(io.BytesIO(data), filter="bad filter name")  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        root.extract(io.BytesIO(data), filter=42)  # type: ignore[arg-type]
    assert tree(outer) == dest()


def test_stateful_filter_with_tarfiles_own_data_filter(make_root, outer):
    class Stateful:
        processed = 0

        def __call__(self, member, path):
            try:
                member = tarfile.data_filter(member, path)
            except tarfile.FilterError:
                return None
            self.processed += 1
            return member

    counting = Stateful()
    arc = Arc().file("good", b"1").sym("bad", "/").file("good", b"2")
    reasons, got, result = run(make_root, outer, arc.tar(), filter=counting)
    assert counting.processed == 2 and result.skipped == ["bad"] and reasons == {}
    assert got == dest(good=("file", b"2", 0))


def test_filter_errors(make_root, outer):
    """``FilterError`` leaves the member out (named in ``skipped`` with the
    error); any other exception from the filter is raised."""
    def filter_error(member, path):
        raise tarfile.FilterError("failed with FilterError")

    def value_error(member, path):
        raise ValueError("failed with ValueError")

    reasons, got, result = run(make_root, outer, Arc().file("file").tar(), filter=filter_error)
    assert result.skipped == ["file"] and got == dest()
    with pytest.raises(ValueError):
        run(make_root, outer, Arc().file("file").tar(), filter=value_error)
    assert tree(outer) == dest()


# -- the 2025 fixes ------------------------------------------------------------------------

def test_sneaky_hardlink_fallback_cve_2025_4330(make_root, outer):
    """``c -> a/t``, ``c/escape -> ../../link_here`` (dangling, inside: made
    as the data filter makes it), ``c`` replaced by ``c -> b``, then a hard
    link to ``c/escape``: nothing there, refused; no copy of anything."""
    arc = (Arc().file("a/t/dummy").dir("b/").sym("c", "a/t")
           .sym("c/escape", "../../link_here").sym("c", "b").hard("boom", "c/escape"))
    reasons, got, _ = run(make_root, outer, arc.tar())
    assert reasons == {"boom": ExtractReason.LINK_MISSING}
    assert got == dest(a=("dir",), a__t=("dir",), a__t__dummy=FILE0,
                       a__t__escape=("link", "../../link_here"), b=("dir",), c=("link", "b"))


def test_exfiltration_via_symlink_cve_2025_4138(make_root, outer):
    """``escape -> link/link/../../link-here`` made before ``link -> ./``:
    stored normalized (``link-here``, as the data filter), so the later
    ``link`` cannot turn it outward."""
    arc = Arc().sym("escape", "link/link/../../link-here").sym("link", "./")
    reasons, got, _ = run(make_root, outer, arc.tar())
    assert reasons == {}
    assert got == dest(escape=("link", "link-here"), link=("link", "."))


def test_chmod_outside_dir_cve_2024_12718(make_root, outer):
    """``a/pwn -> .``, then a directory member ``a/pwn/`` (the symlink is
    replaced by a directory, never followed, so the directory dated at the
    end is ``a/pwn`` itself), then ``a/pwn -> x/../`` (a directory is
    there: refused) and ``a/x -> ../``.  The destination's parent keeps its
    mode and times."""
    before = os.stat(outer)
    arc = (Arc().sym("a/pwn", ".").dir("a/pwn/", mode=0o777).sym("a/pwn", "x/../")
           .sym("a/x", "../"))
    reasons, got, _ = run(make_root, outer, arc.tar())
    assert reasons == {"a/pwn": ExtractReason.CONFLICT}
    assert got == dest(a=("dir",), a__pwn=("dir",), a__x=("link", "..")), got
    after = os.stat(outer)
    assert (after.st_mode, after.st_mtime_ns) == (before.st_mode, before.st_mtime_ns)
    assert os.stat(outer / "dest/a/pwn").st_mtime == 1_600_000_000


def test_link_fallback_normalizes_cve_2025_4435(make_root, outer):
    arc = (Arc().dir("dir/").file("dir/../afile", b"x").hard("link1", "dir/../afile")
           .hard("link2", "dir/../dir/../afile"))
    reasons, got, _ = run(make_root, outer, arc.tar())
    assert reasons == {}
    assert got == dest(dir=("dir",), afile=("file", b"x", 0), link1=("file", b"x", 0),
                       link2=("file", b"x", 0))


def test_a_refused_member_leaves_nothing(make_root, outer):
    """CVE-2025-4435: with ``errorlevel=0`` tarfile extracted members its
    filter had refused; a refused member here is never made, in any part."""
    arc = (Arc().file("ok", b"ok").fifo("pipe").sym("abs", "/etc/passwd")
           .hard("hard-out", "../x").file("../slip", b"s"))
    reasons, got, _ = run(make_root, outer, arc.tar())
    assert set(reasons) == {"pipe", "abs", "hard-out", "../slip"}
    assert got == dest(ok=("file", b"ok", 0))


# -- the two shapes a per-link check misses ---------------------------------------------------

@pytest.mark.parametrize("with_file", [True, False])
def test_hard_link_to_an_inside_symlink_at_another_depth(make_root, outer, with_file):
    """``top/s -> ../x`` leads inside from ``top``; the same text as a hard
    link ``h`` at the top would lead to the destination's parent.  ``h``
    links the file ``top/s`` leads to, and with no file there it is refused."""
    arc = (Arc().file("x", b"x") if with_file else Arc()).sym("top/s", "../x").hard("h", "top/s")
    reasons, got, _ = run(make_root, outer, arc.tar())
    if with_file:
        assert reasons == {}
        assert got == dest(x=("file", b"x", 0), top=("dir",), top__s=("link", "../x"),
                           h=("file", b"x", 0))
    else:
        assert reasons == {"h": ExtractReason.LINK_MISSING}
        assert got == dest(top=("dir",), top__s=("link", "../x"))


@pytest.mark.parametrize("fmt", ["tar", "zip"])
def test_a_later_member_replaces_a_link_an_earlier_link_walks_through(make_root, outer, fmt):
    """``link -> a``, ``escape -> link/../x`` (inside: ``a/..`` is the top),
    then ``link -> .``: as written, ``escape`` would now be ``./../x``,
    outside.  Its text is stored normalized (``x``), so it still leads to
    ``x`` inside."""
    arc = Arc().dir("a/").sym("link", "a").sym("escape", "link/../x").sym("link", ".")
    reasons, got, result = run(make_root, outer, arc.tar() if fmt == "tar" else arc.zip())
    assert reasons == {}
    assert got == dest(a=("dir",), link=("link", "."), escape=("link", "x"))
    assert [(one.name, one.path, one.kind) for one in result.landed] == [
        ("a/" if fmt == "zip" else "a", "a", "dir"), ("link", "link", "symlink"),
        ("escape", "escape", "symlink"), ("link", "link", "symlink")]


def test_the_stored_normalized_text_must_lead_inside_too(make_root, outer):
    """``a/m -> ../l/../../x`` as written leads inside while ``l -> a/b/c``
    (``l/..`` is ``a/b``); stored normalized it would be ``../../x`` from
    ``a``, outside: refused."""
    arc = Arc().dir("a/b/c/").sym("l", "a/b/c").sym("a/m", "../l/../../x")
    reasons, got, _ = run(make_root, outer, arc.tar())
    assert reasons == {"a/m": ExtractReason.LINK_OUTSIDE}
    assert "dest/a/m" not in got


def test_a_link_turned_outward_before_the_end_is_removed(make_root, outer):
    """The finished-tree check: a link the extraction made that leads out
    when the last member is in (here the host's progress callback rewrote
    it) is removed and its member refused; links that still lead inside
    stay."""
    top = outer / "dest"

    def meddle(progress):
        if progress.message == "b":
            os.remove(top / "l")
            os.symlink("../../etc", top / "l")

    arc = Arc().sym("l", "a").sym("k", "a").file("b", b"b")
    reasons, got, result = run(make_root, outer, arc.tar(), progress=meddle)
    assert reasons == {"l": ExtractReason.LINK_OUTSIDE}
    assert got == dest(k=("link", "a"), b=("file", b"b", 0))
    assert result.extracted == ["k", "b"]


# -- test_zipfile: hostile member names -----------------------------------------------------

@pytest.mark.parametrize("name,where", [
    ("../foo/bar", ExtractReason.OUTSIDE),
    ("foo/../../bar", ExtractReason.OUTSIDE),
    ("../../foo../../ba..r", ExtractReason.OUTSIDE),
    ("foo/../bar", "bar"),
    ("foo/./bar", "foo/bar"),
    ("/foo/bar", ExtractReason.ABSOLUTE),
    ("//foo/bar", ExtractReason.ABSOLUTE),
    ("foo/..\\bar", "foo/..\\bar"),  # a backslash is a name character here
    ("C:/foo/bar", "C:/foo/bar"),
    ("foo/bar/..", ExtractReason.CONFLICT),  # names a directory, not a file
])
@pytest.mark.parametrize("fmt", ["tar", "zip"])
def test_hostile_member_names(make_root, outer, name, where, fmt):
    arc = Arc().file(name, b"data")
    reasons, got, result = run(make_root, outer, arc.tar() if fmt == "tar" else arc.zip())
    if isinstance(where, ExtractReason):
        assert list(reasons.values()) == [where]
        assert set(got) <= {"dest", "dest/foo", "dest/foo/bar"} and \
            all(entry == ("dir",) for entry in got.values())
    else:
        assert reasons == {} and got[f"dest/{where}"] == ("file", b"data", 0)
        assert [one.path for one in result.landed] == [where]


# -- archiver_tests.OverwriteTests ----------------------------------------------------------

def _with(kind: str) -> Arc:
    return {"file": Arc().file("test", b"newcontent"), "dir": Arc().dir("test/"),
            "implicit_dir": Arc().file("test/file", b"newcontent")}[kind]


@pytest.mark.parametrize("fmt", ["tar", "zip"])
@pytest.mark.parametrize("existing,member,want", [
    ("file", "file", {"test": ("file", b"newcontent", 0)}),
    ("dir", "dir", {"test": ("dir",)}),
    ("dir", "implicit_dir", {"test": ("dir",), "test/file": ("file", b"newcontent", 0)}),
    ("dir", "file", "conflict"),
    ("file", "dir", "conflict"),
    ("file", "implicit_dir", "conflict"),
    # a symlink at the member's own name is replaced, never written through
    # (tarfile and zipfile write through it: their tests mark it a risk)
    ("file_symlink", "file", {"test": ("file", b"newcontent", 0),
                              "test2": ("file", b"content", 1)}),
    ("broken_file_symlink", "file", {"test": ("file", b"newcontent", 0)}),
    ("dir_symlink", "dir", {"test": ("dir",), "test2": ("dir",)}),
    ("broken_dir_symlink", "dir", {"test": ("dir",)}),
    # a symlinked parent directory inside is followed, as tarfile does
    ("dir_symlink", "implicit_dir", {"test": ("link", "test2"), "test2": ("dir",),
                                     "test2/file": ("file", b"newcontent", 0)}),
    ("broken_dir_symlink", "implicit_dir", "conflict"),
])
def test_overwrite(make_root, outer, fmt, existing, member, want):
    top = outer / "dest"
    if existing == "file":
        (top / "test").write_bytes(b"content")
    elif existing == "dir":
        (top / "test").mkdir()
    else:
        if existing == "file_symlink":
            (top / "test2").write_bytes(b"content")
        elif existing == "dir_symlink":
            (top / "test2").mkdir()
        os.symlink("test2", top / "test")
    before = tree(outer)
    arc = _with(member)
    reasons, got, _ = run(make_root, outer, arc.tar() if fmt == "tar" else arc.zip())
    if want == "conflict":
        assert list(reasons.values()) == [ExtractReason.CONFLICT]
        assert got == before
    else:
        assert reasons == {}
        assert got == {"dest": ("dir",), **{f"dest/{k}": v for k, v in want.items()}}
