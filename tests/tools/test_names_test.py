"""A directory's run of names tested by the backend: the same answers everywhere.

A search asks the policy which names of a directory it may show
(``Scope.visible_names``); where no rule can match above the directory,
a run whose names meet none of the policy's quick tests (an exact name, a
suffix, a prefix, a name that folds further) is shown whole.  That test of
the whole run is the backend's ``names_test`` (one C call a run in the
native backend, plain Python in the others).  Here the native test, the
``os`` backend's and the policy's own Python test (the one it runs when no
backend test is adopted) are fuzzed against each other on random names,
for every set of quick tests the default policy (each operation) and
gitignore-style deny lists produce; and a policy holding a backend's test
shows exactly the names ``Scope.visible`` shows, one by one.
"""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from corral.contained import OsBackend, backend_by_name
from corral.tools import Policy
from corral.tools._policy import rules as _policy
from corral.tools._policy.rules import Op


def _native():
    try:
        return backend_by_name("native")
    except OSError:
        return None


NATIVE = _native()
BACKENDS = [OsBackend()] + ([NATIVE] if NATIVE is not None else [])

# gitignore-style lines as a host's deny list: names, suffixes, prefixes, a
# '*' inside, directories, anchored and negated lines, one past the quick tests
GITIGNORE = ["*.log", "/generated/", "build/", "node_modules", ".env*", "*.PEM", "!keep.log",
             "gha-*.json", "secret_?", "Thumbs.db", "*~", "a/**/b", ".DS_Store", "*.tfstate",
             "~1x", "dot.", "x "]


def _policies() -> list[Policy]:
    return [Policy.default(), Policy.none(),
            Policy.build(deny=GITIGNORE),
            Policy.build(deny=["*"]),
            Policy.build(deny=["x*", "*y", "*"]),
            Policy.build(deny=["café", "*.ÄB", "ß*"]),  # tests no ASCII name meets
            Policy.default().beneath("sub")]


def _quicks() -> list[_policy._Quick]:
    found: dict[str, _policy._Quick] = {}
    for policy in _policies():
        for op in Op:
            quick = policy.scope(".", op)._quick
            if quick.tests is not None:
                found.setdefault(quick.key, quick)
    return list(found.values())


QUICKS = _quicks()

# what the tests are made of, in either case, and what folds further
PIECES = [".env", ".ENV.local", "id_rsa", "ID_RSA", ".pem", ".Pem", "x.PEM.bak", "gha-creds-",
          "GHA-", ".p12", "config.json", "Config.JSON", "~1", "git~1", "~", "1", ".", " ",
          "credentials", ".tfstate.backup", ".log", "keep", "node_modules", "Thumbs.DB", "a.py",
          "secret_", "dot", "x", "y", "X", "Y"]
NAME = st.lists(st.one_of(st.sampled_from(PIECES),
                          st.text(st.characters(min_codepoint=0x20, max_codepoint=0x7E),
                                  max_size=6)),
                min_size=1, max_size=4).map("".join).filter(lambda n: n not in ("", ".", ".."))
RUN = st.lists(NAME, min_size=1, max_size=12)


def _policy_test(quick: _policy._Quick, run: str) -> bool:
    """The policy's own Python test of an ASCII run (Scope.visible_names with
    no backend test): every name clear of the quick tests."""
    exact, suffixes, prefixes, ends = quick.tests
    lowered = run.lower()
    return (exact.isdisjoint(lowered.split("\0")) and "~1" not in run
            and ends(f"\0{lowered}\0"[::-1]) is None)


def test_there_are_tests_of_every_kind():
    assert any(q.names for q in QUICKS) and any(q.suffixes for q in QUICKS) \
        and any(q.prefixes for q in QUICKS)
    assert any("" in q.suffixes or "" in q.prefixes for q in QUICKS)  # "*": every name


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(names=RUN, which=st.integers(min_value=0))
def test_every_backend_tests_a_run_as_the_policy_does(names, which):
    quick = QUICKS[which % len(QUICKS)]
    run = "\0".join(names)
    expected = _policy_test(quick, run)
    for backend in BACKENDS:
        clear = backend.names_test(quick.names, quick.suffixes, quick.prefixes)
        assert clear(run) is expected, (type(backend).__name__, quick.key, names)


@pytest.mark.parametrize("backend", BACKENDS, ids=lambda b: type(b).__name__)
def test_each_listed_name_alone_decides_as_the_run(backend):
    """Every piece alone and all of them as one run: a run is clear only
    when each of its names is."""
    for quick in QUICKS:
        clear = backend.names_test(quick.names, quick.suffixes, quick.prefixes)
        alone = [clear(name) for name in PIECES]
        assert clear("\0".join(PIECES)) is all(alone)
        assert alone == [_policy_test(quick, name) for name in PIECES], quick.key


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(names=RUN, which=st.integers(min_value=0), pick=st.integers(min_value=0))
def test_a_policy_holding_a_backend_test_shows_what_visible_shows(names, which, pick):
    policies = _policies()
    policy = policies[which % len(policies)]
    backend = BACKENDS[pick % len(BACKENDS)]
    policy.test_names_with(backend.names_test)
    for op in Op:
        for where in (".", "src", "deep/er"):
            scope = policy.scope(where, op)
            assert scope.visible_names(list(names)) == [n for n in names if scope.visible(n)], \
                (policy, op, where, names)


@pytest.mark.parametrize("backend", BACKENDS, ids=lambda b: type(b).__name__)
def test_every_printable_character_folds_as_the_policy_folds_it(backend):
    """Each printable ASCII character, as a whole name and at either end of
    one, against tests holding each character lower-cased (exact, suffix,
    prefix): only A-Z meet their lower case."""
    printable = [chr(c) for c in range(0x20, 0x7F)]
    lowered = sorted({c.lower() for c in printable})
    clear = backend.names_test(frozenset(f"={c}" for c in lowered), [f"{c}>" for c in lowered],
                               [f"<{c}" for c in lowered])
    quick = _policy._Quick([])
    quick.names = frozenset(f"={c}" for c in lowered)
    quick.tests = (quick.names, tuple(f"{c}>" for c in lowered), tuple(f"<{c}" for c in lowered),
                   _policy._ends_search(tuple(f"{c}>" for c in lowered),
                                        tuple(f"<{c}" for c in lowered)))
    for c in printable:
        for name in (f"={c}", f"q{c}>", f"<{c}q", f"={c}q", f"q{c}", c * 3):
            assert clear(name) is _policy_test(quick, name), (name, type(backend).__name__)
        assert not clear(f"={c.upper()}") and not clear(f"x{c.upper()}>")


@pytest.mark.skipif(NATIVE is None, reason="the native module is not built on this install")
def test_the_native_test_refuses_a_malformed_test_list():
    from corral.contained import _native_backend
    lib = _native_backend._lib
    run = b"a.py\0b.py"
    assert lib.corral_names_clear(b"s\x00\x03.py", 6, run, len(run)) == 0
    assert lib.corral_names_clear(b"s\x00\x03.pe", 6, run, len(run)) == 1
    for bad in (b"s\x00\x09.py", b"q\x00\x03.py", b"s\x00"):  # too long, no such kind, cut
        assert lib.corral_names_clear(bad, len(bad), run, len(run)) == -1
    assert lib.corral_names_clear(b"", -1, run, len(run)) == -1
