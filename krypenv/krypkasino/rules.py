"""The rules configuration: player count and variants (RULES.md K5–K8, K17, K18).

One frozen :class:`Rules` object describes a game; its fields are exactly the ``rules``
keys of a game record, so ``Rules(**record["rules"])`` and ``rules.to_dict()`` round-trip.
Every invalid combination raises a ValueError that names the field and what is allowed.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

from krypenv.krypkasino.cards import DECK_SIZE

TWO_PLAYER_DEALS = ("6+4", "5+6")
SET_ASIDE_VARIANTS = ("court", "spades")

# K6 initial deal patterns: ("P", k) gives k cards to each player, ("T", k) lays k on the table.
_INITIAL_PATTERN: dict[int, tuple[tuple[str, int], ...]] = {
    2: (("P", 3), ("T", 2), ("P", 3), ("T", 2)),
    3: (("P", 3), ("T", 3), ("P", 2), ("T", 2)),
    4: (("P", 3), ("T", 2), ("P", 2), ("T", 2)),
    5: (("P", 2), ("T", 2), ("P", 2), ("T", 2)),
    6: (("P", 3), ("T", 2), ("P", 2)),
}
_FIVE_PLUS_SIX = (("P", 3), ("T", 3), ("P", 2), ("T", 3))
LATER_PATTERN: tuple[tuple[str, int], ...] = (("P", 2), ("P", 2))  # K7

# K18: the only seatings where every seat's neighbours are opponents.
_VALID_TEAMS: dict[int, tuple[frozenset[frozenset[int]], ...]] = {
    4: (frozenset({frozenset({0, 2}), frozenset({1, 3})}),),
    6: (
        frozenset({frozenset({0, 2, 4}), frozenset({1, 3, 5})}),
        frozenset({frozenset({0, 3}), frozenset({1, 4}), frozenset({2, 5})}),
    ),
}


@dataclass(frozen=True)
class Rules:
    """A Krypkasino rule set; the fields are the game record's ``rules`` keys."""

    players: int = 3
    teams: tuple[tuple[int, ...], ...] | None = None
    two_player_deal: str = "6+4"
    set_aside: str = "court"
    last_capture_point: bool = False

    def __post_init__(self) -> None:
        if isinstance(self.players, bool) or not isinstance(self.players, int) or not 2 <= self.players <= 6:
            raise ValueError(f"players must be an integer from 2 to 6 (K5), got {self.players!r}")
        if self.two_player_deal not in TWO_PLAYER_DEALS:
            raise ValueError(f"two_player_deal must be one of {TWO_PLAYER_DEALS}, got {self.two_player_deal!r}")
        if self.two_player_deal != "6+4" and self.players != 2:
            raise ValueError(f"two_player_deal={self.two_player_deal!r} needs players=2, got players={self.players}")
        if self.set_aside not in SET_ASIDE_VARIANTS:
            raise ValueError(f"set_aside must be one of {SET_ASIDE_VARIANTS}, got {self.set_aside!r}")
        if not isinstance(self.last_capture_point, bool):
            raise ValueError(f"last_capture_point must be true or false, got {self.last_capture_point!r}")
        object.__setattr__(self, "teams", _normalise_teams(self.teams, self.players))

    @property
    def initial_pattern(self) -> tuple[tuple[str, int], ...]:
        """The K6 packets of the initial deal."""
        return _FIVE_PLUS_SIX if self.two_player_deal == "5+6" else _INITIAL_PATTERN[self.players]

    @property
    def hand_size(self) -> int:
        """Cards per hand after the initial deal (K6)."""
        return sum(k for kind, k in self.initial_pattern if kind == "P")

    @property
    def table_size(self) -> int:
        """Cards laid on the table by the initial deal (K6)."""
        return sum(k for kind, k in self.initial_pattern if kind == "T")

    @property
    def rounds(self) -> int:
        """Rounds in a deal: the initial one plus one per 4 cards each left in the deck (K7)."""
        dealt = self.players * self.hand_size + self.table_size
        return 1 + (DECK_SIZE - dealt) // (4 * self.players)

    @property
    def decisions_per_deal(self) -> int:
        """Cards played in a deal: every card not laid on the table by the deal."""
        return DECK_SIZE - self.table_size

    def team_of(self, seat: int) -> int:
        """Index of the team holding ``seat`` (each seat its own team without teams)."""
        if self.teams is None:
            return seat
        return next(i for i, team in enumerate(self.teams) if seat in team)

    @property
    def n_teams(self) -> int:
        """Number of scoring sides: teams, or seats when playing without teams."""
        return self.players if self.teams is None else len(self.teams)

    def to_dict(self) -> dict[str, Any]:
        """The game record's ``rules`` object."""
        d = asdict(self)
        d["teams"] = None if self.teams is None else [list(t) for t in self.teams]
        return d

    @classmethod
    def from_dict(cls, d: Any) -> Rules:
        """Rules from a record's ``rules`` object; ValueError on unknown or bad keys."""
        if not isinstance(d, dict):
            raise ValueError(f"rules must be an object, got {type(d).__name__}")
        unknown = sorted(set(d) - {"players", "teams", "two_player_deal", "set_aside", "last_capture_point"})
        if unknown:
            raise ValueError(f"unknown rules key(s) {unknown}")
        return cls(**d)


def teams_tag(teams: Any) -> str:
    """``02+13`` for teams (0, 2) and (1, 3), ``""`` without: the tag of team checkpoints and eval folders."""
    return "+".join("".join(str(int(s)) for s in team) for team in teams) if teams else ""


def alternating_teams(k: int, players: int) -> tuple[tuple[int, ...], ...]:
    """K18 teams by their number: seat s in team s mod k; ValueError unless k is 2 or 3 and the rules allow it."""
    if isinstance(k, bool) or not isinstance(k, int) or not 2 <= k <= 3:
        raise ValueError(f"a number of teams is 2 or 3 (K18), got {k!r}")
    teams = Rules(players=players, teams=[[s for s in range(players) if s % k == j] for j in range(k)]).teams
    assert teams is not None  # Rules keeps the teams it is given, normalised
    return teams


def parse_teams(text: str | None, players: int) -> tuple[tuple[int, ...], ...] | None:
    """K18 teams from a command line: ``none``, a number of teams (seat s in team s mod k), or ``0,2/1,3``."""
    if text is None or text.strip().lower() in ("", "none"):
        return None
    text = text.strip()
    if text.isdigit():
        return alternating_teams(int(text), players)
    try:
        teams = [[int(s) for s in part.split(",")] for part in text.split("/")]
    except ValueError:
        raise ValueError(f"teams must be none, a number of teams (2 or 3) or seat lists such as 0,2/1,3; "
                         f"got {text!r} for {players} players") from None
    return Rules(players=players, teams=teams).teams


def _normalise_teams(teams: Any, players: int) -> tuple[tuple[int, ...], ...] | None:
    """Teams as sorted tuples, or ValueError unless they alternate seats (K18)."""
    if teams is None:
        return None
    try:
        as_sets = frozenset(frozenset(int(s) for s in team) for team in teams)
        as_tuples = tuple(sorted(tuple(sorted(int(s) for s in team)) for team in teams))
    except (TypeError, ValueError):
        raise ValueError(f"teams must be a list of seat lists, got {teams!r}") from None
    if players not in _VALID_TEAMS:
        raise ValueError(f"teams need 4 or 6 players (K18), got players={players}")
    if sum(len(t) for t in as_tuples) != players or as_sets not in _VALID_TEAMS[players]:
        allowed = " or ".join(str(sorted(sorted(t) for t in v)) for v in _VALID_TEAMS[players])
        raise ValueError(
            f"teams {teams!r} do not alternate seats so that neighbours are opponents (K18); "
            f"with {players} players use {allowed}"
        )
    return as_tuples
