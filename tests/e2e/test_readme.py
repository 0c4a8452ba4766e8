"""Every code block of the README runs as written, in a temporary directory.

Each block is claimed by exactly one test below (a block nobody claims fails
``test_every_block_is_checked``):

* the install and wheel commands run in a copy of the source tree, each as
  written, and the server the first one starts answers an MCP client;
* the test command is the one CI runs (it cannot run inside itself);
* the client configurations (``claude mcp add``, the JSON files) are run as
  the client would run them, with the placeholders replaced by this venv's
  ``corral`` and a temporary project: the server must answer ``initialize``
  and a tool call over stdio;
* the Python blocks run in an empty directory and print what the README
  says they print;
* the command-line block runs with this venv's ``corral`` on ``PATH``.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import threading
import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from .helpers import REPO

README = REPO / "README.md"
BIN = Path(sys.executable).parent
CORRAL_PLACEHOLDER = "/path/to/corral/.venv/bin/corral"
PROJECT_PLACEHOLDER = "/path/to/your/project"
TIMEOUT = 60
INSTALL_TIMEOUT = 900  # a fresh venv, corral's dependencies and its native module built


@dataclass(frozen=True)
class Block:
    index: int
    lang: str
    text: str
    before: str  # the prose since the previous block


def readme_blocks() -> list[Block]:
    blocks = []
    prose: list[str] = []
    lines = README.read_text(encoding="utf-8").splitlines()
    i = 0
    while i < len(lines):
        fence = re.match(r"^```(\w*)\s*$", lines[i])
        if not fence:
            prose.append(lines[i])
            i += 1
            continue
        end = lines.index("```", i + 1)
        blocks.append(Block(len(blocks), fence.group(1), "\n".join(lines[i + 1:end]) + "\n",
                            "\n".join(prose)))
        prose = []
        i = end + 1
    return blocks


BLOCKS = readme_blocks()


def claim(kind: str) -> list[Block]:
    """The blocks of ``kind`` (the test that asks checks them)."""
    return [b for b in BLOCKS if _kind(b) == kind]


def _kind(block: Block) -> str:
    text = block.text
    if block.lang == "sh" and "pip install" in text and "corral serve" in text:
        return "install"
    if block.lang == "sh" and "pip wheel" in text:
        return "wheel"
    if block.lang == "sh" and text.strip() == "bash scripts/test.sh":
        return "test-command"
    if block.lang == "sh" and text.startswith("claude mcp add"):
        return "client"
    if block.lang == "json" and ('"mcpServers"' in text or '"servers"' in text):
        return "client"
    if block.lang == "python":
        return "python"
    if block.lang == "text" and block.before.rstrip().endswith("It prints:"):
        return "output"
    if block.lang == "sh" and text.lstrip().startswith("corral "):
        return "cli"
    return "unclaimed"


def _env(path_first: Path | None = None) -> dict[str, str]:
    env = dict(os.environ)
    env["PATH"] = f"{path_first or BIN}{os.pathsep}{env.get('PATH', '')}"
    return env


def _mcp_exchange(argv: list[str], cwd: Path, env: dict[str, str],
                  timeout: float = TIMEOUT) -> list[dict[str, Any]]:
    """Start the server as ``argv``; send initialize, initialized and one
    tool call, each request's answer read before the next is sent (as a
    client does); then close stdin and wait for the exit.  The messages it
    wrote."""
    proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, cwd=cwd, env=env)
    assert proc.stdin is not None and proc.stdout is not None
    answers: list[dict[str, Any]] = []
    try:
        for message in _CLIENT_MESSAGES:
            proc.stdin.write(json.dumps(message).encode() + b"\n")
            proc.stdin.flush()
            if "id" in message:
                line = _read_line(proc, timeout)
                assert line, (proc.poll(), proc.stderr.read() if proc.poll() is not None else "")
                answers.append(json.loads(line))
        proc.stdin.close()
        proc.stdin = None  # closed: communicate() has nothing to send
        rest, err = proc.communicate(timeout=TIMEOUT)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 0, err
    assert not rest, rest  # nothing after stdin closed
    return answers


_CLIENT_MESSAGES: list[dict[str, Any]] = [
    {"jsonrpc": "2.0", "id": 1, "method": "initialize",
     "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                "clientInfo": {"name": "readme", "version": "0"}}},
    {"jsonrpc": "2.0", "method": "notifications/initialized"},
    {"jsonrpc": "2.0", "id": 2, "method": "tools/call",
     "params": {"name": "read_file", "arguments": {"path": "hello.txt"}}},
]


def _read_line(proc: subprocess.Popen[bytes], timeout: float) -> bytes:
    """The next line of the server's stdout, within ``timeout`` seconds."""
    assert proc.stdout is not None
    got: list[bytes] = []
    reader = threading.Thread(target=lambda: got.append(proc.stdout.readline()),  # type: ignore[union-attr]
                              daemon=True)
    reader.start()
    reader.join(timeout)
    assert got, f"no answer within {timeout} s"
    return got[0]


def _assert_serves(answers: list[dict[str, Any]]) -> None:
    by_id = {a.get("id"): a for a in answers}
    assert by_id[1]["result"]["serverInfo"]["name"] == "corral"
    envelope = by_id[2]["result"]["structuredContent"]
    assert envelope["ok"] is True and "hello from the project" in envelope["content"]


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    root.mkdir()
    (root / "hello.txt").write_text("hello from the project\n")
    return root


def _source_copy(dest: Path) -> Path:
    """The files git tracks (or the tree without venvs and caches)."""
    tracked = subprocess.run(["git", "ls-files", "-z"], cwd=REPO, capture_output=True)
    if tracked.returncode == 0 and tracked.stdout:
        for name in tracked.stdout.decode().split("\0"):
            if name and (REPO / name).is_file():
                (dest / name).parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(REPO / name, dest / name)
    else:
        shutil.copytree(REPO, dest, dirs_exist_ok=True, ignore=shutil.ignore_patterns(
            ".venv*", ".conformance", ".git", "__pycache__", "build", "dist", "*.so"))
    return dest


# -- the blocks ---------------------------------------------------------------------

@pytest.mark.long
def test_install_and_wheel_blocks_run_as_written(tmp_path: Path) -> None:
    """The main job in a fresh copy of the checkout: a venv, corral installed
    into it, ``corral serve .`` answering a client; then the wheel command
    makes a wheel with the native module in it."""
    (install,) = claim("install")
    (wheel,) = claim("wheel")
    tree = _source_copy(tmp_path / "corral")
    (tree / "hello.txt").write_text("hello from the project\n")
    _assert_serves(_mcp_exchange(["bash", "-ec", install.text], tree, dict(os.environ),
                                 timeout=INSTALL_TIMEOUT))
    made = subprocess.run(["bash", "-ec", wheel.text], cwd=tree, capture_output=True, text=True,
                          timeout=INSTALL_TIMEOUT)
    assert made.returncode == 0, made.stderr
    (built,) = (tree / "dist").glob("corral-*.whl")
    with zipfile.ZipFile(built) as archive:
        names = archive.namelist()
    assert "corral/__init__.py" in names
    if sys.platform.startswith("linux") and os.environ.get("CORRAL_NATIVE") != "0":
        assert any(n.startswith("corral/_native") for n in names), names


def test_test_command_is_what_ci_runs() -> None:
    (block,) = claim("test-command")
    command = block.text.strip()
    workflow = (REPO / ".github" / "workflows" / "ci.yml").read_text()
    assert f"run: {command}\n" in workflow
    assert command.split()[-1] in (REPO / ".ci" / "run").read_text()
    assert (REPO / command.split()[-1]).is_file()


def _client_argv(block: Block, project: Path) -> list[str]:
    """The command the client would start, placeholders replaced."""
    corral = str(BIN / "corral")
    if block.lang == "sh":
        words = shlex.split(block.text.replace("$PWD", str(project)))
        assert words[:3] == ["claude", "mcp", "add"] and "--" in words
        argv = words[words.index("--") + 1:]
    else:
        config = json.loads(block.text)
        servers = config.get("mcpServers") or config["servers"]
        entry = servers["corral"]
        assert entry.get("type", "stdio") == "stdio"
        argv = [entry["command"], *entry["args"]]
    assert argv[0] == CORRAL_PLACEHOLDER, argv
    return [corral] + [a.replace(PROJECT_PLACEHOLDER, str(project))
                       .replace("${workspaceFolder}", str(project)) for a in argv[1:]]


@pytest.mark.parametrize("block", claim("client"), ids=lambda b: f"block{b.index}")
def test_client_configurations_start_a_working_server(block: Block, project: Path) -> None:
    argv = _client_argv(block, project)
    assert argv[1] == "serve"
    _assert_serves(_mcp_exchange(argv, project, _env()))


def _expected_output(block: Block) -> str | None:
    following = BLOCKS[block.index + 1] if block.index + 1 < len(BLOCKS) else None
    if following is not None and _kind(following) == "output":
        return following.text
    return None


@pytest.mark.parametrize("block", claim("python"), ids=lambda b: f"block{b.index}")
def test_python_blocks_run_and_print_what_the_readme_says(block: Block, tmp_path: Path) -> None:
    done = subprocess.run([sys.executable, "-c", block.text], cwd=tmp_path, capture_output=True,
                          text=True, timeout=TIMEOUT, env=_env())
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr
    expected = _expected_output(block)
    if expected is not None:
        assert done.stdout == expected


def test_output_blocks_follow_a_python_block() -> None:
    outputs = claim("output")
    assert outputs, "the Python quick start shows what it prints"
    for block in outputs:
        assert BLOCKS[block.index - 1].lang == "python"


@pytest.mark.parametrize("block", claim("cli"), ids=lambda b: f"block{b.index}")
def test_command_line_blocks_run(block: Block, project: Path) -> None:
    done = subprocess.run(["bash", "-euo", "pipefail", "-c", block.text], cwd=project,
                          capture_output=True, text=True, timeout=TIMEOUT, env=_env())
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr + done.stdout


def test_every_block_is_checked() -> None:
    unclaimed = [b for b in BLOCKS if _kind(b) == "unclaimed"]
    assert not unclaimed, [(b.index, b.lang, b.text[:60]) for b in unclaimed]
    assert len(BLOCKS) >= 10
