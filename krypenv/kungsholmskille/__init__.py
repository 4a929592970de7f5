"""Kungsholmskille, the second game of krypenv: a misère trick game for a money pot (rules contract: KILLE.md, L1–L19).

- :mod:`~krypenv.kungsholmskille.cards`: ranks, decks and shuffling (L1);
- :mod:`~krypenv.kungsholmskille.rules`: ``Rules(players)`` (L2);
- :mod:`~krypenv.kungsholmskille.actions`: the fixed Discrete(279) action space and move strings (L17);
- :mod:`~krypenv.kungsholmskille.engine`: ``Deals``, the batched compiled engine (L4–L15);
- :mod:`~krypenv.kungsholmskille.records`: game records, replay and checking (L17–L19);
- :mod:`~krypenv.kungsholmskille.demo` and :mod:`~krypenv.kungsholmskille.bench`.
"""

from krypenv.kungsholmskille.actions import N_ACTIONS, action_name, parse_move
from krypenv.kungsholmskille.engine import Deals, IllegalMoveError
from krypenv.kungsholmskille.rules import Rules

__all__ = ["N_ACTIONS", "Deals", "IllegalMoveError", "Rules", "action_name", "parse_move"]
