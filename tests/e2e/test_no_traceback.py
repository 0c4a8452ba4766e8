"""No traceback reaches a person or a model: every ``corral`` subcommand,
and the adapter that needs no framework, given malformed, deeply nested
(3,000 levels), oversized and mistyped input, answers with one line on
stderr and a documented exit status (2: usage), or with a typed refusal
(exit 1, the envelope on stdout).  Numbers of any size are checked before
they reach C (``read_file`` with an ``offset`` of 1e308 is
``INVALID_ARGUMENT``, never ``INTERNAL``).

The framework adapters get the same battery in
tests/integrations/test_adapter_input.py (their frameworks live in the
integrations venv).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from corral.integrations import anthropic_tool_results
from corral.tools import Toolbox

from .helpers import RawClient

CORRAL = [sys.executable, "-m", "corral"]
DEEP_ARRAY = "[" * 3000 + "]" * 3000
DEEP_OBJECT = '{"a":' * 3000 + "1" + "}" * 3000
HUGE_NUMBERS = ["1e308", "-1e308", "10" + "0" * 40, "-" + "9" * 60, "1e999"]


@pytest.fixture
def root(tmp_path: Path) -> Path:
    project = tmp_path / "project"
    project.mkdir()
    (project / "a.txt").write_text("".join(f"line {i}\n" for i in range(1, 24)))
    return project


def run(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*CORRAL, *args], capture_output=True, text=True, timeout=120,
                          stdin=subprocess.DEVNULL, env={**os.environ, **(env or {})})


def one_line_usage_error(done: subprocess.CompletedProcess[str], *words: str) -> str:
    """Exit 2, nothing on stdout, no traceback; the message's last line
    (argparse puts the usage above it) names ``words``."""
    assert done.returncode == 2, (done.returncode, done.stdout, done.stderr)
    assert done.stdout == ""
    assert "Traceback" not in done.stderr and "File \"" not in done.stderr, done.stderr
    message = done.stderr.strip().splitlines()[-1]
    assert message.startswith("corral"), done.stderr
    for word in words:
        assert word in message, (word, message)
    return message


def refusal(done: subprocess.CompletedProcess[str], code: str) -> dict:
    assert "Traceback" not in done.stderr, done.stderr
    assert done.returncode == 1, (done.returncode, done.stdout, done.stderr)
    envelope = json.loads(done.stdout)
    assert envelope["ok"] is False and envelope["code"] == code, envelope
    return envelope


# -- corral call ------------------------------------------------------------------

@pytest.mark.parametrize("text, words", [
    ("{", ["not valid JSON"]),
    ("", ["not valid JSON"]),
    ("\udcff", ["not valid JSON"]),
    (DEEP_ARRAY, ["nested too deeply"]),
    (DEEP_OBJECT, ["nested too deeply"]),
    ('{"path": ' + DEEP_ARRAY + "}", ["nested too deeply"]),
])
def test_call_with_malformed_or_deep_json_is_a_one_line_usage_error(root, text, words):
    one_line_usage_error(run("call", str(root), "read_file", text), *words)


@pytest.mark.parametrize("arguments, field", [
    ('{"path": "a.txt", "offset": %s}', "offset"),
    ('{"path": "a.txt", "limit": %s}', "limit"),
    ('{"pattern": "x", "context": %s}', "context"),
])
@pytest.mark.parametrize("number", HUGE_NUMBERS)
def test_numbers_of_any_size_are_typed_refusals(root, arguments, field, number):
    tool = "grep" if "pattern" in arguments else "read_file"
    envelope = refusal(run("call", str(root), tool, arguments % number), "INVALID_ARGUMENT")
    assert envelope["details"]["field"] == field


@pytest.mark.parametrize("tool, arguments", [
    ("read_file", [1, 2]),
    ("read_file", "a.txt"),
    ("read_file", {"path": 5}),
    ("read_file", {"path": ["a.txt"]}),
    ("read_file", {"path": "a.txt", "offset": True}),
    ("read_file", {"path": "a.txt", "offset": "first"}),
    ("read_file", {"path": "a.txt", "limit": {"n": 3}}),
    ("read_file", {"path": "x" * 100_000}),  # (one argv word holds 128 KiB at most)
    ("read_file", {"path": "a.txt", "surplus": 1}),
    ("write_file", {"path": "b.txt", "content": 7}),
    ("edit_file", {"path": "a.txt", "edits": [[1]]}),
    ("grep", {"pattern": "(" * 5000}),
    ("read_files", {"paths": [{"a": 1}] * 3}),
    ("glob", {"pattern": None}),
])
def test_mistyped_and_oversized_arguments_are_typed_refusals(root, tool, arguments):
    done = run("call", str(root), tool, json.dumps(arguments))
    envelope = refusal(done, "INVALID_ARGUMENT")
    assert envelope["hint"]


def test_a_quoted_number_is_taken_as_the_number(root):
    done = run("call", str(root), "read_file", '{"path": "a.txt", "limit": "3"}')
    assert done.returncode == 0, done.stdout + done.stderr
    envelope = json.loads(done.stdout)
    assert envelope["endLine"] == 3 and envelope["totalLines"] == 23


def test_call_without_root_says_root_is_missing(root):
    message = one_line_usage_error(run("call", "read_file", '{"path": "a.txt"}'),
                                   "ROOT is missing")
    assert "corral call . read_file" in message


@pytest.mark.parametrize("argv, words", [
    (["call", "{root}", "no_such_tool"], ["no tool called"]),
    (["call", "{root}"], []),
    (["call", "/nonexistent/dir", "read_file"], ["cannot open root"]),
    (["serve", "/nonexistent/dir"], ["cannot open root"]),
    (["serve", "{root}", "--deny", "/etc"], ["'/etc'", "outside the root"]),
    (["call", "{root}", "--protect", "/usr/lib", "read_file"], ["'/usr/lib'"]),
    (["serve", "{root}", "--deny", "./"], ["names the root itself"]),
    (["serve", "{root}", "--workers", "0"], ["--workers"]),
    (["serve", "{root}", "--workers", "1" + "0" * 40], ["--workers"]),
    (["serve", "{root}", "--workers", "many"], ["--workers"]),
    (["serve", "{root}", "--max-line-bytes", "1e308"], ["--max-line-bytes"]),
    (["serve", "{root}", "--max-line-bytes", "9" * 50], ["--max-line-bytes"]),
    (["tools", "--format", "xml"], ["--format"]),
    (["tools", "--format", "anthropic", "--strict"], ["--strict"]),
    (["doctor", "{root}", "--deny", "a/../../b"], ["'..'"]),
    (["frobnicate"], []),
    ([], []),
    (["serve"], []),
])
def test_every_subcommand_mistake_is_one_line(root, argv, words):
    one_line_usage_error(run(*[a.replace("{root}", str(root)) for a in argv]), *words)


def test_a_bad_backend_is_one_line_in_every_subcommand(root):
    bad = {"CORRAL_BACKEND": "\udcff" * 3}
    for argv in (["call", str(root), "read_file"], ["serve", str(root)]):
        one_line_usage_error(run(*argv, env=bad), "CORRAL_BACKEND")
    done = run("doctor", str(root), env=bad)  # the doctor reports it, as its job is
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert "CORRAL_BACKEND" in done.stdout


def test_doctor_of_a_missing_root_is_a_usage_error(tmp_path):
    done = run("doctor", str(tmp_path / "missing"))
    assert done.returncode == 2 and "Traceback" not in done.stderr + done.stdout


def test_tools_in_every_format_and_the_responses_shape(root):
    for fmt in ("mcp", "openai", "openai-responses", "anthropic"):
        done = run("tools", "--format", fmt)
        assert done.returncode == 0 and json.loads(done.stdout), done.stderr
    done = run("tools", "--format", "openai-responses", "--strict")
    assert done.returncode == 0, done.stderr
    for tool in json.loads(done.stdout):
        # the Responses API's flat function tool: no nested "function" object
        assert set(tool) == {"type", "name", "description", "parameters", "strict"}, tool
        assert tool["type"] == "function" and tool["strict"] is True
        assert tool["parameters"]["additionalProperties"] is False


# -- corral serve -------------------------------------------------------------------

def test_serve_answers_deep_and_huge_input_and_goes_on(root):
    raw = RawClient([*CORRAL, "serve", str(root)])
    raw.initialize()
    raw.send_bytes(DEEP_ARRAY.encode() + b"\n")
    assert raw.reply()["error"]["code"] == -32700
    raw.send_bytes(('{"jsonrpc": "2.0", "id": 5, "method": "tools/call", "params": '
                    '{"name": "read_file", "arguments": {"path": ' + DEEP_OBJECT
                    + "}}}\n").encode())
    assert raw.reply()["error"]["code"] == -32700
    for number in HUGE_NUMBERS:
        raw.send_bytes(('{"jsonrpc": "2.0", "id": 6, "method": "tools/call", "params": '
                        '{"name": "read_file", "arguments": {"path": "a.txt", "offset": '
                        + number + "}}}\n").encode())
        answer = raw.answer(6)["result"]
        assert answer["isError"] is True
        assert answer["content"][0]["text"].startswith("INVALID_ARGUMENT: "), answer
    assert raw.request("ping")["result"] == {}
    assert raw.close() == 0
    stderr = b"".join(raw.stderr).decode()
    assert "Traceback" not in stderr, stderr


def test_serve_banner_is_short_and_names_backend_and_where_the_policy_is(root):
    raw = RawClient([*CORRAL, "serve", str(root)])
    raw.initialize()
    assert raw.close() == 0
    banner = b"".join(raw.stderr).decode().splitlines()
    assert 3 <= len(banner) <= 6, banner
    assert all(len(line) <= 160 for line in banner), banner
    assert "backend" in banner[0]
    assert any(line.strip() == f"root: {root}" for line in banner)
    assert any(line.strip().startswith("policy:") for line in banner)
    assert any(f"corral doctor {root}" in line for line in banner)


@pytest.mark.usefixtures("signals_as_a_terminal_leaves_them")
def test_serve_on_a_terminal_says_it_waits_and_how_to_stop(root):
    """With a terminal on stdin (a person typed the command), the banner
    says what it waits for and how to stop it; Ctrl-C then ends it (130)."""
    import pty

    leader, follower = pty.openpty()
    proc = subprocess.Popen([*CORRAL, "serve", str(root)], stdin=follower,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    os.close(follower)
    try:
        lines: list[bytes] = []
        assert proc.stderr is not None
        while not any(b"Ctrl-C" in line for line in lines):
            line = proc.stderr.readline()
            assert line, b"".join(lines)
            lines.append(line)
        text = b"".join(lines).decode()
        assert "waiting for an MCP client" in text
        started = time.monotonic()
        proc.send_signal(signal.SIGINT)
        assert proc.wait(30) == 130
        assert time.monotonic() - started < 5
        assert b"Traceback" not in proc.stderr.read()
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        os.close(leader)


def test_serve_on_a_pipe_does_not_say_so(root):
    raw = RawClient([*CORRAL, "serve", str(root)])
    raw.initialize()
    raw.close()
    assert b"waiting for an MCP client" not in b"".join(raw.stderr)


# -- the adapter without a framework -------------------------------------------------

def _deep(depth: int) -> object:
    value: object = 1
    for _ in range(depth):
        value = {"a": value}
    return value


@pytest.mark.parametrize("tool_input", [
    _deep(3000), {"path": _deep(3000)}, [1, 2], None, "a.txt", {"path": "a.txt", "offset": 1e308},
    {"path": "a.txt", "limit": 10**40}, {"path": "x" * 1_000_000}, {"path": "\udcff"},
])
def test_anthropic_tool_results_refuse_bad_input(root, tool_input):
    with Toolbox(root) as box:
        (result,) = anthropic_tool_results(box, [{"type": "tool_use", "id": "t1",
                                                  "name": "read_file", "input": tool_input}])
    assert result["is_error"] is True
    # the refusal as the model reads it: its code first, then the sentence and the hint
    assert result["content"].startswith("INVALID_ARGUMENT: "), result["content"]


@pytest.mark.parametrize("name", [None, 5, "", "nope", "x" * 10_000, ["read_file"]])
def test_anthropic_tool_results_refuse_a_bad_tool_name(root, name):
    with Toolbox(root) as box:
        (result,) = anthropic_tool_results(box, [{"type": "tool_use", "id": "t1", "name": name,
                                                  "input": {}}])
    assert result["is_error"] is True
    assert result["content"].startswith("INVALID_ARGUMENT: "), result["content"]
