"""The games ``krypenv serve`` keeps: a bounded, least-recently-used table, agent work on a small pool, records kept
tidy.

* **Games** (:class:`Store`): at most :data:`MAX_GAMES` in memory, each a :class:`Table` under a
  random id.  Every request for a game makes it the most recently used; a new game beyond the
  limit pushes out the least recently used one that no page is watching live *after* its
  partial record is saved (if that save fails, or every game is being watched, the new game
  is refused with 503 and nothing is lost).
* **Agent work** runs on a pool of :data:`WORKERS` threads, never on the event loop or a request's
  thread: the agents' moves after a person's move (:meth:`Store.drive`, one move at a time
  under the game's lock, so reads of the game stay quick) and hints.  At most :data:`MAX_JOBS`
  jobs wait; past that a request is answered 503 (busy).  Work for a client that went away is
  dropped: a request that sees its client disconnect cancels the game's job (so does the last
  live page of a game when its WebSocket closes), and the agents stop when no request has asked
  for the game for :data:`IDLE_STOP` seconds and no page watches it live; the next request for
  the game resumes them.
* **Watchers** (:meth:`Table.watch`): a live page (:mod:`krypenv.ui.live`) is handed the game's
  state, with the events it has not had, by whoever changes the game, under the game's lock:
  after the person's move, by the agents' job after every agent move, and when the job ends.
  So the page gets each seat's move as it is made without ever waiting for the lock.
* **Record files**: ``<folder>/web-<game>-<date>-<time>-s<seed>-<id>.jsonl``, one per game, named by
  the game's random id (so two games never share a file).  At most :data:`MAX_RECORD_FILES`
  such files are kept: each new game removes the oldest ``web-*`` files of games no longer in
  memory beyond that (other files in the folder are never touched).

Time is read from the store's ``clock`` (default :func:`time.monotonic`; tests pass their own).
"""

from __future__ import annotations

import secrets
import sys
import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import Any, Protocol

from krypenv.ui.session import Session

MAX_GAMES = 128  # games held in memory
MAX_RECORD_FILES = 1000  # web-*.jsonl files kept in the records folder
WORKERS = 4  # threads that play the agents' moves and compute hints
MAX_JOBS = 64  # agent jobs running or waiting; more is a 503
IDLE_STOP = 60.0  # seconds without a request for a game after which its agents stop playing (resumed on request)


class Busy(Exception):
    """The server cannot take this now (the job queue is full, or the oldest game's record cannot be saved)."""


class Watcher(Protocol):
    """A live page of a game: the events it has been handed, and how a new state reaches it (from any thread)."""

    sent: int  # events handed so far

    def deliver(self, state: dict[str, Any]) -> None:
        """Take the game's state, whose events are those after the ones handed before (must not block)."""
        ...


class Table:
    """A game the server holds: the session, the lock that guards it, its agents' job and its live watchers."""

    def __init__(self, gid: str, session: Session, seen: float) -> None:
        self.gid = gid
        self.session = session
        self.lock = threading.RLock()
        self.job: Future[None] | None = None  # the agents' moves in progress
        self.cancel = threading.Event()  # set when the client went away: the job stops after the move it is making
        self.seen = seen  # the store's clock when a request last asked for the game
        self.failure: str | None = None  # why an agent could not move (the game waits; a report names it)
        self.watchers: set[Watcher] = set()  # the live pages of the game
        self._watch_lock = threading.Lock()  # guards the set alone: unwatch never waits for an agent's move

    def watch(self, watcher: Watcher) -> None:
        """Hand ``watcher`` the state now and whenever the game changes, until :meth:`unwatch` (blocks on the lock)."""
        with self.lock:
            with self._watch_lock:
                self.watchers.add(watcher)
            self._hand(watcher)

    def unwatch(self, watcher: Watcher) -> bool:
        """Stop handing ``watcher`` states; True when no watcher is left."""
        with self._watch_lock:
            self.watchers.discard(watcher)
            return not self.watchers

    def publish(self) -> None:
        """Hand every watcher the state with the events it has not had; call it holding the lock."""
        with self._watch_lock:
            watchers = list(self.watchers)
        for watcher in watchers:
            self._hand(watcher)

    def _hand(self, watcher: Watcher) -> None:
        """Hand one watcher its state (a watcher that fails is dropped, never the game's job)."""
        try:
            state = self.state(events_from=watcher.sent)
            watcher.sent = state["n_events"]
            watcher.deliver(state)
        except Exception:  # noqa: BLE001 - a page's failure must not stop the agents
            self.unwatch(watcher)

    @property
    def thinking(self) -> bool:
        """True while the agents' job runs or waits."""
        return self.job is not None and not self.job.done()

    def state(self, events_from: int) -> dict[str, Any]:
        """The session's state for the person, with ``thinking`` and ``agent_error``; call it holding the lock."""
        out = self.session.state(events_from=events_from)
        out["thinking"] = self.thinking
        out["agent_error"] = self.failure
        if out["thinking"]:
            out["your_turn"], out["legal"] = False, []
        return out


class Store:
    """The server's games, its agent pool and its records folder (see the module docstring)."""

    def __init__(self, folder: Path, max_games: int = MAX_GAMES, max_files: int = MAX_RECORD_FILES,
                 workers: int = WORKERS, max_jobs: int = MAX_JOBS, idle_stop: float = IDLE_STOP,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.folder = Path(folder)
        self.clock = clock
        self.max_games, self.max_files, self.max_jobs, self.idle_stop = max_games, max_files, max_jobs, idle_stop
        self.tables: OrderedDict[str, Table] = OrderedDict()
        self.lock = threading.Lock()
        self.pruning = threading.Lock()
        self.pool = ThreadPoolExecutor(workers, thread_name_prefix="krypenv-agents")
        self.jobs = threading.BoundedSemaphore(max_jobs)

    # ------------------------------------------------------------------ games
    def new_id(self) -> str:
        """A fresh random game id (72 bits, URL- and file-name-safe)."""
        return secrets.token_urlsafe(9)

    def record_path(self, game: str, seed: int, gid: str) -> Path:
        """The record file of a new game: its id makes it unique."""
        return self.folder / f"web-{game}-{time.strftime('%Y%m%d-%H%M%S')}-s{seed}-{gid}.jsonl"

    def add(self, gid: str, session: Session) -> Table:
        """Hold a new game, pushing out the least recently used unwatched one beyond the limit (its record saved
        first)."""
        table = Table(gid, session, self.clock())
        with self.lock:
            while len(self.tables) >= self.max_games:
                old = next((t for t in self.tables.values() if not t.watchers), None)
                if old is None:
                    raise Busy(f"the server holds {self.max_games} games, each watched live by a page; try again "
                               f"later")
                with old.lock:
                    old.cancel.set()
                    if old.session.save_or_note() is None and old.session.records():
                        old.cancel.clear()
                        raise Busy(f"the server holds {self.max_games} games and cannot save the oldest one's "
                                   f"record ({old.session.record_error}); try again later")
                del self.tables[old.gid]
            self.tables[gid] = table
        self.prune()
        return table

    def get(self, gid: str) -> Table:
        """The game of an id, now the most recently used; KeyError if unknown."""
        with self.lock:
            table = self.tables[gid]
            self.tables.move_to_end(gid)
        table.seen = self.clock()
        return table

    def prune(self) -> None:
        """Remove the oldest ``web-*`` record files beyond the limit, never those of games held in memory.

        One prune at a time; a file that vanishes meanwhile is skipped, and a failure is reported
        on the server's terminal, never to the request that started the game.
        """
        with self.pruning:
            try:
                self._prune()
            except OSError as exc:
                print(f"krypenv serve: could not tidy {self.folder}: {exc}", file=sys.stderr)

    def _prune(self) -> None:
        if not self.folder.is_dir():
            return
        with self.lock:
            live = {t.session.record_path.name for t in self.tables.values()}
        dated = []
        for p in sorted(self.folder.glob("web-*.jsonl*")):
            if p.name.removesuffix(".part") in live:
                continue
            try:
                dated.append((p.stat().st_mtime, p.name, p))
            except FileNotFoundError:
                continue
        excess = len(dated) + len(live) - self.max_files
        for _, _, p in sorted(dated)[:max(excess, 0)]:
            p.unlink(missing_ok=True)

    # ------------------------------------------------------------------ agent work
    def submit(self, fn: Callable[[], Any]) -> Future[Any]:
        """Run ``fn`` on the pool; :class:`Busy` when :data:`MAX_JOBS` jobs are already there."""
        if not self.jobs.acquire(blocking=False):
            raise Busy(f"the server is busy ({self.max_jobs} agent jobs running or waiting); try again shortly")

        def run() -> Any:
            try:
                return fn()
            finally:
                self.jobs.release()

        return self.pool.submit(run)

    def drive(self, table: Table) -> None:
        """Start the agents' moves of a game if it has some to play and none is running (hold no lock to call it).

        The game's watchers are handed the state (someone may just have moved), after every agent move and when the
        job ends.
        """
        with table.lock:
            if not (table.thinking or table.failure or not table.session.agents_to_act):
                table.cancel.clear()
                table.job = self.submit(lambda: self._play_agents(table))
                table.job.add_done_callback(lambda _job: self._finished(table))
            table.publish()

    def _finished(self, table: Table) -> None:
        """The agents' job has ended: the watchers learn that the agents stopped."""
        with table.lock:
            table.publish()

    def idle(self, table: Table) -> bool:
        """True when no request has asked for the game for :data:`IDLE_STOP` seconds and no page watches it live."""
        return not table.watchers and self.clock() - table.seen > self.idle_stop

    def _play_agents(self, table: Table) -> None:
        """The job: one agent move at a time until the person acts, the match ends, or the client is gone."""
        while True:
            with table.lock:
                if table.cancel.is_set() or self.idle(table) or not table.session.agents_to_act:
                    return
                try:
                    table.session.advance(max_moves=1)
                except Exception as exc:  # noqa: BLE001 - the game waits and says why; the server goes on
                    table.failure = f"an agent could not move: {type(exc).__name__}: {exc}"
                    print(f"krypenv serve: game {table.gid}: {table.failure}", file=sys.stderr)
                    return
                table.publish()

    def close(self) -> None:
        """Stop the pool (running jobs end after their current move) and save every game's record."""
        with self.lock:
            tables = list(self.tables.values())
        for t in tables:
            t.cancel.set()
        self.pool.shutdown(wait=True, cancel_futures=True)
        for t in tables:
            with t.lock:
                t.session.save_or_note()
