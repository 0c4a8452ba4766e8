"""The adapters of corral.integrations, end to end and offline: each
framework's own test model (or a mocked HTTP transport) drives corral's real
tools over a real temporary tree.

These tests run in their own venv (scripts/test.sh makes it: corral beside
openai-agents, pydantic-ai, langchain-core, anthropic and the MCP adapters
that pin mcp<2), because the main test venv carries the MCP SDK 2.x the
end-to-end tests need.  A framework missing here is a broken set-up, so it
fails the run rather than skipping.
"""

from __future__ import annotations

import importlib
from pathlib import Path

import pytest

from corral.tools import Toolbox

FRAMEWORKS = ("agents", "pydantic_ai", "langchain_core", "anthropic")

for _module in FRAMEWORKS:
    try:
        importlib.import_module(_module)
    except ImportError as exc:  # pragma: no cover - a set-up error, reported at collection
        raise RuntimeError(
            f"tests/integrations needs {_module}: run them through scripts/test.sh, which "
            f"installs the frameworks in .venv-integrations") from exc


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    (root / "src").mkdir(parents=True)
    (root / "src" / "util.py").write_text("def util():\n    return 1\n")
    (root / "notes.txt").write_text("hello\nworld\n")
    return root


@pytest.fixture
def toolbox(project: Path):
    with Toolbox(project) as box:
        yield box
