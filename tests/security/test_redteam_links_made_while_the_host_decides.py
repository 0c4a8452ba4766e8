"""A protected link another program makes while the host decides
(``.vscode -> y``, ``.claude -> y``, ``.envrc -> y/a.json``) is taken in
before the call acts: write_file, edit_file and apply_patch refuse, nothing
is written through it."""
from __future__ import annotations

import os

import pytest

from corral.tools import Toolbox

_LINKS = {"vscode": (".vscode", "y", "y/tasks.json"), "claude": (".claude", "y", "y/settings.json"),
          "envrc": (".envrc", "y/a.json", "y/a.json")}

def _calls(path):
    return [("write_file", {"path": path, "content": "MODEL", "overwrite": True}),
            ("edit_file", {"path": path, "oldText": "plain", "newText": "MODEL"}),
            ("apply_patch", {"input": f"*** Begin Patch\n*** Update File: {path}\n@@\n-plain\n+MODEL\n*** End Patch\n"})]

@pytest.mark.parametrize("link", sorted(_LINKS))
@pytest.mark.parametrize("which", range(3))
def test_a_protected_link_made_while_the_host_decides_is_taken_in(tmp_path, make_root, link, which):
    name, target, path = _LINKS[link]
    (tmp_path / "y").mkdir()
    for file in ("a.json", "tasks.json", "settings.json"):
        (tmp_path / "y" / file).write_text("plain\n")
    armed = [True]
    def authorize(request):
        if armed and armed.pop():
            os.symlink(target, tmp_path / name)
    box = Toolbox(make_root(str(tmp_path)), authorize=authorize)
    tool, args = _calls(path)[which]
    answer = box.call(tool, args)
    assert not armed, answer
    assert (tmp_path / path).read_text() == "plain\n", answer
    assert answer["code"] in ("DENIED", "STALE"), answer
