"""The duplicate schedule: which agents sit where, which deck each game gets, and its seeds.

An evaluation plays every deck (``deals`` of them) at every *table* of the schedule.  A table
is one seating of one lineup; the agents fill *positions*, which are the seats, or the teams
when playing with teams (an agent then plays every seat of its team, K18):

- as many agents as positions: one lineup, the agents in the order given;
- more agents than positions: every combination of that many distinct agents (for two
  players every pair), in ``itertools.combinations`` order;
- fewer agents than positions: one lineup that repeats the agents around the table
  (A, B, A, B for two agents at four seats; A, B, A for three seats).

Each lineup is seated in every distinct rotation (``seatings="rotations"``, the default:
every agent plays every position against the same cards) or in every distinct order
(``"permutations"``: also every order of neighbours, which matters from three positions on
because a seat's tabbes cost its right-hand neighbour, K14).  Rotations that repeat a
seating (A, B, A, B turned by two) are played once.

Seeds: the deck of duplicate deck ``d`` comes from ``SeedSequence([seed, 0, d])`` and the
agents' uniforms in game (deck ``d``, table ``t``) from ``SeedSequence([seed, 2, d, t])``, so
every table gets the same deck, and each game is reproducible on its own, however games are
batched or spread over processes.  Independent deals (the variance comparison) take the
deck of game ``g`` from ``SeedSequence([seed, 1, g])`` instead.
"""

from __future__ import annotations

import itertools
import re
from dataclasses import dataclass
from pathlib import Path

import numpy as np

SEATINGS = ("rotations", "permutations")
DUPLICATE, INDEPENDENT, AGENTS = 0, 1, 2  # first words of the seed entropy: deck streams, agent streams


def lineups(n_agents: int, positions: int) -> list[tuple[int, ...]]:
    """The lineups (agent indices per position) for ``n_agents`` agents at ``positions`` positions."""
    if n_agents < 1 or positions < 1:
        raise ValueError(f"need at least one agent and one position, got {n_agents} and {positions}")
    if n_agents >= positions:
        return list(itertools.combinations(range(n_agents), positions))
    return [tuple(k % n_agents for k in range(positions))]


def seatings(lineup: tuple[int, ...], mode: str = "rotations") -> list[tuple[int, ...]]:
    """The distinct seatings of a lineup: its rotations (position k gets ``lineup[(k - r) % n]``) or its orders."""
    n = len(lineup)
    if mode == "rotations":
        orders = [tuple(lineup[(k - r) % n] for k in range(n)) for r in range(n)]
    elif mode == "permutations":
        orders = list(itertools.permutations(lineup))
    else:
        raise ValueError(f"seatings must be one of {SEATINGS}, got {mode!r}")
    return list(dict.fromkeys(orders))


def agent_labels(specs: tuple[str, ...] | list[str]) -> list[str]:
    """One name per agent: its spec, with ``#2``, ``#3`` … on repeated specs (a mirror match)."""
    seen: dict[str, int] = {}
    out = []
    for spec in specs:
        seen[spec] = seen.get(spec, 0) + 1
        out.append(spec if seen[spec] == 1 else f"{spec}#{seen[spec]}")
    return out


@dataclass(frozen=True)
class EvalSettings:
    """The fields every game's evaluation configuration has; ValueError naming the field when the agent specs (at
    least two), ``deals`` (at least 2), ``workers``, ``batch`` (at least 1), ``seed`` (non-negative) or
    ``seatings`` (one of :data:`SEATINGS`) are bad.  Each game's ``EvalConfig`` gives ``players`` and ``batch``
    their defaults and adds its own fields."""

    agents: tuple[str, ...]  # the agent specs, stripped
    players: int
    batch: int  # games per chunk
    deals: int = 100  # duplicate decks (deck sets); each is played at every table
    seed: int = 0
    seatings: str = "rotations"
    workers: int = 1
    records: bool = True
    ray: str | None = None  # Ray cluster address ('' for RAY_ADDRESS or a local Ray); None: local processes

    def __post_init__(self) -> None:
        agents = tuple(s.strip() for s in self.agents)
        if len(agents) < 2 or not all(agents):
            raise ValueError(f"give at least two agent specs (the same one twice for a mirror match), got {agents}")
        for name in ("deals", "workers", "batch"):
            value, least = getattr(self, name), 2 if name == "deals" else 1
            if isinstance(value, bool) or not isinstance(value, int) or value < least:
                raise ValueError(f"{name} must be an integer of at least {least}, got {value!r}")
        if isinstance(self.seed, bool) or not isinstance(self.seed, int) or self.seed < 0:
            raise ValueError(f"seed must be a non-negative integer, got {self.seed!r}")
        if self.seatings not in SEATINGS:
            raise ValueError(f"seatings must be one of {SEATINGS}, got {self.seatings!r}")
        object.__setattr__(self, "agents", agents)

    @property
    def labels(self) -> list[str]:
        """One name per agent: its spec, with ``#2``, ``#3`` … on repeated specs."""
        return agent_labels(self.agents)


def out_folder(labels: list[str] | tuple[str, ...], tags: list[str], prefix: str = "") -> Path:
    """``evals/<prefix><labels joined by _>-<tag>-<tag>…``: the default output folder of every game.

    At most 120 characters; the agents part is the one cut (to no fewer than 20), so the tags
    that tell configurations apart always survive."""
    tail = "".join(f"-{t}" for t in tags)
    agents = re.sub(r"[^A-Za-z0-9_.=#+-]+", "-", prefix + "_".join(labels))
    return Path("evals") / (agents[: max(20, 120 - len(tail))] + tail)


def seed_int(*words: int) -> int:
    """A 128-bit seed for :meth:`krypenv.envs.batch.EnvBatch.seed` from the entropy words (numpy SeedSequence)."""
    lo, hi = np.random.SeedSequence(list(words)).generate_state(2, np.uint64)
    return int(lo) | int(hi) << 64


@dataclass(frozen=True)
class Schedule:
    """All games of an evaluation: ``decks`` × tables, game ``g`` = deck ``g // T``, table ``g % T``.

    ``teams`` (seat tuples, None for none) makes the positions teams: an agent then holds every seat of its team.
    """

    players: int
    teams: tuple[tuple[int, ...], ...] | None
    n_agents: int
    decks: int
    seed: int
    mode: str = "rotations"

    @property
    def positions(self) -> int:
        """Seats, or teams with teams."""
        return self.players if self.teams is None else len(self.teams)

    @property
    def lineups(self) -> list[tuple[int, ...]]:
        """Agent indices per position, one tuple per lineup."""
        return lineups(self.n_agents, self.positions)

    @property
    def tables(self) -> list[tuple[int, tuple[int, ...]]]:
        """(lineup index, agent index per position) for every table, lineup by lineup."""
        return [(k, s) for k, lineup in enumerate(self.lineups) for s in seatings(lineup, self.mode)]

    @property
    def seating(self) -> np.ndarray:
        """(T, P) agent index per seat of every table."""
        position = list(range(self.players))
        for team, seats in enumerate(self.teams or ()):
            for seat in seats:
                position[seat] = team
        return np.array([[order[position[s]] for s in range(self.players)] for _, order in self.tables], np.int64)

    @property
    def n_tables(self) -> int:
        """Tables per deck."""
        return len(self.tables)

    @property
    def n_games(self) -> int:
        """Games (deals) in the schedule."""
        return self.decks * self.n_tables

    def deck_of(self, games: np.ndarray) -> np.ndarray:
        """Duplicate deck index of each game."""
        return np.asarray(games, np.int64) // self.n_tables

    def table_of(self, games: np.ndarray) -> np.ndarray:
        """Table index of each game."""
        return np.asarray(games, np.int64) % self.n_tables

    def deck_seeds(self, games: np.ndarray, independent: bool = False) -> list[int]:
        """The seed of each game's deck: its duplicate deck's, or the game's own for independent deals."""
        if independent:
            return [seed_int(self.seed, INDEPENDENT, int(g)) for g in games]
        return [seed_int(self.seed, DUPLICATE, int(d)) for d in self.deck_of(games)]

    def agent_seeds(self, games: np.ndarray) -> list[int]:
        """The seed of the agents' uniforms in each game."""
        return [seed_int(self.seed, AGENTS, int(d), int(t)) for d, t in zip(self.deck_of(games), self.table_of(games))]
