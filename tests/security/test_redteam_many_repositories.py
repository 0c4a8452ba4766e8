"""A root holding more repositories than the look at open reads the
configs and hooks of (80 checkouts side by side, as ``corral serve ~/src``
sees them; past the bound, made 8 here): each one's ``core.fsmonitor``
script and the script its ``pre-commit`` hook runs are protected, and
where there are more than the look reads, every path is."""
from __future__ import annotations

from pathlib import Path

import pytest

from corral.tools import Toolbox
from corral.tools._policy import gitdirs


def _checkouts(base: Path, count: int) -> list[str]:
    scripts = []
    for i in range(count):
        repo = base / f"r{i:03d}"
        for sub in ("hooks", "objects", "refs/heads"):
            (repo / ".git" / sub).mkdir(parents=True)
        (repo / ".git" / "HEAD").write_text("ref: refs/heads/main\n")
        (repo / ".git" / "config").write_text("[core]\n\tfsmonitor = ./fs.sh\n")
        hook = repo / ".git" / "hooks" / "pre-commit"
        hook.write_text("#!/bin/sh\n./check.sh\n")
        hook.chmod(0o755)
        scripts += [f"r{i:03d}/fs.sh", f"r{i:03d}/check.sh"]
    return scripts


@pytest.mark.parametrize("bound", ["real", "small"])
def test_every_repository_s_programs_are_protected(tmp_path, make_root, monkeypatch, bound):
    if bound == "small":
        monkeypatch.setattr(gitdirs, "MAX_CONFIGS", 8)
    scripts = _checkouts(tmp_path, 80 if bound == "real" else 12)
    box = Toolbox(make_root(str(tmp_path)))
    written = [path for path in scripts
               if box.call("write_file", {"path": path, "content": "#!/bin/sh\necho MODEL\n"})["ok"]]
    assert written == []
    assert not any((tmp_path / path).exists() for path in scripts)
    if bound == "real":  # every config read: the rest is the model's as before
        assert box.call("write_file", {"path": "r000/notes.txt", "content": "x\n"})["ok"]
