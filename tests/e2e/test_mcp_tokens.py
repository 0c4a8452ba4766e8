"""What a model reads costs no more than the reference server's (o200k tokens).

``corral serve`` and the reference MCP filesystem server
(``@modelcontextprotocol/server-filesystem``) are driven through the same
session on the same fixture (another fixture and session than
benchmarks/bench_tokens.py's, which reports the figures), and what a model
is shown is counted with gpt-tokenizer's o200k encoding, on node (both from
``scripts/setup_conformance.sh node``):

* ``tools/list`` as clients show it (no ``outputSchema``) at most the
  reference's tokens, and whole at most 1.5 times;
* the successful calls, apart from read_file's line numbers, at most the
  reference's tokens in total; a read at most the reference's text plus
  what numbering its lines costs (measured: about one token a line, the
  floor, as a number is a token of its own) and a footer of 30 tokens (its
  short digest is about 9, a window says where it ends and goes on); any
  other call at most 1.3 times its counterpart's.  The line numbers are
  what the reference does not show: with them the total is above the
  reference's when reads are most of a session (benchmarks/RESULTS.md
  says by how much);
* a refusal's text at most its sentence, hint and suggested call plus 40
  tokens, and each of them in it.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sysconfig
from pathlib import Path
from typing import Any

import pytest

from .helpers import CONFORMANCE, SETUP_HINT, RawClient, backend_env, serve_command

REFERENCE = CONFORMANCE / "node" / "node_modules" / "@modelcontextprotocol" \
    / "server-filesystem" / "dist" / "index.js"
TOKENIZER = CONFORMANCE / "node" / "node_modules" / "gpt-tokenizer"
STDLIB = Path(sysconfig.get_paths()["stdlib"])

_COUNT_JS = """
const enc = require(process.argv[1] + '/cjs/encoding/o200k_base');
let data = '';
process.stdin.on('data', c => data += c);
process.stdin.on('end', () => {
  const opts = {disallowedSpecial: new Set()};
  process.stdout.write(JSON.stringify(JSON.parse(data).map(s => enc.encode(s, opts).length)));
});
"""


def tokens(texts: list[str]) -> list[int]:
    if not (TOKENIZER.exists() and REFERENCE.exists() and shutil.which("node")):
        pytest.fail(f"gpt-tokenizer or the reference server is missing; {SETUP_HINT}")
    done = subprocess.run(["node", "-e", _COUNT_JS, str(TOKENIZER)], input=json.dumps(texts),
                          capture_output=True, text=True, check=True, timeout=120)
    counts: list[int] = json.loads(done.stdout)
    return counts


def compact(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


NOTES = """# Notes

Encoding helpers live in lib/.

- base64 and friends: lib/codec.py
- string templates: lib/text.py

Run `make test` before a release.
"""
HELPER = '''"""Helpers for the command line."""

import sys

from lib import codec, text


def main(argv=None):
    args = sys.argv[1:] if argv is None else argv
    if not args:
        print("usage: tool WORD...")
        return 2
    for word in args:
        print(text.capwords(word), codec.b64encode(word.encode()).decode())
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
'''


def make_fixture(root: Path) -> None:
    if root.exists():
        shutil.rmtree(root)
    (root / "lib").mkdir(parents=True)
    for rel, module in {"codec.py": "base64.py", "paths.py": "glob.py", "text.py": "string.py",
                        "options.py": "getopt.py", "dates.py": "calendar.py"}.items():
        shutil.copyfile(STDLIB / module, root / "lib" / rel)
    (root / "lib" / "__init__.py").write_text("")
    (root / "docs").mkdir()
    (root / "docs" / "notes.md").write_text(NOTES)
    (root / "docs" / "design.md").write_text("# Design\n\nOne module per concern.\n")
    (root / "Makefile").write_text("test:\n\tpython -m pytest\n")
    (root / "setup.cfg").write_text("[metadata]\nname = tool\nversion = 2.0\n")
    (root.parent / "secret.txt").write_text("outside\n")


# (corral call, reference call); "{root}" is the fixture's absolute path
SUCCESSES: list[tuple[tuple[str, dict[str, Any]], tuple[str, dict[str, Any]]]] = [
    (("list_directory", {"path": "."}), ("list_directory", {"path": "{root}"})),
    (("glob", {"pattern": "*.md"}), ("search_files", {"path": "{root}", "pattern": "**/*.md"})),
    (("read_file", {"path": "lib/paths.py"}), ("read_text_file", {"path": "{root}/lib/paths.py"})),
    (("read_file", {"path": "lib/text.py", "limit": 80}),
     ("read_text_file", {"path": "{root}/lib/text.py", "head": 80})),
    (("file_info", {"path": "lib/codec.py"}), ("get_file_info", {"path": "{root}/lib/codec.py"})),
    (("edit_file", {"path": "lib/paths.py", "oldText": "def glob0(dirname, pattern):",
                    "newText": "def glob0(dirname, pattern, /):"}),
     ("edit_file", {"path": "{root}/lib/paths.py",
                    "edits": [{"oldText": "def glob0(dirname, pattern):",
                               "newText": "def glob0(dirname, pattern, /):"}]})),
    (("write_file", {"path": "lib/cli.py", "content": HELPER}),
     ("write_file", {"path": "{root}/lib/cli.py", "content": HELPER})),
    (("read_file", {"path": "lib/cli.py"}), ("read_text_file", {"path": "{root}/lib/cli.py"})),
    (("list_directory", {"path": ".", "depth": 2}), ("directory_tree", {"path": "{root}"})),
    (("make_directory", {"path": "docs/old"}), ("create_directory", {"path": "{root}/docs/old"})),
    (("move_file", {"source": "docs/design.md", "destination": "docs/old/design.md"}),
     ("move_file", {"source": "{root}/docs/design.md",
                    "destination": "{root}/docs/old/design.md"})),
    (("read_files", {"paths": ["docs/notes.md", "setup.cfg"]}),
     ("read_multiple_files", {"paths": ["{root}/docs/notes.md", "{root}/setup.cfg"]})),
    (("edit_file", {"path": "lib/options.py", "oldText": "def getopt(args, shortopts, longopts = []):",
                    "newText": "def getopt(args, shortopts, longopts=()):", "dryRun": True}),
     ("edit_file", {"path": "{root}/lib/options.py", "dryRun": True,
                    "edits": [{"oldText": "def getopt(args, shortopts, longopts = []):",
                               "newText": "def getopt(args, shortopts, longopts=()):"}]})),
    (("read_file", {"path": "lib/codec.py"}), ("read_text_file", {"path": "{root}/lib/codec.py"})),
    (("read_file", {"path": "lib/dates.py", "offset": 700}),
     ("read_text_file", {"path": "{root}/lib/dates.py", "tail": 69})),
]
MISTAKES: list[tuple[tuple[str, dict[str, Any]], tuple[str, dict[str, Any]]]] = [
    (("edit_file", {"path": "lib/codecs.py", "oldText": "a", "newText": "b"}),
     ("edit_file", {"path": "{root}/lib/codecs.py", "edits": [{"oldText": "a", "newText": "b"}]})),
    (("read_file", {"path": "{root}/../secret.txt"}),
     ("read_text_file", {"path": "{root}/../secret.txt"})),
    (("move_file", {"source": "docs/readme.md", "destination": "docs/old/readme.md"}),
     ("move_file", {"source": "{root}/docs/readme.md",
                    "destination": "{root}/docs/old/readme.md"})),
    (("read_file", {"path": "docs"}), ("read_text_file", {"path": "{root}/docs"})),
]


def _fill(value: Any, root: str) -> Any:
    if isinstance(value, str):
        return value.replace("{root}", root)
    if isinstance(value, list):
        return [_fill(v, root) for v in value]
    if isinstance(value, dict):
        return {k: _fill(v, root) for k, v in value.items()}
    return value


def _session(command: list[str], root: Path, which: int, env: dict[str, str] | None = None
             ) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """The listing and every call's result, from a fresh fixture."""
    make_fixture(root)
    client = RawClient(command, env=env)
    try:
        client.initialize("2025-06-18")
        listing = client.request("tools/list", {})["result"]["tools"]
        results = []
        for pair in SUCCESSES + MISTAKES:
            name, args = pair[which]
            answer = client.request("tools/call", {"name": name,
                                                   "arguments": _fill(args, str(root))})
            results.append(answer["result"])
    finally:
        client.close()
    return listing, results


def _text(result: dict[str, Any]) -> str:
    return "\n".join(b["text"] for b in result["content"] if b["type"] == "text")


def _floor(envelope: dict[str, Any]) -> str:
    call = (f"{envelope['suggestedTool']} {compact(envelope.get('suggestedArgs') or {})}"
            if envelope.get("suggestedTool") else "")
    return "\n".join(p for p in (envelope["message"], envelope["hint"], call) if p)


READS = ("read_file", "read_files")


def _numbered_and_plain(result: dict[str, Any]) -> tuple[str, str]:
    """A read's lines as shown (numbered; an empty line empty) and as in
    the file: what numbering costs is the difference of their tokens."""
    envelope = result["structuredContent"]
    numbered, plain = [], []
    for f in envelope.get("files", [envelope]):
        if f.get("ok") and "content" in f:
            lines = f["content"].split("\n")
            numbered.append("\n".join(line if line.partition("\t")[2] else "" for line in lines))
            plain.append("\n".join(line.partition("\t")[2] for line in lines))
    return "\n".join(numbered), "\n".join(plain)


@pytest.fixture(scope="module")
def measured(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    root = tmp_path_factory.mktemp("tokens") / "project"
    ours = _session(serve_command(root), root, 0, backend_env())
    theirs = _session(["node", str(REFERENCE), str(root)], root, 1)
    n = len(SUCCESSES) + len(MISTAKES)
    for i in range(n):  # the same session: the same calls succeed and fail on both
        assert bool(ours[1][i].get("isError")) is (i >= len(SUCCESSES)), ours[1][i]
        assert bool(theirs[1][i].get("isError")) is (i >= len(SUCCESSES)), theirs[1][i]
    floors = [_floor(r["structuredContent"]) for r in ours[1][len(SUCCESSES):]]
    texts = [compact([{k: v for k, v in t.items() if k != "outputSchema"} for t in ours[0]]),
             compact(ours[0]),
             compact([{k: v for k, v in t.items() if k != "outputSchema"} for t in theirs[0]]),
             compact(theirs[0]), *map(_text, ours[1]), *map(_text, theirs[1]), *floors]
    reads = [i for i, ((name, _), _) in enumerate(SUCCESSES) if name in READS]
    pairs = [_numbered_and_plain(ours[1][i]) for i in reads]
    texts += [text for pair in pairs for text in pair]
    counts = tokens(texts)
    numbering = [0] * len(SUCCESSES)
    base = 4 + 2 * n + len(floors)
    for k, i in enumerate(reads):
        numbering[i] = counts[base + 2 * k] - counts[base + 2 * k + 1]
    return {"list": counts[:4], "ours": counts[4:4 + n], "theirs": counts[4 + n:4 + 2 * n],
            "floors": counts[4 + 2 * n:base], "numbering": numbering, "results": ours[1]}


def test_tools_list_costs_no_more_than_the_reference(measured):
    ours_shown, ours_whole, theirs_shown, theirs_whole = measured["list"]
    assert ours_shown <= theirs_shown, (ours_shown, theirs_shown)
    assert ours_whole <= 1.5 * theirs_whole, (ours_whole, theirs_whole)


def test_successful_calls_cost_no_more_than_the_reference(measured):
    """Apart from read_file's line numbers, a model reads no more than the
    reference shows it: a read costs at most the reference's text, what
    numbering its lines costs (measured: the same text with and without its
    numbers) and a footer of 30 tokens per file; any other call at most 1.3
    times its counterpart."""
    ours, theirs, numbering = measured["ours"], measured["theirs"], measured["numbering"]
    for i, ((name, args), _) in enumerate(SUCCESSES):
        if name in READS:
            files = len(measured["results"][i]["structuredContent"].get("files", [None]))
            assert ours[i] <= theirs[i] + numbering[i] + 30 * files, \
                (name, args, ours[i], theirs[i], numbering[i])
        else:
            assert ours[i] <= 1.3 * theirs[i], (name, args, ours[i], theirs[i])
    good = range(len(SUCCESSES))
    assert sum(ours[i] - numbering[i] for i in good) <= sum(theirs[i] for i in good), \
        (sum(ours[i] for i in good), sum(numbering), sum(theirs[i] for i in good))
    others = [i for i, ((name, _), _) in enumerate(SUCCESSES) if name not in READS]
    assert sum(ours[i] for i in others) <= 0.6 * sum(theirs[i] for i in others)


def test_line_numbers_and_digests_are_still_shown(measured):
    read = measured["results"][2]
    envelope = read["structuredContent"]
    text = _text(read)
    assert text.startswith("1\t") and envelope["sha256"][:16] in text
    assert envelope["sha256"] not in text  # the short form only
    assert f"{envelope['totalLines']}\t" in text


def test_a_refusal_costs_its_sentence_hint_and_call_and_little_more(measured):
    first = len(SUCCESSES)
    for i, result in enumerate(measured["results"][first:]):
        envelope = result["structuredContent"]
        text = _text(result)
        assert envelope["code"] in text and envelope["message"] in text, text
        assert envelope["hint"] in text, text
        assert text.count(envelope["message"]) == 1  # the sentence once
        if envelope.get("suggestedTool"):
            assert f"{envelope['suggestedTool']} {compact(envelope['suggestedArgs'])}" in text
        assert measured["ours"][first + i] <= measured["floors"][i] + 40, (text, envelope)

