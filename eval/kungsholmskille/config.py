"""What a Kungsholmskille evaluation plays: :class:`EvalConfig`, the agents, the table and the deck sets."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
from krypenv.eval.schedule import EvalSettings, Schedule

GAME = "kungsholmskille"


@dataclass(frozen=True)
class EvalConfig(EvalSettings):
    """What to evaluate: the common fields, the most deals an episode may last, the preset (KILLE.md L22) and the
    pot's bound of deals (L21; None: the preset's)."""

    players: int = 4
    batch: int = 64
    max_deals: int = 50
    preset: str = "standard"
    pot_deals: int | None = None

    def __post_init__(self) -> None:
        super().__post_init__()
        self.env_config  # noqa: B018  (ValueError naming players, max_deals, preset or pot_deals)

    @property
    def env_config(self) -> Any:
        """The environments' :class:`~krypenv.kungsholmskille.config.EnvConfig` of every episode."""
        from krypenv.kungsholmskille.config import EnvConfig

        return EnvConfig(players=self.players, max_deals=self.max_deals, preset=self.preset, pot_deals=self.pot_deals)

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
        out = {"game": GAME, "agents": list(self.agents), "players": self.players, "deals": self.deals,
               "seed": self.seed, "max_deals": self.max_deals, "seatings": self.seatings}
        if self.preset != "standard":  # standard results stay as they were
            out["preset"] = self.preset
        if self.pot_deals is not None:
            out["pot_deals"] = self.pot_deals
        return out
