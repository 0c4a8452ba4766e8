"""Every call is bounded (a model must never be left waiting).  A deadline (``timeout``, default
``Limits.call_seconds``) and a cancel token stop a tool at its next
checkpoint, in every loop of every tool that loops; ``acall`` runs a call in
a worker thread and cancels it when the awaiting task is cancelled.

Time is driven deterministically: a fake clock replaces the deadline's
clock, and a backend hook moves it (or sets the cancel token, or blocks) at
a chosen system call inside the loop under test.  No test races the wall
clock.
"""

from __future__ import annotations

import asyncio
import json
import threading

import pytest

from .helpers.envelope import assert_valid_envelope
from .helpers.faults import FakeClock, HookBackend, on_file

from corral.contained import Root
from corral.tools import CancelToken, Limits, Progress, Toolbox
import corral.tools._runtime.context as context_module

BIG = 3 * 1024 * 1024  # over read_file's one-read size: the streaming loop runs


@pytest.fixture
def clock(monkeypatch):
    fake = FakeClock()
    monkeypatch.setattr(context_module, "_now", fake)
    return fake


def hooked_root(make_root, path, hooks, on_fd=None):
    """A root of this test's backend config whose backend runs ``hooks``
    (on calls on an fd ``on_fd`` accepts, if given)."""
    plain = make_root(path)
    backend = HookBackend(plain.backend, hooks, on_fd=on_fd)
    root = Root(path, backend=backend, fast_path=make_root.fast_path)
    return root


def after_first(action):
    """A hook that does ``action`` from its second call on (the first call
    happens before the loop under test starts looping)."""
    calls = {"n": 0}

    def hook():
        calls["n"] += 1
        if calls["n"] >= 2:
            action()
    return hook


def time_limited(result, tool):
    assert_valid_envelope(result)
    assert result["code"] == "TOO_LARGE", result
    assert result["details"]["kind"] == "time_limit"
    assert result["message"] == (f"{tool} ran past its time limit of 30 s and was stopped; "
                                 "nothing was changed")
    assert result["hint"] == ("Narrow the call (a smaller path, a more specific pattern, a "
                              "smaller window) and try again.")
    return result


# -- the time_limit refusal, tool by tool (each loop that reads model-sized input) --------

def test_read_file_stream_loop_stops_at_the_deadline(tmp_path, make_root, clock):
    (tmp_path / "big.log").write_bytes(b"line\n" * (BIG // 5))
    root = hooked_root(make_root, tmp_path, {"pread": after_first(clock.advance)})
    with Toolbox(root) as toolbox:
        time_limited(toolbox.call("read_file", {"path": "big.log"}), "read_file")
        clock.now = 0.0  # a fresh call gets a fresh deadline
        toolbox_ok = Toolbox(make_root(tmp_path))
        assert toolbox_ok.call("read_file", {"path": "big.log", "limit": 1})["ok"] is True


def test_list_directory_loop_stops_at_the_deadline(tmp_path, make_root, clock):
    for i in range(600):
        (tmp_path / f"f{i:03}").write_text("")
    root = hooked_root(make_root, tmp_path, {"scandir": clock.advance})
    with Toolbox(root) as toolbox:
        time_limited(toolbox.call("list_directory", {"path": "."}), "list_directory")


def test_write_file_digest_loop_stops_at_the_deadline(tmp_path, make_root, clock):
    (tmp_path / "old.txt").write_text("old\n")
    root = hooked_root(make_root, tmp_path, {"pread": clock.advance})
    with Toolbox(root) as toolbox:
        time_limited(toolbox.call("write_file", {"path": "old.txt", "content": "new\n",
                                                 "overwrite": True}), "write_file")
    assert (tmp_path / "old.txt").read_text() == "old\n"


def test_move_file_inside_walk_stops_at_the_deadline(tmp_path, make_root, clock):
    (tmp_path / "pkg" / "sub").mkdir(parents=True)
    (tmp_path / "pkg" / "sub" / "a.py").write_text("")
    root = hooked_root(make_root, tmp_path, {"scandir": clock.advance})
    with Toolbox(root, deny=["*.secret"]) as toolbox:
        time_limited(toolbox.call("move_file", {"source": "pkg", "destination": "lib"}),
                     "move_file")
    assert (tmp_path / "pkg" / "sub" / "a.py").exists() and not (tmp_path / "lib").exists()


def test_delete_file_digest_loop_stops_at_the_deadline(tmp_path, make_root, clock):
    (tmp_path / "gone.txt").write_text("data\n")
    root = hooked_root(make_root, tmp_path, {"pread": clock.advance})
    with Toolbox(root) as toolbox:
        time_limited(toolbox.call("delete_file", {"path": "gone.txt"}), "delete_file")
    assert (tmp_path / "gone.txt").exists()


# -- cancellation --------------------------------------------------------------------------

def test_cancel_token_set_mid_read_stops_the_call(tmp_path, make_root):
    (tmp_path / "big.log").write_bytes(b"line\n" * (BIG // 5))
    token = CancelToken()
    root = hooked_root(make_root, tmp_path, {"pread": after_first(token.cancel)})
    with Toolbox(root) as toolbox:
        result = toolbox.call("read_file", {"path": "big.log"}, cancel=token)
    assert_valid_envelope(result)
    assert (result["code"], result["details"]["kind"]) == ("DENIED", "cancelled")
    assert result["message"] == ("read_file was cancelled by the host before it finished; "
                                 "nothing was changed")
    assert token.cancelled


def test_cancelled_write_leaves_the_file_as_it_was(tmp_path, make_root):
    (tmp_path / "keep.txt").write_text("keep\n")
    token = CancelToken()
    root = hooked_root(make_root, tmp_path, {"pread": token.cancel})
    with Toolbox(root) as toolbox:
        result = toolbox.call("write_file", {"path": "keep.txt", "content": "lost\n",
                                             "overwrite": True}, cancel=token)
    assert result["details"]["kind"] == "cancelled"
    assert (tmp_path / "keep.txt").read_text() == "keep\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["keep.txt"]  # no temp file left


def test_timeout_zero_refuses_at_the_first_checkpoint(tmp_path):
    (tmp_path / "big.log").write_bytes(b"line\n" * (BIG // 5))
    result = Toolbox(tmp_path).call("read_file", {"path": "big.log"}, timeout=0)
    assert result["code"] == "TOO_LARGE" and result["details"]["kind"] == "time_limit"
    assert result["details"]["seconds"] == 0


def test_limits_call_seconds_is_the_default_deadline(tmp_path, make_root, clock):
    (tmp_path / "old.txt").write_text("old\n")
    root = hooked_root(make_root, tmp_path, {"pread": lambda: clock.advance(5)})
    with Toolbox(root, limits=Limits(call_seconds=4)) as toolbox:
        result = toolbox.call("write_file", {"path": "old.txt", "content": "x",
                                             "overwrite": True})
        assert result["details"] == {"kind": "time_limit", "seconds": 4, "message": result[
            "message"]}
    with Toolbox(hooked_root(make_root, tmp_path, {"pread": lambda: clock.advance(5)}),
                 limits=Limits(call_seconds=4)) as toolbox:
        # an explicit timeout wins over the limit
        assert toolbox.call("write_file", {"path": "old.txt", "content": "x", "overwrite": True},
                            timeout=60)["ok"] is True


def test_progress_callback_failure_does_not_break_the_call(tmp_path):
    seen: list[Progress] = []

    def progress(report: Progress) -> None:
        seen.append(report)
        raise RuntimeError("host bug")

    toolbox = Toolbox(tmp_path)
    state_ctx = toolbox._state.context("x", seconds=1, progress=progress)
    state_ctx.progress(3, 10, "files")
    assert seen == [Progress(3, 10, "files")]


# -- acall ---------------------------------------------------------------------------------

def test_acall_answers_like_call(tmp_path):
    (tmp_path / "a.txt").write_text("hello\n")
    toolbox = Toolbox(tmp_path)
    expected = toolbox.call("read_file", {"path": "a.txt"})
    assert asyncio.run(toolbox.acall("read_file", {"path": "a.txt"})) == expected
    refused = asyncio.run(toolbox.acall("read_file", {"path": "nope.txt"}))
    assert refused == toolbox.call("read_file", {"path": "nope.txt"})


def test_acall_cancelled_task_stops_the_call_before_it_returns(tmp_path, make_root):
    """Cancelling the awaiting task cancels the call at its next checkpoint,
    and CancelledError reaches the caller only once the worker has stopped."""
    (tmp_path / "big.log").write_bytes(b"line\n" * (BIG // 5))
    entered, release = threading.Event(), threading.Event()
    reads = {"after_release": 0}

    def hook():
        if release.is_set():
            reads["after_release"] += 1
            return
        entered.set()
        release.wait(10)

    root = hooked_root(make_root, tmp_path, {"pread": hook}, on_file(tmp_path / "big.log"))
    toolbox = Toolbox(root)

    async def scenario():
        task = asyncio.ensure_future(toolbox.acall("read_file", {"path": "big.log"}))
        await asyncio.get_running_loop().run_in_executor(None, entered.wait, 10)
        task.cancel()
        for _ in range(3):
            await asyncio.sleep(0)  # the task runs its cancellation handler
        release.set()
        with pytest.raises(asyncio.CancelledError):
            await task
        return task

    asyncio.run(scenario())
    # the pread that was blocked finished; the checkpoint before the next one stopped the call
    assert reads["after_release"] == 0
    toolbox.close()


def test_acall_honours_the_callers_cancel_token(tmp_path):
    (tmp_path / "a.txt").write_text("hello\n")
    token = CancelToken()
    token.cancel()
    result = asyncio.run(Toolbox(tmp_path).acall("read_file", {"path": "a.txt"}, cancel=token))
    assert result["details"]["kind"] == "cancelled"


# -- null means "not given" (OpenAI strict mode, openai-agents) ---------------------------

@pytest.mark.parametrize("tool, args", [
    ("read_file", {"path": "a.txt", "offset": None, "limit": None}),
    ("list_directory", {"path": None}),
    ("write_file", {"path": "b.txt", "content": "x\n", "overwrite": None,
                    "expectedSha256": None}),
    ("move_file", {"source": "a.txt", "destination": "c.txt", "overwrite": None}),
])
def test_null_optional_arguments_are_not_given(tmp_path, tool, args):
    (tmp_path / "a.txt").write_text("hello\n")
    result = Toolbox(tmp_path).call(tool, args)
    assert result["ok"] is True, result
    json.dumps(result)


def test_null_required_argument_is_refused_naming_it(tmp_path):
    result = Toolbox(tmp_path).call("read_file", {"path": None})
    assert result["code"] == "INVALID_ARGUMENT"
    assert result["message"] == "read_file: argument 'path' must be a string, not null"


def test_ctx_call_runs_a_tool_within_the_call(tmp_path):
    """A tool that runs others (read_files) gets full envelopes, suggestions
    verified, under the outer call's deadline and the host's authorize."""
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "util.py").write_text("x = 1\n")
    asked = []
    toolbox = Toolbox(tmp_path, authorize=lambda request: asked.append(request.path) or True)
    ctx = toolbox._state.context("read_files", seconds=30)
    ok = ctx.call("read_file", {"path": "src/util.py"})
    assert ok["ok"] is True and asked == ["src/util.py"]
    typo = ctx.call("read_file", {"path": "src/utl.py"})
    assert typo["suggestedTool"] == "read_file" and typo["suggestedArgs"] == {"path": "src/util.py"}
    late = toolbox._state.context("read_files", seconds=0)
    (tmp_path / "big.log").write_bytes(b"line\n" * (BIG // 5))
    assert late.call("read_file", {"path": "big.log"})["details"]["kind"] == "time_limit"
