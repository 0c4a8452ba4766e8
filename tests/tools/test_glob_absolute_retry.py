"""An absolute pattern inside the root that finds nothing, in a tree where
.gitignore or .git kept directories out, is answered (no match, and the
retry with includeIgnored when that finds the file), never refused as a
pattern "that starts with '/'" (the retry compiled the pattern as given)."""

from __future__ import annotations

from pathlib import Path


def _tree(base: Path) -> Path:
    root = base.resolve()
    (root / ".git").mkdir()
    (root / ".gitignore").write_text("build/\n")
    (root / "build").mkdir()
    (root / "build" / "gen.py").write_text("x\n")
    (root / "src").mkdir()
    (root / "src" / "a.py").write_text("x\n")
    return root


def test_absolute_pattern_finding_nothing_is_answered(tmp_path, make_toolbox):
    root = _tree(tmp_path)
    with make_toolbox(root) as box:
        nothing = box.call("glob", {"pattern": f"{root}/nope.py"})
        assert nothing["ok"], nothing
        assert nothing["paths"] == []
        assert "suggestedArgs" not in nothing
        ignored = box.call("glob", {"pattern": f"{root}/**/gen.py"})
        assert ignored["ok"], ignored
        assert ignored["paths"] == []
        assert ignored["diagnosis"] == "ignored"
        assert ignored["suggestedArgs"] == {"pattern": f"{root}/**/gen.py",
                                            "includeIgnored": True}
        # the suggested call finds it
        found = box.call("glob", ignored["suggestedArgs"])
        assert found["paths"] == ["build/gen.py"], found


def test_absolute_pattern_below_path_finding_nothing_is_answered(tmp_path, make_toolbox):
    root = _tree(tmp_path)
    with make_toolbox(root) as box:
        out = box.call("glob", {"pattern": f"{root}/src/nope.py", "path": "src"})
        assert out["ok"], out
        assert out["paths"] == []
