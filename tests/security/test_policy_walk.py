"""The per-directory policy state a search walk carries (Policy.scope, then
Scope.child per directory and Scope.visible_names per run of names) answers
exactly as Policy.visible on the canonical path of every entry: random rule
sets (deny, protect, secrets, negations, anchored and unanchored, classes),
random trees of names with case, Unicode-normalisation and HFS+-ignorable
variants, and the default secret rules."""

from __future__ import annotations

import pathlib
import tempfile

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from corral.tools import Policy, Toolbox
from corral.tools._policy.rules import Op
from .helpers.settings import TMP_BASE

# names a walk meets: case and Unicode variants of what the rules name
NAMES = [".env", ".ENV", ".Env", ".env.local", ".env.example", ".ENV.EXAMPLE", "id_rsa",
         "ID_RSA", "id_rsa.pub", "a.py", "A.PY", "x.pem", "X.PEM", "x.pem.py", ".git", ".GIT",
         ".g\u200cit", "hooks", "config", "config.json", "credentials", ".aws", ".docker",
         "private", "Private", "k.secret", "a.token", "caf\u00e9", "cafe\u0301", "CAF\u00c9",
         "\u212bngstrom", "\u00c5ngstrom", "stra\u00dfe", "STRASSE", "\u0130nfo", "x", "a", "b",
         ".env.py", "deploy", "d.tfstate", "d.tfstate.backup", "n\u200d.pem", "\u0301lead"]
SEGMENTS = ["a", "A", "b", "x", "*", "**", "*.py", "*.pem", ".env", ".env.*", "*.secret",
            "private", "Private", "caf\u00e9", "cafe\u0301", "[ab]", "?", "a*", "*b", "config*",
            ".g\u200cit", "hooks", "id_*", "*.PEM", "STRA\u00dfE", "d.tfstate*"]


@st.composite
def patterns(draw: st.DrawFn) -> str:
    parts = draw(st.lists(st.sampled_from(SEGMENTS), min_size=1, max_size=3))
    text = "/".join(parts)
    if draw(st.booleans()):
        text = "/" + text
    if draw(st.integers(0, 4)) == 0:
        text += "/"
    if draw(st.integers(0, 5)) == 0:
        text = "!" + text
    return text


@st.composite
def policies(draw: st.DrawFn) -> Policy:
    return Policy.build(defaults=draw(st.booleans()),
                        allow_git_writes=draw(st.booleans()),
                        deny=draw(st.lists(patterns(), max_size=3)),
                        protect=draw(st.lists(patterns(), max_size=2)),
                        secrets=draw(st.lists(patterns(), max_size=3)))


@st.composite
def trees(draw: st.DrawFn) -> list[tuple[str, ...]]:
    """Directory paths (tuples of names), parents before children."""
    out: list[tuple[str, ...]] = [()]
    for _ in range(draw(st.integers(1, 8))):
        parent = draw(st.sampled_from(out))
        if len(parent) < 4:
            out.append((*parent, draw(st.sampled_from(NAMES))))
    return out


# the directories a walk steps into, below each directory checked (each in NAMES)
CHILDREN = ("private", ".git", "a", "caf\u00e9", ".aws", "Private", ".g\u200cit", "x.pem")
assert set(CHILDREN) <= set(NAMES)


def _path(parts: tuple[str, ...]) -> str:
    return "/".join(parts) or "."


def _check_dir(policy: Policy, op: Op, parts: tuple[str, ...], ends: list[str]) -> None:
    directory = _path(parts)
    scope = policy.scope(directory, op)
    _check_walk(policy, op, scope, parts, ends, depth=0)


def _check_walk(policy: Policy, op: Op, scope, parts: tuple[str, ...], ends: list[str],
                depth: int) -> None:
    def full(name: str) -> str:
        return "/".join((*parts, name))
    # the oracle's answer for each name of this directory, asked once (it is
    # a pure function of the path): the checks below ask it again and again
    visible = {name: policy.visible(full(name), op) for name in NAMES}
    for name in NAMES:
        assert scope.visible(name) == visible[name], (parts, name)
    for end in ends:
        names = [n for n in NAMES if n.endswith(end)]
        want = [n for n in names if visible[n]]
        assert scope.visible_names(names) == want, (parts, end)
        ascii_only = [n for n in names if n.isascii()]  # the joined-run fast path
        want = [n for n in ascii_only if visible[n]]
        assert scope.visible_names(ascii_only) == want, (parts, end)
    if depth >= 2:
        return
    for name in CHILDREN:
        child = scope.child(name)
        assert (child is not None) == visible[name], (parts, name)
        if child is not None:
            _check_walk(policy, op, child, (*parts, name), ends, depth + 1)


ENDS = ["", ".py", ".pem", "PEM", "m", "\u00e9", "e\u0301", "json", "n", ".example"]


@pytest.mark.no_backend
@pytest.mark.long
@settings(max_examples=250, deadline=None)
@given(policies(), trees(), st.sampled_from([Op.SEARCH, Op.LIST, Op.READ, Op.CREATE, Op.DELETE]))
def test_walk_state_agrees_with_visible(policy, dirs, op):
    for parts in dirs:
        _check_dir(policy, op, parts, ENDS)


@pytest.mark.no_backend
@pytest.mark.parametrize("policy", [Policy.default(), Policy.none(),
                                    Policy.build(deny=["private/**", "*.secret", "/x/**"]),
                                    Policy.default().beneath("proj/sub")],
                         ids=["default", "none", "deny", "beneath"])
@pytest.mark.parametrize("directory", [(), ("src",), (".aws",), (".git", "hooks"),
                                       ("private",), ("x",), ("caf\u00e9", ".docker")])
def test_walk_state_on_the_default_rules(policy, directory):
    _check_dir(policy, Op.SEARCH, directory, ENDS)


@pytest.mark.no_backend
def test_visible_names_keeps_order_and_drops_only_hidden():
    scope = Policy.default().scope(".", Op.SEARCH)
    names = ["a.py", ".env", "b.py", "id_rsa", ".env.example", "x.pem", "z.txt"]
    assert scope.visible_names(names) == ["a.py", "b.py", ".env.example", "z.txt"]
    assert scope.visible_names([]) == []
    assert Policy.none().scope(".", Op.SEARCH).visible_names(names) is names  # no copy


# -- move_file carries the same scopes down the tree it moves ------------------------

def _expected_move(policy: Policy, entries: list[str], dst: str) -> tuple[str, str] | None:
    """What a check of every entry's whole path (Policy.rule) refuses, in the
    walk's order: ``(field, kind)`` of the first entry a rule covers."""
    for inner in entries:
        kind = policy.rule(f"t/{inner}", Op.MOVE_FROM)
        if kind is not None:
            return "source", kind.value
        kind = policy.rule(f"{dst}/{inner}", Op.MOVE_TO)
        if kind is not None:
            return "destination", kind.value
    return None


def _make_tree(base: pathlib.Path, dirs: list[tuple[str, ...]], files: list[str]) -> None:
    """``dirs`` under ``base/t``, each holding ``files``."""
    for parts in dirs:
        (base / "t").joinpath(*parts).mkdir(parents=True, exist_ok=True)
    for parts in dirs:
        for name in files:
            here = (base / "t").joinpath(*parts, name)
            if not here.exists():
                here.write_text("x")


@settings(max_examples=60, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(policies(), trees(), st.lists(st.sampled_from(NAMES), max_size=3),
       st.sampled_from(["u", "private", "Private", ".aws", "x", "caf\u00e9"]))
def test_move_file_refuses_as_a_whole_path_check(make_root, policy, dirs, files, dst):
    with tempfile.TemporaryDirectory(dir=TMP_BASE) as tmp:
        base = pathlib.Path(tmp)
        _make_tree(base, dirs, files)
        with Toolbox(make_root(tmp), policy=policy) as toolbox:
            if toolbox.policy.rule(dst, Op.MOVE_TO) or toolbox.policy.rule("t", Op.MOVE_FROM):
                return  # refused for the ends themselves: not what this test is about
            entries = [f"{dirpath[2:]}/{name}".lstrip("/")
                       for dirpath, dirnames, filenames in toolbox.root.walk("t")
                       for name in dirnames + filenames]
            want = _expected_move(toolbox.policy, entries, dst)
            answer = toolbox.call("move_file", {"source": "t", "destination": dst})
            if want is None:
                assert answer["ok"] is True, answer
                assert toolbox.root.exists(dst) and not toolbox.root.exists("t")
            else:
                assert answer["ok"] is False and answer["code"] == "DENIED", answer
                assert (answer["details"]["field"], answer["details"].get("kind")) == want, answer
                assert toolbox.root.exists("t") and not toolbox.root.exists(dst)
