"""Kungsholmskille, the second game of krypenv: a misère trick game for a money pot (rules contract: KILLE.md, L1–L23).

- :mod:`~krypenv.kungsholmskille.cards`: ranks, decks and shuffling (L1);
- :mod:`~krypenv.kungsholmskille.rules`: ``Rules(players, ranks, max_deals)`` (L2, L20, L21) and the presets
  ``standard`` and ``small`` (``Rules.from_preset``, L22);
- :mod:`~krypenv.kungsholmskille.actions`: the fixed Discrete(279) action space and move strings (L17);
- :mod:`~krypenv.kungsholmskille.engine`: ``DealBatch``, the batched compiled engine (L4–L15):
  ``engine/state.py`` (the arrays), ``engine/kernels.py`` (one deal's rules), ``engine/drivers.py`` (batches);
- :mod:`~krypenv.kungsholmskille.observation`, :mod:`~krypenv.kungsholmskille.config`,
  :mod:`~krypenv.kungsholmskille.env_kernels` and :mod:`~krypenv.kungsholmskille.batch`
  (``KungsholmskilleBatch``, the hooks of :mod:`krypenv.envs`); :mod:`~krypenv.kungsholmskille.view`
  (``SeatView``); :mod:`~krypenv.kungsholmskille.aec`, :mod:`~krypenv.kungsholmskille.single`,
  :mod:`~krypenv.kungsholmskille.vec` (thin classes over the shells) and
  :mod:`~krypenv.kungsholmskille.render`;
- :mod:`~krypenv.kungsholmskille.records`: game records, replay and checking (L17–L19);
- :mod:`~krypenv.kungsholmskille.demo` and :mod:`~krypenv.kungsholmskille.bench`.
"""

from krypenv.kungsholmskille.actions import N_ACTIONS, action_name, parse_move
from krypenv.kungsholmskille.engine import DealBatch, IllegalMoveError
from krypenv.kungsholmskille.rules import Rules

__all__ = ["N_ACTIONS", "DealBatch", "IllegalMoveError", "Rules", "action_name", "parse_move"]
