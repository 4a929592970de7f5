"""Agents for Krypkasino: the baselines, the learned-policy loader, and spec strings naming them.

``agents.load("greedy")`` builds an agent from a spec string (:mod:`agents.base` lists the
forms); ``agents.known()`` names every registered agent with its idea in a line.  Every agent
follows :class:`krypenv.policy.Agent`: ``act(batch)`` turns a batch of decisions into actions.
"""

from agents.base import MoveAgent, RandomAgent, known, load, register

__all__ = ["MoveAgent", "RandomAgent", "known", "load", "register"]
