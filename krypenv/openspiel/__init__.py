"""Our games inside OpenSpiel: ``import krypenv.openspiel`` registers ``python_krypkasino`` and the others.

Needs the optional extra ``openspiel`` (``pip install "krypenv[openspiel]"``, which brings
``open_spiel``).  After the import, ``pyspiel.load_game("python_krypkasino(players=2,preset=tiny)")``
gives one deal of Krypkasino played by the project's engine, with explicit chance nodes for
the deal, the env's action ids, observations and returns
(:mod:`krypenv.openspiel.krypkasino`); ``python_kungsholmskille`` is one pot of
Kungsholmskille (:mod:`krypenv.openspiel.kungsholmskille`).  :mod:`krypenv.openspiel.policy`
reads and writes tabular policies (JSON), :mod:`krypenv.openspiel.exploit` measures an agent's
exact best-response values and NashConv on a game OpenSpiel can traverse, and
:mod:`krypenv.openspiel.solve` runs CFR on one.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from krypenv.openspiel import krypkasino as _krypkasino  # registers python_krypkasino
from krypenv.openspiel import kungsholmskille as _kungsholmskille  # noqa: F401  (registers python_kungsholmskille)

__all__ = ["information_state_texts"]

# OpenSpiel game name -> the information state text of (env batch, env index, seat), for tabular policies
information_state_texts: dict[str, Callable[[Any, int, int], str]] = {
    _krypkasino.GAME_NAME: _krypkasino.information_state_text,
}
