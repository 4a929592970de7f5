"""What a Krypkasino evaluation plays: :class:`EvalConfig`, the agents, the rules and the duplicate schedule."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from krypenv.eval.schedule import EvalSettings, Schedule

from krypenv.krypkasino.rules import Rules

GAME = "krypkasino"


@dataclass(frozen=True)
class EvalConfig(EvalSettings):
    """What to evaluate and how: the common fields, the rules and the variance comparison."""

    players: int = 2
    batch: int = 256
    teams: tuple[tuple[int, ...], ...] | None = None
    two_player_deal: str = "6+4"
    set_aside: str = "court"
    last_capture_point: bool = False
    independent: bool = False  # also play independent deals and compare the variance
    preset: str = "standard"  # the deck and deal (RULES.md K22)

    def __post_init__(self) -> None:
        super().__post_init__()
        object.__setattr__(self, "teams", self.rules.teams)

    @property
    def rules(self) -> Rules:
        """The rule set of every game (the preset's deck and deal, K22)."""
        return Rules.from_preset(self.preset, players=self.players, teams=self.teams,
                                 two_player_deal=self.two_player_deal, set_aside=self.set_aside,
                                 last_capture_point=self.last_capture_point)

    @property
    def schedule(self) -> Schedule:
        """The games to play."""
        return Schedule(self.players, self.teams, len(self.agents), self.deals, self.seed, self.seatings)

    def games_dict(self) -> dict[str, Any]:
        """The fields that define the games and so the results (not workers, batch or records)."""
        return {"agents": list(self.agents), "rules": self.rules.to_dict(), "deals": self.deals, "seed": self.seed,
                "seatings": self.seatings, "independent": self.independent}
