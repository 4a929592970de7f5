"""The environments' compiled per-env functions and the batch drivers the env shells call.

A *side* is a team with teams (K18), else a seat.  Its *value* is its match score so far
(K16, K17; finished deals plus the current one, plus illegal-move penalties), or with
``reward="relative"`` that score minus the mean of the other sides'.  Every reward is minus
the change of the receiving side's value, so a return is minus the final value.

The per-env functions (``reset_one``, ``act_one``, ``observe_one``, ``advance_one``,
``finish_one``, ...) work on one env ``i`` of the state array ``st`` (the engine's record per
deal plus the env's columns), the per-env streams ``rng`` (:mod:`krypenv.rng`), the integer
array ``ints`` and the packed configuration ``cfg`` (:mod:`krypenv.krypkasino.config`).  The
``k_*`` drivers run them over a batch, with ``_par`` variants on numba's thread pool for
batches of at least ``krypenv.envs.batch.PARALLEL_FROM`` envs; :class:`krypenv.krypkasino.batch.KrypkasinoBatch` and the
three env shells call only the drivers.
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange

from krypenv.gpu_lean import divmod_small, fresh, rolled
from krypenv.jit import borrowing
from krypenv.krypkasino.actions import CHOICE_SIZE, ILLEGAL, MOVED, N_ACTIONS, apply_action, mask_into
from krypenv.krypkasino.config import (
    C_DEALS,
    C_DECK_SIZE,
    C_E0,
    C_FIRST_DEALER,
    C_INIT_KINDS,
    C_INIT_SIZES,
    C_KINDS,
    C_LATER_KINDS,
    C_LATER_SIZES,
    C_LCP,
    C_N_INIT,
    C_N_KINDS,
    C_N_LATER,
    C_P,
    C_RANDOM_SEAT,
    C_RELATIVE,
    C_SEAT_KINDS,
    C_SIDE_OF,
    C_SIDES,
    C_SPADES,
    EXTERNAL,
    I_DEAL_NO,
    I_TOTALS,
    ILLEGAL_PENALTY,
    LAST_MOVE,
    RANDOM,
)
from krypenv.krypkasino.engine import kernels
from krypenv.krypkasino.engine.captures import O_MASK, hand_sweep_values_s, sweep_values_s, table_value_key, uniforms_of
from krypenv.krypkasino.observation import POINTS8, encode_into
from krypenv.rng import draw_deck_into, pick_legal, rand_float


@njit(cache=True, inline="always")  # returns a view: inlined, as CUDA device functions cannot
def _choice(st: np.ndarray, cfg: np.ndarray, i: int) -> np.ndarray:
    """(53,) view of env ``i``'s capture-choice state."""
    return st[i, cfg[C_E0]:cfg[C_E0] + CHOICE_SIZE]


@borrowing
def _col_last(cfg: np.ndarray) -> int:
    return cfg[C_E0] + CHOICE_SIZE


@borrowing
def _col_seat(cfg: np.ndarray) -> int:
    return cfg[C_E0] + CHOICE_SIZE + LAST_MOVE


@borrowing
def _col_over(cfg: np.ndarray) -> int:
    return cfg[C_E0] + CHOICE_SIZE + LAST_MOVE + 1


@borrowing
def learner_seat(st: np.ndarray, cfg: np.ndarray, i: int) -> int:
    """The learner's seat in env ``i``."""
    return st[i, _col_seat(cfg)]


@borrowing
def episode_over(st: np.ndarray, cfg: np.ndarray, i: int) -> bool:
    """True once env ``i``'s episode has ended (its match is over, or an illegal action lost it)."""
    return st[i, _col_over(cfg)] != 0


@borrowing
def seat_score(st: np.ndarray, cfg: np.ndarray, i: int, s: int) -> int:
    """Seat ``s``'s current deal score in env ``i`` (K16, K17)."""
    P = cfg[C_P]
    tabbes = kernels.tabbes_at(P)
    pile = st[i, kernels.piles_at(P) + 52 * s:kernels.piles_at(P) + 52 * s + 52]
    pts = 0
    for c in range(rolled(52)):
        pts += pile[c] * POINTS8[c]
    score = pts + 5 * st[i, tabbes + s] - 5 * st[i, tabbes + kernels.seat_after(s, 1, P)]
    if cfg[C_LCP] and st[i, kernels.DONE] and st[i, kernels.TAKER] == s:
        score += 1
    return score


@borrowing
def seat_value(st: np.ndarray, ints: np.ndarray, cfg: np.ndarray, i: int, s: int) -> int:
    """Seat ``s``'s match score in env ``i``: earlier deals, the current one, penalties."""
    P = cfg[C_P]
    return seat_score(st, cfg, i, s) + ints[i, I_TOTALS + s] + ints[i, I_TOTALS + P + s]


@borrowing
def side_value(st: np.ndarray, ints: np.ndarray, cfg: np.ndarray, i: int, side: int) -> float:
    """The value of one side (team, or seat without teams) in env ``i``; "relative" subtracts the others' mean."""
    P, n_sides, relative = cfg[C_P], cfg[C_SIDES], cfg[C_RELATIVE]
    own = 0
    total = 0
    for s in range(P):
        if cfg[C_SIDE_OF + s] == side:
            v = seat_value(st, ints, cfg, i, s)
            own += v
            total += v
        elif relative:
            total += seat_value(st, ints, cfg, i, s)
    if relative:
        return own - (total - own) / (n_sides - 1)
    return float(own)


@borrowing
def side_values_into(st: np.ndarray, ints: np.ndarray, cfg: np.ndarray, i: int, out: np.ndarray) -> None:
    """(n_sides,) values of env ``i``."""
    for k in range(cfg[C_SIDES]):
        out[k] = side_value(st, ints, cfg, i, k)


@borrowing
def learner_value(st: np.ndarray, ints: np.ndarray, cfg: np.ndarray, i: int) -> float:
    """Value of the learner's side in env ``i``."""
    return side_value(st, ints, cfg, i, cfg[C_SIDE_OF + learner_seat(st, cfg, i)])


@borrowing
def _new_deal(st: np.ndarray, rng: np.ndarray, ints: np.ndarray, cfg: np.ndarray, i: int, scr: np.ndarray) -> None:
    """Deal the next deal of env ``i``'s match: a fresh deck from its stream, the dealer rotating left (K19).

    The shuffle orders the deck's kind indices, mapped to card codes by ``cfg[C_KINDS:]`` (the
    identity in the standard game; the variant's kinds, K20).
    """
    P = cfg[C_P]
    deck = st[i, kernels.DECK:kernels.DECK + cfg[C_DECK_SIZE]]  # shuffled in place, then dealt from (K6)
    draw_deck_into(rng, i, deck, cfg[C_N_KINDS], uniforms_of(scr))
    if cfg[C_N_KINDS] != 52:  # a variant deck (K20); the standard deck's kind indices are its codes
        for k in range(deck.shape[0]):
            deck[k] = cfg[C_KINDS + deck[k]]
    dealer = divmod_small(cfg[C_FIRST_DEALER] + ints[i, I_DEAL_NO], P)[1]
    n_init = cfg[C_N_INIT]
    kernels.reset_deal(st, i, P, deck, dealer, cfg[C_INIT_KINDS:C_INIT_KINDS + n_init],
                 cfg[C_INIT_SIZES:C_INIT_SIZES + n_init], cfg[C_SPADES] != 0)
    choice = _choice(st, cfg, i)
    choice[0] = -1
    choice[1:] = 0


@borrowing
def reset_one(st: np.ndarray, rng: np.ndarray, ints: np.ndarray, base: np.ndarray, cfg: np.ndarray, i: int,
              scr: np.ndarray) -> None:
    """Start a new episode in env ``i``: deal 0 with the first dealer; a random learner seat if configured.

    ``base[i]`` (the learner's value, or the row of every seat's value of the device env) is zeroed."""
    P = cfg[C_P]
    ints[i, :] = 0
    base[i] = 0.0
    st[i, _col_over(cfg)] = 0
    st[i, _col_last(cfg):_col_last(cfg) + LAST_MOVE] = -1
    if cfg[C_RANDOM_SEAT]:
        st[i, _col_seat(cfg)] = min(int(rand_float(rng, i) * P), P - 1)
    _new_deal(st, rng, ints, cfg, i, scr)


@borrowing
def rollover_one(st: np.ndarray, rng: np.ndarray, ints: np.ndarray, cfg: np.ndarray, i: int, scr: np.ndarray) -> bool:
    """If env ``i``'s deal is finished, bank its scores and deal the next one of the match; True if the episode is
    over."""
    if episode_over(st, cfg, i):
        return True
    if not st[i, kernels.DONE]:
        return False
    if ints[i, I_DEAL_NO] + 1 >= cfg[C_DEALS]:
        st[i, _col_over(cfg)] = 1
        return True
    for s in range(cfg[C_P]):
        ints[i, I_TOTALS + s] += seat_score(st, cfg, i, s)
    ints[i, I_DEAL_NO] += 1
    _new_deal(st, rng, ints, cfg, i, scr)
    return False


@njit(cache=True, inline="always")  # returns a view: inlined, as CUDA device functions cannot
def _last_capture(st: np.ndarray, cfg: np.ndarray, i: int) -> np.ndarray:
    """(52,) view of the capture in env ``i``'s last-move record, where apply_action writes each move's capture."""
    return st[i, _col_last(cfg) + 4:_col_last(cfg) + LAST_MOVE]


@borrowing
def _record_last_move(st: np.ndarray, cfg: np.ndarray, i: int, seat: int, tabbes_before: int) -> None:
    """Complete env ``i``'s last-move record (seat, card, tabbes gained, K15 taker; the capture is in place)."""
    last = _col_last(cfg)
    st[i, last] = seat
    st[i, last + 1] = st[i, kernels.HIST_CARD + st[i, kernels.N_MOVES] - 1]
    st[i, last + 2] = st[i, kernels.tabbes_at(cfg[C_P]) + seat] - tabbes_before
    st[i, last + 3] = st[i, kernels.TAKER] if st[i, kernels.DONE] else -1


@borrowing
def act_one(st: np.ndarray, ints: np.ndarray, cfg: np.ndarray, i: int, action: int, lose: bool,
            scr: np.ndarray, forced: int) -> int:
    """Apply an action of the seat to act in env ``i`` (MOVED, CHOOSING or ILLEGAL); records the last move.

    An illegal action changes nothing, unless ``lose``: then the offender's side gets the
    penalty and the episode ends.  ``forced``: the hand's sweep values if known, else −1.
    """
    P = cfg[C_P]
    if episode_over(st, cfg, i) or st[i, kernels.DONE]:
        return ILLEGAL
    seat = np.int64(st[i, kernels.TURN])
    before = np.int64(st[i, kernels.tabbes_at(P) + seat])
    n_later = cfg[C_N_LATER]
    status = apply_action(st, i, P, action, _choice(st, cfg, i), _last_capture(st, cfg, i),
                          cfg[C_LATER_KINDS:C_LATER_KINDS + n_later], cfg[C_LATER_SIZES:C_LATER_SIZES + n_later],
                          cfg[C_SPADES] != 0, scr, forced)
    if status == MOVED:
        _record_last_move(st, cfg, i, seat, before)
    elif status == ILLEGAL and lose:
        ints[i, I_TOTALS + P + seat] += ILLEGAL_PENALTY
        st[i, _col_over(cfg)] = 1
    return status


@borrowing
def observe_one(st: np.ndarray, ints: np.ndarray, cfg: np.ndarray, i: int, observer: int, obs: np.ndarray,
                mask: np.ndarray, scr: np.ndarray) -> None:
    """Write ``observer``'s observation and action mask (zeros unless it is to act) for env ``i``."""
    P = cfg[C_P]
    ended = episode_over(st, cfg, i) or st[i, kernels.DONE] != 0
    sweep = sweep_values_s(table_value_key(kernels.table_of(st, i)), scr)
    choice = _choice(st, cfg, i)
    deals_left = cfg[C_DEALS] - 1 - ints[i, I_DEAL_NO]
    encode_into(st, i, P, observer, choice, sweep, cfg[C_SIDE_OF:C_SIDE_OF + P], deals_left, ended, obs)
    if ended or st[i, kernels.TURN] != observer:
        mask[:] = 0
    else:
        mask_into(kernels.hand_of(st, i, observer), kernels.table_of(st, i), choice, sweep, mask, scr)


@borrowing
def random_action(st: np.ndarray, cfg: np.ndarray, i: int, u: float, scr: np.ndarray) -> tuple[int, int]:
    """The uniform random legal action of the seat to act in env ``i`` for uniform ``u``, and the hand's
    sweep values (−1 during a capture choice): the ⌊u·n⌋-th of its n legal actions in action order
    (what :func:`pick_legal` picks from the mask)."""
    choice = _choice(st, cfg, i)
    hand = kernels.hand_of(st, i, st[i, kernels.TURN])
    table = kernels.table_of(st, i)
    if choice[0] >= 0:  # a capture choice (rare): go through the mask, in the scratch
        mask = scr[O_MASK:O_MASK + N_ACTIONS]
        mask_into(hand, table, choice, 0, mask, scr)
        return pick_legal(mask, u), -1
    forced = hand_sweep_values_s(hand, table_value_key(table), scr)
    return kernels.pick_card(hand, forced, u), forced


@borrowing
def to_act(st: np.ndarray, cfg: np.ndarray, i: int) -> int:
    """Relative seat (to the learner) whose turn it is in env ``i``, or −1 once the episode is over."""
    if episode_over(st, cfg, i) or st[i, kernels.DONE]:
        return -1
    P = cfg[C_P]
    return kernels.seat_after(st[i, kernels.TURN], P - learner_seat(st, cfg, i), P)  # (turn − learner) mod P


@borrowing
def advance_one(st: np.ndarray, rng: np.ndarray, ints: np.ndarray, cfg: np.ndarray, i: int,
                scr: np.ndarray) -> None:
    """Deal on through a match and play built-in opponents until the learner or an external seat must act."""
    kinds = cfg[C_SEAT_KINDS:C_SEAT_KINDS + cfg[C_P]]
    while True:  # on a GPU thread the env's arrays are made fresh per seat: no address held over the loop
        s, r_, n, c = fresh(st), fresh(rng), fresh(ints), fresh(cfg)
        if rollover_one(s, r_, n, c, i, scr):
            return
        r = to_act(s, c, i)
        if kinds[r] != RANDOM:
            return
        action, forced = random_action(s, c, i, rand_float(r_, i), scr)
        act_one(s, n, c, i, action, False, scr, forced)


# --------------------------------------------------------------------------- per-range bodies
@borrowing
def _reset_range(st, rng, ints, base, cfg, lo, hi, active, scr):
    for i in range(lo, hi):
        if active[i]:
            reset_one(st, rng, ints, base, cfg, i, scr)
            advance_one(st, rng, ints, cfg, i, scr)


@borrowing
def _step_range(st, rng, ints, cfg, lo, hi, actions, lose, status, scr):
    for i in range(lo, hi):
        status[i] = act_one(st, ints, cfg, i, actions[i], lose, scr, -1)
        if status[i] != ILLEGAL or lose:
            advance_one(st, rng, ints, cfg, i, scr)


@borrowing
def finish_one(st, rng, ints, base, cfg, i, rew, dones, final, term_obs, term_mask, scr):
    """Env ``i``'s reward since the learner's previous decision and its done flag; a finished
    episode's final learner value and terminal observation, then a new episode (auto-reset)."""
    v = learner_value(st, ints, cfg, i)
    rew[i] = base[i] - v
    base[i] = v
    dones[i] = episode_over(st, cfg, i)
    if dones[i]:
        final[i] = v
        observe_one(st, ints, cfg, i, learner_seat(st, cfg, i), term_obs[i], term_mask[i], scr)
        reset_one(st, rng, ints, base, cfg, i, scr)  # the new episode's value starts at 0
        advance_one(st, rng, ints, cfg, i, scr)


@borrowing
def _finish_range(st, rng, ints, base, cfg, lo, hi, rew, dones, final, term_obs, term_mask, scr):
    for i in range(lo, hi):
        finish_one(st, rng, ints, base, cfg, i, rew, dones, final, term_obs, term_mask, scr)


@borrowing
def _step_all_range(st, rng, ints, base, cfg, lo, hi, actions, lose, status, rew, dones, final, obs, masks,
                    term_obs, term_mask, scr):
    """Act and advance, then finish, then observe, each phase over the whole range: the same work per env as one
    loop calling the four, in faster code (``experiments/vec_phases.py``; docs/results/benchmark.md)."""
    for i in range(lo, hi):
        status[i] = act_one(st, ints, cfg, i, actions[i], lose, scr, -1)
        advance_one(st, rng, ints, cfg, i, scr)
    _finish_range(st, rng, ints, base, cfg, lo, hi, rew, dones, final, term_obs, term_mask, scr)
    _observe_range(st, ints, cfg, lo, hi, obs, masks, scr)


@borrowing
def _observe_range(st, ints, cfg, lo, hi, obs, masks, scr):
    for i in range(lo, hi):
        observe_one(st, ints, cfg, i, learner_seat(st, cfg, i), obs[i], masks[i], scr)


# --------------------------------------------------------------------------- batch drivers
@njit(cache=True, parallel=True)
def k_reset_par(st, rng, ints, base, cfg, active, scr):
    """New episodes in the active envs, advanced to the first learner or external decision."""
    n, chunks = active.shape[0], scr.shape[0]
    for ch in prange(chunks):
        lo, hi = kernels.chunk_bounds(n, chunks, ch)
        _reset_range(st, rng, ints, base, cfg, lo, hi, active, scr[ch])


@borrowing
def k_reset_ser(st, rng, ints, base, cfg, active, scr):
    """Serial twin of :func:`k_reset_par`."""
    _reset_range(st, rng, ints, base, cfg, 0, active.shape[0], active, scr[0])


@njit(cache=True, parallel=True)
def k_step_par(st, rng, ints, cfg, actions, lose, status, scr):
    """The learner's action in every env, then built-in opponents until the next learner or external decision."""
    n, chunks = actions.shape[0], scr.shape[0]
    for ch in prange(chunks):
        lo, hi = kernels.chunk_bounds(n, chunks, ch)
        _step_range(st, rng, ints, cfg, lo, hi, actions, lose, status, scr[ch])


@borrowing
def k_step_ser(st, rng, ints, cfg, actions, lose, status, scr):
    """Serial twin of :func:`k_step_par`."""
    _step_range(st, rng, ints, cfg, 0, actions.shape[0], actions, lose, status, scr[0])


@njit(cache=True, parallel=True)
def k_step_all_par(st, rng, ints, base, cfg, actions, lose, status, rew, dones, final, obs, masks, term_obs,
                   term_mask, scr):
    """A whole VecEnv step when every opponent is built in: act, opponents, rewards, auto-reset, observations."""
    n, chunks = actions.shape[0], scr.shape[0]
    for ch in prange(chunks):
        lo, hi = kernels.chunk_bounds(n, chunks, ch)
        _step_all_range(st, rng, ints, base, cfg, lo, hi, actions, lose, status, rew, dones, final, obs, masks,
                        term_obs, term_mask, scr[ch])


@borrowing
def k_step_all_ser(st, rng, ints, base, cfg, actions, lose, status, rew, dones, final, obs, masks, term_obs,
                   term_mask, scr):
    """Serial twin of :func:`k_step_all_par`."""
    _step_all_range(st, rng, ints, base, cfg, 0, actions.shape[0], actions, lose, status, rew, dones, final, obs, masks,
                    term_obs, term_mask, scr[0])


@njit(cache=True, parallel=True)
def k_finish_par(st, rng, ints, base, cfg, rew, dones, final, term_obs, term_mask, scr):
    """Rewards since the learner's previous decision, dones, terminal observations and auto-reset."""
    n, chunks = rew.shape[0], scr.shape[0]
    for ch in prange(chunks):
        lo, hi = kernels.chunk_bounds(n, chunks, ch)
        _finish_range(st, rng, ints, base, cfg, lo, hi, rew, dones, final, term_obs, term_mask, scr[ch])


@borrowing
def k_finish_ser(st, rng, ints, base, cfg, rew, dones, final, term_obs, term_mask, scr):
    """Serial twin of :func:`k_finish_par`."""
    _finish_range(st, rng, ints, base, cfg, 0, rew.shape[0], rew, dones, final, term_obs, term_mask, scr[0])


@njit(cache=True, parallel=True)
def k_observe_par(st, ints, cfg, obs, masks, scr):
    """The learner's observation and mask in every env."""
    n, chunks = obs.shape[0], scr.shape[0]
    for ch in prange(chunks):
        lo, hi = kernels.chunk_bounds(n, chunks, ch)
        _observe_range(st, ints, cfg, lo, hi, obs, masks, scr[ch])


@borrowing
def k_observe_ser(st, ints, cfg, obs, masks, scr):
    """Serial twin of :func:`k_observe_par`."""
    _observe_range(st, ints, cfg, 0, obs.shape[0], obs, masks, scr[0])


@borrowing
def k_waiting(st, cfg, out):
    """Per env, the relative seat whose external agent must act now, or −1."""
    kinds = cfg[C_SEAT_KINDS:C_SEAT_KINDS + cfg[C_P]]
    for i in range(out.shape[0]):
        r = to_act(st, cfg, i)
        out[i] = r if r >= 0 and kinds[r] == EXTERNAL else -1


@borrowing
def k_act_external(st, rng, ints, cfg, idx, actions, status, scr):
    """External agents' actions in envs ``idx`` (an illegal one changes nothing), then built-in opponents."""
    for k in range(idx.shape[0]):
        i = idx[k]
        status[k] = act_one(st, ints, cfg, i, actions[k], False, scr[0], -1)
        if status[k] != ILLEGAL:
            advance_one(st, rng, ints, cfg, i, scr[0])


@borrowing
def k_observe_seats(st, ints, cfg, idx, seats, obs, masks, scr):
    """Observations and masks of envs ``idx`` for the given absolute seats."""
    for k in range(idx.shape[0]):
        observe_one(st, ints, cfg, idx[k], seats[k], obs[k], masks[k], scr[0])


@borrowing
def k_act(st, rng, ints, cfg, i, action, lose, scr):
    """One action of the seat to act in env ``i``, then the next deal of a match if this one ended."""
    status = act_one(st, ints, cfg, i, action, lose, scr[0], -1)
    rollover_one(st, rng, ints, cfg, i, scr[0])
    return status


@borrowing
def k_aec_step(st, rng, ints, cfg, action, lose, vals, delta, obs, mask, info, scr):
    """AEC step of env 0: act, deal the next deal of a match, reward per seat, the next agent's observation.

    ``vals`` (n_sides,) holds the side values and is updated; ``delta`` (P,) receives each
    seat's reward (minus its side's value change); ``info`` (7,) receives status, the acting
    seat, pending card, deal number and round before the step, then the seat to act and the
    episode-over flag after it.
    """
    P = cfg[C_P]
    info[1], info[2] = st[0, kernels.TURN], _choice(st, cfg, 0)[0]
    info[3], info[4] = ints[0, I_DEAL_NO], st[0, kernels.ROUND]
    status = act_one(st, ints, cfg, 0, action, lose, scr[0], -1)
    info[0] = status
    if status == ILLEGAL and not lose:
        return
    rollover_one(st, rng, ints, cfg, 0, scr[0])
    for k in range(vals.shape[0]):
        new = side_value(st, ints, cfg, 0, k)
        for s in range(P):
            if cfg[C_SIDE_OF + s] == k:
                delta[s] = vals[k] - new
        vals[k] = new
    info[5], info[6] = st[0, kernels.TURN], episode_over(st, cfg, 0)
    observe_one(st, ints, cfg, 0, st[0, kernels.TURN], obs, mask, scr[0])


@borrowing
def k_advance(st, rng, ints, cfg, i, scr):
    """Env ``i``: deal on through a match and play built-in opponents until the learner or an external seat acts."""
    advance_one(st, rng, ints, cfg, i, scr[0])


@borrowing
def k_observe(st, ints, cfg, i, observer, obs, mask, scr):
    """Observation and mask of env ``i`` for an absolute seat."""
    observe_one(st, ints, cfg, i, observer, obs, mask, scr[0])


@borrowing
def k_values(st, ints, cfg, i, out):
    """(n_sides,) values of env ``i``."""
    side_values_into(st, ints, cfg, i, out)
