"""Hypothesis strategies for hostile paths, symlink targets and trees.

For fuzzing code that resolves paths (corral itself, or a project's own use
of a :class:`corral.contained.Root`).  Needs ``hypothesis``; corral does not
depend on it (``pip install hypothesis``, or the extra ``corral[testing]``).

Design: "pick a bucket, then draw".  Uniform generation is useless here: a
random text almost never names anything that exists, so a run reports
``ENOENT`` a thousand times and never reaches the interesting cases.  Every
strategy therefore first picks a *bucket* with a fixed weight (see
:func:`weighted`), then draws inside it.  Names come mostly from a small
``pool`` that the test also uses to build its tree, so generated paths
collide with real entries; rarer buckets add the edge cases (``..``, empty
segments, case and Unicode-normalisation variants, 255/256-byte names, NUL).

Absolute paths and link targets that should land somewhere real (an
"outside" directory the test watches) are given by the caller, usually with
a token such as ``"@BASE@"`` replaced once the temporary directory exists
(:func:`corral.testing.render`).  The defaults never point at anything that
exists on a real system, so a buggy resolver under test cannot damage the
machine through them.

Public strategies: :func:`names`, :func:`components`, :func:`paths`,
:func:`symlink_targets`, :func:`trees`; and :func:`weighted`, the bucket
chooser.  Bucket order matters for shrinking: failures shrink towards the
first (plainest) bucket.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Sequence

try:
    from hypothesis import strategies as st
except ImportError as exc:  # pragma: no cover - depends on the environment
    raise ImportError("corral.testing.strategies needs hypothesis: pip install hypothesis "
                      "(or the extra: corral[testing])") from exc

from . import TreeEntry

__all__ = ["DEFAULT_POOL", "SAFE_ABSOLUTE", "weighted", "names", "components", "paths",
           "symlink_targets", "trees"]

#: Names that collide often: a lower/upper pair (case-insensitive file
#: systems), a name that is usually a link, one usually a file, and one
#: non-ASCII name whose NFC and NFD forms differ.
DEFAULT_POOL: tuple[str, ...] = ("a", "b", "A", "l", "f", "\u00e9")

#: Default absolute prefixes and targets: absolute, but naming nothing that
#: exists, so a resolver that wrongly follows them touches nothing real.
SAFE_ABSOLUTE: tuple[str, ...] = ("/corral-testing-nonexistent",)

# 255 bytes is the longest legal name (NAME_MAX); 256 is one too many.  The
# multi-byte forms catch code that counts characters instead of bytes.
NAME_255 = "x" * 255
NAME_256 = "x" * 256
NAME_255_MB = "\u00e9" * 127 + "x"  # 2*127+1 = 255 bytes, 128 characters
NAME_256_MB = "\u00e9" * 128  # 256 bytes, 128 characters


def weighted(*buckets: tuple[int, st.SearchStrategy]) -> st.SearchStrategy:
    """Pick one of ``buckets`` (``(weight, strategy)`` pairs) with probability
    proportional to its weight, then draw from it.

    ``st.one_of`` has no weights; this does, and shrinks towards the first
    bucket."""
    choices = [strategy for weight, strategy in buckets for _ in range(weight)]
    if not choices:
        raise ValueError("weighted() needs at least one bucket with a positive weight")
    return st.sampled_from(choices).flatmap(lambda strategy: strategy)


def _variants(pool: Sequence[str]) -> list[str]:
    """Case and Unicode-normalisation variants of the pool's names that are
    different strings (``"A"`` for ``"a"``, NFD ``"e\\u0301"`` for NFC ``"é"``)."""
    out = []
    for name in pool:
        for form in (name.swapcase(), name.upper(), name.lower(),
                     unicodedata.normalize("NFC", name), unicodedata.normalize("NFD", name)):
            if form != name and form not in out and form not in pool:
                out.append(form)
    return out


def _pool_strategy(pool: Sequence[str]) -> st.SearchStrategy[str]:
    pool = tuple(pool)
    if not pool or any(not _is_name(n) for n in pool):
        raise ValueError("pool must be non-empty plain names (no '/', NUL, '.', '..' or '')")
    return st.sampled_from(pool)


def _is_name(name: str) -> bool:
    return bool(name) and "/" not in name and "\x00" not in name and name not in (".", "..")


def names(pool: Sequence[str] = DEFAULT_POOL, *, long: bool = True,
          unicode: bool = True) -> st.SearchStrategy[str]:
    """A name that can be *created*: one component, never ``.``/``..``/empty,
    never ``/`` or NUL, at most 255 bytes.

    Buckets (weight): a pool name (8); a case or NFC/NFD variant of one (2,
    with ``unicode``); a 255-byte name, ASCII or multi-byte (1, with
    ``long``).  Use it for the entries of a tree so that :func:`paths` drawn
    from the same pool hit them.
    """
    buckets = [(8, _pool_strategy(pool))]
    variants = _variants(pool)
    if unicode and variants:
        buckets.append((2, st.sampled_from(variants)))
    if long:
        buckets.append((1, st.sampled_from((NAME_255, NAME_255_MB))))
    return weighted(*buckets)


def components(pool: Sequence[str] = DEFAULT_POOL, *, nul: bool = True, long: bool = True,
               unicode: bool = True) -> st.SearchStrategy[str]:
    """One component of a path (what sits between two ``/``).

    Buckets (weight):

    * a pool name (6): collides with the tree under test;
    * ``..``, ``.`` or ``""`` (3): the empty component makes ``a//b``;
    * a variant (1, with ``unicode``): case-swapped or NFC/NFD form of a pool
      name (distinct on Linux, the same file on APFS/HFS+ and casefold
      ext4);
    * rare (1): 255 and 256-byte names (ASCII and multi-byte, with
      ``long``), a NUL byte (``"a\\x00b"``, ``"f\\x00"`` which C would cut to
      an existing ``f``, with ``nul``), a lone surrogate (the undecodable
      byte ``0xff`` as Python spells it), or any short text without ``/``.
    """
    rare = [st.text(st.characters(exclude_characters="/\x00", exclude_categories=["Cs"]),
                    min_size=1, max_size=6)]
    if unicode:
        rare.append(st.just("\udcff"))
    if long:
        rare.append(st.sampled_from((NAME_255, NAME_256, NAME_255_MB, NAME_256_MB)))
    if nul:
        rare.append(st.sampled_from(("a\x00b", "f\x00", "\x00")))
    buckets = [(6, _pool_strategy(pool)), (3, st.sampled_from(("..", ".", "")))]
    variants = _variants(pool)
    if unicode and variants:
        buckets.append((1, st.sampled_from(variants)))
    buckets.append((1, st.one_of(*rare)))
    return weighted(*buckets)


def paths(pool: Sequence[str] = DEFAULT_POOL, *,
          absolute_prefixes: Sequence[str] = SAFE_ABSOLUTE,
          prefixes: st.SearchStrategy[str] | None = None,
          max_components: int = 5, nul: bool = True, long: bool = True,
          unicode: bool = True) -> st.SearchStrategy[str]:
    """A whole path as a caller might pass it.

    ``0..max_components`` parts from :func:`components` joined by ``/``,
    then decorated:

    * a leading absolute prefix 10 % of the time: ``/``, ``//`` or one of
      ``absolute_prefixes`` (e.g. ``"@BASE@/root/"``, the root's own host
      path, or ``"@BASE@/root-evil/"``, a sibling sharing its prefix);
    * a trailing ``/``, ``/.``, ``//`` or ``/..`` a third of the time;
    * with ``prefixes`` (e.g. a state machine's ``Bundle`` of entries that
      exist), half of the paths start from one of its values, so deep
      existing paths are reached;
    * 2 % are long: a pool name repeated past PATH_MAX (4096 bytes) with
      ``long``.

    The empty path is possible (it names nothing: ``ENOENT``).
    """
    comp = components(pool, nul=nul, long=long, unicode=unicode)
    absolutes = ["/", "//", *absolute_prefixes]
    pool_s = _pool_strategy(pool)

    @st.composite
    def build(draw: st.DrawFn) -> str:
        parts = draw(st.lists(comp, max_size=max_components))
        if prefixes is not None and draw(st.booleans()):
            parts.insert(0, draw(prefixes))
        text: str = "/".join(parts)
        lead = draw(weighted((9, st.just("")), (1, st.sampled_from(absolutes))))
        if lead:
            text = lead.rstrip("/") + "/" + text if not lead.endswith("//") else lead + text
        trail = draw(weighted((6, st.just("")), (1, st.just("/")), (1, st.just("/.")),
                              (1, st.sampled_from(("//", "/..")))))
        text += trail
        if long and draw(weighted((49, st.just(False)), (1, st.just(True)))):
            name: str = draw(pool_s)
            text = "/".join([name] * (4096 // (len(name) + 1) + 1)) + "/" + text
        return text

    return build()


def symlink_targets(pool: Sequence[str] = DEFAULT_POOL, *,
                    absolute: Sequence[str] = SAFE_ABSOLUTE, max_climb: int = 4,
                    climb_tails: Sequence[str] = ()) -> st.SearchStrategy[str]:
    """The text of a symlink to create (non-empty, no NUL).

    Buckets (weight):

    * relative (3): ``a``, ``a/b``, ``./a``: stays inside when the names do;
    * climbing (3): ``../`` up to ``max_climb`` times, optionally followed
      by a pool name or one of ``climb_tails`` (e.g. ``"root-evil/secret"``
      to reach a watched sibling of the root); also ``a/../../x`` (down,
      then out);
    * absolute (2): one of ``absolute``, alone or with a pool name appended
      (pass the watched outside directory, e.g. ``"@BASE@/outside"``);
    * chained (2): a path through other pool names, which are often links
      themselves (``l/a``, ``l/..``, ``a/l``): chains of links, links that
      end outside after several hops;
    * looping (1): ``.``, ``..``, a bare pool name (a link named ``l`` with
      target ``l`` is a self-loop; two links naming each other a 2-cycle),
      ``./l``, ``l/l``;
    * trailing (1): a relative target ending in ``/`` or ``/.`` (the link
      must then resolve to a directory).

    For a chain of exactly 40 or 41 links, which this cannot draw, create
    the chain in the test (the kernel's and corral's limit is 40).
    """
    pool_s = _pool_strategy(pool)
    rel = st.lists(pool_s, min_size=1, max_size=3).map("/".join)
    tails = st.one_of(pool_s, st.sampled_from(tuple(climb_tails))) if climb_tails else pool_s
    climbing = weighted(
        (3, st.tuples(st.integers(1, max_climb), st.one_of(st.just(""), tails))
         .map(lambda kt: "/".join([".."] * kt[0] + ([kt[1]] if kt[1] else [])))),
        (1, st.tuples(pool_s, st.integers(2, max_climb + 1), tails)
         .map(lambda t: "/".join([t[0]] + [".."] * t[1] + [t[2]]))),
    )
    abs_s = st.sampled_from(tuple(absolute) or SAFE_ABSOLUTE)
    absolute_s = st.one_of(
        abs_s, st.tuples(abs_s, pool_s).map(lambda t: t[0].rstrip("/") + "/" + t[1]))
    chained = st.tuples(pool_s, st.sampled_from(("", "..", ".")), st.lists(pool_s, max_size=2)).map(
        lambda t: "/".join([t[0]] + ([t[1]] if t[1] else []) + t[2]))
    looping = st.one_of(st.sampled_from((".", "..")), pool_s, pool_s.map(lambda n: "./" + n),
                        pool_s.map(lambda n: f"{n}/{n}"))
    trailing = st.tuples(rel, st.sampled_from(("/", "/."))).map("".join)
    return weighted((3, rel), (3, climbing), (2, absolute_s), (2, chained), (1, looping),
                    (1, trailing))


def trees(pool: Sequence[str] = DEFAULT_POOL, *, max_entries: int = 12,
          absolute: Sequence[str] = SAFE_ABSOLUTE, climb_tails: Sequence[str] = (),
          fifos: bool = True) -> st.SearchStrategy[tuple[TreeEntry, ...]]:
    """A hostile tree: up to ``max_entries`` :class:`corral.testing.TreeEntry`
    values in creation order, to be made with :func:`corral.testing.build_tree`.

    Each entry is placed in a directory made earlier (or the top), named by
    :func:`names`, and is a directory (3), a file (3), a symlink whose text
    comes from :func:`symlink_targets` (3), or a FIFO (1, with ``fifos``;
    opening one for reading blocks unless done non-blocking).  A file's
    content is its own path, so a test can tell which file it read.
    """
    name_s = names(pool, long=False)
    kind_s = weighted((3, st.just("dir")), (3, st.just("file")), (3, st.just("symlink")),
                      *([(1, st.just("fifo"))] if fifos else []))
    target_s = symlink_targets(pool, absolute=absolute, climb_tails=climb_tails)

    @st.composite
    def build(draw: st.DrawFn) -> tuple[TreeEntry, ...]:
        dirs = [""]
        taken: set[str] = set()
        out = []
        for _ in range(draw(st.integers(0, max_entries))):
            parent = draw(st.sampled_from(dirs))
            path = f"{parent}/{draw(name_s)}" if parent else draw(name_s)
            if path in taken:
                continue
            taken.add(path)
            kind = draw(kind_s)
            if kind == "dir":
                dirs.append(path)
                out.append(TreeEntry("dir", path))
            elif kind == "file":
                out.append(TreeEntry("file", path, path))
            elif kind == "symlink":
                out.append(TreeEntry("symlink", path, draw(target_s)))
            else:
                out.append(TreeEntry("fifo", path))
        return tuple(out)

    return build()
