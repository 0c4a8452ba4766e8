"""An independent red-team pass over the view's lock where ``flock``
cannot be had (a filesystem without locks: ``ENOLCK``, injected through
the fault-injecting backend): a step on one place then takes this
process's thread lock on its directory instead.  It was keyed by the
directory's path in its root, while a step on several places (apply_patch)
keys it by the directory's identity, and a second root nested in the
first names the same directory by another path: two calls acting in one
directory took two different locks.  An edit made while another call
was between its check and its rename was answered ``ok`` and then
replaced by the other call's rename: lost, though the model was told it
landed.

The second call is made from a fault hook on the first call's rename
(``rename_at``), so the interleaving is forced; with the lock it waits
for the first call and runs out of its (short) time: a refusal, never an
``ok`` for an edit that is not on disk.  Every backend config runs.
"""

from __future__ import annotations

import errno
from pathlib import Path

from corral.contained import Root, backend_by_name
from corral.testing.backends import Fault, FaultBackend
from corral.tools import Toolbox


def _without_locks(make_root, *faults: Fault) -> FaultBackend:
    return FaultBackend(backend_by_name(make_root.backend_name),
                        Fault("flock", errno.ENOLCK, times=-1), *faults)


def _landed(answers: dict[str, dict], text: str, lines: dict[str, str]) -> None:
    """Every edit answered ok is on disk."""
    for who, answer in answers.items():
        if answer["ok"]:
            assert lines[who] in text, (who, answers, text)


def test_edits_from_nested_roots_on_a_filesystem_without_locks_all_land(tmp_path: Path,
                                                                        make_root) -> None:
    (tmp_path / "src").mkdir()
    file = tmp_path / "src" / "f.txt"
    file.write_text("one\ntwo\n")
    inner_root = Root(str(tmp_path / "src"), backend=_without_locks(make_root),
                      fast_path=make_root.fast_path)
    inner = Toolbox(inner_root)
    answers: dict[str, dict] = {}

    def inner_edit() -> None:
        answers["inner"] = inner.call("edit_file", {"path": "f.txt", "oldText": "two\n",
                                                    "newText": "TWO\n"}, timeout=1)

    between = Fault("rename_at", None, name="f.txt", hook=inner_edit)
    outer_root = Root(str(tmp_path), backend=_without_locks(make_root, between),
                      fast_path=make_root.fast_path)
    try:
        answers["outer"] = Toolbox(outer_root).call(
            "edit_file", {"path": "src/f.txt", "oldText": "one\n", "newText": "ONE\n"},
            timeout=10)
    finally:
        outer_root.close()
        inner_root.close()
    assert between.fired == 1
    assert answers["outer"]["ok"], answers
    _landed(answers, file.read_text(), {"outer": "ONE\n", "inner": "TWO\n"})


def test_an_edit_beside_a_patch_on_a_filesystem_without_locks_lands(tmp_path: Path,
                                                                    make_root) -> None:
    file = tmp_path / "f.txt"
    file.write_text("one\ntwo\n")
    answers: dict[str, dict] = {}
    boxes: list[Toolbox] = []

    def edit() -> None:
        answers["edit"] = boxes[0].call("edit_file", {"path": "f.txt", "oldText": "two\n",
                                                      "newText": "TWO\n"}, timeout=1)

    between = Fault("rename_at", None, name="f.txt", hook=edit)
    root = Root(str(tmp_path), backend=_without_locks(make_root, between),
                fast_path=make_root.fast_path)
    try:
        boxes.append(Toolbox(root))
        patch = "*** Begin Patch\n*** Update File: f.txt\n@@\n-one\n+ONE\n*** End Patch\n"
        answers["patch"] = boxes[0].call("apply_patch", {"input": patch}, timeout=10)
    finally:
        root.close()
    assert between.fired == 1
    assert answers["patch"]["ok"], answers
    _landed(answers, file.read_text(), {"patch": "ONE\n", "edit": "TWO\n"})
