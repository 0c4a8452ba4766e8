"""A tool module for the tests: ``wait`` runs for ``seconds`` the way a long
search does, checking the call's cancel token and deadline at every step
(``ctx.checkpoint()``) and reporting progress, so the front end's worker
model can be watched with a call of known length.  Served next to the real
tools by tests/e2e/wait_serve.py."""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

from corral.tools import Request, ToolSpec
from corral.tools._runtime.context import ToolContext
from corral.tools._runtime.registry import success_schema

STEP = 0.02  # seconds between checkpoints


@dataclass(frozen=True)
class WaitRequest(Request):
    operation = "wait"


def run(ctx: ToolContext, args: dict[str, Any]) -> dict[str, Any]:
    steps = max(1, round(args["seconds"] / STEP))
    for step in range(steps):
        ctx.checkpoint()
        ctx.progress(step, steps, f"step {step} of {steps}")
        time.sleep(STEP)
    ctx.progress(steps, steps, "done")
    return {"steps": steps}


TOOL = ToolSpec(
    name="wait", title="Wait",
    description="Wait for a number of seconds, checking for cancellation as it goes.",
    schema={"type": "object",
            "properties": {"seconds": {"type": "number", "minimum": 0, "maximum": 120}},
            "required": ["seconds"], "additionalProperties": False},
    output_schema=success_schema({"steps": {"type": "integer"}}, ["steps"]),
    run=run, request=WaitRequest, mutates=False)
