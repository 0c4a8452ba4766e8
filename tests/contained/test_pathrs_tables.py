"""libpathrs's resolver tables (``src/tests/test_resolve.rs`` and the tree
of ``create_basic_tree``), ported: the same tree and lookups, written again
as this suite's data, run on every backend config.

A lookup is ``open_handle(path, O_PATH)`` (``O_PATH|O_NOFOLLOW`` for
pathrs's ``no_follow_trailing``): its canonical ``path`` and file type must
be pathrs's answer, and ``realpath`` and ``target(follow_final=...)`` must
name the same place.  Strict-mode rows (pathrs's ``RESOLVE_NO_SYMLINKS``)
run on a root opened ``follow_symlinks=False``.

The one legitimate difference, everywhere it shows: pathrs resolves
``IN_ROOT`` (an absolute symlink, and ``..`` at the top, stay at the root),
corral resolves ``BENEATH``, as Go's ``os.Root`` and ``openat2`` do: both are
escapes (:class:`EscapeError`).  So a row pathrs answers by clamping (every
``/``-target link, ``root-link*``, ``escape-link*``, ``loop/link`` whose
chain passes an absolute link, ``self/exe``, a magic link pathrs refuses
with ``ELOOP``) is an escape here, the reason noted in the row.  Not
ported: the ``nosymfollow`` and ``protected_symlinks`` trees, whose links
all point at ``/`` (escapes here whatever the mount says): both rules are
tested in test_kernel_rules.py with in-root links instead.
"""

from __future__ import annotations

import errno
import os
import stat as st

import pytest

from corral.contained import EscapeError, SymlinkError

from .helpers.trees import build

DIR, REG, LNK = st.S_IFDIR, st.S_IFREG, st.S_IFLNK
FIFO, SOCK = st.S_IFIFO, st.S_IFSOCK
ENOENT, ENOTDIR, ELOOP = errno.ENOENT, errno.ENOTDIR, errno.ELOOP
ESC = EscapeError  # pathrs clamps (IN_ROOT); corral refuses (BENEATH)
NOFOLLOW = True

BASIC_TREE = [
    "a/", "b/c/d/e/f/", "b/c/file", "e -> /b/c/d/e", "b-file -> b/c/file",
    "root-link1 -> /", "root-link2 -> /..", "root-link3 -> /../../../../..",
    "escape-link1 -> ../../../../../../../../../../target",
    "escape-link2 -> /../../../../../../../../../../target",
    "b/fifo|fifo", "b/sock|sock",
    "a-fake1 -> a/fake", "a-fake2 -> a/fake/foo/bar/..", "a-fake3 -> a/fake/../../b",
    "c/a-fake1 -> /a/fake", "c/a-fake2 -> /a/fake/foo/bar/..", "c/a-fake3 -> /a/fake/../../b",
    "target/", "link1/target_abs -> /target", "link1/target_rel -> ../target",
    "link2/link1_abs -> /link1", "link2/link1_rel -> ../link1",
    "link3/target_abs -> /link2/link1_rel/target_rel",
    "link3/target_rel -> ../link2/link1_rel/target_rel",
    "link3/deep_dangling1 -> ../link2/link1_rel/target_rel/nonexist",
    "link3/deep_dangling2 -> ../link2/link1_abs/target_abs/nonexist",
    "dangling/a -> b/c", "dangling/b/c -> ../c", "dangling/c -> d/e", "dangling/d/e -> ../e",
    "dangling/e -> f/../g", "dangling/f/", "dangling/g -> h/i/j/nonexistent", "dangling/h/i/j/",
    "dangling-file/a -> b/c", "dangling-file/b/c -> ../c", "dangling-file/c -> d/e",
    "dangling-file/d/e -> ../e", "dangling-file/e -> f/../g", "dangling-file/f/",
    "dangling-file/g -> h/i/j/file/foo", "dangling-file/h/i/j/file",
    "loop/basic-loop1 -> basic-loop1", "loop/basic-loop2 -> /loop/basic-loop2",
    "loop/basic-loop3 -> ../loop/basic-loop3", "loop/a/link -> ../b/link",
    "loop/b/link -> /loop/c/link", "loop/c/link -> /loop/d/link", "loop/d -> e",
    "loop/e/link -> ../a/link", "loop/link -> a/link",
]

_PARTIAL = "/../target/foo/bar/../baz"

# (path, no_follow_trailing, expected): (canonical path, file type), an errno,
# or an error class.  Rows grouped as in pathrs.
RESOLVE = [
    # complete lookups
    ("/", False, ESC), ("/../../../../../..", False, ESC),  # absolute: BENEATH
    ("root-link1", False, ESC), ("root-link2", False, ESC), ("root-link3", False, ESC),
    ("escape-link1", False, ESC), ("escape-link2", False, ESC),
    ("a", False, ("a", DIR)), ("b/c/d/e/f", False, ("b/c/d/e/f", DIR)),
    ("b///././c////.//d/./././///e////.//./f//././././", False, ("b/c/d/e/f", DIR)),
    ("b/c/file", False, ("b/c/file", REG)), ("b-file", False, ("b/c/file", REG)),
    ("b/fifo", False, ("b/fifo", FIFO)), ("b/sock", False, ("b/sock", SOCK)),
    # partial lookups
    ("a/b/c/d/e/f/g/h", False, ENOENT), ("a/foo/../bar/baz", False, ENOENT),
    # non-lexical symlinks
    ("target", False, ("target", DIR)), ("target/", False, ("target", DIR)),
    ("target//", False, ("target", DIR)), ("target/foo", False, ENOENT),
    ("target/../target/foo/bar/../baz", False, ENOENT),
    *[(f"link1/target_abs{tail}", False, ESC)  # "/target": absolute
      for tail in ("", "/", "//", "/foo", _PARTIAL)],
    *[(f"link1/target_rel{tail}", False, ("target", DIR)) for tail in ("", "/", "//")],
    ("link1/target_rel/foo", False, ENOENT), (f"link1/target_rel{_PARTIAL}", False, ENOENT),
    *[(f"link2/link1_abs/{name}{tail}", False, ESC)  # "/link1": absolute
      for name in ("target_abs", "target_rel", "..")
      for tail in ("", "/", "//", "/foo", _PARTIAL)],
    *[(f"link2/link1_rel/target_abs{tail}", False, ESC)
      for tail in ("", "/", "//", "/foo", _PARTIAL)],
    *[(f"link2/link1_rel/target_rel{tail}", False, ("target", DIR)) for tail in ("", "/", "//")],
    ("link2/link1_rel/target_rel/foo", False, ENOENT),
    (f"link2/link1_rel/target_rel{_PARTIAL}", False, ENOENT),
    *[(f"link2/link1_rel/../target{tail}", False, ("target", DIR)) for tail in ("", "/", "//")],
    ("link2/link1_rel/../target/foo", False, ENOENT),
    ("link2/link1_rel/../target/../target/foo/bar/../baz", False, ENOENT),
    *[(f"link3/target_abs{tail}", False, ESC) for tail in ("", "/", "//", "/foo", _PARTIAL)],
    ("link3/target_rel", False, ("target", DIR)), ("link3/target_rel/foo", False, ENOENT),
    (f"link3/target_rel{_PARTIAL}", False, ENOENT),
    # a non-directory on the way
    *[(f"{base}{tail}", False, ENOTDIR)
      for base in ("b/c/file", "b-file", "b/fifo", "b/sock")
      for tail in ("/", "//", "/.", "/..", "/../foo/bar")],
    # O_NOFOLLOW does not matter with a trailing slash (the link is followed)
    ("link3/target_abs/", NOFOLLOW, ESC), ("link3/target_abs//", NOFOLLOW, ESC),
    ("link3/target_abs/.", NOFOLLOW, ESC),
    ("link3/target_rel/", NOFOLLOW, ("target", DIR)),
    ("link3/target_rel/.", NOFOLLOW, ("target", DIR)),
    # dangling symlinks are as missing names; an absolute one is an escape here
    *[(f"{link}{tail}", False, ENOENT)
      for link in ("a-fake1", "a-fake2", "a-fake3") for tail in ("", "/foo", "/../bar/baz")],
    *[(f"c/{link}{tail}", False, ESC)
      for link in ("a-fake1", "a-fake2", "a-fake3") for tail in ("", "/foo", "/../bar/baz")],
    *[(f"link3/deep_dangling1{tail}", False, ENOENT) for tail in ("", "/foo", "/..")],
    *[(f"link3/deep_dangling2{tail}", False, ESC) for tail in ("", "/foo", "/..")],
    *[(f"dangling/{tail}", False, ENOENT) for tail in ("a", "b/c", "c", "d/e", "e", "g")],
    *[(f"dangling-file/{tail}", False, ENOTDIR) for tail in ("a", "b/c", "c", "d/e", "e", "g")],
    # loops; a loop through an absolute link meets the escape first
    ("loop/link", False, ESC), ("loop/basic-loop1", False, ELOOP),
    ("loop/basic-loop2", False, ESC), ("loop/basic-loop3", False, ELOOP),
    # no_follow_trailing
    ("link3/target_abs", NOFOLLOW, ("link3/target_abs", LNK)),
    ("e/f", NOFOLLOW, ESC), ("link2/link1_abs/target_rel", NOFOLLOW, ESC),
    ("link2/link1_rel/target_rel", NOFOLLOW, ("link1/target_rel", LNK)),
    ("loop/link", NOFOLLOW, ("loop/link", LNK)),
    ("b-file", NOFOLLOW, ("b-file", LNK)), ("a-fake1", NOFOLLOW, ("a-fake1", LNK)),
]

# pathrs's RESOLVE_NO_SYMLINKS rows: a root in the strict mode
STRICT = [
    ("b/c/d/e", False, ("b/c/d/e", DIR)), ("link3/target_abs", False, SymlinkError),
    ("e/f", False, SymlinkError), ("link2/link1_abs/target_rel", False, SymlinkError),
    ("loop/link", False, SymlinkError), ("link3/target_abs", NOFOLLOW, ("link3/target_abs", LNK)),
]


def _lookup(root, path: str, nofollow: bool) -> tuple[str, int]:
    flags = os.O_PATH | (os.O_NOFOLLOW if nofollow else 0)
    with root.open_handle(path, flags) as handle:
        return handle.path, st.S_IFMT(os.fstat(handle.fd).st_mode)


def _outcome(call):
    try:
        return call()
    except OSError as exc:
        return exc


def _matches(got, expected) -> bool:
    if isinstance(expected, tuple):
        return got == expected
    if isinstance(expected, int):
        return isinstance(got, OSError) and not isinstance(got, (EscapeError, SymlinkError)) \
            and got.errno == expected
    return isinstance(got, expected)


def _run(root, rows) -> list[str]:
    failures = []
    for path, nofollow, expected in rows:
        got = _outcome(lambda: _lookup(root, path, nofollow))
        if not _matches(got, expected):
            failures.append(f"resolve({path!r}, nofollow={nofollow}) = {got!r}; "
                            f"expected {expected!r}")
            continue
        if not isinstance(expected, tuple):
            continue
        # the same place, named by the other ways of asking
        where = expected[0]
        # a Target never follows its final name unless asked: "link/" included
        follow = not nofollow or path.endswith("/")
        target = _outcome(lambda: root.target(path, follow_final=follow))
        if isinstance(target, OSError) or target.path != where:
            failures.append(f"target({path!r}) = {target!r}; expected {where!r}")
        else:
            target.close()
        if not nofollow:
            real = _outcome(lambda: root.realpath(path))
            if real != where:
                failures.append(f"realpath({path!r}) = {real!r}; expected {where!r}")
    return failures


@pytest.fixture
def basic_tree(scratch):
    return build(scratch / "t", BASIC_TREE)


def test_pathrs_resolve_table(basic_tree, make_root):
    failures = _run(make_root(basic_tree.ws), RESOLVE)
    assert not failures, "\n".join(failures)


def test_pathrs_no_symlinks_table(basic_tree, make_root):
    failures = _run(make_root(basic_tree.ws, follow_symlinks=False), STRICT)
    assert not failures, "\n".join(failures)


@pytest.mark.skipif(not os.path.isdir("/proc/self/fd"), reason="no procfs here")
def test_pathrs_proc_table(make_root):
    """pathrs's ``with_proc`` rows: a root on /proc.  ``self`` is a plain
    symlink (to the pid); ``exe`` and ``root`` are magic links, whose text
    is an absolute host path: an escape here (pathrs: ELOOP)."""
    pid = str(os.getpid())
    rows = [
        ("self/sched", False, (f"{pid}/sched", REG)),
        ("self", NOFOLLOW, ("self", LNK)),
        ("self/sched", NOFOLLOW, (f"{pid}/sched", REG)),
        ("self/exe", False, ESC),
        ("self/exe", NOFOLLOW, (f"{pid}/exe", LNK)),
        ("self/root/etc/passwd", NOFOLLOW, ESC),
    ]
    failures = _run(make_root("/proc"), rows)
    strict = make_root("/proc", follow_symlinks=False)
    failures += _run(strict, [("self", False, SymlinkError),
                              ("self/sched", False, SymlinkError)])
    assert not failures, "\n".join(failures)
