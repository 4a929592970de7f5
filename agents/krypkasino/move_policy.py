"""The move-scoring policy: MaskablePPO's actor-critic that scores every action from its move features.

Input: the observation (:mod:`krypenv.krypkasino.observation`, ``D`` entries) followed by the action
features (:mod:`krypenv.agents.krypkasino.move_features`, 105 × ``N_FEATS``), flattened; :class:`MoveFeatureVecEnv`
appends them to a VecEnv's observations and :class:`krypenv.agents.krypkasino.ppo.PPOAgent` to a decision batch.

Network (``net_arch`` sizes ``h``, ReLU)::

    s      = observation / its upper bounds                    (every entry in [0, 1])
    body   = MLP_h(s)                                          (the state, for the actor)
    logit_a = bias(body)[a] + score([features_a, ctx(body)])   (one shared scorer for all 105 actions)
    value  = Linear(MLP_h(s))                                  (a separate critic)

``score`` is a two-layer MLP of width 64 (``score_width``) applied to every action with the same weights, so
what it learns about one card or capture carries over to all of them; ``bias`` keeps a
per-action term of the plain MLP policy.  The scorer runs only on actions that lead to a
move (a nonzero move count), a few per decision, not on all 105.  Illegal actions are masked by MaskablePPO.
torch is imported by this module: import it only where a network is built or loaded.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch as th
from gymnasium import spaces
from krypenv.agents.krypkasino.move_features import FEATURE_HIGH, FEATURE_LOW, N_FEATS, action_features, input_dim
from sb3_contrib.common.maskable.policies import MaskableActorCriticPolicy
from stable_baselines3.common.torch_layers import BaseFeaturesExtractor
from stable_baselines3.common.vec_env import VecEnv, VecEnvWrapper
from torch import nn

from krypenv.krypkasino.actions import N_ACTIONS
from krypenv.krypkasino.vec import KrypkasinoVecEnv

SCORE_WIDTH = 64  # hidden width of the shared action scorer


class MoveInput(BaseFeaturesExtractor):
    """Observation part scaled to [0, 1] by its upper bounds; the action features pass through."""

    def __init__(self, observation_space: spaces.Box, obs_dim: int) -> None:
        super().__init__(observation_space, features_dim=int(np.prod(observation_space.shape)))
        high = np.ones(self.features_dim, np.float32)
        high[:obs_dim] = np.maximum(np.asarray(observation_space.high, np.float32).reshape(-1)[:obs_dim], 1.0)
        self.register_buffer("inv_high", th.as_tensor(1.0 / high))

    def forward(self, observations: th.Tensor) -> th.Tensor:
        return observations.reshape(observations.shape[0], -1).float() * self.inv_high


def _mlp(sizes: list[int], width_in: int) -> nn.Sequential:
    layers: list[nn.Module] = []
    for h in sizes:
        layers += [nn.Linear(width_in, h), nn.ReLU()]
        width_in = h
    return nn.Sequential(*layers)


class MoveScorer(nn.Module):
    """SB3 ``mlp_extractor``: the actor's latent is the 105 logits themselves; the critic's a hidden layer."""

    def __init__(self, obs_dim: int, sizes: list[int], score_width: int = SCORE_WIDTH,
                 critic_sizes: list[int] | None = None) -> None:
        super().__init__()
        critic_sizes = list(sizes if critic_sizes is None else critic_sizes)
        self.obs_dim = obs_dim
        self.body = _mlp(sizes, obs_dim)
        self.bias = nn.Linear(sizes[-1], N_ACTIONS)
        self.ctx = nn.Linear(sizes[-1], score_width)
        self.inp = nn.Linear(N_FEATS, score_width)
        self.hidden = nn.Linear(score_width, score_width)
        self.out = nn.Linear(score_width, 1)
        self.critic = _mlp(critic_sizes, obs_dim)
        self.latent_dim_pi = N_ACTIONS
        self.latent_dim_vf = critic_sizes[-1] if critic_sizes else obs_dim

    def forward(self, features: th.Tensor) -> tuple[th.Tensor, th.Tensor]:
        return self.forward_actor(features), self.forward_critic(features)

    def forward_actor(self, features: th.Tensor) -> th.Tensor:
        """(B, 105) action logits; the scorer runs on the legal actions only (those with moves, a few per decision)."""
        body = self.body(features[:, :self.obs_dim])
        acts = features[:, self.obs_dim:].reshape(features.shape[0], N_ACTIONS, N_FEATS)
        b, a = (acts[:, :, -1] > 0).nonzero(as_tuple=True)
        h = th.relu(self.inp(acts[b, a]) + self.ctx(body)[b])
        h = th.relu(self.hidden(h))
        scores = th.zeros(acts.shape[:2], dtype=body.dtype).index_put((b, a), self.out(h).squeeze(-1))
        return self.bias(body) + scores

    def forward_critic(self, features: th.Tensor) -> th.Tensor:
        """The critic's last hidden layer."""
        return self.critic(features[:, :self.obs_dim])


class MovePolicy(MaskableActorCriticPolicy):
    """MaskableActorCriticPolicy with :class:`MoveScorer` (pass ``obs_dim`` and ``sizes`` in policy_kwargs; the
    scorer's width and the critic's sizes are 64 and ``sizes`` unless given, as a distilled student's may differ)."""

    def __init__(self, *args: Any, obs_dim: int = 0, sizes: tuple[int, ...] = (128, 128),
                 score_width: int = SCORE_WIDTH, critic_sizes: tuple[int, ...] | None = None, **kwargs: Any) -> None:
        self.obs_dim = int(obs_dim)
        self.sizes = [int(s) for s in sizes]
        self.score_width = int(score_width)
        self.critic_sizes = None if critic_sizes is None else [int(s) for s in critic_sizes]
        kwargs.setdefault("features_extractor_class", MoveInput)
        kwargs.setdefault("features_extractor_kwargs", {"obs_dim": self.obs_dim})
        super().__init__(*args, **kwargs)

    def _build_mlp_extractor(self) -> None:
        self.mlp_extractor = MoveScorer(self.obs_dim, self.sizes, self.score_width, self.critic_sizes)

    def _build(self, lr_schedule: Any) -> None:
        super()._build(lr_schedule)
        self.action_net = nn.Identity()  # the extractor's actor latent already is the logits
        for layer in (self.mlp_extractor.bias, self.mlp_extractor.out):  # start near uniform, like SB3's action_net
            nn.init.orthogonal_(layer.weight, gain=0.01)
            nn.init.zeros_(layer.bias)
        self.optimizer = self.optimizer_class(self.parameters(), lr=lr_schedule(1), **self.optimizer_kwargs)

    def _get_constructor_parameters(self) -> dict[str, Any]:
        data = super()._get_constructor_parameters()
        data.update(obs_dim=self.obs_dim, sizes=tuple(self.sizes), score_width=self.score_width,
                    critic_sizes=None if self.critic_sizes is None else tuple(self.critic_sizes))
        return data


def with_features(obs: np.ndarray, feats: np.ndarray) -> np.ndarray:
    """(B, D + 105·N_FEATS) float32 network input from observations and action features."""
    return np.concatenate([np.asarray(obs, np.float32), feats.reshape(feats.shape[0], -1)], axis=1)


class MoveFeatureVecEnv(VecEnvWrapper):
    """A :class:`krypenv.krypkasino.vec.KrypkasinoVecEnv` whose observations carry the learner's action features."""

    def __init__(self, venv: VecEnv) -> None:
        if not isinstance(venv, KrypkasinoVecEnv):
            raise ValueError(f"MoveFeatureVecEnv wraps a KrypkasinoVecEnv directly (it reads the games' state), "
                             f"got {type(venv).__name__}")
        self.core = venv.core
        base = venv.observation_space
        extra = input_dim(0)  # the flattened action features
        low = np.concatenate([np.asarray(base.low, np.float32), np.full(extra, FEATURE_LOW, np.float32)])
        high = np.concatenate([np.asarray(base.high, np.float32), np.full(extra, FEATURE_HIGH, np.float32)])
        super().__init__(venv, observation_space=spaces.Box(low, high, dtype=np.float32))
        self._envs = np.arange(venv.num_envs, dtype=np.int64)
        self._pad = np.zeros(extra, np.float32)

    def _add(self, obs: np.ndarray) -> np.ndarray:
        return with_features(obs, action_features(self.core, self._envs))

    def reset(self) -> np.ndarray:
        return self._add(self.venv.reset())

    def step_wait(self) -> Any:
        obs, rew, done, infos = self.venv.step_wait()
        for info in infos:  # a finished deal has no decision: its action features are zero
            if "terminal_observation" in info:
                info["terminal_observation"] = np.concatenate([info["terminal_observation"].astype(np.float32),
                                                               self._pad])
        return self._add(obs), rew, done, infos
