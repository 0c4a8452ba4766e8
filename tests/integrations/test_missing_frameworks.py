"""Without its framework an adapter raises ImportError naming what to install."""

from __future__ import annotations

import sys

import pytest

from corral import integrations


@pytest.mark.parametrize("adapter,module,package", [
    (integrations.openai_agents_tools, "agents", "pip install openai-agents"),
    (integrations.pydantic_ai_toolset, "pydantic_ai", "pip install pydantic-ai-slim"),
    (integrations.langchain_tools, "langchain_core", "pip install langchain-core"),
])
def test_missing_framework_says_what_to_install(monkeypatch, toolbox, adapter, module, package):
    for name in [m for m in sys.modules if m == module or m.startswith(module + ".")]:
        monkeypatch.delitem(sys.modules, name)
    monkeypatch.setitem(sys.modules, module, None)  # import now fails as if not installed
    with pytest.raises(ImportError) as caught:
        adapter(toolbox)
    assert package in str(caught.value)
    assert adapter.__name__ in str(caught.value)


def test_run_anthropic_without_the_sdk_says_what_to_install(monkeypatch, toolbox):
    monkeypatch.setitem(sys.modules, "anthropic", None)
    with pytest.raises(ImportError, match="pip install anthropic"):
        integrations.run_anthropic(toolbox, [], model="m")
