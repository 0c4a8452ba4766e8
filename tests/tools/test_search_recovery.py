"""Recovery: a grep or glob that finds nothing (or cannot run its
pattern) says what would match, with a verified call.  One case per theme;
each pins the exact serialized envelope (what the model reads) and then makes the
suggested call, which must find something."""

from __future__ import annotations

import json

import pytest

from corral.tools import Toolbox
from ..helpers import make_repository

TREE = {'.gitignore': 'dist/\n',
 'dist/bundle.ts': 'const config = 1;\n',
 'lib/core.ts': 'export const config = new Map();\nconst v = config.get(key);\n',
 'lib/ui/components/button.tsx': 'export function Button() {}\n',
 'lib/ui/view.tsx': '// TODO: render\nfoo|bar literal\n',
 'src/app.py': 'def main():\n    return foo or bar\n'}

CASES = [
    ('gnu_bre_alternation', 'grep', {'pattern': 'foo\\|bar', 'path': 'src'},
     {'diagnosis': 'bre',
 'filesIncluded': 1,
 'filesSearched': 1,
 'ignored': {'directories': 0, 'paths': 0},
 'limit': 200,
 'matches': [],
 'note': "No line matches 'foo\\\\|bar'. In GNU grep's basic syntax \\| is alternation and "
         '\\( \\) a group; here they are literal characters. The suggested pattern uses '
         'the syntax grep runs (RE2) and finds matches.',
 'ok': True,
 'outputMode': 'matches',
 'path': 'src',
 'pattern': 'foo\\|bar',
 'skipped': {'binary': 0, 'unreadable': 0},
 'suggestedArgs': {'path': 'src', 'pattern': 'foo|bar'},
 'suggestedTool': 'grep',
 'truncated': False}),
    ('double_escaped', 'grep', {'pattern': 'config\\\\.get\\\\(', 'path': 'lib'},
     {'code': 'INVALID_ARGUMENT',
 'details': {'field': 'pattern',
             'kind': 'regex',
             'message': 'the pattern is not a valid regular expression: missing )',
             'reason': 'missing )'},
 'hint': "Fix the regular expression (RE2 syntax, as ripgrep's), or pass regex: false to "
         'search for the text literally. With one backslash where two were written, it '
         'finds matches.',
 'message': 'the pattern is not a valid regular expression: missing )',
 'ok': False,
 'suggestedArgs': {'path': 'lib', 'pattern': 'config\\.get\\('},
 'suggestedTool': 'grep'}),
    ('code_pasted_as_regex', 'grep', {'pattern': 'config.get(key)'},
     {'diagnosis': 'literal',
 'filesIncluded': 5,
 'filesSearched': 5,
 'ignored': {'directories': 1, 'examples': ['dist'], 'paths': 0},
 'limit': 200,
 'matches': [],
 'note': "No line matches 'config.get(key)'. 1 directory not searched (dist: .gitignore or "
         '.git); pass includeIgnored: true to include them. Read as a regular expression '
         'the pattern matches nothing (characters such as ( ) . [ ] are operators there); '
         'as literal text (regex: false) it is found.',
 'ok': True,
 'outputMode': 'matches',
 'path': '.',
 'pattern': 'config.get(key)',
 'skipped': {'binary': 0, 'unreadable': 0},
 'suggestedArgs': {'pattern': 'config.get(key)', 'regex': False},
 'suggestedTool': 'grep',
 'truncated': False}),
    ('case', 'grep', {'pattern': 'todo', 'path': 'lib'},
     {'diagnosis': 'case',
 'filesIncluded': 3,
 'filesSearched': 3,
 'ignored': {'directories': 0, 'paths': 0},
 'limit': 200,
 'matches': [],
 'note': "No line matches 'todo'. Case-insensitively (caseInsensitive: true) the pattern "
         'finds matches.',
 'ok': True,
 'outputMode': 'matches',
 'path': 'lib',
 'pattern': 'todo',
 'skipped': {'binary': 0, 'unreadable': 0},
 'suggestedArgs': {'caseInsensitive': True, 'path': 'lib', 'pattern': 'todo'},
 'suggestedTool': 'grep',
 'truncated': False}),
    ('include_comma_list', 'grep', {'pattern': 'Button', 'include': '*.ts,*.tsx'},
     {'diagnosis': 'include_list',
 'filesIncluded': 0,
 'filesSearched': 0,
 'ignored': {'directories': 1, 'examples': ['dist'], 'paths': 0},
 'include': '*.ts,*.tsx',
 'limit': 200,
 'matches': [],
 'note': "No line matches 'Button'. 1 directory not searched (dist: .gitignore or .git); "
         "pass includeIgnored: true to include them. include '*.ts,*.tsx' matched no file. "
         'include is one glob, not a comma list; the suggested {a,b} form matches those '
         'files and finds matches.',
 'ok': True,
 'outputMode': 'matches',
 'path': '.',
 'pattern': 'Button',
 'skipped': {'binary': 0, 'unreadable': 0},
 'suggestedArgs': {'include': '{*.ts,*.tsx}', 'pattern': 'Button'},
 'suggestedTool': 'grep',
 'truncated': False}),
    ('include_matched_no_file', 'grep', {'pattern': 'Button', 'include': '*.rs'},
     {'diagnosis': 'include',
 'filesIncluded': 0,
 'filesSearched': 0,
 'ignored': {'directories': 1, 'examples': ['dist'], 'paths': 0},
 'include': '*.rs',
 'limit': 200,
 'matches': [],
 'note': "No line matches 'Button'. 1 directory not searched (dist: .gitignore or .git); "
         "pass includeIgnored: true to include them. include '*.rs' matched no file. "
         'Without include the pattern finds matches.',
 'ok': True,
 'outputMode': 'matches',
 'path': '.',
 'pattern': 'Button',
 'skipped': {'binary': 0, 'unreadable': 0},
 'suggestedArgs': {'pattern': 'Button'},
 'suggestedTool': 'grep',
 'truncated': False}),
    ('ignored_files', 'grep', {'pattern': 'const config = 1'},
     {'diagnosis': 'ignored',
 'filesIncluded': 5,
 'filesSearched': 5,
 'ignored': {'directories': 1, 'examples': ['dist'], 'paths': 0},
 'limit': 200,
 'matches': [],
 'note': "No line matches 'const config = 1'. 1 directory not searched (dist: .gitignore "
         'or .git); pass includeIgnored: true to include them. Files ignored by .gitignore '
         'were not searched; with includeIgnored: true the pattern finds matches.',
 'ok': True,
 'outputMode': 'matches',
 'path': '.',
 'pattern': 'const config = 1',
 'skipped': {'binary': 0, 'unreadable': 0},
 'suggestedArgs': {'includeIgnored': True, 'pattern': 'const config = 1'},
 'suggestedTool': 'grep',
 'truncated': False}),
    ('glob_repeats_path', 'glob', {'pattern': 'lib/**/*.ts', 'path': 'lib'},
     {'diagnosis': 'repeats_path',
 'ignored': {'directories': 0, 'paths': 0},
 'note': "No files match 'lib/**/*.ts' under lib. The pattern repeats 'path' (lib); "
         "patterns are matched below 'path', so the suggested pattern leaves it out and "
         'finds matches.',
 'ok': True,
 'path': 'lib',
 'paths': [],
 'pattern': 'lib/**/*.ts',
 'suggestedArgs': {'path': 'lib', 'pattern': '**/*.ts'},
 'suggestedTool': 'glob',
 'truncated': False}),
    ('glob_anchored_too_high', 'glob', {'pattern': 'components/*.tsx'},
     {'diagnosis': 'anchored',
 'ignored': {'directories': 1, 'examples': ['dist'], 'paths': 0},
 'note': "No files match 'components/*.tsx' under the root. 1 directory not searched (dist: "
         '.gitignore or .git); pass includeIgnored: true to include them. A pattern with '
         "'/' is matched from 'path' down; at any depth (**/ in front) it finds matches.",
 'ok': True,
 'path': '.',
 'paths': [],
 'pattern': 'components/*.tsx',
 'suggestedArgs': {'pattern': '**/components/*.tsx'},
 'suggestedTool': 'glob',
 'truncated': False}),
    ('glob_star_one_level', 'glob', {'pattern': 'lib/*.tsx'},
     {'diagnosis': 'deeper',
 'ignored': {'directories': 1, 'examples': ['dist'], 'paths': 0},
 'note': "No files match 'lib/*.tsx' under the root. 1 directory not searched (dist: .gitignore "
         "or .git); pass includeIgnored: true to include them. '*' matches one directory "
         'level; with /**/ the pattern also finds files deeper down.',
 'ok': True,
 'path': '.',
 'paths': [],
 'pattern': 'lib/*.tsx',
 'suggestedArgs': {'pattern': 'lib/**/*.tsx'},
 'suggestedTool': 'glob',
 'truncated': False}),
    ('glob_ignored', 'glob', {'pattern': 'dist/*.ts'},
     {'diagnosis': 'ignored',
 'ignored': {'directories': 1, 'examples': ['dist'], 'paths': 0},
 'note': "No files match 'dist/*.ts' under the root. 1 directory not searched (dist: .gitignore "
         'or .git); pass includeIgnored: true to include them. Paths ignored by .gitignore '
         'were left out; with includeIgnored: true the pattern finds them.',
 'ok': True,
 'path': '.',
 'paths': [],
 'pattern': 'dist/*.ts',
 'suggestedArgs': {'includeIgnored': True, 'pattern': 'dist/*.ts'},
 'suggestedTool': 'glob',
 'truncated': False}),
    ('gnu_word_boundaries_translated', 'grep', {'pattern': '\\<config\\>', 'path': 'lib/core.ts'},
     {'filesIncluded': 1,
 'filesSearched': 1,
 'limit': 200,
 'matches': [{'line': 1, 'path': 'lib/core.ts', 'text': 'export const config = new Map();'},
             {'line': 2, 'path': 'lib/core.ts', 'text': 'const v = config.get(key);'}],
 'note': "The pattern was read as '\\\\bconfig\\\\b' (GNU \\< (start of word) as \\b; GNU "
         '\\> (end of word) as \\b).',
 'ok': True,
 'outputMode': 'matches',
 'path': 'lib/core.ts',
 'pattern': '\\<config\\>',
 'skipped': {'binary': 0, 'unreadable': 0},
 'translated': {'notes': ['GNU \\< (start of word) as \\b', 'GNU \\> (end of word) as \\b'],
                'pattern': '\\bconfig\\b'},
 'truncated': False}),
    ('pcre_named_group', 'grep', {'pattern': '(?<fn>def) main', 'path': 'src'},
     {'filesIncluded': 1,
 'filesSearched': 1,
 'ignored': {'directories': 0, 'paths': 0},
 'limit': 200,
 'matches': [{'line': 1, 'path': 'src/app.py', 'text': 'def main():'}],
 'ok': True,
 'outputMode': 'matches',
 'path': 'src',
 'pattern': '(?<fn>def) main',
 'skipped': {'binary': 0, 'unreadable': 0},
 'truncated': False}),
    ('posix_class', 'grep', {'pattern': '[[:upper:]]utton', 'path': 'lib'},
     {'filesIncluded': 3,
 'filesSearched': 3,
 'ignored': {'directories': 0, 'paths': 0},
 'limit': 200,
 'matches': [{'line': 1,
              'path': 'lib/ui/components/button.tsx',
              'text': 'export function Button() {}'}],
 'ok': True,
 'outputMode': 'matches',
 'path': 'lib',
 'pattern': '[[:upper:]]utton',
 'skipped': {'binary': 0, 'unreadable': 0},
 'truncated': False}),
    ('glob_names_a_directory', 'glob', {'pattern': 'ui'},
     {'diagnosis': 'directory',
 'ignored': {'directories': 1, 'examples': ['dist'], 'paths': 0},
 'note': "No files match 'ui' under the root. 1 directory not searched (dist: .gitignore or .git); "
         "pass includeIgnored: true to include them. 'ui' names a directory, and glob lists "
         "files (or, ending in '/', directories): the suggested pattern lists the files in it.",
 'ok': True,
 'path': '.',
 'paths': [],
 'pattern': 'ui',
 'suggestedArgs': {'pattern': '**/ui/**'},
 'suggestedTool': 'glob',
 'truncated': False}),
    ('glob_comma_list', 'glob', {'pattern': '*.ts, *.tsx', 'path': 'lib'},
     {'diagnosis': 'comma_list',
 'ignored': {'directories': 0, 'paths': 0},
 'note': "No files match '*.ts, *.tsx' under lib. A glob is one pattern, not a comma list; the "
         'suggested {a,b} form (no spaces around the commas) matches each alternative and '
         'finds matches.',
 'ok': True,
 'path': 'lib',
 'paths': [],
 'pattern': '*.ts, *.tsx',
 'suggestedArgs': {'path': 'lib', 'pattern': '{*.ts,*.tsx}'},
 'suggestedTool': 'glob',
 'truncated': False}),
    ('glob_spaces_in_braces', 'glob', {'pattern': '*.{ts, tsx}', 'path': 'lib'},
     {'diagnosis': 'comma_list',
 'ignored': {'directories': 0, 'paths': 0},
 'note': 'Spaces around the commas of a {...} group belong to its alternatives (they match '
         "names with those spaces); without them the pattern is '*.{ts,tsx}'. The suggested "
         'call (that pattern) finds more.',
 'ok': True,
 'path': 'lib',
 'paths': ['lib/core.ts'],
 'pattern': '*.{ts, tsx}',
 'suggestedArgs': {'path': 'lib', 'pattern': '*.{ts,tsx}'},
 'suggestedTool': 'glob',
 'truncated': False}),
    ('inline_flag_mid_pattern', 'grep', {'pattern': 'export(?i) FUNCTION', 'path': 'lib'},
     {'filesIncluded': 3,
 'filesSearched': 3,
 'ignored': {'directories': 0, 'paths': 0},
 'limit': 200,
 'matches': [{'line': 1,
              'path': 'lib/ui/components/button.tsx',
              'text': 'export function Button() {}'}],
 'ok': True,
 'outputMode': 'matches',
 'path': 'lib',
 'pattern': 'export(?i) FUNCTION',
 'skipped': {'binary': 0, 'unreadable': 0},
 'truncated': False}),
]


@pytest.fixture
def toolbox(tmp_path, make_root):
    root = make_repository(tmp_path) / "work"  # a folder of a repository whose top is above
    for rel, text in TREE.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    return Toolbox(make_root(root))


@pytest.mark.parametrize("name,tool,args,envelope", CASES, ids=[c[0] for c in CASES])
def test_recovery_case(toolbox, name, tool, args, envelope):
    wire = json.loads(json.dumps(toolbox.call(tool, args)))
    assert wire == envelope
    if "suggestedTool" in wire:
        follow = toolbox.call(wire["suggestedTool"], wire["suggestedArgs"])
        assert follow["ok"] is True, follow
        assert follow["paths" if wire["suggestedTool"] == "glob" else "matches"], follow


def test_every_theme_offers_a_verified_call():
    offered = [c[0] for c in CASES if "suggestedTool" in c[3]]
    assert len(offered) >= 11, offered
