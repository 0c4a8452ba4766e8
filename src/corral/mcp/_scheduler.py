"""Which tool call may run next, free of I/O and threads.

Calls run concurrently on a small pool, but never out of order where order
can matter: a call that may change files waits for every call that arrived
before it, and every call waits for the earlier calls that may change files
(readers/writer ordering over the whole server).  Paths are not compared:
two spellings (a symlink, ``a/../b``, a case-insensitive filesystem) can
name one file, and only the resolver knows, so the front end does not guess.

The queue is bounded in calls (:attr:`Scheduler.limit`) and in the bytes of
the calls waiting (:attr:`Scheduler.byte_limit`: :attr:`Job.size`, what
their parsed arguments hold): past either a call is refused at once, so
neither a flood of requests nor a few huge ones held behind a client that
does not read can grow memory without end.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field
from typing import Any

from ._session import ToolCall

__all__ = ["Job", "Scheduler"]


@dataclass(eq=False)
class Job:
    """One call and what the server attached to it (its workspace, token)."""

    call: ToolCall
    writes: bool
    context: Any = None
    started: bool = field(default=False)
    size: int = -1  # bytes its arguments hold (-1: its line's length stands for them)
    held: int = 0  # bytes the server counts against its budget until the arguments drop

    def __post_init__(self) -> None:
        if self.size < 0:
            self.size = self.call.size


class Scheduler:
    def __init__(self, limit: int = 64, byte_limit: int = 64 << 20) -> None:
        self.limit = limit
        self.byte_limit = byte_limit
        self.waiting_bytes = 0
        self._waiting: deque[Job] = deque()
        self._running: list[Job] = []

    def __len__(self) -> int:
        return len(self._waiting) + len(self._running)

    @property
    def idle(self) -> bool:
        return not self._waiting and not self._running

    def add(self, job: Job) -> bool:
        """Queue ``job``; ``False`` (not queued) when the queue is full: in
        calls, or in bytes (one call alone is always let wait)."""
        size = job.size
        if len(self) >= self.limit or (self._waiting and
                                       self.waiting_bytes + size > self.byte_limit):
            return False
        self._waiting.append(job)
        self.waiting_bytes += size
        return True

    def _unqueue(self, i: int) -> Job:
        job = self._waiting[i]
        del self._waiting[i]
        self.waiting_bytes -= job.size
        return job

    def take(self) -> Job | None:
        """The first waiting job allowed to start now (marked running)."""
        i = self._first_ready()
        if i is None:
            return None
        job = self._unqueue(i)
        job.started = True
        self._running.append(job)
        return job

    def ready(self) -> bool:
        """Whether :meth:`take` would give a job now."""
        return self._first_ready() is not None

    def _first_ready(self) -> int | None:
        if not self._running:  # nothing runs: the first waiting call may start
            return 0 if self._waiting else None
        writer_before = any(job.writes for job in self._running)
        busy = bool(self._running)
        for i, job in enumerate(self._waiting):
            if not (writer_before or (job.writes and busy)):
                return i
            # nothing after a waiting writer may pass it, nor a writer pass anything
            writer_before = writer_before or job.writes
            busy = True
        return None

    def remove(self, request_id: Any) -> Job | None:
        """Take a job that has not started off the queue (a cancelled call)."""
        for i, job in enumerate(self._waiting):
            if job.call.id == request_id:
                return self._unqueue(i)
        return None

    def running(self, request_id: Any) -> Job | None:
        for job in self._running:
            if job.call.id == request_id:
                return job
        return None

    def finish(self, job: Job) -> None:
        self._running.remove(job)

    def jobs(self) -> list[Job]:
        return [*self._running, *self._waiting]
