"""A path that does not exist, spelled the way models spell paths: the
file meant is offered (didYouMean and a suggested call that succeeds),
found by a search bounded in entries and time, never a path a rule hides."""

from __future__ import annotations

import time

import pytest
from .helpers.envelope import assert_valid_envelope

from corral.tools import Toolbox
from corral.tools._refusals import locator


@pytest.fixture
def project(tmp_path):
    root = tmp_path / "myproject"
    (root / "src" / "pkg").mkdir(parents=True)
    (root / "src" / "util.py").write_text("x = 1\n")
    (root / "src" / "pkg" / "__init__.py").write_text("")
    (root / "src" / "components").mkdir()
    (root / "src" / "components" / "Button.tsx").write_text("b\n")
    return root


@pytest.mark.parametrize("asked, meant", [
    ("myproject/src/util.py", "src/util.py"),
    ("util.py", "src/util.py"),
    ("pkg/__init__.py", "src/pkg/__init__.py"),
    ("'src/util.py'", "src/util.py"),
    ("`src/util.py`", "src/util.py"),
    ("$HOME/src/util.py", "src/util.py"),
    ('["src/util.py"]', "src/util.py"),
    ("@/components/Button.tsx", "src/components/Button.tsx"),
])
def test_the_file_meant_is_offered(project, asked, meant):
    with Toolbox(project) as box:
        refusal = assert_valid_envelope(box.call("read_file", {"path": asked}))
        assert refusal["code"] == "NOT_FOUND", refusal
        assert refusal["details"]["didYouMean"] == [meant]
        assert meant in refusal["hint"] and refusal["details"]["readAs"]
        assert refusal["suggestedTool"] == "read_file"
        assert refusal["suggestedArgs"] == {"path": meant}
        assert box.call("read_file", refusal["suggestedArgs"])["ok"] is True


def test_a_home_path_names_the_file_in_the_root(project):
    with Toolbox(project) as box:
        refusal = assert_valid_envelope(box.call("read_file", {"path": "~/src/util.py"}))
    assert refusal["code"] == "OUTSIDE_ROOT" and refusal["details"]["didYouMean"] == ["src/util.py"]
    assert refusal["suggestedArgs"] == {"path": "src/util.py"}


def test_an_edit_is_offered_again_on_the_file_meant(project):
    with Toolbox(project) as box:
        refusal = assert_valid_envelope(box.call("edit_file", {"path": "util.py", "oldText": "x = 1",
                                                               "newText": "x = 2"}))
        assert refusal["details"]["didYouMean"] == ["src/util.py"]
        assert (project / "src" / "util.py").read_text() == "x = 1\n"  # nothing changed
        follow = box.call(refusal["suggestedTool"], refusal["suggestedArgs"])
    assert follow["ok"] is True


def test_a_denied_file_is_never_offered(project):
    (project / "config").mkdir()
    (project / "config" / ".env").write_text("SECRET=1\n")
    with Toolbox(project) as box:
        refusal = box.call("read_file", {"path": ".env"})
    assert "didYouMean" not in refusal["details"]
    assert "config/.env" not in str(refusal)


def test_the_search_stops_at_its_bound_in_entries(project, monkeypatch):
    monkeypatch.setattr(locator, "MAX_ENTRIES", 40)
    crowd = project / "aaa"
    crowd.mkdir()
    for i in range(60):
        (crowd / f"f{i}.txt").write_text("")
    (project / "zzz").mkdir()
    (project / "zzz" / "target.py").write_text("")
    with Toolbox(project) as box:
        beyond = box.call("read_file", {"path": "target.py"})
        assert "didYouMean" not in beyond["details"]  # it lay past the bound
        monkeypatch.setattr(locator, "MAX_ENTRIES", 200)
        within = box.call("read_file", {"path": "target.py"})
    assert within["details"]["didYouMean"] == ["zzz/target.py"]
    assert within["details"]["searched"] <= 200 + 60


def test_the_search_stops_at_its_bound_in_time(project, monkeypatch):
    monkeypatch.setattr(locator, "MAX_SECONDS", 0.0)
    with Toolbox(project) as box:
        started = time.monotonic()
        refusal = box.call("read_file", {"path": "pkg/__init__.py"})
    assert "didYouMean" not in refusal["details"]
    assert time.monotonic() - started < 10  # a hang detector, not a timing


def test_a_wide_tree_is_searched_in_bounded_time(tmp_path):
    for d in range(30):
        sub = tmp_path / f"d{d}"
        sub.mkdir()
        for f in range(400):
            (sub / f"f{f}.txt").write_text("")
    with Toolbox(tmp_path) as box:
        started = time.monotonic()
        refusal = box.call("read_file", {"path": "nothing/like/this.py"})
        elapsed = time.monotonic() - started
    assert refusal["code"] == "NOT_FOUND" and "didYouMean" not in refusal["details"]
    assert elapsed < 10  # a hang detector: the walk is bounded by entries and time
