"""The spelling battery: every way the resolver must canonicalize one place
gives that place's canonical path, through every kind of answer that names
one (``Handle.path``, ``Target.path`` / ``parent`` / ``creates`` /
``passed``, ``realpath``, ``makedirs(dry_run=True)``, ``scandir`` paths),
on every backend config.  Decisions (deny rules, locks) are made on these,
so a spelling that came out differently anywhere would let a rule be
stepped around.  The tools engineer runs the same spellings through every
tool against deny rules (THREATS.md row 21).

Also: link chains near and over the budget, with link texts near PATH_MAX,
are resolved (or refused, ``ELOOP``) identically by the fast path and the
walk: the walk's step budget never binds before the kernel's own limits.
"""

from __future__ import annotations

import errno
import os

import pytest

from corral.contained import MAX_SYMLINKS

from .helpers.trees import build

PLACE = ".git/hooks/x"
CHAIN = [f"c{i} -> c{i + 1}" for i in range(MAX_SYMLINKS - 1)] + [f"c{MAX_SYMLINKS - 1} -> .git"]
OVER = [f"o{i} -> o{i + 1}" for i in range(MAX_SYMLINKS)] + [f"o{MAX_SYMLINKS} -> .git"]
TREE = [".git/hooks/x", "d/e/", "l -> d", "le -> d/e", "up -> d/..", "hooks -> .git/hooks",
        *CHAIN, *OVER]

# spellings of PLACE (existing file) that every lookup resolves
SPELLINGS = [
    PLACE, "./.git/hooks/x", ".git//hooks//x", ".git/./hooks/./x", "././.git/hooks/x",
    "d/../.git/hooks/x", "d/e/../../.git/hooks/x", ".git/hooks/../hooks/x",
    "l/../.git/hooks/x", "le/../../.git/hooks/x", "up/.git/hooks/x", "hooks/x",
    "hooks/../hooks/x", ".git/hooks/../../.git/hooks/x", "c0/hooks/x",
    "d//..//.git/hooks//x",
]
# what each spelling passes through on the way (Target.passed), in order
PASSED = {
    "d/../.git/hooks/x": ("d",), "d/e/../../.git/hooks/x": ("d/e", "d"),
    ".git/hooks/../hooks/x": (".git/hooks",), "l/../.git/hooks/x": ("l", "d"),
    "le/../../.git/hooks/x": ("le", "d/e", "d"), "up/.git/hooks/x": ("up", "d"),
    "hooks/x": ("hooks",), "hooks/../hooks/x": ("hooks", ".git/hooks"),
    ".git/hooks/../../.git/hooks/x": (".git/hooks", ".git"),
    "c0/hooks/x": tuple(f"c{i}" for i in range(MAX_SYMLINKS)),
    "d//..//.git/hooks//x": ("d",),
}


@pytest.fixture
def tree(scratch):
    return build(scratch / "t", TREE)


@pytest.mark.parametrize("spelling", SPELLINGS)
def test_every_answer_names_the_canonical_place(spelling, tree, make_root):
    root = make_root(tree.ws)
    with root.open_handle(spelling) as handle:
        assert handle.path == PLACE
    assert root.realpath(spelling) == PLACE
    for follow in (False, True):
        with root.target(spelling, follow_final=follow) as target:
            assert (target.path, target.parent, target.name, target.creates) == \
                (PLACE, ".git/hooks", "x", ())
            assert target.passed == PASSED.get(spelling, ()), target.passed
    parent = spelling.rsplit("/", 1)[0]
    assert {e.path for e in root.scandir(parent)} == {PLACE}
    new = spelling.rsplit("/", 1)[0] + "/new/deeper"
    assert root.makedirs(new, dry_run=True) == [".git/hooks/new", ".git/hooks/new/deeper"]


MISSING = [
    # a would-be directory left by "..": the Target plans nothing there and
    # names it as passed; the kernel's own lookups say ENOENT
    ("nx/../.git/hooks/y", ".git/hooks/y", (), ("nx",)),
    ("nx/ny/../../.git/hooks/y", ".git/hooks/y", (), ("nx/ny", "nx")),
    ("nx/../.git/new/y", ".git/new/y", (".git/new",), ("nx",)),
    (".git/nx/../hooks/y", ".git/hooks/y", (), (".git/nx",)),
    ("d/nx/../../.git/hooks/y", ".git/hooks/y", (), ("d/nx", "d")),
    ("l/nx/../e/y", "d/e/y", (), ("l", "d/nx")),
]


@pytest.mark.parametrize("spelling,place,creates,passed", MISSING,
                         ids=[m[0] for m in MISSING])
def test_missing_directories_then_dotdot(spelling, place, creates, passed, tree, make_root):
    root = make_root(tree.ws)
    with root.target(spelling, create_parents=True) as target:
        assert (target.path, target.creates, target.passed) == (place, creates, passed)
    for lookup in (lambda: root.open_handle(spelling), lambda: root.realpath(spelling),
                   lambda: root.target(spelling)):
        with pytest.raises(FileNotFoundError):
            lookup()
    # makedirs creates on the way as os.makedirs does: its dry run says so
    plan = root.makedirs(spelling, dry_run=True)
    assert plan[-1] == place and set(creates) <= set(plan)
    assert root.makedirs(spelling) == plan


@pytest.mark.parametrize("spelling", ["o0/hooks/x", "o0", "o0/", "o0/.", "d/../o0/hooks/x"])
def test_over_the_link_budget_is_eloop_everywhere(spelling, tree, make_root):
    root = make_root(tree.ws)
    calls = [lambda: root.open_handle(spelling), lambda: root.realpath(spelling),
             lambda: root.stat(spelling), lambda: root.open(spelling),
             lambda: root.target(spelling, follow_final=True),
             lambda: root.makedirs(spelling + "/n", dry_run=True)]
    for call in calls:
        with pytest.raises(OSError) as info:
            call()
        assert info.value.errno == errno.ELOOP, (spelling, info.value)


def test_long_link_texts_near_the_limits(make_root, scratch):
    """40 links, each text close to PATH_MAX and full of ``d/..`` detours:
    the most work the kernel takes in one lookup.  The walk resolves them
    to the same place as openat2 (its budget never binds first), in bounded
    time, and refuses the same way when one more link is added."""
    tree = build(scratch / "t", ["d/", "goal/", "goal/f"])
    detour = "d/../" * ((4000 - 10) // 5)
    for i in range(MAX_SYMLINKS):
        nxt = f"k{i + 1}" if i < MAX_SYMLINKS - 1 else "goal"
        os.symlink(detour + nxt, tree.ws / f"k{i}")
    os.symlink(detour + "k0", tree.ws / "k-1")  # the 41st link
    root = make_root(tree.ws)
    with root.open_handle("k0/f") as handle:
        assert handle.path == "goal/f"
    assert root.realpath("k0/f") == "goal/f"
    with root.target("k0/f") as target:
        assert target.path == "goal/f" and "d" in target.passed
    with pytest.raises(OSError) as info:
        root.open_handle("k-1/f")
    assert info.value.errno == errno.ELOOP
