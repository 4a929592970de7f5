"""The env shells, written once for every game: the batch of N environments, PettingZoo AEC, Gymnasium, SB3 VecEnv.

A game supplies hooks and thin classes (its batch: kernels, layout, seat view, action names;
its AEC, Gymnasium and VecEnv classes: configuration keywords, rewards read from its state,
render text); the shells own the API conventions and the bookkeeping:

================================  ===================================================================
module                            what it holds
================================  ===================================================================
:mod:`krypenv.envs.batch`         :class:`~krypenv.envs.batch.EnvBatch`: N environments of one
                                  configuration: seats, kinds, streams, external agents, pickling
:mod:`krypenv.envs.aec`           :class:`~krypenv.envs.aec.GameAECEnv`: the PettingZoo AEC env
:mod:`krypenv.envs.gym`           :class:`~krypenv.envs.gym.GameGymEnv`: the Gymnasium learner-seat env
:mod:`krypenv.envs.vec`           :class:`~krypenv.envs.vec.GameVecEnv`: the batched SB3 VecEnv
:mod:`krypenv.envs.spaces`        the action checks and the legal-sampling ``Discrete`` space
================================  ===================================================================

This package imports no game; the heavy libraries (PettingZoo, Stable-Baselines3) load
with the module that needs them.
"""
