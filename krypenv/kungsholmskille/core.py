"""The shared core of the Kungsholmskille environments: configuration, episode state, compiled drivers.

:class:`EnvConfig` validates the keywords every interface takes.  :class:`Core` holds N
environments on one :class:`~krypenv.kungsholmskille.engine.Deals` batch (N = 1 runs the same
code as 4096) plus, per environment, an episode record (``ep``, int64), a splitmix64 random
stream (``rng``) and a copy of the last deal that ended in a budrunda (``prev_state``,
``prev_cash``; for rendering and inspection).  The AEC env is ``Core(cfg, 1)`` with every
seat external; the Gymnasium env and the VecEnv are ``Core(cfg, N)`` with a learner seat and
opponents that are built in (compiled uniform random) or external (Python agents).

**Episodes.** An episode is one pot (L3, L16): every seat pays 2 into it before the first
deal; deal follows deal, the dealer passing left (L2: deal k is dealt by
``first_dealer + k``), each budrunda's antes (L12) going into the same pot, until the pot
goes out by a walkover (L15) or a showdown (L14) — *terminated*; the antes for the next pot
(``antes_next``) are then not paid.  An episode whose ``max_deals``-th deal ends in a
budrunda is *truncated* (L16): the pot belongs to nobody, and the antes for a deal that is
never dealt are not paid.

**Money and rewards.** ``ep[i, E_MONEY + s]`` is seat s's net money in the episode so far:
−2 from the start (L3), minus the budrunda antes it paid, plus the pot and penalty it won,
minus a penalty it paid (L14).  Every reward is the change of the receiving seat's money since
the last time it was rewarded, and the −2 ante reaches every seat with the first step (an AEC
env's rewards after ``reset`` must be zero); so a seat's return is exactly its net money, and
the returns of an episode whose pot went out sum to 0 (L18's bookkeeping: the pot is
everybody's antes).

**Randomness.** Each env owns a splitmix64 stream seeded from ``numpy.random.SeedSequence(seed)``.
Decks (the engine's Fisher–Yates over 41 uniforms, :func:`~krypenv.kungsholmskille.cards.shuffle_into`),
a random learner seat (drawn before the first deck) and the built-in random opponents' choices
(⌊u·n⌋-th of the n legal actions, one uniform per decision) all come from it, so the same seed
gives the same episode in every interface and batch size.

**skip_forced.** With ``skip_forced=True`` a decision with a single legal move (L10: a forced
play, always so in the fourth trick) is made by the core for whoever is to act, without asking
and without drawing a uniform; the move is still in the deal's record (L17).  Default False:
every decision is asked, as L17 records it, so an env step is one record move and the three
interfaces and ``krypenv replay`` see the same sequence.

**Illegal moves** (``illegal="lose"``): the episode ends at once (terminated) and the offender
pays ``ILLEGAL_FINE`` = 20 to every other seat; the pot stays in the middle and belongs to nobody
(as at truncation).  ``illegal="raise"`` is handled by the env shells before anything moves.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

import numba
import numpy as np
from numba import njit, prange

from krypenv.kungsholmskille import kernels as K
from krypenv.kungsholmskille.actions import MAX_LEGAL, N_ACTIONS
from krypenv.kungsholmskille.cards import DECK_SIZE, shuffle_into
from krypenv.kungsholmskille.drivers import chunk_bounds
from krypenv.kungsholmskille.engine import Deals
from krypenv.kungsholmskille.observation import OBS_DTYPE, bounds, encode_into, mask_into, obs_size
from krypenv.kungsholmskille.rules import Rules

ILLEGAL_MODES = ("raise", "lose")
RENDER_MODES = ("ansi", "human")
MAX_DEALS = 1000  # keeps every money value inside int16 (see observation.py)
ILLEGAL_FINE = 20  # kronor the offender pays every other seat with illegal="lose"
K_PARALLEL_FROM = 64  # batches at least this large use the parallel drivers
LEARNER, EXTERNAL, RANDOM = 0, 1, 2  # who acts for a seat: the learner, a Python agent, the built-in random policy
MOVED, ILLEGAL = 0, 1  # act statuses
RUNNING, POT_OUT, TRUNCATED, FORFEIT = 0, 1, 2, 3  # episode state E_OVER: POT_OUT and FORFEIT are terminations
BUF = MAX_LEGAL + 5  # scratch length for legal_list

# cfg vector (int64)
C_P, C_MAX_DEALS, C_FIRST_DEALER, C_SKIP, C_RANDOM_SEAT = range(5)
C_KINDS = 8  # who acts for relative seat r (to the learner): C_KINDS + r
CFG_SIZE = C_KINDS + K.MAXP
# ep (N, EP_WIDTH) int64: the episode record of each env
E_DEAL, E_OVER, E_SEAT, E_BASE, E_OFFENDER = range(5)  # deal number, over code, learner seat,
E_MONEY = 8  # learner's money at its previous decision, illegal offender (−1); money per seat at E_MONEY + s
EP_WIDTH = E_MONEY + K.MAXP


@dataclass(frozen=True)
class EnvConfig:
    """The keywords shared by all three interfaces; ValueError naming the field on bad values."""

    players: int = 4
    first_dealer: int | None = None
    max_deals: int = 50
    skip_forced: bool = False
    illegal: str = "raise"
    render_mode: str | None = None

    def __post_init__(self) -> None:
        Rules(self.players)  # ValueError naming players (L2)
        fd = self.first_dealer
        if fd is not None and (isinstance(fd, bool) or not isinstance(fd, (int, np.integer))
                               or not 0 <= fd < self.players):
            raise ValueError(f"first_dealer must be None (seat players-1, L2) or a seat 0..{self.players - 1}, "
                             f"got {fd!r}")
        md = self.max_deals
        if isinstance(md, bool) or not isinstance(md, (int, np.integer)) or not 1 <= md <= MAX_DEALS:
            raise ValueError(f"max_deals must be an integer from 1 to {MAX_DEALS} (L16), got {md!r}")
        if not isinstance(self.skip_forced, (bool, np.bool_)):
            raise ValueError(f"skip_forced must be True or False, got {self.skip_forced!r}")
        if self.illegal not in ILLEGAL_MODES:
            raise ValueError(f"illegal must be one of {ILLEGAL_MODES}, got {self.illegal!r}")
        if self.render_mode is not None and self.render_mode not in RENDER_MODES:
            raise ValueError(f"render_mode must be None or one of {RENDER_MODES}, got {self.render_mode!r}")

    @property
    def rules(self) -> Rules:
        """The rules (L2: the player count)."""
        return Rules(self.players)

    @property
    def dealer0(self) -> int:
        """The first dealer: ``first_dealer``, or seat P−1 by default (L2)."""
        return self.players - 1 if self.first_dealer is None else int(self.first_dealer)

    def to_dict(self) -> dict[str, Any]:
        """All keywords as a plain dict."""
        return asdict(self)


def seed_state(seed: int | None) -> np.uint64:
    """A splitmix64 state from a seed (fresh OS entropy for None)."""
    return np.random.SeedSequence(seed).generate_state(1, np.uint64)[0]


# --------------------------------------------------------------------------- one env
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
def deal_one(st, cash, ep, rng, cfg, i, pot):
    """Deal env ``i``'s deal number ``ep[i, E_DEAL]`` (L4) with a fresh deck from its stream and the given pot."""
    P = cfg[C_P]
    u = np.empty(DECK_SIZE - 1, np.float64)
    for k in range(DECK_SIZE - 1):
        u[k] = rand_float(rng, i)
    deck = np.empty(DECK_SIZE, np.int8)
    shuffle_into(u, deck)
    dealer = (cfg[C_FIRST_DEALER] + ep[i, E_DEAL]) % P  # L2: the deal passes to the left after every deal
    K.reset_row(st[i], cash[i], P, deck, dealer, pot)


@njit(cache=True)
def reset_one(st, cash, ep, rng, cfg, i):
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
    deal_one(st, cash, ep, rng, cfg, i, 2 * P)


@njit(cache=True)
def rollover_one(st, cash, ep, rng, cfg, i, prev_st, prev_cash):
    """Settle env ``i``'s finished deal and deal the next one; True when the episode is over.

    A budrunda (L12): its antes are paid and the next deal is dealt into the same pot, unless
    that was deal ``max_deals`` (truncation, L16).  A walkover or showdown (L14, L15): the
    deal's money moves and the episode is terminated; ``antes_next`` are not paid.
    """
    if ep[i, E_OVER] != RUNNING:
        return True
    if not st[i, K.DONE]:
        return False
    P = cfg[C_P]
    if st[i, K.OUTCOME] != K.BUDRUNDA:
        for s in range(P):
            ep[i, E_MONEY + s] += cash[i, K.MONEY + s]
        ep[i, E_OVER] = POT_OUT
        return True
    if ep[i, E_DEAL] + 1 >= cfg[C_MAX_DEALS]:
        ep[i, E_OVER] = TRUNCATED
        return True
    for s in range(P):
        ep[i, E_MONEY + s] -= cash[i, K.ANTES + s]
    prev_st[i, :] = st[i, :]
    prev_cash[i, :] = cash[i, :]
    ep[i, E_DEAL] += 1
    deal_one(st, cash, ep, rng, cfg, i, cash[i, K.POT_NEXT])
    return False


@njit(cache=True)
def act_one(st, cash, ep, cfg, i, a, lose):
    """Make action ``a`` for the seat to act in env ``i``: MOVED, or ILLEGAL (nothing changes unless ``lose``)."""
    row = st[i]
    if ep[i, E_OVER] != RUNNING or row[K.DONE]:
        return ILLEGAL
    if K.check(row, a) != K.OK:
        if lose:  # the offender pays every other seat; the pot belongs to nobody
            P = cfg[C_P]
            off = row[K.TO_ACT]
            for s in range(P):
                if s != off:
                    ep[i, E_MONEY + s] += ILLEGAL_FINE
                    ep[i, E_MONEY + off] -= ILLEGAL_FINE
            ep[i, E_OFFENDER] = off
            ep[i, E_OVER] = FORFEIT
        return ILLEGAL
    K.apply(row, cash[i], cfg[C_P], a)
    return MOVED


@njit(cache=True)
def to_act_rel(st, ep, cfg, i):
    """The seat to act in env ``i`` relative to the learner, or −1 once the episode is over."""
    if ep[i, E_OVER] != RUNNING or st[i, K.DONE]:
        return -1
    return (st[i, K.TO_ACT] - ep[i, E_SEAT]) % cfg[C_P]


@njit(cache=True)
def advance_one(st, cash, ep, rng, cfg, i, prev_st, prev_cash, buf):
    """Deal on (L12) and make forced moves (``skip_forced``) and built-in opponents' moves until the
    learner or an external seat must decide, or the episode is over."""
    P = cfg[C_P]
    while not rollover_one(st, cash, ep, rng, cfg, i, prev_st, prev_cash):
        row = st[i]
        if cfg[C_SKIP] and K.legal_list(row, buf) == 1:
            K.apply(row, cash[i], P, buf[0])
            continue
        if cfg[C_KINDS + to_act_rel(st, ep, cfg, i)] != RANDOM:
            return
        K.play_random_row(row, cash[i], P, rand_float(rng, i), buf)


@njit(cache=True)
def observe_one(st, cash, ep, cfg, i, observer, obs, mask, buf):
    """``observer``'s observation and mask (zeros unless it is to act) in env ``i``."""
    ended = ep[i, E_OVER] != RUNNING
    deals_left = cfg[C_MAX_DEALS] - 1 - ep[i, E_DEAL]
    encode_into(st[i], cash[i], ep[i, E_MONEY:E_MONEY + cfg[C_P]], ep[i, E_DEAL], deals_left, ended, cfg[C_P],
                observer, obs)
    mask_into(st[i], observer, ended, mask, buf)


@njit(cache=True)
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
        reset_one(st, cash, ep, rng, cfg, i)
        advance_one(st, cash, ep, rng, cfg, i, prev_st, prev_cash, buf)


# --------------------------------------------------------------------------- batch bodies
@njit(cache=True)
def _reset_range(st, cash, ep, rng, cfg, prev_st, prev_cash, lo, hi, active):
    buf = np.empty(BUF, np.int64)
    for i in range(lo, hi):
        if active[i]:
            reset_one(st, cash, ep, rng, cfg, i)
            advance_one(st, cash, ep, rng, cfg, i, prev_st, prev_cash, buf)


@njit(cache=True)
def _step_range(st, cash, ep, rng, cfg, prev_st, prev_cash, lo, hi, actions, lose, status):
    buf = np.empty(BUF, np.int64)
    for i in range(lo, hi):
        status[i] = act_one(st, cash, ep, cfg, i, actions[i], lose)
        advance_one(st, cash, ep, rng, cfg, i, prev_st, prev_cash, buf)


@njit(cache=True)
def _finish_range(st, cash, ep, rng, cfg, prev_st, prev_cash, lo, hi, rew, over, final, term_obs, term_mask):
    buf = np.empty(BUF, np.int64)
    for i in range(lo, hi):
        finish_one(st, cash, ep, rng, cfg, i, prev_st, prev_cash, rew, over, final, term_obs, term_mask, buf)


@njit(cache=True)
def _step_all_range(st, cash, ep, rng, cfg, prev_st, prev_cash, lo, hi, actions, lose, status, rew, over, final,
                    obs, masks, term_obs, term_mask):
    buf = np.empty(BUF, np.int64)
    for i in range(lo, hi):
        status[i] = act_one(st, cash, ep, cfg, i, actions[i], lose)
        advance_one(st, cash, ep, rng, cfg, i, prev_st, prev_cash, buf)
        finish_one(st, cash, ep, rng, cfg, i, prev_st, prev_cash, rew, over, final, term_obs, term_mask, buf)
        observe_one(st, cash, ep, cfg, i, ep[i, E_SEAT], obs[i], masks[i], buf)


@njit(cache=True)
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


@njit(cache=True)
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


@njit(cache=True)
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


@njit(cache=True)
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


@njit(cache=True)
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


@njit(cache=True)
def k_observe_ser(st, cash, ep, cfg, obs, masks, chunks):
    """Serial twin of :func:`k_observe_par`."""
    _observe_range(st, cash, ep, cfg, 0, st.shape[0], obs, masks)


@njit(cache=True)
def k_waiting(st, ep, cfg, out):
    """Per env, the relative seat whose external agent must act now, or −1."""
    for i in range(out.shape[0]):
        r = to_act_rel(st, ep, cfg, i)
        out[i] = r if r >= 0 and cfg[C_KINDS + r] == EXTERNAL else -1


@njit(cache=True)
def k_act_external(st, cash, ep, rng, cfg, prev_st, prev_cash, idx, actions, status):
    """External agents' actions in envs ``idx`` (an illegal one changes nothing), then built-in opponents."""
    buf = np.empty(BUF, np.int64)
    for k in range(idx.shape[0]):
        i = idx[k]
        status[k] = act_one(st, cash, ep, cfg, i, actions[k], False)
        if status[k] != ILLEGAL:
            advance_one(st, cash, ep, rng, cfg, i, prev_st, prev_cash, buf)


@njit(cache=True)
def k_observe_seats(st, cash, ep, cfg, idx, seats, obs, masks):
    """Observations and masks of envs ``idx`` for the given absolute seats."""
    buf = np.empty(BUF, np.int64)
    for k in range(idx.shape[0]):
        observe_one(st, cash, ep, cfg, idx[k], seats[k], obs[k], masks[k], buf)


@njit(cache=True)
def k_aec_step(st, cash, ep, rng, cfg, prev_st, prev_cash, action, lose, base, delta):
    """AEC step of env 0: act, deal on / forced moves, each seat's reward (money change since ``base``,
    which is updated).  Returns the act status; an illegal action without ``lose`` changes nothing."""
    status = act_one(st, cash, ep, cfg, 0, action, lose)
    if status == ILLEGAL and not lose:
        return status
    buf = np.empty(BUF, np.int64)
    advance_one(st, cash, ep, rng, cfg, 0, prev_st, prev_cash, buf)
    for s in range(cfg[C_P]):
        m = ep[0, E_MONEY + s]
        delta[s] = m - base[s]
        base[s] = m
    return status


# --------------------------------------------------------------------------- the core object
class Core:
    """N environments of one configuration on one batched engine (see the module docstring).

    ``seat`` is the learner's seat (an int, or ``"random"`` for a fresh one each episode);
    ``kinds[r]`` says who acts for the seat ``r`` places after the learner (LEARNER for r = 0,
    then EXTERNAL or RANDOM).  ``deals`` is the engine's Python view of the live state.
    """

    def __init__(self, cfg: EnvConfig, n: int = 1, seat: int | str = 0, kinds: list[int] | None = None) -> None:
        """N environments of ``cfg``; every episode is over until :meth:`reset`."""
        P = cfg.players
        if isinstance(seat, str) and seat == "random":
            random_seat, seat0 = True, 0
        elif isinstance(seat, (int, np.integer)) and not isinstance(seat, bool) and 0 <= seat < P:
            random_seat, seat0 = False, int(seat)
        else:
            raise ValueError(f"seat must be a seat 0..{P - 1} or 'random', got {seat!r}")
        self.kinds = [LEARNER] + [EXTERNAL] * (P - 1) if kinds is None else [int(k) for k in kinds]
        if len(self.kinds) != P:
            raise ValueError(f"kinds must name who acts for each of the {P} seats")
        self.config, self.rules, self.players, self.n = cfg, cfg.rules, P, int(n)
        self.deals = Deals(self.rules, self.n)
        self.st, self.cash = self.deals.state, self.deals.cash
        self.prev_state, self.prev_cash = np.zeros_like(self.st), np.zeros_like(self.cash)
        self.ep = np.zeros((self.n, EP_WIDTH), np.int64)
        self.ep[:, E_OVER] = TRUNCATED  # nothing runs before reset
        self.ep[:, E_SEAT] = seat0
        self.ep[:, E_OFFENDER] = -1
        self.rng = np.zeros(self.n, np.uint64)
        c = np.zeros(CFG_SIZE, np.int64)
        c[C_P], c[C_MAX_DEALS], c[C_FIRST_DEALER] = P, cfg.max_deals, cfg.dealer0
        c[C_SKIP], c[C_RANDOM_SEAT] = bool(cfg.skip_forced), random_seat
        c[C_KINDS:C_KINDS + P] = self.kinds
        self.cfg = c
        self.par = self.n >= K_PARALLEL_FROM
        self.chunks = min(self.n, 4 * numba.config.NUMBA_NUM_THREADS) if self.par else 1
        self.dim = obs_size(P)
        self.low, self.high = bounds(P, cfg.max_deals)

    # ------------------------------------------------------------------ views
    @property
    def money(self) -> np.ndarray:
        """(N, P) each seat's net money in the current episode (a view)."""
        return self.ep[:, E_MONEY:E_MONEY + self.players]

    @property
    def seat(self) -> np.ndarray:
        """(N,) the learner's seat per env (a view)."""
        return self.ep[:, E_SEAT]

    @property
    def deal_no(self) -> np.ndarray:
        """(N,) the current deal's number within the episode (a view)."""
        return self.ep[:, E_DEAL]

    @property
    def over(self) -> np.ndarray:
        """(N,) episode state: RUNNING, POT_OUT, TRUNCATED or FORFEIT (a view)."""
        return self.ep[:, E_OVER]

    @property
    def pot(self) -> np.ndarray:
        """(N,) the pot now: the current deal's pot, 0 once it went out."""
        out = self.cash[:, K.POT].astype(np.int64)
        out[(self.over == POT_OUT)] = 0
        return out

    # ------------------------------------------------------------------ operations
    def seed(self, seeds: list[int | None]) -> None:
        """Seed each env's random stream (None: fresh entropy)."""
        if len(seeds) != self.n:
            raise ValueError(f"need {self.n} seeds, got {len(seeds)}")
        self.rng[:] = [seed_state(s) for s in seeds]

    def _args(self) -> tuple[np.ndarray, ...]:
        return self.st, self.cash, self.ep, self.rng, self.cfg, self.prev_state, self.prev_cash

    def reset(self, active: np.ndarray | None = None) -> None:
        """New episodes in the active envs (all by default), advanced to the first learner or external decision."""
        active = np.ones(self.n, np.bool_) if active is None else np.asarray(active, np.bool_)
        (k_reset_par if self.par else k_reset_ser)(*self._args(), active, self.chunks)

    def observe(self, i: int, observer: int) -> tuple[np.ndarray, np.ndarray]:
        """(obs int16, mask int8) of env ``i`` for an absolute seat."""
        obs = np.empty((1, self.dim), OBS_DTYPE)
        mask = np.empty((1, N_ACTIONS), np.int8)
        k_observe_seats(self.st, self.cash, self.ep, self.cfg, np.array([i], np.int64),
                        np.array([observer], np.int64), obs, mask)
        return obs[0], mask[0]

    def waiting(self) -> np.ndarray:
        """(N,) per env the relative seat (to the learner) whose external agent must act now, or −1."""
        out = np.empty(self.n, np.int64)
        k_waiting(self.st, self.ep, self.cfg, out)
        return out

    def __getstate__(self) -> dict[str, Any]:
        return {k: v for k, v in self.__dict__.items() if k not in ("st", "cash")}

    def __setstate__(self, d: dict[str, Any]) -> None:
        self.__dict__.update(d)
        self.st, self.cash = self.deals.state, self.deals.cash


__all__ = [
    "Core", "EnvConfig", "ILLEGAL_FINE", "MAX_DEALS", "LEARNER", "EXTERNAL", "RANDOM", "MOVED", "ILLEGAL",
    "RUNNING", "POT_OUT", "TRUNCATED", "FORFEIT", "seed_state",
]  # fmt: skip
