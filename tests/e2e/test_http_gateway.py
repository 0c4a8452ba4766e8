"""docs/http.md's recipe, run as written: supergateway (stateful Streamable
HTTP) in front of ``corral serve``, made to listen on loopback by the page's
``loopback.cjs``, checked by the official conformance suite
(``@modelcontextprotocol/conformance``) in every server scenario that
applies to a server offering tools and nothing else.

The scenarios left out need what corral does not offer (resources,
prompts, completion, sampling, elicitation) or tools of the suite's own
(``test_image_content``...).  ``dns-rebinding-protection`` is run too and
must still fail: the page says plainly that nothing checks ``Host`` or
``Origin``, and this test is what tells us the day that changes.

supergateway and the suite are installed by scripts/setup_conformance.sh
(``node`` part), at the versions the page names.
"""

from __future__ import annotations

import os
import re
import shlex
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from .helpers import CONFORMANCE, REPO, SETUP_HINT

PAGE = REPO / "docs" / "http.md"
BIN = CONFORMANCE / "node" / "node_modules" / ".bin"
CORRAL = Path(sys.executable).parent / "corral"
APPLICABLE = ["server-initialize", "ping", "logging-set-level", "tools-list",
              "server-sse-multiple-streams"]
START_BOUND = 120  # seconds for node to start supergateway on a loaded machine


def _blocks(lang: str) -> list[str]:
    text = PAGE.read_text(encoding="utf-8")
    return re.findall(rf"^```{lang}\n(.*?)^```$", text, re.MULTILINE | re.DOTALL)


def _pinned(name: str) -> str:
    setup = (REPO / "scripts" / "setup_conformance.sh").read_text()
    match = re.search(rf'^{name}="([^"]+)"', setup, re.MULTILINE)
    assert match, name
    return match.group(1)


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _listening_addresses(port: int) -> set[str]:
    """The local addresses (hex, as /proc/net has them) listening on ``port``."""
    found = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            rows = Path(table).read_text().splitlines()[1:]
        except OSError:
            continue
        for row in rows:
            fields = row.split()
            address, hex_port = fields[1].split(":")
            if fields[3] == "0A" and int(hex_port, 16) == port:
                found.add(address)
    return found


LOOPBACK = {"0100007F", "00000000000000000000000001000000",
            "0000000000000000FFFF00000100007F"}


def _start(work: Path, project: Path) -> tuple[subprocess.Popen[bytes], int]:
    """The page's two blocks, placeholders replaced, started in their own
    process group; the process and its port once it accepts connections.
    The free port is found before supergateway binds it: another process
    of the machine may take it meanwhile, and then another port is tried."""
    for _ in range(3):
        started = _start_once(work, project)
        if started is not None:
            return started
    pytest.fail("supergateway found each free port taken by another process")


def _start_once(work: Path, project: Path) -> tuple[subprocess.Popen[bytes], int] | None:
    (script,) = _blocks("js")
    (work / "loopback.cjs").write_text(script)
    (command,) = _blocks("sh")
    pinned = f"npx -y supergateway@{_pinned('SUPERGATEWAY')} "
    assert pinned in command, "the page names the version setup_conformance.sh installs"
    port = _free_port()
    command = (command.strip().replace(pinned, shlex.quote(str(BIN / "supergateway")) + " ")
               .replace("/path/to/corral/.venv/bin/corral", str(CORRAL))
               .replace("/path/to/your/project", str(project))
               .replace("--port 8000", f"--port {port}"))
    proc = subprocess.Popen(["bash", "-c", command], cwd=work, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, start_new_session=True)
    deadline = time.monotonic() + START_BOUND
    while True:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return proc, port
        except OSError:
            if proc.poll() is not None or time.monotonic() > deadline:
                _kill(proc)
                output = proc.stdout.read().decode() if proc.stdout else ""
                if "EADDRINUSE" in output:
                    return None
                pytest.fail(f"supergateway did not start: {output[-2000:]}")
            time.sleep(0.25)


def _kill(proc: subprocess.Popen[bytes]) -> None:
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    proc.wait()


def _listening(port: int) -> set[str]:
    """Where ``port`` is listened on: hex addresses from /proc/net (Linux),
    else ``lsof``'s names (macOS)."""
    found = _listening_addresses(port)
    if found or Path("/proc/net/tcp").exists():
        return found
    done = subprocess.run(["lsof", "-nP", f"-iTCP:{port}", "-sTCP:LISTEN", "-Fn"],
                          capture_output=True, text=True)
    return {line[1:].rsplit(":", 1)[0] for line in done.stdout.splitlines()
            if line.startswith("n")}


LOOPBACK_NAMES = LOOPBACK | {"127.0.0.1", "[::1]", "localhost"}


def _scenario(url: str, name: str, out: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(BIN / "conformance"), "server", "--url", url, "--scenario", name,
                           "-o", str(out)], capture_output=True, text=True, timeout=180)


def _group(pgid: int, pattern: str | None = None) -> list[str]:
    argv = ["pgrep", "-g", str(pgid)] + (["-f", pattern] if pattern else [])
    return subprocess.run(argv, capture_output=True, text=True).stdout.split()


@pytest.mark.long
def test_the_http_recipe_passes_the_conformance_suite_on_loopback(tmp_path):
    """One gateway for the whole check (node takes long to start on a busy
    machine): loopback only; each applicable scenario passes; the DNS
    rebinding scenario fails as the page says; Ctrl-C (a signal to the
    terminal's process group) ends supergateway and every corral serve."""
    for tool in ("supergateway", "conformance"):
        if not (BIN / tool).exists():
            pytest.fail(f"{BIN / tool} is missing; {SETUP_HINT}")
    project = tmp_path / "project"
    project.mkdir()
    (project / "hello.txt").write_text("hello over http\n")
    proc, port = _start(tmp_path, project)
    url = f"http://127.0.0.1:{port}/mcp"
    try:
        addresses = _listening(port)
        assert addresses and addresses <= LOOPBACK_NAMES, addresses

        failed = {}
        for scenario in APPLICABLE:
            done = _scenario(url, scenario, tmp_path / "results")
            if done.returncode != 0 or not re.search(r"Passed: (\d+)/\1, 0 failed", done.stdout):
                failed[scenario] = done.stdout[-2000:] + done.stderr[-1000:]
        assert not failed, failed

        page = PAGE.read_text()
        assert "checks no `Host`" in page
        done = _scenario(url, "dns-rebinding-protection", tmp_path / "results")
        assert done.returncode == 1 and " failed" in done.stdout, done.stdout[-3000:]

        assert _group(proc.pid, "corral serve"), "the stateful sessions keep a corral serve"
        os.killpg(proc.pid, signal.SIGINT)
        proc.wait(timeout=30)
        deadline = time.monotonic() + 10
        while _group(proc.pid) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert not _group(proc.pid), "still running after Ctrl-C"
    finally:
        if proc.poll() is None or _group(proc.pid):
            _kill(proc)
