"""The ``corral`` command: ``call`` (exit codes and JSON), ``tools`` in each
host's shape, ``doctor``, and ``serve`` without the MCP SDK."""

from __future__ import annotations

import contextlib
import io
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from corral.cli import envelope_json
from corral.contained import backend_report
from corral.hosts import render
from corral.tools import Toolbox
from .helpers import backend_env, run_cli


def cli(*args: str) -> subprocess.CompletedProcess[str]:
    """``corral ARGS`` in this process (most tests; a few below run the real
    executable): the exit status ``main`` returns, and what it printed."""
    from corral.cli import main

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            status = main(list(args))
        except SystemExit as exc:  # argparse's usage errors
            status = exc.code
    return subprocess.CompletedProcess(["corral", *args], status, out.getvalue(), err.getvalue())


@pytest.fixture
def root(tmp_path) -> Path:
    root = tmp_path / "project"
    (root / "src").mkdir(parents=True)
    (root / "src" / "util.py").write_text("def util():\n    return 1\n")
    (root / "notes.txt").write_text("hello\nworld\n")
    (root / ".env").write_text("TOKEN=1\n")
    return root


# -- corral call ---------------------------------------------------------------

def test_call_ok_prints_the_envelope_and_exits_0(root):
    done = run_cli("call", str(root), "read_file", '{"path": "notes.txt"}')
    assert done.returncode == 0, done.stderr
    with Toolbox(root) as box:
        assert json.loads(done.stdout) == box.call("read_file", {"path": "notes.txt"})
    assert done.stdout.count("\n") == 1  # one line


def test_call_refusal_prints_the_envelope_and_exits_1(root):
    done = run_cli("call", str(root), "read_file", '{"path": "../notes.txt"}')
    assert done.returncode == 1
    envelope = json.loads(done.stdout)
    assert envelope["ok"] is False and envelope["code"] == "OUTSIDE_ROOT"
    with Toolbox(root) as box:
        assert envelope == box.call("read_file", {"path": "../notes.txt"})
    assert str(root) not in done.stdout


@pytest.mark.parametrize("tool,args,code", [
    ("read_file", "[1, 2]", "INVALID_ARGUMENT"),  # valid JSON, not an object: the tool's call
    ("read_file", '{"path": "nope.txt"}', "NOT_FOUND"),
])
def test_call_other_refusals_exit_1(root, tool, args, code):
    done = cli("call", str(root), tool, args)
    assert done.returncode == 1
    assert json.loads(done.stdout)["code"] == code


def test_call_without_arguments_uses_an_empty_object(root):
    done = cli("call", str(root), "list_directory")
    assert done.returncode == 0
    assert {e["name"] for e in json.loads(done.stdout)["entries"]} == {"src", "notes.txt", ".env"}


@pytest.mark.parametrize("args", ["{bad", "", "{'path': 'x'}"])
def test_call_bad_json_is_a_usage_error(root, args):
    done = run_cli("call", str(root), "read_file", args)
    assert done.returncode == 2
    assert done.stdout == ""
    assert "not valid JSON" in done.stderr


def test_call_missing_root_is_a_usage_error(tmp_path):
    done = cli("call", str(tmp_path / "missing"), "list_directory", "{}")
    assert done.returncode == 2 and done.stdout == ""
    assert "cannot open root" in done.stderr


def test_call_root_that_is_a_file_is_a_usage_error(root):
    done = cli("call", str(root / "notes.txt"), "list_directory", "{}")
    assert done.returncode == 2 and "cannot open root" in done.stderr


def test_call_argparse_errors_exit_2():
    assert cli("call").returncode == 2
    assert cli("frobnicate").returncode == 2


def test_call_options_reach_the_toolbox(root):
    denied = cli("call", str(root), "--deny", ".env", "read_file", '{"path": ".env"}')
    assert denied.returncode == 1 and json.loads(denied.stdout)["code"] == "DENIED"
    read_only = cli("call", str(root), "--read-only", "write_file",
                        '{"path": "new.txt", "content": "x"}')
    assert read_only.returncode == 1
    assert not (root / "new.txt").exists()
    wrote = cli("call", str(root), "write_file", '{"path": "new.txt", "content": "x"}')
    assert wrote.returncode == 0 and (root / "new.txt").read_text() == "x"


def test_call_hardlinks_refused_unless_allowed(root, tmp_path):
    os.link(root / "notes.txt", tmp_path / "twin.txt")
    refused = cli("call", str(root), "read_file", '{"path": "notes.txt"}')
    assert refused.returncode == 1 and json.loads(refused.stdout)["code"] == "UNSUPPORTED"
    allowed = cli("call", str(root), "--allow-hardlinks", "read_file", '{"path": "notes.txt"}')
    assert allowed.returncode == 0 and "hello" in json.loads(allowed.stdout)["content"]


def test_call_non_utf8_names_are_escaped_not_a_crash(root):
    (root / "odd").mkdir()
    (root / "odd" / os.fsdecode(b"bad\xff.txt")).write_text("x")
    done = run_cli("call", str(root), "list_directory", '{"path": "odd"}')
    assert done.returncode == 0, done.stderr
    assert done.stdout.isascii()
    assert json.loads(done.stdout)["entries"][0]["name"] == os.fsdecode(b"bad\xff.txt")


def test_envelope_json_keeps_text_readable():
    assert envelope_json({"ok": True, "content": "héllo ✓"}) == '{"ok":true,"content":"héllo ✓"}'
    assert json.loads(envelope_json({"name": "bad\udcff"})) == {"name": "bad\udcff"}


# -- corral tools --------------------------------------------------------------

@pytest.fixture(scope="module")
def definitions(tmp_path_factory):
    with Toolbox(tmp_path_factory.mktemp("defs")) as box:
        return box.definitions(), {d["name"]: box.spec(d["name"]).mutates
                                   for d in box.definitions()}


def _tools(*args: str) -> list[dict]:
    done = cli("tools", *args)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def test_tools_mcp(definitions):
    defs, mutates = definitions
    out = _tools("--format", "mcp")
    assert [t["name"] for t in out] == [d["name"] for d in defs]
    for item, d in zip(out, defs):
        assert item["description"] == d["description"]
        assert item["inputSchema"] == d["inputSchema"]
        assert item["annotations"]["readOnlyHint"] is (not mutates[d["name"]])
    assert _tools() == out  # mcp is the default


def test_tools_openai(definitions):
    defs, _ = definitions
    out = _tools("--format", "openai")
    assert len(out) == len(defs)
    for item, d in zip(out, defs):
        assert item["type"] == "function"
        fn = item["function"]
        assert set(fn) == {"name", "description", "parameters", "strict"}
        assert (fn["name"], fn["description"], fn["parameters"]) == (
            d["name"], d["description"], d["inputSchema"])
        assert fn["strict"] is False  # the plain schema; --strict converts (tests/cli)


def test_tools_anthropic(definitions):
    defs, _ = definitions
    out = _tools("--format", "anthropic")
    assert out == [{"name": d["name"], "description": d["description"],
                    "input_schema": d["inputSchema"]} for d in defs]


def test_tools_read_only(definitions):
    defs, mutates = definitions
    out = _tools("--format", "anthropic", "--read-only")
    assert [t["name"] for t in out] == [d["name"] for d in defs if not mutates[d["name"]]]


def test_tools_unknown_format_is_a_usage_error():
    assert cli("tools", "--format", "gemini").returncode == 2


# -- corral doctor -------------------------------------------------------------

def test_doctor_text(root):
    done = cli("doctor", str(root))
    assert done.returncode == 0, done.stderr
    report = backend_report()
    assert f"backend: {report['backend']}" in done.stdout
    assert f"root: {root}" in done.stdout
    fast = report["fast_path"]["openat2"]
    assert ("fast path: openat2(RESOLVE_BENEATH) in use" in done.stdout) is bool(fast)


def test_doctor_json_follows_the_environment(root):
    done = run_cli("doctor", str(root), "--json", env=backend_env("os", False))
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["backends"]["backend"] == "os" and report["backends"]["forced"] == "os"
    assert report["root"]["fast_path"] is False and report["root"]["openat2"] is False
    assert "CORRAL_OPENAT2" in report["root"]["openat2_reason"]
    text = run_cli("doctor", str(root), env=backend_env("os", False)).stdout
    assert "fast path: off" in text and "forced by CORRAL_BACKEND=os" in text


def test_doctor_missing_root(tmp_path):
    done = cli("doctor", str(tmp_path / "missing"))
    assert done.returncode == 2
    assert "cannot open" in done.stdout


# -- corral serve, imports -----------------------------------------------------

_SERVE_SESSION = "".join(json.dumps(m) + "\n" for m in [
    {"jsonrpc": "2.0", "id": 0, "method": "initialize",
     "params": {"protocolVersion": "2025-11-25", "capabilities": {}}},
    {"jsonrpc": "2.0", "method": "notifications/initialized"},
    {"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
    {"jsonrpc": "2.0", "id": 2, "method": "tools/call",
     "params": {"name": "read_file", "arguments": {"path": "notes.txt"}}},
])
_SDK_PACKAGES = {"mcp", "mcp_types", "pydantic", "pydantic_core", "anyio", "httpx", "httpx2",
                 "starlette", "uvicorn", "opentelemetry"}


def _serve_session(command: list[str]) -> subprocess.CompletedProcess[str]:
    """Run ``_SERVE_SESSION`` as a client does: each request's answer is
    read before stdin closes (closing it hangs up: calls still running
    then are cancelled, not answered)."""
    proc = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    assert proc.stdin is not None and proc.stdout is not None
    lines = []
    try:
        for line in _SERVE_SESSION.splitlines(keepends=True):
            proc.stdin.write(line)
            proc.stdin.flush()
            if '"id"' in line:
                lines.append(proc.stdout.readline())
        proc.stdin.close()
        proc.stdin = None  # closed: communicate() has nothing to send
        rest, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    return subprocess.CompletedProcess(command, proc.returncode, "".join(lines) + rest, err)


def _answered(stdout: str) -> list:
    return sorted(m["id"] for m in map(json.loads, stdout.splitlines()) if "id" in m)


def test_serve_never_imports_the_sdk(root):
    """`corral serve` speaks MCP itself: a whole session imports nothing of
    the SDK or its stack (-X importtime lists every module imported)."""
    done = _serve_session([sys.executable, "-X", "importtime", "-m", "corral.cli", "serve",
                           str(root)])
    assert done.returncode == 0, done.stderr
    assert _answered(done.stdout) == [0, 1, 2]
    imported = {line.split("|")[-1].strip().split(".")[0]
                for line in done.stderr.splitlines() if line.startswith("import time:")}
    assert "corral" in imported  # the listing really is there
    assert not imported & _SDK_PACKAGES, sorted(imported & _SDK_PACKAGES)


def test_serve_works_where_the_sdk_cannot_be_imported(root):
    code = ("import sys\n"
            "for name in ('mcp', 'mcp_types', 'pydantic', 'anyio'):\n"
            "    sys.modules[name] = None  # any import of these now fails\n"
            "from corral.cli import main\n"
            f"sys.exit(main(['serve', {str(root)!r}]))")
    done = _serve_session([sys.executable, "-c", code])
    assert done.returncode == 0, done.stderr
    assert _answered(done.stdout) == [0, 1, 2]


def test_serve_missing_root_is_a_usage_error(tmp_path):
    done = run_cli("serve", str(tmp_path / "missing"), input="")
    assert done.returncode == 2 and "cannot open root" in done.stderr


def test_serve_answers_what_was_asked_before_stdin_closed(root):
    requests = [
        {"jsonrpc": "2.0", "id": 0, "method": "initialize",
         "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                    "clientInfo": {"name": "test", "version": "0"}}},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 1, "method": "tools/call",
         "params": {"name": "read_file", "arguments": {"path": "notes.txt"}}},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/call",
         "params": {"name": "read_file", "arguments": {"path": "../x"}}},
    ]
    done = run_cli("serve", str(root), input="".join(json.dumps(r) + "\n" for r in requests))
    assert done.returncode == 0, done.stderr
    answers = {m["id"]: m for m in map(json.loads, done.stdout.splitlines())}
    assert sorted(answers) == [0, 1, 2]
    assert answers[0]["result"]["serverInfo"]["name"] == "corral"
    ok, refused = answers[1]["result"], answers[2]["result"]
    assert ok["structuredContent"]["ok"] is True and not ok.get("isError")
    assert ok["content"][0]["text"] == render("read_file", ok["structuredContent"])
    assert refused["isError"] is True
    assert refused["structuredContent"]["code"] == "OUTSIDE_ROOT"
    assert refused["content"][0]["text"].startswith("OUTSIDE_ROOT: ../x is outside the root\n")


@pytest.mark.parametrize("argv", [
    ["call", "{root}", "list_directory", "{}"], ["tools", "--format", "openai"],
    ["doctor", "{root}", "--json"],
])
def test_commands_other_than_serve_do_not_import_the_sdk(root, argv):
    argv = [a.replace("{root}", str(root)) for a in argv]
    code = ("import sys, io, contextlib\n"
            "from corral.cli import main\n"
            "with contextlib.redirect_stdout(io.StringIO()):\n"
            f"    status = main({argv!r})\n"
            "heavy = sorted(m for m in sys.modules if m.split('.')[0] in "
            "('mcp', 'mcp_types', 'pydantic', 'anyio'))\n"
            "print(status, heavy)")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.stdout.strip() == "0 []", done.stdout + done.stderr


def test_python_dash_m_corral_and_the_console_script(root):
    done = subprocess.run([sys.executable, "-m", "corral", "--version"], capture_output=True,
                          text=True, timeout=60)
    assert done.returncode == 0 and done.stdout.startswith("corral ")
    script = Path(sys.executable).parent / "corral"
    assert script.exists(), "the console script is not installed (pip install -e .)"
    done = subprocess.run([str(script), "call", str(root), "read_file", '{"path": "notes.txt"}'],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0 and json.loads(done.stdout)["ok"] is True
