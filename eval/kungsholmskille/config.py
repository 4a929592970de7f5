"""What a Kungsholmskille evaluation plays: :class:`EvalConfig`, the agents, the table and the deck sets."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
from krypenv.eval.schedule import SEATINGS, Schedule, agent_labels

GAME = "kungsholmskille"


@dataclass(frozen=True)
class EvalConfig:
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
    def schedule(self) -> Schedule:
        """The episodes to play: every deck set at every table (episode e = deck set e // T, table e % T)."""
        return Schedule(self.players, None, len(self.agents), self.deals, self.seed, self.seatings)

    @property
    def tables(self) -> np.ndarray:
        """(T, P) agent index per seat of every table, lineup by lineup."""
        return self.schedule.seating

    @property
    def n_episodes(self) -> int:
        """Deck sets × tables."""
        return self.schedule.n_games

    def games_dict(self) -> dict[str, Any]:
        """The fields that define the games and so the results."""
        return {"game": GAME, "agents": list(self.agents), "players": self.players, "deals": self.deals,
                "seed": self.seed, "max_deals": self.max_deals, "seatings": self.seatings}
