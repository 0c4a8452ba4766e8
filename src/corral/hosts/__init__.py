"""corral.hosts: what the hosts of corral's tools speak, for every front end.

The tool formats (:data:`FORMATS`: ``mcp``, ``openai``, ``openai-responses``,
``anthropic``) and
their schemas (:func:`strict_schema` for OpenAI's strict mode,
:func:`published_schema` without corral's own keywords), envelopes as the
text a host carries (:func:`envelope_text`, :func:`envelope_json`, and a
string as JSON, :func:`json_string`, and as UTF-8, :func:`json_utf8`), what a
model is shown of a tool's answer (:func:`render`, a compact text; the
envelope stays the contract for programs; :func:`render_with_json` gives
the envelope's JSON with it where one pass makes both, :func:`render_escaped`
both as UTF-8, the text as a JSON string; :func:`shown_name`
and :func:`one_line` for a name or a sentence shown on its own) with its
short digests
(:func:`short_digest`, which ``expectedSha256`` accepts back), the one
reading of a ``file://`` URI (:func:`file_uri_path`) and names for root
directories (:func:`root_names`).  Nothing here opens a file or needs a
root; :func:`corral.tools.tool_definitions` lists the tools in these formats.
"""

from ._formats import (FORMATS, HostFormat, envelope_json, envelope_text, json_string,
                       json_utf8, output_schema, published_schema, strict_schema)
from ._roots import root_names
from ._uri import file_uri_path
from .render import (SHORT_DIGEST_CHARS, one_line, render, render_escaped, render_refusal,
                     render_with_json, short_digest, shown_name)

__all__ = [
    "FORMATS",
    "HostFormat",
    "envelope_text",
    "envelope_json",
    "json_string",
    "json_utf8",
    "published_schema",
    "output_schema",
    "strict_schema",
    "file_uri_path",
    "root_names",
    "render",
    "render_with_json",
    "render_escaped",
    "render_refusal",
    "one_line",
    "shown_name",
    "short_digest",
    "SHORT_DIGEST_CHARS",
]

from .._public import publish as _publish

_publish(__name__, globals(), __all__)
