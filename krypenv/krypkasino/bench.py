"""``krypenv bench [--json] [--seconds S] [--batches 1,256,4096]``: throughput of the batched engine.

For each batch size B, B three-player deals (``Rules()``) are dealt from freshly shuffled
decks (``Deals.reset(rng=...)``) and played to the end by ``Deals.play_random`` (a uniformly
random legal card, then a uniformly random legal capture of it), over and over for about S
seconds (default 3).  Batches of at least 64 deals run on numba's thread pool, i.e. on all
cores.  A *decision* is one card played; dealing is part of the timed work.  One untimed
batch of deals per batch size first loads or compiles the kernels (numba compiles on first
use, which can take a minute once after installing).

The text output is one line per batch size (decisions/s, deals/s, bytes of state per deal)
and a machine line.  ``--json`` prints exactly one JSON object::

    {"engine": [{"batch": 1, "decisions_per_s": 1.4e5, "deals_per_s": 1.4e3, "bytes_per_deal": 896}, ...],
     "machine": {"cpus": 2, "numba_threads": 2, "cpu": "...", "python": "3.11.7", "numba": "...", "numpy": "..."}}

Later benchmarks add keys to that object: a module registers a function with
:func:`register` (it takes the seconds per measurement and returns a JSON-able dict), and
:func:`run` runs every registered benchmark after the engine's and reports it under its name.
This module registers the environments' own:

* ``aec``: the PettingZoo AEC env (``krypenv.env(players=3)``, one game), every step a
  uniform random legal action chosen from the observation's mask, with ``env.last()``,
  observations and masks as a user loop sees them: ``{"players", "steps_per_s"}``.
* ``vec``: the batched VecEnv at 4096 games, 3 players, built-in random opponents, the
  learner's uniform random legal actions picked from ``action_masks()``; every step returns
  observations, rewards, dones, infos and masks: ``{"batch", "players", "steps_per_s"}``
  (a step is one learner decision in one game).  ``vec_2p`` is the same for 2 players.
"""

from __future__ import annotations

import json
import os
import platform
import sys
import time
from collections.abc import Callable
from typing import Any, TextIO

import numba
import numpy as np

from krypenv.krypkasino.engine import Deals
from krypenv.krypkasino.rules import Rules

Benchmark = Callable[[float], dict[str, Any]]
BENCHMARKS: dict[str, Benchmark] = {}  # name -> benchmark, run by run() after the engine's
DEFAULT_BATCHES = (1, 256, 4096)


def register(name: str, benchmark: Benchmark) -> None:
    """Add a benchmark to ``krypenv bench``; its result appears under ``name``."""
    if name in ("engine", "machine") or name in BENCHMARKS:
        raise ValueError(f"benchmark name {name!r} is already taken")
    BENCHMARKS[name] = benchmark


def _play_batch(deals: Deals, rng: np.random.Generator) -> int:
    """Deal every deal anew and play them all to the end; return the decisions played."""
    deals.reset(rng=rng)
    while not deals.done.all():
        deals.play_random(rng)
    return int(deals.n_moves.sum())


def bench_engine(batch: int, seconds: float, rules: Rules | None = None, seed: int = 0) -> dict[str, Any]:
    """Random play at one batch size for about ``seconds`` (at least one batch); one ``engine`` row."""
    deals = Deals(rules or Rules(), batch)
    rng = np.random.default_rng(seed)
    _play_batch(deals, rng)  # warm-up, not timed: loads or compiles the kernels
    decisions = finished = 0
    start = time.perf_counter()
    while True:
        decisions += _play_batch(deals, rng)
        finished += batch
        elapsed = time.perf_counter() - start
        if elapsed >= seconds:
            break
    return {
        "batch": batch,
        "decisions_per_s": decisions / elapsed,
        "deals_per_s": finished / elapsed,
        "bytes_per_deal": deals.nbytes_per_deal,
    }


def bench_aec(seconds: float, players: int = 3, seed: int = 0) -> dict[str, Any]:
    """Steps per second of the AEC env under uniform random legal play (after an untimed warm-up deal)."""
    import krypenv
    from krypenv.rng import k_pick_legal

    env = krypenv.env(players=players)
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

    play(0.0)  # warm-up: one deal
    start = time.perf_counter()
    steps = play(seconds)
    return {"players": players, "steps_per_s": steps / (time.perf_counter() - start)}


def bench_vec(seconds: float, batch: int = 4096, players: int = 3, seed: int = 0) -> dict[str, Any]:
    """Steps per second of the VecEnv (one step = one learner decision in one game) under random play."""
    from krypenv.rng import k_pick_legal
    from krypenv.krypkasino.vec import KrypkasinoVecEnv

    env = KrypkasinoVecEnv(batch, players=players, seed=seed)
    env.reset()
    rng = np.random.default_rng(seed)
    actions = np.zeros(batch, np.int64)

    def step() -> None:
        k_pick_legal(env.action_masks(), rng.random(batch), actions)
        env.step(actions)

    step()  # warm-up
    steps = 0
    start = time.perf_counter()
    while time.perf_counter() - start < seconds:
        step()
        steps += batch
    return {"batch": batch, "players": players, "steps_per_s": steps / (time.perf_counter() - start)}


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


def run(as_json: bool = False, seconds: float = 3.0, batches: tuple[int, ...] | list[int] = DEFAULT_BATCHES,
        out: TextIO | None = None) -> dict[str, Any]:
    """Run the engine benchmark at every batch size, then the registered ones; print and return the results."""
    out = sys.stdout if out is None else out
    result: dict[str, Any] = {"engine": []}
    if not as_json:
        print("uniformly random legal play, 3 players (Rules()); a decision is one card played", file=out)
    for b in batches:
        row = bench_engine(b, seconds)
        result["engine"].append(row)
        if not as_json:
            print(f"engine batch {b:>5}: {row['decisions_per_s']:>12,.0f} decisions/s  "
                  f"{row['deals_per_s']:>10,.0f} deals/s  {row['bytes_per_deal']:>6} bytes/deal", file=out, flush=True)
    for name, benchmark in BENCHMARKS.items():
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


register("aec", bench_aec)
register("vec", bench_vec)
register("vec_2p", lambda seconds: bench_vec(seconds, players=2))
