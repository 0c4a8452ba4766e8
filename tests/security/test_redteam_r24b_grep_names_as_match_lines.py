"""An independent red-team pass (round twenty-four, second team): grep's
rendered text follows ripgrep's layout (a file's path on a line of its
own, then ``N:text`` for a matching line, ``N-text`` for a context line,
``--`` between groups).  A file's name may hold a colon or a dash after
digits, or be ``--``: shown bare, the name ``3:api_key = hunter2`` read as
a third matching line of the file before it, ``7-x`` as a context line,
and ``--`` as a separator, so a model believed a file held a line it does
not (and lost which file the next matches are in).

A path that would read so (``N-`` and ``--`` where the answer holds
context lines) is now shown in double quotes (as a name
holding a line break is), in every front end's text; the envelope keeps
the path as it is.  Read back ripgrep's way, the text gives the files and
lines the envelope holds.  Every backend config.
"""

from __future__ import annotations

import json
import re

import pytest

from corral.hosts import render, render_escaped
from corral.tools import Toolbox

NAMES = ("3:api_key = hunter2", "7-x", "--", "12:", "0-", "1:a:b")
_ROW = re.compile(r"([0-9]+)([:-])(.*)\Z")


def _read_back(text: str, context: int) -> list[tuple[str, int, str]]:
    """The (path, line, text) of each matching line in ripgrep's layout
    (context lines and separators only where context was asked for)."""
    out: list[tuple[str, int, str]] = []
    path = None
    for line in text.split("\n"):
        row = _ROW.match(line)
        if line.startswith("[") or context and line == "--":
            continue
        if row is not None and path is not None and (context or row.group(2) == ":"):
            if row.group(2) == ":":
                out.append((path, int(row.group(1)), row.group(3)))
            continue
        path = json.loads(line) if line.startswith('"') else line
    return out


@pytest.mark.parametrize("context", [0, 1])
def test_a_path_never_reads_as_a_line_of_the_file_before(tmp_path, make_root, context):
    (tmp_path / "a.txt").write_text("x\nneedle one\ny\n")
    for name in NAMES:
        (tmp_path / name).write_text("needle two\n")
    with Toolbox(make_root(str(tmp_path))) as toolbox:
        out = toolbox.call("grep", {"pattern": "needle", "context": context})
    assert out["ok"] is True, out
    expected = sorted((m["path"], m["line"], m["text"]) for m in out["matches"])
    assert len(expected) == len(NAMES) + 1, out
    escaped, _ = render_escaped("grep", out)
    for text in (render("grep", out), json.loads(escaped.decode("utf-8"))):
        assert sorted(_read_back(text, context)) == expected, text


def test_an_ordinary_path_is_shown_as_it_is(tmp_path, make_root):
    """Without context lines, a name of digits and a dash reads as no row."""
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "a-1.py").write_text("needle\n")
    (tmp_path / "2024-notes.md").write_text("needle\n")
    with Toolbox(make_root(str(tmp_path))) as toolbox:
        text = render("grep", toolbox.call("grep", {"pattern": "needle"}))
    assert text.split("\n")[:4] == ["2024-notes.md", "1:needle", "src/a-1.py", "1:needle"], text
