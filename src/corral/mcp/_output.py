"""Lines to the client, written by one thread of their own.

Whoever answers puts a whole line here and goes on: no thread of the server
waits inside ``write(2)`` on a client that does not read, so the reader keeps
reading (and answering ``ping``, cancels, "server busy") while calls' answers
wait.  The backlog is bounded: past ``limit`` bytes a call's answer waits for
room (backpressure on the workers); the reader's own short answers may use
``slack`` bytes more before it waits too, so memory stays bounded even for a
client that floods and never reads.
"""

from __future__ import annotations

import os
import threading
from collections import deque
from collections.abc import Callable

__all__ = ["Output"]


class Output:
    def __init__(self, fd: int, on_broken: Callable[[], None], *, limit: int = 4 << 20,
                 slack: int = 1 << 20) -> None:
        self._fd = fd
        self._on_broken = on_broken
        self._limit = limit
        self._slack = slack
        self._lines: deque[bytes] = deque()
        self._bytes = 0  # put and not yet written
        self._lock = threading.RLock()  # entered directly: a C context manager
        self._cond = threading.Condition(self._lock)
        self._closing = False
        self._writing = False  # one line is being written (by this thread or a caller)
        self.broken = False
        self._thread = threading.Thread(target=self._run, name="corral-mcp-writer", daemon=True)
        self._thread.start()

    def put(self, line: bytes, *, urgent: bool = False) -> None:
        """Send ``line`` (whole, in order).  A call's answer is written by
        its own thread when nothing waits before it (no hand-over: the
        common case costs no thread switch), else queued, waiting while the
        backlog is over the limit; ``urgent`` lines (the reader's) are
        always queued, and wait only past the limit and the slack."""
        bound = self._limit + (self._slack if urgent else 0)
        with self._lock:
            while self._bytes > bound and not self.broken:
                self._cond.wait()
            if self.broken:
                return  # the client went away: nothing left to answer
            direct = not urgent and not self._lines and not self._writing
            if not direct:
                self._lines.append(line)
                self._bytes += len(line)
                self._cond.notify_all()
                return
            self._writing = True
        try:
            self._write(line)
        finally:
            with self._lock:
                self._writing = False
                if self._lines or self._closing:
                    # lines queued meanwhile (or a close) are the writer
                    # thread's; otherwise waking it would cost every answer
                    # a thread switch for nothing
                    self._cond.notify_all()

    def drain(self) -> None:
        """Wait until the queued lines are written (or the client went away,
        or closing dropped them)."""
        with self._lock:
            while self._bytes and not self.broken and not self._closing:
                self._cond.wait()

    def close(self, *, flush: bool = True) -> None:
        """Stop once everything put is written (``flush``), or now."""
        with self._lock:
            self._closing = True
            if not flush:
                self._lines.clear()
            self._cond.notify_all()
        self._thread.join(None if flush else 2.0)

    def _run(self) -> None:
        while True:
            with self._lock:
                while (not self._lines or self._writing) and not self._closing:
                    self._cond.wait()
                while self._writing:  # closing: a direct write finishes first
                    self._cond.wait()
                if not self._lines:
                    return
                line = self._lines.popleft()
                self._writing = True
            written = self._write(line)
            with self._lock:
                self._writing = False
                if written:
                    self._bytes -= len(line)
                self._cond.notify_all()
            if not written:
                return

    def _write(self, line: bytes) -> bool:
        data = memoryview(line)
        try:
            while data:
                data = data[os.write(self._fd, data):]
        except OSError:  # the client went away
            with self._lock:
                self.broken = True
                self._lines.clear()
                self._bytes = 0
                self._cond.notify_all()
            self._on_broken()
            return False
        return True
