"""Work off the event loop: the threads that run a request's blocking calls, and its wait for the agents.

The event loop of ``krypenv serve`` never touches a game: every call into the
:class:`~krypenv.ui.api.App` (its store, sessions and their locks) runs on a worker thread
(:meth:`Offload.run`).  There are as many worker threads as connections may be open
(:attr:`~krypenv.ui.guard.Limits.connections`), and a connection has at most one call in
progress, so a call never queues behind others, however long they wait for the agents.

A request that waits for the agents (a move, a new game, a hint) waits on its worker thread, in
the same call that made the move (:class:`Waiter`): one hand-over to a thread and one back per
request.  Meanwhile the event loop watches the connection; a client that goes away wakes the
wait, stops the agents' job after the move in progress, and gets no answer (:class:`ClientGone`).
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable
from concurrent.futures import Future
from functools import partial
from typing import Any, TypeVar

import anyio
import anyio.to_thread
from starlette.types import Receive

T = TypeVar("T")


class ClientGone(Exception):
    """The client closed its connection while waiting: its work was cancelled and no answer is sent."""


class Offload:
    """Runs blocking calls on worker threads, at most ``threads`` at once (the server's connection cap)."""

    def __init__(self, threads: int) -> None:
        self.threads = threads
        self.limiter: anyio.CapacityLimiter | None = None  # made on first use, inside the event loop

    async def run(self, fn: Callable[..., T], *args: Any) -> T:
        """``fn(*args)`` on a worker thread."""
        if self.limiter is None:
            self.limiter = anyio.CapacityLimiter(self.threads)
        return await anyio.to_thread.run_sync(partial(fn, *args), limiter=self.limiter)


class Waiter:
    """One request's wait for agent work, on its worker thread, cut short when its client goes away."""

    def __init__(self) -> None:
        self.gone = False
        self.wake = threading.Event()
        self.cancel: threading.Event | None = None  # the work to stop when the client goes away
        self.lock = threading.Lock()

    def client_gone(self) -> None:
        """The client went away (called from the event loop): stop the work and wake the wait."""
        with self.lock:
            self.gone, cancel = True, self.cancel
        if cancel is not None:
            cancel.set()
        self.wake.set()

    def wait(self, job: Future[Any] | None, limit: float, cancel: threading.Event) -> bool:
        """Wait up to ``limit`` seconds for ``job``; True when it is done.  :class:`ClientGone` (``cancel`` set) if the
        client went away."""
        with self.lock:
            self.cancel, gone = cancel, self.gone
        if not gone and job is not None and not job.done():
            job.add_done_callback(lambda _job: self.wake.set())
            self.wake.wait(limit)
        if self.gone:
            cancel.set()
            raise ClientGone
        return job is None or job.done()


async def _disconnected(receive: Receive) -> None:
    """Return once the client has gone away (the request's body, if any, was read before)."""
    while (await receive())["type"] != "http.disconnect":
        pass


async def while_connected(receive: Receive, waiter: Waiter, call: Callable[[], Any]) -> Any:
    """Await ``call()`` while watching the connection: the client going away is told to ``waiter``."""
    def ended(task: asyncio.Task[None]) -> None:
        if not task.cancelled():
            task.exception()  # a connection that failed is gone too
            waiter.client_gone()

    watch = asyncio.ensure_future(_disconnected(receive))
    watch.add_done_callback(ended)
    try:
        return await call()
    finally:
        watch.cancel()
