"""Host configs another program makes while a Toolbox is open, in a
directory the view does not follow (a tree of more directories than it
watches or stats per call), then a hostile model's call aimed at what the
config runs.

``far/.envrc`` holding ``PATH_add bin`` made after open puts ``far/bin``
first on ``PATH`` in the user's next shell there; a ``far/.mcp.json``
names ``far/servers/mcp.sh``, started with Claude Code.  The look at the
directories beyond (before such a decision) listed ``far`` again and
learnt its links, but read no config that came there: the write of what
it runs went through, until a later walk read it.  Each call is refused
now as it would be had the config been there at open, with the kernel's
watch and without one, on every backend config.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from corral.tools import Toolbox

from .helpers.link_calls import OURS, denied, walk_through

CONFIGS = {
    "envrc": (".envrc", "PATH_add bin\n", "bin/ls"),
    "mcp": (".mcp.json", json.dumps({"mcpServers": {"s": {"command": "./servers/mcp.sh"}}}),
            "servers/mcp.sh"),
    "mise": ("mise.toml", '[hooks]\nenter = "./ops/enter.sh"\n', "ops/enter.sh"),
}


def _opened(base: Path, make_root) -> Toolbox:
    box = Toolbox(make_root(str(base)))
    walk_through()
    assert box.call("list_directory", {"path": "."})["ok"] is True
    return box


@pytest.mark.parametrize("where", ["listed", "made-later"])
@pytest.mark.parametrize("config", list(CONFIGS))
def test_a_host_config_made_beyond_the_followed_directories_is_read_before_a_call(
        tmp_path, make_root, watching, root_alone_followed, config, where):
    base = tmp_path / "root"
    (base / "far" / "inner").mkdir(parents=True)
    (base / "far" / "inner" / "code.py").write_text("x = 1\n")
    box = _opened(base, make_root)
    name, text, runs = CONFIGS[config]
    place = base / "far"
    if where == "made-later":
        place = base / "far" / "inner" / "new"
        place.mkdir()
        assert box.call("list_directory", {"path": "."})["ok"] is True
    (place / name).write_text(text)
    program = os.path.relpath(place / runs, base)
    answer = box.call("write_file", {"path": program, "content": OURS})
    assert denied(answer), answer
    assert not (place / runs).exists()
