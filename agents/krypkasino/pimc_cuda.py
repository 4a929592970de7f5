"""``pimc`` on a GPU (its option ``device=cuda``): the determinized search's worlds and rollouts in CUDA threads.

    krypenv eval --agents "pimc:samples=256,z=1,device=cuda,expert" --deals 1000
    python -m krypenv.training.distill --teacher "endgame:pimc:samples=256,z=1,device=cuda" ...

Each CUDA thread runs whole decisions: thread ``t`` of ``G`` takes decisions ``t, t + G, …`` and runs
:func:`krypenv.agents.krypkasino.pimc.action_values` on each, the function the CPU drivers run, compiled by numba-cuda
(the rules, the worlds of :func:`krypenv.agents.krypkasino.worlds.determinize_into` and the rollout policy's tactics
are the CPU's code: nothing is written twice).  A thread's buffers (the search's rows, move lists, sums, the
tactics' scratch) are its own local arrays, sized for the largest deal (6 seats) and the tactics' move lists
(``MAX_MOVES``).

What moves between host and device per batch: each decision's row of the engine state (int8, one row per decision,
row-major), its capture-choice row and its uniform go up; every action's value and the action come back.  The games
stay where they are (the CPU VecEnv of the labeller or the evaluation); only the search runs on the device.

**The same labels as the CPU, bit for bit.**  A decision's worlds and rollouts come from its one uniform (the
search's splitmix64 stream, :mod:`krypenv.agents.krypkasino.worlds`), however the decisions are spread over
threads; the sums are taken in the CPU's order; the kernel is compiled without fused multiply-adds
(:func:`krypenv.envs.cuda.no_fma`).  tests/cuda/sim_check.py holds values and actions to the CPU's in numba's CUDA
simulator, and tests/cuda/test_registers.py compiles the kernel for Hopper and holds it to its register budget.

Only pimc's compiled rollout policies run here (``expert``, ``greedy``, ``creeper``, ``random``); a learned rollout
policy (``policy=mlp:PATH``) runs its network on the host (:mod:`krypenv.agents.krypkasino.guided`).
"""

from __future__ import annotations

import functools
from typing import Any

import numpy as np
from krypenv.agents.krypkasino import tactics as T
from krypenv.agents.krypkasino.worlds import DETERMINIZE_WORDS, MAX_SEATS
from numba import cuda  # numba-cuda (the simulator swaps this module-level name)

from krypenv.envs import cuda as C
from krypenv.krypkasino.actions import N_ACTIONS
from krypenv.krypkasino.engine import kernels as K
from krypenv.krypkasino.engine.captures import clear_scratch

__all__ = ["WIDTH", "example_args", "launch_args", "search_values", "values_kernel"]

WIDTH = K.tabbes_at(MAX_SEATS) + MAX_SEATS  # a thread's work rows hold a deal of any size (the engine's columns)
# what the kernel calls (its disk cache's key, krypenv.envs.cuda.source_digest): the rules, the search, the streams
SOURCES = ("krypenv.krypkasino", "krypenv.agents.krypkasino", "krypenv.rng", "krypenv.jit")
unwrap = C.device_identity()
ACTION_VALUES: Any = None  # the search a kernel calls (pimc's action_values): bound per kernel by values_kernel


@functools.cache
def values_kernel(action_values: Any) -> Any:
    """The kernel ``run(st, choice, game, opts, z, w, later_kinds, later_sizes, u, values, moves, acts, threads)``:
    for each decision ``k`` (row ``k`` of ``st`` and ``choice``, uniform ``u[k]``), ``values[k]`` every action's
    mean score and ``moves[k]``, ``acts[k]`` as ``action_values`` returns them
    (:func:`krypenv.agents.krypkasino.pimc.action_values`, passed in by pimc: this module does not import it)."""
    key = C.source_digest(*SOURCES)
    # the buffers' sizes as the closure's plain ints: a local array's shape must be a compile-time constant
    width, moves_n, keys_n, words, seats, dwords = WIDTH, T.MAX_MOVES, T.MAX_KEYS, T.TACTICS_WORDS, MAX_SEATS, \
        DETERMINIZE_WORDS

    def run(st, choice, game, opts, z, w, later_kinds, later_sizes, u, values, moves, acts, threads):
        _ = key  # the disk cache's key (krypenv.envs.cuda.cached)
        st, choice, game, opts, w = unwrap(st), unwrap(choice), unwrap(game), unwrap(opts), unwrap(w)
        later_kinds, later_sizes, u = unwrap(later_kinds), unwrap(later_sizes), unwrap(u)
        values, moves, acts = unwrap(values), unwrap(moves), unwrap(acts)
        t, g = cuda.grid(1), threads  # g threads search (the launch rounds up to whole blocks); the rest idle
        if t >= g:
            return
        # the thread's buffers in local memory, as pimc's _buffers gives a CPU thread
        work = cuda.local.array((2, width), np.int8)
        root_cards = cuda.local.array(moves_n, np.int64)
        root_caps = cuda.local.array((moves_n, 52), np.int8)
        acc = cuda.local.array((3, moves_n), np.float64)
        vals = cuda.local.array(moves_n, np.float64)
        cards = cuda.local.array(moves_n, np.int64)
        caps = cuda.local.array((moves_n, 52), np.int8)
        costs = cuda.local.array(moves_n, np.float64)
        keys = cuda.local.array(keys_n, np.int64)
        pool = cuda.local.array(104, np.int64)
        used = cuda.local.array(104, np.bool_)
        zeros = cuda.local.array(52, np.int8)  # the rollouts' empty capture choice: stays zero
        scr = cuda.local.array(words, np.int64)
        streams = cuda.local.array(2, np.uint64)
        voids = cuda.local.array(seats, np.int64)
        dwork = cuda.local.array(dwords, np.int64)
        for c in range(52):
            zeros[c] = 0
        for j in range(words):  # local memory starts undefined: T.new_scratch's zeros, then its hash set
            scr[j] = 0
        clear_scratch(scr)
        k = t
        while k < st.shape[0]:  # decisions t, t + g, … (a while: range's trip count is a 64-bit division)
            moves[k], acts[k] = ACTION_VALUES(st, k, np.int64(choice[k, 0]), choice[k, 1:], game, opts, z, w,
                                              later_kinds, later_sizes, u[k], work, root_cards, root_caps, acc, vals,
                                              cards, caps, costs, keys, pool, used, zeros, scr, streams, voids, dwork,
                                              values[k])
            k += g

    return C.cached(run, ACTION_VALUES=action_values)


def launch_args(st: np.ndarray, choice: np.ndarray, envs: np.ndarray, game: np.ndarray, opts: np.ndarray, z: float,
                w: np.ndarray, later_kinds: np.ndarray, later_sizes: np.ndarray, u: np.ndarray
                ) -> tuple[Any, ...]:
    """The kernel's arguments on the host, without ``threads``: the decisions' rows of the engine state and of the
    choice states, gathered; the outputs (values, moves, actions) empty."""
    n = len(envs)
    return (np.ascontiguousarray(st[envs]), np.ascontiguousarray(choice[envs]), game, opts, float(z), w, later_kinds,
            later_sizes, np.ascontiguousarray(u, np.float64), np.empty((n, N_ACTIONS), np.float64),
            np.empty(n, np.int64), np.empty(n, np.int64))


def search_values(action_values: Any, st: np.ndarray, choice: np.ndarray, envs: np.ndarray, game: np.ndarray,
                  opts: np.ndarray, z: float, w: np.ndarray, later_kinds: np.ndarray, later_sizes: np.ndarray,
                  u: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """pimc's ``values_par`` on the GPU: (values (B, 105), moves (B,), actions (B,)) for decisions ``envs``, each
    searched by ``action_values`` (pimc's) in a thread."""
    host = launch_args(st, choice, envs, game, opts, z, w, later_kinds, later_sizes, u)
    dev = [cuda.to_device(a) if isinstance(a, np.ndarray) else a for a in host]
    threads = C.grid_threads(len(envs))
    C.launch(values_kernel(action_values), threads, *dev, threads)
    values, moves, acts = (a.copy_to_host() for a in dev[-3:])  # launch_args's outputs, last
    return values, moves, acts


def example_args(game: np.ndarray, opts: np.ndarray, z: float, w: np.ndarray, later_kinds: np.ndarray,
                 later_sizes: np.ndarray) -> tuple[Any, ...]:
    """Host arguments of the kernel's launch for two fresh 2-player deals (with a pimc's ``game`` vector, options
    and weights), ``threads`` included: what its signature is read off when it is compiled without a GPU
    (:mod:`krypenv.eval.ptxas`)."""
    from krypenv.krypkasino.engine import DealBatch
    from krypenv.krypkasino.rules import Rules

    st = DealBatch(Rules(players=2), 2).state
    choice = np.zeros((2, 53), np.int8)
    return (*launch_args(st, choice, np.arange(2), game, opts, z, w, later_kinds, later_sizes, np.zeros(2)), 2)
