"""A property of ``Root.extract`` on the tree it leaves, every backend config:
Hypothesis generates archives of files, directories, symlinks and hard
links over a few names (names reused, links replaced, members in any
order), and after each extraction

* nothing outside the destination was created, changed or removed;
* no symlink anywhere in the destination leads outside it, judged by an
  oracle of this file: the kernel's own resolution step by step on host
  paths (``lstat``/``readlink``), a missing rest taken as written, any
  step above the destination counted as leaving it;
* every member is accounted for, landed or refused, and every landed
  file's path holds what its member said (unless a later member took the
  name).

Soak: ``CORRAL_EXTRACT_EXAMPLES`` sets the examples per backend config
(default 60); the nightly profile of ``helpers.settings`` draws new examples.
"""

from __future__ import annotations

import io
import os
import shutil
import stat
import tarfile
import tempfile
import zipfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as hs

from corral.testing import changes, snapshot
from .helpers.settings import PROFILE, TMP_BASE

pytestmark = pytest.mark.filterwarnings("ignore:Duplicate name")

EXAMPLES = int(os.environ.get("CORRAL_EXTRACT_EXAMPLES", "60"))

NAMES = ["a", "b", "a/b", "a/c", "b/a", "x"]
SEGMENTS = ["..", "..", ".", "a", "b", "c", "x", ""]

names = hs.sampled_from(NAMES)
link_texts = hs.lists(hs.sampled_from(SEGMENTS), min_size=1, max_size=5).map("/".join)
single = hs.one_of(
    hs.tuples(hs.just("file"), names, hs.binary(max_size=8)),
    hs.tuples(hs.just("dir"), names, hs.just(b"")),
    hs.tuples(hs.just("symlink"), names, link_texts),
    hs.tuples(hs.just("hardlink"), names, hs.one_of(names, link_texts)),
).map(lambda member: [member])


climbing = hs.tuples(hs.integers(0, 2), names).map(lambda up: "../" * up[0] + up[1])
replacement = hs.one_of(hs.sampled_from([".", "./", "..", "a", "b/..", "a/b"]), link_texts)
# the two shapes a per-link check misses (a hard link made through a symlink; a link
# re-pointed after another's text walked through it), always among the examples
SHAPES = [
    [("file", "x", b"x"), ("symlink", "a/s", "../x"), ("hardlink", "h", "a/s")],
    [("dir", "a", b""), ("symlink", "link", "a"), ("symlink", "escape", "link/../x"),
     ("symlink", "link", ".")],
]


@hs.composite
def relinked(draw) -> list[tuple]:
    """A link, a link whose text walks through it and back up, then the
    first replaced (``link -> a``, ``escape -> link/../x``, ``link -> .``)."""
    first, other = draw(names), draw(names)
    up = "../" * other.count("/")  # from other's directory back to the top
    return [("symlink", first, draw(hs.one_of(names, replacement))),
            ("symlink", other, f"{up}{first}/../{draw(hs.one_of(names, climbing))}"),
            ("symlink", first, draw(hs.one_of(hs.just("."), replacement)))]


@hs.composite
def second_name(draw) -> list[tuple]:
    """A symlink climbing from where it is, then a hard link giving it a
    second name at another depth (``top/s -> ../x``, ``h`` -> ``top/s``)."""
    link = draw(names)
    return [("symlink", link, draw(climbing)), ("hardlink", draw(names), link)]


@hs.composite
def archives(draw) -> list[tuple]:
    """Blocks of members (single ones, and the shapes above), in order or
    shuffled."""
    blocks = draw(hs.lists(hs.one_of(single, single, relinked(), second_name()),
                           min_size=1, max_size=5))
    flat = [member for block in blocks for member in block]
    if draw(hs.booleans()):
        flat = draw(hs.permutations(flat))
    return flat


members = archives()


def as_tar(entries) -> bytes:
    buf = io.BytesIO()
    types = {"dir": tarfile.DIRTYPE, "symlink": tarfile.SYMTYPE, "hardlink": tarfile.LNKTYPE}
    with tarfile.open(fileobj=buf, mode="w", format=tarfile.PAX_FORMAT) as tf:
        for kind, name, payload in entries:
            info = tarfile.TarInfo(name)
            info.mtime = 1_600_000_000
            if kind == "file":
                info.size = len(payload)
                tf.addfile(info, io.BytesIO(payload))
                continue
            info.type = types[kind]
            if kind != "dir":
                info.linkname = payload
            tf.addfile(info)
    return buf.getvalue()


def as_zip(entries) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        for kind, name, payload in entries:
            if kind == "hardlink":
                continue  # zip has none
            info = zipfile.ZipInfo(name + "/" if kind == "dir" else name)
            info.create_system = 3
            bits = {"file": stat.S_IFREG, "dir": stat.S_IFDIR, "symlink": stat.S_IFLNK}[kind]
            info.external_attr = (bits | 0o755) << 16
            zf.writestr(info, payload.encode() if kind == "symlink" else payload)
    return buf.getvalue()


def leaves(top: str, link: str) -> bool:
    """Whether the symlink ``link`` (a path beneath ``top``) leads outside
    ``top``: its text walked from its directory, each component looked up
    on disk, a symlink met expanded in place, ``..`` above ``top`` or an
    absolute text counting as leaving; once a component is missing the rest
    is taken as written.  A loop of more than 40 links counts as leaving
    (where it leads cannot be told)."""
    parts = os.path.relpath(os.path.dirname(link), top).split(os.sep)
    parts = [p for p in parts if p not in ("", ".")]
    todo = os.readlink(link).split("/")
    if os.readlink(link).startswith("/"):
        return True
    expanded, missing = 0, False
    while todo:
        part = todo.pop(0)
        if part in ("", "."):
            continue
        if part == "..":
            if not parts:
                return True
            parts.pop()
            continue
        parts.append(part)
        if missing:
            continue
        here = os.path.join(top, *parts)
        try:
            info = os.lstat(here)
        except (FileNotFoundError, NotADirectoryError):
            missing = True
            continue
        if stat.S_ISLNK(info.st_mode):
            expanded += 1
            text = os.readlink(here)
            if text.startswith("/") or expanded > 40:
                return True
            parts.pop()
            todo = text.split("/") + todo
        elif not stat.S_ISDIR(info.st_mode):
            missing = True
    return False


def check(make_root, entries, data: bytes) -> None:
    base = tempfile.mkdtemp(prefix="corral-prop-extract-", dir=TMP_BASE)
    try:
        ws = os.path.join(base, "ws")
        for d in ("ws", "outside", "ws-evil"):
            os.mkdir(os.path.join(base, d))
        for d in ("outside", "ws-evil"):
            with open(os.path.join(base, d, "x"), "wb") as f:
                f.write(b"SECRET")
        before = snapshot(base, exclude=("ws",))
        root = make_root(ws)
        result = root.extract(io.BytesIO(data))
        assert changes(before, snapshot(base, exclude=("ws",))) == []
        for dirpath, dirnames, filenames in os.walk(ws):
            for name in dirnames + filenames:
                path = os.path.join(dirpath, name)
                assert not name.endswith(".corral-tmp"), "a temporary file was left"
                if os.path.islink(path):
                    assert not leaves(ws, path), (
                        f"{os.path.relpath(path, ws)} -> {os.readlink(path)} leads outside; "
                        f"members {entries}")
        named = [m[1] for m in entries if not (m[0] == "hardlink" and data[:2] == b"PK")]
        assert len(result.landed) + len(result.refused) == len(named)
        last: dict[str, int] = {}
        for at, one in enumerate(result.landed):
            last[one.path] = at
        for at, one in enumerate(result.landed):
            if one.kind == "file" and last[one.path] == at:
                path = Path(ws, one.path)
                assert path.is_file() and not path.is_symlink(), one
    finally:
        shutil.rmtree(base, ignore_errors=True)


EXTRACT_SETTINGS = settings(PROFILE, max_examples=EXAMPLES if PROFILE.max_examples < 1000
                            else PROFILE.max_examples,
                            suppress_health_check=[HealthCheck.function_scoped_fixture,
                                                   HealthCheck.too_slow,
                                                   HealthCheck.filter_too_much])


@EXTRACT_SETTINGS
@given(entries=members)
@example(entries=SHAPES[0])
@example(entries=SHAPES[1])
def test_no_link_left_leads_outside_tar(make_root, entries):
    check(make_root, entries, as_tar(entries))


@EXTRACT_SETTINGS
@given(entries=members)
@example(entries=SHAPES[1])
def test_no_link_left_leads_outside_zip(make_root, entries):
    check(make_root, entries, as_zip(entries))


def test_the_oracle_sees_links_that_lead_out(tmp_path):
    """The oracle itself: it flags what leads out and passes what stays."""
    ws = tmp_path / "ws"
    (ws / "d").mkdir(parents=True)
    cases = {"up": "..", "abs": "/etc", "ok": "d", "dangling-in": "nope/../d",
             "dangling-out": "nope/../../x", "via": "d/../up/x", "round": "../ws/d",
             "deep": "d/e/../../..", "self": "self"}
    for name, text in cases.items():
        os.symlink(text, ws / name)
    got = {name for name in cases if leaves(str(ws), str(ws / name))}
    assert got == {"up", "abs", "dangling-out", "via", "round", "deep", "self"}
