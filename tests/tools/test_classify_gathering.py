"""The facts classify is given are gathered through the call's view, and only
those the error makes matter: a refusal that names no close names lists no
directory.  Real files in a temporary directory, through ``Toolbox.call``."""

from __future__ import annotations

import pytest

from corral.tools import Toolbox
from corral.tools._runtime.view import CallView


@pytest.fixture
def listed(monkeypatch):
    """The directories the call's view listed."""
    seen: list[str] = []
    entries = CallView.entries

    def counting(self, rel):
        seen.append(rel)
        return entries(self, rel)

    monkeypatch.setattr(CallView, "entries", counting)
    return seen


def test_a_missing_name_is_answered_from_the_listing_of_its_directory(tmp_path, listed):
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "main.py").write_text("x = 1\n")
    with Toolbox(tmp_path) as box:
        result = box.call("read_file", {"path": "src/mian.py"})
    assert result["code"] == "NOT_FOUND"
    assert result["details"]["didYouMean"] == ["src/main.py"]
    assert result["suggestedArgs"] == {"path": "src/main.py"}
    assert "src" in listed


@pytest.mark.parametrize("path", ["a.txt/b", "d"])
def test_an_error_that_names_no_close_names_lists_nothing(tmp_path, listed, path):
    (tmp_path / "a.txt").write_text("a\n")
    (tmp_path / "d").mkdir()
    with Toolbox(tmp_path) as box:
        result = box.call("read_file", {"path": path})
    assert result["ok"] is False and result["code"] == "INVALID_ARGUMENT"
    assert listed == []


def test_a_close_name_a_rule_hides_is_never_gathered(tmp_path, listed):
    (tmp_path / "secrets").mkdir()
    (tmp_path / "secrets" / "key.txt").write_text("k\n")
    (tmp_path / "notes").mkdir()
    with Toolbox(tmp_path, deny=["secrets/**"]) as box:
        result = box.call("read_file", {"path": "secret/key.txt"})
    assert result["code"] == "NOT_FOUND"
    assert "didYouMean" not in result["details"], result
    assert "secrets" not in str(result)
