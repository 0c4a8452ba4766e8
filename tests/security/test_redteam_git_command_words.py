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


HOOK_MANAGERS = {
    ".pre-commit-config.yaml": (
        "repos:\n"
        "  - repo: local\n"
        "    hooks:\n"
        "      - id: check\n"
        "        name: check\n"
        "        entry: ./scripts/check.sh\n"
        "        language: script\n"
        "      - id: lint\n"
        "        entry: \"python3 -m tools.lint --fix\"\n"
        "        language: system\n"),
    "lefthook.yml": (
        "pre-commit:\n"
        "  commands:\n"
        "    lint:\n"
        "      run: ./scripts/lefty.sh {staged_files}\n"),
    ".husky/pre-commit": "npx lint-staged\nsh scripts/husky.sh\n",
}
MANAGED = ["scripts/check.sh", "tools/lint.py", "tools/__init__.py", "scripts/lefty.sh",
           "scripts/husky.sh"]


def test_what_a_hook_manager_runs_is_protected(tmp_path, make_root):
    """pre-commit (a local hook's ``entry``), lefthook (``run``) and husky
    (its hook scripts) run these at the next ``git commit``: their configs
    were protected, the scripts they name were not."""
    _repository(tmp_path, "[core]\n\thooksPath = .husky/_\n")
    for name, text in HOOK_MANAGERS.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    box = Toolbox(make_root(str(tmp_path)))

    async def turn() -> list[dict]:
        return list(await asyncio.gather(*(
            box.acall("write_file", {"path": path, "content": PAYLOAD}, timeout=10)
            for path in MANAGED)))

    answers = asyncio.run(turn())
    assert all(_protected(answer) for answer in answers), answers
    assert not (tmp_path / "scripts").exists() and not (tmp_path / "tools").exists()
    # what runs from PATH (npx, lint-staged) and the managers' words are left alone
    assert box.call("write_file", {"path": "check", "content": "x\n"})["ok"] is True


def test_a_directory_a_hooks_command_works_on_stays_the_users(tmp_path, make_root):
    """``ruff check src/`` in a hook, ``mypy src/`` as a pre-commit entry:
    the program reads the directory, it runs nothing there."""
    _repository(tmp_path, "[core]\n")
    (tmp_path / ".git" / "hooks" / "pre-commit").write_text(
        "#!/bin/sh\nruff check src/ tests/\n./scripts/lint.sh src/\n")
    (tmp_path / ".pre-commit-config.yaml").write_text(
        "repos:\n  - repo: local\n    hooks:\n      - id: mypy\n        entry: mypy src/\n")
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "a.py").write_text("a = 1\n")
    box = Toolbox(make_root(str(tmp_path)))
    for path in ("src/a.py", "tests/test_a.py"):
        answer = box.call("write_file", {"path": path, "content": "a = 2\n", "overwrite": True})
        assert answer["ok"] is True, answer
    assert _protected(box.call("write_file", {"path": "scripts/lint.sh", "content": PAYLOAD}))
