"""The credentials file google-github-actions/auth writes into the
workspace (gha-creds-<hash>.json) is a default secret, in any folder and
any case, and a host can allow it."""

from __future__ import annotations


import pytest

from corral.tools import Policy, Toolbox

NAMES = ["gha-creds-3f2a.json", "sub/dir/GHA-CREDS-1.JSON", "Gha-Creds-x.json"]


@pytest.fixture
def tree(tmp_path):
    for name in NAMES:
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text('{"private_key": "SECRET-KEY"}\n')
    (tmp_path / "gha-creds.txt").write_text("not the credentials file\n")
    return tmp_path


@pytest.mark.parametrize("name", NAMES)
def test_gha_credentials_are_not_readable_by_default(tree, name):
    with Toolbox(tree) as box:
        refusal = box.call("read_file", {"path": name})
        grep = box.call("grep", {"pattern": "SECRET-KEY"})
    assert refusal["code"] == "DENIED" and refusal["details"]["kind"] == "secret"
    assert grep["matches"] == [] and grep["denied"] == 3  # searched past, never shown


def test_a_similar_name_is_read(tree):
    with Toolbox(tree) as box:
        assert box.call("read_file", {"path": "gha-creds.txt"})["ok"] is True


def test_the_host_can_allow_them(tree):
    policy = Policy.build(secrets=["!**/gha-creds-*.json"])
    with Toolbox(tree, policy=policy) as box:
        for name in NAMES:
            result = box.call("read_file", {"path": name})
            assert result["ok"] is True and "SECRET-KEY" in result["content"]
