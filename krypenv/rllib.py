"""RLlib adapter: either game's AEC env as an RLlib ``MultiAgentEnv`` (new API stack); a masked random policy.

Only with the ``ray`` extra (``pip install "krypenv[ray]"``, Ray 2.60); nothing else in krypenv
imports this module or Ray.

    from ray.rllib.algorithms.ppo import PPOConfig
    from krypenv.rllib import KrypenvMultiAgentEnv, MaskedRandomRLModule

    config = PPOConfig().environment(KrypenvMultiAgentEnv, env_config={"game": "krypkasino", "players": 2})

``env_config`` is ``{"game": NAME, **keywords of that game's raw_env}``, NAME a game of
:data:`krypenv.games.GAMES` (default :data:`krypenv.games.DEFAULT_GAME`).
``examples/rllib_ppo.py`` trains PPO with action masking on it in self-play.

**Agents and turns.**  The agents are the AEC env's (``player_0`` …); one agent acts at a
time, so every ``reset``/``step`` returns the observation of the agent to act next only (the
same agent again while it chooses a Krypkasino capture).

**Observations** are what RLlib's action-masking RLModule
(``ray.rllib.examples.rl_modules.classes.action_masking_rlm``) expects: a Dict of
``observations`` (the game's observation vector as float32, bounds of the game's space) and
``action_mask`` (float32 0/1 over the game's ``Discrete`` actions).

**Rewards.**  The AEC env gives every agent a reward at every step (moves of others, the
end of the deal).  Each agent here receives, with each of its observations, the sum of all
its rewards since its previous observation; nothing is dropped or credited to the agent that
happened to act (PettingZoo's own RLlib wrapper does that).  At the end of an episode every
agent gets a final observation and the rest of its rewards, so its returns add up to the
AEC env's (minus its deal score in Krypkasino, its net money in Kungsholmskille).  Episodes
end with ``terminateds`` (or ``truncateds`` for a Kungsholmskille pot cut short by
``max_deals``) for every agent and ``"__all__"``.

**Opponents.** :class:`MaskedRandomRLModule` is a non-trained RLModule that picks a uniformly
random legal action from ``action_mask``; map opponents to it (``policies_to_train`` without
it) to train against random play.
"""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np
from ray.rllib.core.columns import Columns
from ray.rllib.core.rl_module.rl_module import RLModule
from ray.rllib.env.multi_agent_env import MultiAgentEnv

from krypenv.games import DEFAULT_GAME, game

__all__ = ["KrypenvMultiAgentEnv", "MaskedRandomRLModule", "make_aec", "observation_space"]


def make_aec(name: str = DEFAULT_GAME, **keywords: Any) -> Any:
    """The raw PettingZoo AEC env of the game called ``name`` (ValueError naming the known games)."""
    return game(name).part("entry").raw_env(**keywords)


def observation_space(aec: Any, agent: str) -> gym.spaces.Dict:
    """The float32 ``{"observations", "action_mask"}`` space of an AEC env's agent."""
    inner = aec.observation_space(agent)
    box, n = inner["observation"], aec.action_space(agent).n
    return gym.spaces.Dict({
        "observations": gym.spaces.Box(box.low.astype(np.float32), box.high.astype(np.float32), dtype=np.float32),
        "action_mask": gym.spaces.Box(0.0, 1.0, (n,), dtype=np.float32),
    })


class KrypenvMultiAgentEnv(MultiAgentEnv):
    """A krypenv game as an RLlib ``MultiAgentEnv`` (see the module docstring)."""

    def __init__(self, config: dict[str, Any] | None = None) -> None:
        super().__init__()
        keywords = dict(config or {})
        self.game = keywords.pop("game", DEFAULT_GAME)
        self.aec = make_aec(self.game, **keywords)
        self.possible_agents = list(self.aec.possible_agents)
        self.agents = list(self.possible_agents)
        self.observation_spaces = {a: observation_space(self.aec, a) for a in self.possible_agents}
        self.action_spaces = {a: self.aec.action_space(a) for a in self.possible_agents}
        self._owed = {a: 0.0 for a in self.possible_agents}  # rewards since each agent's last observation

    def _obs(self, agent: str) -> dict[str, np.ndarray]:
        """The agent's observation in the masking module's form."""
        raw = self.aec.observe(agent)
        return {"observations": raw["observation"].astype(np.float32),
                "action_mask": raw["action_mask"].astype(np.float32)}

    def reset(self, *, seed: int | None = None, options: dict | None = None) -> tuple[dict, dict]:
        """A new episode: the first agent to act and its observation."""
        self.aec.reset(seed=seed, options=options)
        self.agents = list(self.possible_agents)
        self._owed = {a: 0.0 for a in self.possible_agents}
        agent = self.aec.agent_selection
        return {agent: self._obs(agent)}, {agent: dict(self.aec.infos[agent])}

    def step(self, action_dict: dict[str, Any]) -> tuple[dict, dict, dict, dict, dict]:
        """Apply the acting agent's action; observations for the next agent (or every agent at the end)."""
        agent = self.aec.agent_selection
        if agent not in action_dict:
            raise ValueError(f"it is {agent}'s turn, but the actions are for {sorted(action_dict)}")
        self.aec.step(int(action_dict[agent]))
        for a, r in self.aec.rewards.items():
            self._owed[a] += float(r)
        term, trunc = self.aec.terminations, self.aec.truncations
        if all(term[a] or trunc[a] for a in self.aec.agents):
            ended = list(self.aec.agents)
            obs = {a: self._obs(a) for a in ended}
            rewards = {a: self._owed[a] for a in ended}
            terminateds = {a: bool(term[a]) for a in ended} | {"__all__": any(term.values())}
            truncateds = {a: bool(trunc[a]) for a in ended} | {"__all__": not any(term.values())}
            infos = {a: dict(self.aec.infos[a]) for a in ended}
            self._owed = {a: 0.0 for a in self.possible_agents}
            self.agents = []
            return obs, rewards, terminateds, truncateds, infos
        nxt = self.aec.agent_selection
        reward, self._owed[nxt] = self._owed[nxt], 0.0
        return ({nxt: self._obs(nxt)}, {nxt: reward}, {"__all__": False}, {"__all__": False},
                {nxt: dict(self.aec.infos[nxt])})

    def render(self) -> str | None:
        """The AEC env's rendering."""
        return self.aec.render()


class MaskedRandomRLModule(RLModule):
    """An RLModule (not trained) that plays a uniformly random legal action from ``obs["action_mask"]``."""

    def _forward(self, batch: dict[str, Any], **kwargs: Any) -> dict[str, Any]:
        """One random legal action per row."""
        mask = np.asarray(batch[Columns.OBS]["action_mask"], dtype=np.float64).reshape(-1, self.action_space.n)
        u = np.random.random(len(mask))
        cum = np.cumsum(mask, axis=1)
        pick = (u * cum[:, -1])[:, None] < cum
        return {Columns.ACTIONS: pick.argmax(axis=1).astype(np.int64)}

    def _forward_train(self, *args: Any, **kwargs: Any) -> dict[str, Any]:
        """Never trained: leave it out of ``policies_to_train``."""
        raise NotImplementedError("MaskedRandomRLModule is not trained; leave it out of policies_to_train")

    def compile(self, *args: Any, **kwargs: Any) -> None:
        """Nothing to compile (kept for RLlib's torch code paths)."""
