"""What a Krypkasino evaluation plays: :class:`EvalConfig`, the agents, the rules and the duplicate schedule."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from krypenv.eval.schedule import SEATINGS, Schedule, agent_labels

from krypenv.krypkasino.rules import Rules

GAME = "krypkasino"


@dataclass(frozen=True)
class EvalConfig:
    """What to evaluate and how; ValueError naming the field on bad values."""

    agents: tuple[str, ...]
    players: int = 2
    deals: int = 100  # duplicate decks; each is played at every table
    seed: int = 0
    teams: tuple[tuple[int, ...], ...] | None = None
    two_player_deal: str = "6+4"
    set_aside: str = "court"
    last_capture_point: bool = False
    seatings: str = "rotations"
    independent: bool = False  # also play independent deals and compare the variance
    workers: int = 1
    batch: int = 256
    records: bool = True
    ray: str | None = None  # Ray cluster address ('' for RAY_ADDRESS or a local Ray); None: local processes

    def __post_init__(self) -> None:
        object.__setattr__(self, "agents", tuple(s.strip() for s in self.agents))
        if len(self.agents) < 2 or not all(self.agents):
            raise ValueError("give at least two agent specs (the same one twice for a mirror match), "
                             f"got {self.agents}")
        object.__setattr__(self, "teams", self.rules.teams)
        for name in ("deals", "workers", "batch"):
            value, least = getattr(self, name), 2 if name == "deals" else 1
            if isinstance(value, bool) or not isinstance(value, int) or value < least:
                raise ValueError(f"{name} must be an integer of at least {least}, got {value!r}")
        if isinstance(self.seed, bool) or not isinstance(self.seed, int) or self.seed < 0:
            raise ValueError(f"seed must be a non-negative integer, got {self.seed!r}")
        if self.seatings not in SEATINGS:
            raise ValueError(f"seatings must be one of {SEATINGS}, got {self.seatings!r}")

    @property
    def rules(self) -> Rules:
        """The rule set of every game."""
        return Rules(self.players, self.teams, self.two_player_deal, self.set_aside, self.last_capture_point)

    @property
    def labels(self) -> list[str]:
        """One name per agent: its spec, with ``#2``, ``#3`` … on repeated specs."""
        return agent_labels(self.agents)

    @property
    def schedule(self) -> Schedule:
        """The games to play."""
        return Schedule(self.players, self.teams, len(self.agents), self.deals, self.seed, self.seatings)

    def games_dict(self) -> dict[str, Any]:
        """The fields that define the games and so the results (not workers, batch or records)."""
        return {"agents": list(self.agents), "rules": self.rules.to_dict(), "deals": self.deals, "seed": self.seed,
                "seatings": self.seatings, "independent": self.independent}
