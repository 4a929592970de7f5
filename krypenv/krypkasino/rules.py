"""The rules configuration: player count, variants, deck and deal (RULES.md K5–K8, K17, K18, K20–K23).

One frozen :class:`Rules` object describes a game; its fields are exactly the ``rules``
keys of a game record, so ``Rules(**record["rules"])`` and ``rules.to_dict()`` round-trip.
Every invalid combination raises a ValueError that names the field and what is allowed.

Variant decks and deals (K20, K21): ``ranks`` and ``suits`` pick the card kinds (None: all),
``copies`` how many of each (1 or 2), and ``hand`` / ``table`` replace the K6/K7 patterns by
"``hand`` cards to each player, then ``table`` cards on the table; ``hand`` to each player in
every later round".  :data:`PRESETS` names rule sets (K22): ``Rules.from_preset("tiny",
players=2)``; :attr:`Rules.preset_name` reads the name back (``"custom"`` when none matches).
``to_dict`` writes these keys only when they differ from the standard game, so a standard
record reads exactly as before.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from functools import cached_property
from typing import Any

import numpy as np

from krypenv.krypkasino.cards import N_CODES, POINTS, RANKS, SUITS, kind_codes

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

# K20, K21: the deck and deal keys, their defaults (the standard game), and the named presets (K22).
VARIANT_DEFAULTS: dict[str, Any] = {"ranks": None, "suits": None, "copies": 2, "hand": None, "table": None}
PRESETS: dict[str, dict[str, Any]] = {
    "standard": {},
    "tiny": {"ranks": ("A", "2", "3", "4"), "suits": ("H", "S"), "copies": 1, "hand": 3, "table": 2},
    "small": {"ranks": ("A", "2", "3", "4", "5", "6", "7"), "suits": None, "copies": 1, "hand": 4, "table": 4},
}
PRESET_PLAYERS: dict[str, tuple[int, ...]] = {"standard": (2, 3, 4, 5, 6), "tiny": (2,), "small": (2, 3)}

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
    ranks: tuple[str, ...] | None = None
    suits: tuple[str, ...] | None = None
    copies: int = 2
    hand: int | None = None
    table: int | None = None

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
        object.__setattr__(self, "ranks", _normalise_names("ranks", self.ranks, RANKS))
        object.__setattr__(self, "suits", _normalise_names("suits", self.suits, SUITS))
        if isinstance(self.copies, bool) or not isinstance(self.copies, int) or self.copies not in (1, 2):
            raise ValueError(f"copies must be 1 or 2 (K20), got {self.copies!r}")
        self._check_deal()

    def _check_deal(self) -> None:
        """K21: ``hand`` and ``table`` are both unset or both set, and the deal fits the deck in whole rounds."""
        if (self.hand is None) != (self.table is None):
            raise ValueError(f"hand and table must be given together (K21), got hand={self.hand!r}, "
                             f"table={self.table!r}")
        if self.hand is not None:
            if isinstance(self.hand, bool) or not isinstance(self.hand, int) or self.hand < 1:
                raise ValueError(f"hand must be a positive integer (K21), got {self.hand!r}")
            if isinstance(self.table, bool) or not isinstance(self.table, int) or self.table < 0:
                raise ValueError(f"table must be a non-negative integer (K21), got {self.table!r}")
            if self.two_player_deal != "6+4":
                raise ValueError(f"two_player_deal={self.two_player_deal!r} is a K6 pattern; it cannot be combined "
                                 f"with hand and table (K21)")
        per_round = self.players * self.later_hand_size
        rest = self.deck_size - self.players * self.hand_size - self.table_size
        if rest < 0 or rest % per_round:
            if self.hand is None:
                raise ValueError(f"the K6/K7 deal of {self.players} players does not fit a deck of {self.deck_size} "
                                 f"cards in whole rounds: give hand and table (K21)")
            raise ValueError(f"hand={self.hand}, table={self.table} do not fit a deck of {self.deck_size} cards: "
                             f"(deck - table) / (players * hand) = ({self.deck_size} - {self.table}) / "
                             f"({self.players} * {self.hand}) must be a positive integer (K21)")

    @classmethod
    def from_preset(cls, name: str, **overrides: Any) -> Rules:
        """The rules of a named preset (K22), with other rule keys as ``overrides``.

        ``players`` defaults to 3, or to the preset's smallest player count when 3 is not one
        of them; ValueError naming ``preset`` or ``players`` otherwise.
        """
        if name not in PRESETS:
            raise ValueError(f"preset must be one of {tuple(PRESETS)}, got {name!r}")
        allowed = PRESET_PLAYERS[name]
        players = overrides.pop("players", 3 if 3 in allowed else allowed[0])
        if players not in allowed and not set(overrides) & set(VARIANT_DEFAULTS):
            raise ValueError(f"preset {name!r} is for players {', '.join(map(str, allowed))} (K22), "
                             f"got players={players!r}")
        return cls(players=players, **{**PRESETS[name], **overrides})

    @property
    def preset_name(self) -> str:
        """The preset (K22) whose deck and deal keys these rules have, or ``"custom"``."""
        mine = {k: getattr(self, k) for k in VARIANT_DEFAULTS}
        for name, keys in PRESETS.items():
            if mine == {**VARIANT_DEFAULTS, **keys} and self.players in PRESET_PLAYERS[name]:
                return name
        return "custom"

    @property
    def is_standard(self) -> bool:
        """True when the deck and deal are the standard game's (K1, K6, K7), whatever the other variants."""
        return all(getattr(self, k) == v for k, v in VARIANT_DEFAULTS.items())

    @cached_property
    def kinds(self) -> np.ndarray:
        """The card codes (int64, ascending) of the deck's kinds (K20)."""
        codes = kind_codes(self.ranks, self.suits)
        codes.setflags(write=False)
        return codes

    @cached_property
    def deck_counts(self) -> np.ndarray:
        """(52,) int64 copies of each card code in this deck: 2 of every code in the standard game (K1, K20)."""
        counts = np.zeros(N_CODES, np.int64)
        counts[self.kinds] = self.copies
        counts.setflags(write=False)
        return counts

    @property
    def deck_size(self) -> int:
        """Cards in the deck (104 in the standard game)."""
        return len(self.kinds) * self.copies

    @property
    def total_points(self) -> int:
        """Card points (K4) of this deck: 42 in the standard game (K20)."""
        return int(POINTS @ self.deck_counts)

    @property
    def initial_pattern(self) -> tuple[tuple[str, int], ...]:
        """The packets of the initial deal: K6, or ``hand`` to each player then ``table`` (K21)."""
        if self.hand is not None:
            return (("P", self.hand), ("T", self.table))
        return _FIVE_PLUS_SIX if self.two_player_deal == "5+6" else _INITIAL_PATTERN[self.players]

    @property
    def later_pattern(self) -> tuple[tuple[str, int], ...]:
        """The packets of every later round: K7's two times two, or ``hand`` to each player (K21)."""
        return LATER_PATTERN if self.hand is None else (("P", self.hand),)

    @property
    def later_hand_size(self) -> int:
        """Cards per hand dealt in each later round (K7, K21)."""
        return sum(k for _, k in self.later_pattern)

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
        """Rounds in a deal: the initial one plus one per later hand each left in the deck (K7, K21)."""
        dealt = self.players * self.hand_size + self.table_size
        return 1 + (self.deck_size - dealt) // (self.later_hand_size * self.players)

    @property
    def decisions_per_deal(self) -> int:
        """Cards played in a deal: every card not laid on the table by the deal."""
        return self.deck_size - self.table_size

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
        for key, default in VARIANT_DEFAULTS.items():  # K20, K21: only when not the standard game's
            if d[key] == default:
                del d[key]
            elif isinstance(d[key], tuple):
                d[key] = list(d[key])
        return d

    @classmethod
    def from_dict(cls, d: Any) -> Rules:
        """Rules from a record's ``rules`` object; ValueError on unknown or bad keys."""
        if not isinstance(d, dict):
            raise ValueError(f"rules must be an object, got {type(d).__name__}")
        known = {"players", "teams", "two_player_deal", "set_aside", "last_capture_point", *VARIANT_DEFAULTS}
        unknown = sorted(set(d) - known)
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


def _normalise_names(field: str, names: Any, allowed: tuple[str, ...]) -> tuple[str, ...] | None:
    """K20: rank or suit names as a tuple in card order, None for all of them; ValueError naming ``field``."""
    if names is None:
        return None
    if isinstance(names, str) or not isinstance(names, (list, tuple)):
        raise ValueError(f"{field} must be a list of names from {' '.join(allowed)} or None, got {names!r}")
    bad = [n for n in names if n not in allowed]
    if bad or not names or len(set(names)) != len(names):
        why = f"unknown {bad}" if bad else ("none given" if not names else "repeated names")
        raise ValueError(f"{field} must be distinct names from {' '.join(allowed)} (K20), got {list(names)!r}: {why}")
    ordered = tuple(n for n in allowed if n in names)
    return None if len(ordered) == len(allowed) else ordered


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
