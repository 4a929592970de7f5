"""The compiled per-env functions and batch drivers of the Kungsholmskille environments.

Every function works on the arrays of a :class:`~krypenv.kungsholmskille.batch.KungsholmskilleBatch`: the
engine's ``st``/``cash`` records, the episode records ``ep`` and the per-env random streams
``rng`` (:mod:`krypenv.rng`), with the configuration packed in ``cfg``
(:mod:`krypenv.kungsholmskille.config`).  ``*_one`` functions handle one env: deal (L4, L2),
start an episode (L3), settle a finished deal and deal on after a budrunda (L12) or end the
episode (L14, L15, L16), act, play built-in random opponents and forced moves, observe,
reward.  The ``k_*`` drivers run them over a batch, in ``par``/``ser`` twins (parallel
``prange`` over chunks from ``krypenv.envs.batch.PARALLEL_FROM`` envs on; the serial twin for small batches).
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange

from krypenv.jit import borrowing, counted
from krypenv.kungsholmskille.cards import N_COPIES
from krypenv.kungsholmskille.config import (
    B_UNIF,
    BUF,
    C_FIRST_DEALER,
    C_KINDS,
    C_MAX_DEALS,
    C_P,
    C_POT_DEALS,
    C_RANDOM_SEAT,
    C_RANKS,
    C_SKIP,
    E_BASE,
    E_DEAL,
    E_MONEY,
    E_OFFENDER,
    E_OVER,
    E_SEAT,
    EXTERNAL,
    FORFEIT,
    ILLEGAL,
    ILLEGAL_FINE,
    MOVED,
    POT_OUT,
    RANDOM,
    RUNNING,
    TRUNCATED,
)  # fmt: skip
from krypenv.kungsholmskille.engine import kernels
from krypenv.kungsholmskille.engine.drivers import chunk_bounds
from krypenv.kungsholmskille.observation import encode_into, mask_into
from krypenv.rng import draw_deck_into, rand_float


# --------------------------------------------------------------------------- one env
@borrowing
def deal_one(st, cash, ep, rng, cfg, i, pot, buf):
    """Deal env ``i``'s deal number ``ep[i, E_DEAL]`` (L4) with a fresh deck (L1, L20) from its stream and the given
    pot; the pot's last deal (L21) is marked.  The deck is shuffled in place in the record (``buf``: the scratch)."""
    P = cfg[C_P]
    deck = st[i, kernels.DECK:kernels.DECK + N_COPIES * cfg[C_RANKS]]
    draw_deck_into(rng, i, deck, cfg[C_RANKS], buf[B_UNIF:B_UNIF + 42].view(np.float64))
    deal = ep[i, E_DEAL]
    dealer = (cfg[C_FIRST_DEALER] + deal) % P  # L2: the deal passes to the left after every deal
    last = 1 if cfg[C_POT_DEALS] > 0 and deal == cfg[C_POT_DEALS] - 1 else 0
    kernels.reset_row(st[i], cash[i], P, deck, dealer, pot, deal, last)


@borrowing
def reset_one(st, cash, ep, rng, cfg, i, buf):
    """A new episode in env ``i``: every seat antes 2 (L3), a random learner seat if configured, deal 0."""
    P = cfg[C_P]
    seat = ep[i, E_SEAT]
    ep[i, :] = 0
    ep[i, E_OFFENDER] = -1
    if cfg[C_RANDOM_SEAT]:
        seat = min(int(rand_float(rng, i) * P), P - 1)
    ep[i, E_SEAT] = seat
    for s in range(P):
        ep[i, E_MONEY + s] = -2  # L3; reaches the seats with the first step (E_BASE stays 0)
    deal_one(st, cash, ep, rng, cfg, i, 2 * P, buf)


@borrowing
def rollover_one(st, cash, ep, rng, cfg, i, prev_st, prev_cash, buf):
    """Settle env ``i``'s finished deal and deal the next one; True when the episode is over.

    A budrunda (L12): its antes are paid and the next deal is dealt into the same pot, unless
    that was deal ``max_deals`` (truncation, L16).  A walkover, showdown or settlement (L14, L15,
    L21): the deal's money moves and the episode is terminated; ``antes_next`` are not paid.
    """
    if ep[i, E_OVER] != RUNNING:
        return True
    if not st[i, kernels.DONE]:
        return False
    P = cfg[C_P]
    if st[i, kernels.OUTCOME] != kernels.BUDRUNDA:
        for s in range(P):
            ep[i, E_MONEY + s] += cash[i, kernels.MONEY + s]
        ep[i, E_OVER] = POT_OUT
        return True
    if ep[i, E_DEAL] + 1 >= cfg[C_MAX_DEALS]:
        ep[i, E_OVER] = TRUNCATED
        return True
    for s in range(P):
        ep[i, E_MONEY + s] -= cash[i, kernels.ANTES + s]
    for c in range(st.shape[1]):
        prev_st[i, c] = st[i, c]
    for c in range(cash.shape[1]):
        prev_cash[i, c] = cash[i, c]
    ep[i, E_DEAL] += 1
    deal_one(st, cash, ep, rng, cfg, i, cash[i, kernels.POT_NEXT], buf)
    return False


@borrowing
def act_one(st, cash, ep, cfg, i, a, lose):
    """Make action ``a`` for the seat to act in env ``i``: MOVED, or ILLEGAL (nothing changes unless ``lose``)."""
    row = st[i]
    if ep[i, E_OVER] != RUNNING or row[kernels.DONE]:
        return ILLEGAL
    if kernels.check(row, a) != kernels.OK:
        if lose:  # the offender pays every other seat; the pot belongs to nobody
            P = cfg[C_P]
            off = row[kernels.TO_ACT]
            for s in range(P):
                if s != off:
                    ep[i, E_MONEY + s] += ILLEGAL_FINE
                    ep[i, E_MONEY + off] -= ILLEGAL_FINE
            ep[i, E_OFFENDER] = off
            ep[i, E_OVER] = FORFEIT
        return ILLEGAL
    kernels.apply(row, cash[i], cfg[C_P], a)
    return MOVED


@borrowing
def to_act_rel(st, ep, cfg, i):
    """The seat to act in env ``i`` relative to the learner, or −1 once the episode is over."""
    if ep[i, E_OVER] != RUNNING or st[i, kernels.DONE]:
        return -1
    return (st[i, kernels.TO_ACT] - ep[i, E_SEAT]) % cfg[C_P]


@borrowing
def advance_one(st, cash, ep, rng, cfg, i, prev_st, prev_cash, buf):
    """Deal on (L12) and make forced moves (``skip_forced``) and built-in opponents' moves until the
    learner or an external seat must decide, or the episode is over."""
    P = cfg[C_P]
    while not rollover_one(st, cash, ep, rng, cfg, i, prev_st, prev_cash, buf):
        row = st[i]
        if cfg[C_SKIP] and kernels.legal_list(row, buf) == 1:
            kernels.apply(row, cash[i], P, buf[0])
            continue
        if cfg[C_KINDS + to_act_rel(st, ep, cfg, i)] != RANDOM:
            return
        kernels.play_random_row(row, cash[i], P, rand_float(rng, i), buf)


@borrowing
def observe_one(st, cash, ep, cfg, i, observer, obs, mask, buf):
    """``observer``'s observation and mask (zeros unless it is to act) in env ``i``."""
    ended = ep[i, E_OVER] != RUNNING
    deals_left = cfg[C_MAX_DEALS] - 1 - ep[i, E_DEAL]
    encode_into(st[i], cash[i], ep[i, E_MONEY:E_MONEY + cfg[C_P]], ep[i, E_DEAL], deals_left, ended, cfg[C_P],
                observer, obs)
    mask_into(st[i], observer, ended, mask, buf)


@borrowing
def finish_one(st, cash, ep, rng, cfg, i, prev_st, prev_cash, rew, over, final, term_obs, term_mask, buf):
    """Env ``i``'s learner reward since its previous decision and over code; a finished episode's final
    money and terminal observation, then a new episode (auto-reset) advanced to the learner."""
    seat = ep[i, E_SEAT]
    m = ep[i, E_MONEY + seat]
    rew[i] = m - ep[i, E_BASE]
    ep[i, E_BASE] = m
    over[i] = ep[i, E_OVER]
    if over[i] != RUNNING:
        final[i] = m
        observe_one(st, cash, ep, cfg, i, seat, term_obs[i], term_mask[i], buf)
        reset_one(st, cash, ep, rng, cfg, i, buf)
        advance_one(st, cash, ep, rng, cfg, i, prev_st, prev_cash, buf)


# --------------------------------------------------------------------------- batch bodies
@counted
def _reset_range(st, cash, ep, rng, cfg, prev_st, prev_cash, lo, hi, active):
    buf = np.empty(BUF, np.int64)
    for i in range(lo, hi):
        if active[i]:
            reset_one(st, cash, ep, rng, cfg, i, buf)
            advance_one(st, cash, ep, rng, cfg, i, prev_st, prev_cash, buf)


@counted
def _step_range(st, cash, ep, rng, cfg, prev_st, prev_cash, lo, hi, actions, lose, status):
    buf = np.empty(BUF, np.int64)
    for i in range(lo, hi):
        status[i] = act_one(st, cash, ep, cfg, i, actions[i], lose)
        advance_one(st, cash, ep, rng, cfg, i, prev_st, prev_cash, buf)


@counted
def _finish_range(st, cash, ep, rng, cfg, prev_st, prev_cash, lo, hi, rew, over, final, term_obs, term_mask):
    buf = np.empty(BUF, np.int64)
    for i in range(lo, hi):
        finish_one(st, cash, ep, rng, cfg, i, prev_st, prev_cash, rew, over, final, term_obs, term_mask, buf)


@counted
def _step_all_range(st, cash, ep, rng, cfg, prev_st, prev_cash, lo, hi, actions, lose, status, rew, over, final,
                    obs, masks, term_obs, term_mask):
    """Act and advance, then finish, then observe, each phase over the whole range (faster code than one loop calling
    the four, as Krypkasino's :func:`krypenv.krypkasino.env_kernels._step_all_range`)."""
    buf = np.empty(BUF, np.int64)
    for i in range(lo, hi):
        status[i] = act_one(st, cash, ep, cfg, i, actions[i], lose)
        advance_one(st, cash, ep, rng, cfg, i, prev_st, prev_cash, buf)
    _finish_range(st, cash, ep, rng, cfg, prev_st, prev_cash, lo, hi, rew, over, final, term_obs, term_mask)
    _observe_range(st, cash, ep, cfg, lo, hi, obs, masks)


@counted
def _observe_range(st, cash, ep, cfg, lo, hi, obs, masks):
    buf = np.empty(BUF, np.int64)
    for i in range(lo, hi):
        observe_one(st, cash, ep, cfg, i, ep[i, E_SEAT], obs[i], masks[i], buf)


# --------------------------------------------------------------------------- batch drivers (par/ser twins)
@njit(cache=True, parallel=True)
def k_reset_par(st, cash, ep, rng, cfg, prev_st, prev_cash, active, chunks):
    """New episodes in the active envs, advanced to the first learner or external decision."""
    n = st.shape[0]
    for ch in prange(chunks):
        lo, hi = chunk_bounds(n, chunks, ch)
        _reset_range(st, cash, ep, rng, cfg, prev_st, prev_cash, lo, hi, active)


@borrowing
def k_reset_ser(st, cash, ep, rng, cfg, prev_st, prev_cash, active, chunks):
    """Serial twin of :func:`k_reset_par`."""
    _reset_range(st, cash, ep, rng, cfg, prev_st, prev_cash, 0, st.shape[0], active)


@njit(cache=True, parallel=True)
def k_step_par(st, cash, ep, rng, cfg, prev_st, prev_cash, actions, lose, status, chunks):
    """The learner's action in every env, then built-in opponents until the next learner or external decision."""
    n = st.shape[0]
    for ch in prange(chunks):
        lo, hi = chunk_bounds(n, chunks, ch)
        _step_range(st, cash, ep, rng, cfg, prev_st, prev_cash, lo, hi, actions, lose, status)


@borrowing
def k_step_ser(st, cash, ep, rng, cfg, prev_st, prev_cash, actions, lose, status, chunks):
    """Serial twin of :func:`k_step_par`."""
    _step_range(st, cash, ep, rng, cfg, prev_st, prev_cash, 0, st.shape[0], actions, lose, status)


@njit(cache=True, parallel=True)
def k_finish_par(st, cash, ep, rng, cfg, prev_st, prev_cash, rew, over, final, term_obs, term_mask, chunks):
    """Rewards since the learner's previous decision, over codes, terminal observations and auto-reset."""
    n = st.shape[0]
    for ch in prange(chunks):
        lo, hi = chunk_bounds(n, chunks, ch)
        _finish_range(st, cash, ep, rng, cfg, prev_st, prev_cash, lo, hi, rew, over, final, term_obs, term_mask)


@borrowing
def k_finish_ser(st, cash, ep, rng, cfg, prev_st, prev_cash, rew, over, final, term_obs, term_mask, chunks):
    """Serial twin of :func:`k_finish_par`."""
    _finish_range(st, cash, ep, rng, cfg, prev_st, prev_cash, 0, st.shape[0], rew, over, final, term_obs, term_mask)


@njit(cache=True, parallel=True)
def k_step_all_par(st, cash, ep, rng, cfg, prev_st, prev_cash, actions, lose, status, rew, over, final, obs, masks,
                   term_obs, term_mask, chunks):
    """A whole VecEnv step when every opponent is built in: act, opponents, rewards, auto-reset, observations."""
    n = st.shape[0]
    for ch in prange(chunks):
        lo, hi = chunk_bounds(n, chunks, ch)
        _step_all_range(st, cash, ep, rng, cfg, prev_st, prev_cash, lo, hi, actions, lose, status, rew, over, final,
                        obs, masks, term_obs, term_mask)


@borrowing
def k_step_all_ser(st, cash, ep, rng, cfg, prev_st, prev_cash, actions, lose, status, rew, over, final, obs, masks,
                   term_obs, term_mask, chunks):
    """Serial twin of :func:`k_step_all_par`."""
    _step_all_range(st, cash, ep, rng, cfg, prev_st, prev_cash, 0, st.shape[0], actions, lose, status, rew, over,
                    final, obs, masks, term_obs, term_mask)


@njit(cache=True, parallel=True)
def k_observe_par(st, cash, ep, cfg, obs, masks, chunks):
    """The learner's observation and mask in every env."""
    n = st.shape[0]
    for ch in prange(chunks):
        lo, hi = chunk_bounds(n, chunks, ch)
        _observe_range(st, cash, ep, cfg, lo, hi, obs, masks)


@borrowing
def k_observe_ser(st, cash, ep, cfg, obs, masks, chunks):
    """Serial twin of :func:`k_observe_par`."""
    _observe_range(st, cash, ep, cfg, 0, st.shape[0], obs, masks)


@borrowing
def k_waiting(st, ep, cfg, out):
    """Per env, the relative seat whose external agent must act now, or −1."""
    for i in range(out.shape[0]):
        r = to_act_rel(st, ep, cfg, i)
        out[i] = r if r >= 0 and cfg[C_KINDS + r] == EXTERNAL else -1


@counted
def k_act_external(st, cash, ep, rng, cfg, prev_st, prev_cash, idx, actions, status):
    """External agents' actions in envs ``idx`` (an illegal one changes nothing), then built-in opponents."""
    buf = np.empty(BUF, np.int64)
    for k in range(idx.shape[0]):
        i = idx[k]
        status[k] = act_one(st, cash, ep, cfg, i, actions[k], False)
        if status[k] != ILLEGAL:
            advance_one(st, cash, ep, rng, cfg, i, prev_st, prev_cash, buf)


@counted
def k_observe_seats(st, cash, ep, cfg, idx, seats, obs, masks):
    """Observations and masks of envs ``idx`` for the given absolute seats."""
    buf = np.empty(BUF, np.int64)
    for k in range(idx.shape[0]):
        observe_one(st, cash, ep, cfg, idx[k], seats[k], obs[k], masks[k], buf)


@counted
def k_aec_step(st, cash, ep, rng, cfg, prev_st, prev_cash, action, lose, base, delta, obs, mask):
    """AEC step of env 0: act, deal on / forced moves, each seat's reward (money change since ``base``,
    which is updated) and, while the episode runs, the observation and mask of the seat to act next (``obs``,
    ``mask``: what ``k_observe_seats`` writes for it).  Returns the act status; an illegal action without
    ``lose`` changes nothing."""
    status = act_one(st, cash, ep, cfg, 0, action, lose)
    if status == ILLEGAL and not lose:
        return status
    buf = np.empty(BUF, np.int64)
    advance_one(st, cash, ep, rng, cfg, 0, prev_st, prev_cash, buf)
    for s in range(cfg[C_P]):
        m = ep[0, E_MONEY + s]
        delta[s] = m - base[s]
        base[s] = m
    if ep[0, E_OVER] == RUNNING:
        observe_one(st, cash, ep, cfg, 0, st[0, kernels.TO_ACT], obs, mask, buf)
    return status

