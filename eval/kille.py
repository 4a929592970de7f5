"""Duplicate evaluation of Kungsholmskille agents: ``krypenv eval --game kungsholmskille``.

    krypenv eval --game kungsholmskille --agents expert,timid,random --players 4 --deals D
                 [--seed S] [--max-deals M] [--seatings rotations|permutations] [--workers W]
                 [--batch B] [--ray [ADDRESS]] [--out DIR] [--no-records] [--no-progress]

**The unit is an episode**: one pot carried over deals until it goes out (walkover L15 or
showdown L14: *finished*) or ``--max-deals`` deals were dealt (L16: *truncated*, the pot
belongs to nobody).  ``--deals D`` is the number of *deck sets*: deck set ``d`` is a seeded
stream of decks of its own, ``SeedSequence([seed, 0, d])``, from which deal ``k`` of the
episode takes the ``k``-th deck (the environment's Fisher–Yates over 41 uniforms).  Only the
dealing draws from that stream, so deal ``k``'s deck never depends on the agents.  Every
*table* (each seating of each lineup, exactly as Krypkasino's :mod:`krypenv.eval.schedule`: one lineup
when agents = seats, every combination when there are more, A,B,A,B when fewer; rotations by
default) plays every deck set from seat 0 on, dealer ``players - 1`` (L2), so two seatings of
one deck set differ only by the players' choices — as long as both tables' pots last, they
see the same cards from the same seats in turn.  The agents' uniforms
(``batch.uniforms``) come from a second stream per episode, ``SeedSequence([seed, 2, d, t])``.

**Statistics** per agent (mean over the seats it holds): money per episode with a 95%
Student-t interval over deck sets (the tables of a deck set are averaged first; higher is
better; every seat pays 2 before the first deal, L3), money per deal (all its money over all
the deals it sat at), deals per episode, the share of pots it won (per seat; a truncated pot is
won by nobody) and openskill Plackett–Luce ratings updated per episode (ranked by money);
head to head per pair that met, ``money(a) − money(b)`` paired by deck set.  Money of a
finished episode sums to zero over the seats; of a truncated one to minus the pot left.

**Output folder** (:mod:`krypenv.eval.kille_report`; default ``evals/kille-<agents>-<P>p-<D>d-s<seed>``, then
``-m<max deals>`` and ``-permutations`` when not the defaults): ``results.csv`` /
``results.json``, ``head_to_head.csv``, ``games.csv`` (one row per episode: deck set, table,
deals, how it ended, pot left, agent and money per seat), ``records.jsonl`` (every deal as an L18
record, episode by episode, deal by deal; ``krypenv replay`` checks them), ``money.png`` and
``run.json``.  Results do not depend on ``--workers``, ``--batch`` or ``--ray``.
"""

from __future__ import annotations

import json
import multiprocessing
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from krypenv.eval.play import cores
from krypenv.eval.schedule import AGENTS, DUPLICATE, SEATINGS, agent_labels, lineups, seatings, seed_int
from krypenv.eval.stats import Interval, agent_interval, pair_interval, ratings, unit_means

GAME = "kungsholmskille"
OUTPUTS = ("results.csv", "head_to_head.csv", "results.json", "games.csv", "records.jsonl", "money.png", "run.json")


@dataclass(frozen=True)
class KilleConfig:
    """What to evaluate; ValueError naming the field on bad values."""

    agents: tuple[str, ...]
    players: int = 4
    deals: int = 100  # deck sets; each is played at every table
    seed: int = 0
    max_deals: int = 50
    seatings: str = "rotations"
    workers: int = 1
    batch: int = 64
    records: bool = True
    ray: str | None = None

    def __post_init__(self) -> None:
        from krypenv.kungsholmskille.config import EnvConfig

        object.__setattr__(self, "agents", tuple(s.strip() for s in self.agents))
        if len(self.agents) < 2 or not all(self.agents):
            raise ValueError("give at least two agent specs (the same one twice for a mirror match), "
                             f"got {self.agents}")
        for name in ("deals", "workers", "batch"):
            value, least = getattr(self, name), 2 if name == "deals" else 1
            if isinstance(value, bool) or not isinstance(value, int) or value < least:
                raise ValueError(f"{name} must be an integer of at least {least}, got {value!r}")
        if isinstance(self.seed, bool) or not isinstance(self.seed, int) or self.seed < 0:
            raise ValueError(f"seed must be a non-negative integer, got {self.seed!r}")
        if self.seatings not in SEATINGS:
            raise ValueError(f"seatings must be one of {SEATINGS}, got {self.seatings!r}")
        EnvConfig(players=self.players, max_deals=self.max_deals)  # ValueError naming players or max_deals

    @property
    def labels(self) -> list[str]:
        """One name per agent: its spec, with ``#2`` … on repeated specs."""
        return agent_labels(self.agents)

    @property
    def tables(self) -> np.ndarray:
        """(T, P) agent index per seat of every table, lineup by lineup."""
        return np.array([s for lineup in lineups(len(self.agents), self.players)
                         for s in seatings(lineup, self.seatings)], np.int64)

    @property
    def n_episodes(self) -> int:
        """Deck sets × tables."""
        return self.deals * len(self.tables)

    def games_dict(self) -> dict[str, Any]:
        """The fields that define the games and so the results."""
        return {"game": GAME, "agents": list(self.agents), "players": self.players, "deals": self.deals,
                "seed": self.seed, "max_deals": self.max_deals, "seatings": self.seatings}


def load_agents(specs: list[str]) -> list[Any]:
    """Kungsholmskille agents from specs (ValueError naming a bad one)."""
    from krypenv import agents

    return [agents.load(spec, game=GAME) for spec in specs]


# --------------------------------------------------------------------------- playing
@dataclass
class KChunk:
    """Episodes to play: their indices, deck-set and agent seeds, agent index per seat."""

    episodes: np.ndarray
    deck_seeds: list[int]
    agent_seeds: list[int]
    seating: np.ndarray


@dataclass
class KPlayed:
    """Per episode: seat money, deals dealt, how it ended (1 pot out, 2 truncated), pot left, winning seat (−1)."""

    episodes: np.ndarray
    money: np.ndarray
    deals: np.ndarray
    over: np.ndarray
    pot_left: np.ndarray
    winner: np.ndarray
    first_decks: list[list[str]] = field(default_factory=list)  # deal 0's deck per episode (for tests)
    records: list[str] | None = None

    @staticmethod
    def concat(parts: list[KPlayed]) -> KPlayed:
        cat = lambda name: np.concatenate([getattr(p, name) for p in parts])
        return KPlayed(cat("episodes"), cat("money"), cat("deals"), cat("over"), cat("pot_left"), cat("winner"),
                       [d for p in parts for d in p.first_decks])


def _duplicate_core(cfg: Any, n: int) -> Any:
    """A :class:`KungsholmskilleBatch` whose ``rng`` only deals (the deck streams); agents draw from ``agent_rng``."""
    from krypenv.kungsholmskille.batch import KungsholmskilleBatch
    from krypenv.kungsholmskille.config import EXTERNAL
    from krypenv.rng import k_uniforms, seed_state

    class DuplicateCore(KungsholmskilleBatch):
        def seed_agents(self, seeds: list[int]) -> None:
            self.agent_rng = np.array([seed_state(s) for s in seeds], np.uint64)

        def uniforms(self, idx: np.ndarray, k: int = 1) -> np.ndarray:
            idx = np.asarray(idx, np.int64)
            out = np.empty((idx.shape[0], k), np.float64)
            k_uniforms(self.agent_rng, idx, out)
            return out

    return DuplicateCore(cfg, n, seat=0, kinds=[EXTERNAL] * cfg.players)


def play_chunk(chunk: KChunk, config: KilleConfig, agents: list[Any]) -> KPlayed:
    """Play a chunk of episodes to their end; every deal's record if ``config.records``."""
    from krypenv.agent_api import check_actions
    from krypenv.kungsholmskille.cards import deck_names
    from krypenv.kungsholmskille.config import POT_OUT, RUNNING, EnvConfig
    from krypenv.kungsholmskille.engine import DealBatch
    from krypenv.kungsholmskille.env_kernels import k_act_external
    from krypenv.kungsholmskille.records import record_from_deals

    n, P = len(chunk.episodes), config.players
    core = _duplicate_core(EnvConfig(players=P, max_deals=config.max_deals), n)
    core.seed(chunk.deck_seeds)
    core.seed_agents(chunk.agent_seeds)
    core.reset()
    first = [deck_names(core.deals.deck[i]) for i in range(n)]
    recs: list[list[str]] = [[] for _ in range(n)]
    prev = DealBatch(core.rules, 1)
    status = np.empty(n, np.int64)
    seating = chunk.seating
    while True:
        waiting = core.waiting()
        envs = np.flatnonzero(waiting >= 0)
        if envs.size == 0:
            break
        seats = (core.seat[envs].astype(np.int64) + waiting[envs]) % P
        who = seating[envs, seats]
        for a in np.unique(who):
            sel, sel_seats = envs[who == a], seats[who == a]
            agent = agents[int(a)]
            batch = core.decisions(sel, sel_seats)
            try:
                actions = check_actions(getattr(agent, "name", repr(agent)), batch, agent.act(batch))
            except ValueError:
                raise
            except Exception as exc:  # noqa: BLE001  (a broken agent: one line naming it)
                name = getattr(agent, "name", agent)
                raise ValueError(f"agent {name!r} failed: {type(exc).__name__}: {exc}") from None
            before = core.deal_no[sel].copy()
            k_act_external(*core._arrays(), sel, actions, status[:sel.size])
            if config.records:
                for i in sel[core.deal_no[sel] != before]:  # a budrunda ended: prev_state holds that deal
                    prev.state[0] = core.prev_state[i]
                    prev.cash[0] = core.prev_cash[i]
                    recs[i].append(json.dumps(record_from_deals(prev, 0)))
    over = core.over.copy()
    if (over == RUNNING).any():
        raise RuntimeError("episodes stopped before their end")
    winner = np.full(n, -1, np.int64)
    for i in np.flatnonzero(over == POT_OUT):
        winner[i] = core.deals.result(int(i))["winner"]
    if config.records:
        for i in range(n):
            recs[i].append(json.dumps(record_from_deals(core.deals, i)))
    return KPlayed(chunk.episodes.copy(), core.money.copy(), core.deal_no + 1, over, core.pot.copy(), winner, first,
                   [line for r in recs for line in r] if config.records else None)


def chunks(config: KilleConfig) -> Iterator[KChunk]:
    """The episodes in chunks of at most ``batch``: episode e = deck set e // T, table e % T."""
    tables = config.tables
    T = len(tables)
    for lo in range(0, config.n_episodes, config.batch):
        eps = np.arange(lo, min(lo + config.batch, config.n_episodes), dtype=np.int64)
        yield KChunk(eps, [seed_int(config.seed, DUPLICATE, int(e // T)) for e in eps],
                     [seed_int(config.seed, AGENTS, int(e // T), int(e % T)) for e in eps], tables[eps % T])


_WORKER: dict[str, Any] = {}


def _init_worker(config: KilleConfig, threads: int) -> None:
    import numba

    numba.set_num_threads(min(threads, numba.config.NUMBA_NUM_THREADS))
    _WORKER.update(config=config, agents=load_agents(list(config.agents)))
    if "torch" in sys.modules:
        sys.modules["torch"].set_num_threads(threads)


def _work(chunk: KChunk) -> KPlayed:
    return play_chunk(chunk, _WORKER["config"], _WORKER["agents"])


def play(config: KilleConfig, agents: list[Any], done: Callable[[KPlayed], None] | None = None) -> KPlayed:
    """Every episode of the configuration, in order, over workers or Ray as configured."""
    todo = chunks(config)
    workers = min(config.workers, -(-config.n_episodes // config.batch))
    pool: Any = None
    if config.ray is not None:
        from krypenv.eval.ray_pool import RayPool

        pool = RayPool(config.ray, _init_worker, (config, 1))
        results: Iterator[KPlayed] = pool.imap(_work, todo)
    elif workers <= 1:
        results = (play_chunk(c, config, agents) for c in todo)
    else:
        pool = multiprocessing.get_context("spawn").Pool(workers, _init_worker,
                                                         (config, max(1, cores() // workers)))
        results = pool.imap(_work, todo)
    parts = []
    try:
        for part in results:
            if done is not None:
                done(part)
            part.records = None
            parts.append(part)
    finally:
        if pool is not None:
            pool.terminate()
            pool.join()
    return KPlayed.concat(parts)


# --------------------------------------------------------------------------- statistics
@dataclass
class KAgentRow:
    agent: str
    episodes: int
    money: Interval
    per_deal: float
    deals: float
    pots_won: float
    rating_mu: float
    rating_sigma: float

    def to_dict(self) -> dict[str, Any]:
        m = self.money
        return {"agent": self.agent, "episodes": self.episodes, "deck_sets": m.n, "money_per_episode": m.mean,
                "se": m.se, "ci_low": m.low, "ci_high": m.high, "money_per_deal": self.per_deal,
                "deals_per_episode": self.deals, "pots_won": self.pots_won, "rating_mu": self.rating_mu,
                "rating_sigma": self.rating_sigma}


@dataclass
class KPairRow:
    a: str
    b: str
    episodes: int
    diff: Interval

    def to_dict(self) -> dict[str, Any]:
        d = self.diff
        return {"a": self.a, "b": self.b, "episodes": self.episodes, "deck_sets": d.n, "diff": d.mean, "se": d.se,
                "ci_low": d.low, "ci_high": d.high, "significant": bool(d.low > 0 or d.high < 0)}


@dataclass
class KResults:
    config: KilleConfig
    rows: list[KAgentRow]
    pairs: list[KPairRow]
    played: KPlayed
    finished: float  # share of episodes whose pot went out

    def to_dict(self) -> dict[str, Any]:
        c = self.config
        return {"config": c.games_dict(),
                "schedule": {"tables": [[c.labels[a] for a in t] for t in c.tables.tolist()], "deck_sets": c.deals,
                             "episodes": c.n_episodes, "deals": int(self.played.deals.sum()),
                             "finished": self.finished},
                "agents": [r.to_dict() for r in self.rows], "head_to_head": [p.to_dict() for p in self.pairs]}


def summarise(config: KilleConfig, played: KPlayed) -> KResults:
    """The statistics of played episodes (see the module docstring)."""
    labels, n, tables = config.labels, len(config.agents), config.tables
    T = len(tables)
    seating = tables[played.episodes % T]
    units = played.episodes // T
    money = played.money.astype(np.float64)
    won = (np.arange(config.players)[None, :] == played.winner[:, None]).astype(np.float64)
    E = len(played.episodes)
    per_ep = np.full((E, n), np.nan)
    won_ep = np.full((E, n), np.nan)
    for a in range(n):
        held = seating == a
        count = held.sum(axis=1)
        rows = count > 0
        per_ep[rows, a] = (money * held).sum(axis=1)[rows] / count[rows]
        won_ep[rows, a] = (won * held).sum(axis=1)[rows] / count[rows]
    won_unit = unit_means(won_ep, units, config.deals)
    rates = ratings(-per_ep)
    out = []
    for a in range(n):
        at = ~np.isnan(per_ep[:, a])
        out.append(KAgentRow(labels[a], int(at.sum()), agent_interval(per_ep, units, config.deals, a),
                             float(per_ep[at, a].sum() / played.deals[at].sum()),
                             float(played.deals[at].mean()), float(np.nanmean(won_unit[:, a])),
                             rates[a].mu, rates[a].sigma))
    pairs = []
    for a in range(n):
        for b in range(a + 1, n):
            diff = pair_interval(per_ep, units, config.deals, a, b)
            if diff is not None:
                met = int((~np.isnan(per_ep[:, a] - per_ep[:, b])).sum())
                pairs.append(KPairRow(labels[a], labels[b], met, diff))
    from krypenv.kungsholmskille.config import POT_OUT

    return KResults(config, out, pairs, played, float((played.over == POT_OUT).mean()))


def evaluate(config: KilleConfig, agents: list[Any] | None = None,
             progress: Callable[[int], None] | None = None,
             on_chunk: Callable[[KPlayed], None] | None = None) -> KResults:
    """Play the configuration's episodes and compute the results."""
    objs = load_agents(list(config.agents)) if agents is None else agents

    def done(part: KPlayed) -> None:
        if on_chunk is not None:
            on_chunk(part)
        if progress is not None:
            progress(len(part.episodes))

    return summarise(config, play(config, objs, done))
