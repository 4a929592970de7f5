"""krypenv.jit: the engines' functions compiled without reference counting keep every count balanced.

The rules of :mod:`krypenv.jit` are held three ways: every compiled function of a module that uses ``@borrowing`` states
its runtime setting (none inherits it from its first caller); no ``@borrowing`` function is annotated to return an
array; and whole episodes of every env kind and the engine leave numba's runtime with as many frees as allocations
(``NUMBA_NRT_STATS``: a leaked array or reference would leave one more allocation than free).
"""

from __future__ import annotations

import importlib
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from numba.core.registry import CPUDispatcher

ROOT = Path(__file__).resolve().parents[1]
MODULES = ["krypenv.krypkasino.engine.captures", "krypenv.krypkasino.engine.expansion",
           "krypenv.krypkasino.engine.kernels", "krypenv.krypkasino.actions", "krypenv.krypkasino.observation",
           "krypenv.krypkasino.env_kernels", "krypenv.kungsholmskille.engine.kernels",
           "krypenv.kungsholmskille.engine.drivers", "krypenv.kungsholmskille.env_kernels",
           "krypenv.kungsholmskille.observation", "krypenv.kungsholmskille.actions"]


def dispatchers(name: str) -> dict[str, CPUDispatcher]:
    """The compiled functions defined in module ``name``."""
    module = importlib.import_module(name)
    return {k: v for k, v in vars(module).items()
            if isinstance(v, CPUDispatcher) and v.py_func.__module__ == name}


@pytest.mark.parametrize("name", MODULES)
def test_every_function_states_its_runtime(name: str) -> None:
    """In a module of ``@borrowing`` functions each compiled function is ``@borrowing``, ``@counted``, inlined or a
    parallel driver (called from Python): none takes its runtime setting from whichever caller compiles it first."""
    found = dispatchers(name)
    assert found
    loose = [k for k, d in found.items() if "_nrt" not in d.targetoptions
             and d.targetoptions.get("inline") != "always" and not d.targetoptions.get("parallel")]
    assert not loose, f"{name}: {loose} compiled with the runtime setting of their first caller"


@pytest.mark.parametrize("name", MODULES)
def test_no_borrowing_function_returns_an_array(name: str) -> None:
    """A ``@borrowing`` function returns no array (its caller would decrement a count never incremented)."""
    bad = [k for k, d in dispatchers(name).items() if d.targetoptions.get("_nrt") is False
           and "ndarray" in str(d.py_func.__annotations__.get("return", ""))]
    assert not bad


CHILD = r"""
import json, sys
import numpy as np
from numba.core.runtime import rtsys
from krypenv.games import GAMES
from krypenv.rng import k_pick_legal
game, players = sys.argv[1], int(sys.argv[2])
entry = GAMES[game].part("entry")

def vec(n):
    env = entry.VecEnv(n, players=players, seed=3)
    env.reset()
    rng = np.random.default_rng(0)
    actions = np.zeros(n, np.int64)
    for _ in range(300):
        k_pick_legal(env.action_masks(), rng.random(n), actions)
        env.step(actions)

def aec():
    env = entry.env(players=players)
    env.reset(seed=5)
    rng = np.random.default_rng(1)
    for _ in range(400):
        if all(env.terminations.values()) or all(env.truncations.values()):
            env.reset(seed=int(rng.integers(1 << 30)))
        obs, _, term, trunc, _ = env.last()
        env.step(None if term or trunc else int(rng.choice(np.flatnonzero(obs["action_mask"]))))

def engine():
    bench = GAMES[game].part("bench")  # one batch of 64 deals played out
    if game == "krypkasino":
        from krypenv.krypkasino.rules import Rules
        bench.bench_engine(64, 0.0, Rules(players=players), seed=2)
    else:
        bench.bench_engine(64, 0.0, players=players, seed=2)

out = {}
for name, work in (("vec_serial", lambda: vec(8)), ("vec_parallel", lambda: vec(256)), ("aec", aec),
                   ("engine", engine)):
    work()  # compiles and loads everything first
    a = rtsys.get_allocation_stats()
    work()
    b = rtsys.get_allocation_stats()
    out[name] = [b.alloc - a.alloc, b.free - a.free, b.mi_alloc - a.mi_alloc, b.mi_free - a.mi_free]
print(json.dumps(out))
"""


@pytest.mark.parametrize(("game", "players"), [("krypkasino", 2), ("krypkasino", 4), ("kungsholmskille", 4)])
def test_whole_episodes_leave_every_count_balanced(game: str, players: int) -> None:
    """The VecEnv (serial and parallel drivers), the AEC env and the engine free every allocation and every meminfo
    they make: the runtime's statistics, counted over a second run of each, balance."""
    env = {**os.environ, "NUMBA_NRT_STATS": "1"}
    done = subprocess.run([sys.executable, "-c", CHILD, game, str(players)], capture_output=True, text=True,
                          cwd=ROOT, env=env, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    stats = json.loads(done.stdout.strip().splitlines()[-1])
    for name, (alloc, free, mi_alloc, mi_free) in stats.items():
        assert alloc == free and mi_alloc == mi_free, (name, alloc, free, mi_alloc, mi_free)


def test_the_hot_functions_are_compiled_without_counting() -> None:
    """The functions of an engine decision and an env step are ``@borrowing`` (no runtime), the capture search's
    overflow path ``@counted`` (it allocates)."""
    from krypenv.krypkasino import env_kernels, observation
    from krypenv.krypkasino.engine import captures, kernels
    from krypenv.kungsholmskille import env_kernels as kille_env
    from krypenv.kungsholmskille.engine import kernels as kille

    hot = [kernels.apply_move, captures.table_value_key, captures.hand_sweep_values_s, captures.combos_into,
           observation.encode_into, env_kernels.act_one, env_kernels.observe_one, env_kernels.advance_one,
           kille.apply, kille_env.act_one, kille_env.observe_one]
    assert [f.py_func.__name__ for f in hot if f.targetoptions["_nrt"] is not False] == []
    assert captures._splits.targetoptions["_nrt"] is True
