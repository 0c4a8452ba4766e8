"""corral.hosts: what the hosts of corral's tools speak, for every front end.

:func:`render` gives the compact text a model is shown of a tool's answer
(the envelope stays the contract for programs); :func:`short_digest` the
short sha256 it reads and may send back.
"""

from .render import SHORT_DIGEST_CHARS, render, render_refusal, short_digest

__all__ = ["render", "render_refusal", "short_digest", "SHORT_DIGEST_CHARS"]
