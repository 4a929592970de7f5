"""The rules configuration of Kungsholmskille: players, deck and pot bound (KILLE.md L2–L4, L20–L23).

:class:`Rules` holds exactly the ``rules`` object of a game record (L18): ``players`` (2–6),
``ranks`` (the deck holds the lowest ``ranks`` ranks twice, L20; 21 = the kille deck of L1)
and ``max_deals`` (the most deals one pot lasts before it is settled, L21; None = unbounded,
L16).  ``Rules.from_dict(record["rules"])`` and ``rules.to_dict()`` round-trip, and
``to_dict`` names ``ranks`` and ``max_deals`` only when they differ from the standard game,
so standard records are unchanged.  :data:`PRESETS` names rule sets (L22):
``Rules.from_preset("small", players=3)``; :attr:`Rules.preset_name` reads the name back.
Derived sizes (deck, talon, the longest deal) are properties.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from krypenv.kungsholmskille.cards import HAND_SIZE, N_COPIES, N_RANKS

MIN_PLAYERS, MAX_PLAYERS = 2, 6
MAX_POT_DEALS = 1000  # the largest max_deals (L21): keeps every money value inside int16 (observation.py)
RULE_KEYS = ("players", "ranks", "max_deals")
PRESETS: dict[str, dict[str, Any]] = {
    "standard": {},  # L1–L19 as they are
    "small": {"ranks": 11, "max_deals": 3},  # L22: 22 cards, 2–3 players, at most 3 deals per pot
}


def _is_int(x: Any) -> bool:
    """Whether ``x`` is an integer (numpy included) and not a bool."""
    return isinstance(x, (int, np.integer)) and not isinstance(x, (bool, np.bool_))


def min_ranks(players: int) -> int:
    """The fewest ranks a deck for ``players`` may have: 2·ranks − 5·players ≥ 2·players (L8, L20)."""
    return (7 * players + 1) // 2


@dataclass(frozen=True)
class Rules:
    """A Kungsholmskille table: ``players`` seats (L2), a deck of ``ranks`` ranks (L20), ``max_deals`` per pot (L21)."""

    players: int = 4
    ranks: int = N_RANKS
    max_deals: int | None = None

    def __post_init__(self) -> None:
        p = self.players
        if not _is_int(p) or not MIN_PLAYERS <= p <= MAX_PLAYERS:
            raise ValueError(f"players must be an integer from {MIN_PLAYERS} to {MAX_PLAYERS} (L2), got {p!r}")
        object.__setattr__(self, "players", int(p))
        r = self.ranks
        if not _is_int(r) or not 1 <= r <= N_RANKS:
            raise ValueError(f"ranks must be an integer from 1 to {N_RANKS} (L20), got {r!r}")
        object.__setattr__(self, "ranks", int(r))
        if r < min_ranks(self.players):
            raise ValueError(f"ranks must be at least {min_ranks(self.players)} for {self.players} players, so that "
                             f"the talon holds two cards for every player (L8, L20): 2·ranks − 5·players ≥ "
                             f"2·players; got ranks={r}")
        md = self.max_deals
        if md is not None:
            if not _is_int(md) or not 1 <= md <= MAX_POT_DEALS:
                raise ValueError(f"max_deals must be None (unbounded, L16) or an integer from 1 to "
                                 f"{MAX_POT_DEALS} (L21), got {md!r}")
            object.__setattr__(self, "max_deals", int(md))

    # ------------------------------------------------------------------ presets (L22)
    @classmethod
    def from_preset(cls, name: str, **overrides: Any) -> Rules:
        """The rules of preset ``name`` (L22) with ``overrides`` (rule keys) on top; ValueError on a bad name or key."""
        if not isinstance(name, str) or name not in PRESETS:
            raise ValueError(f"preset must be one of {', '.join(PRESETS)}, got {name!r}")
        unknown = sorted(set(overrides) - set(RULE_KEYS))
        if unknown:
            raise ValueError(f"unknown rules key(s) {unknown}; the keys are {', '.join(RULE_KEYS)}")
        return cls(**{**PRESETS[name], **overrides})

    @property
    def preset_name(self) -> str:
        """The preset whose keys these rules match (``players`` is free), else ``"custom"`` (L22)."""
        for name, keys in PRESETS.items():
            if {"ranks": self.ranks, "max_deals": self.max_deals} == {"ranks": N_RANKS, "max_deals": None, **keys}:
                return name
        return "custom"

    # ------------------------------------------------------------------ derived sizes
    @property
    def default_dealer(self) -> int:
        """The first dealer when the caller names none: seat players−1 (L2)."""
        return self.players - 1

    @property
    def initial_pot(self) -> int:
        """The pot of the first deal: every player puts in 2 (L3)."""
        return 2 * self.players

    @property
    def deck_size(self) -> int:
        """Cards in the deck: each of the ``ranks`` ranks twice (L1, L20); 42 for the standard game."""
        return N_COPIES * self.ranks

    @property
    def deck_counts(self) -> np.ndarray:
        """(21,) int64 copies of each rank index in this deck: 2 for the lowest ``ranks`` ranks, else 0 (L20)."""
        counts = np.zeros(N_RANKS, np.int64)
        counts[:self.ranks] = N_COPIES
        return counts

    @property
    def hand_size(self) -> int:
        """Cards dealt to each player (L4): 5 in every preset."""
        return HAND_SIZE

    @property
    def talon_size(self) -> int:
        """Cards left after dealing 5 to each player (L4); always ≥ 2 × players (L8, L20)."""
        return self.deck_size - HAND_SIZE * self.players

    @property
    def max_moves(self) -> int:
        """The most moves a deal can have: 9·players − 1.

        First call P (the last seat knocks), folds P−1, exchange P, second call P (the last
        knocks), four tricks 4P, show calls P (the last shows).
        """
        return 9 * self.players - 1

    def is_last_deal(self, deal: int) -> bool:
        """Whether deal number ``deal`` (0 = the pot's first) is the pot's last: a budrunda there settles it (L21)."""
        return self.max_deals is not None and deal == self.max_deals - 1

    # ------------------------------------------------------------------ records
    def to_dict(self) -> dict[str, Any]:
        """The game record's ``rules`` object; ``ranks`` and ``max_deals`` only when not standard (L18, L23)."""
        out: dict[str, Any] = {"players": self.players}
        if self.ranks != N_RANKS:
            out["ranks"] = self.ranks
        if self.max_deals is not None:
            out["max_deals"] = self.max_deals
        return out

    @classmethod
    def from_dict(cls, d: Any) -> Rules:
        """Rules from a record's ``rules`` object; ValueError on a missing, unknown or bad key."""
        if not isinstance(d, dict):
            raise ValueError(f"rules must be an object, got {type(d).__name__}")
        unknown = sorted(set(d) - set(RULE_KEYS))
        if unknown:
            raise ValueError(f"unknown rules key(s) {unknown}; the keys are {', '.join(RULE_KEYS)}")
        if "players" not in d:
            raise ValueError("rules must give players (2 to 6)")
        return cls(**d)
