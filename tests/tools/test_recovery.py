"""Recovery: every refusal that offers suggestedTool/suggestedArgs - in
every catalogue case, expected or not - names a call that succeeds exactly
as offered, and suggestions are tried without asking the host."""

from __future__ import annotations

import pytest

from .helpers.catalogue import load_cases, run_case

from corral.tools import ReadRequest, Toolbox
from corral.tools._runtime.registry import load_tools, read_only_tools

CASES = load_cases()
# suggestions are tried, so only tools that change nothing, or a change
# tried as its dry run, may be offered
READ_ONLY = set(read_only_tools(load_tools().values()))
DRY_RUN = {name for name, spec in load_tools().items()
           if "dryRun" in spec.schema.get("properties", {})}


@pytest.mark.parametrize("case", CASES, ids=[f"{c.tool}:{c.name}" for c in CASES])
def test_offered_call_succeeds(case, tmp_path):
    envelope, toolbox = run_case(case, tmp_path)
    if "suggestedTool" not in envelope:
        assert "suggestedArgs" not in envelope
        return
    assert envelope["suggestedTool"] in READ_ONLY | DRY_RUN
    assert "dryRun" not in envelope["suggestedArgs"]  # the call itself, not its trial
    follow = toolbox.call(envelope["suggestedTool"], envelope["suggestedArgs"])
    assert follow["ok"] is True, (envelope, follow)


def test_catalogue_offers_suggestions():
    """The recovery test above is not vacuous: cases expecting a suggestion
    exist for each kind the contract names."""
    offered = {(c.tool, c.suggested_tool) for c in CASES if c.suggested_tool}
    assert ("read_file", "glob") in offered
    assert ("read_file", "read_file") in offered
    assert ("list_directory", "read_file") in offered
    assert ("list_directory", "list_directory") in offered


def test_suggestion_that_would_fail_is_dropped(tmp_path):
    # the only close name is a hard-linked file, which read_file refuses
    (tmp_path / "data.txt").write_text("x\n")
    (tmp_path / "more").mkdir()
    import os
    os.link(tmp_path / "data.txt", tmp_path / "more" / "copy.txt")
    envelope = Toolbox(tmp_path).call("read_file", {"path": "dta.txt"})
    assert envelope["code"] == "NOT_FOUND"
    assert envelope["details"]["didYouMean"] == ["data.txt"]
    # read_file of data.txt would be refused (2 links), so that is not offered
    assert envelope.get("suggestedTool") != "read_file"
    if "suggestedTool" in envelope:
        follow = Toolbox(tmp_path).call(envelope["suggestedTool"], envelope["suggestedArgs"])
        assert follow["ok"] is True


def test_trying_a_suggestion_does_not_ask_the_host(tmp_path):
    (tmp_path / "util.py").write_text("x = 1\n")
    asked = []

    def authorize(request):
        asked.append(request)
        return True

    toolbox = Toolbox(tmp_path, authorize=authorize)
    envelope = toolbox.call("read_file", {"path": "utl.py"})
    assert envelope["suggestedTool"] == "read_file"
    assert asked == []  # the model asked for nothing the host could see yet
    assert toolbox.call("read_file", envelope["suggestedArgs"])["ok"] is True
    assert asked == [ReadRequest("util.py")]
