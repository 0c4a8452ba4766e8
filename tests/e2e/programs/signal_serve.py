"""``corral serve ROOT`` with its tools imported after the ``initialize``
answer (as the command does), plus ``signal_me`` (tests/e2e/signal_tool.py).

``signal_serve.py ROOT [SIGNAL]``: with a signal's name, the thread that
imports the tools (the reader, right after the ``initialize`` answer)
sends that signal to itself first, as the kernel may hand a signal sent to
the whole process to any thread that does not block it."""

from __future__ import annotations

import signal
import sys
import threading

from corral.mcp import serve
from corral.tools import Toolbox, Workspace
from corral.tools._runtime.registry import TOOL_MODULES


def main(argv: list[str]) -> None:
    root = argv[0]
    in_warm = signal.Signals[argv[1]] if len(argv) > 1 else None
    with Toolbox(root, tools=[*TOOL_MODULES, "signal_tool"], defer_tools=True) as box:
        def warm() -> None:
            if in_warm is not None:
                signal.pthread_kill(threading.get_ident(), in_warm)
            box.load_tools()
        print("corral serve: up", file=sys.stderr, flush=True)
        serve(Workspace({"root": box}), warm=warm)


if __name__ == "__main__":
    sys.path.insert(0, __file__.rsplit("/", 1)[0])  # signal_tool beside this file
    main(sys.argv[1:])
