"""The Root table: every case against every public operation, every backend.

In the style of Go's ``src/os/root_test.go``: a list of small records (a
tree, a path, where the path must land or what it must raise) applied to
each operation (``helpers.operations.OPS``) through ``make_root``, which runs every
backend config (openat2 fast path and walk alike: both must agree).  Each run
also checks that

* nothing outside the root changed (a sibling ``outside/``, a sibling
  ``ws-evil/`` sharing the root's name as a prefix, and the base itself);
* no fd was left open, whether the call succeeded or failed;
* an error never names a host path;
* where the outcome is not a containment refusal, plain ``os`` on the same
  absolute path gives the same result (data, inode identity, listing, errno,
  and the whole tree afterwards).

See ``helpers.table.Case`` for the fields and ``helpers.trees`` for the tree
language.  Row numbers refer to THREATS.md.
"""

from __future__ import annotations

import errno
from pathlib import PurePosixPath

import pytest

from corral.contained import EscapeError, InvalidPathError, SpecialFileError

from .helpers.operations import OPS
from .helpers.table import OK, C, Value, case_ids, run_ops

ELOOP, ENOENT, ENOTDIR, EEXIST, EISDIR, EINVAL = (errno.ELOOP, errno.ENOENT, errno.ENOTDIR,
                                                  errno.EEXIST, errno.EISDIR, errno.EINVAL)
ENAMETOOLONG = errno.ENAMETOOLONG
ESC = EscapeError
TOO_LONG = (InvalidPathError, errno.ENAMETOOLONG)  # refused before any system call

NFC, NFD = "caf\u00e9", "cafe\u0301"
DEEP = "/".join(f"d{i}" for i in range(1, 11))


def chain(n: int, end: str = "target") -> list[str]:
    """``l0 -> l1 -> ... -> l{n-1} -> end``: following ``l0`` takes n hops."""
    return [f"l{i} -> l{i + 1}" for i in range(n - 1)] + [f"l{n - 1} -> {end}"]


# What the kernel says for "link/" where the op does not follow "link": a
# link is not a directory.  O_CREAT with a trailing slash is EISDIR, but
# "link/" names what the link points to, so the link is followed first and
# an outward one is an escape (said as one, not as EISDIR).
_ON_LINK_SLASH = {"remove": ENOTDIR, "rmdir": ENOTDIR, "rename_src": ENOTDIR,
                  "mkdir": EEXIST, "symlink": EEXIST, "rename_dst": EEXIST,
                  "makedirs": EEXIST, "makedirs_dry": EEXIST, "makedirs_exist_ok": ESC,
                  "target": OK}

# -- A: where a path lands (Go's rootTestCases) -----------------------------------

RESOLUTION = [
    # ordinary paths
    C("plain", [], "target", target="target"),
    C("nested", ["a/b/"], "a/b/target", target="a/b/target"),
    C("ten deep", [DEEP + "/"], DEEP + "/target", target=DEEP + "/target"),
    C("dot first", [], "./target", target="target"),
    C("dot inside", ["a/"], "a/./target", target="a/target"),
    C("double slash", ["a/"], "a//target", target="a/target"),
    C("dot dot slash run", ["a/"], "./a/.//./target", target="a/target"),
    C("a/../b", ["a/", "b/"], "a/../b/target", target="b/target"),
    C("a/b/../../x", ["a/b/"], "a/b/../../target", target="target"),
    C("up and down again", ["a/b/", "c/"], "a/b/../../c/../a/target", target="a/target"),
    C("bytes path", ["a/"], b"a/target", target="a/target"),
    C("PathLike path", ["a/"], PurePosixPath("a/target"), target="a/target"),
    # in-root symlinks
    C("symlink to file", ["link -> target"], "link", target="target", ltarget="link"),
    C("symlink into dir", ["d/", "link -> d/target"], "link", target="d/target",
      ltarget="link"),
    C("symlink to dir", ["d/", "ld -> d"], "ld/target", target="d/target"),
    C("symlink chain", ["l1 -> l2", "l2 -> target"], "l1", target="target", ltarget="l1"),
    C("chain through dirs", ["a/", "b/", "a/l -> ../b"], "a/l/target", target="b/target"),
    C("link to parent", ["a/", "a/up -> .."], "a/up/target", target="target"),
    C("link to self dir", ["d/", "d/self -> ."], "d/self/self/target", target="d/target"),
    C("link ending in slash", ["d/", "l -> d/"], "l/target", target="d/target"),
    C("link ending in dot", ["d/", "l -> d/."], "l/target", target="d/target"),
    C("link with dotdot inside", ["d/", "e/", "l -> d/../e"], "l/target", target="e/target"),
    C("dotdot after symlink", ["a/b/", "l -> a/b"], "l/../target", target="a/target"),
    C("dotdot before symlink", ["a/", "l -> target"], "a/../l", target="target", ltarget="l"),
    C("relative link up", ["a/", "a/l -> ../target"], "a/l", target="target", ltarget="a/l"),
    C("link in link's dir", ["d/", "d/l -> x", "d/x -> ../target"], "d/l", target="target",
      ltarget="d/l"),
    C("dangling link, created through", ["l -> newdir/new"], "l", target="newdir/new",
      ltarget="l"),
    C("40-link chain", chain(40), "l0", target="target", ltarget="l0"),
    C("40-link chain to dir", chain(40, "d") + ["d/"], "l0/target", target="d/target"),
    # names
    C("tilde is a name", ["~/"], "~/target", target="~/target"),
    C("tilde alone", [], "~", target="~"),
    C("NFC name", [NFC + "/"], NFC + "/target", target=NFC + "/target"),
    C("NFD name", [NFD + "/"], NFD + "/target", target=NFD + "/target"),
    C("NFC and NFD side by side", [NFD + "/", NFC + "/"], NFC + "/target",
      target=NFC + "/target"),
    C("non-UTF-8 bytes", ["\udcff/"], b"\xff/target", target="\udcff/target"),
    C("non-UTF-8 as surrogate", [], "\udcfe", target="\udcfe"),
    C("255-byte name", [], "x" * 255, target="x" * 255),
    C("255-byte UTF-8 name", [], "\u00e9" * 127 + "x", target="\u00e9" * 127 + "x"),
    C("names that look special", ["...", "-a/"], "-a/ target ", target="-a/ target "),

    # 1: dotdot past the root
    C("dotdot", [], "..", error=ESC),
    C("dotdot slash", [], "../", error=ESC),
    C("dotdot name", [], "../secret", error=ESC),
    C("a/../..", ["a/"], "a/../..", error=ESC),
    C("a/../../x", ["a/"], "a/../../secret", error=ESC),
    C("a/../../ slash", ["a/"], "a/../../", error=ESC),
    C("long dotdot", ["a/b/c/"], "a/b/c/../../../../secret", error=ESC),
    C("out and back in", [], "../ws/target", error=ESC),
    # 2: absolute paths (the core is BENEATH: even one inside the root)
    C("absolute outside", [], "$OUT/secret", error=ESC),
    C("absolute outside dir", [], "$OUT/sub/", error=ESC),
    C("absolute inside the root", ["target"], "$WS/target", error=ESC),
    C("slash", [], "/", error=ESC),
    C("double slash name", [], "//x", error=ESC),
    C("absolute system file", [], "/etc/passwd", error=ESC),
    # 3: the sibling sharing the root's name as a prefix
    C("prefix sibling relative", [], "../ws-evil/secret", error=ESC),
    C("prefix sibling absolute", [], "$EVIL/secret", error=ESC),
    C("link to prefix sibling", ["l -> ../ws-evil"], "l/secret", error=ESC),
    C("absolute link to prefix sibling", ["l -> $EVIL/secret"], "l", error=ESC, ltarget="l"),
    # 4: symlinks leading out
    C("link to absolute outside file", ["l -> $OUT/secret"], "l", error=ESC, ltarget="l"),
    C("link to absolute outside dir", ["l -> $OUT/sub"], "l/inner", error=ESC),
    C("link to absolute outside dir, final", ["l -> $OUT/sub"], "l", error=ESC, ltarget="l"),
    C("absolute link into the root", ["target", "l -> $WS/target"], "l", error=ESC,
      ltarget="l"),
    C("relative link out", ["l -> ../outside/secret"], "l", error=ESC, ltarget="l"),
    C("relative link out, dir", ["l -> ../outside/sub"], "l/inner", error=ESC),
    C("link in subdir climbing out", ["a/", "a/l -> ../../outside"], "a/l/secret", error=ESC),
    C("chain ending outside", ["d/", "l1 -> l2", "l2 -> d/l3", "d/l3 -> ../../outside"],
      "l1/secret", error=ESC),
    C("chain ending outside, final", ["d/", "l1 -> d/l2", "d/l2 -> ../../outside/secret"],
      "l1", error=ESC, ltarget="l1"),
    C("link to dotdot at root", ["up -> .."], "up/outside/secret", error=ESC),
    C("link to dotdot, final", ["d/", "d/up -> ../.."], "d/up", error=ESC, ltarget="d/up"),
    C("dotdot through a link's dir", ["a/", "l -> a"], "l/../../secret", error=ESC),
    C("link to /proc", ["p -> /proc"], "p/self/root/etc/passwd", error=ESC),
    # 6: trailing slash or dot after a link to outside (see also TRAILING below)
    # "l/" names what l points to only for ops that follow it; the others
    # answer as the kernel does for "l/" (l itself is not a directory)
    C("outward link, then /", ["l -> $OUT/sub"], "l/", error=ESC, expect=_ON_LINK_SLASH),
    C("outward link, then //", ["l -> $OUT/sub"], "l//", error=ESC, expect=_ON_LINK_SLASH),
    C("outward link, then /.", ["l -> $OUT/sub"], "l/.", error=ESC),
    C("outward link, then /./", ["l -> $OUT/sub"], "l/./", error=ESC),
    C("outward link, then /inner/..", ["l -> $OUT/sub"], "l/inner/..", error=ESC),
    # 7: dangling links leading out, then created through
    C("dangling absolute link out", ["l -> $OUT/newfile"], "l", error=ESC, ltarget="l"),
    C("dangling relative link out", ["l -> ../outside/newfile"], "l", error=ESC, ltarget="l"),
    C("dangling link to a new outside dir", ["l -> $OUT/newdir"], "l/x", error=ESC),
    C("dangling link to the prefix sibling", ["l -> ../ws-evil/new"], "l", error=ESC,
      ltarget="l"),
    # 8: a symlinked parent directory leading out
    C("symlinked parent out, new name", ["d -> $OUT/sub"], "d/newfile", error=ESC),
    C("symlinked parent out, existing", ["d -> $OUT/sub"], "d/inner", error=ESC),
    C("symlinked grandparent out", ["a/", "a/d -> ../../outside"], "a/d/sub/inner", error=ESC),
    C("symlinked parent out, deep new", ["d -> ../outside"], "d/x/y/z", error=ESC),
    # 5: loops and long chains
    C("self loop", ["l -> l"], "l", error=ELOOP, ltarget="l"),
    C("self loop, below", ["l -> l"], "l/x", error=ELOOP),
    C("two-link cycle", ["a -> b", "b -> a"], "a", error=ELOOP, ltarget="a"),
    C("cycle through dirs", ["d/", "d/l -> ../d/l"], "d/l", error=ELOOP, ltarget="d/l"),
    C("41-link chain", chain(41), "l0", error=ELOOP, ltarget="l0"),
    C("41-link chain, below", chain(41, "d") + ["d/"], "l0/x", error=ELOOP),
]


# -- B: odd spellings and plain errors, must equal os (rootConsistencyTestCases) -

CONSISTENCY = [
    C("root dot", ["f"], "."),
    C("root dot slash", ["f"], "./"),
    C("root dot dot", ["f"], "./."),
    C("root via a/..", ["a/", "f"], "a/.."),
    C("root via a/../", ["a/", "f"], "a/../"),
    C("empty path", ["f"], ""),
    C("existing file", ["f"], "f"),
    C("existing dir", ["d/", "d/f"], "d"),
    C("existing empty dir", ["d/"], "d"),
    C("dir slash", ["d/", "d/f"], "d/"),
    C("dir slash dot", ["d/", "d/f"], "d/."),
    C("dir double slash", ["d/", "d/f"], "d//"),
    C("dir dotdot", ["d/", "d/f"], "d/.."),
    C("file slash", ["f"], "f/"),
    C("file slash dot", ["f"], "f/."),
    C("file slash dotdot", ["f"], "f/.."),
    C("file as a dir", ["f"], "f/x"),
    C("missing", [], "missing"),
    C("missing slash", [], "missing/"),
    C("missing parent", [], "missing/x"),
    C("missing parents", [], "m1/m2/m3"),
    C("missing then dotdot", [], "missing/../x"),
    C("link to dir", ["d/", "d/f", "l -> d"], "l"),
    C("link to dir, slash", ["d/", "d/f", "l -> d"], "l/"),
    C("link to dir, slash dot", ["d/", "d/f", "l -> d"], "l/."),
    C("link to dir, double slash", ["d/", "d/f", "l -> d"], "l//"),
    C("link to empty dir", ["d/", "l -> d"], "l"),
    C("link to file, slash", ["f", "l -> f"], "l/"),
    C("link to file, slash dot", ["f", "l -> f"], "l/."),
    C("link text ends in slash, to file", ["f", "l -> f/"], "l"),
    C("link text ends in slash, to dir", ["d/", "l -> d/"], "l"),
    C("link text is dot", ["f", "l -> ."], "l"),
    C("link text is dot, below", ["f", "l -> ."], "l/f"),
    C("dangling link", ["l -> missing"], "l"),
    C("dangling link, slash", ["l -> missing"], "l/"),
    C("dangling link into missing dir", ["l -> missing/x"], "l"),
    C("dangling link below", ["l -> missing"], "l/x"),
    C("link to missing with slash", ["l -> missing/"], "l"),
    C("link inside dir to file", ["d/", "d/f", "d/l -> f"], "d/l"),
    C("NFD spelling of an NFC name", [NFC], NFD),
    C("NFC spelling of an NFD dir", [NFD + "/", NFD + "/f"], NFC + "/f"),
    C("case variant", [".git/", ".git/f"], ".GIT/f"),
    C("dir with entries of every kind", ["d/", "d/f", "d/e/", "d/l -> f", "d/dl -> e",
                                         "d/out -> $OUT/sub", "d/p|fifo", "d/s|sock"], "d"),
    C("dotdot in a link's target below", ["a/b/", "a/b/f", "l -> a/b/../b"], "l/f"),
]


# -- C: what os cannot be asked (it would block or escape) ------------------------

# (write_bytes_excl is not among them: the name exists, EEXIST, as os says)
_BLOCKING = ("open_r", "open_w", "read_bytes", "write_bytes", "write_bytes_replace",
             "open_handle", "open_nofollow")
_SPECIAL = {op: SpecialFileError for op in _BLOCKING}
ALL_OPS = [op.name for op in OPS]

SPECIAL = [
    # 12: FIFOs, sockets and devices never block and are refused for file use
    C("fifo", ["p|fifo"], "p", expect=_SPECIAL, no_oracle=_BLOCKING),
    C("link to fifo", ["p|fifo", "l -> p"], "l", expect={**_SPECIAL, "open_nofollow": ELOOP},
      no_oracle=_BLOCKING),
    C("fifo, slash", ["p|fifo"], "p/"),
    C("socket", ["s|sock"], "s", expect=_SPECIAL, no_oracle=_BLOCKING),
    C("char device", ["n|chr"], "n", expect=_SPECIAL, no_oracle=_BLOCKING),
    # 11: a hard link to an outside file.  The core cannot tell it apart (the
    # tools refuse reads); a write replaces the link, never writes through.
    # (open(O_WRONLY) on it would write to the shared inode: not in this row.)
    C("hard link to outside file", ["h => $OUT/secret"], "h",
      expect={"read_bytes": Value(b"outside secret"), "write_bytes": OK,
              "write_bytes_replace": OK},
      no_oracle=("write_bytes", "write_bytes_replace"),
      ops=[n for n in ALL_OPS if n != "open_w"]),
    # 14: input that is not a path at all
    C("NUL byte", [], "a\x00b", error=InvalidPathError),
    C("NUL byte, bytes", ["a"], b"a\x00/b", error=InvalidPathError),
    C("NUL after a valid prefix", ["target"], "target\x00/../../etc", error=InvalidPathError),
    C("256-byte name", [], "x" * 256, error=TOO_LONG),
    C("256-byte name below", ["d/"], "d/" + "x" * 256, error=TOO_LONG),
    C("5000-byte path", [], "a/" * 2500, error=TOO_LONG),
    C("5000-byte path of dotdots", [], "../" * 1667, error=TOO_LONG),
]


# One test per case and backend config; it runs every op and reports each
# op that failed (the ops of a case are sub-tests, as t.Run in Go).

@pytest.mark.parametrize("case", RESOLUTION, ids=case_ids(RESOLUTION))
def test_resolution(case, make_root, scratch):
    run_ops(case, OPS, make_root, scratch)


@pytest.mark.parametrize("case", CONSISTENCY, ids=case_ids(CONSISTENCY))
def test_consistency_with_os(case, make_root, scratch):
    run_ops(case, OPS, make_root, scratch)


@pytest.mark.parametrize("case", SPECIAL, ids=case_ids(SPECIAL))
def test_special(case, make_root, scratch):
    run_ops(case, OPS, make_root, scratch)
