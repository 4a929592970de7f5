"""Krypkasino's env functions on CUDA threads: the device env's kernels (:mod:`krypenv.krypkasino.device`).

The device env's step is four kernels, launched one after the other on the same stream, with every env's state in
global memory between them, so that each is assembled with the registers its own part needs (issue 42: in one
kernel the built-in seats' loop held 255 registers for the whole step):

* ``act``: RESET the active envs (``reset_one``) or, in a STEP, the caller's action for the seat to act
  (``act_one``);
* ``seats``: built-in seats until a caller's seat must act (``advance_one``, then the seats of compiled policies);
* ``finish``: every seat's reward, done and final values and auto-reset (``finish_seats_one``, which writes the
  done flag ``over``);
* ``observe``: the next seat to act and its observation and mask (``observe_actor_one``).

The launches of each of the device env's operations (:data:`ORDER`): RESET is act, seats, observe over the active
envs; STEP is act, seats, finish, seats again over the envs whose episode ended (``over``: the new episode's
built-in seats), observe, over every env; OBSERVE is observe alone.  The order per env is the one kernel's of
before, so the trajectories are the same.  Each kernel is a grid-stride loop (thread ``t`` of ``G`` handles envs
``t, t + G, …``, ``G`` being the ``threads`` argument) whose body calls the per-env functions of
:mod:`krypenv.krypkasino.env_kernels` and :mod:`krypenv.krypkasino.device_drivers`, the ones the CPU drivers call,
compiled for the GPU by numba-cuda: dealing (K5–K8, K21), the capture protocol and its search (K10–K13), scoring
(K14–K18), observations, masks, rewards and auto-reset are the CPU's code.  All four take the same arguments (one
launch list, :class:`krypenv.envs.cuda.EnvKernels`); only ``seats`` depends on the built-in policy.
:func:`engine_play` is the engine benchmark's kernel (whole deals of random play from the env's stream,
``play_deals_one``).

*Built-in seats* are the uniform random policy (inside ``advance_one``, as on the CPU) and, for
seats an agent with a :class:`~krypenv.agent_api.DevicePolicy` plays, that agent's function:
before each of its decisions the env draws ``uniforms`` (0 or 1) uniforms from its stream and
calls ``function(st, i, players, hand_size, spades, choice, u, iparams, fparams, cards, caps,
costs, keys, scr)`` for the next action (``choice``: the env's (53,) capture-choice state;
``cards``, ``caps``, ``costs``: ``moves`` rows of int64, (52,) int8 and float64 per thread;
``keys``: ``keys`` int64; ``scr``: the thread's scratch, ``scratch`` words), then acts with it as
the CPU env does with the agent's ``act``: the same function, the same uniforms, the same
order, so the trajectories are the CPU VecEnv's bit for bit (``krypenv.agents.krypkasino``'s
``greedy``, ``creeper`` and ``expert`` offer one).

A thread's scratch (the capture search's, or in ``seats`` a built-in policy's if larger) is its own local array,
emptied at each launch: in local memory every offset is a constant, where a row of a column-major array in global
memory costs a 64-bit address per offset (issue 42, docs/results/gpu.md: the engine kernel needed 228 registers
with it, 125 without).

A thread's statuses (per env, read by the host after the last launch): ``STATUS_OVERFLOW`` (a capture search
outgrew the scratch: never seen in play, :mod:`krypenv.krypkasino.engine.captures`) and
:data:`krypenv.envs.cuda.STATUS_POLICY` (a built-in policy chose an illegal action).  The first launch of an
operation writes an env's status, the later ones add their bits to it; either bit makes the env raise.
"""

from __future__ import annotations

import functools
from typing import Any

import numpy as np
from numba import cuda, njit  # numba-cuda (the simulator swaps this module-level name)

from krypenv.envs import cuda as C
from krypenv.envs.cuda import ACT, FINISH, RESET, SEATS, cached, set_status, sits_out
from krypenv.gpu_lean import fresh
from krypenv.krypkasino import device_drivers as D
from krypenv.krypkasino import env_kernels as E
from krypenv.krypkasino.actions import ILLEGAL
from krypenv.krypkasino.config import C_P
from krypenv.krypkasino.engine import kernels as K
from krypenv.krypkasino.engine.captures import O_STATUS, SCRATCH_WORDS, clear_scratch
from krypenv.rng import rand_float

__all__ = ["build", "engine_play", "no_policy"]


@njit(cache=True)
def no_policy(st, i, players, hand_size, spades, choice, u, iparams, fparams, cards, caps, costs, keys, scr):
    """The policy of kernels built without one: never called (no seat is marked for it)."""
    return -1


# what the kernels call (their disk cache's key, source_digest): the rules, the parts' constants, the helpers
SOURCES = ("krypenv.krypkasino", "krypenv.envs.cuda", "krypenv.gpu_lean", "krypenv.rng")
unwrap = C.device_identity()
FRESH: Any = (lambda a: a) if C.SIMULATOR else fresh  # the simulator runs kernel bodies as Python: no intrinsic there
POLICY: Any = no_policy  # the built-in policy and the seats' loop a kernel calls: bound per kernel by _kernel
ADVANCE: Any = None
NO_POLICY = (no_policy, 0, 0, 1, 1)  # the build key of kernels without a built-in policy


def _advance(uniforms: int, has_policy: bool) -> Any:
    """The built-in seats' loop, a device function (its policy bound as ``POLICY`` by :func:`_kernel`)."""

    def advance(st, rng, ints, cfg, i, scr, pk, pi, pf, hand_size, spades, cards, caps, costs, keyb):
        """Deal on and play built-in seats until a caller's seat must act; False if a policy acted illegally."""
        while True:  # the env's arrays fresh per seat: no address held over the loop (gpu_lean.fresh)
            st, rng, ints, cfg = FRESH(st), FRESH(rng), FRESH(ints), FRESH(cfg)
            E.advance_one(st, rng, ints, cfg, i, scr)
            if not has_policy:
                return True
            r = E.to_act(st, cfg, i)
            if r < 0 or pk[r] == 0:
                return True
            u = rand_float(rng, i) if uniforms else 0.0
            a = POLICY(st, i, cfg[C_P], hand_size, spades, E._choice(st, cfg, i), u, pi[r], pf[r], cards, caps,
                       costs, keyb, scr)
            if E.act_one(st, ints, cfg, i, a, False, scr, -1) == ILLEGAL:
                return False

    return advance


def _no_seats(st, rng, ints, cfg, i, scr, pk, pi, pf, hand_size, spades, cards, caps, costs, keyb):
    """The seats' loop bound into the parts other than ``seats`` (never called there)."""
    return True


@functools.cache
def _kernel(part: int, policy_key: tuple[Any, int, int, int, int]) -> Any:
    """Part ``part``'s kernel (for ``seats``, with the built-in policy of ``policy_key``); compiled by numba-cuda on
    first launch and cached on disk (:func:`krypenv.envs.cuda.cached`), once per process."""
    fn, uniforms, words, moves, keys_n = policy_key
    words = max(words, SCRATCH_WORDS)  # the thread's local scratch: the capture search's, or the policy's if larger
    key = C.source_digest(*SOURCES, fn.py_func.__module__.rpartition(".")[0])  # closures: plain values only

    def run(mode, st, rng, ints, cfg, base, active, actions, lose, threads, status, act_status, rew, over, final,
            obs, masks, seats, term_obs, term_masks, pk, pi, pf, gx):
        """Part ``part`` of the device env's operation over its envs (module docstring); ``gx`` = (hand size,
        spades)."""
        _ = key  # the disk cache's key (krypenv.envs.cuda.cached)
        st, rng, ints, base, cfg, active, actions = unwrap(st), unwrap(rng), unwrap(ints), unwrap(base), \
            unwrap(cfg), unwrap(active), unwrap(actions)
        status, act_status, rew, over, final = unwrap(status), unwrap(act_status), unwrap(rew), unwrap(over), \
            unwrap(final)
        obs, masks, seats, term_obs, term_masks = unwrap(obs), unwrap(masks), unwrap(seats), unwrap(term_obs), \
            unwrap(term_masks)
        pk, pi, pf, gx = unwrap(pk), unwrap(pi), unwrap(pf), unwrap(gx)
        t, g = cuda.grid(1), threads  # g threads work (the launch rounds up to whole blocks); the rest idle
        if t >= g:
            return
        scr = cuda.local.array(words, np.int64)  # the thread's scratch in local memory (module docstring)
        clear_scratch(scr)
        cards = cuda.local.array(moves, np.int64)  # a built-in policy's rows (seats only: dead code elsewhere)
        caps = cuda.local.array((moves, 52), np.int8)
        costs = cuda.local.array(moves, np.float64)
        keyb = cuda.local.array(keys_n, np.int64)
        i = t - g
        while i + g < st.shape[0]:  # envs t, t + g, … (a while: range's trip count is a 64-bit division)
            i += g
            if sits_out(mode, active, over, i):
                continue
            scr[O_STATUS] = 0
            ok = True
            if part == ACT:
                if mode == RESET:
                    E.reset_one(st, rng, ints, base, cfg, i, scr)
                else:
                    act_status[i] = E.act_one(st, ints, cfg, i, actions[i], lose, scr, -1)
            elif part == SEATS:
                ok = ADVANCE(st, rng, ints, cfg, i, scr, pk, pi, pf, gx[0], gx[1] != 0, cards, caps, costs, keyb)
            elif part == FINISH:  # seats[i]: the seat that acted (observe writes the next one)
                D.finish_seats_one(st, rng, ints, base, cfg, i, seats[i], rew, over, final, term_obs, term_masks,
                                   scr)
            else:
                D.observe_actor_one(st, ints, cfg, i, obs, masks, seats, scr)
            set_status(status, i, part, mode, scr[O_STATUS] | (0 if ok else C.STATUS_POLICY))

    seats = _advance(uniforms, fn is not no_policy) if part == SEATS else _no_seats  # no dead loop to compile
    return cached(run, ADVANCE=cached(seats, device=True, POLICY=fn))


build = C.kernel_builder(_kernel, NO_POLICY)  # build(policy_key): the device env's kernels (EnvKernels)


@functools.cache
def engine_play() -> Any:
    """The engine benchmark's kernel ``play(st, rng, players, deck_size, kinds, sizes, later_kinds, later_sizes,
    spades, threads, deals, decisions)``: each of the first ``threads`` threads deals ``deals`` deals of its envs in
    turn from the env's stream (K6) and plays them out by uniformly random legal moves (``random_move``,
    ``apply_move``), counting the decisions (cards played) per env; a thread's capture-search scratch is its own
    local array."""
    key = C.source_digest(*SOURCES)

    def play(st, rng, players, deck_size, kinds, sizes, later_kinds, later_sizes, spades, threads, deals, decisions):
        _ = key  # the disk cache's key (krypenv.envs.cuda.cached)
        st, rng, kinds, sizes = unwrap(st), unwrap(rng), unwrap(kinds), unwrap(sizes)
        later_kinds, later_sizes, decisions = unwrap(later_kinds), unwrap(later_sizes), unwrap(decisions)
        t, g = cuda.grid(1), threads  # g threads play (the launch rounds up to whole blocks); the rest idle
        if t >= g:
            return
        # The thread's scratch in local memory (module docstring).
        scr = cuda.local.array(SCRATCH_WORDS, np.int64)
        clear_scratch(scr)  # the hash set starts empty (local memory starts undefined)
        cap = cuda.local.array(52, np.int8)
        i = t
        while i < st.shape[0]:  # envs t, t + g, … (a while: range's trip count is a 64-bit division)
            decisions[i] = K.play_deals_one(st, rng, i, players, deck_size, kinds, sizes, later_kinds, later_sizes,
                                            spades, deals, cap, scr)
            i += g

    return cached(play)
