"""Stable-Baselines3: sb3-contrib's MaskablePPO on the Gymnasium env, against the ``expert`` baseline.

The Gymnasium env has ``action_masks()``, which is what MaskablePPO asks for, so no wrapper is needed.
Run: ``python docs/tutorials/sb3_maskable_ppo.py`` (``KRYPENV_TUTORIAL_STEPS`` sets the budget).
"""

from __future__ import annotations

import os

import gymnasium as gym
import numpy as np
from sb3_contrib import MaskablePPO

import krypenv  # noqa: F401  (registers krypenv/Krypkasino-v0)
from krypenv import agents

STEPS = int(os.environ.get("KRYPENV_TUTORIAL_STEPS", "50000"))


def main() -> None:
    """Train against expert opponents, then play 20 deals with the trained policy and print its mean score."""
    env = gym.make("krypenv/Krypkasino-v0", players=2, opponents=agents.load("expert"))
    model = MaskablePPO("MlpPolicy", env, n_steps=min(STEPS, 2048), batch_size=64, seed=0, verbose=0)
    model.learn(total_timesteps=STEPS)
    scores = []
    for episode in range(20):
        obs, _ = env.reset(seed=1000 + episode)
        done, ret = False, 0.0
        while not done:
            action, _ = model.predict(obs, action_masks=env.unwrapped.action_masks(), deterministic=True)
            obs, reward, terminated, truncated, _ = env.step(int(action))
            ret, done = ret + float(reward), terminated or truncated
        scores.append(-ret)  # the return is minus the learner's deal score
    print(f"after {STEPS} steps: the learner's mean score per deal against expert {np.mean(scores):.2f} "
          "(lower is better)")


if __name__ == "__main__":
    main()
