"""``corral serve ROOT`` with one more tool, ``wait`` (tests/e2e/wait_tool.py):
the real server and the real tools, plus a call whose length the test
chooses.  Options after ROOT are serve's (``--workers``, ``--max-line-bytes``)."""

from __future__ import annotations

import sys

from corral.mcp import serve
from corral.tools import Toolbox, Workspace
from corral.tools._runtime.registry import TOOL_MODULES


def main(argv: list[str]) -> None:
    root, options = argv[0], argv[1:]
    workers = int(options[options.index("--workers") + 1]) if "--workers" in options else 4
    with Toolbox(root, tools=[*TOOL_MODULES, "wait_tool"]) as box:
        serve(Workspace({"root": box}), workers=workers)


if __name__ == "__main__":
    sys.path.insert(0, __file__.rsplit("/", 1)[0])  # wait_tool beside this file
    main(sys.argv[1:])
