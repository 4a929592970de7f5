"""The server's game store on its own: the least-recently-used table, agent jobs, idle stops, watchers, record files.

A scripted session stands in for a game (the store needs only its agents' moves, its state and its
record), and the store's clock is a number the test sets: hours pass without a sleep.  Quick, so
that a mutation run (docs/results/mutation.md) runs them for every mutant of ``krypenv/ui/store.py``.
"""

from __future__ import annotations

import os
import random
import re
import threading
from collections import OrderedDict
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from krypenv.ui.store import IDLE_STOP, MAX_GAMES, MAX_JOBS, MAX_RECORD_FILES, WORKERS, Busy, Store, Table


class Clock:
    """The store's clock: seconds the test sets."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        """The time now."""
        return self.now


class Script:
    """A game as the store sees it: ``pending`` agent moves before the person's turn, a record that saves or not."""

    def __init__(self, path: Path, pending: int = 0, save_fails: bool = False, on_move: Any = None) -> None:
        self.record_path = path
        self.pending = pending
        self.save_fails = save_fails
        self.on_move = on_move  # called before each agent move (a test's hook)
        self.events: list[dict[str, Any]] = []
        self.moves = 0
        self.saves = 0
        self.record_error: str | None = None
        self.has_records = True

    @property
    def agents_to_act(self) -> bool:
        """Agents have moves to make."""
        return self.pending > 0

    def advance(self, max_moves: int | None = None) -> None:
        """One agent move (the store asks for one at a time)."""
        assert max_moves == 1
        if self.on_move is not None:
            self.on_move(self)
        self.pending -= 1
        self.moves += 1
        self.events.append({"seat": 1, "move": self.moves})

    def records(self) -> list[dict[str, Any]]:
        """The record so far."""
        return [{"moves": self.moves}] if self.has_records else []

    def save_or_note(self) -> Path | None:
        """Save, or note why not."""
        if self.save_fails:
            self.record_error = "the disk is full"
            return None
        self.saves += 1
        self.record_path.parent.mkdir(parents=True, exist_ok=True)
        self.record_path.write_text(f"{self.moves}\n")
        return self.record_path

    def state(self, seat: int | None = None, events_from: int = 0) -> dict[str, Any]:
        """The person's state."""
        mine = not self.agents_to_act
        return {"n_events": len(self.events), "events": self.events[events_from:], "move_index": self.moves,
                "your_turn": mine, "legal": [{"n": 1}] if mine else [], "over": False,
                "record_error": self.record_error}


class Page:
    """A watcher that keeps what it is handed."""

    def __init__(self, since: int = 0, fail: bool = False) -> None:
        self.sent = since
        self.fail = fail
        self.states: list[dict[str, Any]] = []

    def deliver(self, state: dict[str, Any]) -> None:
        """Keep it (or fail, as a page whose loop has ended)."""
        if self.fail:
            raise RuntimeError("the page's loop has ended")
        self.states.append(state)


@pytest.fixture
def clock() -> Clock:
    """A clock at 1000 s."""
    return Clock()


def make(folder: Path, clock: Clock, **limits: Any) -> Store:
    """A store of ``folder`` on ``clock``."""
    return Store(folder, clock=clock, **limits)


def add(store: Store, **script: Any) -> Table:
    """A new game of the store (its record file named as the server names them)."""
    gid = store.new_id()
    return store.add(gid, Script(store.record_path("krypkasino", 7, gid), **script))  # type: ignore[arg-type]


def finish(table: Table) -> None:
    """Wait for the game's agents' job to end."""
    if table.job is not None:
        table.job.result(timeout=30)


# ---------------------------------------------------------------- ids and files
def test_ids_are_fresh_and_name_their_record_file(tmp_path: Path, clock: Clock) -> None:
    """Ids are 12 URL-safe characters (72 random bits), never repeated; each game's file is named by its id."""
    store = make(tmp_path, clock)
    ids = {store.new_id() for _ in range(1000)}
    assert len(ids) == 1000 and all(len(i) == 12 and i.replace("-", "").replace("_", "").isalnum() for i in ids)
    path = store.record_path("kungsholmskille", 42, "abc")
    assert path.parent == tmp_path and re.fullmatch(r"web-kungsholmskille-20\d{6}-\d{6}-s42-abc\.jsonl", path.name)
    assert (MAX_GAMES, MAX_RECORD_FILES, WORKERS, MAX_JOBS, IDLE_STOP) == (128, 1000, 4, 64, 60.0)
    store.close()


# ---------------------------------------------------------------- the least recently used table
@settings(max_examples=40, deadline=None)
@given(steps=st.lists(st.tuples(st.sampled_from(["add", "get"]), st.integers(0, 10)), max_size=30),
       limit=st.integers(1, 4))
def test_the_table_is_a_least_recently_used_one(tmp_path_factory: pytest.TempPathFactory, steps: list[tuple[str, int]],
                                                 limit: int) -> None:
    """Any sequence of new games and requests: the games held are those a plain LRU of ``limit`` holds, each one
    pushed out saved exactly once, with its agents told to stop."""
    store = make(tmp_path_factory.mktemp("lru"), Clock(), max_games=limit)
    model: OrderedDict[str, Table] = OrderedDict()
    gone: list[Table] = []
    for action, k in steps:
        if action == "add":
            table = add(store)
            if len(model) >= limit:
                gone.append(model.popitem(last=False)[1])
            model[table.gid] = table
        elif model:
            gid = list(model)[k % len(model)]
            assert store.get(gid) is model[gid]
            model.move_to_end(gid)
    assert list(store.tables) == list(model)
    assert all(t.session.saves == 1 and t.cancel.is_set() for t in gone)
    assert all(t.session.saves == 0 for t in model.values())
    with pytest.raises(KeyError):
        store.get("unknown")
    store.close()


def test_a_game_that_cannot_be_saved_is_never_pushed_out(tmp_path: Path, clock: Clock) -> None:
    """The least recently used game's save fails: the new game is refused (503, naming why) and nothing is lost; its
    agents may go on.  A game with no record yet goes without one."""
    store = make(tmp_path, clock, max_games=2)
    first, second = add(store, save_fails=True), add(store)
    with pytest.raises(Busy, match=r"holds 2 games and cannot save the oldest one's record \(the disk is full\)"):
        add(store)
    assert list(store.tables) == [first.gid, second.gid] and not first.cancel.is_set()
    first.session.has_records = False
    third = add(store)
    assert list(store.tables) == [second.gid, third.gid]
    store.close()


def test_a_game_watched_live_is_never_pushed_out(tmp_path: Path, clock: Clock) -> None:
    """A game a page watches is skipped: the least recently used unwatched game goes instead; when every game is
    watched, a new one is refused (503)."""
    store = make(tmp_path, clock, max_games=2)
    watched, other = add(store), add(store)
    watched.watch(Page())
    third = add(store)
    assert list(store.tables) == [watched.gid, third.gid] and other.session.saves == 1
    third.watch(Page())
    with pytest.raises(Busy, match="each watched live by a page"):
        add(store)
    assert list(store.tables) == [watched.gid, third.gid]
    store.close()


# ---------------------------------------------------------------- record files
def test_old_record_files_are_pruned_oldest_first(tmp_path: Path, clock: Clock) -> None:
    """Beyond the limit the oldest ``web-*`` files go (by time, then name); the files of games held, ``.part`` ones
    included, and every other file stay; the live games count towards the limit."""
    folder = tmp_path / "games"
    folder.mkdir()
    for k in range(6):
        path = folder / f"web-krypkasino-old-{k}.jsonl"
        path.write_text("{}\n")
        os.utime(path, (1000, 1000 + [5, 3, 1, 0, 2, 4][k]))  # the oldest are not the first by name
    (folder / "mine.jsonl").write_text("{}\n")
    (folder / "web-notes.txt").write_text("kept: not a record\n")
    store = make(folder, clock, max_files=4)
    live = add(store)
    live.session.save_or_note()
    (folder / (live.session.record_path.name + ".part")).write_text("{}\n")
    store.prune()
    left = sorted(p.name for p in folder.glob("web-krypkasino-old-*"))
    assert left == ["web-krypkasino-old-0.jsonl", "web-krypkasino-old-1.jsonl", "web-krypkasino-old-5.jsonl"]  # 6 old
    # files and the live game's are 7, over 4: the 3 oldest (mtimes 0, 1, 2: files 3, 2, 4) went
    assert (folder / "mine.jsonl").exists() and (folder / "web-notes.txt").exists()
    assert live.session.record_path.exists() and (folder / (live.session.record_path.name + ".part")).exists()
    store.close()


def test_pruning_skips_live_and_vanishing_files_and_goes_on(tmp_path: Path, clock: Clock,
                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    """The files of games held come first by name here, and one old file vanishes between the listing and its
    reading, another before it is removed: each is skipped and the rest are still pruned, silently."""
    folder = tmp_path / "games"
    folder.mkdir()
    store = make(folder, clock, max_files=2)
    live = add(store)
    live.session.save_or_note()  # web-krypkasino-20...: sorts before the old ones
    for k in range(6):
        path = folder / f"web-krypkasino-old-{k}.jsonl"
        path.write_text("{}\n")
        os.utime(path, (1000, 1000 + k))
    real_stat, real_unlink = Path.stat, Path.unlink

    def stat(self: Path, **kw: Any) -> Any:
        if self.name == "web-krypkasino-old-1.jsonl":
            raise FileNotFoundError(self)
        return real_stat(self, **kw)

    def unlink(self: Path, missing_ok: bool = False) -> None:
        if self.name == "web-krypkasino-old-2.jsonl":
            real_unlink(self)  # another prune removed it first
        real_unlink(self, missing_ok=missing_ok)

    monkeypatch.setattr(Path, "stat", stat)
    monkeypatch.setattr(Path, "unlink", unlink)
    store.prune()
    monkeypatch.undo()
    left = sorted(p.name for p in folder.glob("web-krypkasino-old-*"))
    assert left == ["web-krypkasino-old-1.jsonl", "web-krypkasino-old-5.jsonl"]  # 5 listed + 1 live, 2 kept
    assert live.session.record_path.exists()
    store.close()


def test_pruning_is_quiet_about_a_missing_folder_and_reports_failures(tmp_path: Path, clock: Clock,
                                                                      capsys: pytest.CaptureFixture[str],
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """No folder yet: nothing to do.  A failure to tidy is printed on the server's terminal, never raised."""
    store = make(tmp_path / "none", clock)
    store.prune()
    assert capsys.readouterr().err == ""

    def fail() -> None:
        raise OSError("read-only file system")

    monkeypatch.setattr(store, "_prune", fail)
    store.prune()
    err = capsys.readouterr().err
    assert "could not tidy" in err and "read-only file system" in err
    store.close()


# ---------------------------------------------------------------- agent jobs
def test_at_most_max_jobs_wait_and_every_slot_comes_back(tmp_path: Path, clock: Clock) -> None:
    """Past ``max_jobs`` jobs running or waiting, a 503 (Busy) naming the limit; a job that ends, failing or not,
    gives its slot back."""
    store = make(tmp_path, clock, max_jobs=2, workers=1)
    release = threading.Event()
    held = [store.submit(release.wait), store.submit(lambda: 1 / 0)]
    with pytest.raises(Busy, match=r"busy \(2 agent jobs running or waiting\)"):
        store.submit(lambda: None)
    release.set()
    assert held[0].result(timeout=30) is True
    with pytest.raises(ZeroDivisionError):
        held[1].result(timeout=30)
    assert [store.submit(lambda k=k: k).result(timeout=30) for k in range(5)] == list(range(5))
    store.close()


def test_the_agents_play_to_the_persons_turn_and_each_move_reaches_the_watchers(tmp_path: Path, clock: Clock) -> None:
    """drive() plays the agents' moves one at a time; a watcher is handed each move as it is made (thinking) and the
    end of the job (not thinking, the person's turn), each state with only the events it had not had."""
    store = make(tmp_path, clock)
    table = add(store, pending=4)
    page = Page()
    table.watch(page)
    assert page.states[0]["n_events"] == 0 and not page.states[0]["thinking"]
    store.drive(table)
    finish(table)
    states = page.states[1:]
    assert [len(s["events"]) for s in states if s["events"]] == [1, 1, 1, 1]
    assert [s["events"][0]["move"] for s in states if s["events"]] == [1, 2, 3, 4]
    assert all(s["thinking"] and not s["your_turn"] and s["legal"] == [] for s in states if s["events"])
    deadline = 200
    while page.states[-1]["thinking"] and deadline:  # the job's end is handed after it is done
        threading.Event().wait(0.01)
        deadline -= 1
    assert not page.states[-1]["thinking"] and page.states[-1]["your_turn"] and page.sent == 4
    store.drive(table)  # nothing to play: no job, the watcher is handed the (unchanged) state
    assert not table.thinking and table.session.moves == 4
    store.close()


def test_drive_starts_one_job_only_when_agents_have_moves(tmp_path: Path, clock: Clock) -> None:
    """No job for a game at the person's turn, for one whose agent failed, or beside a job already running."""
    store = make(tmp_path, clock)
    idle = add(store)
    store.drive(idle)
    assert idle.job is None
    failed = add(store, pending=2)
    failed.failure = "an agent could not move: earlier"
    store.drive(failed)
    assert failed.job is None
    busy = add(store, pending=3)
    with busy.lock:  # the job waits for the game's lock: it is running, not yet moving
        store.drive(busy)
        job = busy.job
        store.drive(busy)
        assert busy.job is job and busy.thinking
    finish(busy)
    assert busy.session.moves == 3 and not busy.thinking
    store.close()


def test_an_agent_that_fails_stops_the_game_saying_why(tmp_path: Path, clock: Clock,
                                                       capsys: pytest.CaptureFixture[str]) -> None:
    """An agent's exception ends the job: the game waits with ``agent_error`` naming it (and the server's terminal
    too); the store goes on with other games."""
    store = make(tmp_path, clock)

    def boom(script: Script) -> None:
        if script.moves == 1:
            raise ValueError("no legal move")

    table = add(store, pending=3, on_move=boom)
    store.drive(table)
    finish(table)
    with table.lock:
        state = table.state(0)
    assert state["agent_error"] == "an agent could not move: ValueError: no legal move" and table.session.moves == 1
    assert f"game {table.gid}: an agent could not move" in capsys.readouterr().err
    store.drive(table)
    assert table.session.moves == 1  # not retried
    store.close()


def test_a_cancelled_job_stops_after_the_move_it_is_making(tmp_path: Path, clock: Clock) -> None:
    """The client went away during the agents' moves: the move in progress ends, no other starts; the next drive
    plays on."""
    store = make(tmp_path, clock)
    table = add(store, pending=5, on_move=lambda s: table.cancel.set() if s.moves == 1 else None)
    store.drive(table)
    finish(table)
    assert table.session.moves == 2 and table.session.pending == 3
    table.session.on_move = None
    store.drive(table)
    finish(table)
    assert table.session.moves == 5


# ---------------------------------------------------------------- idle games, long-lived games
def test_a_game_nobody_asked_for_stops_exactly_after_idle_stop(tmp_path: Path, clock: Clock) -> None:
    """The agents stop when no request asked for the game for more than ``idle_stop`` seconds (exactly that long
    still plays); the next request resumes them."""
    store = make(tmp_path, clock, idle_stop=60.0)
    table = add(store, pending=3)
    clock.now += 60.0
    store.drive(table)
    finish(table)
    assert table.session.moves == 3  # 60 s is not more than 60 s
    table.session.pending = 3
    clock.now += 60.001
    store.drive(table)
    finish(table)
    assert table.session.moves == 3 and table.session.agents_to_act  # idle: stopped before a move
    assert store.get(table.gid) is table and table.seen == clock.now  # a request ...
    store.drive(table)
    finish(table)
    assert table.session.moves == 6  # ... resumes them
    store.close()


def test_a_game_watched_live_never_stops_for_lack_of_requests(tmp_path: Path, clock: Clock) -> None:
    """A page watching the game keeps its agents playing however long ago the last request was; once it goes, the
    idle limit applies again."""
    store = make(tmp_path, clock, idle_stop=60.0)
    table = add(store, pending=2)
    page = Page()
    table.watch(page)
    clock.now += 10 * 3600
    store.drive(table)
    finish(table)
    assert table.session.moves == 2 and store.idle(table) is False
    assert table.unwatch(page) and store.idle(table)
    table.session.pending = 2
    store.drive(table)
    finish(table)
    assert table.session.moves == 2


def test_a_long_game_played_on_stays_while_idle_ones_go(tmp_path: Path, clock: Clock) -> None:
    """A game played for ten (simulated) hours, an hour between moves (past every idle limit), stays held and
    playing while 20 other games come and go in a table of three; the idle ones are pushed out, saved."""
    store = make(tmp_path, clock, max_games=3, idle_stop=60.0)
    long = add(store, pending=1)
    others: list[Table] = []
    for hour in range(10):
        clock.now += 3600
        assert store.get(long.gid) is long  # the person's request ...
        long.session.pending += 1
        store.drive(long)  # ... and their move: the agents answer
        finish(long)
        assert long.session.moves == hour + 2 and not long.session.agents_to_act
        others += [add(store) for _ in range(2)]
    assert long.gid in store.tables and len(store.tables) == 3
    assert sum(t.gid in store.tables for t in others) == 2 and all(t.session.saves == 1 for t in others[:-2])
    store.close()


# ---------------------------------------------------------------- watchers and closing
def test_watchers_that_fail_are_dropped_and_unwatch_says_when_none_is_left(tmp_path: Path, clock: Clock) -> None:
    """A watcher whose delivery fails is dropped without stopping the agents; ``unwatch`` is True when the last
    one goes."""
    store = make(tmp_path, clock)
    table = add(store, pending=2)
    good, bad = Page(), Page(fail=True)
    table.watch(good)
    table.watch(bad)
    assert table.watchers == {good}
    store.drive(table)
    finish(table)
    assert table.session.moves == 2 and good.sent == 2
    assert table.unwatch(Page()) is False and table.unwatch(good) is True
    store.close()


def test_agents_play_on_the_pool_never_on_the_callers_thread(tmp_path: Path, clock: Clock) -> None:
    """Every agent move runs on one of the pool's threads (named krypenv-agents), not the thread that asked."""
    store = make(tmp_path, clock)
    threads: list[str] = []
    table = add(store, pending=3, on_move=lambda s: threads.append(threading.current_thread().name))
    store.drive(table)
    finish(table)
    assert len(threads) == 3 and all(t.startswith("krypenv-agents_") for t in threads)
    assert threading.current_thread().name not in threads
    store.close()


def test_close_stops_the_agents_and_saves_every_game(tmp_path: Path, clock: Clock) -> None:
    """Closing tells every game's agents to stop, waits for the move in progress, drops the jobs still waiting,
    and saves every game's record once more."""
    store = make(tmp_path, clock, workers=1)
    tables = [add(store) for _ in range(3)]
    started, release = threading.Event(), threading.Event()

    def slow() -> str:
        started.set()
        release.wait(30)
        return "done"

    running, waiting = store.submit(slow), store.submit(lambda: "never")
    started.wait(30)
    threading.Timer(0.2, release.set).start()
    store.close()
    assert running.done() and running.result() == "done" and waiting.cancelled()
    assert all(t.cancel.is_set() and t.session.saves == 1 for t in tables)
    assert sorted(p.name for p in tmp_path.glob("web-*")) == sorted(t.session.record_path.name for t in tables)


def test_thinking_hides_the_persons_moves(tmp_path: Path, clock: Clock) -> None:
    """While the agents' job runs the state offers no move and says so; the agent's failure is in the state."""
    store = make(tmp_path, clock)
    table = add(store, pending=1)
    with table.lock:  # the job waits for the game's lock: the agents are thinking
        store.drive(table)
        state = table.state(0)
    assert state["thinking"] and state["your_turn"] is False and state["legal"] == [] and state["agent_error"] is None
    finish(table)
    with table.lock:
        state = table.state(0)
    assert not state["thinking"] and state["your_turn"] and state["legal"] == [{"n": 1}]
    store.close()


def test_random_request_orders_keep_the_table_bounded(tmp_path: Path, clock: Clock) -> None:
    """However requests interleave, the store never holds more than its limit, and the most recent game stays."""
    rng = random.Random(3)
    store = make(tmp_path, clock, max_games=5)
    held = [add(store).gid]
    for _ in range(200):
        if rng.random() < 0.5:
            held.append(add(store).gid)
        else:
            gid = rng.choice(held)
            if gid in store.tables:
                store.get(gid)
        assert len(store.tables) <= 5 and held[-1] in store.tables
    store.close()
