"""Benchmark: the tokens a model reads from ``corral serve`` against the
reference MCP filesystem server, on the same fixture and the same session.

Counted with the o200k encoding of the npm package ``gpt-tokenizer`` (its
vocabulary ships in the package; ``scripts/setup_conformance.sh node``
installs it beside the reference server, ``@modelcontextprotocol/
server-filesystem``, into ``.conformance/node``):

* ``tools/list``: the ``tools`` array as compact JSON, as most clients show
  it to a model (without ``outputSchema``), and whole;
* a fixed session of typical calls on a small project (real code: modules
  of Python's own standard library), each call made to both servers with
  the same meaning: orient, read, search by name, edit, write, move; and
  four mistakes (a misspelt path, an edit whose oldText is not in the file,
  a path outside the root, a directory given as a file).  What is counted
  is what a model is shown of each result: its text content;
* beside corral's own tools, the same session with its edits made through
  the tools models are trained on: ``apply_patch`` (``corral serve
  --apply-patch``: its listing and the apply_patch results' text) and
  Claude's text editor (``str_replace_based_edit_tool`` blocks run in
  process by ``anthropic_tool_results``: the tool_result text; its
  definition is built into the model, so the listing is ``corral serve
  --read-only``'s).  Neither has a dry run; the text editor has no move,
  and neither offers make_directory: those steps are left out.

The fixture is made afresh at the same path for each server (the session
changes files), so the paths the reference server prints cost the same.
Not a test (tests/e2e/test_mcp_tokens.py pins the targets on four other
fixtures and sessions): it prints a table and returns records for run.py.

    .venv/bin/python benchmarks/bench_tokens.py [--results]

``--results`` also writes the table into benchmarks/RESULTS.md (between
its ``tokens`` markers).  Targets (issue 28): tools/list without
outputSchema <= 1.0x the reference's, whole <= 1.5x; the session's
successful calls <= 1.0x in total, no call over 1.3x; a refusal's text at
most its sentence, hint and suggested call plus 40 tokens.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import shutil
import subprocess
import sys
import sysconfig
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from _common import Record, record, skipped  # noqa: E402
from bench_mcp import CONFORMANCE, Connection, ensure_reference_server, python_env  # noqa: E402

SOURCE = "issue 28"
TOKENIZER = CONFORMANCE / "node" / "node_modules" / "gpt-tokenizer"
LIST_TARGET = ("<=", 1.0)
LIST_WHOLE_TARGET = ("<=", 1.5)
SESSION_TARGET = ("<=", 1.0)
CALL_TARGET = ("<=", 1.3)
REFUSAL_SLACK = 40

# counts o200k tokens of each string of a JSON array read on stdin
_COUNT_JS = """
const enc = require(process.argv[1] + '/cjs/encoding/o200k_base');
let data = '';
process.stdin.on('data', c => data += c);
process.stdin.on('end', () => {
  const opts = {disallowedSpecial: new Set()};
  process.stdout.write(JSON.stringify(JSON.parse(data).map(s => enc.encode(s, opts).length)));
});
"""


def count_tokens(texts: list[str]) -> list[int]:
    """o200k token counts of ``texts`` (gpt-tokenizer, on node)."""
    done = subprocess.run(["node", "-e", _COUNT_JS, str(TOKENIZER)], input=json.dumps(texts),
                          capture_output=True, text=True, check=True)
    counts: list[int] = json.loads(done.stdout)
    return counts


def compact(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def shown_tools(tools: list[dict[str, Any]]) -> str:
    """The listing as most clients show it to a model: no outputSchema."""
    return compact([{k: v for k, v in tool.items() if k != "outputSchema"} for tool in tools])


def result_text(result: dict[str, Any]) -> str:
    """What a model is shown of a result: its text content."""
    return "\n".join(block.get("text", "") for block in result.get("content", [])
                     if block.get("type") == "text")


# -- the fixture ------------------------------------------------------------------

STDLIB = Path(sysconfig.get_paths()["stdlib"])
MODULES = {"src/app/shlex.py": "shlex.py", "src/app/textwrap.py": "textwrap.py",
           "src/app/fnmatch.py": "fnmatch.py", "src/app/config.py": "configparser.py",
           "src/app/colors.py": "colorsys.py", "src/app/search.py": "bisect.py",
           "src/app/queue.py": "heapq.py", "src/app/words.py": "keyword.py",
           "src/app/numbers.py": "numbers.py"}
README = """# app

Small text utilities: shell-like splitting (`shlex`), wrapping (`textwrap`),
file name patterns (`fnmatch`) and INI files (`config`).

## Use

    from app import shlex
    shlex.split("a 'b c'")

## Develop

Run the tests with `python -m pytest`.
"""
PYPROJECT = """[project]
name = "app"
version = "0.1.0"
requires-python = ">=3.11"

[tool.pytest.ini_options]
testpaths = ["tests"]
"""
INIT = '"""Small text utilities."""\n\n__all__ = ["shlex", "textwrap", "fnmatch", "config"]\n'
TEST = '''from app import shlex


def test_split():
    assert shlex.split("a 'b c'") == ["a", "b c"]
'''
NEW_TEST = '''import pytest

from app import fnmatch, textwrap


@pytest.mark.parametrize("name", ["a.py", "b.py"])
def test_fnmatch(name):
    assert fnmatch.fnmatch(name, "*.py")


def test_wrap():
    assert textwrap.wrap("one two three", width=7) == ["one two", "three"]


def test_dedent():
    assert textwrap.dedent("  a\\n  b\\n") == "a\\nb\\n"
'''
USAGE = "# Usage\n\nSee the README.\n"


def make_fixture(root: Path) -> None:
    """A small Python project of some 30 files, most of which the session
    does not read; the modules are real code (the standard library's)."""
    if root.exists():
        shutil.rmtree(root)
    for rel, module in MODULES.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(STDLIB / module, root / rel)
    (root / "src" / "app" / "__init__.py").write_text(INIT)
    (root / "tests").mkdir()
    (root / "tests" / "test_shlex.py").write_text(TEST)
    for name in ("textwrap", "fnmatch", "config", "colors"):
        (root / "tests" / f"test_{name}.py").write_text(
            f"from app import {name}\n\n\ndef test_imports():\n    assert {name}\n")
    (root / "docs").mkdir()
    (root / "docs" / "usage.md").write_text(USAGE)
    for name in ("install", "api", "faq"):
        (root / "docs" / f"{name}.md").write_text(f"# {name.title()}\n\nTo be written.\n")
    (root / ".github" / "workflows").mkdir(parents=True)
    (root / ".github" / "workflows" / "ci.yml").write_text(
        "on: [push]\njobs:\n  test:\n    runs-on: ubuntu-latest\n    steps:\n"
        "      - uses: actions/checkout@v4\n      - run: python -m pytest\n")
    (root / "CHANGELOG.md").write_text("# Changes\n\n## 0.1.0\n\n- First release.\n")
    (root / "LICENSE").write_text("MIT License\n\nCopyright (c) 2026 app authors\n")
    (root / "README.md").write_text(README)
    (root / "pyproject.toml").write_text(PYPROJECT)
    (root / ".gitignore").write_text("__pycache__/\n*.egg-info/\n")
    (root.parent / "outside.txt").write_text("not yours\n")


# -- the session --------------------------------------------------------------------

@dataclass(frozen=True)
class Step:
    """One call, as each server spells it (the reference takes absolute
    paths; ``{root}`` is replaced); ``mistake`` for the four refusals."""

    label: str
    corral: tuple[str, dict[str, Any]]
    reference: tuple[str, dict[str, Any]]
    mistake: bool = False


def _fill(value: Any, root: str) -> Any:
    if isinstance(value, str):
        return value.replace("{root}", root)
    if isinstance(value, list):
        return [_fill(v, root) for v in value]
    if isinstance(value, dict):
        return {k: _fill(v, root) for k, v in value.items()}
    return value


_TEXTWRAP_OLD = "    def _split(self, text):\n"
_SHLEX_OLD = "    def push_token(self, tok):\n"
SESSION = [
    Step("list the project", ("list_directory", {"path": "."}),
         ("list_directory", {"path": "{root}"})),
    Step("the tree", ("list_directory", {"path": ".", "depth": 3}),
         ("directory_tree", {"path": "{root}"})),
    Step("find the Python files", ("glob", {"pattern": "**/*.py"}),
         ("search_files", {"path": "{root}", "pattern": "**/*.py"})),
    Step("read README.md", ("read_file", {"path": "README.md"}),
         ("read_text_file", {"path": "{root}/README.md"})),
    Step("read a 350-line module", ("read_file", {"path": "src/app/shlex.py"}),
         ("read_text_file", {"path": "{root}/src/app/shlex.py"})),
    Step("read the head of a 1,382-line module",
         ("read_file", {"path": "src/app/config.py", "limit": 120}),
         ("read_text_file", {"path": "{root}/src/app/config.py", "head": 120})),
    Step("read two small files", ("read_files", {"paths": ["pyproject.toml",
                                                             "src/app/__init__.py"]}),
         ("read_multiple_files", {"paths": ["{root}/pyproject.toml",
                                            "{root}/src/app/__init__.py"]})),
    Step("file info", ("file_info", {"path": "src/app/shlex.py"}),
         ("get_file_info", {"path": "{root}/src/app/shlex.py"})),
    Step("list a directory with sizes", ("list_directory", {"path": "src/app"}),
         ("list_directory_with_sizes", {"path": "{root}/src/app"})),
    Step("edit one line", ("edit_file", {"path": "src/app/shlex.py", "oldText": _SHLEX_OLD,
                                         "newText": "    def push_token(self, tok: str):\n"}),
         ("edit_file", {"path": "{root}/src/app/shlex.py",
                        "edits": [{"oldText": _SHLEX_OLD,
                                   "newText": "    def push_token(self, tok: str):\n"}]})),
    Step("preview an edit (dry run)",
         ("edit_file", {"path": "src/app/textwrap.py", "oldText": _TEXTWRAP_OLD,
                        "newText": "    def _split(self, text: str):\n", "dryRun": True}),
         ("edit_file", {"path": "{root}/src/app/textwrap.py", "dryRun": True,
                        "edits": [{"oldText": _TEXTWRAP_OLD,
                                   "newText": "    def _split(self, text: str):\n"}]})),
    Step("two edits in one call",
         ("edit_file", {"path": "src/app/fnmatch.py", "edits": [
             {"oldText": "def filter(names, pat):", "newText": "def filter(names, pat, /):"},
             {"oldText": "def translate(pat):", "newText": "def translate(pat, /):"}]}),
         ("edit_file", {"path": "{root}/src/app/fnmatch.py", "edits": [
             {"oldText": "def filter(names, pat):", "newText": "def filter(names, pat, /):"},
             {"oldText": "def translate(pat):", "newText": "def translate(pat, /):"}]})),
    Step("write a new file", ("write_file", {"path": "tests/test_more.py", "content": NEW_TEST}),
         ("write_file", {"path": "{root}/tests/test_more.py", "content": NEW_TEST})),
    Step("make a directory", ("make_directory", {"path": "docs/guide"}),
         ("create_directory", {"path": "{root}/docs/guide"})),
    Step("move a file", ("move_file", {"source": "docs/usage.md",
                                       "destination": "docs/guide/usage.md"}),
         ("move_file", {"source": "{root}/docs/usage.md",
                        "destination": "{root}/docs/guide/usage.md"})),
    Step("read the new file", ("read_file", {"path": "tests/test_more.py"}),
         ("read_text_file", {"path": "{root}/tests/test_more.py"})),
    Step("replace a whole file", ("write_file", {"path": "README.md", "overwrite": True,
                                                 "content": README + "\n## License\n\nMIT\n"}),
         ("write_file", {"path": "{root}/README.md", "content": README + "\n## License\n\nMIT\n"})),
    Step("read a 491-line module", ("read_file", {"path": "src/app/textwrap.py"}),
         ("read_text_file", {"path": "{root}/src/app/textwrap.py"})),
    Step("find the docs", ("glob", {"pattern": "**/*.md", "path": "docs"}),
         ("search_files", {"path": "{root}/docs", "pattern": "**/*.md"})),
    Step("read the end of a module", ("read_file", {"path": "src/app/shlex.py", "offset": 300}),
         ("read_text_file", {"path": "{root}/src/app/shlex.py", "tail": 51})),
    Step("a misspelt path", ("read_file", {"path": "src/app/shelx.py"}),
         ("read_text_file", {"path": "{root}/src/app/shelx.py"}), mistake=True),
    Step("an edit whose oldText is not in the file",
         ("edit_file", {"path": "src/app/shlex.py",
                        "oldText": "    def pop_token(self):\n        return self.pushback.pop()\n",
                        "newText": "    def pop_token(self):\n        return None\n"}),
         ("edit_file", {"path": "{root}/src/app/shlex.py",
                        "edits": [{"oldText": "    def pop_token(self):\n        return "
                                              "self.pushback.pop()\n",
                                   "newText": "    def pop_token(self):\n        return None\n"}]}),
         mistake=True),
    Step("a path outside the root", ("read_file", {"path": "../outside.txt"}),
         ("read_text_file", {"path": "{root}/../outside.txt"}), mistake=True),
    Step("a directory given as a file", ("read_file", {"path": "src/app"}),
         ("read_text_file", {"path": "{root}/src/app"}), mistake=True),
]


@dataclass
class Run:
    """What one server showed: the listing and each step's result text."""

    tools: list[dict[str, Any]]
    texts: list[str]
    errors: list[bool]
    envelopes: list[dict[str, Any] | None]


def run_session(command: list[str], root: Path, reference: bool, env: dict[str, str],
                steps: list[Step] = SESSION) -> Run:
    make_fixture(root)
    conn = Connection(command, env)
    try:
        tools = conn.request("tools/list", {})["tools"]
        texts, errors, envelopes = [], [], []
        for step in steps:
            name, args = step.reference if reference else step.corral
            result = conn.request("tools/call", {"name": name,
                                                 "arguments": _fill(args, str(root))})
            texts.append(result_text(result))
            errors.append(bool(result.get("isError")))
            envelopes.append(result.get("structuredContent"))
    finally:
        conn.close()
    return Run(tools, texts, errors, envelopes)


def refusal_floor(envelope: dict[str, Any]) -> str:
    """What a refusal's text must at least carry: its sentence, hint and
    suggested call."""
    call = ""
    if envelope.get("suggestedTool"):
        call = f"{envelope['suggestedTool']} {compact(envelope.get('suggestedArgs') or {})}"
    return "\n".join(part for part in (envelope.get("message", ""), envelope.get("hint", ""),
                                       call) if part)


# -- measuring ----------------------------------------------------------------------

def measure(node_entry: str, workdir: Path) -> dict[str, Any]:
    root = workdir / "project"
    ours = run_session([sys.executable, "-m", "corral.cli", "serve", str(root)], root, False,
                       python_env())
    theirs = run_session(["node", node_entry, str(root)], root, True, dict(os.environ))
    for i, step in enumerate(SESSION):
        if ours.errors[i] != step.mistake or theirs.errors[i] != step.mistake:
            raise RuntimeError(f"step {step.label!r}: corral refused={ours.errors[i]}, "
                               f"reference refused={theirs.errors[i]}, expected {step.mistake}"
                               f"\n{ours.texts[i][:300]}\n{theirs.texts[i][:300]}")
    floors = [refusal_floor(env) if step.mistake and env else "" for step, env in
              zip(SESSION, ours.envelopes)]
    texts = [shown_tools(ours.tools), compact(ours.tools), shown_tools(theirs.tools),
             compact(theirs.tools), *ours.texts, *theirs.texts, *floors]
    counts = count_tokens(texts)
    n = len(SESSION)
    return {"list": counts[0:4], "ours": counts[4:4 + n], "theirs": counts[4 + n:4 + 2 * n],
            "floors": counts[4 + 2 * n:], "tools": (len(ours.tools), len(theirs.tools)),
            "runs": (ours, theirs), "apply_patch": measure_variant(run_apply_patch(root)),
            "text_editor": measure_variant(run_text_editor(root))}


def records_of(m: dict[str, Any]) -> list[Record]:
    ours_list, ours_whole, theirs_list, theirs_whole = m["list"]
    n_ours, n_theirs = m["tools"]

    def rec(case: str, ours: int, theirs: int, target: tuple[str, float] | None,
            note: str = "") -> Record:
        return record("tokens", case, [ours], unit="tokens", baseline=f"{case}: reference",
                      base_values=[theirs], target=target, source=SOURCE if target else None,
                      note=note or f"reference: {theirs:,} tokens")

    out = [rec(f"tools/list without outputSchema ({n_ours} tools vs {n_theirs})", ours_list,
               theirs_list, LIST_TARGET),
           rec("tools/list whole", ours_whole, theirs_whole, LIST_WHOLE_TARGET)]
    good = [i for i, step in enumerate(SESSION) if not step.mistake]
    out.append(rec(f"session: {len(good)} successful calls, total",
                   sum(m["ours"][i] for i in good), sum(m["theirs"][i] for i in good),
                   SESSION_TARGET))
    reads = [i for i in good if SESSION[i].corral[0] in ("read_file", "read_files")]
    others = [i for i in good if i not in reads]
    out.append(rec(f"session: its {len(reads)} reads", sum(m["ours"][i] for i in reads),
                   sum(m["theirs"][i] for i in reads), None,
                   note="a line number every tenth line (fewer in a long read): a token each"))
    out.append(rec(f"session: its {len(others)} other successful calls",
                   sum(m["ours"][i] for i in others), sum(m["theirs"][i] for i in others), None))
    worst = max(good, key=lambda i: m["ours"][i] / max(1, m["theirs"][i]))
    out.append(rec(f"session: the costliest call against the reference's "
                   f"({SESSION[worst].label})", m["ours"][worst], m["theirs"][worst],
                   CALL_TARGET))
    for i in good:
        out.append(rec(f"call: {SESSION[i].label}", m["ours"][i], m["theirs"][i], None))
    bad = [i for i, step in enumerate(SESSION) if step.mistake]
    out.append(rec(f"session: {len(bad)} mistakes, total", sum(m["ours"][i] for i in bad),
                   sum(m["theirs"][i] for i in bad), None))
    for i in bad:
        floor = m["floors"][i]
        over = m["ours"][i] - floor
        out.append(record("tokens", f"refusal: {SESSION[i].label}", [m["ours"][i]],
                          unit="tokens", baseline="its sentence + hint + suggested call",
                          base_values=[floor], note=f"{over:+d} tokens over them (at most "
                          f"+{REFUSAL_SLACK}: {'met' if over <= REFUSAL_SLACK else 'MISSED'}); "
                          f"reference: {m['theirs'][i]} tokens"))
    out += variant_records("apply_patch", m["apply_patch"], m,
                           "no dry run and no make_directory (the move makes it)")
    out += variant_records("text editor", m["text_editor"], m,
                           "no dry run, make_directory or move (it has none)")
    return out


# -- the same edits through the tools models are trained on -------------------------

EDIT_TOOLS = ("edit_file", "write_file", "make_directory", "move_file", "delete_file")
EDITOR = "str_replace_based_edit_tool"
_README_END = "Run the tests with `python -m pytest`.\n"
Call = tuple[str, dict[str, Any]]


def _patch(*lines: str) -> Call:
    return ("apply_patch", {"input": "\n".join(["*** Begin Patch", *lines, "*** End Patch"])
                            + "\n"})


def _added(path: str, text: str) -> list[str]:
    return [f"*** Add File: {path}", *("+" + line for line in text.splitlines())]


# Each edit step of SESSION as apply_patch makes it (no dry run; make_directory is
# not offered beside it, and a move creates the directories it needs).
APPLY_PATCH_EDITS: dict[str, list[Call]] = {
    "edit one line": [_patch("*** Update File: src/app/shlex.py", "@@",
                             "-" + _SHLEX_OLD.rstrip("\n"),
                             "+    def push_token(self, tok: str):")],
    "preview an edit (dry run)": [],
    "two edits in one call": [_patch("*** Update File: src/app/fnmatch.py", "@@",
                                     "-def filter(names, pat):", "+def filter(names, pat, /):",
                                     "@@", "-def translate(pat):", "+def translate(pat, /):")],
    "write a new file": [_patch(*_added("tests/test_more.py", NEW_TEST))],
    "make a directory": [],
    "move a file": [_patch("*** Update File: docs/usage.md",
                           "*** Move to: docs/guide/usage.md")],
    "replace a whole file": [_patch("*** Update File: README.md", "@@",
                                    " " + _README_END.rstrip("\n"), "+", "+## License", "+",
                                    "+MIT", "*** End of File")],
    "an edit whose oldText is not in the file": [
        _patch("*** Update File: src/app/shlex.py", "@@", "-    def pop_token(self):",
               "-        return self.pushback.pop()", "+    def pop_token(self):",
               "+        return None")],
}

# ... and as Claude's text editor makes it (no dry run; it has no move, and create
# makes the directories it needs, so neither make_directory nor the move is made).
EDITOR_EDITS: dict[str, list[Call]] = {
    "edit one line": [(EDITOR, {"command": "str_replace", "path": "src/app/shlex.py",
                                "old_str": _SHLEX_OLD,
                                "new_str": "    def push_token(self, tok: str):\n"})],
    "preview an edit (dry run)": [],
    "two edits in one call": [
        (EDITOR, {"command": "str_replace", "path": "src/app/fnmatch.py",
                  "old_str": "def filter(names, pat):", "new_str": "def filter(names, pat, /):"}),
        (EDITOR, {"command": "str_replace", "path": "src/app/fnmatch.py",
                  "old_str": "def translate(pat):", "new_str": "def translate(pat, /):"})],
    "write a new file": [(EDITOR, {"command": "create", "path": "tests/test_more.py",
                                   "file_text": NEW_TEST})],
    "make a directory": [],
    "move a file": [],
    "replace a whole file": [(EDITOR, {"command": "create", "path": "README.md",
                                       "file_text": README + "\n## License\n\nMIT\n"})],
    "an edit whose oldText is not in the file": [
        (EDITOR, {"command": "str_replace", "path": "src/app/shlex.py",
                  "old_str": "    def pop_token(self):\n        return self.pushback.pop()\n",
                  "new_str": "    def pop_token(self):\n        return None\n"})],
}


def variant_calls(edits: dict[str, list[Call]]) -> list[list[Call]]:
    """SESSION's calls with its edit steps made as ``edits`` has them (every
    edit step must be there: a missing one would be a silent corral call)."""
    out = []
    for step in SESSION:
        if step.corral[0] in EDIT_TOOLS:
            out.append(edits[step.label])
        else:
            out.append([step.corral])
    return out


@dataclass
class VariantRun:
    """What a model was shown: the listing, and each step's call texts."""

    tools: list[dict[str, Any]]
    texts: list[list[str]]
    errors: list[list[bool]]


def run_apply_patch(root: Path) -> VariantRun:
    """The session through ``corral serve --apply-patch``."""
    make_fixture(root)
    conn = Connection([sys.executable, "-m", "corral.cli", "serve", "--apply-patch", str(root)],
                      python_env())
    try:
        tools = conn.request("tools/list", {})["tools"]
        texts, errors = [], []
        for calls in variant_calls(APPLY_PATCH_EDITS):
            results = [conn.request("tools/call", {"name": name, "arguments": args})
                       for name, args in calls]
            texts.append([result_text(r) for r in results])
            errors.append([bool(r.get("isError")) for r in results])
    finally:
        conn.close()
    return VariantRun(tools, texts, errors)


def run_text_editor(root: Path) -> VariantRun:
    """The session through Claude's text editor beside corral's read-only
    tools, run in process as ``anthropic_tool_results`` runs a reply's
    blocks; the listing is ``corral serve --read-only``'s (the editor's
    definition is built into the model)."""
    from corral.integrations.anthropic import anthropic_tool_results
    from corral.tools import Toolbox

    make_fixture(root)
    conn = Connection([sys.executable, "-m", "corral.cli", "serve", "--read-only", str(root)],
                      python_env())
    try:
        tools = conn.request("tools/list", {})["tools"]
    finally:
        conn.close()
    toolbox = Toolbox(root)
    texts, errors = [], []
    for calls in variant_calls(EDITOR_EDITS):
        blocks = [{"type": "tool_use", "id": f"call{i}", "name": name, "input": args}
                  for i, (name, args) in enumerate(calls)]
        results = anthropic_tool_results(toolbox, blocks)
        texts.append([str(r["content"]) for r in results])
        errors.append([bool(r["is_error"]) for r in results])
    return VariantRun(tools, texts, errors)


def measure_variant(run: VariantRun) -> dict[str, Any]:
    for step, errors, texts in zip(SESSION, run.errors, run.texts):
        if any(e != step.mistake for e in errors):
            raise RuntimeError(f"step {step.label!r}: refused={errors}, expected {step.mistake}"
                               f"\n{[t[:300] for t in texts]}")
    flat = [text for texts in run.texts for text in texts]
    counts = iter(count_tokens([shown_tools(run.tools), *flat]))
    listed = next(counts)
    return {"list": listed, "tools": len(run.tools),
            "steps": [sum(next(counts) for _ in texts) for texts in run.texts],
            "calls": [len(texts) for texts in run.texts]}


def variant_records(label: str, v: dict[str, Any], m: dict[str, Any],
                    left_out: str) -> list[Record]:
    """``label``'s session beside corral's own tools (``m``, measure's)."""
    base = "corral's tools"

    def rec(case: str, ours: int, theirs: int, note: str) -> Record:
        return record("tokens", f"{label}: {case}", [ours], unit="tokens",
                      baseline=f"{label}: {case}: {base}", base_values=[theirs],
                      note=f"{base}: {theirs:,} tokens; {note}")

    good = [i for i, step in enumerate(SESSION) if not step.mistake]
    # the edit steps this tool makes, against corral's cost of the same steps
    edits = [i for i in good if SESSION[i].corral[0] in EDIT_TOOLS and v["calls"][i]]
    refused = [i for i, step in enumerate(SESSION)
               if step.mistake and SESSION[i].corral[0] in EDIT_TOOLS]
    n_list, n_ours = m["list"][0], m["tools"][0]
    ours_calls = sum(m["ours"][i] for i in good)
    calls = sum(v["steps"][i] for i in good)
    return [
        rec(f"tools/list without outputSchema ({v['tools']} tools vs {n_ours})", v["list"],
            n_list, "the text editor's definition is built into the model"
            if label == "text editor" else "apply_patch in place of the five write tools"),
        rec(f"the {len(edits)} edit steps it makes ({sum(v['calls'][i] for i in edits)} calls)",
            sum(v["steps"][i] for i in edits), sum(m["ours"][i] for i in edits),
            f"it makes {left_out}"),
        rec(f"session: {len(good)} successful steps, total", calls, ours_calls,
            f"reads and searches are corral's in both; it makes {left_out}"),
        rec("tools/list + the session's successful steps", v["list"] + calls,
            n_list + ours_calls, "what the session costs in all"),
        *(rec(f"refusal: {SESSION[i].label}", v["steps"][i], m["ours"][i],
              "its sentence and hint") for i in refused),
    ]


@contextlib.contextmanager
def _workdir() -> Iterator[Path]:
    """The same directory every run (the reference prints absolute paths,
    whose tokens a random name would change), emptied before and after."""
    path = Path(tempfile.gettempdir()) / "corral-bench-tokens"
    shutil.rmtree(path, ignore_errors=True)
    path.mkdir()
    try:
        yield path
    finally:
        shutil.rmtree(path, ignore_errors=True)


def collect(quick: bool = False) -> list[Record]:
    """Records for run.py (``quick`` changes nothing: counting is exact)."""
    node_entry = ensure_reference_server()
    if node_entry is None or not TOKENIZER.exists():
        why = "the reference server or gpt-tokenizer is not installed (npm/node missing?)"
        return [skipped("tokens", "tools/list and session tokens", why, target=LIST_TARGET,
                        source=SOURCE)]
    with _workdir() as tmp:
        return records_of(measure(node_entry, tmp))


# -- output -------------------------------------------------------------------------

RESULTS_START = "<!-- tokens: written by bench_tokens.py -->"
RESULTS_END = "<!-- end tokens -->"


def table(records: list[Record]) -> str:
    lines = ["| what a model is shown | corral | against | ratio | target | met | note |",
             "|---|---|---|---|---|---|---|"]
    for r in records:
        if r.get("skipped"):
            lines.append(f"| {r['case']} | – | – | – | – | skipped | {r['skipped']} |")
            continue
        met = {True: "yes", False: "**no**", None: "–"}[r.get("met")]
        target = (r["target"].replace("<=", "≤") + f" ({r['source']})") if r.get("target") \
            else "–"
        against = r["baseline"].split(": ")[-1] if r.get("baseline") else "–"
        lines.append(f"| {r['case']} | {r['median']:,.0f} | {against} | {r['ratio']:.2f}x | "
                     f"{target} | {met} | {r.get('note', '')} |")
    return "\n".join(lines)


NOTE = """\
Written by `benchmarks/bench_tokens.py --results` (counts are exact: the machine's load does
not move them). What a model reads of each result is its text content; tools/list is the
`tools` array as compact JSON. A read shows the file's lines as they are, the first and last
line shown and every tenth after its number and a tab: every hundredth in a read of over
1,000 lines, none in a read of under ten (a number is a token of its own in o200k, two past
999, about a fiftieth of ten lines of code; the tab after it mostly merges with what
follows: 1.5 tokens a number on a 1,820-line module). Then one footer in
brackets: the window when part of the file was shown (the next offset is its last line plus
one) and last the 16-hex-digit sha256, bare (7 to 16 tokens as its digits and letters fall).
A write, an edit or a patch is one line ending with the same bracketed digest. So a read
costs its text and 1 to 2% (its numbers), plus the footer: a file of a few short lines
cannot be within 1.3 times with its digest shown (a one-line VERSION file: 6 tokens; 64
bits take at least 4 o200k tokens in any spelling, 7 to 16 as hex digits).
tests/e2e/test_mcp_tokens.py pins the targets on four other fixtures and sessions, each
made and driven apart from this one, and every refusal of the catalogue within its
sentence, hint and suggested call plus 40 tokens; when this was written their successful
calls cost, against the reference (whose answers name pytest's temporary paths): `code`
0.965x, `mixed` (one whole read of a 1,820-line module and two windows of it) 0.997x,
`docs` 0.93x, and `service` (a Node repository: real JavaScript and TypeScript declarations, JSON
and YAML configs, a one-line file) 0.99x."""


def write_results(path: Path, text: str) -> None:
    content = path.read_text() if path.exists() else "# corral benchmark results\n"
    section = (f"{RESULTS_START}\n## tokens: what a model reads, against the reference server "
               f"(o200k, gpt-tokenizer)\n\n{NOTE}\n\n{text}\n{RESULTS_END}")
    start, end = content.find(RESULTS_START), content.find(RESULTS_END)
    if 0 <= start < end:
        content = content[:start] + section + content[end + len(RESULTS_END):]
    else:
        content = content.rstrip("\n") + "\n\n" + section + "\n"
    path.write_text(content)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--results", action="store_true",
                        help="also write the table into benchmarks/RESULTS.md")
    parser.add_argument("--show", action="store_true", help="print each call's text as well")
    args = parser.parse_args()
    node_entry = ensure_reference_server()
    if node_entry is None or not TOKENIZER.exists():
        print("the reference server or gpt-tokenizer is missing: "
              "bash scripts/setup_conformance.sh node")
        return 1
    with _workdir() as tmp:
        m = measure(node_entry, tmp)
    if args.show:
        ours, theirs = m["runs"]
        for i, step in enumerate(SESSION):
            print(f"=== {step.label}: corral {m['ours'][i]}, reference {m['theirs'][i]}")
            print(ours.texts[i][:1500])
            print("--- reference")
            print(theirs.texts[i][:1500])
    text = table(records_of(m))
    print(text)
    if args.results:
        write_results(HERE / "RESULTS.md", text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
