"""Policy.rule remembers its decisions, and that changes none of them.

A decision depends only on the canonical path, the operation and the
policy's own (immutable) rules, so ``rule`` keeps what it decided.  The
memory is bounded (a long path is never kept; past the cap it starts over),
and every answer equals a fresh decision, asked first or asked again.
"""

from __future__ import annotations

import itertools

from corral.tools import Policy
from corral.tools._policy import rules as _policy
from corral.tools._policy.rules import Op

PATHS = [".", "src/a.py", ".git/config", ".git", "a/.git/hooks/pre-commit", ".env",
         ".env.example", "deep/.env.local", ".vscode/settings.json", "x/.envrc",
         "build/out.o", "build", "docs/id_rsa", "ok.pem", "site-packages/x.pth", "x" * 600]


def policies() -> list[Policy]:
    return [Policy.default(), Policy.none(),
            Policy.build(deny=["build/", "*.o"], protect=["docs/**"]),
            Policy.default().beneath("sub")]


def test_every_decision_is_the_fresh_one_asked_once_or_twice():
    for policy in policies():
        for path, op in itertools.product(PATHS, list(Op)):
            fresh = policy._rule(path, op)
            assert policy.rule(path, op) == fresh, (policy, path, op)
            assert policy.rule(path, op) == fresh  # from memory now


def test_the_memory_is_bounded_and_skips_long_paths():
    policy = Policy.build(deny=["build/"])
    for n in range(_policy._DECIDED_MAX * 2 + 7):
        policy.rule(f"dir{n}/file.py", Op.READ)
        assert len(policy._decided) <= _policy._DECIDED_MAX
    policy.rule("y" * (_policy._DECIDED_PATH_CHARS + 1), Op.READ)
    assert ("y" * (_policy._DECIDED_PATH_CHARS + 1), Op.READ) not in policy._decided
    assert policy.rule("build/x", Op.READ) is not None  # still deciding right after a reset


def test_a_changed_policy_starts_with_no_memory():
    base = Policy.default()
    assert base.rule("build/x", Op.READ) is None
    denied = base.extended(deny=["build/"])
    assert denied.rule("build/x", Op.READ) is not None


def test_a_remembered_scope_answers_as_a_fresh_one():
    names = [".env", "a.py", "id_rsa", ".git", "x.pem", "build", "ok.txt", "É.env"]
    for policy in policies():
        for directory, op in itertools.product([".", "src", "build", ".git", "deep/er"],
                                               [Op.LIST, Op.SEARCH, Op.DELETE]):
            first = policy.scope(directory, op)
            assert policy.scope(directory, op) is first  # remembered
            fresh = _policy.Policy.scope(_copy(policy), directory, op)
            assert first.visible_names(names) == fresh.visible_names(names)
            assert [first.visible(n) for n in names] == [fresh.visible(n) for n in names]


def test_remembered_scopes_are_bounded():
    policy = Policy.default()
    for n in range(_policy._SCOPES_MAX * 2 + 3):
        policy.scope(f"d{n}", Op.LIST)
        assert len(policy._scopes) <= _policy._SCOPES_MAX


def _copy(policy: Policy) -> Policy:
    """The same rules, with nothing remembered yet."""
    import dataclasses
    return dataclasses.replace(policy)


RUNS = [["a.py", "b.py", "README.md"], ["a.py", "b.py", "README.md", ".env"],
        ["id_rsa", "x.txt"], ["x.txt", "key.pem"], [".env.local", "y.c"],
        ["gha-creds-1.json"], ["Config.JSON", "z"], ["ok.txt"], ["é.env", ".ENV"]]


def test_a_remembered_clear_run_of_names_answers_as_a_fresh_test():
    """A directory's names found to match no rule are remembered (a pure
    function of the names and the rules); asked again, with a secret added
    or with another policy, every answer is the per-name one."""
    for policy in policies():
        for op in (Op.SEARCH, Op.LIST):
            scope = policy.scope("src", op)
            for names in RUNS * 2:  # the second pass meets what the first remembered
                fresh = [n for n in names if scope.visible(n)]
                assert scope.visible_names(list(names)) == fresh, (policy, names)
                for end in ("", ".py", ".json"):
                    ending = [n for n in names if n.endswith(end)]
                    assert scope.visible_names(ending) == \
                        [n for n in ending if scope.visible(n)]


def _remembered() -> set[tuple[object, str]]:
    return {(tests, run) for tests, runs in _policy._CLEAR_RUNS.items() for run in runs}


def test_remembered_clear_runs_are_bounded_and_skip_long_runs():
    _policy._CLEAR_RUNS.clear()
    scope = Policy.default().scope(".", Op.SEARCH)
    for i in range(_policy._CLEAR_RUNS_MAX + 10):
        assert scope.visible_names([f"f{i}.py"]) == [f"f{i}.py"]
    assert len(_remembered()) <= _policy._CLEAR_RUNS_MAX
    long_run = ["x" * 200 + str(i) for i in range(_policy._CLEAR_RUN_CHARS // 100)]
    before = _remembered()
    assert scope.visible_names(long_run) == long_run
    assert _remembered() == before


def test_runs_remembered_for_many_policies_are_bounded_as_a_whole():
    _policy._CLEAR_RUNS.clear()
    for n in range(_policy._CLEAR_RUN_TESTS * 3):
        scope = Policy.build(deny=[f"*.secret{n}"]).scope(".", Op.SEARCH)
        for i in range(_policy._CLEAR_RUNS_MAX + 10):
            assert scope.visible_names([f"f{i}.py"]) == [f"f{i}.py"]
        assert scope.visible_names([f"x.secret{n}", "a.py"]) == ["a.py"]
        assert len(_remembered()) <= _policy._CLEAR_RUNS_MAX


def test_runs_found_clear_under_one_set_of_tests_are_not_clear_under_another():
    """Runs are remembered under the quick tests they were found to pass:
    a policy whose tests hold the same strings in another role (an exact
    name, a suffix, a prefix) decides the same run afresh."""
    _policy._CLEAR_RUNS.clear()
    runs = [["xa.b", "c.py"], ["a.bx", "c.py"], ["a.b", "c.py"]]
    for deny in (["a.b"], ["*a.b"], ["a.b*"], ["a.b", "*a.b"]):
        scope = Policy.build(deny=deny).scope(".", Op.SEARCH)
        for names in runs * 2:
            assert scope.visible_names(list(names)) == [n for n in names if scope.visible(n)], \
                (deny, names)
    assert Policy.build(deny=["*a.b"]).scope(".", Op.SEARCH).visible_names(["xa.b"]) == []
