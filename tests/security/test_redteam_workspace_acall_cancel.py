"""An independent red-team pass over ``Workspace.acall`` as an agent
framework drives it (the OpenAI Agents SDK runs one turn's tool calls with
``asyncio.gather`` and cancels the turn's tasks when it gives up on them).

``Toolbox.acall`` cancelled waits for its call to stop before re-raising
``CancelledError``, so nothing of the call happens after the framework
was told it ended.  ``Workspace.acall`` (several roots, ``corral serve
web api``'s embedding) re-raised at once while the call ran on in its
worker thread: a write held in the host's ``authorize`` went on after the
framework's task had ended (and it took no ``cancel`` token of the host's,
as ``Toolbox.acall`` does: ``TypeError``).  Now it waits as the Toolbox's
does, and a host's token given to it stops the call.  On every backend
config.
"""

from __future__ import annotations

import asyncio
import threading

from corral.tools import CancelToken, Toolbox, Workspace

RELEASE_AFTER = 1.0  # the host's authorize lets go this long after the cancel


def _workspace(tmp_path, make_root, authorize) -> Workspace:
    for name in ("web", "api"):
        (tmp_path / name).mkdir()
    return Workspace({"web": Toolbox(make_root(str(tmp_path / "web")), authorize=authorize),
                      "api": Toolbox(make_root(str(tmp_path / "api")))})


def test_a_cancelled_acall_returns_once_its_call_has_stopped(tmp_path, make_root):
    asked, let_go = threading.Event(), threading.Event()

    def authorize(request):
        asked.set()
        let_go.wait(30)
        return True

    ws = _workspace(tmp_path, make_root, authorize)

    async def turn() -> bool:
        task = asyncio.create_task(ws.acall("write_file", {"path": "web/new.txt",
                                                           "content": "x\n"}))
        await asyncio.get_running_loop().run_in_executor(None, asked.wait, 30)
        task.cancel()
        threading.Timer(RELEASE_AFTER, let_go.set).start()
        try:
            await task
        except asyncio.CancelledError:
            return let_go.is_set()  # the call was still held when acall gave up on it?
        return True

    finished = asyncio.run(turn())
    let_go.set()
    assert finished, "Workspace.acall re-raised CancelledError while its call still ran"
    assert not (tmp_path / "web" / "new.txt").exists()


def test_a_hosts_cancel_token_stops_an_acall(tmp_path, make_root):
    asked = threading.Event()
    token = CancelToken()

    def authorize(request):
        asked.set()
        token.cancel()
        return True

    ws = _workspace(tmp_path, make_root, authorize)
    answer = asyncio.run(ws.acall("write_file", {"path": "web/new.txt", "content": "x\n"},
                                  cancel=token))
    assert asked.is_set()
    assert answer["ok"] is False, answer
    assert answer["details"]["kind"] == "cancelled", answer
    assert not (tmp_path / "web" / "new.txt").exists()
