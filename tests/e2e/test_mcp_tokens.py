"""What a model reads costs no more than the reference server's (o200k tokens).

``corral serve`` and the reference MCP filesystem server
(``@modelcontextprotocol/server-filesystem``) are driven through the same
sessions on the same fixtures (other fixtures and sessions than
benchmarks/bench_tokens.py's, which reports the figures), and what a model
is shown is counted with gpt-tokenizer's o200k encoding, on node (both from
``scripts/setup_conformance.sh node``).  Four sessions: ``code``, a
project of standard-library modules where reads are 92% of the reference's
tokens; ``mixed``, tiny files, one large file (1,820 lines) read whole and
in windows, and as many mistakes as successful calls; ``docs``, a
repository of markdown pages (prose made of the standard library's
docstrings), its site config and a TypeScript module: many small reads,
edits, a move, nine mistakes; ``service``, a Node repository (real
JavaScript modules and TypeScript declarations of the pinned packages the
set-up installs, JSON and YAML configs, a one-line file): 22 calls and
five mistakes.  On each:

* ``tools/list`` as clients show it (no ``outputSchema``) at most 0.9 times
  the reference's tokens, and whole at most 1.5 times;
* the successful calls, line numbers and digests shown, at most the
  reference's tokens in total; each call at most 1.3 times its
  counterpart's, but a read of a few short lines, which cannot carry a
  digest within 1.3 times (a one-line VERSION file: 6 tokens, its digest
  alone 7 to 16): at most its counterpart's and what a read must carry
  (the footer with the digest, and each number shown with its tab);
* a refusal's text at most its sentence, hint and suggested call plus 40
  tokens, and each of them in it: in every session, and for every refusal
  of the catalogue (tests/tools/cases_*.py) and the INTERNAL one.
"""

from __future__ import annotations

import importlib
import inspect
import json
import re
import shutil
import subprocess
import sysconfig
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from corral.hosts import render
from corral.tools import Code
from corral.tools._refusals.catalogue import internal

from ..tools.helpers.catalogue import load_cases, run_case
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
    (("edit_file", {"path": "lib/options.py",
                    "oldText": "def getopt(args, shortopts, longopts = []):",
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


ENV_EXAMPLE = "# copy to .env\nDATABASE_URL=postgres://localhost/app\nDEBUG=0\n"
CONFIG = """[server]
host = "127.0.0.1"
port = 8080

[log]
level = "info"
"""
NEW_NOTE = "Release 2.0.1: fixes the port default.\n"


def make_mixed_fixture(root: Path) -> None:
    """Tiny files (a line to six), one large module (1,820 lines of real
    code), a nested directory and a file outside the root."""
    if root.exists():
        shutil.rmtree(root)
    (root / "src" / "app").mkdir(parents=True)
    shutil.copyfile(STDLIB / "pickle.py", root / "src" / "app" / "store.py")
    (root / "src" / "app" / "__init__.py").write_text('__version__ = "2.0.1"\n')
    (root / "VERSION").write_text("2.0.1\n")
    (root / ".env.example").write_text(ENV_EXAMPLE)
    (root / "config.toml").write_text(CONFIG)
    (root / "docs").mkdir()
    (root / "docs" / "index.md").write_text("# App\n\nSee config.toml.\n")
    (root / "docs" / "changes.md").write_text("# Changes\n")
    (root.parent / "secret.txt").write_text("outside\n")


Pair = tuple[tuple[str, dict[str, Any]], tuple[str, dict[str, Any]]]
MIXED_SUCCESSES: list[Pair] = [
    (("list_directory", {"path": "."}), ("list_directory", {"path": "{root}"})),
    (("read_file", {"path": "VERSION"}), ("read_text_file", {"path": "{root}/VERSION"})),
    (("read_file", {"path": ".env.example"}),
     ("read_text_file", {"path": "{root}/.env.example"})),
    (("read_files", {"paths": ["config.toml", "src/app/__init__.py", "docs/index.md"]}),
     ("read_multiple_files", {"paths": ["{root}/config.toml", "{root}/src/app/__init__.py",
                                        "{root}/docs/index.md"]})),
    (("read_file", {"path": "src/app/store.py"}),
     ("read_text_file", {"path": "{root}/src/app/store.py"})),
    (("read_file", {"path": "src/app/store.py", "limit": 300}),
     ("read_text_file", {"path": "{root}/src/app/store.py", "head": 300})),
    (("read_file", {"path": "src/app/store.py", "offset": 1671}),
     ("read_text_file", {"path": "{root}/src/app/store.py", "tail": 150})),
    (("glob", {"pattern": "**/*.md"}), ("search_files", {"path": "{root}", "pattern": "**/*.md"})),
    (("edit_file", {"path": "config.toml", "oldText": "port = 8080", "newText": "port = 8081"}),
     ("edit_file", {"path": "{root}/config.toml",
                    "edits": [{"oldText": "port = 8080", "newText": "port = 8081"}]})),
    (("write_file", {"path": "docs/release.md", "content": NEW_NOTE}),
     ("write_file", {"path": "{root}/docs/release.md", "content": NEW_NOTE})),
    (("file_info", {"path": "VERSION"}), ("get_file_info", {"path": "{root}/VERSION"})),
]
MIXED_MISTAKES: list[Pair] = [
    (("read_file", {"path": "src/app/__init_.py"}),
     ("read_text_file", {"path": "{root}/src/app/__init_.py"})),
    (("edit_file", {"path": "config.toml", "oldText": "level = \"debug\"",
                    "newText": "level = \"warn\""}),
     ("edit_file", {"path": "{root}/config.toml",
                    "edits": [{"oldText": "level = \"debug\"", "newText": "level = \"warn\""}]})),
    (("move_file", {"source": "docs/index.md", "destination": "docs/changes.md"}),
     ("move_file", {"source": "{root}/docs/index.md", "destination": "{root}/docs/changes.md"})),
    (("read_file", {"path": "../secret.txt"}),
     ("read_text_file", {"path": "{root}/../secret.txt"})),
    (("make_directory", {"path": "VERSION"}), ("create_directory", {"path": "{root}/VERSION"})),
    (("list_directory", {"path": "config.toml"}),
     ("list_directory", {"path": "{root}/config.toml"})),
    (("edit_file", {"path": "src/app/version.py", "oldText": "2.0.1", "newText": "2.0.2"}),
     ("edit_file", {"path": "{root}/src/app/version.py",
                    "edits": [{"oldText": "2.0.1", "newText": "2.0.2"}]})),
    (("file_info", {"path": "docs/changelog.md"}),
     ("get_file_info", {"path": "{root}/docs/changelog.md"})),
]


MKDOCS = """site_name: Library notes
nav:
  - Home: index.md
  - Formats:
      - json.md
      - csv.md
  - Text:
      - textwrap.md
      - difflib.md
  - Numbers: statistics.md
theme:
  name: material
  features:
    - navigation.sections
    - search.suggest
markdown_extensions:
  - admonition
  - toc:
      permalink: true
"""
PACKAGE_JSON = """{
  "name": "library-notes",
  "private": true,
  "version": "0.4.0",
  "scripts": {
    "build": "tsc -p . && mkdocs build --strict",
    "check": "markdownlint docs && tsc --noEmit -p ."
  },
  "devDependencies": {
    "markdownlint-cli": "^0.39.0",
    "typescript": "^5.4.0"
  }
}
"""
SEARCH_TS = """export interface Page {
  path: string;
  title: string;
  body: string;
}

export interface Hit {
  page: Page;
  score: number;
  line: number;
}

const WORD = /[A-Za-z0-9_]+/g;

export function words(text: string): string[] {
  return (text.toLowerCase().match(WORD) ?? []).filter((w) => w.length > 2);
}

export function search(pages: Page[], query: string, limit = 10): Hit[] {
  const wanted = new Set(words(query));
  const hits: Hit[] = [];
  for (const page of pages) {
    const lines = page.body.split("\\n");
    lines.forEach((text, i) => {
      const score = words(text).filter((w) => wanted.has(w)).length;
      if (score > 0) {
        hits.push({ page, score: score + (page.title.includes(query) ? 2 : 0), line: i + 1 });
      }
    });
  }
  hits.sort((a, b) => b.score - a.score || a.line - b.line);
  return hits.slice(0, limit);
}
"""
CONTRIBUTING = """# Contributing

1. One page per module, named after it.
2. Keep examples runnable: `python -m doctest docs/*.md`.
3. Run `npm run check` before you push.
"""
DOCS_INDEX = """# Library notes

Short pages on the standard library modules this team leans on.

- [json](json.md): reading and writing JSON
- [csv](csv.md): comma-separated files
- [textwrap](textwrap.md) and [difflib](difflib.md): text
- [statistics](statistics.md): means, medians and spread
"""
CHANGELOG_ENTRY = ("# Changes\n\n## 0.4.0\n\n- A page for statistics.\n"
                   "- Search ranks titles first.\n")
DOC_MODULES = ("json", "csv", "textwrap", "difflib", "statistics", "fnmatch")


def module_page(name: str) -> str:
    """A markdown page made of a standard-library module's own docstrings
    (real prose, lists and examples): its summary, then each function."""
    module = importlib.import_module(name)
    parts = [f"# {name}", "", inspect.getdoc(module) or ""]
    for fname, obj in sorted(vars(module).items()):
        if fname.startswith("_") or not inspect.isfunction(obj) or obj.__module__ != name:
            continue
        try:
            signature = str(inspect.signature(obj))
        except (TypeError, ValueError):
            signature = "(...)"
        parts += ["", f"## {fname}{signature}", "", inspect.getdoc(obj) or "Not documented."]
    return "\n".join(parts) + "\n"


def make_docs_fixture(root: Path) -> None:
    """A repository of markdown documentation (pages made from the
    standard library's docstrings, 45 to 465 lines), its site config, a
    small TypeScript search module and a file outside the root."""
    if root.exists():
        shutil.rmtree(root)
    (root / "docs").mkdir(parents=True)
    for name in DOC_MODULES:
        (root / "docs" / f"{name}.md").write_text(module_page(name))
    (root / "docs" / "index.md").write_text(DOCS_INDEX)
    (root / "src").mkdir()
    (root / "src" / "search.ts").write_text(SEARCH_TS)
    (root / "mkdocs.yml").write_text(MKDOCS)
    (root / "package.json").write_text(PACKAGE_JSON)
    (root / "CONTRIBUTING.md").write_text(CONTRIBUTING)
    (root / ".gitignore").write_text("node_modules/\nsite/\n")
    (root.parent / "secret.txt").write_text("outside\n")


_STATS_LINES = module_page("statistics").count("\n")
DOCS_SUCCESSES: list[Pair] = [
    (("list_directory", {"path": "."}), ("list_directory", {"path": "{root}"})),
    (("glob", {"pattern": "**/*.md", "path": "docs"}),
     ("search_files", {"path": "{root}/docs", "pattern": "**/*.md"})),
    (("read_file", {"path": "docs/index.md"}),
     ("read_text_file", {"path": "{root}/docs/index.md"})),
    (("read_file", {"path": "mkdocs.yml"}), ("read_text_file", {"path": "{root}/mkdocs.yml"})),
    (("read_file", {"path": "docs/fnmatch.md"}),
     ("read_text_file", {"path": "{root}/docs/fnmatch.md"})),
    (("read_file", {"path": "src/search.ts"}),
     ("read_text_file", {"path": "{root}/src/search.ts"})),
    (("read_files", {"paths": ["package.json", "CONTRIBUTING.md", ".gitignore"]}),
     ("read_multiple_files", {"paths": ["{root}/package.json", "{root}/CONTRIBUTING.md",
                                        "{root}/.gitignore"]})),
    (("read_file", {"path": "docs/json.md"}), ("read_text_file", {"path": "{root}/docs/json.md"})),
    (("read_file", {"path": "docs/statistics.md", "limit": 60}),
     ("read_text_file", {"path": "{root}/docs/statistics.md", "head": 60})),
    (("read_file", {"path": "docs/statistics.md", "offset": _STATS_LINES - 39}),
     ("read_text_file", {"path": "{root}/docs/statistics.md", "tail": 40})),
    (("edit_file", {"path": "docs/index.md", "oldText": "- [csv](csv.md): comma-separated files",
                    "newText": "- [csv](csv.md): comma-separated values"}),
     ("edit_file", {"path": "{root}/docs/index.md",
                    "edits": [{"oldText": "- [csv](csv.md): comma-separated files",
                               "newText": "- [csv](csv.md): comma-separated values"}]})),
    (("edit_file", {"path": "mkdocs.yml", "edits": [
        {"oldText": "site_name: Library notes", "newText": "site_name: Standard library notes"},
        {"oldText": "    - search.suggest\n",
         "newText": "    - search.suggest\n    - search.highlight\n"}]}),
     ("edit_file", {"path": "{root}/mkdocs.yml", "edits": [
         {"oldText": "site_name: Library notes", "newText": "site_name: Standard library notes"},
         {"oldText": "    - search.suggest\n",
          "newText": "    - search.suggest\n    - search.highlight\n"}]})),
    (("edit_file", {"path": "src/search.ts", "oldText": "limit = 10", "newText": "limit = 20",
                    "dryRun": True}),
     ("edit_file", {"path": "{root}/src/search.ts", "dryRun": True,
                    "edits": [{"oldText": "limit = 10", "newText": "limit = 20"}]})),
    (("write_file", {"path": "CHANGELOG.md", "content": CHANGELOG_ENTRY}),
     ("write_file", {"path": "{root}/CHANGELOG.md", "content": CHANGELOG_ENTRY})),
    (("read_file", {"path": "CHANGELOG.md"}), ("read_text_file", {"path": "{root}/CHANGELOG.md"})),
    (("make_directory", {"path": "docs/text"}), ("create_directory", {"path": "{root}/docs/text"})),
    (("move_file", {"source": "docs/textwrap.md", "destination": "docs/text/textwrap.md"}),
     ("move_file", {"source": "{root}/docs/textwrap.md",
                    "destination": "{root}/docs/text/textwrap.md"})),
    (("read_file", {"path": "docs/text/textwrap.md", "limit": 25}),
     ("read_text_file", {"path": "{root}/docs/text/textwrap.md", "head": 25})),
    (("file_info", {"path": "docs/csv.md"}), ("get_file_info", {"path": "{root}/docs/csv.md"})),
    (("list_directory", {"path": "docs"}), ("list_directory", {"path": "{root}/docs"})),
]
DOCS_MISTAKES: list[Pair] = [
    (("read_file", {"path": "docs/jsno.md"}), ("read_text_file", {"path": "{root}/docs/jsno.md"})),
    (("edit_file", {"path": "docs/index.md", "oldText": "- [pathlib](pathlib.md): paths",
                    "newText": "- [pathlib](pathlib.md): file system paths"}),
     ("edit_file", {"path": "{root}/docs/index.md",
                    "edits": [{"oldText": "- [pathlib](pathlib.md): paths",
                               "newText": "- [pathlib](pathlib.md): file system paths"}]})),
    (("edit_file", {"path": "docs/pathlib.md", "oldText": "# pathlib", "newText": "# Paths"}),
     ("edit_file", {"path": "{root}/docs/pathlib.md",
                    "edits": [{"oldText": "# pathlib", "newText": "# Paths"}]})),
    (("read_file", {"path": "docs/text"}), ("read_text_file", {"path": "{root}/docs/text"})),
    (("move_file", {"source": "docs/csv.md", "destination": "docs/json.md"}),
     ("move_file", {"source": "{root}/docs/csv.md", "destination": "{root}/docs/json.md"})),
    (("list_directory", {"path": "mkdocs.yml"}), ("list_directory", {"path": "{root}/mkdocs.yml"})),
    (("make_directory", {"path": "package.json"}),
     ("create_directory", {"path": "{root}/package.json"})),
    (("read_file", {"path": "../secret.txt"}),
     ("read_text_file", {"path": "{root}/../secret.txt"})),
    (("file_info", {"path": "src/index.ts"}), ("get_file_info", {"path": "{root}/src/index.ts"})),
]


#: real JavaScript, TypeScript declarations and markdown of pinned versions,
#: from the packages the conformance set-up installs beside the reference
NODE_MODULES = CONFORMANCE / "node" / "node_modules" / "@modelcontextprotocol"
SERVICE_SOURCES = {
    "README.md": "server-filesystem/README.md",
    "src/protocol.js": "sdk/dist/esm/shared/protocol.js",
    "src/server.js": "sdk/dist/esm/server/mcp.js",
    "src/files.js": "server-filesystem/dist/lib.js",
    "src/paths.js": "server-filesystem/dist/path-utils.js",
    "types/client.d.ts": "sdk/dist/esm/client/index.d.ts",
}
SERVICE_PACKAGE = """{
  "name": "files-service",
  "version": "1.4.2",
  "type": "module",
  "main": "src/server.js",
  "scripts": {
    "start": "node src/server.js",
    "test": "node --test test/",
    "lint": "eslint src"
  },
  "dependencies": {
    "diff": "^5.2.0",
    "minimatch": "^10.0.1",
    "zod": "^3.23.8"
  },
  "devDependencies": {
    "eslint": "^9.9.0",
    "typescript": "^5.5.4"
  }
}
"""
TSCONFIG = """{
  "compilerOptions": {
    "target": "ES2022",
    "module": "NodeNext",
    "moduleResolution": "NodeNext",
    "allowJs": true,
    "checkJs": true,
    "noEmit": true,
    "strict": true
  },
  "include": ["src", "types"]
}
"""
CI_YAML = """name: ci
on:
  push:
    branches: [main]
  pull_request:
jobs:
  test:
    runs-on: ubuntu-latest
    strategy:
      matrix:
        node: [18, 20, 22]
    steps:
      - uses: actions/checkout@v4
      - uses: actions/setup-node@v4
        with:
          node-version: ${{ matrix.node }}
          cache: npm
      - run: npm ci
      - run: npm run lint
      - run: npm test
"""
COMPOSE_YAML = """services:
  files:
    build: .
    ports:
      - "8080:8080"
    environment:
      LOG_LEVEL: info
      ALLOWED_DIRS: /data
    volumes:
      - ./data:/data:ro
"""
DEFAULT_JSON = '{\n  "port": 8080,\n  "logLevel": "info",\n  "maxFileBytes": 10485760\n}\n'
SERVICE_CHANGES = "# Changes\n\n## 1.4.2\n\n- Port 8080 by default.\n"


def make_service_fixture(root: Path) -> None:
    """A Node service repository: real JavaScript modules (108 to 1,136
    lines) and TypeScript declarations, a 365-line README, JSON and YAML
    configs, a one-line .nvmrc, and a file outside the root."""
    if not (NODE_MODULES / "sdk" / "package.json").exists():
        pytest.fail(f"the conformance node packages are missing; {SETUP_HINT}")
    if root.exists():
        shutil.rmtree(root)
    for rel, source in SERVICE_SOURCES.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(NODE_MODULES / source, root / rel)
    (root / ".github" / "workflows").mkdir(parents=True)
    (root / ".github" / "workflows" / "ci.yml").write_text(CI_YAML)
    (root / "config").mkdir()
    (root / "config" / "default.json").write_text(DEFAULT_JSON)
    (root / "package.json").write_text(SERVICE_PACKAGE)
    (root / "tsconfig.json").write_text(TSCONFIG)
    (root / "docker-compose.yml").write_text(COMPOSE_YAML)
    (root / ".nvmrc").write_text("20\n")
    (root.parent / "secret.txt").write_text("outside\n")




def _line_count(path: Path) -> int:
    """How many lines read_file counts in ``path`` (0 when it is missing:
    the fixture then fails first, saying how to install it)."""
    if not path.exists():
        return 0
    text = path.read_text()
    return text.count("\n") + (not text.endswith("\n"))


_PROTOCOL_LINES = _line_count(NODE_MODULES / SERVICE_SOURCES["src/protocol.js"])
SERVICE_SUCCESSES: list[Pair] = [
    (("list_directory", {"path": "."}), ("list_directory", {"path": "{root}"})),
    (("read_file", {"path": "README.md"}), ("read_text_file", {"path": "{root}/README.md"})),
    (("read_file", {"path": "package.json"}),
     ("read_text_file", {"path": "{root}/package.json"})),
    (("read_file", {"path": ".nvmrc"}), ("read_text_file", {"path": "{root}/.nvmrc"})),
    (("glob", {"pattern": "src/**/*.js"}),
     ("search_files", {"path": "{root}/src", "pattern": "**/*.js"})),
    (("read_file", {"path": "src/server.js", "limit": 120}),
     ("read_text_file", {"path": "{root}/src/server.js", "head": 120})),
    (("read_file", {"path": "src/protocol.js"}),
     ("read_text_file", {"path": "{root}/src/protocol.js"})),
    (("read_files", {"paths": ["tsconfig.json", "config/default.json",
                               ".github/workflows/ci.yml"]}),
     ("read_multiple_files", {"paths": ["{root}/tsconfig.json", "{root}/config/default.json",
                                        "{root}/.github/workflows/ci.yml"]})),
    (("edit_file", {"path": "package.json", "oldText": '"version": "1.4.2"',
                    "newText": '"version": "1.4.3"'}),
     ("edit_file", {"path": "{root}/package.json",
                    "edits": [{"oldText": '"version": "1.4.2"',
                               "newText": '"version": "1.4.3"'}]})),
    (("read_file", {"path": "src/files.js"}), ("read_text_file", {"path": "{root}/src/files.js"})),
    (("edit_file", {"path": "src/files.js",
                    "oldText": "    const units = ['B', 'KB', 'MB', 'GB', 'TB'];",
                    "newText": "    const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];"}),
     ("edit_file", {"path": "{root}/src/files.js",
                    "edits": [{"oldText": "    const units = ['B', 'KB', 'MB', 'GB', 'TB'];",
                               "newText": "    const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];"}
                              ]})),
    (("edit_file", {"path": "docker-compose.yml", "oldText": "      LOG_LEVEL: info",
                    "newText": "      LOG_LEVEL: debug", "dryRun": True}),
     ("edit_file", {"path": "{root}/docker-compose.yml", "dryRun": True,
                    "edits": [{"oldText": "      LOG_LEVEL: info",
                               "newText": "      LOG_LEVEL: debug"}]})),
    (("write_file", {"path": "CHANGELOG.md", "content": SERVICE_CHANGES}),
     ("write_file", {"path": "{root}/CHANGELOG.md", "content": SERVICE_CHANGES})),
    (("read_file", {"path": "src/paths.js"}), ("read_text_file", {"path": "{root}/src/paths.js"})),
    (("file_info", {"path": "src/server.js"}),
     ("get_file_info", {"path": "{root}/src/server.js"})),
    (("make_directory", {"path": "src/util"}), ("create_directory", {"path": "{root}/src/util"})),
    (("move_file", {"source": "src/paths.js", "destination": "src/util/paths.js"}),
     ("move_file", {"source": "{root}/src/paths.js",
                    "destination": "{root}/src/util/paths.js"})),
    (("list_directory", {"path": "src"}), ("list_directory", {"path": "{root}/src"})),
    (("read_file", {"path": "types/client.d.ts", "limit": 200}),
     ("read_text_file", {"path": "{root}/types/client.d.ts", "head": 200})),
    (("write_file", {"path": ".nvmrc", "content": "22\n", "overwrite": True}),
     ("write_file", {"path": "{root}/.nvmrc", "content": "22\n"})),
    (("read_file", {"path": "src/protocol.js", "offset": _PROTOCOL_LINES - 59}),
     ("read_text_file", {"path": "{root}/src/protocol.js", "tail": 60})),
    (("read_file", {"path": "docker-compose.yml"}),
     ("read_text_file", {"path": "{root}/docker-compose.yml"})),
]
SERVICE_MISTAKES: list[Pair] = [
    (("read_file", {"path": "src/sever.js"}), ("read_text_file", {"path": "{root}/src/sever.js"})),
    (("edit_file", {"path": "tsconfig.json", "oldText": '"strict": false',
                    "newText": '"strict": true'}),
     ("edit_file", {"path": "{root}/tsconfig.json",
                    "edits": [{"oldText": '"strict": false', "newText": '"strict": true'}]})),
    (("read_file", {"path": "../secret.txt"}),
     ("read_text_file", {"path": "{root}/../secret.txt"})),
    (("write_file", {"path": "src", "content": "x\n", "overwrite": True}),
     ("write_file", {"path": "{root}/src", "content": "x\n"})),
    (("move_file", {"source": "CHANGELOG.md", "destination": "README.md"}),
     ("move_file", {"source": "{root}/CHANGELOG.md", "destination": "{root}/README.md"})),
]


@dataclass(frozen=True)
class Session:
    """A fixture and the calls made on it, as each server spells them."""

    make: Callable[[Path], None]
    successes: list[Pair]
    mistakes: list[Pair]


SESSIONS = {"code": Session(make_fixture, SUCCESSES, MISTAKES),
            "mixed": Session(make_mixed_fixture, MIXED_SUCCESSES, MIXED_MISTAKES),
            "docs": Session(make_docs_fixture, DOCS_SUCCESSES, DOCS_MISTAKES),
            "service": Session(make_service_fixture, SERVICE_SUCCESSES, SERVICE_MISTAKES)}


def _fill(value: Any, root: str) -> Any:
    if isinstance(value, str):
        return value.replace("{root}", root)
    if isinstance(value, list):
        return [_fill(v, root) for v in value]
    if isinstance(value, dict):
        return {k: _fill(v, root) for k, v in value.items()}
    return value


def _session(session: Session, command: list[str], root: Path, which: int,
             env: dict[str, str] | None = None
             ) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """The listing and every call's result, from a fresh fixture."""
    session.make(root)
    client = RawClient(command, env=env)
    try:
        client.initialize("2025-06-18")
        listing = client.request("tools/list", {})["result"]["tools"]
        results = []
        for pair in session.successes + session.mistakes:
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
_NUMBER = re.compile(r"^\d+\t", re.MULTILINE)


def _carried(text: str) -> list[str]:
    """What a read's text carries beside the file's lines: its footers
    (brackets around the 16-hex digest, 7 to 16 tokens as its digits and
    letters fall, and the window when part of a file was shown), a
    read_files' ``== path ==`` lines, and each number shown with its tab."""
    rows = text.split("\n")
    out = [row for k, row in enumerate(rows)
           if row.startswith("== ") and row.endswith(" ==")
           or row.startswith("[") and row.endswith("]")
           and (k == len(rows) - 1 or rows[k + 1].startswith("== "))]
    return out + _NUMBER.findall(text)


@pytest.fixture(scope="module", params=sorted(SESSIONS))
def measured(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
             ) -> dict[str, Any]:
    session = SESSIONS[request.param]
    # the same path for both servers: the reference prints absolute paths
    root = tmp_path_factory.mktemp(f"tokens-{request.param}") / "project"
    ours = _session(session, serve_command(root), root, 0, backend_env())
    theirs = _session(session, ["node", str(REFERENCE), str(root)], root, 1)
    good = len(session.successes)
    n = good + len(session.mistakes)
    for i in range(n):  # the same session: the same calls succeed and fail on both
        assert bool(ours[1][i].get("isError")) is (i >= good), ours[1][i]
        assert bool(theirs[1][i].get("isError")) is (i >= good), theirs[1][i]
    floors = [_floor(r["structuredContent"]) for r in ours[1][good:]]
    reads = [i for i, ((name, _), _) in enumerate(session.successes) if name in READS]
    carried = [_carried(_text(ours[1][i])) for i in reads]
    texts = [compact([{k: v for k, v in t.items() if k != "outputSchema"} for t in ours[0]]),
             compact(ours[0]),
             compact([{k: v for k, v in t.items() if k != "outputSchema"} for t in theirs[0]]),
             compact(theirs[0]), *map(_text, ours[1]), *map(_text, theirs[1]), *floors,
             *(piece for pieces in carried for piece in pieces)]
    digits = [piece[:-1] for pieces in carried for piece in pieces if _NUMBER.fullmatch(piece)]
    counts = tokens(texts + digits)
    base = 4 + 2 * n + len(floors)
    extra = {}
    for i, pieces in zip(reads, carried):
        extra[i] = sum(counts[base:base + len(pieces)])
        base += len(pieces)
    numbers = sum(counts[base:])  # the numbers shown, without their tabs
    return {"session": session, "list": counts[:4], "ours": counts[4:4 + n],
            "theirs": counts[4 + n:4 + 2 * n], "floors": counts[4 + 2 * n:4 + 2 * n + len(floors)],
            "carried": extra, "numbers": numbers, "results": ours[1]}


def test_tools_list_costs_less_than_the_reference(measured):
    ours_shown, ours_whole, theirs_shown, theirs_whole = measured["list"]
    assert ours_shown <= 0.9 * theirs_shown, (ours_shown, theirs_shown)
    assert ours_whole <= 1.5 * theirs_whole, (ours_whole, theirs_whole)


def test_successful_calls_cost_no_more_than_the_reference(measured):
    """Line numbers and digests shown, a model reads no more than the
    reference shows it in all; each call at most 1.3 times its
    counterpart, but a read of a few short lines: at most its counterpart
    and what a read must carry (its footer with the digest, and the numbers
    it shows): 64 bits take 4 o200k tokens at the very least, 7 to 16 as
    hex digits, and a one-line VERSION file is 6 tokens at the reference."""
    session = measured["session"]
    ours, theirs = measured["ours"], measured["theirs"]
    for i, ((name, args), _) in enumerate(session.successes):
        cap = 1.3 * theirs[i]
        if name in READS:
            cap = max(cap, theirs[i] + measured["carried"][i])
        assert ours[i] <= cap, (name, args, ours[i], theirs[i])
    good = range(len(session.successes))
    total, theirs_total = sum(ours[i] for i in good), sum(theirs[i] for i in good)
    numbers = measured["numbers"]
    # a number every tenth line at most (two tokens past 999): 2% at most
    assert 0 < numbers < 0.02 * total, numbers
    assert total <= theirs_total, (total, theirs_total)
    others = [i for i, ((name, _), _) in enumerate(session.successes) if name not in READS]
    assert sum(ours[i] for i in others) <= 0.6 * sum(theirs[i] for i in others)


def test_line_numbers_and_digests_are_still_shown(measured):
    """Each read shows the short digest, the first and last line shown and
    every tenth after its number and a tab (every hundredth in a read of
    over 1,000 lines; none in a read of under ten), and every other line as it is (an empty line left empty)."""
    session = measured["session"]
    for i, ((name, _), _) in enumerate(session.successes):
        if name != "read_file":
            continue
        envelope = measured["results"][i]["structuredContent"]
        text = _text(measured["results"][i])
        assert text.endswith(f"{envelope['sha256'][:16]}]") and envelope["sha256"] not in text
        rows = text.split("\n")[:-1]  # the footer last
        lines = [row.partition("\t")[2] for row in envelope["content"].split("\n")]
        assert len(rows) == len(lines), (len(rows), len(lines))
        kept = [k for k, line in enumerate(lines) if line]
        every = 10 if len(lines) <= 1000 else 100
        for k, (row, line) in enumerate(zip(rows, lines)):
            number = envelope["startLine"] + k
            if not line:
                assert row == "", row
            elif len(lines) >= every and (k in (kept[0], kept[-1]) or number % every == 0):
                assert row == f"{number}\t{line}", (row, number)
            else:
                assert row == line, (row, number)


def test_a_refusal_costs_its_sentence_hint_and_call_and_little_more(measured):
    first = len(measured["session"].successes)
    for i, result in enumerate(measured["results"][first:]):
        envelope = result["structuredContent"]
        text = _text(result)
        assert envelope["code"] in text and envelope["message"] in text, text
        assert envelope["hint"] in text, text
        assert text.count(envelope["message"]) == 1  # the sentence once
        if envelope.get("suggestedTool"):
            assert f"{envelope['suggestedTool']} {compact(envelope['suggestedArgs'])}" in text
        assert measured["ours"][first + i] <= measured["floors"][i] + 40, (text, envelope)


def _short(text: str) -> str:
    """``text`` with each full sha256 in its short form, as a model is shown it."""
    return re.sub(r"\b[0-9a-f]{64}\b", lambda m: m.group()[:16], text)


def test_every_refusal_of_the_catalogue_costs_its_sentence_hint_and_call_and_little_more(
        tmp_path: Path) -> None:
    """Every refusal the catalogue makes (every tool, every code but
    INTERNAL, which no case can make and is added here), as a model is
    shown it: its code, sentence once, hint and suggested call, in at most
    their tokens and 40 more."""
    envelopes: list[tuple[str, str, dict[str, Any]]] = []
    for k, case in enumerate(load_cases()):
        base = tmp_path / str(k)
        base.mkdir()
        envelope, toolbox = run_case(case, base)
        toolbox.close()
        envelopes.append((f"{case.tool}:{case.name}", case.tool,
                          json.loads(json.dumps(envelope))))
    envelopes.append(("internal", "read_file", internal().envelope()))
    codes = {envelope["code"] for _, _, envelope in envelopes}
    assert codes == {code.value for code in Code}, codes
    texts = [render(tool, envelope) for _, tool, envelope in envelopes]
    floors = [_short(_floor(envelope)) for _, _, envelope in envelopes]
    counts = tokens(texts + floors)
    n = len(texts)
    for k, ((name, _, envelope), text) in enumerate(zip(envelopes, texts)):
        message = _short(envelope["message"])
        assert text.startswith(f"{envelope['code']}: {message}"), (name, text)
        assert text.count(message) == 1, (name, text)
        assert _short(envelope["hint"]) in text, (name, text)
        if envelope.get("suggestedTool"):
            call = f"{envelope['suggestedTool']} {compact(envelope['suggestedArgs'])}"
            assert _short(call) in text, (name, text)
        assert counts[k] <= counts[n + k] + 40, (name, counts[k], counts[n + k], text)
