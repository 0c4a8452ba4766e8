"""An independent red-team pass over the view's memory of plain decisions
(what the policy says of a path reached without a link, per path and op):
the memory starts over when the view's policy changes, and a Workspace
changes it before a call whenever a root's directory moved (its roots
then hold one another's rules anew) while other calls of the same
Toolbox, under ``acall``, may be deciding at that moment.

A decision that read the old policy and is starting the memory over for
it, interrupted there by a thread switch while a call under the new
policy starts it over for the new one, must not leave its old verdict
filed as the new policy's: the next call under the new policy is then
allowed where that policy protects.  The switch is made to land at the
point where the old decision first stores on the view (any store: the
test does not know how the memory is kept)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from corral.tools import Policy, Toolbox
from corral.tools._policy.rules import Op

# the call a model makes, and the op its decision on the path asks about
CALLS = {
    "write_file_new": (Op.CREATE, {"path": "inner/new.txt", "content": "model\n"}),
    "edit_file": (Op.EDIT, {"path": "inner/a.txt", "oldText": "user", "newText": "model"}),
}


def _protected(answer: dict[str, Any]) -> bool:
    return answer["ok"] is False and answer["details"]["kind"] == "protected"


@pytest.mark.parametrize("call", sorted(CALLS))
def test_a_hold_landing_while_an_old_decision_starts_the_memory_over_leaves_no_old_verdict(
        tmp_path: Path, make_root, call: str) -> None:
    op, args = CALLS[call]
    tool = call.removesuffix("_new")
    (tmp_path / "inner").mkdir()
    (tmp_path / "inner" / "a.txt").write_text("user\n")
    box = Toolbox(make_root(str(tmp_path)))
    view = box._view
    inner_rules = Policy.build(protect=["a.txt", "new.txt"])
    switched: list[dict[str, Any]] = []

    class _SwitchAtFirstStore(type(view)):  # type: ignore[misc]
        def __setattr__(self, name: str, value: object) -> None:
            super().__setattr__(name, value)
            if switched:
                return
            switched.append({})
            # the other thread: the workspace holds the inner root's rules,
            # and the same call decides under them (and is refused)
            box.hold("inner", inner_rules)
            switched[0] = box.call(tool, args)

    view.__class__ = _SwitchAtFirstStore
    try:
        # the decision of a call that read the policy before the hold
        assert view.rule_at(args["path"], op, lambda: False) is None
    finally:
        view.__class__ = _SwitchAtFirstStore.__mro__[1]
    assert switched and _protected(switched[0]), switched
    answer = box.call(tool, args)
    assert _protected(answer), answer
    assert (tmp_path / "inner" / "a.txt").read_text() == "user\n"
    assert not (tmp_path / "inner" / "new.txt").exists()
