"""Go's ``os.Root`` test tables (``src/os/root_test.go``), ported: the same
trees and paths, written again as this suite's cases and run through every
op of ``helpers.operations.OPS`` on every backend config (so each is also checked
against plain ``os``, for fd leaks, and fast path against walk).

* :data:`GO_ROOT` is ``rootTestCases``: where a path lands (A-style).
* :data:`GO_CONSISTENCY` is ``rootConsistencyTestCases``: Root and plain
  ``os`` must agree (B-style).
* :data:`GO_MULTI` is the ``rootMulti`` tables: every kind of target
  (absent, file, directory, symlink to each) under every spelling Go tries
  (``BASE``, ``BASE/``, ``DIR/../BASE``, ``DIR/../BASE/``, ``../ROOT/BASE``,
  ``/ROOT/BASE`` and their ``/`` forms).

Go's tree is named ``ROOT``; here it is ``ws`` (``../ROOT/x`` is
``../ws/x``, ``$ABS`` is ``$WS``).  Legitimate differences, each with its
reason (the rest of Go's expectations hold as written):

1. Non-following operations on ``link/`` (``remove``, ``rmdir``,
   ``rename``, ``mkdir``, ``symlink``, ``makedirs`` without ``exist_ok``)
   give the kernel's answer for ``name/`` (ENOTDIR/EEXIST) instead of Go's
   ErrPathEscapes when the link leads out: corral never follows the link
   there, so nothing outside is looked at; the answer is what Linux gives.
2. ``Root.target`` of ``link/`` is the link itself (a Target never follows
   its final name unless asked), so it succeeds where Go's resolution of the
   same spelling for a following op would refuse.
3. ``/ROOT/BASE``, an absolute path naming a file inside the root, is an
   escape for the core (BENEATH, as Go); the tools layer accepts it.
4. A NUL byte is :class:`InvalidPathError` (EINVAL) before any system call;
   ``os`` raises ValueError.
5. Go's ``unreadable directory`` case is not ported: this suite runs as root,
   which ignores permission bits (EACCES is injected through
   ``corral.testing.backends.FaultBackend`` in test_kernel_rules.py and the
   fault tests instead).
6. Go skips rename consistency for ``link/`` on Linux; here it is compared
   with the kernel like everything else.
"""

from __future__ import annotations

import errno
from dataclasses import dataclass

import pytest

from corral.contained import EscapeError, InvalidPathError, SpecialFileError

from .helpers.operations import OPS
from .helpers.table import OK, C, run_ops

ESC = EscapeError
ELOOP, ENOENT, ENOTDIR, EEXIST = errno.ELOOP, errno.ENOENT, errno.ENOTDIR, errno.EEXIST

# differences 1 and 2: what the non-following ops answer for "link/" when
# the link leads out (the kernel's answer; the link is never followed)
_LINK_SLASH_OUT = {"remove": ENOTDIR, "rmdir": ENOTDIR, "rename_src": ENOTDIR,
                   "mkdir": EEXIST, "symlink": EEXIST, "rename_dst": EEXIST,
                   "makedirs": EEXIST, "makedirs_dry": EEXIST, "target": OK}


def _slash_out() -> dict:
    return dict(_LINK_SLASH_OUT)


GO_ROOT = [
    C("go: plain path", [], "target", target="target"),
    C("go: path in directory", ["a/b/c/"], "a/b/c/target", target="a/b/c/target"),
    C("go: symlink", ["link -> target"], "link", target="target", ltarget="link"),
    C("go: symlink dotdot slash", ["link -> ../"], "link", error=ESC, ltarget="link"),
    C("go: symlink ending in slash", ["dir/", "link -> dir/"], "link/target",
      target="dir/target"),
    C("go: slash after symlink to file", ["target", "link -> ../ws/target"], "link/",
      error=ESC, expect=_slash_out()),
    C("go: slash after symlink to dir", ["target/", "link -> ../ws/target"], "link/",
      error=ESC, expect=_slash_out()),
    C("go: symlink dotdot dotdot slash", ["dir/link -> ../../"], "dir/link", error=ESC,
      ltarget="dir/link"),
    C("go: symlink chain", ["link -> a/b/c/target", "a/b -> e", "a/e -> ../f", "f -> g/h/i",
                            "g/h/i -> ..", "g/c/"], "link", target="g/c/target", ltarget="link"),
    C("go: path with dot", ["a/b/"], "./a/./b/./target", target="a/b/target"),
    C("go: path with dotdot", ["a/b/"], "a/../a/b/../../a/b/../b/target", target="a/b/target"),
    C("go: path with dotdot slash", [], "../", error=ESC),
    C("go: path with dotdot dotdot slash", ["a/"], "a/../../", error=ESC),
    C("go: dotdot no symlink", ["a/"], "a/../target", target="target"),
    C("go: dotdot after symlink", ["a -> b/c", "b/c/"], "a/../target", target="b/target"),
    C("go: dotdot before symlink", ["a -> b/c", "b/c/"], "b/../a/target", target="b/c/target"),
    C("go: symlink ends in dot", ["a -> b/.", "b/"], "a/target", target="b/target"),
    C("go: directory does not exist", [], "a/file"),  # B-style: Go's alwaysFails, os decides
    C("go: empty path", [], ""),
    C("go: symlink cycle", ["a -> a"], "a", error=ELOOP, ltarget="a"),
    C("go: path escapes", [], "../ws/target", error=ESC),
    C("go: long path escapes", ["a/"], "a/../../ws/target", error=ESC),
    C("go: absolute symlink", ["link -> $WS/target"], "link", error=ESC, ltarget="link"),
    C("go: relative symlink", ["link -> ../ws/target"], "link", error=ESC, ltarget="link"),
    C("go: symlink chain escapes", ["link -> a/b/c/target", "a/b -> e", "a/e -> ../../ws",
                                    "c/"], "link", error=ESC, ltarget="link"),
    # TestRootSymlinkToRoot
    C("go: symlink to root", ["d/d -> .."], "d/d/new", target="new"),
]

GO_CONSISTENCY = [
    C("go: file", ["target"], "target"),
    C("go: dir slash dot", ["target/file"], "target/."),
    C("go: dot", ["file"], "."),
    C("go: file slash dot", ["target"], "target/."),
    C("go: dir slash", ["target/file"], "target/"),
    C("go: dot slash", ["file"], "./"),
    C("go: file slash", ["target"], "target/"),
    C("go: file in path", ["file"], "file/target"),
    C("go: directory in path missing", [], "dir/target"),
    C("go: target does not exist", [], "target"),
    C("go: symlink slash", ["target/file", "link -> target"], "link/"),
    C("go: symlink slash dot", ["target/file", "link -> target"], "link/."),
    C("go: unresolved symlink", ["link -> target"], "link"),
    C("go: resolved symlink", ["link -> target", "target"], "link"),
    C("go: dotdot in path after symlink", ["a -> b/c", "b/c/", "b/target"], "a/../target"),
    C("go: symlink to dir ends in slash", ["dir/", "link -> dir/"], "link"),
    C("go: symlink to file ends in slash", ["file", "link -> file/"], "link"),
    C("go: long file name", [], "a" * 500, error=(InvalidPathError, errno.ENAMETOOLONG)),
    C("go: unix domain socket target", ["a|sock"], "a",
      expect={op: SpecialFileError for op in ("open_r", "open_w", "read_bytes", "write_bytes",
                                              "write_bytes_replace", "open_handle",
                                              "open_nofollow")},
      no_oracle=["open_r", "open_w", "read_bytes", "write_bytes", "write_bytes_replace",
                 "open_handle", "open_nofollow"]),
    C("go: unix domain socket in path", ["a|sock"], "a/b"),
    C("go: question mark", [], "?"),
    C("go: nul byte", [], "\x00", error=InvalidPathError),  # difference 4
]


# -- the rootMulti tables -----------------------------------------------------------

@dataclass(frozen=True)
class Ref:
    """A way to spell the path of a file named BASE (Go's testFileRef)."""

    name: str
    template: str
    escapes: bool

    def path(self, base: str) -> str:
        return self.template.replace("BASE", base)

    @property
    def slash(self) -> bool:
        return self.template.endswith("/")


REFS = [Ref("b", "BASE", False), Ref("bs", "BASE/", False),
        Ref("dpb", "DIR/../BASE", False), Ref("dpbs", "DIR/../BASE/", False),
        Ref("prb", "../ws/BASE", True), Ref("prbs", "../ws/BASE/", True),
        Ref("srb", "$WS/BASE", True), Ref("srbs", "$WS/BASE/", True)]
KINDS = ["absent", "file", "dir"]


def _entry(name: str, kind: str) -> list[str]:
    return {"absent": [], "file": [name], "dir": [f"{name}/", f"{name}/c_{name}"]}[kind]


def _multi_cases() -> list:
    cases = []
    # every spelling of every kind of target but a symlink
    for ref in REFS:
        for kind in KINDS:
            fs = ["DIR/", *_entry("target", kind)]
            label = f"go multi: {ref.name}{kind[0].upper()}"
            if ref.escapes:
                cases.append(C(label, fs, ref.path("target"), error=ESC))
            else:
                cases.append(C(label, fs, ref.path("target")))
    # a direct reference (and with "/") to a symlink to every spelling of each kind
    for ref in REFS[:2]:
        for kind in KINDS:
            link_refs = REFS if kind in ("file", "dir") else REFS[:2]
            for link_ref in link_refs:
                fs = ["DIR/", *_entry("s_target", kind),
                      f"target -> {link_ref.path('s_target')}"]
                label = f"go multi: {ref.name}S{link_ref.name}{kind[0].upper()}"
                path = ref.path("target")
                if not link_ref.escapes:
                    cases.append(C(label, fs, path))
                elif ref.slash:
                    cases.append(C(label, fs, path, error=ESC, expect=_slash_out()))
                else:
                    cases.append(C(label, fs, path, error=ESC, ltarget="target"))
    return cases


GO_MULTI = _multi_cases()


@pytest.mark.parametrize("case", GO_ROOT, ids=[c.name for c in GO_ROOT])
def test_go_root_cases(case, make_root, scratch):
    run_ops(case, OPS, make_root, scratch)


@pytest.mark.parametrize("case", GO_CONSISTENCY, ids=[c.name for c in GO_CONSISTENCY])
def test_go_consistency_cases(case, make_root, scratch):
    run_ops(case, OPS, make_root, scratch)


@pytest.mark.parametrize("case", GO_MULTI, ids=[c.name for c in GO_MULTI])
def test_go_multi_cases(case, make_root, scratch):
    run_ops(case, OPS, make_root, scratch)


def test_go_multi_table_is_complete():
    # 8 spellings x 3 kinds, then 2 spellings x (8 + 8 + 2) link spellings
    assert len(GO_MULTI) == 8 * 3 + 2 * (8 + 8 + 2)
    assert len({c.name for c in GO_MULTI}) == len(GO_MULTI)
