"""The host's policy patterns
(``deny``, ``protect``, ``secrets``; ``corral serve --deny/--protect``)
whose character class holds a range that ends before it starts.

Git's wildmatch reads ``[z-a]`` as a class that matches nothing; the
rules compiled it to a regular expression Python refuses, so:
``Toolbox(root, deny=["[z-a]"])`` raised ``re.error`` (not the documented
``ValueError`` for a pattern that can never apply), ``corral serve --deny
'[z-a]' ROOT`` and ``corral call`` exited 3 with "internal error ... a bug
in corral", and ``--protect '[z-a]'`` opened and then answered every
write ``INTERNAL``.  ``[Z-a]`` is a range git reads (``Z`` to ``a``), made
a reversed one by the rules' case folding.

A pattern must be refused at open with a ``ValueError`` that names it
(the CLI: exit 2, one line, no traceback), or open and hold; it never
makes a later call ``INTERNAL``.  Every backend config for the toolbox.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from corral.tools import Policy, Toolbox

REVERSED = ["[z-a]", "a[z-a]b", "[!--*]", "[b-a]/**", "**/[9-0]", "[--*]", "[Z-a]",
            "secrets/[z-a].txt"]
KINDS = ["deny", "protect", "secrets"]


def _open(root, kind: str, patterns: list[str]) -> Toolbox:
    if kind == "deny":
        return Toolbox(root, deny=patterns)
    return Toolbox(root, policy=Policy.build(**{kind: patterns}))


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("pattern", REVERSED)
def test_a_reversed_range_is_a_value_error_at_open(tmp_path: Path, make_root, kind: str,
                                                     pattern: str) -> None:
    (tmp_path / "a.txt").write_text("a\n")
    root = make_root(str(tmp_path))
    with pytest.raises(ValueError, match="policy pattern") as raised:
        _open(root, kind, [pattern])
    assert pattern in str(raised.value)


@pytest.mark.parametrize("kind", KINDS)
def test_a_range_in_order_still_holds(tmp_path: Path, make_root, kind: str) -> None:
    (tmp_path / "b.txt").write_text("b\n")
    with _open(make_root(str(tmp_path)), kind, ["[a-c].txt"]) as tools:
        answer = tools.call("write_file", {"path": "b.txt", "content": "x\n", "overwrite": True})
        assert answer["ok"] is False and answer["code"] == "DENIED", answer
        answer = tools.call("write_file", {"path": "z.txt", "content": "z\n"})
        assert answer["ok"] is True, answer
    assert (tmp_path / "b.txt").read_text() == "b\n"


@pytest.mark.parametrize("command", [["serve"], ["call"]])
@pytest.mark.parametrize("flag", ["--deny", "--protect"])
@pytest.mark.parametrize("pattern", ["[z-a]", "[Z-a]"])
def test_the_command_line_says_which_pattern(tmp_path: Path, command: list[str], flag: str,
                                             pattern: str) -> None:
    (tmp_path / "a.txt").write_text("a\n")
    tail = ["write_file", '{"path": "n.txt", "content": "x"}'] if command == ["call"] else []
    done = subprocess.run([sys.executable, "-m", "corral", *command, flag, pattern,
                           str(tmp_path), *tail], capture_output=True, text=True, timeout=60,
                          stdin=subprocess.DEVNULL)
    assert done.returncode == 2, (done.returncode, done.stdout, done.stderr)
    assert "Traceback" not in done.stderr and "internal error" not in done.stderr
    assert pattern in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1, done.stderr
    assert not (tmp_path / "n.txt").exists()
