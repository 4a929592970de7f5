"""Kungsholmskille's env functions on CUDA threads: the device env's kernel (:mod:`krypenv.kungsholmskille.device`).

The device env's step is four kernels, launched one after the other on the same stream, with every env's state in
global memory between them, so that each is assembled with the registers its own part needs (issue 42; the split of
:mod:`krypenv.krypkasino.cuda_kernels`, the same parts and order):

* ``act``: RESET the active envs (``reset_one``) or, in a STEP, the caller's action for the seat to act
  (``act_one``);
* ``seats``: forced moves and built-in seats until a caller's seat must act (``advance_one``, then the seats of
  compiled policies);
* ``finish``: every seat's reward, the over code, final money and auto-reset (``finish_seats_one``, which writes
  ``over``);
* ``observe``: the next seat to act and its observation and mask (``observe_actor_one``).

The launches of each operation (:data:`ORDER`): RESET is act, seats, observe over the active envs; STEP is act,
seats, finish, seats again over the envs whose episode ended (``over``: the new episode's built-in seats), observe,
over every env; OBSERVE is observe alone.  The order per env is the one kernel's of before, so the trajectories are
the same.  Each kernel is a grid-stride loop (thread ``t`` of ``G`` handles envs ``t, t + G, …``, ``G`` being the
``threads`` argument) whose body calls the per-env functions of :mod:`krypenv.kungsholmskille.env_kernels`, the ones
the CPU drivers call, compiled for the GPU by numba-cuda: dealing (L2, L4, L20), calls, folds, exchanges, tricks
and the showdown (L5–L15), the pot's money (L12–L21), observations, masks, rewards and auto-reset are the CPU's
code.  All four take the same arguments (one launch list, :class:`krypenv.envs.cuda.EnvKernels`); only ``seats``
depends on the built-in policy.

*Built-in seats* are the uniform random policy (inside ``advance_one``, as on the CPU) and, for
seats an agent with a :class:`~krypenv.agent_api.DevicePolicy` plays, its function: the env writes
the seat's observation and mask (as it would hand them to the agent's ``act``), draws ``uniforms``
uniforms from its stream (Kungsholmskille's compiled baselines draw none) and calls
``function(obs, mask, players, iparams, fparams, work)`` for the action, ``work`` being the
``B_POLICY`` region of the thread's scratch (``scratch`` words at most, 63).  A thread's scratch (``BUF`` words:
legal list, uniforms, a policy's work vector) is its own local array in each kernel, written before it is read by
every function, as the CPU drivers' ``np.empty`` one (so nothing in it is carried from one kernel to the next).
Same function, same inputs, same order as the CPU env: the same trajectories bit for bit
(``krypenv.agents.kungsholmskille``'s ``timid`` and ``expert`` offer one).

Statuses per env: :data:`krypenv.envs.cuda.STATUS_POLICY` when a built-in policy chose an illegal action (the
Kungsholmskille env functions need no search scratch, so nothing can overflow).
"""

from __future__ import annotations

import functools
from typing import Any

import numpy as np
from numba import cuda, njit  # numba-cuda (the simulator swaps this module-level name)

from krypenv.envs import cuda as C
from krypenv.envs.cuda import ACT, FINISH, RESET, SEATS, cached, set_status, sits_out
from krypenv.kungsholmskille import device_drivers as D
from krypenv.kungsholmskille import env_kernels as E
from krypenv.kungsholmskille.actions import N_ACTIONS
from krypenv.kungsholmskille.config import B_LEGAL, B_POLICY, B_UNIF, BUF, C_P, ILLEGAL
from krypenv.kungsholmskille.engine import kernels as K
from krypenv.kungsholmskille.observation import OBS_DTYPE, obs_size
from krypenv.rng import rand_float

__all__ = ["build", "engine_play", "no_policy"]
MAX_OBS = obs_size(K.MAXP)  # the longest observation (6 players)
# what the kernels call (their disk cache's key, source_digest): the rules, the parts' constants, the stream
SOURCES = ("krypenv.kungsholmskille", "krypenv.envs.cuda", "krypenv.rng")


@njit(cache=True)
def no_policy(obs, mask, players, iparams, fparams, work):
    """The policy of kernels built without one: never called (no seat is marked for it)."""
    return -1


unwrap = C.device_identity()
POLICY: Any = no_policy  # the built-in policy and the seats' loop a kernel calls: bound per kernel by _kernel
ADVANCE: Any = None


NO_POLICY = (no_policy, 0, 0, 1, 1)  # the build key of kernels without a built-in policy


def _advance(uniforms: int, has_policy: bool) -> Any:
    """The built-in seats' loop, a device function (its policy bound as ``POLICY`` by :func:`_kernel`)."""

    def advance(st, cash, ep, rng, cfg, prev_st, prev_cash, i, buf, pk, pi, pf, pobs, pmask):
        """Deal on, forced moves and built-in seats until a caller's seat acts; False if a policy acted illegally."""
        while True:
            E.advance_one(st, cash, ep, rng, cfg, i, prev_st, prev_cash, buf)
            if not has_policy:
                return True
            r = E.to_act_rel(st, ep, cfg, i)
            if r < 0 or pk[r] == 0:
                return True
            P = cfg[C_P]
            for _ in range(uniforms):
                rand_float(rng, i)
            E.observe_one(st, cash, ep, cfg, i, st[i, K.TO_ACT], pobs, pmask, buf)
            a = POLICY(pobs, pmask, P, pi[r], pf[r], buf[B_POLICY:])
            if E.act_one(st, cash, ep, cfg, i, a, False) == ILLEGAL:
                return False

    return advance


def _no_seats(st, cash, ep, rng, cfg, prev_st, prev_cash, i, buf, pk, pi, pf, pobs, pmask):
    """The seats' loop bound into the parts other than ``seats`` (never called there)."""
    return True


@functools.cache
def _kernel(part: int, policy_key: tuple[Any, int, int, int, int]) -> Any:
    """Part ``part``'s kernel (for ``seats``, with the built-in policy of ``policy_key``); compiled by numba-cuda on
    first launch and cached on disk (:func:`krypenv.envs.cuda.cached`), once per process."""
    fn, uniforms = policy_key[0], policy_key[1]
    key = C.source_digest(*SOURCES, fn.py_func.__module__.rpartition(".")[0])  # closures: plain values only

    def run(mode, st, cash, ep, rng, cfg, prev_st, prev_cash, base, active, actions, lose, threads, status,
            act_status, rew, over, final, obs, masks, seats, term_obs, term_masks, pk, pi, pf, gx):
        """Part ``part`` of the device env's operation over its envs (module docstring); ``gx`` is unused here."""
        _ = key  # the disk cache's key (krypenv.envs.cuda.cached)
        st, cash, ep, rng, cfg = unwrap(st), unwrap(cash), unwrap(ep), unwrap(rng), unwrap(cfg)
        prev_st, prev_cash, base, active, actions = unwrap(prev_st), unwrap(prev_cash), unwrap(base), \
            unwrap(active), unwrap(actions)
        status, act_status, rew, over, final = unwrap(status), unwrap(act_status), unwrap(rew), unwrap(over), \
            unwrap(final)
        obs, masks, seats, term_obs, term_masks = unwrap(obs), unwrap(masks), unwrap(seats), unwrap(term_obs), \
            unwrap(term_masks)
        pk, pi, pf = unwrap(pk), unwrap(pi), unwrap(pf)
        t, g = cuda.grid(1), threads  # g threads work (the launch rounds up to whole blocks); the rest idle
        if t >= g:
            return
        buf = cuda.local.array(BUF, np.int64)  # the thread's scratch (module docstring)
        pobs = cuda.local.array(MAX_OBS, OBS_DTYPE)[:obs.shape[1]]  # a policy seat's observation (seats only)
        pmask = cuda.local.array(N_ACTIONS, np.int8)
        for i in range(t, st.shape[0], g):
            if sits_out(mode, active, over, i):  # over: RUNNING (0) or the code of the end
                continue
            ok = True
            if part == ACT:
                if mode == RESET:
                    E.reset_one(st, cash, ep, rng, cfg, i, buf)
                    base[i] = 0
                else:
                    act_status[i] = E.act_one(st, cash, ep, cfg, i, actions[i], lose)
            elif part == SEATS:
                ok = ADVANCE(st, cash, ep, rng, cfg, prev_st, prev_cash, i, buf, pk, pi, pf, pobs, pmask)
            elif part == FINISH:  # seats[i]: the seat that acted (observe writes the next one)
                D.finish_seats_one(st, cash, ep, rng, cfg, i, prev_st, prev_cash, seats[i], base, rew, over, final,
                                   term_obs, term_masks, buf)
            else:
                D.observe_actor_one(st, cash, ep, cfg, i, obs, masks, seats, buf)
            set_status(status, i, part, mode, 0 if ok else C.STATUS_POLICY)

    seats = _advance(uniforms, fn is not no_policy) if part == SEATS else _no_seats  # no dead loop to compile
    return cached(run, ADVANCE=cached(seats, device=True, POLICY=fn))


build = C.kernel_builder(_kernel, NO_POLICY)  # build(policy_key): the device env's kernels (EnvKernels)


@functools.cache
def engine_play() -> Any:
    """The engine benchmark's kernel ``play(st, cash, rng, players, deals, threads, decisions)``: each of the first
    ``threads`` threads deals ``deals`` deals of its rows in turn from the row's stream and plays them out by
    uniformly random legal moves (``play_deals_one``, the CPU twin's per-row function), counting the moves per row."""
    key = C.source_digest(*SOURCES)

    def play(st, cash, rng, players, deals, threads, decisions):
        _ = key  # the disk cache's key (krypenv.envs.cuda.cached)
        st, cash, rng, decisions = unwrap(st), unwrap(cash), unwrap(rng), unwrap(decisions)
        t, g = cuda.grid(1), threads  # g threads play (the launch rounds up to whole blocks); the rest idle
        if t >= g:
            return
        buf = cuda.local.array(BUF, np.int64)  # the thread's scratch (module docstring)
        for i in range(t, st.shape[0], g):
            decisions[i] = K.play_deals_one(st, cash, rng, i, players, deals, buf[B_LEGAL:B_UNIF],
                                            buf[B_UNIF:B_UNIF + 42].view(np.float64))

    return cached(play)
