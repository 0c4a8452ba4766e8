"""An independent red-team pass (round twenty-four, second team):
list_directory's rendered text shows a tree by indentation (two spaces a
level), a level's note in brackets (``[2 denied]``, ``[3 more not
shown]``) and a name needing escapes in double quotes.  A name that
begins with a space, a ``[`` or a ``"`` was shown bare: ``  prod.env``
at the top read as a file inside the folder listed before it,
``[2 denied]`` as a note (so the file was not seen at all, and the
model believed names were denied there), ``"x"`` as the quoted name
``x``.

Such a name is now shown quoted (as a name holding a line break is), in
every front end's text (``render``, ``render_escaped``); the envelope
keeps it as it is.  Read back by its layout, the text gives the entries
the envelope holds.  Every backend config.
"""

from __future__ import annotations

import json
import re
from typing import Any

import pytest

from corral.hosts import render, render_escaped
from corral.tools import Toolbox

NAMES = ("  prod.env", " x", "[2 denied]", "[1 more not shown]", '"quoted"', '"')
_KIND = re.compile(r"(.*) \(([a-z_]+)\)\Z")


def _read_back(text: str) -> set[tuple[str, str]]:
    """(path, kind) of each entry, read by indentation."""
    out: set[tuple[str, str]] = set()
    stack: list[str] = []
    for line in text.split("\n"):
        indent = len(line) - len(line.lstrip(" "))
        depth, rest = indent // 2, line[indent - indent % 2:]
        if rest.startswith("["):
            continue  # a level's note
        if rest.startswith('"'):
            name, end = json.JSONDecoder().raw_decode(rest)
            tail = rest[end:]
            kind = "dir" if tail == "/" else (tail[2:-1] if tail.startswith(" (") else "file")
        elif rest.endswith("/"):
            name, kind = rest[:-1], "dir"
        elif _KIND.match(rest):
            name, kind = _KIND.match(rest).groups()  # type: ignore[union-attr]
        else:
            name, kind = rest.rsplit(" ", 1)[0], "file"
        del stack[depth:]
        path = "/".join([*stack, name]) if depth <= len(stack) else f"?/{name}"
        out.add((path, kind))
        if kind == "dir":
            stack.append(name)
    return out


def _entries(entries: list[dict[str, Any]], base: str = "") -> set[tuple[str, str]]:
    out = set()
    for entry in entries:
        path = base + entry["name"]
        out.add((path, entry["kind"]))
        out |= _entries(entry.get("entries") or [], path + "/")
    return out


@pytest.mark.parametrize("depth", [1, 2])
def test_a_name_never_reads_as_the_listings_layout(tmp_path, make_root, depth):
    for folder in ("config", "a"):
        (tmp_path / folder).mkdir()
        (tmp_path / folder / "app.yml").write_text("x: 1\n")
        for name in NAMES:
            (tmp_path / folder / name).write_text("s\n")
    for name in NAMES:
        (tmp_path / name).write_text("s\n")
    (tmp_path / "  dir").mkdir()
    with Toolbox(make_root(str(tmp_path))) as toolbox:
        out = toolbox.call("list_directory", {"path": ".", "depth": depth})
    assert out["ok"] is True, out
    expected = _entries(out["entries"])
    escaped, _ = render_escaped("list_directory", out)
    for text in (render("list_directory", out), json.loads(escaped.decode("utf-8"))):
        assert _read_back(text) == expected, text


def test_an_ordinary_name_is_shown_as_it_is(tmp_path, make_root):
    (tmp_path / "src").mkdir()
    (tmp_path / "a b.txt").write_text("x\n")
    (tmp_path / "x[1].py").write_text("x\n")
    with Toolbox(make_root(str(tmp_path))) as toolbox:
        text = render("list_directory", toolbox.call("list_directory", {"path": "."}))
    assert text.split("\n") == ["a b.txt 2", "src/", "x[1].py 2"], text
