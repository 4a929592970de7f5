"""Kungsholmskille's rule-based baselines: ``timid`` and ``expert`` (their tactics:
:mod:`krypenv.agents.kungsholmskille.tactics`).

| spec     | idea                                                                                  |
|----------|---------------------------------------------------------------------------------------|
| `timid`  | knocks and stays only with a very low card, exchanges its two highest cards, shows    |
|          | only when no unseen card is as low as its own                                         |
| `expert` | judges its chance to hold the lowest card at the showdown from the cards it has seen |
|          | and the players still in; knocks, folds, exchanges and shows by expected money; in    |
|          | the tricks sheds high cards and keeps its lowest card for the end                     |

Options: ``timid:knock_max=2,stay_max=3`` (rank indices, L1); ``expert:depth=5,stay_depth=7,
show_depth=5,margin=0,fold_value=-0.5,discard_cost=0.02,next_ante=0`` (``next_ante=0.8`` prices
the next pot's ante after a lost showdown, as in a game that goes on: then it folds hopeless
hands; at 0, the episode's money, a fold never pays).  Both are deterministic and act on
a whole :class:`~krypenv.agent_api.DecisionBatch` in one compiled call from its observations and
masks, so they see only what the seat may know.
"""

from __future__ import annotations

import numpy as np
from krypenv.agents.base import register
from krypenv.agents.kungsholmskille.tactics import EXPERT, TIMID, WORK_WORDS, decide_batch, device_decide, offsets

from krypenv.agent_api import DecisionBatch, DevicePolicy

__all__ = ["ExpertAgent", "TacticsAgent", "TimidAgent"]

GAME = "kungsholmskille"


class TacticsAgent:
    """A compiled policy of :mod:`krypenv.agents.kungsholmskille.tactics` (``kind``) with its parameter vector."""

    name = "tactics"
    game = GAME

    def __init__(self, kind: int, params: np.ndarray) -> None:
        """The policy ``kind`` (TIMID or EXPERT) with ``params``."""
        self.kind, self.params = int(kind), np.asarray(params, np.float64)
        self._offsets: dict[int, np.ndarray] = {}

    def device_policy(self, rules: object) -> DevicePolicy:
        """This policy inside a device env's kernels (:func:`~krypenv.agents.kungsholmskille.tactics.device_decide`):
        the same choices as :meth:`act` (no uniforms), from the seat's observation and mask."""
        P = int(rules.players)
        iparams = np.concatenate([[self.kind], offsets(P), np.asarray(rules.deck_counts, np.int64)]).astype(np.int64)
        return DevicePolicy(game=GAME, function=device_decide, iparams=iparams, fparams=self.params, uniforms=0,
                            scratch=WORK_WORDS)

    def act(self, batch: DecisionBatch) -> np.ndarray:
        """One action per decision, from the observations and masks only."""
        P = int(batch.rules.players)
        off = self._offsets.setdefault(P, offsets(P))
        out = np.empty(len(batch), np.int64)
        counts = np.asarray(batch.rules.deck_counts, np.int64)  # L1, L20: the cards this deck holds
        decide_batch(batch.obs, batch.mask, P, self.kind, self.params, off, counts, out)
        return out


class TimidAgent(TacticsAgent):
    """``timid``: knocks and stays only with a very low card; shows only when it cannot lose."""

    name = "timid"

    def __init__(self, knock_max: int = 1, stay_max: int = 2) -> None:
        """Knock with a lowest card of rank ≤ ``knock_max``, stay after a knock with one ≤ ``stay_max``."""
        for key, v in (("knock_max", knock_max), ("stay_max", stay_max)):
            if isinstance(v, bool) or not isinstance(v, int) or not 0 <= v <= 20:
                raise ValueError(f"timid: {key} must be a rank index 0..20, got {v!r}")
        super().__init__(TIMID, np.array([knock_max, stay_max], np.float64))


class ExpertAgent(TacticsAgent):
    """``expert``: betting by expected money on its chance of the lowest card; sheds high cards in the tricks."""

    name = "expert"

    def __init__(self, depth: float = 5.0, stay_depth: float = 7.0, show_depth: float = 5.0, margin: float = 0.0,
                 fold_value: float = -0.5, discard_cost: float = 0.02, next_ante: float = 0.0) -> None:
        """The expected-money tactics with the modelling constants of :mod:`krypenv.agents.kungsholmskille.tactics`."""
        values = [depth, stay_depth, show_depth, margin, fold_value, discard_cost, next_ante]
        if not all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in values) or min(
                depth, stay_depth, show_depth) <= 0 or next_ante < 0:
            raise ValueError(f"expert: options must be numbers (depths > 0, next_ante >= 0), got {values}")
        super().__init__(EXPERT, np.array(values, np.float64))


register("timid", TimidAgent, "knocks and stays only with a very low card; shows only when it cannot lose",
         games=(GAME,))
register("expert", ExpertAgent, "chance of the lowest card from the cards seen; bets by expected money; sheds high "
         "cards", games=(GAME,))
