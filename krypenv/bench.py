"""``krypenv bench [--json] [--seconds S] [--batches 1,256,4096]``: throughput of the engines, envs and evaluation.

The command runs every registered benchmark for about S seconds each (default 3) and reports
it under its name.  Compilation is never timed: a benchmark first runs untimed work that
loads or compiles its kernels (numba compiles on first use, which can take a minute once
after installing).  Two kinds of benchmark are registered here, by the games and by the
layers above them:

* *batched* ones (:func:`register_batched`), measured at every batch size of ``--batches``
  (default 1, 256, 4096), run first; their result is a list of rows, one per batch size,
  and the text output a header line and one line per row.  Krypkasino's ``engine``
  (random play through the batched engine: decisions/s, deals/s, bytes of state per deal)
  is one.
* plain ones (:func:`register`): a function of the seconds per measurement returning a
  JSON-able dict, printed as ``name: key value, ...``.  Krypkasino's ``aec``, ``vec`` and
  ``vec_2p`` (its environments), and ``eval`` (the duplicate harness, registered by the CLI,
  since ``krypenv`` itself never imports ``eval``).

``--json`` prints exactly one JSON object: one key per benchmark in the order they ran, then
``machine``::

    {"engine": [{"batch": 1, "decisions_per_s": 1.4e5, "deals_per_s": 1.4e3, "bytes_per_deal": 896}, ...],
     "aec": {...}, "vec": {...}, "vec_2p": {...}, "eval": {...},
     "machine": {"cpus": 2, "numba_threads": 2, "cpu": "...", "python": "3.11.7", "numba": "...", "numpy": "..."}}

**Games.**  The registry of games (:mod:`krypenv.games`) names each game's benchmark module, its
``bench`` part, which registers that game's benchmarks when imported.  :func:`load_games` imports
them all (on first use only, so this module imports no game); :func:`run` calls it.  A game
plugs in with its declaration there and a module that calls :func:`register_batched` / :func:`register`.
"""

from __future__ import annotations

import json
import os
import platform
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TextIO

import numba
import numpy as np

from krypenv.games import GAMES

__all__ = ["BATCH_BENCHMARKS", "BENCHMARKS", "GAME_OF", "BatchBenchmark", "aec_row", "aec_steps_per_s", "engine_line",
           "engine_row", "load_games", "machine", "rate_per_s", "register", "register_batched", "run", "vec_row",
           "vec_steps_per_s"]

Benchmark = Callable[[float], dict[str, Any]]  # seconds -> result
BatchRow = Callable[[int, float], dict[str, Any]]  # (batch size, seconds) -> one row


@dataclass(frozen=True)
class BatchBenchmark:
    """A benchmark measured at every batch size: its row function, and how the text output shows it."""

    row: BatchRow
    header: str  # printed once before the rows
    line: Callable[[dict[str, Any]], str]  # the text line of one row


BATCH_BENCHMARKS: dict[str, BatchBenchmark] = {}  # name -> benchmark, run first at every batch size
BENCHMARKS: dict[str, Benchmark] = {}  # name -> benchmark, run once each after the batched ones
GAME_OF: dict[str, str | None] = {}  # name -> the game whose benchmark it is (None: not a game's; output order)
DEFAULT_BATCHES = (1, 256, 4096)


def _check_name(name: str) -> None:
    """ValueError if ``name`` is reserved or already registered."""
    if name == "machine" or name in BENCHMARKS or name in BATCH_BENCHMARKS:
        raise ValueError(f"benchmark name {name!r} is already taken")


def register(name: str, benchmark: Benchmark, game: str | None = None) -> None:
    """Add a benchmark to ``krypenv bench``; its result appears under ``name`` (in ``game``'s place, if a game's)."""
    _check_name(name)
    BENCHMARKS[name], GAME_OF[name] = benchmark, game


def register_batched(name: str, row: BatchRow, header: str, line: Callable[[dict[str, Any]], str],
                     game: str | None = None) -> None:
    """Add a benchmark measured at every ``--batches`` size; its rows appear as a list under ``name``."""
    _check_name(name)
    BATCH_BENCHMARKS[name], GAME_OF[name] = BatchBenchmark(row, header, line), game


def load_games() -> None:
    """Import every game's benchmark module, which registers its benchmarks (once: imports are cached)."""
    for game in GAMES.values():
        game.part("bench")  # the registry's lazy load: no game at import time



def engine_row(deals: Any, play_batch: Callable[[Any, np.random.Generator], int], seconds: float, seed: int = 0,
               **fields: Any) -> dict[str, Any]:
    """One row of a game's ``engine`` benchmark: ``play_batch(deals, rng)`` (deal every deal anew, play them all to
    the end, return the decisions made) over and over for about ``seconds``, at least once, after one untimed batch
    that loads or compiles the kernels.

    The row is ``{"batch", **fields, "decisions_per_s", "deals_per_s", "bytes_per_deal"}``.
    """
    rng = np.random.default_rng(seed)
    play_batch(deals, rng)  # warm-up, not timed: loads or compiles the kernels
    decisions = finished = 0
    start = time.perf_counter()
    while True:
        decisions += play_batch(deals, rng)
        finished += deals.n
        elapsed = time.perf_counter() - start
        if elapsed >= seconds:
            break
    return {
        "batch": deals.n,
        **fields,
        "decisions_per_s": decisions / elapsed,
        "deals_per_s": finished / elapsed,
        "bytes_per_deal": deals.nbytes_per_deal,
    }


def rate_per_s(play: Callable[[], int], seconds: float) -> float:
    """Units per second of ``play()`` (which returns the units it made) repeated for about ``seconds``, after one
    untimed call (warm-up)."""
    play()
    made, start = 0, time.perf_counter()
    while True:
        made += play()
        if time.perf_counter() - start >= seconds:
            return made / (time.perf_counter() - start)


def gpu_engine(rng: Any, decisions: Any, launch: Callable[[int], tuple[Any, ...]], cpu_rows: int,
               cpu_play: Callable[[np.ndarray, np.ndarray], None],
               bytes_per_deal: int) -> tuple[dict[str, Any], Callable[[float], float], int]:
    """What a game's ``gpu_engine_setup`` returns (krypenv.bench_device): the device arrays of the streams and the
    decision counts, ``launch(deals)`` (the kernel's arguments), the CPU twin's rate over ``seconds`` and the bytes of
    state per deal.  The twin is ``cpu_play(rng, decisions)``: one deal on each of ``cpu_rows`` rows from their own
    streams (seeded 1, 2, …), each row's decisions written to ``decisions``."""
    from krypenv.rng import seed_range

    def cpu_rate(seconds: float) -> float:
        cpu_rng, made = seed_range(1, cpu_rows), np.zeros(cpu_rows, np.int64)

        def play() -> int:
            cpu_play(cpu_rng, made)
            return int(made.sum())

        return rate_per_s(play, seconds)

    return {"rng": rng, "decisions": decisions, "launch": launch}, cpu_rate, bytes_per_deal


def engine_line(name: str) -> Callable[[dict[str, Any]], str]:
    """The text line of one row of the engine benchmark registered as ``name``."""

    def line(row: dict[str, Any]) -> str:
        return (f"{name} batch {row['batch']:>5}: {row['decisions_per_s']:>12,.0f} decisions/s  "
                f"{row['deals_per_s']:>10,.0f} deals/s  {row['bytes_per_deal']:>6} bytes/deal")

    return line


def aec_row(game: str, seconds: float, players: int, seed: int = 0) -> dict[str, Any]:
    """A game's ``aec`` result ``{"players", "steps_per_s"}``: its wrapped AEC env (``entry.env``) at ``players``."""
    env = GAMES[game].part("entry").env(players=players)
    return {"players": players, "steps_per_s": aec_steps_per_s(env, seconds, seed)}


def vec_row(game: str, seconds: float, players: int, batch: int = 4096, seed: int = 0) -> dict[str, Any]:
    """A game's ``vec`` result ``{"batch", "players", "steps_per_s"}``: its ``entry.VecEnv`` of ``batch`` games."""
    env = GAMES[game].part("entry").VecEnv(batch, players=players, seed=seed)
    return {"batch": env.num_envs, "players": players, "steps_per_s": vec_steps_per_s(env, seconds, seed)}


def aec_steps_per_s(env: Any, seconds: float, seed: int = 0) -> float:
    """Steps/s of a PettingZoo AEC env under uniform random legal play, after one untimed warm-up episode.

    Every step picks from the observation's ``action_mask`` with ``env.last()`` as a user loop
    does; episodes follow one another (the first seeded from ``seed``) until ``seconds`` have passed.
    """
    from krypenv.rng import k_pick_legal

    rng = np.random.default_rng(seed)
    pick = np.zeros(1, np.int64)

    def play(limit: float) -> int:
        env.reset(seed=int(rng.integers(2**31)))
        steps = 0
        start = time.perf_counter()
        while True:
            obs, _, term, trunc, _ = env.last()
            if term or trunc:
                env.step(None)
                if not env.agents:
                    if time.perf_counter() - start >= limit:
                        return steps
                    env.reset()
                continue
            k_pick_legal(obs["action_mask"][None, :], rng.random(1), pick)
            env.step(int(pick[0]))
            steps += 1

    play(0.0)  # warm-up: one episode
    start = time.perf_counter()
    steps = play(seconds)
    return steps / (time.perf_counter() - start)


def vec_steps_per_s(env: Any, seconds: float, seed: int = 0) -> float:
    """Steps/s of a batched VecEnv (one step = one learner decision in one game), random legal actions
    picked from ``action_masks()``, after one untimed warm-up step."""
    from krypenv.rng import k_pick_legal

    env.reset()
    rng = np.random.default_rng(seed)
    actions = np.zeros(env.num_envs, np.int64)

    def step() -> int:
        k_pick_legal(env.action_masks(), rng.random(env.num_envs), actions)
        env.step(actions)
        return env.num_envs

    return rate_per_s(step, seconds)


def _cpu_model() -> str:
    """The processor's model name from /proc/cpuinfo, or the machine type elsewhere."""
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as fh:
            for line in fh:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.machine()


def machine() -> dict[str, Any]:
    """The ``machine`` object: cores, numba threads, processor and versions."""
    return {
        "cpus": os.cpu_count(),
        "numba_threads": numba.get_num_threads(),
        "cpu": _cpu_model(),
        "python": platform.python_version(),
        "numba": numba.__version__,
        "numpy": np.__version__,
    }


def _number(value: Any) -> str:
    """A value for the text output: floats of 100 or more rounded, with thousands separators."""
    if isinstance(value, float):
        return f"{value:,.0f}" if abs(value) >= 100 else f"{value:.3g}"
    return str(value)


def _text(name: str, result: dict[str, Any]) -> str:
    """One text line for a registered benchmark's result (a nested dict reads ``key: a 1, b 2``)."""
    def item(k: str, v: Any) -> str:
        if isinstance(v, dict):
            return f"{k}: " + ", ".join(f"{kk} {_number(vv)}" for kk, vv in v.items())
        return f"{k} {_number(v)}"

    return f"{name}: " + ", ".join(item(k, v) for k, v in result.items())


def _in_game_order(registry: dict[str, Any]) -> list[tuple[str, Any]]:
    """The registry's items ordered by the game they belong to (the games' order), others after.

    Registration order depends on which game module some earlier code imported first; the
    output's key order must not.  Within one game, and among non-game benchmarks, the
    registration order is kept.
    """
    order = list(GAMES)

    def rank(item: tuple[str, Any]) -> int:
        game = GAME_OF.get(item[0])
        return order.index(game) if game in order else len(order)

    return sorted(registry.items(), key=rank)


def run(as_json: bool = False, seconds: float = 3.0, batches: tuple[int, ...] | list[int] = DEFAULT_BATCHES,
        out: TextIO | None = None) -> dict[str, Any]:
    """Run the batched benchmarks at every batch size, then the others; print and return the results."""
    out = sys.stdout if out is None else out
    load_games()
    result: dict[str, Any] = {}
    for name, batched in _in_game_order(BATCH_BENCHMARKS):
        result[name] = []
        if not as_json:
            print(batched.header, file=out)
        for b in batches:
            row = batched.row(b, seconds)
            result[name].append(row)
            if not as_json:
                print(batched.line(row), file=out, flush=True)
    for name, benchmark in _in_game_order(BENCHMARKS):
        result[name] = benchmark(seconds)
        if not as_json:
            print(_text(name, result[name]), file=out, flush=True)
    result["machine"] = m = machine()
    if as_json:
        print(json.dumps(result), file=out)
    else:
        print(f"machine: {m['cpus']} CPUs, {m['numba_threads']} numba threads, {m['cpu']}; "
              f"Python {m['python']}, numba {m['numba']}, numpy {m['numpy']}", file=out)
    return result
