"""Warm starts for ``train.py``: from a checkpoint's weights (``--init-from``) and by imitating a teacher
(``--bc-teacher``).

Together they make a round of expert iteration: clone a stronger (slower) player such as
``champion`` into the network, then let PPO go on from there.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from krypenv.training.common import training_part


def net_arch(text: str) -> list[int]:
    """Hidden layer sizes from ``256,256``."""
    try:
        sizes = [int(x) for x in text.split(",")]
    except ValueError:
        sizes = []
    if not sizes or min(sizes) < 1:
        raise ValueError(f"--net-arch must be layer sizes separated by commas, e.g. 256,256; got {text!r}")
    return sizes


# --------------------------------------------------------------------------- warm starts
def init_checkpoint(args: Any) -> Any:
    """The ``ppo`` agent of --init-from, checked against the run's table and network kind; ValueError otherwise."""
    from krypenv import agents

    where = f"--init-from {args.init_from}"
    agent = agents.load(f"ppo:{args.init_from}", game=args.game)  # a missing or bad file: ValueError naming it
    meta = agent.meta
    if int(meta["players"]) != args.players:
        raise ValueError(f"{where} was trained for {meta['players']} players, this run has {args.players}")
    training_part(args.game).check_init(meta, args, where)  # the game's own checks (Krypkasino: action features)
    trained = meta.get("args", {}).get("net_arch")
    if trained is not None and net_arch(trained) != net_arch(args.net_arch):
        raise ValueError(f"{where} has hidden layers {trained}, this run's --net-arch is {args.net_arch}")
    return agent


def load_weights(model: Any, agent: Any, path: str) -> None:
    """Copy the checkpoint's policy and critic into the new model; ValueError when the networks differ in shape."""
    try:
        model.policy.load_state_dict(agent.policy.state_dict())
    except RuntimeError as exc:
        first = next((line.strip() for line in str(exc).splitlines()[1:] if line.strip()), str(exc))
        raise ValueError(f"--init-from {path}: its network does not fit this run's: {first}") from None


# --------------------------------------------------------------------------- behaviour cloning warm start
def imitate(model: Any, env: Any, teacher: Any, args: Any) -> np.ndarray:
    """Fit the policy to the teacher's actions and the critic to its returns, over --bc-decisions learner decisions.

    The teacher plays the learner's seat of every game against the league; each rollout of
    ``num_envs x n_steps`` decisions fills the model's own rollout buffer (GAE returns with the
    current critic, as in PPO) and is used for ``--bc-epochs`` passes of minibatch steps on
    ``-log p(teacher action) + vf_coef * (value - return)^2``.  Returns the deals each game
    finished, so the training callback can tell the league's later deals apart; PPO goes on
    from the games where cloning left them (``model._last_obs``), so no deal is cut short.
    """
    import torch as th
    from stable_baselines3.common.utils import obs_as_tensor

    policy, buf, venv = model.policy, model.rollout_buffer, model.env
    deals = np.zeros(env.num_envs, np.int64)
    obs = venv.reset()
    starts = np.ones(env.num_envs, np.float32)
    rollouts = math.ceil(args.bc_decisions / (env.num_envs * args.n_steps))
    losses: list[tuple[float, float]] = []
    for r in range(rollouts):
        buf.reset()
        policy.set_training_mode(False)
        for _ in range(args.n_steps):
            masks = env.action_masks()
            actions = teacher.act(env.core.decisions(np.arange(env.num_envs), env.core.seat))
            with th.no_grad():
                values = policy.predict_values(obs_as_tensor(obs, policy.device))
            new_obs, rewards, dones, _ = venv.step(actions)
            buf.add(obs, actions, rewards, starts, values, th.zeros(env.num_envs), action_masks=masks)
            obs, starts = new_obs, dones.astype(np.float32)
            deals += dones
        with th.no_grad():
            buf.compute_returns_and_advantage(policy.predict_values(obs_as_tensor(obs, policy.device)), dones)
        policy.set_training_mode(True)
        for _ in range(args.bc_epochs):
            for data in buf.get(args.batch_size):
                values, log_prob, _ = policy.evaluate_actions(data.observations, data.actions.long().flatten(),
                                                              action_masks=data.action_masks)
                value_loss = th.nn.functional.mse_loss(data.returns, values.flatten())
                loss = -log_prob.mean() + args.vf_coef * value_loss
                policy.optimizer.zero_grad()
                loss.backward()
                th.nn.utils.clip_grad_norm_(policy.parameters(), args.max_grad_norm)
                policy.optimizer.step()
                losses.append((-log_prob.mean().item(), value_loss.item()))
        if r % 10 == 9 or r == rollouts - 1:
            nll, vl = np.mean(losses, axis=0)
            print(f"behaviour cloning of {args.bc_teacher}: {(r + 1) * env.num_envs * args.n_steps:,} decisions, "
                  f"-log p {nll:.3f}, value loss {vl:.3f}", flush=True)
            losses = []
    model._last_obs, model._last_episode_starts = obs, starts.astype(bool)
    return deals
