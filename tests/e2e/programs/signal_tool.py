"""A tool module for the tests: ``signal_me`` has the kernel hand a signal
to the worker thread running the call (``pthread_kill`` of that thread), as
it may hand a signal sent to the whole process to any thread that does not
block it, then runs like ``wait`` (a checkpoint every step) until
cancelled.  Served next to the real tools by tests/e2e/signal_serve.py."""

from __future__ import annotations

import signal
import threading
import time
from dataclasses import dataclass
from typing import Any

from corral.tools import Request, ToolSpec
from corral.tools._runtime.context import ToolContext
from corral.tools._runtime.registry import success_schema

STEP = 0.02  # seconds between checkpoints
STEPS = 3000  # a minute: the signal must end it long before


@dataclass(frozen=True)
class SignalRequest(Request):
    """The signal_me call's request (the signal's name)."""

    operation = "signal_me"


def run(ctx: ToolContext, args: dict[str, Any]) -> dict[str, Any]:
    signal.pthread_kill(threading.get_ident(), signal.Signals[args["signal"]])
    for step in range(STEPS):
        ctx.checkpoint()
        time.sleep(STEP)
    return {"steps": STEPS}


TOOL = ToolSpec(
    name="signal_me", title="Signal me",
    description="Send a signal to the thread running this call, then wait to be cancelled.",
    schema={"type": "object",
            "properties": {"signal": {"enum": ["SIGTERM", "SIGINT", "SIGHUP"]}},
            "required": ["signal"], "additionalProperties": False},
    output_schema=success_schema({"steps": {"type": "integer"}}, ["steps"]),
    run=run, request=SignalRequest, mutates=False)
