"""Policy.scope(dir).visible(name), the per-directory form searches use
while walking, answers exactly as Policy.visible(dir/name) does."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from corral.tools import Policy
from corral.tools._policy.rules import Op

POLICIES = [Policy.default(), Policy.none(), Policy.build(deny=["private/**", "*.secret"]),
            Policy.build(defaults=False, protect=["deploy/**"], secrets=["*.token"])]
NAMES = [".env", ".ENV", ".env.example", ".env.local", "id_rsa", "id_rsa.pub", "a.py",
         "x.pem", ".git", "hooks", "config", "tasks.json", ".vscode", "private", "k.secret",
         "deploy", "a.token", ".envrc", "caf\u00e9", "cafe\u0301", ".g\u200cit"]
DIRS = [".", "src", ".git", ".vscode", "private", "private/sub", "a/.git/hooks", "deploy",
        "x.secret", "Private"]


@pytest.mark.parametrize("policy", POLICIES, ids=["default", "none", "deny", "custom"])
@pytest.mark.parametrize("op", [Op.SEARCH, Op.LIST, Op.CREATE, Op.MOVE_FROM])
def test_scope_agrees_with_visible(policy, op):
    for directory in DIRS:
        scope = policy.scope(directory, op)
        for name in NAMES:
            path = name if directory == "." else f"{directory}/{name}"
            assert scope.visible(name) == policy.visible(path, op), (directory, name, op)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(["src", ".git", "private", "a", ".vscode", "x.secret", "é"]),
                max_size=3), st.sampled_from(NAMES))
def test_scope_agrees_on_generated_paths(parts, name):
    policy = POLICIES[2]
    directory = "/".join(parts) or "."
    path = name if directory == "." else f"{directory}/{name}"
    assert policy.scope(directory).visible(name) == policy.visible(path)


def test_beneath_decides_as_if_every_path_had_the_base(tmp_path):
    outer = Policy.build(deny=["proj/private/**"], protect=["proj/deploy/*.sh"])
    inner = outer.beneath("proj")
    assert inner.rule("private/a.txt", Op.READ) is not None
    assert inner.rule("deploy/run.sh", Op.CREATE) is not None
    assert inner.rule("deploy/run.sh", Op.READ) is None
    assert inner.rule("src/a.py", Op.CREATE) is None
    assert not inner.scope("private").visible("x")
    assert Policy.default().beneath(".git").rule(".", Op.CREATE) is not None  # a root inside .git
    assert Policy.default().beneath(".git").rule("hooks/pre-commit", Op.CREATE) is not None
    assert inner.extended(protect_dirs=["store"]).rule("store/hooks/x", Op.CREATE) is not None
    assert outer.rule("store/hooks/x", Op.CREATE) is None
