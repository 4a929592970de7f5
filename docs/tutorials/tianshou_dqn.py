"""Tianshou: a DQN learner against a random masked opponent in Krypkasino, through Tianshou's ``PettingZooEnv``.

Run: ``python docs/tutorials/tianshou_dqn.py`` (``KRYPENV_TUTORIAL_STEPS`` sets the budget of env steps).
"""

from __future__ import annotations

import os

import numpy as np
import torch
from tianshou.algorithm import DQN, MARLRandomDiscreteMaskedOffPolicyAlgorithm, MultiAgentOffPolicyAlgorithm
from tianshou.algorithm.modelfree.dqn import DiscreteQLearningPolicy
from tianshou.algorithm.optim import AdamOptimizerFactory
from tianshou.data import Collector, CollectStats, VectorReplayBuffer
from tianshou.env import DummyVectorEnv, PettingZooEnv
from tianshou.trainer import OffPolicyTrainerParams
from tianshou.utils.net.common import Net

from krypenv import krypkasino_v0

STEPS = int(os.environ.get("KRYPENV_TUTORIAL_STEPS", "20000"))


def make_env() -> PettingZooEnv:
    """One 2-player Krypkasino AEC env in Tianshou's wrapper (it reads the ``action_mask`` of each observation)."""
    return PettingZooEnv(krypkasino_v0.env(players=2))


def main() -> None:
    """Train seat 0 (DQN) against a masked random seat 1, then print the learner's mean return."""
    torch.manual_seed(0)
    np.random.seed(0)
    env = make_env()
    obs_shape = env.observation_space["observation"].shape
    net = Net(state_shape=obs_shape, action_shape=env.action_space.n, hidden_sizes=[128, 128])
    learner = DQN(policy=DiscreteQLearningPolicy(model=net, action_space=env.action_space, eps_training=0.1,
                                                 eps_inference=0.0),
                  optim=AdamOptimizerFactory(lr=1e-4), gamma=0.99, n_step_return_horizon=1, target_update_freq=200)
    opponent = MARLRandomDiscreteMaskedOffPolicyAlgorithm(action_space=env.action_space)
    algorithm = MultiAgentOffPolicyAlgorithm(algorithms=[learner, opponent], env=env)
    train_envs, test_envs = DummyVectorEnv([make_env] * 4), DummyVectorEnv([make_env] * 2)
    train_envs.seed(0)
    test_envs.seed(1)
    train = Collector[CollectStats](algorithm, train_envs, VectorReplayBuffer(20000, 4), exploration_noise=True)
    test = Collector[CollectStats](algorithm, test_envs, exploration_noise=False)
    train.reset()
    train.collect(n_step=64)
    epochs = max(1, STEPS // 2000)
    result = algorithm.run_training(OffPolicyTrainerParams(
        training_collector=train, test_collector=test, max_epochs=epochs, epoch_num_steps=min(STEPS, 2000),
        collection_step_num_env_steps=40, test_step_num_episodes=1, batch_size=64,
        update_step_num_gradient_steps_per_sample=0.1, test_in_training=False, show_progress=False,
        multi_agent_return_reduction=lambda rews: rews[:, 0]))
    stats = test.collect(n_episode=1, reset_before_collect=True)
    print(f"{result.timing.total_time:.1f} s of training; the learner's mean return over 1 test deal: "
          f"{stats.returns[:, 0].mean():+.1f} (minus its deal score)")


if __name__ == "__main__":
    main()
