"""Agents: the interface's building blocks, the spec registry, and the agents of each game.

``agents.load("greedy")`` builds an agent from a spec string (:mod:`agents.base` lists the
forms); ``agents.known()`` names every registered agent with its idea in a line.  Every agent
follows :class:`krypenv.policy.Agent`: ``act(batch)`` turns a batch of decisions into actions.
The baselines are documented in :mod:`agents.krypkasino.heuristics` (greedy, creeper, expert) and
:mod:`agents.krypkasino.pimc` (determinized search).
"""

from agents.base import MoveAgent, RandomAgent, known, load, register
from agents import krypkasino  # noqa: F401  (registers greedy, creeper, expert, pimc, ppo:PATH)

__all__ = ["MoveAgent", "RandomAgent", "known", "load", "register"]
