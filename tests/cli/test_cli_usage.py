"""The ``corral`` command's contract for mistakes: exit 2 with a message on
stderr and the subcommand's own usage, never a traceback; a reader that goes
away (``corral doctor | head``) ends the command quietly with 141."""

from __future__ import annotations

import contextlib
import io
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from corral.cli import EXIT_PIPE, main

COMMAND = [sys.executable, "-m", "corral"]


def run(*args: str, env: dict[str, str] | None = None, **kwargs
        ) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*COMMAND, *args], capture_output=True, text=True, timeout=120,
                          stdin=subprocess.DEVNULL, env={**os.environ, **(env or {})}, **kwargs)


def cli(*args: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            status = main(list(args))
        except SystemExit as exc:
            status = int(exc.code or 0)
    return status, out.getvalue(), err.getvalue()


@pytest.fixture
def root(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    (root / "src").mkdir(parents=True)
    (root / "src" / "util.py").write_text("def util():\n    return 1\n")
    (root / "big.txt").write_text("".join(f"line {i} " + "x" * 90 + "\n" for i in range(3000)))
    return root


# -- CORRAL_BACKEND ------------------------------------------------------------

@pytest.mark.parametrize("argv", [
    ["call", "{root}", "list_directory"], ["doctor", "{root}"], ["doctor", "{root}", "--json"],
    ["serve", "{root}"],
])
def test_a_bad_backend_is_a_usage_error_in_every_command(root, argv):
    done = run(*[a.replace("{root}", str(root)) for a in argv], env={"CORRAL_BACKEND": "bogus"})
    assert done.returncode == 2, done.stdout + done.stderr
    assert "Traceback" not in done.stderr
    assert "CORRAL_BACKEND='bogus' is not a backend" in done.stderr + done.stdout


def test_tools_needs_no_backend(root):
    done = run("tools", env={"CORRAL_BACKEND": "bogus"})
    assert done.returncode == 0 and "Traceback" not in done.stderr
    assert json.loads(done.stdout)


def test_native_forced_but_not_built_is_a_usage_error(root):
    code = ("import sys; sys.modules['corral._native'] = None\n"
            "from corral.cli import main\n"
            f"sys.exit(main(['call', {str(root)!r}, 'list_directory']))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=60, env={**os.environ, "CORRAL_BACKEND": "native"})
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert "cannot open root" in done.stderr and "native" in done.stderr


# -- closed pipes ------------------------------------------------------------------

@pytest.mark.parametrize("argv", [
    ["doctor", "{root}"], ["call", "{root}", "read_file", '{"path": "big.txt"}'],
    ["tools", "--format", "openai"],
])
def test_a_reader_that_left_ends_the_command_quietly(root, argv):
    read_end, write_end = os.pipe()
    os.close(read_end)  # the reader is gone before the first byte: every write fails
    try:
        done = subprocess.run([*COMMAND, *[a.replace("{root}", str(root)) for a in argv]],
                              stdout=write_end, stderr=subprocess.PIPE, text=True, timeout=120,
                              stdin=subprocess.DEVNULL)
    finally:
        os.close(write_end)
    assert done.stderr == ""  # no traceback, no "Exception ignored" at exit
    assert done.returncode == EXIT_PIPE


def test_head_of_a_long_answer(root):
    # as `corral call ... | head -c 100` does: read a little, then close
    process = subprocess.Popen([*COMMAND, "call", str(root), "read_file", '{"path": "big.txt"}'],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert process.stdout.read(100).startswith(b'{"ok":true')
    process.stdout.close()
    stderr = process.stderr.read().decode()
    assert process.wait(timeout=120) in (0, EXIT_PIPE)  # 0 if it all fitted in the pipe
    assert stderr == ""


# -- unknown tools, extra arguments ------------------------------------------------

def test_an_unknown_tool_is_a_usage_error_with_a_did_you_mean(root):
    status, out, err = cli("call", str(root), "red_file", '{"path": "x"}')
    assert status == 2 and out == ""
    assert "there is no tool called 'red_file'; did you mean read_file?" in err
    assert "write_file" in err  # the list of tools


def test_an_unknown_tool_without_a_close_name_lists_the_tools(root):
    status, _, err = cli("call", str(root), "frobnicate")
    assert status == 2 and "did you mean" not in err and "read_file" in err


@pytest.mark.parametrize("argv,usage", [
    (["doctor", ".", "extra"], "usage: corral doctor"),
    (["tools", "surplus"], "usage: corral tools"),
    (["call", ".", "read_file", "{}", "more"], "usage: corral call"),
])
def test_extra_arguments_get_the_subcommands_usage(argv, usage):
    status, out, err = cli(*argv)
    assert status == 2 and out == ""
    assert err.startswith(usage)
    assert "unrecognized arguments" in err


def test_a_missing_argument_gets_the_subcommands_usage():
    status, _, err = cli("call")
    assert status == 2 and err.startswith("usage: corral call")


# -- corral tools ------------------------------------------------------------------

def test_tools_opens_no_root(monkeypatch):
    import tempfile

    from corral.contained import Root

    def refuse(*args, **kwargs):
        raise AssertionError("corral tools opened a directory")

    monkeypatch.setattr(Root, "__init__", refuse)
    monkeypatch.setattr(tempfile, "TemporaryDirectory", refuse)
    status, out, _ = cli("tools", "--format", "anthropic")
    assert status == 0 and [t["name"] for t in json.loads(out)]


def test_tools_strict_openai():
    status, out, _ = cli("tools", "--format", "openai", "--strict")
    assert status == 0
    for item in json.loads(out):
        function = item["function"]
        assert function["strict"] is True
        parameters = function["parameters"]
        assert parameters["additionalProperties"] is False
        assert parameters["required"] == list(parameters["properties"])


def test_strict_is_for_openai_only():
    status, out, err = cli("tools", "--format", "mcp", "--strict")
    assert status == 2 and out == "" and (
        "--strict applies to --format openai and openai-responses only" in err)


# -- corral doctor -----------------------------------------------------------------

def test_doctor_says_why_a_build_has_no_native_module():
    from corral._doctor import doctor_text

    report = {"corral": "0", "python": "3", "root": {"path": "/r", "follow_symlinks": True},
              "backends": {"platform": "linux", "backend": "os", "forced": None,
                           "available": ["os"], "native": {"built": False,
                                                            "reason": "not built"},
                           "fast_path": {"openat2": True, "openat2_reason": "probed"}},
              "native_build": "the C compile failed (CompileError: no cc)", "mcp": None,
              "search": {"regex": "re", "re2": False, "re2Version": None,
                         "literalScanner": "python", "note": "RE2 is not installed"}}
    text = doctor_text(report)
    assert "native module: not in use: not built" in text
    assert "  at build time: the C compile failed (CompileError: no cc)" in text
    assert "grep regex engine: Python re with guards (RE2 is not installed)" in text
    assert "grep literal scanner: python" in text


def test_doctor_names_the_regex_engine(root):
    from corral.tools._search.engine import engine_report

    status, out, _ = cli("doctor", str(root), "--json")
    assert status == 0 and json.loads(out)["search"] == engine_report()
    status, text, _ = cli("doctor", str(root))
    assert ("grep regex engine: RE2" in text) is engine_report()["re2"]


# -- policy flags ----------------------------------------------------------------------

def _envelope(*args: str) -> tuple[int, dict]:
    status, out, err = cli(*args)
    assert out, err
    return status, json.loads(out)


def test_the_default_policy_and_the_flags_that_lift_or_extend_it(root):
    (root / ".git" / "hooks").mkdir(parents=True)
    (root / ".env").write_text("TOKEN=1\n")
    (root / "docs").mkdir()
    hook = '{"path": ".git/hooks/pre-commit", "content": "#!/bin/sh\\n"}'

    status, refused = _envelope("call", str(root), "write_file", hook)
    assert status == 1 and refused["details"]["kind"] == "protected"
    assert not (root / ".git" / "hooks" / "pre-commit").exists()
    status, _ = _envelope("call", str(root), "--allow-git-writes", "write_file", hook)
    assert status == 0 and (root / ".git" / "hooks" / "pre-commit").exists()

    status, secret = _envelope("call", str(root), "read_file", '{"path": ".env"}')
    assert status == 1 and secret["code"] == "DENIED"
    status, read = _envelope("call", str(root), "--no-default-policy", "read_file",
                             '{"path": ".env"}')
    assert status == 0 and "TOKEN=1" in read["content"]

    doc = '{"path": "docs/a.md", "content": "x"}'
    status, protected = _envelope("call", str(root), "--protect", "docs/**", "write_file", doc)
    assert status == 1 and protected["details"]["kind"] == "protected"
    status, denied = _envelope("call", str(root), "--deny", "src/**", "read_file",
                               '{"path": "src/util.py"}')
    assert status == 1 and denied["code"] == "DENIED"


def test_doctor_shows_the_effective_policy(root):
    status, out, _ = cli("doctor", str(root))
    assert status == 0
    assert "policy:\n  git: .git/ is read-only (lift: --allow-git-writes)" in out
    status, out, _ = cli("doctor", str(root), "--allow-git-writes", "--deny", "build/**")
    assert "  git: writes under .git/ allowed" in out
    assert "  denied (not touched at all): build/**" in out
    status, out, _ = cli("doctor", str(root), "--json", "--protect", "docs/**")
    assert any("docs/**" in line for line in json.loads(out)["root"]["policy"])


def test_a_policy_pattern_that_can_never_apply_is_a_usage_error(root):
    """--deny ./ (the root itself) or an absolute path outside the root is
    refused up front, never a rule that silently matches nothing."""
    status, out, err = cli("doctor", str(root), "--deny", "./")
    assert status == 2 and not out and "names the root itself" in err
    status, out, err = cli("call", str(root), "--deny", "/usr/lib/x", "read_file",
                           '{"path": "a.txt"}')
    assert status == 2 and "outside the root" in err
    (root / "private").mkdir()
    (root / "private" / "s.txt").write_text("S\n")
    status, denied = _envelope("call", str(root), "--deny", f"{root}/private", "read_file",
                               '{"path": "private/s.txt"}')
    assert status == 1 and denied["details"]["kind"] == "deny_rule"
