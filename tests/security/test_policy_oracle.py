"""An answer never says what exists where a deny rule hides things
(or a model could map what is hidden): an error whose component lies under a denied path (a link
into a missing directory there, a missing name below a link) is the same
DENIED an existing path there gets, naming only the model's spelling.  On
every backend config."""

from __future__ import annotations

import pytest

from corral.tools import Policy, Toolbox


@pytest.fixture
def tree(tmp_path):
    (tmp_path / "private" / "there").mkdir(parents=True)
    (tmp_path / "private" / "there" / "f.txt").write_text("x\n")
    (tmp_path / "pub").mkdir()
    (tmp_path / "gone").symlink_to("private/gone-q1/x")
    (tmp_path / "there").symlink_to("private/there/x")
    (tmp_path / "pl").symlink_to("private")
    return tmp_path


@pytest.mark.parametrize("tool,args", [
    ("read_file", {"path": "{l}"}),
    ("list_directory", {"path": "{l}"}),
    ("write_file", {"path": "{l}/y.txt", "content": "y"}),
    ("delete_file", {"path": "{l}/y.txt"}),
    ("move_file", {"source": "{l}/y.txt", "destination": "pub/y.txt"}),
    ("make_directory", {"path": "{l}/d"}),
], ids=lambda v: v if isinstance(v, str) else "")
def test_a_missing_name_under_a_denied_path_is_denied(tree, make_root, tool, args):
    with Toolbox(make_root(tree), deny=["private"]) as toolbox:
        answers = {link: toolbox.call(tool, {k: v.replace("{l}", link) if isinstance(v, str)
                                             else v for k, v in args.items()})
                   for link in ("gone", "there")}
    for link, answer in answers.items():
        assert answer["ok"] is False and answer["code"] == "DENIED", (link, answer)
        assert answer["details"]["kind"] == "deny_rule", (link, answer)
        assert "private" not in str(answer) and "gone-q1" not in str(answer), answer
    assert not (tree / "private" / "there" / "y.txt").exists()


def test_a_missing_name_elsewhere_is_still_not_found(tree, make_root):
    (tree / "pl2").symlink_to("pub/nx/x")
    with Toolbox(make_root(tree), deny=["private"]) as toolbox:
        answer = toolbox.call("read_file", {"path": "pl2"})
    assert answer["ok"] is False and answer["code"] == "NOT_FOUND", answer
    assert answer["details"]["missing"] == "pub/nx"


def test_a_missing_secret_directory_name_says_secret(tree, make_root):
    """A link through a missing directory a secret rule covers: SECRET, as
    for an existing one, never which of them exists."""
    (tree / "sl").symlink_to("vault/nx/id")
    (tree / "vault").mkdir()
    with Toolbox(make_root(tree), policy=Policy.build(secrets=["vault/*"])) as toolbox:
        answer = toolbox.call("read_file", {"path": "sl"})
    assert answer["ok"] is False and answer["details"]["kind"] == "secret", answer
    assert "vault" not in str(answer)


def _link_facts(answer):
    return {k: v for k, v in answer.items() if k in ("target", "targetKind")}


def test_file_info_of_a_link_into_a_denied_path_says_the_same_either_way(tree, make_root):
    """file_info describes a link without following it; where the link
    leads under a denied path, a missing and an existing target are
    described alike (no ``targetKind: "missing"`` oracle), and neither
    names the target."""
    (tree / "direct").symlink_to("private/nx")
    (tree / "real").symlink_to("private/there/f.txt")
    with Toolbox(make_root(tree), deny=["private"]) as toolbox:
        answers = {link: toolbox.call("file_info", {"path": link})
                   for link in ("gone", "real", "direct")}
    for link, answer in answers.items():
        assert answer["ok"] is True and answer["kind"] == "symlink", (link, answer)
        assert "private" not in str(answer) and "gone-q1" not in str(answer), answer
    assert _link_facts(answers["gone"]) == _link_facts(answers["real"]) \
        == _link_facts(answers["direct"])
    with Toolbox(make_root(tree)) as toolbox:  # without the rule the kinds differ
        assert toolbox.call("file_info", {"path": "gone"})["targetKind"] == "missing"
        assert toolbox.call("file_info", {"path": "real"})["targetKind"] == "file"
