"""RLlib: PPO with action masking in self-play on Krypkasino's multi-agent env (RLlib's new API stack).

:class:`krypenv.rllib.KrypenvMultiAgentEnv` is either game's AEC env as an RLlib ``MultiAgentEnv``:
observations ``{"observations", "action_mask"}`` (float32), each agent's rewards accumulated up to its
next observation. RLlib's ``ActionMaskingTorchRLModule`` masks the logits of illegal actions. Needs the
``ray`` extra in its own environment (the Ray section of the guide). Run:
``.venv-ray/bin/python docs/tutorials/rllib_ppo.py`` (``KRYPENV_TUTORIAL_STEPS`` sets the budget).
``examples/rllib_ppo.py`` is the full script (opponents, cluster, checkpoints that play as ``rllib:PATH``).
"""

from __future__ import annotations

import os

import ray
from ray.rllib.algorithms.ppo import PPOConfig
from ray.rllib.core.rl_module.multi_rl_module import MultiRLModuleSpec
from ray.rllib.core.rl_module.rl_module import RLModuleSpec
from ray.rllib.examples.rl_modules.classes.action_masking_rlm import ActionMaskingTorchRLModule

from krypenv.rllib import KrypenvMultiAgentEnv

STEPS = int(os.environ.get("KRYPENV_TUTORIAL_STEPS", "40000"))


def main() -> None:
    """Train one shared policy for both seats until STEPS env steps, printing each iteration's returns."""
    ray.init(address="local", num_cpus=1, include_dashboard=False, log_to_driver=False, logging_level="warning")
    batch = min(STEPS, 4000)
    config = (
        PPOConfig()
        .environment(KrypenvMultiAgentEnv, env_config={"game": "krypkasino", "players": 2},
                     disable_env_checking=True)
        .env_runners(num_env_runners=0)
        .multi_agent(policies={"main"}, policy_mapping_fn=lambda agent_id, episode, **kw: "main")
        .rl_module(rl_module_spec=MultiRLModuleSpec(rl_module_specs={
            "main": RLModuleSpec(module_class=ActionMaskingTorchRLModule,
                                 model_config={"fcnet_hiddens": [128, 128], "head_fcnet_hiddens": []})}))
        .training(train_batch_size_per_learner=batch, minibatch_size=min(batch, 500), num_epochs=2, gamma=1.0)
        .debugging(seed=1, log_level="ERROR")
    )
    algo = config.build_algo()
    steps = 0
    while steps < STEPS:
        result = algo.train()
        steps = int(result["env_runners"]["num_env_steps_sampled_lifetime"])
        returns = result["env_runners"].get("agent_episode_returns_mean", {})
        print(f"{steps} env steps; mean return per seat: {returns}")
    algo.stop()
    ray.shutdown()


if __name__ == "__main__":
    main()
