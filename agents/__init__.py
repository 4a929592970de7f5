"""Agents for Krypkasino: the baselines, the learned-policy loader, and spec strings naming them.

``agents.load("greedy")`` builds an agent from a spec string (:mod:`agents.base` lists the
forms); ``agents.known()`` names every registered agent with its idea in a line.  Every agent
follows :class:`krypenv.policy.Agent`: ``act(batch)`` turns a batch of decisions into actions.
The baselines are documented in :mod:`agents.heuristics` (greedy, creeper, expert) and
:mod:`agents.pimc` (determinized search).
"""

from agents.base import MoveAgent, RandomAgent, known, load, register
from agents import heuristics  # noqa: F401  (registers greedy, creeper, expert)
from agents import pimc  # noqa: F401  (registers pimc)
from agents import ppo  # noqa: F401  (registers ppo:PATH)

__all__ = ["MoveAgent", "RandomAgent", "known", "load", "register"]
