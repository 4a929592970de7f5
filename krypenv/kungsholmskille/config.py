"""The Kungsholmskille environments' configuration: :class:`EnvConfig` and the layouts of ``cfg`` and ``ep``.

:class:`EnvConfig` validates the keywords every interface takes (``players``, ``first_dealer``,
``max_deals``, ``skip_forced``, ``illegal``, ``render_mode``, ``preset``, ``ranks``, ``pot_deals``),
naming the bad field in a ValueError.  ``preset`` names a rule set (L22: ``"standard"``, the
default, or ``"small"``); ``ranks`` and ``pot_deals`` override its rule keys ``ranks`` (L20) and
``max_deals`` (L21; the env keyword is ``pot_deals`` because ``max_deals`` is the env's
truncation bound of L16).  With a pot bound the episode (one pot) ends at the latest with the
pot's last deal, settled by L21 (terminated); it is truncated only if the env's ``max_deals``
is smaller than the pot bound.  The constants below are shared by the compiled env functions
(:mod:`krypenv.kungsholmskille.env_kernels`) and :class:`krypenv.kungsholmskille.batch.KungsholmskilleBatch`,
which packs a configuration into one int64 ``cfg`` vector at the ``C_*`` offsets (player
count, ``max_deals``, first dealer, ``skip_forced``, random learner seat, the deck's ranks
(L20), the pot bound (L21; 0 = none), and who acts for
each seat: ``LEARNER``, ``EXTERNAL`` Python agents or the built-in ``RANDOM`` policy) and keeps
one int64 episode record per env at the ``E_*`` offsets (deal number, over code, learner
seat, the learner's money at its previous decision, the illegal offender, money per seat).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

from krypenv.envs.batch import EXTERNAL, LEARNER, RANDOM, check_modes
from krypenv.kungsholmskille.actions import MAX_LEGAL
from krypenv.kungsholmskille.engine import kernels
from krypenv.kungsholmskille.rules import Rules

MAX_DEALS = 1000  # keeps every money value inside int16 (see observation.py)
ILLEGAL_FINE = 20  # kronor the offender pays every other seat with illegal="lose"
MOVED, ILLEGAL = 0, 1  # act statuses
RUNNING, POT_OUT, TRUNCATED, FORFEIT = 0, 1, 2, 3  # episode state E_OVER: POT_OUT and FORFEIT are terminations
# The per-thread int64 scratch ``buf`` of the env functions (nothing in them allocates, so they run on CPU and CUDA
# threads alike): a legal-action list (legal_list), then a deck's uniforms (read as float64, 41 used), then room for a
# compiled policy's work vector (three rank vectors of the tactics, krypenv.agents.kungsholmskille).
B_LEGAL, B_UNIF, B_POLICY = 0, MAX_LEGAL + 5, MAX_LEGAL + 5 + 42
BUF = B_POLICY + 3 * 21  # scratch length

# cfg vector (int64)
C_P, C_MAX_DEALS, C_FIRST_DEALER, C_SKIP, C_RANDOM_SEAT, C_RANKS, C_POT_DEALS = range(7)
C_KINDS = 8  # who acts for relative seat r (to the learner): C_KINDS + r
CFG_SIZE = C_KINDS + kernels.MAXP
# ep (N, EP_WIDTH) int64: the episode record of each env
E_DEAL, E_OVER, E_SEAT, E_BASE, E_OFFENDER = range(5)  # deal number, over code, learner seat,
E_MONEY = 8  # learner's money at its previous decision, illegal offender (−1); money per seat at E_MONEY + s
EP_WIDTH = E_MONEY + kernels.MAXP



@dataclass(frozen=True)
class EnvConfig:
    """The keywords shared by all three interfaces; ValueError naming the field on bad values."""

    players: int = 4
    first_dealer: int | None = None
    max_deals: int = 50
    skip_forced: bool = False
    illegal: str = "raise"
    render_mode: str | None = None
    preset: str = "standard"
    ranks: int | None = None
    pot_deals: int | None = None

    def __post_init__(self) -> None:
        pd = self.pot_deals
        if pd is not None and (isinstance(pd, bool) or not isinstance(pd, (int, np.integer))
                               or not 1 <= pd <= MAX_DEALS):
            raise ValueError(f"pot_deals must be None (the preset's bound) or an integer from 1 to {MAX_DEALS} "
                             f"(L21), got {pd!r}")
        self.rules  # noqa: B018  (ValueError naming players, preset or ranks: L2, L20, L22)
        fd = self.first_dealer
        if fd is not None and (isinstance(fd, bool) or not isinstance(fd, (int, np.integer))
                               or not 0 <= fd < self.players):
            raise ValueError(f"first_dealer must be None (seat players-1, L2) or a seat 0..{self.players - 1}, "
                             f"got {fd!r}")
        md = self.max_deals
        if isinstance(md, bool) or not isinstance(md, (int, np.integer)) or not 1 <= md <= MAX_DEALS:
            raise ValueError(f"max_deals must be an integer from 1 to {MAX_DEALS} (L16), got {md!r}")
        if not isinstance(self.skip_forced, (bool, np.bool_)):
            raise ValueError(f"skip_forced must be True or False, got {self.skip_forced!r}")
        check_modes(self.illegal, self.render_mode)

    @property
    def rules(self) -> Rules:
        """The rules: ``preset`` (L22) with ``players``, ``ranks`` (L20) and ``pot_deals`` as ``max_deals`` (L21)."""
        overrides: dict[str, Any] = {"players": self.players}
        if self.ranks is not None:
            overrides["ranks"] = self.ranks
        if self.pot_deals is not None:
            overrides["max_deals"] = self.pot_deals
        return Rules.from_preset(self.preset, **overrides)

    @property
    def episode_deals(self) -> int:
        """The most deals an episode can have: ``max_deals`` (L16), or the pot bound if smaller (L21)."""
        bound = self.rules.max_deals
        return self.max_deals if bound is None else min(self.max_deals, bound)

    @property
    def dealer0(self) -> int:
        """The first dealer: ``first_dealer``, or seat P−1 by default (L2)."""
        return self.players - 1 if self.first_dealer is None else int(self.first_dealer)

    def to_dict(self) -> dict[str, Any]:
        """All keywords as a plain dict."""
        return asdict(self)


__all__ = [
    "BUF",
    "B_LEGAL",
    "B_POLICY",
    "B_UNIF",
    "CFG_SIZE",
    "C_FIRST_DEALER",
    "C_KINDS",
    "C_MAX_DEALS",
    "C_P",
    "C_POT_DEALS",
    "C_RANDOM_SEAT",
    "C_RANKS",
    "C_SKIP",
    "EP_WIDTH",
    "EXTERNAL",
    "E_BASE",
    "E_DEAL",
    "E_MONEY",
    "E_OFFENDER",
    "E_OVER",
    "E_SEAT",
    "FORFEIT",
    "ILLEGAL",
    "ILLEGAL_FINE",
    "LEARNER",
    "MAX_DEALS",
    "MOVED",
    "POT_OUT",
    "RANDOM",
    "RUNNING",
    "TRUNCATED",
    "EnvConfig",
]  # fmt: skip
