"""The shared core of the three environments: configuration, batched env state and compiled drivers.

:class:`EnvConfig` validates the keywords every interface takes (the game record's ``rules``
keys plus ``reward``, ``deals``, ``illegal``, ``render_mode``).  :class:`Core` holds N
environments on one :class:`krypenv.krypkasino.engine.Deals` batch whose records carry a few more
columns for the env (capture-choice state, last move, learner seat, episode over), plus
per-env random streams, match totals and penalties.  The AEC env is ``Core(cfg, 1)`` with
every seat external; the Gymnasium env and the VecEnv are ``Core(cfg, N)`` with a learner
seat and opponents that are either built in (compiled) or external (Python agents).

Randomness: each env owns a splitmix64 stream (``Core.rng[i]``) seeded from
``numpy.random.SeedSequence(seed)``.  Decks (the engine's Fisher–Yates over 103 uniforms),
a random learner seat, built-in random opponents and the uniforms handed to external agents
all come from it, so the same seed gives the same deals in every interface and batch size.

Values and rewards: a side's *value* is its match score so far (K16, K17; finished deals
plus the current one, plus illegal-move penalties), per team with teams (K18), or with
``reward="relative"`` its score minus the mean of the other sides'.  Every reward is minus
the change of the receiving side's value, so a return is minus the final value.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

import numba
import numpy as np
from numba import njit, prange

from krypenv.krypkasino.actions import CHOICE_SIZE, CHOOSING, CONFIRM, ILLEGAL, MOVED, N_ACTIONS, TAKE, apply_action, mask_into  # noqa: F401
from krypenv.krypkasino.cards import DECK_SIZE, HAND_VALUE
from krypenv.krypkasino.engine import Deals
from krypenv.krypkasino.engine import kernels as K
from krypenv.krypkasino.engine.captures import hand_sweep_values_s, new_scratch, sweep_values_s, table_value_key
from krypenv.krypkasino.observation import POINTS8, bounds, encode_into, obs_size
from krypenv.policy import Agent, DecisionBatch, check_actions
from krypenv.krypkasino.rules import Rules

REWARDS = ("points", "relative")
ILLEGAL_MODES = ("raise", "lose")
RENDER_MODES = ("ansi", "human")
ILLEGAL_PENALTY = 50  # score points added to the offender's side by illegal="lose"
MAX_DEALS = 10_000
LEARNER, EXTERNAL, RANDOM = 0, 1, 2  # who acts for a seat: the learner, a Python agent, built-in random
LAST_MOVE = 56  # last-move record: seat, card, tabbes gained, K15 taker (−1), capture counts (52)
K_PARALLEL_FROM = 64  # batches at least this large use the parallel drivers

# cfg vector (int64): scalars, then per-seat and packet arrays at fixed offsets
C_N, C_P, C_SPADES, C_DEALS, C_LCP, C_SIDES, C_RELATIVE, C_FIRST_DEALER, C_RANDOM_SEAT, C_E0 = range(10)
C_N_INIT, C_N_LATER = 10, 11
C_INIT_KINDS, C_INIT_SIZES, C_LATER_KINDS, C_LATER_SIZES, C_SIDE_OF, C_SEAT_KINDS = 12, 16, 20, 22, 24, 30
CFG_SIZE = 36
# ints array (N, 1 + 2P) int64: deal number, then match totals per seat, then penalties per seat
I_DEAL_NO, I_TOTALS = 0, 1


@dataclass(frozen=True)
class EnvConfig:
    """The keywords shared by all three interfaces; ValueError naming the field on bad values."""

    players: int = 3
    teams: Any = None
    two_player_deal: str = "6+4"
    set_aside: str = "court"
    last_capture_point: bool = False
    reward: str = "points"
    deals: int = 1
    illegal: str = "raise"
    render_mode: str | None = None

    def __post_init__(self) -> None:
        rules = Rules(self.players, self.teams, self.two_player_deal, self.set_aside, self.last_capture_point)
        object.__setattr__(self, "teams", rules.teams)
        if self.reward not in REWARDS:
            raise ValueError(f"reward must be one of {REWARDS}, got {self.reward!r}")
        if isinstance(self.deals, bool) or not isinstance(self.deals, (int, np.integer)) or not 1 <= self.deals <= MAX_DEALS:
            raise ValueError(f"deals must be an integer from 1 to {MAX_DEALS}, got {self.deals!r}")
        if self.illegal not in ILLEGAL_MODES:
            raise ValueError(f"illegal must be one of {ILLEGAL_MODES}, got {self.illegal!r}")
        if self.render_mode is not None and self.render_mode not in RENDER_MODES:
            raise ValueError(f"render_mode must be None or one of {RENDER_MODES}, got {self.render_mode!r}")

    @property
    def rules(self) -> Rules:
        """The rule set (K5–K8, K17, K18)."""
        return Rules(self.players, self.teams, self.two_player_deal, self.set_aside, self.last_capture_point)

    def to_dict(self) -> dict[str, Any]:
        """All keywords as a plain dict (the rules part as in a game record)."""
        d = asdict(self)
        d.update(self.rules.to_dict())
        return d


def seed_state(seed: int | None) -> np.uint64:
    """A splitmix64 state from a seed (fresh OS entropy for None)."""
    return np.random.SeedSequence(seed).generate_state(1, np.uint64)[0]


# --------------------------------------------------------------------------- compiled pieces
@njit(cache=True)
def rand_float(rng: np.ndarray, i: int) -> float:
    """Next uniform float in [0, 1) of env ``i``'s splitmix64 stream."""
    z = rng[i] + np.uint64(0x9E3779B97F4A7C15)
    rng[i] = z
    z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    z = z ^ (z >> np.uint64(31))
    return float(z >> np.uint64(11)) * (1.0 / 9007199254740992.0)


@njit(cache=True)
def _choice(st: np.ndarray, cfg: np.ndarray, i: int) -> np.ndarray:
    """(53,) view of env ``i``'s capture-choice state."""
    return st[i, cfg[C_E0]:cfg[C_E0] + CHOICE_SIZE]


@njit(cache=True)
def _col_last(cfg: np.ndarray) -> int:
    return cfg[C_E0] + CHOICE_SIZE


@njit(cache=True)
def _col_seat(cfg: np.ndarray) -> int:
    return cfg[C_E0] + CHOICE_SIZE + LAST_MOVE


@njit(cache=True)
def _col_over(cfg: np.ndarray) -> int:
    return cfg[C_E0] + CHOICE_SIZE + LAST_MOVE + 1


@njit(cache=True)
def learner_seat(st: np.ndarray, cfg: np.ndarray, i: int) -> int:
    """The learner's seat in env ``i``."""
    return st[i, _col_seat(cfg)]


@njit(cache=True)
def episode_over(st: np.ndarray, cfg: np.ndarray, i: int) -> bool:
    """True once env ``i``'s episode has ended (its match is over, or an illegal action lost it)."""
    return st[i, _col_over(cfg)] != 0


@njit(cache=True)
def seat_score(st: np.ndarray, cfg: np.ndarray, i: int, s: int) -> int:
    """Seat ``s``'s current deal score in env ``i`` (K16, K17)."""
    P = cfg[C_P]
    tabbes = K.tabbes_at(P)
    pile = st[i, K.piles_at(P) + 52 * s:K.piles_at(P) + 52 * s + 52]
    pts = 0
    for c in range(52):
        pts += pile[c] * POINTS8[c]
    score = pts + 5 * st[i, tabbes + s] - 5 * st[i, tabbes + (s + 1) % P]
    if cfg[C_LCP] and st[i, K.DONE] and st[i, K.TAKER] == s:
        score += 1
    return score


@njit(cache=True)
def seat_value(st: np.ndarray, ints: np.ndarray, cfg: np.ndarray, i: int, s: int) -> int:
    """Seat ``s``'s match score in env ``i``: earlier deals, the current one, penalties."""
    P = cfg[C_P]
    return seat_score(st, cfg, i, s) + ints[i, I_TOTALS + s] + ints[i, I_TOTALS + P + s]


@njit(cache=True)
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


@njit(cache=True)
def side_values_into(st: np.ndarray, ints: np.ndarray, cfg: np.ndarray, i: int, out: np.ndarray) -> None:
    """(n_sides,) values of env ``i``."""
    for k in range(cfg[C_SIDES]):
        out[k] = side_value(st, ints, cfg, i, k)


@njit(cache=True)
def learner_value(st: np.ndarray, ints: np.ndarray, cfg: np.ndarray, i: int) -> float:
    """Value of the learner's side in env ``i``."""
    return side_value(st, ints, cfg, i, cfg[C_SIDE_OF + learner_seat(st, cfg, i)])


@njit(cache=True)
def _new_deal(st: np.ndarray, rng: np.ndarray, ints: np.ndarray, cfg: np.ndarray, i: int) -> None:
    """Deal the next deal of env ``i``'s match: a fresh deck from its stream, the dealer rotating left (K19)."""
    P = cfg[C_P]
    u = np.empty(DECK_SIZE - 1, np.float64)
    for k in range(DECK_SIZE - 1):
        u[k] = rand_float(rng, i)
    deck = np.empty(DECK_SIZE, np.int8)
    K.shuffle_into(u, deck)
    dealer = (cfg[C_FIRST_DEALER] + ints[i, I_DEAL_NO]) % P
    n_init = cfg[C_N_INIT]
    K.reset_deal(st, i, P, deck, dealer, cfg[C_INIT_KINDS:C_INIT_KINDS + n_init],
                 cfg[C_INIT_SIZES:C_INIT_SIZES + n_init], cfg[C_SPADES] != 0)
    choice = _choice(st, cfg, i)
    choice[0] = -1
    choice[1:] = 0


@njit(cache=True)
def reset_one(st: np.ndarray, rng: np.ndarray, ints: np.ndarray, base: np.ndarray, cfg: np.ndarray, i: int) -> None:
    """Start a new episode in env ``i``: deal 0 with the first dealer; a random learner seat if configured."""
    P = cfg[C_P]
    ints[i, :] = 0
    base[i] = 0.0
    st[i, _col_over(cfg)] = 0
    st[i, _col_last(cfg):_col_last(cfg) + LAST_MOVE] = -1
    if cfg[C_RANDOM_SEAT]:
        st[i, _col_seat(cfg)] = min(int(rand_float(rng, i) * P), P - 1)
    _new_deal(st, rng, ints, cfg, i)


@njit(cache=True)
def rollover_one(st: np.ndarray, rng: np.ndarray, ints: np.ndarray, cfg: np.ndarray, i: int) -> bool:
    """If env ``i``'s deal is finished, bank its scores and deal the next one of the match; True if the episode is over."""
    if episode_over(st, cfg, i):
        return True
    if not st[i, K.DONE]:
        return False
    if ints[i, I_DEAL_NO] + 1 >= cfg[C_DEALS]:
        st[i, _col_over(cfg)] = 1
        return True
    for s in range(cfg[C_P]):
        ints[i, I_TOTALS + s] += seat_score(st, cfg, i, s)
    ints[i, I_DEAL_NO] += 1
    _new_deal(st, rng, ints, cfg, i)
    return False


@njit(cache=True)
def _last_capture(st: np.ndarray, cfg: np.ndarray, i: int) -> np.ndarray:
    """(52,) view of the capture in env ``i``'s last-move record, where apply_action writes each move's capture."""
    return st[i, _col_last(cfg) + 4:_col_last(cfg) + LAST_MOVE]


@njit(cache=True)
def _record_last_move(st: np.ndarray, cfg: np.ndarray, i: int, seat: int, tabbes_before: int) -> None:
    """Complete env ``i``'s last-move record (seat, card, tabbes gained, K15 taker; the capture is in place)."""
    last = _col_last(cfg)
    st[i, last] = seat
    st[i, last + 1] = st[i, K.HIST_CARD + st[i, K.N_MOVES] - 1]
    st[i, last + 2] = st[i, K.tabbes_at(cfg[C_P]) + seat] - tabbes_before
    st[i, last + 3] = st[i, K.TAKER] if st[i, K.DONE] else -1


@njit(cache=True)
def act_one(st: np.ndarray, ints: np.ndarray, cfg: np.ndarray, i: int, action: int, lose: bool,
            scr: np.ndarray, forced: int) -> int:
    """Apply an action of the seat to act in env ``i`` (MOVED, CHOOSING or ILLEGAL); records the last move.

    An illegal action changes nothing, unless ``lose``: then the offender's side gets the
    penalty and the episode ends.  ``forced``: the hand's sweep values if known, else −1.
    """
    P = cfg[C_P]
    if episode_over(st, cfg, i) or st[i, K.DONE]:
        return ILLEGAL
    seat = np.int64(st[i, K.TURN])
    before = np.int64(st[i, K.tabbes_at(P) + seat])
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


@njit(cache=True)
def observe_one(st: np.ndarray, ints: np.ndarray, cfg: np.ndarray, i: int, observer: int, obs: np.ndarray,
                mask: np.ndarray, scr: np.ndarray) -> None:
    """Write ``observer``'s observation and action mask (zeros unless it is to act) for env ``i``."""
    P = cfg[C_P]
    ended = episode_over(st, cfg, i) or st[i, K.DONE] != 0
    sweep = sweep_values_s(table_value_key(K.table_of(st, i)), scr)
    choice = _choice(st, cfg, i)
    deals_left = cfg[C_DEALS] - 1 - ints[i, I_DEAL_NO]
    encode_into(st, i, P, observer, choice, sweep, cfg[C_SIDE_OF:C_SIDE_OF + P], deals_left, ended, obs)
    if ended or st[i, K.TURN] != observer:
        mask[:] = 0
    else:
        mask_into(K.hand_of(st, i, observer), K.table_of(st, i), choice, sweep, mask, scr)


@njit(cache=True)
def random_action(st: np.ndarray, cfg: np.ndarray, i: int, u: float, scr: np.ndarray) -> tuple[int, int]:
    """The uniform random legal action of the seat to act in env ``i`` for uniform ``u``, and the hand's
    sweep values (−1 during a capture choice): the ⌊u·n⌋-th of its n legal actions in action order
    (what :func:`pick_legal` picks from the mask)."""
    choice = _choice(st, cfg, i)
    hand = K.hand_of(st, i, st[i, K.TURN])
    table = K.table_of(st, i)
    if choice[0] >= 0:  # a capture choice (rare): go through the mask
        mask = np.empty(N_ACTIONS, np.int8)
        mask_into(hand, table, choice, 0, mask, scr)
        return pick_legal(mask, u), -1
    forced = hand_sweep_values_s(hand, table_value_key(table), scr)
    n = 0
    for c in range(52):
        if hand[c] and (forced == 0 or (forced >> HAND_VALUE[c]) & 1):
            n += 1
    k = min(int(u * n), n - 1)
    for c in range(52):
        if hand[c] and (forced == 0 or (forced >> HAND_VALUE[c]) & 1):
            if k == 0:
                return c, forced
            k -= 1
    return -1, forced


@njit(cache=True)
def pick_legal(mask: np.ndarray, u: float) -> int:
    """The ⌊u·n⌋-th of the n legal actions of a mask (the uniform random choice every random agent makes)."""
    n = 0
    for a in range(N_ACTIONS):
        n += mask[a] != 0
    k = min(int(u * n), n - 1)
    for a in range(N_ACTIONS):
        if mask[a]:
            if k == 0:
                return a
            k -= 1
    return -1


@njit(cache=True)
def to_act(st: np.ndarray, cfg: np.ndarray, i: int) -> int:
    """Relative seat (to the learner) whose turn it is in env ``i``, or −1 once the episode is over."""
    if episode_over(st, cfg, i) or st[i, K.DONE]:
        return -1
    return (st[i, K.TURN] - learner_seat(st, cfg, i)) % cfg[C_P]


@njit(cache=True)
def advance_one(st: np.ndarray, rng: np.ndarray, ints: np.ndarray, cfg: np.ndarray, i: int,
                scr: np.ndarray) -> None:
    """Deal on through a match and play built-in opponents until the learner or an external seat must act."""
    kinds = cfg[C_SEAT_KINDS:C_SEAT_KINDS + cfg[C_P]]
    while not rollover_one(st, rng, ints, cfg, i):
        r = to_act(st, cfg, i)
        if kinds[r] != RANDOM:
            return
        action, forced = random_action(st, cfg, i, rand_float(rng, i), scr)
        act_one(st, ints, cfg, i, action, False, scr, forced)


# --------------------------------------------------------------------------- per-range bodies
@njit(cache=True)
def _reset_range(st, rng, ints, base, cfg, lo, hi, active, scr):
    for i in range(lo, hi):
        if active[i]:
            reset_one(st, rng, ints, base, cfg, i)
            advance_one(st, rng, ints, cfg, i, scr)


@njit(cache=True)
def _step_range(st, rng, ints, cfg, lo, hi, actions, lose, status, scr):
    for i in range(lo, hi):
        status[i] = act_one(st, ints, cfg, i, actions[i], lose, scr, -1)
        if status[i] != ILLEGAL or lose:
            advance_one(st, rng, ints, cfg, i, scr)


@njit(cache=True)
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
        reset_one(st, rng, ints, base, cfg, i)  # the new episode's value starts at 0
        advance_one(st, rng, ints, cfg, i, scr)


@njit(cache=True)
def _finish_range(st, rng, ints, base, cfg, lo, hi, rew, dones, final, term_obs, term_mask, scr):
    for i in range(lo, hi):
        finish_one(st, rng, ints, base, cfg, i, rew, dones, final, term_obs, term_mask, scr)


@njit(cache=True)
def _step_all_range(st, rng, ints, base, cfg, lo, hi, actions, lose, status, rew, dones, final, obs, masks,
                    term_obs, term_mask, scr):
    for i in range(lo, hi):
        status[i] = act_one(st, ints, cfg, i, actions[i], lose, scr, -1)
        advance_one(st, rng, ints, cfg, i, scr)
        finish_one(st, rng, ints, base, cfg, i, rew, dones, final, term_obs, term_mask, scr)
        observe_one(st, ints, cfg, i, learner_seat(st, cfg, i), obs[i], masks[i], scr)


@njit(cache=True)
def _observe_range(st, ints, cfg, lo, hi, obs, masks, scr):
    for i in range(lo, hi):
        observe_one(st, ints, cfg, i, learner_seat(st, cfg, i), obs[i], masks[i], scr)


# --------------------------------------------------------------------------- batch drivers
@njit(cache=True, parallel=True)
def k_reset_par(st, rng, ints, base, cfg, active, scr):
    """New episodes in the active envs, advanced to the first learner or external decision."""
    n, chunks = active.shape[0], scr.shape[0]
    for ch in prange(chunks):
        lo, hi = K.chunk_bounds(n, chunks, ch)
        _reset_range(st, rng, ints, base, cfg, lo, hi, active, scr[ch])


@njit(cache=True)
def k_reset_ser(st, rng, ints, base, cfg, active, scr):
    """Serial twin of :func:`k_reset_par`."""
    _reset_range(st, rng, ints, base, cfg, 0, active.shape[0], active, scr[0])


@njit(cache=True, parallel=True)
def k_step_par(st, rng, ints, cfg, actions, lose, status, scr):
    """The learner's action in every env, then built-in opponents until the next learner or external decision."""
    n, chunks = actions.shape[0], scr.shape[0]
    for ch in prange(chunks):
        lo, hi = K.chunk_bounds(n, chunks, ch)
        _step_range(st, rng, ints, cfg, lo, hi, actions, lose, status, scr[ch])


@njit(cache=True)
def k_step_ser(st, rng, ints, cfg, actions, lose, status, scr):
    """Serial twin of :func:`k_step_par`."""
    _step_range(st, rng, ints, cfg, 0, actions.shape[0], actions, lose, status, scr[0])


@njit(cache=True, parallel=True)
def k_step_all_par(st, rng, ints, base, cfg, actions, lose, status, rew, dones, final, obs, masks, term_obs,
                   term_mask, scr):
    """A whole VecEnv step when every opponent is built in: act, opponents, rewards, auto-reset, observations."""
    n, chunks = actions.shape[0], scr.shape[0]
    for ch in prange(chunks):
        lo, hi = K.chunk_bounds(n, chunks, ch)
        _step_all_range(st, rng, ints, base, cfg, lo, hi, actions, lose, status, rew, dones, final, obs, masks,
                        term_obs, term_mask, scr[ch])


@njit(cache=True)
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
        lo, hi = K.chunk_bounds(n, chunks, ch)
        _finish_range(st, rng, ints, base, cfg, lo, hi, rew, dones, final, term_obs, term_mask, scr[ch])


@njit(cache=True)
def k_finish_ser(st, rng, ints, base, cfg, rew, dones, final, term_obs, term_mask, scr):
    """Serial twin of :func:`k_finish_par`."""
    _finish_range(st, rng, ints, base, cfg, 0, rew.shape[0], rew, dones, final, term_obs, term_mask, scr[0])


@njit(cache=True, parallel=True)
def k_observe_par(st, ints, cfg, obs, masks, scr):
    """The learner's observation and mask in every env."""
    n, chunks = obs.shape[0], scr.shape[0]
    for ch in prange(chunks):
        lo, hi = K.chunk_bounds(n, chunks, ch)
        _observe_range(st, ints, cfg, lo, hi, obs, masks, scr[ch])


@njit(cache=True)
def k_observe_ser(st, ints, cfg, obs, masks, scr):
    """Serial twin of :func:`k_observe_par`."""
    _observe_range(st, ints, cfg, 0, obs.shape[0], obs, masks, scr[0])


@njit(cache=True)
def k_waiting(st, cfg, out):
    """Per env, the relative seat whose external agent must act now, or −1."""
    kinds = cfg[C_SEAT_KINDS:C_SEAT_KINDS + cfg[C_P]]
    for i in range(out.shape[0]):
        r = to_act(st, cfg, i)
        out[i] = r if r >= 0 and kinds[r] == EXTERNAL else -1


@njit(cache=True)
def k_act_external(st, rng, ints, cfg, idx, actions, status, scr):
    """External agents' actions in envs ``idx`` (an illegal one changes nothing), then built-in opponents."""
    for k in range(idx.shape[0]):
        i = idx[k]
        status[k] = act_one(st, ints, cfg, i, actions[k], False, scr[0], -1)
        if status[k] != ILLEGAL:
            advance_one(st, rng, ints, cfg, i, scr[0])


@njit(cache=True)
def k_observe_seats(st, ints, cfg, idx, seats, obs, masks, scr):
    """Observations and masks of envs ``idx`` for the given absolute seats."""
    for k in range(idx.shape[0]):
        observe_one(st, ints, cfg, idx[k], seats[k], obs[k], masks[k], scr[0])


@njit(cache=True)
def k_pick_legal(masks, u, out):
    """Per row, the ⌊u·n⌋-th of the n legal actions of ``masks`` (uniform random legal actions for given uniforms)."""
    for i in range(masks.shape[0]):
        out[i] = pick_legal(masks[i], u[i])


@njit(cache=True)
def k_uniforms(rng, idx, out):
    """The next ``out.shape[1]`` uniforms of the streams of envs ``idx``."""
    for k in range(idx.shape[0]):
        for j in range(out.shape[1]):
            out[k, j] = rand_float(rng, idx[k])


@njit(cache=True)
def k_act(st, rng, ints, cfg, i, action, lose, scr):
    """One action of the seat to act in env ``i``, then the next deal of a match if this one ended."""
    status = act_one(st, ints, cfg, i, action, lose, scr[0], -1)
    rollover_one(st, rng, ints, cfg, i)
    return status


@njit(cache=True)
def k_aec_step(st, rng, ints, cfg, action, lose, vals, delta, obs, mask, info, scr):
    """AEC step of env 0: act, deal the next deal of a match, reward per seat, the next agent's observation.

    ``vals`` (n_sides,) holds the side values and is updated; ``delta`` (P,) receives each
    seat's reward (minus its side's value change); ``info`` (7,) receives status, the acting
    seat, pending card, deal number and round before the step, then the seat to act and the
    episode-over flag after it.
    """
    P = cfg[C_P]
    info[1], info[2] = st[0, K.TURN], _choice(st, cfg, 0)[0]
    info[3], info[4] = ints[0, I_DEAL_NO], st[0, K.ROUND]
    status = act_one(st, ints, cfg, 0, action, lose, scr[0], -1)
    info[0] = status
    if status == ILLEGAL and not lose:
        return
    rollover_one(st, rng, ints, cfg, 0)
    for k in range(vals.shape[0]):
        new = side_value(st, ints, cfg, 0, k)
        for s in range(P):
            if cfg[C_SIDE_OF + s] == k:
                delta[s] = vals[k] - new
        vals[k] = new
    info[5], info[6] = st[0, K.TURN], episode_over(st, cfg, 0)
    observe_one(st, ints, cfg, 0, st[0, K.TURN], obs, mask, scr[0])


@njit(cache=True)
def k_advance(st, rng, ints, cfg, i, scr):
    """Env ``i``: deal on through a match and play built-in opponents until the learner or an external seat acts."""
    advance_one(st, rng, ints, cfg, i, scr[0])


@njit(cache=True)
def k_observe(st, ints, cfg, i, observer, obs, mask, scr):
    """Observation and mask of env ``i`` for an absolute seat."""
    observe_one(st, ints, cfg, i, observer, obs, mask, scr[0])


@njit(cache=True)
def k_values(st, ints, cfg, i, out):
    """(n_sides,) values of env ``i``."""
    side_values_into(st, ints, cfg, i, out)


# --------------------------------------------------------------------------- the core object
class Core:
    """N environments of one configuration on one batched engine, with the extras the env shells need.

    ``seat`` is the learner's seat (an int, or ``"random"`` for a fresh one each episode);
    ``kinds[r]`` says who acts for the seat ``r`` places after the learner (LEARNER for r = 0,
    then EXTERNAL or RANDOM).  The engine's Python view (``self.deals``) works on the live
    state, so ``deals.scores()``, ``deals.legal_moves(i)`` etc. keep working.
    """

    def __init__(self, cfg: EnvConfig, n: int = 1, seat: int | str = 0, kinds: list[int] | None = None) -> None:
        rules = cfg.rules
        P = rules.players
        if seat == "random":
            random_seat, seat0 = True, 0
        elif isinstance(seat, (int, np.integer)) and not isinstance(seat, bool) and 0 <= seat < P:
            random_seat, seat0 = False, int(seat)
        else:
            raise ValueError(f"seat must be a seat 0..{P - 1} or 'random', got {seat!r}")
        self.config, self.rules, self.n, self.players = cfg, rules, int(n), P
        self.kinds = [LEARNER] + [EXTERNAL] * (P - 1) if kinds is None else [int(k) for k in kinds]
        if len(self.kinds) != P:
            raise ValueError(f"kinds must name who acts for each of the {P} seats")
        self.side_of = np.array([rules.team_of(s) for s in range(P)], np.int64)
        e0 = K.HANDS + 105 * P  # first column after the engine's
        width = (e0 + CHOICE_SIZE + LAST_MOVE + 2 + 63) // 64 * 64
        state = np.zeros((self.n, width), np.int8)
        state[:, K.DONE] = 1
        self.deals = Deals(rules, self.n, state=state)
        self.st = state
        self.cfg = self._pack(random_seat, e0)
        self.st[:, e0] = -1  # no pending card
        self.st[:, _col_over(self.cfg)] = 1
        self.st[:, _col_seat(self.cfg)] = seat0
        self.rng = np.zeros(self.n, np.uint64)
        self.ints = np.zeros((self.n, 1 + 2 * P), np.int64)
        self.base = np.zeros(self.n, np.float64)
        self.par = self.n >= K_PARALLEL_FROM
        chunks = min(self.n, 4 * numba.config.NUMBA_NUM_THREADS) if self.par else 1
        self.scr = np.stack([new_scratch() for _ in range(chunks)])
        self.dim = obs_size(P)
        dealt = P * rules.hand_size + rules.table_size
        self.low, self.high = bounds(P, max(rules.hand_size, 4), rules.rounds, dealt, cfg.deals)

    def _pack(self, random_seat: bool, e0: int) -> np.ndarray:
        rules, cfg, P = self.rules, self.config, self.players
        (ik, isz), (lk, lsz) = self.deals._initial, self.deals._later
        c = np.zeros(CFG_SIZE, np.int64)
        c[:12] = [self.n, P, self.deals._spades, cfg.deals, rules.last_capture_point, rules.n_teams,
                  cfg.reward == "relative", P - 1, random_seat, e0, len(ik), len(lk)]
        c[C_INIT_KINDS:C_INIT_KINDS + len(ik)], c[C_INIT_SIZES:C_INIT_SIZES + len(ik)] = ik, isz
        c[C_LATER_KINDS:C_LATER_KINDS + len(lk)], c[C_LATER_SIZES:C_LATER_SIZES + len(lk)] = lk, lsz
        c[C_SIDE_OF:C_SIDE_OF + P] = self.side_of
        c[C_SEAT_KINDS:C_SEAT_KINDS + P] = self.kinds
        return c

    # ------------------------------------------------------------------ views of the state
    @property
    def choice(self) -> np.ndarray:
        """(N, 53) capture-choice state per env: pending card (−1: none), then fixed counts."""
        e0 = self.cfg[C_E0]
        return self.st[:, e0:e0 + CHOICE_SIZE]

    @property
    def last(self) -> np.ndarray:
        """(N, 56) last move per env: seat, card, tabbes gained, K15 taker (−1), capture counts."""
        c = self.cfg[C_E0] + CHOICE_SIZE
        return self.st[:, c:c + LAST_MOVE]

    @property
    def seat(self) -> np.ndarray:
        """(N,) the learner's seat per env."""
        return self.st[:, self.cfg[C_E0] + CHOICE_SIZE + LAST_MOVE]

    @property
    def over(self) -> np.ndarray:
        """(N,) bool: the episode has ended."""
        return self.st[:, self.cfg[C_E0] + CHOICE_SIZE + LAST_MOVE + 1].view(np.bool_)

    @property
    def deal_no(self) -> np.ndarray:
        """(N,) index of the current deal within the match."""
        return self.ints[:, I_DEAL_NO]

    @property
    def totals(self) -> np.ndarray:
        """(N, P) scores of the match's finished deals per seat."""
        return self.ints[:, I_TOTALS:I_TOTALS + self.players]

    @property
    def penalty(self) -> np.ndarray:
        """(N, P) illegal-move penalties per seat (``illegal="lose"``)."""
        return self.ints[:, I_TOTALS + self.players:]

    # ------------------------------------------------------------------ operations
    def seed(self, seeds: list[int | None]) -> None:
        """Seed each env's random stream (None: fresh entropy)."""
        if len(seeds) != self.n:
            raise ValueError(f"need {self.n} seeds, got {len(seeds)}")
        self.rng[:] = [seed_state(s) for s in seeds]

    def reset(self, active: np.ndarray | None = None) -> None:
        """New episodes in the active envs (all by default), advanced to the first learner or external decision."""
        active = np.ones(self.n, np.bool_) if active is None else np.asarray(active, np.bool_)
        (k_reset_par if self.par else k_reset_ser)(self.st, self.rng, self.ints, self.base, self.cfg, active, self.scr)

    def load(self, deals: Deals, i: int = 0) -> None:
        """Put deal 0 of another Deals (e.g. ``Deals.position(...)``) into env ``i`` as a fresh episode state."""
        e0 = self.cfg[C_E0]
        self.st[i, :e0] = deals.state[0, :e0]
        self.choice[i, 0], self.choice[i, 1:] = -1, 0
        self.last[i], self.over[i], self.ints[i], self.base[i] = -1, False, 0, 0.0

    def act(self, i: int, action: int, lose: bool = False) -> int:
        """One action of the seat to act in env ``i`` (MOVED, CHOOSING or ILLEGAL), then the next deal of a match."""
        return int(k_act(self.st, self.rng, self.ints, self.cfg, i, int(action), lose, self.scr))

    def advance(self, i: int) -> None:
        """Play env ``i``'s built-in opponents until the learner or an external seat must act."""
        k_advance(self.st, self.rng, self.ints, self.cfg, i, self.scr)

    def observe(self, i: int, observer: int) -> tuple[np.ndarray, np.ndarray]:
        """(obs, mask) int8 of env ``i`` for an absolute seat."""
        obs = np.empty(self.dim, np.int8)
        mask = np.empty(N_ACTIONS, np.int8)
        k_observe(self.st, self.ints, self.cfg, i, observer, obs, mask, self.scr)
        return obs, mask

    def values(self, i: int = 0) -> np.ndarray:
        """(n_sides,) float64 values of env ``i``."""
        out = np.zeros(self.rules.n_teams, np.float64)
        k_values(self.st, self.ints, self.cfg, i, out)
        return out

    def uniforms(self, idx: np.ndarray, k: int = 1) -> np.ndarray:
        """(len(idx), k) uniforms drawn from the streams of envs ``idx`` (for external agents)."""
        idx = np.asarray(idx, np.int64)
        out = np.empty((idx.shape[0], k), np.float64)
        k_uniforms(self.rng, idx, out)
        return out

    def waiting(self) -> np.ndarray:
        """(N,) per env the relative seat (to the learner) whose external agent must act now, or −1."""
        out = np.empty(self.n, np.int64)
        k_waiting(self.st, self.cfg, out)
        return out

    def decisions(self, envs: np.ndarray, seats: np.ndarray) -> DecisionBatch:
        """A :class:`~krypenv.policy.DecisionBatch` for the given envs and absolute seats."""
        envs = np.asarray(envs, np.int64)
        seats = np.asarray(seats, np.int64)
        obs = np.empty((envs.shape[0], self.dim), np.int8)
        masks = np.empty((envs.shape[0], N_ACTIONS), np.int8)
        k_observe_seats(self.st, self.ints, self.cfg, envs, seats, obs, masks, self.scr)
        return DecisionBatch(obs, masks, seats, self, envs)

    def play_external(self, agents: dict[int, Agent]) -> None:
        """Let the external agents act (``agents[r]`` for the seat r places after the learner) until none must.

        Built-in opponents play in between.  An illegal action raises ValueError naming the
        agent, the game and the legal actions, and changes nothing.
        """
        if not agents:
            return
        order = sorted(agents)
        index = {r: k for k, r in enumerate(order)}
        rel = (np.arange(self.players)[None, :] - self.seat.astype(np.int64)[:, None]) % self.players
        seating = np.vectorize(lambda r: index.get(int(r), -1))(rel)
        self.play_seated(seating, [agents[r] for r in order])

    def play_seated(self, seating: np.ndarray, agents: list[Agent]) -> None:
        """Let external agents act until none must: ``seating[i, s]`` indexes ``agents`` for seat s of env i.

        Every round trip asks each agent once, for all the games where it is to act.  An
        illegal action raises ValueError naming the agent, the game and the legal actions.
        """
        status = np.empty(self.n, np.int64)
        while True:
            waiting = self.waiting()
            envs = np.flatnonzero(waiting >= 0)
            if envs.size == 0:
                return
            seats = (self.seat[envs].astype(np.int64) + waiting[envs]) % self.players
            who = seating[envs, seats]
            for a in np.unique(who):
                sel, sel_seats = envs[who == a], seats[who == a]
                agent = agents[int(a)]
                batch = self.decisions(sel, sel_seats)
                actions = check_actions(agent.name, batch, agent.act(batch))
                k_act_external(self.st, self.rng, self.ints, self.cfg, sel, actions, status[:sel.size], self.scr)

    def __getstate__(self) -> dict[str, Any]:
        return {k: v for k, v in self.__dict__.items() if k != "deals"}

    def __setstate__(self, d: dict[str, Any]) -> None:
        self.__dict__.update(d)
        self.deals = Deals(self.rules, self.n, state=self.st)

__all__ = [
    "Core", "EnvConfig", "ILLEGAL_PENALTY", "MOVED", "CHOOSING", "ILLEGAL", "LEARNER", "EXTERNAL", "RANDOM",
    "CONFIRM", "TAKE", "N_ACTIONS",
]  # fmt: skip
