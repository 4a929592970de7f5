"""What a Krypkasino evaluation plays: :class:`EvalConfig`, the agents, the rules and the duplicate schedule."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from krypenv.eval.schedule import Schedule, agent_labels, check_common_fields

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
        object.__setattr__(self, "agents", check_common_fields(self))
        object.__setattr__(self, "teams", self.rules.teams)

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
