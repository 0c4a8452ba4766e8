"""A host's ``authorize`` whose call of the Toolbox waits, through another
thread, on the call that asked.

* A three-party cycle: the asking call holds folder B while its host
  decides; a patch sent at the same time (another thread) holds folder A
  and waits for B; the host's ``authorize`` then writes in A.  The inner
  call waited on the patch, the patch on the asking call, the asking call
  on ``authorize``: all three until the inner call's deadline.  The inner
  call is refused at once now (``DENIED``, kind ``reentered``): the patch
  holding A waits on a folder the asking call holds.  The asking call and
  the patch then end as they would have.
* A host that hands its call to a thread of its own (a bare
  ``ThreadPoolExecutor.submit``, which carries no context): nothing ties
  that call to the asking one, so it waits as any other call of the
  process waits for a lock held while a host decides, to its own deadline;
  then it is answered ``time_limit`` and the asking call goes on.  The
  bound holds: every call ends, typed, within an order of magnitude of the
  inner call's deadline (docs/policy.md, "A host calling the Toolbox").

On every backend config.
"""

from __future__ import annotations

import contextvars
import os
import time
from concurrent.futures import ThreadPoolExecutor


from corral.tools import Toolbox

INNER_SECONDS = 4  # the inner call's deadline: a call refused at once never nears it


def _folders(base):
    """Two folders, ``first`` locked before ``second`` by a call needing
    both (the view takes them in (device, inode) order)."""
    one, two = base / "p", base / "q"
    for folder in (one, two):
        folder.mkdir()
        (folder / "a.txt").write_text("plain\n")
    key = lambda path: (os.stat(path).st_dev, os.stat(path).st_ino)  # noqa: E731
    return (one, two) if key(one) < key(two) else (two, one)


def _patch(first, second, base):
    rel = lambda path: path.relative_to(base).as_posix()  # noqa: E731
    return ("*** Begin Patch\n"
            f"*** Update File: {rel(first)}/a.txt\n@@\n-plain\n+patched\n"
            f"*** Update File: {rel(second)}/a.txt\n@@\n-plain\n+patched\n"
            "*** End Patch\n")


def test_a_call_waiting_on_a_patch_that_waits_on_the_asking_call_is_refused_at_once(
        tmp_path, make_root):
    first, second = _folders(tmp_path)
    rel = lambda path: path.relative_to(tmp_path).as_posix()  # noqa: E731
    patch_answer: list = []
    inner: list = []
    toolbox_of: list = []
    pool = ThreadPoolExecutor(1)

    def authorize(request):
        if request.path == f"{rel(second)}/b.txt" and not inner:
            inner.append(None)
            box = toolbox_of[0]
            # the patch: holds the first folder, then waits for the second
            pending = pool.submit(box.call, "apply_patch",
                                  {"input": _patch(first, second, tmp_path)})
            patch_answer.append(pending)
            time.sleep(0.5)  # the patch takes the first folder and waits
            began = time.monotonic()
            inner[0] = (box.call("write_file", {"path": f"{rel(first)}/inner.txt",
                                                "content": "inner\n"}, timeout=INNER_SECONDS),
                        time.monotonic() - began)
        return True

    with Toolbox(make_root(tmp_path), authorize=authorize) as toolbox:
        toolbox_of.append(toolbox)
        answer = toolbox.call("write_file", {"path": f"{rel(second)}/b.txt",
                                             "content": "outer\n"})
        patched = patch_answer[0].result(timeout=INNER_SECONDS * 10)
    pool.shutdown()
    got, seconds = inner[0]
    assert (got["code"], got["details"]["kind"]) == ("DENIED", "reentered"), got
    assert seconds < INNER_SECONDS / 2, seconds  # at once, not at its deadline
    assert not (first / "inner.txt").exists()
    assert answer["ok"] is True, answer
    assert (second / "b.txt").read_text() == "outer\n"
    assert patched["ok"] is True, patched
    assert (first / "a.txt").read_text() == (second / "a.txt").read_text() == "patched\n"


def _handed_to_a_thread(tmp_path, make_root, carry_context: bool):
    """A write in folder ``second`` whose host's ``authorize`` hands a write
    in that same folder to a thread of its own (with the asking call's
    context or a bare one): the asking call's answer and seconds, the inner
    call's answer and seconds, and ``second``."""
    _, second = _folders(tmp_path)
    folder = second.relative_to(tmp_path).as_posix()
    inner_args = {"path": f"{folder}/inner.txt", "content": "inner\n"}
    inner: list = []
    toolbox_of: list = []
    pool = ThreadPoolExecutor(1)

    def authorize(request):
        if not inner:
            inner.append(None)
            began = time.monotonic()
            call = toolbox_of[0].call
            task = (contextvars.copy_context().run, call) if carry_context else (call,)
            pending = pool.submit(*task, "write_file", inner_args, timeout=INNER_SECONDS)
            inner[0] = (pending.result(timeout=INNER_SECONDS * 10), time.monotonic() - began)
        return True

    with Toolbox(make_root(tmp_path), authorize=authorize) as toolbox:
        toolbox_of.append(toolbox)
        began = time.monotonic()
        answer = toolbox.call("write_file", {"path": f"{folder}/b.txt", "content": "outer\n"})
        seconds = time.monotonic() - began
    pool.shutdown()
    got, inner_seconds = inner[0]
    return answer, seconds, got, inner_seconds, second


def test_a_call_the_host_hands_to_a_bare_thread_ends_by_its_deadline(tmp_path, make_root):
    answer, seconds, got, _, second = _handed_to_a_thread(tmp_path, make_root, False)
    # a hang detector: the deadline bounds it, within an order of magnitude
    assert seconds < INNER_SECONDS * 10, seconds
    assert got["ok"] is False and got["details"]["kind"] == "time_limit", got
    assert not (second / "inner.txt").exists()
    assert answer["ok"] is True, answer
    assert (second / "b.txt").read_text() == "outer\n"


def test_a_call_handed_to_a_thread_with_the_context_is_refused_at_once(tmp_path, make_root):
    """The way out docs/policy.md gives: the context carried to the thread
    (``contextvars.copy_context().run``) makes the call known as the host's."""
    answer, _, got, inner_seconds, second = _handed_to_a_thread(tmp_path, make_root, True)
    assert (got["code"], got["details"]["kind"]) == ("DENIED", "reentered"), got
    assert inner_seconds < INNER_SECONDS / 2, inner_seconds
    assert answer["ok"] is True and not (second / "inner.txt").exists(), answer
