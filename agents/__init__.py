"""Agents: the spec registry and building blocks shared by every game, and each game's agents.

``agents.load("greedy")`` builds an agent from a spec string (:mod:`krypenv.agents.base` lists the
forms); ``agents.known()`` names every registered agent with its idea in a line.  Agents are
registered per game: ``agents.load(spec, game="krypkasino")`` (the default) and
``agents.known(game)``; ``random`` plays every game.  Every agent follows
:class:`krypenv.agent_api.Agent`: ``act(batch)`` turns a batch of decisions into actions.
Importing this package registers each game's agents (the ``agents`` part of every game in
:data:`krypenv.games.GAMES`): Krypkasino's baselines are documented in
:mod:`krypenv.agents.krypkasino.heuristics` (greedy, creeper, expert) and :mod:`krypenv.agents.krypkasino.pimc`
(determinized search), the learned ``ppo:PATH`` in :mod:`krypenv.agents.krypkasino.ppo`; Kungsholmskille's
``timid``, ``expert`` and ``pimc`` in :mod:`krypenv.agents.kungsholmskille`.
"""

# registers mlp:PATH, rllib:PATH and tabular:PATH (Ray and OpenSpiel are imported only to load one)
from krypenv.agents import mlp, rllib_agent, tabular  # noqa: F401
from krypenv.agents.base import MoveAgent, RandomAgent, known, load, register

from krypenv.games import GAMES

for _game in GAMES.values():
    _game.part("agents")  # each game's agents package registers its agents when imported

__all__ = ["MoveAgent", "RandomAgent", "known", "load", "register"]
