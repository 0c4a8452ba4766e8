"""The stdio server: reads lines, runs calls on a small pool, writes answers.

Threads take turns (leader/follower): one of them reads; the others run
calls or wait.  The reader decodes each line, feeds it to the
:class:`~corral.mcp._session.Session` and acts on what comes back itself
(``ping``, ``notifications/cancelled``...), so those are answered while calls
run.  When a line is a call the :class:`~corral.mcp._scheduler.Scheduler`
lets start, the reader hands reading to another thread (a waiting one, or a
new one while there are fewer than ``workers + 1``) and runs the call itself:
no hand-over sits between a request and its work.  When every worker is busy
the call waits in the queue and the reader keeps reading.  Every message is
written whole under one lock; a call's answer and its progress notifications
are shaped under that lock too, so no progress follows an answer.

A line longer than ``max_line_bytes`` is never held in memory: its first
and last 4 KiB are kept (to find its id), the rest is read and dropped, and
it is answered ``-32600``.

Large lines (1 MiB and more) are read into one ``bytearray`` that grows in
place (never joined from chunks, never copied to drop the newline) and is
emptied once decoded.  What the queued and running large calls hold (their
parsed arguments' real size) is counted until a call's arguments are
dropped (after it ran, before its answer is written); past ``held_limit``
the reader parses no new large line until that count falls, so a flood of
large calls holds about ``held_limit`` plus one line, whether or not the
client reads.
"""

from __future__ import annotations

import io
import logging
import os
import select
import signal
import sys
import threading
import time
from dataclasses import dataclass, replace
from typing import Any, BinaryIO, NamedTuple, TextIO
from collections.abc import Callable, Iterator
from contextlib import contextmanager

from ..hosts import file_uri_path as _file_uri_path
from ..tools import CancelToken, Progress, Refusal, Workspace
from . import _memory, _wire
from ._catalog import Catalog
from ._output import Output
from ._scheduler import Job, Scheduler
from ._session import (LOG_LEVELS, SERVER_BUSY, Cancel, RootsListed, Send, SendLine, Session,
                       ToolCall, is_own_request)

__all__ = ["StdioServer", "DEFAULT_MAX_LINE_BYTES", "DEFAULT_WORKERS", "file_uri_path"]

log = logging.getLogger("corral.mcp")

DEFAULT_MAX_LINE_BYTES = 16 * 1024 * 1024
DEFAULT_WORKERS = 4
DEFAULT_HELD_LIMIT = 64 << 20  # bytes the large calls' arguments may hold before reading waits
_LARGE_CHUNK = 1 << 20  # what a large line is read by
_KEEP = 4096  # bytes of an oversized line kept at each end, to find its id
HANDOVER_AFTER = 0.02  # seconds a reader's call runs before another thread reads
HALT_GRACE = 0.5  # seconds calls get to reach a checkpoint once the server must stop now
# seconds the calls asked before the input ended get to finish and be answered
# (a client that writes its calls and closes stdin reads their answers: a
# call takes milliseconds, a hundred times less); then the rest are cancelled
EOF_GRACE = 0.5
STANDBY_FOR = 1.0  # seconds without calls after which the standby thread sleeps
_LOG_RATE = 20  # log notifications per second at most


class _Oversized(NamedTuple):
    head: bytes
    tail: bytes
    size: int


class MainWake:
    """A pipe the main thread polls while it waits for the server to end.

    The kernel hands a signal sent to the process to any one thread that
    does not block it, and Python runs the handler in the main thread
    only, at its next bytecode: a main thread blocked on a lock is woken
    only by a signal handed to itself, and one another thread took leaves
    it waiting, the signal spent.  ``signal.set_wakeup_fd`` writes this
    pipe from whichever thread takes the signal, and the server writes it
    once it is done: either ends the poll, and the handler runs."""

    def __init__(self) -> None:
        # os.pipe, not pipe2 (Darwin has none): close-on-exec already, made non-blocking
        self.read_fd, self.write_fd = os.pipe()
        os.set_blocking(self.read_fd, False)
        os.set_blocking(self.write_fd, False)

    def poke(self) -> None:
        try:
            os.write(self.write_fd, b"\0")
        except BlockingIOError:  # full: a wake-up is pending already
            pass

    def wait_for(self, event: threading.Event) -> None:
        """Wait until ``event`` is set; a signal's handler raises here."""
        poller = select.poll()
        poller.register(self.read_fd, select.POLLIN)
        while not event.is_set():
            poller.poll()
            try:
                while os.read(self.read_fd, 512):
                    pass
            except BlockingIOError:
                pass

    def close(self) -> None:
        os.close(self.read_fd)
        os.close(self.write_fd)


@dataclass
class _Running:
    """What a job carries: the workspace it was routed in and its token."""

    workspace: Workspace
    token: CancelToken


class StdioServer:
    """One MCP connection over a pair of byte streams."""

    def __init__(self, workspace: Workspace, *, version: str,
                 max_line_bytes: int = DEFAULT_MAX_LINE_BYTES, workers: int = DEFAULT_WORKERS,
                 queue_limit: int = 64, roots_timeout: float = 10.0,
                 held_limit: int = DEFAULT_HELD_LIMIT,
                 warm: Callable[[], None] | None = None) -> None:
        self._base = workspace
        # what the initialize answer need not wait for (the tools' modules):
        # run once it is written, or before a first message that is not it
        self._warm = warm
        self._workspace = workspace
        self._retired: list[Workspace] = []
        self.max_line_bytes = max_line_bytes
        self._max_workers = max(1, workers)
        self._roots_timeout = roots_timeout
        # guards the session and the scheduler; taken as `with self._lock` (the
        # lock's own C context manager: Condition.__enter__ is a Python call)
        self._lock = threading.RLock()
        self._cond = threading.Condition(self._lock)
        self._write_lock = threading.Lock()
        self._session = Session(Catalog(workspace), version=version)
        self._scheduler = Scheduler(queue_limit)
        self.held_limit = held_limit
        self.held_bytes = 0  # what the large calls' arguments hold (Job.held)
        self._threads: list[threading.Thread] = []
        self._idle = 0  # threads waiting for something to do
        self._reading = False  # a thread holds the reader's turn
        self._pending = False  # the reader runs a call; its turn waits for the standby
        self._pending_since = 0.0
        self._standby: threading.Thread | None = None
        self._active_at = 0.0  # the last call taken or finished
        self._eof = False
        self._finished = False  # input ended and every call was answered
        self._done = threading.Event()  # what serve() waits for (set with _finished)
        self._wake: MainWake | None = None  # poked with _done while serve() waits on it
        self._stopping = False
        self._sealed = False  # nothing more is written (stdin closed, or stopping now)
        self._interrupt: Callable[[], None] | None = None
        self._infile: BinaryIO | None = None
        self._output: Output  # made by serve()
        self._timers: list[threading.Timer] = []
        self._log_window = (0.0, 0)

    # -- the loop ------------------------------------------------------------
    def serve(self, infile: BinaryIO, out_fd: int, *,
              interrupt: Callable[[], None] | None = None, wake: MainWake | None = None) -> None:
        """Serve until ``infile`` ends and return.  What was answered before
        it ended is written, and so are the answers of calls asked before
        it that end within :data:`EOF_GRACE`; calls still running then are
        cancelled and never answered (the client hung up: an answer after
        that could only meet a closed reader).  The calling thread only waits, so a signal
        handler that raises reaches it there: every call is then cancelled,
        nothing more is written, and the exception goes on within about
        :data:`HALT_GRACE`.  ``interrupt`` (when given) makes a read of
        ``infile`` that blocks end as if the input had ended.  ``wake``:
        the main thread's pipe that ``signal.set_wakeup_fd`` writes, waited
        on rather than a lock, so that a signal another thread took still
        reaches the handler (see :class:`MainWake`)."""
        self._infile = infile
        self._interrupt = interrupt
        self._output = Output(out_fd, self._went_away)
        flush = True
        handler = _ClientLog(self)
        corral_log = logging.getLogger("corral")
        corral_log.addHandler(handler)
        saved_level = corral_log.level
        self._sync_log_level()
        try:
            with self._lock:
                self._wake = wake
                self._spawn()
            if wake is None:
                self._done.wait()
            else:
                wake.wait_for(self._done)
        except BaseException:
            flush = False
            self._halt()
            raise
        finally:
            with self._lock:  # a thread left behind never writes the pipe once its owner closes it
                self._wake = None
            corral_log.removeHandler(handler)
            corral_log.setLevel(saved_level)
            for timer in self._timers:
                timer.cancel()
            if flush:
                self._stop_workers(5.0)
                self._output.close(flush=True)
            else:  # within the grace: a thread stuck in a write is left behind
                self._stop_workers(0.2)
                closing = threading.Thread(target=self._output.close, kwargs={"flush": False},
                                           name="corral-mcp-close", daemon=True)
                closing.start()
                closing.join(0.2)

    def _read_line(self, infile: BinaryIO | None) -> bytes | bytearray | _Oversized | None:
        """The next line that is not blank, without its newline (a large
        one as a ``bytearray``); ``None`` at the end of the input."""
        assert infile is not None
        first = min(self.max_line_bytes + 1, _memory.LARGE)
        while True:
            try:
                start = infile.readline(first)
                if not start:
                    return None
                line: bytes | bytearray
                if start.endswith(b"\n"):
                    line = start[:-1].rstrip(b"\r")
                elif len(start) > self.max_line_bytes:
                    return self._discard_rest(infile, start)
                elif len(start) == first:
                    large = self._read_large(infile, start)
                    if isinstance(large, _Oversized):
                        return large
                    line = large
                else:
                    line = start.rstrip(b"\r")  # the last line, without a newline
                del start
            except OSError:  # the input broke: as good as closed
                return None
            if line and not line.isspace():
                return line

    def _read_large(self, infile: BinaryIO, start: bytes) -> bytearray | _Oversized:
        """The rest of a large line, appended in place to one buffer (a
        large buffer grows by remapping, not copying); its newline and the
        carriage returns before it are cut off in place."""
        line = bytearray(start)
        del start
        limit = self.max_line_bytes
        while True:
            chunk = infile.readline(min(_LARGE_CHUNK, limit + 1 - len(line)))
            if not chunk:
                break  # the input ends without a newline
            line += chunk
            if chunk.endswith(b"\n"):
                del line[-1:]
                break
            if len(line) > limit:
                return self._discard_rest(infile, line)
        while line.endswith(b"\r"):
            del line[-1:]
        return line

    def _discard_rest(self, infile: BinaryIO, start: bytes | bytearray) -> _Oversized:
        head, tail, size = bytes(start[:_KEEP]), bytes(start[-_KEEP:]), len(start)
        del start
        while True:
            chunk = infile.readline(1 << 16)
            if not chunk:
                break
            done = chunk.endswith(b"\n")
            chunk = chunk.rstrip(b"\r\n") if done else chunk
            size += len(chunk)
            tail = (tail + chunk)[-_KEEP:]
            if done:
                break
        return _Oversized(head, tail, size)

    def _receive(self, line: bytes | bytearray | _Oversized) -> None:
        if isinstance(line, _Oversized):
            log.warning("a message of %d bytes is over the line limit (%d); refused",
                        line.size, self.max_line_bytes)
            request_id = _wire.id_of_oversized(line.head, line.tail)
            if not is_own_request(request_id):  # an answer to this server is not answered
                self._write(_wire.oversized(request_id, line.size, self.max_line_bytes))
            return
        message = _wire.decode(line)
        if isinstance(message, _wire.Invalid):
            log.info("invalid message: %s", message.reason)
        if self._warm is not None and not (isinstance(message, _wire.Request)
                                           and message.method == "initialize"):
            self._warm_up()
        try:
            with self._lock:
                actions = self._session.receive(message)
        except Exception:  # no message may stop the reader: answer it, go on
            log.exception("a message could not be handled")
            if isinstance(message, _wire.Request):
                self._failed(message.id)
            return
        self._apply(actions)
        if isinstance(message, _wire.Batch) or (
                isinstance(message, _wire.Request) and message.method == "logging/setLevel"):
            self._sync_log_level()
        if self._warm is not None:  # initialize: its answer goes out first
            self._output.drain()
            self._warm_up()

    def _warm_up(self) -> None:
        """Run the work the initialize answer did not wait for (by the
        reader, before it reads the next message)."""
        warm, self._warm = self._warm, None
        if warm is None:
            return
        try:
            warm()
        except Exception:  # what it did not finish is done when first needed
            log.exception("the server could not prepare its tools ahead")

    def _failed(self, request_id: _wire.RequestId) -> None:
        """Answer a request whose handling raised ``-32603`` (once: the
        session forgets it, so no later answer follows)."""
        with self._lock:
            line = self._session.abandon(request_id)
        self._put(line)

    def _put(self, line: bytes | None) -> None:
        """A line the session made, if any, as the reader's messages go."""
        if line is not None and not self._sealed:
            self._output.put(line, urgent=True)

    def _sync_log_level(self) -> None:
        """corral's loggers pass on what the client asked for and what
        stderr shows (warnings and above), and nothing below both."""
        wanted = _MCP_TO_PY[self._session.log_level]
        logging.getLogger("corral").setLevel(min(wanted, logging.WARNING))

    def _apply(self, actions: list[Any]) -> None:
        for action in actions:
            try:
                self._apply_one(action)
            except Exception:  # one failed action never stops the others, nor the reader
                log.exception("a message could not be handled")
                if isinstance(action, ToolCall):
                    self._failed(action.id)

    def _apply_one(self, action: Any) -> None:
        if isinstance(action, Send):
            self._write(action.message)
            if action.message.get("method") == "roots/list":
                self._start_roots_timer()
        elif isinstance(action, SendLine):
            self._put(action.line)
        elif isinstance(action, ToolCall):
            self._submit(action)
        elif isinstance(action, Cancel):
            self._cancel(action.id)
        elif isinstance(action, RootsListed):
            self._use_roots(action.uris)

    # -- threads -------------------------------------------------------------
    def _spawn(self) -> None:
        """One more thread (lock held)."""
        thread = threading.Thread(target=self._work, name=f"corral-mcp-{len(self._threads)}",
                                  daemon=True)
        self._threads.append(thread)
        thread.start()

    def _work(self) -> None:
        lead = False
        while True:
            if not lead:
                with self._lock:
                    job, lead = self._next_task()
                if job is not None:
                    lead = self._execute(job)
                    continue
                if not lead:
                    return
            job = self._lead()
            lead = job is None and self._still_reading()
            if job is not None:
                lead = self._execute(job)

    def _still_reading(self) -> bool:
        with self._lock:
            return self._reading

    def _next_task(self) -> tuple[Job | None, bool]:
        """(a job to run, or whether to become the reader); (None, False)
        means this thread is done (lock held)."""
        me = threading.current_thread()
        while True:
            now = time.monotonic()
            if self._handover_due(now) or (self._pending and self._scheduler.ready()):
                # the reader runs a call and more are ready (a batch, calls the
                # roots released): read for it now, or nobody would read until
                # a call ends; the ready calls go to other threads
                return self._become_reader(me)
            job = self._scheduler.take()
            if job is not None:
                if self._standby is me:
                    self._standby = None
                return job, False
            if not (self._reading or self._pending or self._eof or self._stopping):
                return self._become_reader(me)
            if self._eof and self._scheduler.idle and not self._pending and not self._reading:
                self._finished = True
                self._set_done()
                self._cond.notify_all()
            if self._finished or self._stopping:
                return None, False
            self._wait(me, now)

    def _set_done(self) -> None:
        """serve() may return (lock held)."""
        self._done.set()
        if self._wake is not None:
            self._wake.poke()

    def _become_reader(self, me: threading.Thread) -> tuple[None, bool]:
        self._pending, self._reading = False, True
        if self._standby is me:
            self._standby = None  # a reader stands by for no one
        self._wake_for_ready()
        return None, True

    def _wake_for_ready(self) -> None:
        """Calls are ready to start and maybe nobody will look: wake the
        waiting threads, or start one while there are at most ``workers``
        (one more reads) (lock held)."""
        if not self._scheduler.ready():
            return
        if self._idle:
            self._cond.notify_all()  # not notify(): the reader may wait on it for room
        elif len(self._threads) <= self._max_workers:
            self._spawn()

    def _handover_due(self, now: float) -> bool:
        return self._pending and now - self._pending_since >= HANDOVER_AFTER

    def _wait(self, me: threading.Thread, now: float) -> None:
        """Wait for something to do (lock held).  One thread stands by with
        a timeout, to take over reading from a reader whose call runs long;
        it retires after a quiet spell, so an idle server sleeps."""
        self._idle += 1
        try:
            if self._standby in (None, me) and now - self._active_at < STANDBY_FOR:
                self._standby = me
                since = self._pending_since if self._pending else now
                due = since + HANDOVER_AFTER
                self._cond.wait(max(0.0005, due - now))
            else:
                if self._standby is me:
                    self._standby = None
                self._cond.wait()
        finally:
            self._idle -= 1

    def _lead(self) -> Job | None:
        """Read lines until one brings a call this thread may run now (then
        the reader's turn is left pending, for the standby to take if the
        call runs long), or until the input ends (``None``)."""
        while True:
            line = self._read_line(self._infile)
            if line is None:
                with self._lock:
                    actions = self._session.roots_unanswered()  # no answer can come now
                self._apply(actions)
                with self._lock:
                    self._eof, self._reading = True, False
                    if not self._scheduler.idle:
                        self._start_eof_timer()
                        self._wake_for_ready()
                    self._cond.notify_all()
                return None
            if isinstance(line, bytearray):
                self._wait_for_room(len(line))
            self._receive(line)  # a bytearray is emptied by decode
            if isinstance(line, bytearray):
                del line  # what it parsed into is queued now, or already gone
                _memory.release()
            with self._lock:
                job = self._take_as_reader()
            if job is not None:
                return job

    def _wait_for_room(self, size: int) -> None:
        """Before parsing a large line: wait while the large calls already
        hold so much that this one would bring them over ``held_limit``
        (one call alone always passes)."""
        with self._lock:
            while self.held_bytes and self.held_bytes + size > self.held_limit \
                    and not self._stopping:
                self._cond.wait()

    def _unhold(self, job: Job) -> None:
        """``job``'s (large) arguments are dropped: the reader may parse
        again (lock held)."""
        self.held_bytes -= job.held
        job.held = 0
        self._cond.notify_all()

    def _take_as_reader(self) -> Job | None:
        """A job the reader may run itself: only when another thread can
        take over reading (one waits, or one more may start) (lock held)."""
        self._active_at = time.monotonic()
        spare = self._idle > 0 or len(self._threads) <= self._max_workers
        job = self._scheduler.take() if spare else None
        if job is None:
            return None
        self._reading, self._pending, self._pending_since = False, True, self._active_at
        if self._standby is None:
            if self._idle:
                self._cond.notify()  # it becomes the standby
            else:
                self._spawn()
        return job

    def _execute(self, job: Job) -> bool:
        """Run ``job`` and answer it; whether this thread reads next (it
        was the reader and nobody took over meanwhile)."""
        call = job.call
        try:
            envelope = self._run(job)
            if job.held:
                # drop the arguments before answering: a client that does not
                # read blocks the answer, and must not keep them alive meanwhile
                job.call = call = replace(call, arguments=None)  # the last reference
                with self._lock:
                    self._unhold(job)
                _memory.release()
            self._answer(call, envelope)
        except Exception:  # never expected: answered all the same, and the job ends
            log.exception("a tool call could not be answered")
            self._failed(call.id)
        with self._lock:
            if job.held:  # it failed before its arguments were dropped
                self._unhold(job)
            self._scheduler.finish(job)
            self._close_retired()
            self._active_at = time.monotonic()
            if not self._scheduler.idle or self._eof:
                self._cond.notify_all()  # a waiting call may start now, or all is done
            if self._pending:  # the reader's turn was never taken: take it back
                self._pending, self._reading = False, True
                return True
            return False

    def _answer(self, call: ToolCall, envelope: dict[str, Any]) -> None:
        with self._write_lock:
            with self._lock:
                answer = self._session.call_result(call, envelope)
            if answer is not None:
                self._write_locked(answer)

    # -- calls ---------------------------------------------------------------
    def _submit(self, call: ToolCall) -> None:
        workspace = self._workspace
        job = Job(call, writes=workspace.mutates(call.name),
                  context=_Running(workspace, CancelToken()))
        job.size = _memory.weight(call.size, call.arguments)  # the queue's bytes
        if call.size >= _memory.LARGE:
            job.held = job.size
        with self._lock:
            queued = self._scheduler.add(job)
            if queued:
                self.held_bytes += job.held
                return
            line = self._session.refused(
                call.id, SERVER_BUSY, f"Server busy: {len(self._scheduler)} calls are already "
                "in progress or waiting; wait for their answers, then retry")
        self._put(line)

    def _run(self, job: Job) -> dict[str, Any]:
        running: _Running = job.context
        call = job.call

        def progress(report: Progress) -> None:
            self._progress(call, report)

        try:
            return running.workspace.call(call.name, call.arguments, cancel=running.token,
                                          progress=progress if call.progress_token is not None
                                          else None)
        except Exception:  # Workspace.call should never raise; if it does, say nothing of why
            log.exception("tool call raised")
            return Refusal.internal().envelope()

    def _progress(self, call: ToolCall, report: Progress) -> None:
        with self._write_lock:
            with self._lock:
                message = self._session.progress(call, report.done, report.total, report.message,
                                                 time.monotonic())
            if message is not None:
                self._write_locked(message)

    def _cancel(self, request_id: Any) -> None:
        line = running = None
        with self._lock:
            job = self._scheduler.remove(request_id)
            if job is not None:
                if job.held:
                    self._unhold(job)
                line = self._session.dropped(request_id)  # cancelled: no answer of its own
                self._cond.notify_all()
            else:
                running = self._scheduler.running(request_id)
        if running is not None:
            running.context.token.cancel()
        self._put(line)

    def _end_calls(self) -> None:
        """Nothing more will be written: cancel every call (running ones stop
        at their next checkpoint, nothing half-written), drop the waiting
        ones, and write no answer, progress or log line from now on; what
        was already put is still written (lock held)."""
        self._sealed = True
        for job in self._scheduler.jobs():
            job.context.token.cancel()
            if not job.started:
                self._scheduler.remove(job.call.id)
                if job.held:
                    self._unhold(job)

    def _halt(self) -> None:
        """Stopping now (a signal): end every call, drop what waits to be
        written, end a read that blocks, and give running calls
        :data:`HALT_GRACE` to stop at a checkpoint."""
        with self._lock:
            self._stopping = True
            self._end_calls()
            self._cond.notify_all()
        if self._interrupt is not None:
            try:
                self._interrupt()
            except OSError:
                pass
        deadline = time.monotonic() + HALT_GRACE
        with self._lock:
            while not self._scheduler.idle and time.monotonic() < deadline:
                self._cond.wait(0.02)

    def _stop_workers(self, timeout: float) -> None:
        """Let every thread end; wait ``timeout`` seconds for them at most."""
        with self._lock:
            self._stopping = True
            self._set_done()
            self._cond.notify_all()
        deadline = time.monotonic() + timeout
        for thread in self._threads:
            thread.join(timeout=max(0.0, deadline - time.monotonic()))

    def _start_eof_timer(self) -> None:
        """The input ended with calls not yet answered: those still running
        after :data:`EOF_GRACE` are ended (lock held)."""
        timer = threading.Timer(EOF_GRACE, self._eof_grace_over)
        timer.daemon = True
        self._timers.append(timer)
        timer.start()

    def _eof_grace_over(self) -> None:
        with self._cond:
            self._end_calls()
            self._cond.notify_all()

    # -- roots -------------------------------------------------------------------
    def _start_roots_timer(self) -> None:
        timer = threading.Timer(self._roots_timeout, self._roots_timed_out)
        timer.daemon = True
        self._timers.append(timer)
        timer.start()

    def _roots_timed_out(self) -> None:
        with self._lock:
            actions = self._session.roots_unanswered()
        if actions:
            log.warning("the client did not answer roots/list; the command line's roots apply")
        self._apply(actions)
        with self._lock:  # the released calls: this thread is no worker, the reader may block
            self._wake_for_ready()

    def _use_roots(self, uris: tuple[str, ...] | None) -> None:
        paths = [p for p in (file_uri_path(u) for u in uris or ()) if p is not None]
        # not said, or an empty list: nothing to narrow by
        try:
            chosen = self._base.narrowed(paths) if uris else self._base
        except Exception:  # never expected; fail closed: no root rather than all of them
            log.exception("the client's roots could not be applied; no root is open")
            chosen = self._base.narrowed([])
        with self._lock:
            old, self._workspace = self._workspace, chosen
            if old is not self._base and old is not chosen:
                self._retired.append(old)
            catalog = Catalog(chosen)
            changed = catalog.tools(self._session.version) != \
                self._session.catalog.tools(self._session.version)
            self._session.catalog = catalog
            notice = self._session.tools_changed() if changed else None
            self._close_retired()
        log.info("roots in use: %s", ", ".join(chosen.roots) or "none")
        if notice is not None:
            self._write(notice)

    def _close_retired(self) -> None:
        """Close narrowed workspaces no call uses any more (lock held)."""
        if not self._retired:
            return
        busy = {id(job.context.workspace) for job in self._scheduler.jobs()}
        keep = []
        for workspace in self._retired:
            if id(workspace) in busy:
                keep.append(workspace)
            else:
                workspace.close()
        self._retired = keep

    def threads_ended(self) -> bool:
        """Whether every thread this server started has ended."""
        return not any(thread.is_alive() for thread in self._threads)

    def close(self) -> None:
        """Close every workspace this server narrowed to."""
        with self._lock:
            if self._workspace is not self._base:
                self._retired.append(self._workspace)
                self._workspace = self._base
            for workspace in self._retired:
                workspace.close()
            self._retired = []

    # -- output --------------------------------------------------------------------
    def _write(self, message: dict[str, Any]) -> None:
        """A message from the reader (or a log line): queued at once, past
        a full backlog of answers too (:class:`Output`'s slack)."""
        if not self._sealed:
            # before the warm work, written by this thread (nothing waits
            # before it), not handed to the writer: the answer goes out now
            self._output.put(_wire.encode(message), urgent=self._warm is None)

    def _write_locked(self, message: dict[str, Any] | bytes) -> None:
        """A call's answer or progress (``_write_lock`` held, so none of a
        call's progress follows its answer); waits while the backlog is full."""
        if not self._sealed:
            self._output.put(message if isinstance(message, bytes) else _wire.encode(message))

    def _went_away(self) -> None:
        """The client closed its end: nothing left to answer; calls stop."""
        with self._lock:
            for job in self._scheduler.jobs():
                job.context.token.cancel()

    def notify_log(self, level: str, logger: str, data: str) -> None:
        """Send a log line to the client (rate limited; filtered by its level)."""
        now = time.monotonic()
        start, count = self._log_window
        if now - start >= 1.0:
            start, count = now, 0
        if count >= _LOG_RATE:
            return
        self._log_window = (start, count + 1)
        with self._lock:
            message = self._session.log(level, logger, data)
        if message is not None:
            self._write(message)

    @property
    def client_log_level(self) -> str:
        return self._session.log_level


_MCP_TO_PY = {"debug": logging.DEBUG, "info": logging.INFO, "notice": logging.INFO,
              "warning": logging.WARNING, "error": logging.ERROR, "critical": logging.CRITICAL,
              "alert": logging.CRITICAL, "emergency": logging.CRITICAL}
_PY_TO_MCP = ((logging.CRITICAL, "critical"), (logging.ERROR, "error"),
              (logging.WARNING, "warning"), (logging.INFO, "info"), (logging.NOTSET, "debug"))


class _ClientLog(logging.Handler):
    """corral's log records as ``notifications/message`` (the message only:
    no traceback or other detail of the host goes to the client)."""

    def __init__(self, server: StdioServer) -> None:
        super().__init__(logging.DEBUG)
        self._server = server

    def emit(self, record: logging.LogRecord) -> None:
        level = next(name for number, name in _PY_TO_MCP if record.levelno >= number)
        try:
            text = record.getMessage()[:2000]
        except Exception:
            return
        self._server.notify_log(level, record.name, text)


def file_uri_path(uri: str) -> str | None:
    """The local path of a ``file:`` URI (``file:///a%20b`` -> ``/a b``),
    or ``None`` for anything else (another scheme or host, a relative path)."""
    path = _file_uri_path(uri)
    if path is None or "\x00" in path:
        return None
    return os.path.normpath(path)


def serve_stdio(workspace: Workspace, *, version: str, max_line_bytes: int = DEFAULT_MAX_LINE_BYTES,
                workers: int = DEFAULT_WORKERS, stderr: TextIO | None = None,
                warm: Callable[[], None] | None = None) -> None:
    """Serve ``workspace`` on this process's stdin and stdout until stdin
    closes.  The wire uses private copies of fds 0 and 1; meanwhile fd 0
    reads /dev/null and fd 1 goes to stderr, so a stray print cannot
    corrupt the protocol.

    Called from the main thread, SIGTERM, SIGINT and SIGHUP stop it at
    once, whatever stdin does: every call is cancelled at its next
    checkpoint, nothing more is written, and ``SystemExit(128 + signal)``
    is raised (the exit status a shell shows for that signal).

    ``warm`` is work the ``initialize`` answer need not wait for (importing
    the tools): run once that answer is written, before the next message is
    read (or before a first message that is not ``initialize``)."""
    stream = stderr or sys.stderr
    to_stderr = logging.StreamHandler(stream)
    to_stderr.setLevel(logging.WARNING)
    to_stderr.setFormatter(logging.Formatter("corral serve: %(levelname)s: %(message)s"))
    logging.getLogger("corral").addHandler(to_stderr)
    wire_in, wire_out = os.dup(0), os.dup(1)
    devnull = os.open(os.devnull, os.O_RDONLY)
    os.dup2(devnull, 0)
    os.close(devnull)
    os.dup2(2, 1)
    server = StdioServer(workspace, version=version, max_line_bytes=max_line_bytes,
                         workers=workers, warm=warm)
    _memory.configure()  # this process is the server's: large blocks go back when freed
    wake_read, wake_write = os.pipe()
    infile = io.BufferedReader(_InterruptibleInput(wire_in, wake_read), 1 << 16)
    try:
        with _stop_on_signals() as main_wake:
            server.serve(infile, wire_out, interrupt=lambda: _wake(wake_write), wake=main_wake)
    finally:
        logging.getLogger("corral").removeHandler(to_stderr)
        server.close()
        if server.threads_ended():
            infile.close()  # (a reader still inside it would hold its lock: left to exit)
        os.close(wire_out)
        os.close(wake_write)
        stream.flush()


def _wake(fd: int) -> None:
    os.write(fd, b"x")


class _InterruptibleInput(io.FileIO):
    """An fd to read from, whose blocking read ends (as the end of the input
    does) once the wake-up fd becomes readable: a thread blocked reading
    stdin cannot be stopped otherwise, and closing the buffered reader
    around it would wait for that read forever.

    Every message read waits here first, so the wait is one ``poll`` on a
    set of fds registered once (``select`` would build its fd sets, and
    refuse an fd past its limit, on each read)."""

    def __init__(self, fd: int, wake_fd: int) -> None:
        super().__init__(fd, "rb", closefd=True)
        self._wake_fd = wake_fd
        self._woken = False
        self._poll = select.poll()
        self._poll.register(fd, select.POLLIN)
        self._poll.register(wake_fd, select.POLLIN)

    def readinto(self, buffer: Any) -> int | None:
        if not self._woken:
            for fd, _ in self._poll.poll():
                if fd == self._wake_fd:
                    self._woken = True
        if self._woken:
            return 0
        return super().readinto(buffer)

    def close(self) -> None:
        if not self.closed:
            os.close(self._wake_fd)
        super().close()


@contextmanager
def _stop_on_signals() -> Iterator[MainWake | None]:
    """SIGTERM, SIGINT and SIGHUP raise ``SystemExit(128 + signal)`` where
    the main thread waits (in :meth:`StdioServer.serve`), once: a second
    signal while stopping is ignored.  Yields the pipe that wait must poll
    (signal's wakeup fd: whichever thread takes the signal writes it).
    Outside the main thread, nothing (and ``None``)."""
    if threading.current_thread() is not threading.main_thread():
        yield None
        return
    stopping: list[int] = []

    def stop(signum: int, frame: Any) -> None:
        if stopping:
            return
        stopping.append(signum)
        raise SystemExit(128 + signum)

    # a signal the parent ignores (nohup's SIGHUP) stays ignored
    wanted = [signum for signum in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP)
              if signal.getsignal(signum) is not signal.SIG_IGN]
    wake = MainWake()
    earlier_wakeup = signal.set_wakeup_fd(wake.write_fd, warn_on_full_buffer=False)
    previous = {signum: signal.signal(signum, stop) for signum in wanted}
    try:
        yield wake
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)
        signal.set_wakeup_fd(earlier_wakeup)
        wake.close()


__all__ += ["serve_stdio", "LOG_LEVELS"]
