"""The environments' configuration: :class:`EnvConfig` and the layout of the packed ``cfg`` vector.

:class:`EnvConfig` validates the keywords every interface takes (the game record's ``rules``
keys plus ``reward``, ``deals``, ``illegal``, ``render_mode``), naming the bad field in a
ValueError.  ``preset`` names a deck and deal (RULES.md K22: ``standard``, ``tiny``, ``small``);
the rule keys ``ranks``, ``suits``, ``copies``, ``hand``, ``table`` (K20, K21) override it
when given (None: the preset's).  The constants below are shared by the compiled env functions
(:mod:`krypenv.krypkasino.env_kernels`) and :class:`krypenv.krypkasino.batch.KrypkasinoBatch`, which packs
a configuration into one int64 ``cfg`` vector at these offsets: who acts for each seat
(``LEARNER``, ``EXTERNAL`` Python agents, the built-in ``RANDOM`` policy), the extra state
columns after the engine's, and the per-env integer array of deal numbers, match totals and
illegal-move penalties.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

from krypenv.envs.batch import EXTERNAL, LEARNER, RANDOM, check_modes
from krypenv.krypkasino.rules import VARIANT_DEFAULTS, Rules

VARIANT_KEYS = tuple(VARIANT_DEFAULTS)  # the deck and deal rule keys (K20, K21)

SEAT_KINDS = (LEARNER, EXTERNAL, RANDOM)  # the codes of who acts for a seat (at C_SEAT_KINDS)
REWARDS = ("points", "relative")
ILLEGAL_PENALTY = 50  # score points added to the offender's side by illegal="lose"
MAX_DEALS = 10_000
LAST_MOVE = 56  # last-move record: seat, card, tabbes gained, K15 taker (−1), capture counts (52)

# cfg vector (int64): scalars, then per-seat and packet arrays at fixed offsets
C_N, C_P, C_SPADES, C_DEALS, C_LCP, C_SIDES, C_RELATIVE, C_FIRST_DEALER, C_RANDOM_SEAT, C_E0 = range(10)
C_N_INIT, C_N_LATER = 10, 11
C_INIT_KINDS, C_INIT_SIZES, C_LATER_KINDS, C_LATER_SIZES, C_SIDE_OF, C_SEAT_KINDS = 12, 16, 20, 22, 24, 30
C_DECK_SIZE, C_N_KINDS, C_KINDS = 36, 37, 38  # the deck (K20): its size, its number of kinds, their codes (52)
CFG_SIZE = C_KINDS + 52
# ints array (N, 1 + 2P) int64: deal number, then match totals per seat, then penalties per seat
I_DEAL_NO, I_TOTALS = 0, 1


@dataclass(frozen=True)
class EnvConfig:
    """The keywords shared by all three interfaces; ValueError naming the field on bad values."""

    players: int = 3
    teams: Any = None
    two_player_deal: str = "6+4"
    set_aside: str = "court"
    last_capture_point: bool = False
    reward: str = "points"
    deals: int = 1
    illegal: str = "raise"
    render_mode: str | None = None
    preset: str = "standard"
    ranks: Any = None
    suits: Any = None
    copies: int | None = None
    hand: int | None = None
    table: int | None = None

    def __post_init__(self) -> None:
        rules = self.rules
        object.__setattr__(self, "teams", rules.teams)
        if self.reward not in REWARDS:
            raise ValueError(f"reward must be one of {REWARDS}, got {self.reward!r}")
        if (isinstance(self.deals, bool) or not isinstance(self.deals, (int, np.integer))
                or not 1 <= self.deals <= MAX_DEALS):
            raise ValueError(f"deals must be an integer from 1 to {MAX_DEALS}, got {self.deals!r}")
        check_modes(self.illegal, self.render_mode)

    @classmethod
    def from_rules(cls, rules: Rules, **keywords: Any) -> EnvConfig:
        """The configuration of a rule set (its deck and deal as explicit rule keys), plus env ``keywords``."""
        variant = {k: getattr(rules, k) for k in VARIANT_KEYS if getattr(rules, k) != VARIANT_DEFAULTS[k]}
        return cls(players=rules.players, teams=rules.teams, two_player_deal=rules.two_player_deal,
                   set_aside=rules.set_aside, last_capture_point=rules.last_capture_point, **variant, **keywords)

    @property
    def rules(self) -> Rules:
        """The rule set (K5–K8, K17, K18, K20–K22)."""
        variant = {k: getattr(self, k) for k in VARIANT_KEYS if getattr(self, k) is not None}
        return Rules.from_preset(self.preset, players=self.players, teams=self.teams,
                                 two_player_deal=self.two_player_deal, set_aside=self.set_aside,
                                 last_capture_point=self.last_capture_point, **variant)

    def to_dict(self) -> dict[str, Any]:
        """All keywords as a plain dict (the rules part as in a game record; ``preset`` only when not standard)."""
        d = asdict(self)
        for key in ("preset", *VARIANT_KEYS):
            del d[key]
        d.update(self.rules.to_dict())
        if self.preset != "standard":
            d["preset"] = self.preset
        return d
