"""An independent red-team pass: a program a protected command runs, read
for what it loads by the interpreter that runs it, not by its name.

A hook's ``./scripts/check.py`` (a Python script run by its ``#!`` line,
the usual shape of an executable hook script) protected the script, but
not the ``scripts/helper.py`` it imports (read only when the command
says ``python3``); ``./scripts/check`` whose ``#!`` is ``/bin/sh`` (or
with no ``#!`` line, which the shell runs itself, or ``sh scripts/check``)
was not read for what it sources; one whose ``#!`` is ``node`` not for
what it requires.  Each of those was the model's to write and ran at the
next commit (tried end to end with git).  Now a program a protected
command names is read by its ``#!`` line (``env`` and its options past),
else by its name, else, not binary, as a shell script.  On every backend
config.
"""

from __future__ import annotations


import pytest

from corral.tools import Toolbox

from .helpers.hooks import refused_protected, repository_with_hook


CASES = [
    ("./scripts/check.py", "scripts/check.py", "#!/usr/bin/env python3\nimport helper\n",
     ["scripts/helper.py", "scripts/json.py"]),
    ("scripts/check.py", "scripts/check.py", "#!/usr/bin/python3 -u\nimport helper\n",
     ["scripts/helper.py"]),
    ("./scripts/check", "scripts/check", "#!/usr/bin/env -S python3 -u\nimport helper\n",
     ["scripts/helper.py"]),
    ("./scripts/check", "scripts/check", "#!/bin/sh\n. scripts/lib.sh\n", ["scripts/lib.sh"]),
    ("./scripts/check", "scripts/check", "set -e\n. scripts/lib.sh\n", ["scripts/lib.sh"]),
    ("sh scripts/check", "scripts/check", ". scripts/lib.sh\n", ["scripts/lib.sh"]),
    ("./scripts/check", "scripts/check", "#!/usr/bin/env node\nrequire('./rules');\n",
     ["scripts/rules.js"]),
]


@pytest.mark.parametrize("hook,script,body,loaded", CASES)
def test_a_hook_s_program_is_read_by_what_runs_it(tmp_path, make_root, hook, script, body,
                                                  loaded):
    base = tmp_path / "repo"
    repository_with_hook(base, hook)
    (base / "scripts").mkdir()
    (base / script).write_text(body)
    (base / script).chmod(0o755)
    box = Toolbox(make_root(str(base)))
    for path in loaded:
        answer = box.call("write_file", {"path": path, "content": "exit 0\n", "overwrite": True})
        assert refused_protected(answer), (hook, path, answer)
        assert not (base / path).exists()
    assert box.call("write_file", {"path": "scripts/notes.md", "content": "x\n"})["ok"]


def test_a_binary_program_is_not_read_as_a_script(tmp_path, make_root):
    base = tmp_path / "repo"
    repository_with_hook(base, "./tools/fmt")
    (base / "tools").mkdir()
    (base / "tools" / "fmt").write_bytes(b"\x7fELF\x02\x01\x01\x00\x00\n. scripts/lib.sh\n")
    box = Toolbox(make_root(str(base)))
    assert box.call("write_file", {"path": "scripts/lib.sh", "content": "x\n"})["ok"]
