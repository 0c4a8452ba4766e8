"""An independent red-team pass: the words of the commands git runs that
the reading of a config program (or of a hook script) passed over.

* a command substitution (``$(./tick.sh)``, backquotes) runs a command of
  its own: its words were skipped as an expansion;
* an option's value that is a command (``ssh -o ProxyCommand=./proxy.sh``):
  the word was taken whole (``ProxyCommand=./proxy.sh``), never its value;
* a hook script's lines (``./scripts/lint.sh`` in ``.git/hooks/pre-commit``,
  a ``core.hooksPath`` directory's ``pre-push`` running ``sh tools/push.sh``):
  git runs the hook from the top of the work tree, the hook runs the script.

Each was protected nowhere before the fix: the model's script ran at the
next ``git status``, ``git fetch`` or ``git commit``.  On every backend
config, alone and as one turn's calls sent together.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from corral.tools import Toolbox

PAYLOAD = "#!/bin/sh\ntouch /tmp/owned\n"


def _repository(base: Path, config: str) -> None:
    for sub in ("hooks", "objects", "refs"):
        (base / ".git" / sub).mkdir(parents=True, exist_ok=True)
    (base / ".git" / "HEAD").write_text("ref: refs/heads/main\n")
    (base / ".git" / "config").write_text(config)


def _protected(answer: dict) -> bool:
    return answer["ok"] is False and answer["code"] == "DENIED" \
        and answer["details"].get("kind") == "protected"


CONFIGS = [
    ("[core]\n\tfsmonitor = $(./tick.sh)\n", "tick.sh"),
    ("[core]\n\tfsmonitor = `./tools/tick.sh` --now\n", "tools/tick.sh"),
    ("[core]\n\tfsmonitor = echo \"$(sh bin/when.sh)\"\n", "bin/when.sh"),
    ("[core]\n\tsshCommand = ssh -i keys/id -o ProxyCommand=./proxy.sh\n", "proxy.sh"),
]


@pytest.mark.parametrize(("config", "written"), CONFIGS,
                         ids=["dollar-paren", "backquotes", "quoted-substitution", "option-value"])
def test_a_command_inside_a_config_program_is_protected(tmp_path, make_root, config, written):
    _repository(tmp_path, config)
    box = Toolbox(make_root(str(tmp_path)))
    answer = box.call("write_file", {"path": written, "content": PAYLOAD})
    assert _protected(answer), answer
    assert not (tmp_path / written).exists()


def test_what_a_hook_script_runs_is_protected(tmp_path, make_root):
    _repository(tmp_path, "[core]\n\thooksPath = .hooks-shared\n")
    (tmp_path / ".git" / "hooks" / "pre-commit").write_text(
        "#!/bin/sh\n# run the linters\nset -e\n./scripts/lint.sh --staged\n")
    (tmp_path / ".hooks-shared").mkdir()
    (tmp_path / ".hooks-shared" / "pre-push").write_text("#!/bin/sh\nsh tools/push.sh \"$@\"\n")
    (tmp_path / "scripts").mkdir()
    (tmp_path / "scripts" / "lint.sh").write_text("#!/bin/sh\nruff check .\n")
    (tmp_path / "scripts" / "other.sh").write_text("#!/bin/sh\necho other\n")
    box = Toolbox(make_root(str(tmp_path)))

    async def turn() -> list[dict]:
        return list(await asyncio.gather(
            box.acall("edit_file", {"path": "scripts/lint.sh", "oldText": "ruff check .",
                                    "newText": "touch /tmp/owned"}, timeout=10),
            box.acall("write_file", {"path": "scripts/lint.sh", "content": PAYLOAD,
                                     "overwrite": True}, timeout=10),
            box.acall("move_file", {"source": "scripts/other.sh",
                                    "destination": "tools/push.sh"}, timeout=10),
            box.acall("write_file", {"path": "tools/push.sh", "content": PAYLOAD},
                      timeout=10)))

    answers = asyncio.run(turn())
    assert all(_protected(answer) for answer in answers), answers
    assert (tmp_path / "scripts" / "lint.sh").read_text() == "#!/bin/sh\nruff check .\n"
    assert not (tmp_path / "tools").exists()
    # a comment's words name nothing: "linters" is no program
    assert box.call("write_file", {"path": "linters", "content": "x\n"})["ok"] is True
