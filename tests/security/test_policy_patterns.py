"""Host patterns are read as the host means them and never fail open
(a host's rule must never let through what it meant to stop): a pattern
covering a directory covers everything below it, on every rule list (deny,
protect, secrets); shell spellings (``./x``, ``x/.``, an absolute path
inside the root) are the root's ``x``; a pattern that could never apply is
a ``ValueError`` when the Toolbox is made.  On every backend config."""

from __future__ import annotations

import pytest

from corral.tools import Policy, Toolbox
from corral.tools._policy.rules import Op, host_pattern


def _tree(tmp_path):
    (tmp_path / "private" / "in" / "deep").mkdir(parents=True)
    (tmp_path / "private" / "in" / "deep" / "s.txt").write_text("SECRET-Q7\n")
    (tmp_path / "other" / "private").mkdir(parents=True)
    (tmp_path / "other" / "private" / "o.txt").write_text("open\n")
    return tmp_path


@pytest.mark.parametrize("pattern", ["private/*", "private/*/deep", "./private", "private/.",
                                     "./private/**", "private/in/", "{abs}/private",
                                     "{abs}/private/in/."])
def test_each_ancestor_counts_for_deny(tmp_path, make_root, pattern):
    root = _tree(tmp_path)
    with Toolbox(make_root(root), deny=[pattern.replace("{abs}", str(root))]) as toolbox:
        read = toolbox.call("read_file", {"path": "private/in/deep/s.txt"})
        write = toolbox.call("write_file", {"path": "private/in/deep/new.txt", "content": "x"})
        listed = toolbox.call("list_directory", {"path": "private/in/deep"})
    for answer in (read, write, listed):
        assert answer["ok"] is False and answer["details"]["kind"] == "deny_rule", answer
    assert not (root / "private" / "in" / "deep" / "new.txt").exists()


@pytest.mark.parametrize("pattern", ["./private", "private/.", "{abs}/private"])
def test_a_root_spelling_is_anchored_at_the_root(tmp_path, make_root, pattern):
    """``./private`` is the root's private, not every directory of that name."""
    root = _tree(tmp_path)
    with Toolbox(make_root(root), deny=[pattern.replace("{abs}", str(root))]) as toolbox:
        read = toolbox.call("read_file", {"path": "other/private/o.txt"})
    assert read["ok"] is True and "open" in read["content"], read


# names every host has at its own ``/``: a root spelling must still be the
# root's name, never read again as the host's absolute path
_HOST_NAMES = ("etc", "usr", "tmp")


@pytest.mark.parametrize("name", _HOST_NAMES)
@pytest.mark.parametrize("given", ["toolbox", "policy", "protect"])
def test_a_root_spelling_of_a_name_the_host_has_at_its_own_root(tmp_path, make_root, name,
                                                                 given):
    """``./etc`` is the root's ``etc`` though the host has an ``/etc``:
    reading it as that absolute path refused the pattern (and with it the
    Toolbox), whichever way the host gave it."""
    (tmp_path / name / "in").mkdir(parents=True)
    (tmp_path / name / "in" / "s.txt").write_text("SECRET-Q7\n")
    (tmp_path / "other" / name).mkdir(parents=True)
    (tmp_path / "other" / name / "o.txt").write_text("open\n")
    pattern = f"./{name}"
    if given == "toolbox":
        toolbox = Toolbox(make_root(tmp_path), deny=[pattern])
    elif given == "policy":
        toolbox = Toolbox(make_root(tmp_path), policy=Policy.build(deny=[pattern]))
    else:
        toolbox = Toolbox(make_root(tmp_path), policy=Policy.build(protect=[pattern]))
    with toolbox:
        read = toolbox.call("read_file", {"path": f"{name}/in/s.txt"})
        write = toolbox.call("write_file", {"path": f"{name}/in/new.txt", "content": "x"})
        other = toolbox.call("read_file", {"path": f"other/{name}/o.txt"})
    assert write["ok"] is False, write
    assert not (tmp_path / name / "in" / "new.txt").exists()
    if given == "protect":
        assert read["ok"] is True, read
    else:
        assert read["ok"] is False and read["details"]["kind"] == "deny_rule", read
    assert other["ok"] is True and "open" in other["content"], other


def test_an_absolute_pattern_under_a_root_opened_at_the_hosts_own_root():
    """With the root at ``/``, every absolute path is inside it."""
    policy = Policy.build(deny=["/etc", "./usr"], protect=["/var/log/"]).rooted(["/"])
    assert policy.deny == ("/etc", "/usr") and policy.protect[-1] == "/var/log/"
    assert policy.rule("etc/hostname", Op.READ) is not None
    assert policy.rule("usr/bin", Op.LIST) is not None
    assert policy.rule("var/log/syslog", Op.REPLACE) is not None
    assert policy.rule("other/etc/hostname", Op.READ) is None


def test_protect_and_secret_patterns_cover_what_is_below(tmp_path, make_root):
    root = _tree(tmp_path)
    (root / "tools" / "hooks").mkdir(parents=True)
    policy = Policy.build(protect=["./tools/*"], secrets=["private/*"])
    with Toolbox(make_root(root), policy=policy) as toolbox:
        write = toolbox.call("write_file", {"path": "tools/hooks/pre-commit", "content": "x"})
        read = toolbox.call("read_file", {"path": "private/in/deep/s.txt"})
        found = toolbox.call("grep", {"pattern": "SECRET-Q[7]"})
    assert write["ok"] is False and write["details"]["kind"] == "protected", write
    assert read["ok"] is False and read["details"]["kind"] == "secret", read
    assert "SECRET-Q7" not in str(found)
    assert not (root / "tools" / "hooks" / "pre-commit").exists()


def test_a_covered_directory_is_not_reopened_by_a_negation(tmp_path, make_root):
    """As in git: ``!private/in/keep.txt`` cannot re-include a file of a
    directory ``private/`` already covers."""
    root = _tree(tmp_path)
    (root / "private" / "in" / "keep.txt").write_text("kept\n")
    with Toolbox(make_root(root), deny=["private/", "!private/in/keep.txt"]) as toolbox:
        read = toolbox.call("read_file", {"path": "private/in/keep.txt"})
    assert read["ok"] is False and read["details"]["kind"] == "deny_rule", read


@pytest.mark.parametrize("pattern,why", [
    ("/usr/lib", "outside the root"), ("{abs}", "the root itself"), ("./", "the root itself"),
    ("x/../private", "'..'"), ("", "matches nothing"), ("# comment", "matches nothing"),
])
def test_a_pattern_that_can_never_apply_is_refused(tmp_path, make_root, pattern, why):
    spelled = pattern.replace("{abs}", str(tmp_path))
    with pytest.raises(ValueError, match=why.replace("(", r"\(")):
        Toolbox(make_root(tmp_path), deny=[spelled])
    with pytest.raises(ValueError, match=why):
        Toolbox(make_root(tmp_path), policy=Policy.build(protect=[spelled]))
    with pytest.raises(ValueError, match=why):
        Toolbox(make_root(tmp_path), policy=Policy.build(secrets=[spelled]))


def test_one_string_is_not_a_list_of_patterns():
    with pytest.raises(TypeError):
        Policy.build(deny="private")


@pytest.mark.parametrize("pattern,read", [
    ("private/*", "private/*"), ("./private", "/private"), ("private/.", "/private/"),
    ("./private/**", "private/**"), ("!./keep", "!/keep"), ("a/./b//c", "a/b/c"),
    ("**/.env", "**/.env"), ("/build", "/build"),
])
def test_host_pattern_spellings(pattern, read):
    assert host_pattern(pattern) == read


def test_the_default_lists_are_read_as_written():
    for pattern in Policy.default().protect + Policy.default().secrets:
        assert host_pattern(pattern) == pattern


def test_a_wildcard_inside_a_name_keeps_the_quick_test():
    """``gha-creds-*.json`` can only match a name starting ``gha-creds-``:
    every other name is passed over without running a pattern (a rule set
    that had to run its patterns at every level of every path made a
    4,000-level move quadratic), and the name it covers is still covered."""
    from corral.tools._policy.rules import _Rules

    rules = _Rules(["**/gha-creds-*.json"])
    assert not rules.name_may_match("d") and not rules.name_may_match("creds.json")
    assert rules.name_may_match("gha-creds-1234.json")
    assert rules.match("a/b/gha-creds-1234.json") and not rules.match("a/b/gha-creds.txt")
