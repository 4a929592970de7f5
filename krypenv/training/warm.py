"""Warm starts for ``train.py``: from a checkpoint's weights (``--init-from``) and by imitating a teacher
(``--bc-teacher``).

Together they make a round of expert iteration: clone a stronger (slower) player such as
``champion`` into the network, then let PPO go on from there.

``--init-from`` also takes an ``mlp`` student of :mod:`krypenv.training.distill` (a ``.npz`` with a value
head): the run's network gets the student's critic sizes and move-scorer width, and starts with its logits
and values (:func:`krypenv.training.student.to_policy`), so PPO fine-tunes the distilled policy, for
instance against a league that holds ``pimc``::

    python train.py --init-from checkpoints/exit-2p-endgame.npz --net-arch 256,256 --league pimc=1 \
        --learning-rate 1e-4 --total-timesteps 2000000

Loading the ``.npz`` runs no pickle; a ``train.py`` checkpoint (``.zip``) unpickles (trusted files only).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
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
@dataclass(frozen=True)
class WarmStart:
    """What ``--init-from`` starts the network from: a ``train.py`` checkpoint's agent or an ``mlp`` student."""

    path: str
    agent: Any = None  # the ppo agent of a train.py checkpoint
    student: Any = None  # a krypenv.training.student.Student (an mlp checkpoint with a value head)
    value_factor: float = 1.0  # the student's value head into the run's reward units

    def shapes(self) -> dict[str, Any]:
        """The network hook's keywords that the start fixes: the critic's hidden sizes and the move scorer's width."""
        if self.student is not None:
            return {"critic_sizes": self.student.value_sizes,
                    "score_width": self.student.scorer_width if self.student.features is not None else None}
        from krypenv.training.student import policy_shapes

        return policy_shapes(self.agent.policy)


def init_checkpoint(args: Any) -> WarmStart:
    """The warm start of --init-from, checked against the run's table and network kind; ValueError otherwise.

    A path ending in ``.npz`` is an ``mlp`` checkpoint with a value head, such as a student of
    :mod:`krypenv.training.distill`: the run's network takes its critic sizes and scorer width, its value
    head is rescaled from the card's ``value_scale`` to ``--reward-scale``.  Any other path is a ``train.py``
    checkpoint (loading it unpickles: trusted files only)."""
    from krypenv import agents

    where = f"--init-from {args.init_from}"
    part = training_part(args.game)
    if args.init_from.endswith(".npz"):
        from krypenv.training.student import from_mlp

        student, card = from_mlp(args.init_from)  # a missing or bad file, or no value head: ValueError naming it
        for key, mine in (("game", args.game), ("players", args.players), ("preset", args.preset)):
            if card.get(key) != mine:
                raise ValueError(f"{where} is a network of {key} {card.get(key)!r}, this run's is {mine!r}")
        _check_features(where, student.features, args)
        _check_sizes(where, student.sizes, args)
        scale = _value_scale(card, where)
        factor = 1.0 if scale is None else args.reward_scale / scale
        return WarmStart(args.init_from, student=student, value_factor=factor)
    agent = agents.load(f"ppo:{args.init_from}", game=args.game)  # a missing or bad file: ValueError naming it
    meta = agent.meta
    if int(meta["players"]) != args.players:
        raise ValueError(f"{where} was trained for {meta['players']} players, this run has {args.players}")
    part.check_init(meta, args, where)  # the game's own checks (Krypkasino: the deck)
    _check_features(where, meta.get("features"), args)
    trained = meta.get("args", {}).get("net_arch")
    if trained is not None:
        _check_sizes(where, net_arch(trained), args)
    return WarmStart(args.init_from, agent=agent)


def _value_scale(card: dict[str, Any], where: str) -> float | None:
    """The unit of a student's value head, ``trained.args.value_scale`` of its card (None where the card states
    none); ValueError when it is stated and not a positive number."""
    trained = card.get("trained")
    run = trained.get("args") if isinstance(trained, dict) else None
    if not isinstance(run, dict) or "value_scale" not in run:
        return None
    scale = run["value_scale"]
    if isinstance(scale, bool) or not isinstance(scale, (int, float)) or not 0 < scale < math.inf:
        raise ValueError(f"{where}: the card's value_scale must be a positive number, got {scale!r}")
    return float(scale)


def _check_features(where: str, features: str | None, args: Any) -> None:
    """ValueError unless the start reads the action features this run's --policy reads."""
    wanted = training_part(args.game).action_features(args)
    if features != wanted:
        raise ValueError(f"{where} reads action features {features}, this run's --policy {args.policy} reads {wanted}")


def _check_sizes(where: str, sizes: list[int], args: Any) -> None:
    """ValueError unless the start's hidden layers are the run's --net-arch."""
    if sizes != net_arch(args.net_arch):
        raise ValueError(f"{where} has hidden layers {','.join(map(str, sizes))}, this run's --net-arch is "
                         f"{args.net_arch}")


def load_weights(model: Any, start: WarmStart) -> None:
    """Copy the start's policy and critic into the new model; ValueError when the networks differ in shape."""
    if start.student is not None:
        from krypenv.training.student import to_policy

        try:
            to_policy(start.student, model.policy, start.value_factor)
        except ValueError as exc:
            raise ValueError(f"--init-from {start.path}: {exc}") from None
        return
    try:
        model.policy.load_state_dict(start.agent.policy.state_dict())
    except RuntimeError as exc:
        first = next((line.strip() for line in str(exc).splitlines()[1:] if line.strip()), str(exc))
        raise ValueError(f"--init-from {start.path}: its network does not fit this run's: {first}") from None


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
