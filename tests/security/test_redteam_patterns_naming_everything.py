"""An independent red-team pass over host patterns that name everything:
``--deny '*'``, ``--deny '**'``, ``--protect '**/*'``, ``'*/'``.  The
patterns are read by pathspec, whose gitignore regexes for these are made
for a search (``.``, ``/``) while the rules match whole paths: they
matched no name longer than one character, so a host denying or
protecting everything had nothing denied or protected (a rule that
matches nothing fails open; ``host_pattern``'s own doc offers ``**`` for
everything).  Each must cover every entry, top-level files included, and
stay lifted by a later ``!`` pattern where git would lift it.  On every
backend config.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from corral.tools import Policy, Toolbox

EVERYTHING = ["*", "**", "**/*", "*/", "**/", "/**"]


def _tree(base: Path) -> Path:
    (base / "src").mkdir(parents=True)
    (base / "top.txt").write_text("top secret\n")
    (base / "src" / "deep.py").write_text("deep = 1\n")
    return base


@pytest.mark.parametrize("pattern", EVERYTHING)
def test_a_deny_pattern_naming_everything_denies_everything(tmp_path, make_root, pattern):
    base = _tree(tmp_path / "tree")
    box = Toolbox(make_root(str(base)), deny=[pattern])
    for path in ("top.txt", "src/deep.py", "new.txt", "src/new.py"):
        answer = box.call("read_file", {"path": path})
        assert answer["ok"] is False and answer["code"] == "DENIED", (pattern, path, answer)
        written = box.call("write_file", {"path": path, "content": "x\n", "overwrite": True})
        assert written["ok"] is False and written["code"] == "DENIED", (pattern, path, written)
    assert (base / "top.txt").read_text() == "top secret\n"
    assert not (base / "new.txt").exists()


@pytest.mark.parametrize("pattern", EVERYTHING)
def test_a_protect_pattern_naming_everything_protects_everything(tmp_path, make_root,
                                                                 pattern):
    base = _tree(tmp_path / "tree")
    box = Toolbox(make_root(str(base)), policy=Policy.default().extended(protect=[pattern]))
    assert box.call("read_file", {"path": "top.txt"})["ok"] is True
    for path in ("top.txt", "src/deep.py", "new.txt"):
        written = box.call("write_file", {"path": path, "content": "x\n", "overwrite": True})
        assert written["ok"] is False and written["details"]["kind"] == "protected", \
            (pattern, path, written)
    assert (base / "top.txt").read_text() == "top secret\n"


def test_everything_but_what_a_later_pattern_lifts(tmp_path, make_root):
    base = _tree(tmp_path / "tree")
    box = Toolbox(make_root(str(base)), deny=["*", "!top.txt"])
    assert box.call("read_file", {"path": "top.txt"})["ok"] is True
    assert box.call("read_file", {"path": "src/deep.py"})["code"] == "DENIED"
