"""A host's policy pattern ending in a backslash that escapes nothing
(``a\\``, or ``a\\/`` once the directory slash is read apart) is one
gitignore cannot read: it must be refused at open with a ``ValueError``
naming it, never accepted and then raise from a later decision (a negated
one was accepted, and the first name a quick test let through then raised
pathspec's error out of ``Policy.visible``).  An escape that escapes
something (``a\\*``: the name ``a*``) still holds."""

from __future__ import annotations

from pathlib import Path

import pytest

from corral.tools import Policy, Toolbox

DANGLING = ["a\\", "a\\/", "!a\\/", "!a\\", "x/a\\", "**/b\\", "!x/**/a\\/"]
KINDS = ["deny", "protect", "secrets"]


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("pattern", DANGLING)
def test_a_dangling_escape_is_a_value_error_at_open(tmp_path: Path, make_root, kind: str,
                                                     pattern: str) -> None:
    (tmp_path / "x").write_text("x\n")
    with pytest.raises(ValueError, match="policy pattern") as raised:
        Toolbox(make_root(str(tmp_path)), policy=Policy.build(**{kind: ["x", pattern]}))
    assert repr(pattern) in str(raised.value)  # named as the host wrote it


@pytest.mark.parametrize("kind", KINDS)
def test_an_escape_of_a_star_names_the_star(tmp_path: Path, make_root, kind: str) -> None:
    (tmp_path / "a*").write_text("star\n")
    (tmp_path / "ab").write_text("b\n")
    with Toolbox(make_root(str(tmp_path)), policy=Policy.build(**{kind: ["a\\*"]})) as tools:
        refused = tools.call("write_file", {"path": "a*", "content": "x\n", "overwrite": True})
        assert refused["ok"] is False, refused
        written = tools.call("write_file", {"path": "ab", "content": "y\n", "overwrite": True})
        assert written["ok"] is True, written
    assert (tmp_path / "a*").read_text() == "star\n"
    assert (tmp_path / "ab").read_text() == "y\n"
