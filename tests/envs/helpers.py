"""Test helpers for every game's envs: deterministic agents and the loops that play an env (AEC or VecEnv)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import numpy as np

from krypenv.agent_api import DecisionBatch

Choose = Callable[[Any, str, np.ndarray], int]  # (AEC env, agent to act, its action mask) -> action


class FirstLegal:
    """A deterministic agent: the lowest legal action; remembers its batch sizes."""

    name = "first-legal"

    def __init__(self) -> None:
        self.batch_sizes: list[int] = []

    def act(self, batch: DecisionBatch) -> np.ndarray:
        """The lowest legal action of every decision."""
        self.batch_sizes.append(len(batch))
        return batch.mask.argmax(axis=1)


class FirstIllegal:
    """An agent that breaks the rules: the lowest illegal action of every decision."""

    name = "cheater"

    def act(self, batch: DecisionBatch) -> np.ndarray:
        """The lowest illegal action of every decision."""
        return (batch.mask == 0).argmax(axis=1)


def lowest_legal(masks: np.ndarray) -> np.ndarray:
    """Each row's lowest legal action."""
    return masks.argmax(axis=1).astype(np.int64)


def random_legal(rng: np.random.Generator) -> Choose:
    """A chooser of uniform random legal actions."""
    return lambda env, agent, mask: int(rng.choice(np.flatnonzero(mask)))


def live_decisions(env: Any) -> Iterator[tuple[str, np.ndarray]]:
    """Each decision of an AEC episode as (agent, action mask); the caller steps once per decision.

    Agents that are done are stepped with None here, as PettingZoo asks.
    """
    for agent in env.agent_iter():
        obs, _, term, trunc, _ = env.last()
        if term or trunc:
            env.step(None)
            continue
        yield agent, obs["action_mask"]


def play_episode(env: Any, choose: Choose, on_step: Callable[[Any, str], None] | None = None) -> dict[str, float]:
    """Play one AEC episode through ``agent_iter``; every agent's summed rewards (what ``last()`` reported)."""
    returns = {a: 0.0 for a in env.possible_agents}
    for agent in env.agent_iter():
        obs, reward, term, trunc, _ = env.last()
        returns[agent] += reward
        if term or trunc:
            env.step(None)
            continue
        env.step(choose(env, agent, obs["action_mask"]))
        if on_step is not None:
            on_step(env, agent)
    return returns


def finished_returns(vec: Any, steps: int) -> Iterator[tuple[float, dict]]:
    """``steps`` VecEnv steps of the lowest legal action: (a game's summed rewards, its final info) per game done."""
    returns = np.zeros(vec.num_envs)
    vec.reset()
    for _ in range(steps):
        _, rewards, dones, infos = vec.step(lowest_legal(vec.action_masks()))
        returns += rewards
        for i in np.flatnonzero(dones):
            yield float(returns[i]), infos[i]
            returns[i] = 0.0


def first_legal_trajectory(env: Any, seed: int, steps: int) -> list[tuple[bytes, int, float, bool]]:
    """``steps`` of a Gymnasium env seeded ``seed`` playing its first legal action, resetting after each episode:
    (observation bytes, action, reward, episode over) per step, as a VecEnv game is recorded."""
    o, info = env.reset(seed=seed)
    trajectory = []
    for _ in range(steps):
        a = int(np.flatnonzero(info["action_mask"])[0])
        o2, r, term, trunc, info = env.step(a)
        trajectory.append((o.tobytes(), a, r, term or trunc))
        o = o2
        if term or trunc:
            o, info = env.reset()
    return trajectory
