"""Agents: the spec registry and building blocks shared by every game, and each game's agents.

``agents.load("greedy")`` builds an agent from a spec string (:mod:`agents.base` lists the
forms); ``agents.known()`` names every registered agent with its idea in a line.  Agents are
registered per game: ``agents.load(spec, game="krypkasino")`` (the default) and
``agents.known(game)``; ``random`` plays every game.  Every agent follows
:class:`krypenv.policy.Agent`: ``act(batch)`` turns a batch of decisions into actions.
Importing this package registers each game's agents: Krypkasino's baselines are documented in
:mod:`agents.krypkasino.heuristics` (greedy, creeper, expert) and :mod:`agents.krypkasino.pimc`
(determinized search), the learned ``ppo:PATH`` in :mod:`agents.krypkasino.ppo`; Kungsholmskille's
``timid``, ``expert`` and ``pimc`` in :mod:`agents.kungsholmskille`.
"""

from agents import (
    krypkasino,  # noqa: F401  (registers greedy, creeper, expert, pimc, ppo:PATH)
    kungsholmskille,  # noqa: F401  (registers timid, expert, pimc for Kungsholmskille)
    rllib_agent,  # noqa: F401  (registers rllib:PATH; Ray is imported only to load one)
)
from agents.base import MoveAgent, RandomAgent, known, load, register

__all__ = ["MoveAgent", "RandomAgent", "known", "load", "register"]
