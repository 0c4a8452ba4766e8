"""corral's tools inside agent frameworks, without MCP in between.

Each adapter imports its framework only when called, and raises
``ImportError`` with the ``pip install`` line when it is missing:

* :func:`openai_agents_tools`: OpenAI Agents SDK ``FunctionTool`` objects,
  strict-mode schemas by default (``pip install openai-agents``).
* :func:`pydantic_ai_toolset`: a pydantic-ai ``FunctionToolset``
  (``pip install pydantic-ai-slim``).
* :func:`langchain_tools`: LangChain ``StructuredTool`` objects
  (``pip install langchain-core``).
* :func:`anthropic_tools`, :func:`anthropic_tool_results`,
  :func:`run_anthropic`: Anthropic Messages API tool definitions, the
  ``tool_result`` blocks for a reply's ``tool_use`` blocks, and a loop that
  runs a conversation until the model stops asking for tools
  (``pip install anthropic`` for the loop's client).
* :func:`text_editor_tool`: Claude's text editor tool
  (``str_replace_based_edit_tool``) run on the toolbox, and
  :func:`apply_patch_tool`: the OpenAI Agents SDK's ``ApplyPatchTool`` whose
  editor is corral's ``apply_patch`` (V4A): the edit tools models are trained
  on, inside the root, in place of corral's own write and edit tools.

In every framework a refusal reaches the model as a result it can act on:
the refusal envelope's JSON (code, message, hint, suggested call), marked as
an error where the framework has the notion (LangChain ``status="error"``,
Anthropic ``is_error``), and never as an exception that counts against a
retry budget or ends the run.  Async frameworks call
``await toolbox.acall(...)``.
"""

from .anthropic import anthropic_tool_results, anthropic_tools, run_anthropic, text_editor_tool
from .langchain import langchain_tools
from .openai_agents import apply_patch_tool, openai_agents_tools
from .pydantic_ai import pydantic_ai_toolset

__all__ = [
    "openai_agents_tools",
    "pydantic_ai_toolset",
    "langchain_tools",
    "anthropic_tools",
    "anthropic_tool_results",
    "run_anthropic",
    "text_editor_tool",
    "apply_patch_tool",
]
