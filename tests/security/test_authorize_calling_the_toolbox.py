"""A host whose ``authorize`` calls the Toolbox again (a preview read, a
check made with another tool, an act of its own) while the call that asked
holds its step's locks: the inner call never waits on that call.  It runs
where it needs nothing the asking call holds (a read, a write in another
folder), and is refused at once where it does (``DENIED``, kind
``reentered``: a move or delete needs the whole tree, which the asking step
holds; a write in the folder the asking step holds): it would otherwise
wait out its deadline on a call that cannot go on before it returns.  The
asking call then ends as after any window in which the tree changed, and
the disk agrees with both answers.  Tried on every backend config, with
every mutating tool outside and inside, through ``call`` and through
``acall`` (from a loop the host's thread hands the call to, and from a
loop of the host's own thread)."""

from __future__ import annotations

import asyncio

import pytest

from corral.tools import Toolbox

INNER_SECONDS = 10  # far past an immediate answer; a call that waits on its asker hits it

PATCH_OUTER = ("*** Begin Patch\n*** Update File: y/a.txt\n@@\n-plain\n+outer\n"
               "*** End Patch\n")
PATCH_INNER = "*** Begin Patch\n*** Add File: z/p.txt\n+inner\n*** End Patch\n"

# the asking call: (tool, arguments, holds the whole tree exclusively)
OUTERS = {
    "write_file": (("write_file", {"path": "y/a.txt", "content": "outer\n", "overwrite": True}),
                   False),
    "edit_file": (("edit_file", {"path": "y/a.txt", "oldText": "plain", "newText": "outer"}),
                  False),
    "apply_patch": (("apply_patch", {"input": PATCH_OUTER}), False),
    "make_directory": (("make_directory", {"path": "y/made"}), False),
    "move_file": (("move_file", {"source": "y/a.txt", "destination": "y/moved.txt"}), True),
    "delete_file": (("delete_file", {"path": "y/a.txt"}), True),
}

# the host's own call: (tool, arguments, changes the tree, holds it exclusively,
# the folder it acts in, what it leaves on disk when done)
INNERS = {
    "read_file": (("read_file", {"path": "z/b.txt"}), False, False, None, {}),
    "write_file-same-folder": (("write_file", {"path": "y/inner.txt", "content": "inner\n"}),
                               True, False, "y", {"y/inner.txt": "inner\n"}),
    "write_file-other-folder": (("write_file", {"path": "z/inner.txt", "content": "inner\n"}),
                                True, False, "z", {"z/inner.txt": "inner\n"}),
    "edit_file": (("edit_file", {"path": "z/b.txt", "oldText": "plain", "newText": "inner"}),
                  True, False, "z", {"z/b.txt": "inner\n"}),
    "apply_patch": (("apply_patch", {"input": PATCH_INNER}), True, False, "z",
                    {"z/p.txt": "inner\n"}),
    "make_directory": (("make_directory", {"path": "q"}), True, False, ".", {"q": None}),
    "move_file": (("move_file", {"source": "z/b.txt", "destination": "z/c.txt"}), True, True,
                  "z", {"z/c.txt": "plain\n"}),
    "delete_file": (("delete_file", {"path": "z/b.txt"}), True, True, "z", {"z/b.txt": False}),
}


def _tree(base):
    (base / "y").mkdir()
    (base / "z").mkdir()
    (base / "y" / "a.txt").write_text("plain\n")
    (base / "z" / "b.txt").write_text("plain\n")


def _refused_at_once(outer: str, inner: str) -> bool:
    """Whether the inner call needs a lock the asking call holds."""
    _call, outer_exclusive = OUTERS[outer]
    _call, changes, inner_exclusive, folder, _left = INNERS[inner]
    return changes and (outer_exclusive or inner_exclusive or folder == "y")


def _outer_done(base, outer: str) -> None:
    if outer in ("write_file", "edit_file", "apply_patch"):
        assert (base / "y" / "a.txt").read_text() == "outer\n"
    elif outer == "make_directory":
        assert (base / "y" / "made").is_dir()
    elif outer == "move_file":
        assert not (base / "y" / "a.txt").exists()
        assert (base / "y" / "moved.txt").read_text() == "plain\n"
    else:
        assert not (base / "y" / "a.txt").exists()


def _inner_answer(base, outer: str, inner: str, got: dict) -> None:
    _call, changes, _exclusive, _folder, left = INNERS[inner]
    if _refused_at_once(outer, inner):
        assert got["ok"] is False, got
        assert (got["code"], got["details"]["kind"]) == ("DENIED", "reentered"), got
        assert outer in got["message"] and "authorize" in got["message"], got
        assert "after" in got["hint"], got
        # nothing of it done
        assert (base / "z" / "b.txt").read_text() == "plain\n"
        for rel in left:
            if rel != "z/b.txt":
                assert not (base / rel).exists(), rel
        assert not (base / "y" / "inner.txt").exists()
        return
    assert got["ok"] is True, got
    for rel, content in left.items():
        path = base / rel
        if content is False:
            assert not path.exists(), rel
        elif content is None:
            assert path.is_dir(), rel
        else:
            assert path.read_text() == content, rel


def _host(toolbox_of, inner_call, results, run):
    def authorize(request):
        if not results:  # the asking call's question only (the inner call asks too)
            results.append(None)
            results[0] = run(toolbox_of[0], inner_call)
        return True
    return authorize


def _sync(toolbox, call):
    name, args = call
    return toolbox.call(name, args, timeout=INNER_SECONDS)


@pytest.mark.parametrize("inner", sorted(INNERS))
@pytest.mark.parametrize("outer", sorted(OUTERS))
def test_a_call_from_authorize_never_waits_on_the_asking_call(tmp_path, make_root, outer,
                                                              inner):
    _tree(tmp_path)
    results: list = []
    toolbox_of: list = []
    (outer_call, _exclusive) = OUTERS[outer]
    inner_call = INNERS[inner][0]
    with Toolbox(make_root(tmp_path), authorize=_host(toolbox_of, inner_call, results,
                                                       _sync)) as toolbox:
        toolbox_of.append(toolbox)
        answer = toolbox.call(*outer_call)
    assert len(results) == 1, "the host was not asked"
    _inner_answer(tmp_path, outer, inner, results[0])
    assert answer["ok"] is True, answer
    _outer_done(tmp_path, outer)


def _through_the_loop(loop):
    """``acall`` handed to the loop the asking ``acall`` awaits in."""
    def run(toolbox, call):
        name, args = call
        future = asyncio.run_coroutine_threadsafe(
            toolbox.acall(name, args, timeout=INNER_SECONDS), loop)
        return future.result(timeout=INNER_SECONDS * 3)
    return run


def _own_loop(toolbox, call):
    """``acall`` awaited in a loop of the host's own thread."""
    name, args = call
    return asyncio.run(toolbox.acall(name, args, timeout=INNER_SECONDS))


@pytest.mark.parametrize("how", ["the-asking-loop", "an-own-loop"])
@pytest.mark.parametrize("inner", ["read_file", "write_file-same-folder",
                                   "write_file-other-folder", "move_file", "delete_file"])
@pytest.mark.parametrize("outer", ["edit_file", "move_file"])
def test_acall_from_authorize_never_waits_on_the_asking_call(tmp_path, make_root, outer, inner,
                                                             how):
    _tree(tmp_path)
    results: list = []
    toolbox_of: list = []
    outer_call = OUTERS[outer][0]
    inner_call = INNERS[inner][0]

    async def main():
        run = _through_the_loop(asyncio.get_running_loop()) if how == "the-asking-loop" \
            else _own_loop
        with Toolbox(make_root(tmp_path), authorize=_host(toolbox_of, inner_call, results,
                                                           run)) as toolbox:
            toolbox_of.append(toolbox)
            return await toolbox.acall(*outer_call)

    answer = asyncio.run(main())
    assert len(results) == 1, "the host was not asked"
    _inner_answer(tmp_path, outer, inner, results[0])
    assert answer["ok"] is True, answer
    _outer_done(tmp_path, outer)


def test_a_call_after_authorize_returned_runs(tmp_path, make_root):
    """The refusal is for a call made while the asking call waits on its
    host: the same call made after the host answered runs."""
    _tree(tmp_path)
    results: list = []
    toolbox_of: list = []
    inner_call = INNERS["move_file"][0]
    with Toolbox(make_root(tmp_path), authorize=_host(toolbox_of, inner_call, results,
                                                       _sync)) as toolbox:
        toolbox_of.append(toolbox)
        assert toolbox.call(*OUTERS["edit_file"][0])["ok"] is True
        assert results[0]["details"]["kind"] == "reentered"
        assert toolbox.call(*inner_call)["ok"] is True
    assert (tmp_path / "z" / "c.txt").read_text() == "plain\n"
    assert (tmp_path / "y" / "a.txt").read_text() == "outer\n"


@pytest.mark.parametrize("inner", ["read_file", "write_file-other-folder", "move_file"])
def test_a_call_from_a_question_asked_within_a_step_never_waits(tmp_path, make_root, inner):
    """Any question a step asks while it holds its locks counts, not only
    the one before its act: ``edit_file`` asks whether the model may be
    told that a file beside the one it edits holds the missing oldText."""
    _tree(tmp_path)
    (tmp_path / "y" / "b.txt").write_text("the text the model meant\n")
    results: list = []
    toolbox_of: list = []
    inner_call = INNERS[inner][0]
    with Toolbox(make_root(tmp_path), authorize=_host(toolbox_of, inner_call, results,
                                                       _sync)) as toolbox:
        toolbox_of.append(toolbox)
        answer = toolbox.call("edit_file", {"path": "y/a.txt",
                                            "oldText": "the text the model meant",
                                            "newText": "x"})
    assert len(results) == 1, "the host was not asked"
    got = results[0]
    if inner == "move_file":
        assert (got["code"], got["details"]["kind"]) == ("DENIED", "reentered"), got
        assert (tmp_path / "z" / "b.txt").read_text() == "plain\n"
    else:
        assert got["ok"] is True, got
    assert answer["code"] == "NOT_FOUND" and "y/b.txt" in answer["message"], answer
    assert (tmp_path / "y" / "a.txt").read_text() == "plain\n"
