"""A red-team pass (round twenty-seven) over names holding bidirectional
controls and invisible format characters (Trojan Source's class,
CVE-2021-42574): ``b\\u202egnp.exe`` shown raw reads as ``bexe.png`` at a
terminal and to a model; ``a\\u200bb.txt`` looks exactly like ``ab.txt``.

Such a name is shown in double quotes with the character escaped
(``"b\\u202egnp.exe"``) wherever a name is shown (a listing, a search, a
refusal), and ``corral call`` prints it as a JSON escape: the envelope's
values stay exact, and an ordinary non-ASCII name (accents, CJK, emoji,
Arabic and Hebrew letters) is shown as it is.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from corral.cli import main
from corral.hosts import render
from corral.tools import Toolbox

#: names whose look hides what they are: each holds one invisible character
HIDDEN = ["b\u202egnp.exe", "\u202aa.txt", "\u202bb.txt", "c\u202c.txt", "\u202dd.txt",
          "\u2066e\u2069.txt", "\u2067f.txt", "\u2068g.txt", "h\u200e.txt", "i\u200f.txt",
          "j\u061c.txt", "k\u200bk.txt", "l\u200cl.txt", "m\u200dm.txt", "n\u2060n.txt",
          "\ufeffo.txt", "p\u00adp.txt", "q\u2064q.txt", "r\u206ar.txt", "s\U000e0041s.txt"]
#: ordinary non-ASCII names, shown as they are
ORDINARY = ["caf\u00e9.txt", "\u6f22\u5b57.txt", "\U0001f600.txt", "\u0645\u0631\u062d\u0628\u0627.txt",
            "\u05e9\u05dc\u05d5\u05dd.txt", "\U0001f44d\U0001f3fd.txt", "\u2764\ufe0f.txt"]
INVISIBLE = {chr(c) for c in [*range(0x202a, 0x202f), *range(0x2066, 0x206a), 0x200e, 0x200f,
                              0x061c, 0x200b, 0x200c, 0x200d, 0x2060, 0xfeff, 0xad, 0x2064,
                              0x206a, 0xe0041]}


def _escaped(name: str) -> str:
    """``name`` as the quoted form shows it: each invisible character as
    its JSON escape (a surrogate pair above the BMP)."""
    out = []
    for char in name:
        if char not in INVISIBLE:
            out.append(char)
        elif ord(char) > 0xffff:
            high, low = divmod(ord(char) - 0x10000, 0x400)
            out.append(f"\\u{0xd800 + high:04x}\\u{0xdc00 + low:04x}")
        else:
            out.append(f"\\u{ord(char):04x}")
    return '"' + "".join(out) + '"'


def _tree(base: Path) -> Path:
    for name in HIDDEN + ORDINARY:
        (base / name).write_text("needle\n")
    return base


_CALLS: list[tuple[str, dict[str, object]]] = [
    ("list_directory", {"path": "."}), ("glob", {"pattern": "*"}),
    ("grep", {"pattern": "needle"}), ("grep", {"pattern": "needle", "outputMode": "files"}),
    ("grep", {"pattern": "needle", "outputMode": "counts"})]


@pytest.mark.parametrize("tool,args", _CALLS, ids=[f"{t}-{i}" for i, (t, _) in enumerate(_CALLS)])
def test_a_hidden_character_in_a_name_is_shown_escaped_in_quotes(tmp_path, make_root, tool, args):
    toolbox = Toolbox(make_root(str(_tree(tmp_path))))
    envelope = toolbox.call(tool, args)
    assert envelope["ok"] is True, envelope
    text = render(tool, envelope)
    assert not INVISIBLE & set(text), ascii(text)
    for name in HIDDEN:
        assert _escaped(name) in text, (name, ascii(text))
    lines = text.split("\n")
    for name in ORDINARY:  # as it is, never quoted
        assert any(line == name or line.startswith((name + " ", name + ":"))
                   for line in lines), (name, text)
        assert f'"{name}"' not in text and "\\u" not in name


def test_a_refusal_naming_a_hidden_name_shows_it_escaped(tmp_path, make_root):
    base = _tree(tmp_path)
    (base / "dir\u202e").mkdir()
    toolbox = Toolbox(make_root(str(base)))
    for args in ({"path": "dir\u202e"}, {"path": "b\u202egnp.ex"}):
        envelope = toolbox.call("read_file", args)
        assert envelope["ok"] is False, envelope
        text = render("read_file", envelope)
        assert not INVISIBLE & set(text), ascii(text)
        assert "\\u202e" in text, ascii(text)
    # the suggested call stays JSON that names the file exactly
    try_line = [line for line in text.split("\n") if line.startswith("Try: read_file ")]
    assert try_line and json.loads(try_line[0].removeprefix("Try: read_file ")) == \
        {"path": "b\u202egnp.exe"}, ascii(text)


def _call(root: Path, tool: str, args: dict[str, object]) -> tuple[int, str]:
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path), PYTHONIOENCODING="utf-8")
    done = subprocess.run([sys.executable, "-m", "corral", "call", str(root), tool,
                           json.dumps(args)], capture_output=True, env=env, check=False)
    return done.returncode, done.stdout.decode("utf-8")


@pytest.mark.parametrize("tool,args", [
    ("list_directory", {"path": "."}), ("grep", {"pattern": "needle", "outputMode": "files"}),
    ("read_file", {"path": "b\u202egnp.ex"})], ids=["listing", "grep", "refusal"])
def test_corral_call_prints_a_hidden_character_as_an_escape(tmp_path, tool, args):
    """What ``corral call`` prints at a terminal holds no raw invisible
    character, and parses to the exact names (the envelope unchanged)."""
    _tree(tmp_path)
    status, out = _call(tmp_path, tool, args)
    assert status in (0, 1), out
    assert not INVISIBLE & set(out), ascii(out)
    envelope = json.loads(out)
    said = json.dumps(envelope, ensure_ascii=False)
    if tool == "read_file":
        assert envelope["ok"] is False and "\\u202e" in out, out
        assert envelope["suggestedArgs"] == {"path": "b\u202egnp.exe"}, envelope
        return
    assert envelope["ok"] is True, envelope
    for name in HIDDEN:  # the exact name, for programs
        assert json.dumps(name, ensure_ascii=False) in said, name
    for name in ORDINARY:  # and an ordinary name printed as it is
        assert json.dumps(name, ensure_ascii=False) in out, name


def test_every_format_character_is_shown_escaped():
    """Each of Unicode's format characters (Cf) this Python knows, alone
    in a name, is shown escaped in quotes: none reaches the text raw."""
    import unicodedata

    from corral.hosts import shown_name

    raw = [chr(c) for c in range(0x110000) if unicodedata.category(chr(c)) == "Cf"]
    assert len(raw) > 150, len(raw)
    shown = [shown_name(f"x{char}y") for char in raw]
    assert [name for name in shown if not (name.startswith('"x\\u') and name.isascii())] == [], \
        ascii(shown)


def test_corral_call_prints_controls_json_leaves_raw_as_escapes(tmp_path):
    """DEL, a C1 control (U+009B starts a terminal's control sequence) and a
    line separator, which JSON writes as they are: printed as escapes."""
    names = ["a\x7fb.txt", "c\x9b2Jd.txt", "e\u2028f.txt"]
    for name in names:
        (tmp_path / name).write_text("x")
    out = io.StringIO()  # in this process: the subprocesses above show the terminal's bytes
    with contextlib.redirect_stdout(out):
        status = main(["call", str(tmp_path), "list_directory", json.dumps({"path": "."})])
    out = out.getvalue()
    assert status == 0, out
    assert not {"\x7f", "\x9b", "\u2028"} & set(out), ascii(out)
    assert sorted(entry["name"] for entry in json.loads(out)["entries"]) == names
